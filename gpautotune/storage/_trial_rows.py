"""A trial as a row of the journal's ``trials`` table, and back.

The row holds the trial's configuration, samples, metrics and info as JSON text, its
status and origin as their string values. Kept apart from
:class:`~gpautotune.storage.Journal` (whose queries select and insert these rows): the
mapping between :class:`~gpautotune.trial.Trial` and the table's columns is one concept,
the same for every query that stores or reads trials.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gpautotune.measurement import Measurement, Status
from gpautotune.storage._records import dumps
from gpautotune.trial import Origin, Trial

__all__ = ["trial_from_row", "trial_row"]


def trial_row(run_id: int, t: Trial) -> tuple[Any, ...]:
    """The values of ``(run_id, number, config, status, value, samples, metrics, error,
    info, origin, started_at, duration_s)`` that store trial ``t`` of run ``run_id``."""
    m = t.measurement
    return (
        run_id,
        t.number,
        dumps(t.config),
        m.status.value,
        m.value,
        dumps(list(m.samples)),
        dumps(dict(m.metrics)),
        m.error,
        dumps(dict(t.info)),
        t.origin.value,
        t.started_at,
        t.duration_s,
    )


def trial_from_row(r: Sequence[Any]) -> Trial:
    """The trial stored in ``(number, config, status, value, samples, metrics, error,
    info, origin, started_at, duration_s)``."""
    return Trial(
        number=r[0],
        config=json.loads(r[1]),
        measurement=Measurement(
            Status(r[2]), r[3], tuple(json.loads(r[4])), json.loads(r[5]), r[6]
        ),
        info=json.loads(r[7]),
        origin=Origin(r[8]),
        started_at=r[9],
        duration_s=r[10],
    )
