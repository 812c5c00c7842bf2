"""Problems for the comparison tests, importable by Dask workers as
``tests.comparison.faulty_problems:<name>`` (the repository root is on their path)."""

from __future__ import annotations

import os
import signal
import time

from gpautotune.problems import BoothProblem, Measurement
from gpautotune.space import Config


class KillOnceBooth(BoothProblem):
    """Booth that kills its own process (the Dask worker) at its ``after``-th evaluation,
    once per ``marker`` file: the first process to get there writes the marker and dies."""

    name = "kill-once-booth"

    def __init__(self, marker: str, after: int = 4) -> None:
        super().__init__()
        self.marker, self.after, self._calls = marker, after, 0

    def evaluate(self, config: Config) -> Measurement:
        self._calls += 1
        if self._calls == self.after:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                os.kill(os.getpid(), signal.SIGKILL)
        return super().evaluate(config)

    def describe(self) -> dict:
        return {"name": self.name}


class SlowBooth(BoothProblem):
    """Booth that sleeps ``delay_s`` per evaluation; ``hardware`` marks it as timing a device."""

    name = "slow-booth"

    def __init__(self, delay_s: float = 0.01, hardware: bool = False) -> None:
        super().__init__()
        self.delay_s, self.measures_hardware = delay_s, hardware

    def evaluate(self, config: Config) -> Measurement:
        time.sleep(self.delay_s)
        return super().evaluate(config)

    def describe(self) -> dict:
        return {"name": self.name, "hardware": self.measures_hardware}
