"""Strategies that walk a fixed, seeded stream of candidates, skipping what was seen.

Because the stream depends only on the seed, a resumed run (told its earlier trials)
continues exactly where the interrupted one stopped.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator

import numpy as np

from gpautotune.strategies._base import Proposal, Strategy

__all__ = ["StreamStrategy"]


class StreamStrategy(Strategy):
    """Propose the next valid, unseen rows of :meth:`_stream`."""

    _iterator: Iterator[np.ndarray] | None = None
    _buffer: np.ndarray | None = None

    @abstractmethod
    def _stream(self) -> Iterator[np.ndarray]:
        """Yield index-matrix batches (any validity; filtered here); end when exhausted."""

    def _propose(self, n: int) -> list[Proposal]:
        if self._iterator is None:
            self._iterator = self._stream()
            self._buffer = np.empty((0, self.space.dims))
        picked: list[np.ndarray] = []
        need = n
        while need > 0:
            if len(self._buffer) == 0:
                batch = next(self._iterator, None)
                if batch is None:
                    break
                self._buffer = self.space.unique_rows(batch[self.space.valid_mask(batch)])
                continue
            # Scan only a window ahead (not the whole buffer: O(n), not O(stream), per ask).
            window = self._buffer[: max(4 * need, 64)]
            positions = np.flatnonzero(~self.is_seen(window))[:need]
            take = window[positions]
            self.mark_seen(take)
            picked.append(take)
            need -= len(take)
            # Rows before the last one taken are seen now; those after it stay in order.
            self._buffer = (
                self._buffer[positions[-1] + 1 :] if len(take) else self._buffer[len(window) :]
            )
        index = np.concatenate(picked) if picked else np.empty((0, self.space.dims))
        return self.proposals(index, source=self.name)
