import numpy as np

from gpautotune.strategies._gpr_choice import GPChoice
from gpautotune.strategies._gpr_records import ModelFit


class _Recorder:
    """A stand-in GP: records its fits and ranks the values as told."""

    def __init__(self, rank: float) -> None:
        self.rank, self.fits = rank, []

    def fit(self, X, y, *, seed, warm, fresh):
        self.fits.append((len(y), fresh, warm))
        return f"report {self.rank}"

    def loo_rank(self) -> float:
        return self.rank


def _past(variant: int | None, number: int = 0) -> list[ModelFit]:
    return [ModelFit(number, 30, 1, False, {"h": [1.0]}, variant=variant)]


def test_a_fresh_fit_keeps_the_best_ranked_gp_and_warm_fits_keep_it():
    """From ``loo_after`` rows on, a fresh fit fits every GP and keeps the best ranked
    (ties: the earlier); below it, the run's own GP alone; a warm fit refits only the
    GP the last fit recorded, warm from its hyperparameters."""
    own, better, tied = _Recorder(0.5), _Recorder(0.9), _Recorder(0.9)
    choice = GPChoice([own, better, tied], fresh_every=10, loo_after=40)
    X, y = np.zeros((40, 2)), np.arange(40.0)
    gp, report, variant, scores = choice.fit(X, y, 0, _past(0, 9), 10)
    assert gp is better and variant == 1 and report == "report 0.9"
    assert scores == [0.5, 0.9, 0.9] and all(g.fits[-1][1] for g in (own, better, tied))
    gp, _, variant, scores = choice.fit(X, y, 0, _past(1, 10), 11)
    assert gp is better and variant == 1 and scores is None
    assert better.fits[-1] == (40, False, {"h": [1.0]}) and len(own.fits) == 1
    gp, _, variant, scores = choice.fit(X[:39], y[:39], 0, _past(1, 19), 20)
    assert gp is own and variant == 0 and scores is None and own.fits[-1][1]
    assert choice.of(_past(2)[0]) is tied and choice.of(_past(None)[0]) is own
    alone = GPChoice([own], fresh_every=10, loo_after=40)
    assert alone.fit(X, y, 0, [], 0)[2:] == (None, None)
