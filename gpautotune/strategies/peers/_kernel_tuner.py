"""Kernel Tuner's strategies as strategies, with control inverted through a thread.

A Kernel Tuner strategy is a loop, ``tune(searchspace, runner, tuning_options)``, that
calls a cost function which hands configurations to a *runner*. The adapter runs that
loop, unchanged, in a worker thread with a runner of its own: the runner hands each
configuration to our :meth:`ask` and blocks until :meth:`tell` answers it. Simulation
mode against a cache would need every value before the run starts, which a live problem
does not have; the thread drives the same strategy code on any problem.

* The search space is Kernel Tuner's own ``Searchspace``, built from ``tune_params``
  (each parameter's levels; booleans as 0/1, as Kernel Tuner users write them) and
  ``restrictions``: one ``(function, parameters)`` restriction per predicate, given as
  the table of its allowed level combinations (:mod:`._predicates`); a predicate whose
  inputs are hidden (a callable) becomes a function of the whole configuration, as
  Kernel Tuner's own cache replay does. Kernel Tuner enumerates its space, so the
  adapter needs a discrete space of at most :data:`MAX_RAW` raw points.
* ``max_fevals`` is the run's budget (:meth:`plan`), as a Kernel Tuner user sets it; its
  budget counts each configuration the first time it is measured, as its simulation
  runner does; a duplicate is answered from the run's trials and not counted.
* Values are told divided by the first value measured in the run (a positive constant
  for the whole run: orders and ratios unchanged; option ``scale``, ``"first"`` by
  default, ``"none"`` tells them as measured). Kernel Tuner's strategies assume
  times in milliseconds: ``bayes_opt`` floors the predicted standard deviation at 1e-9
  in its acquisition functions, ``basinhopping`` and ``dual_annealing`` (SciPy's) accept
  a worse move with probability ``exp(-Δ / T)`` on absolute differences with ``T = 1``,
  so on values like the K40c table's seconds per pixel (1e-10) they lose their model or
  their acceptance rule.
* A failure is answered as Kernel Tuner's runner reports one: the objective and
  ``__error__`` hold ``CompilationFailedConfig`` (build errors), ``InvalidConfig``
  (invalid) or ``RuntimeFailedConfig`` (the rest).
* Seeds: Kernel Tuner draws from Python's ``random`` and NumPy's global state; its
  modules' draws are made private to the strategy thread (:mod:`._kt_random`), seeded
  with the run's seed, so other threads of the process (a Dask worker's) do not shift
  them and the strategies repeat for a seed, ``bayes_opt`` and ``diff_evo`` too, whose
  SciPy Latin hypercube, created without a generator, takes one from the thread's. NumPy's
  global state is seeded too, for SciPy's optimizers (``basinhopping``,
  ``dual_annealing``), which draw from it and so repeat only where no other thread draws.
  Runs in one process must not interleave (the comparison harness runs one repetition per
  worker process at a time).
* The thread ends when the strategy returns, when the run ends (:meth:`close`, called
  by :func:`gpautotune.tuner.tune`), or when the adapter is garbage-collected: the
  runner then raises Kernel Tuner's ``StopCriterionReached``, which its strategies
  catch to finish.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import queue
import threading
import weakref
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, ClassVar, Literal

import numpy as np
from kernel_tuner import util as kt_util
from kernel_tuner.interface import Options, strategy_map
from kernel_tuner.searchspace import Searchspace

from gpautotune.exceptions import ConfigError, PeerError
from gpautotune.measurement import Status
from gpautotune.space import Boolean, Space
from gpautotune.strategies._settings import StrategySettings, strategy_settings
from gpautotune.strategies.peers import KERNEL_TUNER_STRATEGIES
from gpautotune.strategies.peers._fair import PeerAsk, PeerStrategy
from gpautotune.strategies.peers._kt_random import install, private
from gpautotune.strategies.peers._predicates import predicate_tables
from gpautotune.trial import Trial

__all__ = [
    "KernelTunerSettings",
    "KernelTunerStrategy",
    "kernel_tuner_strategy",
    "kernel_tuner_searchspace",
    "MAX_RAW",
]

#: Largest raw space (product of level counts) the adapter gives Kernel Tuner to enumerate.
MAX_RAW = 5_000_000
_OBJECTIVE = "time"
#: Kernel Tuner's thread-block limit, set out of reach: the space's predicates decide.
_MAX_THREADS = 2**31 - 1
_CLOSE = object()
_JOIN_S = 10.0


class _Exchange:
    """The hand-over between the strategy thread and the tuner's thread."""

    def __init__(self) -> None:
        self.requests: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.answers: queue.Queue[Any] = queue.Queue()
        self.closed = threading.Event()

    def evaluate(self, values: tuple) -> tuple[dict[str, Any], bool]:
        """Strategy thread: hand ``values`` over, wait for (result, spent)."""
        if self.closed.is_set():
            raise kt_util.StopCriterionReached("the gpautotune run has ended")
        self.requests.put(("ask", values))
        answer = self.answers.get()
        if answer is _CLOSE:
            raise kt_util.StopCriterionReached("the gpautotune run has ended")
        return answer

    def close(self) -> None:
        self.closed.set()
        self.answers.put(_CLOSE)


class _ExchangeRunner:
    """Kernel Tuner's runner interface, answered through the exchange."""

    def __init__(self, exchange: _Exchange) -> None:
        self.exchange = exchange
        self.dev = SimpleNamespace(max_threads=_MAX_THREADS)  # read by bayes_opt

    def run(self, parameter_space: Any, tuning_options: Options) -> list[dict | None]:
        results: list[dict | None] = []
        for element in parameter_space:
            if tuning_options.budget.is_done():
                results.append(None)  # Kernel Tuner's signal: budget spent
                continue
            result, spent = self.exchange.evaluate(tuple(element))
            if spent:
                tuning_options.budget.add_evaluations(1)
            results.append(result)
        return results

    def add_strategy_time(self, seconds: float) -> None:
        """Kernel Tuner's timing hook (timing is the tuner loop's business)."""

    def get_environment(self, tuning_options: Options) -> dict[str, Any]:
        return {}


class _Runtime:
    """The strategy thread and its exchange (no reference back to the adapter)."""

    def __init__(self) -> None:
        self.exchange = _Exchange()
        self.thread: threading.Thread | None = None

    def close(self) -> None:
        self.exchange.close()
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(_JOIN_S)


def _drive(
    tune: Callable, searchspace: Searchspace, options: Options, ex: _Exchange, seed: Any
) -> None:
    """The strategy thread: seed Kernel Tuner's random sources, run its loop, say done."""
    error: BaseException | None = None
    try:
        private(seed)
        np.random.seed(None if seed is None else seed % 2**32)  # SciPy's optimizers
        tune(searchspace, _ExchangeRunner(ex), options)
    except kt_util.StopCriterionReached:
        pass
    except BaseException as exc:  # noqa: BLE001 - handed to the tuner's thread
        error = exc
    finally:
        ex.requests.put(("done", error))


def _tune_params(space: Space) -> dict[str, list]:
    return {p.name: [0, 1] if isinstance(p, Boolean) else list(p.levels) for p in space.parameters}


class _Restriction:
    """The space's predicates as one Kernel Tuner restriction (a function of the
    configuration dict): each tabulated predicate checks its table; the rest (hidden
    inputs) check membership in the valid set, enumerated once, vectorised."""

    def __init__(self, space: Space) -> None:
        tables, left = predicate_tables(space)
        self.tables = [(t.names, t.allowed) for t in tables]
        self.names = space.names
        self.valid: set[tuple] | None = None
        if left:
            self.valid = {tuple(c.values()) for c in space.to_configs(space.enumerate_index())}

    def __call__(self, p: dict[str, Any]) -> bool:
        for names, allowed in self.tables:
            if tuple(p[n] for n in names) not in allowed:
                return False
        return self.valid is None or tuple(p[n] for n in self.names) in self.valid


def _restriction(space: Space) -> Callable[[dict[str, Any]], bool]:
    """A plain function, as Kernel Tuner inspects restriction functions' source."""
    check = _Restriction(space)

    def restriction(p: dict[str, Any]) -> bool:
        return check(p)

    return restriction


_BUILT: dict[str, Searchspace] = {}
_BUILT_MAX = 16  # a comparison's problems, each built once per worker


def kernel_tuner_searchspace(space: Space) -> Searchspace:
    """Kernel Tuner's ``Searchspace`` of ``space`` (``tune_params`` and ``restrictions``).

    Built once per process for each distinct space (keyed by its levels and valid set)
    and copied for each run.

    Raises:
        ConfigError: the space is not discrete or too large for Kernel Tuner to enumerate.
    """
    if not space.is_discrete or space.size > MAX_RAW:
        raise ConfigError(
            f"Kernel Tuner enumerates its search space; this one has {space.size:.3g} raw points "
            f"(real parameters or more than {MAX_RAW:,}): use another strategy"
        )
    valid = space.row_keys(space.enumerate_index())
    digest = hashlib.sha1(
        repr(_tune_params(space)).encode() + np.ascontiguousarray(valid).tobytes()
    ).hexdigest()
    if digest not in _BUILT:
        while len(_BUILT) >= _BUILT_MAX:
            del _BUILT[next(iter(_BUILT))]
        _BUILT[digest] = Searchspace(_tune_params(space), _restriction(space), _MAX_THREADS)
    return copy.deepcopy(_BUILT[digest])


def _error(status: Status) -> kt_util.ErrorConfig:
    if status is Status.BUILD_ERROR:
        return kt_util.CompilationFailedConfig()
    if status is Status.INVALID:
        return kt_util.InvalidConfig()
    return kt_util.RuntimeFailedConfig()


@strategy_settings
class KernelTunerSettings(StrategySettings):
    """Options of the Kernel Tuner adapters (its strategies run with their defaults).

    Attributes:
        scale: ``"first"``: values told divided by the run's first measured value (Kernel
            Tuner's strategies assume milliseconds; see the module docstring); ``"none"``:
            as measured.
    """

    scale: Literal["first", "none"] = "first"


class KernelTunerStrategy(PeerStrategy):
    """A Kernel Tuner strategy (``kt_name``) run in a thread behind the fair-accounting rules."""

    package: ClassVar[str] = "kernel_tuner"
    kt_name: ClassVar[str] = ""
    Settings = KernelTunerSettings
    options: KernelTunerSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self._searchspace = kernel_tuner_searchspace(space)
        self._names = list(self._searchspace.tune_params)
        self._unit: float | None = None
        self._runtime = _Runtime()
        weakref.finalize(self, self._runtime.close)

    def _options(self) -> Options:
        size = self._searchspace.size
        strategy_options: dict[str, Any] = {}
        options: dict[str, Any] = {}
        if self.budget is not None:
            strategy_options["max_fevals"] = options["max_fevals"] = self.budget
        max_fevals = size if self.budget is None else min(self.budget, size)
        return Options(
            strategy_options=Options(strategy_options),
            tune_params=self._searchspace.tune_params,
            restrictions=self._searchspace.restrictions,
            objective=[_OBJECTIVE],
            objective_higher_is_better=[False],
            verbose=False,
            metrics=None,
            cache={},
            budget=kt_util.TuningBudget(None, max_fevals),
            **options,
        )

    def _peer_start(self) -> None:
        tune = strategy_map[self.kt_name].tune
        install()  # the strategy's modules, loaded by now
        thread = threading.Thread(
            target=_drive,
            args=(tune, self._searchspace, self._options(), self._runtime.exchange, self.seed),
            name=f"gpautotune-{self.name}",
            daemon=True,
        )
        self._runtime.thread = thread
        thread.start()

    def _peer_ask(self) -> PeerAsk | None:
        kind, payload = self._runtime.exchange.requests.get()
        if kind == "done":
            if payload is not None:
                raise PeerError(
                    f"Kernel Tuner's {self.kt_name} stopped with "
                    f"{type(payload).__name__}: {payload}"
                ) from payload
            return None
        return PeerAsk(dict(zip(self._names, payload, strict=True)), payload)

    def _peer_tell(self, handle: Any, trial: Trial, *, fresh: bool = True) -> None:
        result: dict[str, Any] = dict(zip(self._names, handle, strict=True))
        if trial.ok:
            if self._unit is None:
                self._unit = (abs(trial.value) or 1.0) if self.options.scale == "first" else 1.0
            result[_OBJECTIVE] = trial.value / self._unit
        else:
            result[_OBJECTIVE] = result["__error__"] = _error(trial.status)
        self._runtime.exchange.answers.put((result, fresh))

    def _peer_refuse(self, handle: Any) -> None:
        result: dict[str, Any] = dict(zip(self._names, handle, strict=True))
        result[_OBJECTIVE] = result["__error__"] = kt_util.InvalidConfig()
        self._runtime.exchange.answers.put((result, False))

    def close(self) -> None:
        self._runtime.close()


@functools.cache
def kernel_tuner_strategy(variant: str) -> type[KernelTunerStrategy]:
    """The adapter class of Kernel Tuner's strategy ``variant`` (registered as ``kt-<variant>``).

    Raises:
        ConfigError: Kernel Tuner has no strategy of that name.
    """
    if variant not in strategy_map or variant in ("brute_force", "pyatf_strategies"):
        known = sorted(set(strategy_map) - {"brute_force", "pyatf_strategies"})
        raise ConfigError(
            f"Kernel Tuner has no strategy {variant!r} usable as kt-{variant}; "
            f"its strategies: {known} (compared by default: {list(KERNEL_TUNER_STRATEGIES)})"
        )
    doc = f"Kernel Tuner's ``{variant}`` strategy, default options (see the module docstring)."
    cls = type(
        f"KernelTuner_{variant}",
        (KernelTunerStrategy,),
        {"kt_name": variant, "name": f"kt-{variant}", "__doc__": doc, "__module__": __name__},
    )
    return cls
