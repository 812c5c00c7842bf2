"""The peers as strategies: Optuna, Kernel Tuner and SMAC3 behind our ask/tell protocol.

The adapters need the optional packages of ``gpautotune[peers]``; importing this
package does not import them (the registry loads each adapter module by name, and a
missing package gives one line naming the extra to install). The fair-accounting rules
all adapters share are in :mod:`gpautotune.strategies.peers._fair`; ``docs/peers.md``
describes them with the encodings and how each adapter drives its peer.
"""

from __future__ import annotations

__all__ = [
    "KERNEL_TUNER_STRATEGIES",
    "OPTUNA_STRATEGIES",
    "SMAC_STRATEGIES",
    "PEER_STRATEGIES",
    "is_peer",
]

#: Kernel Tuner strategies offered as ``kt-<name>`` (others of its strategies work too).
KERNEL_TUNER_STRATEGIES = (
    "bayes_opt",
    "pso",
    "genetic_algorithm",
    "simulated_annealing",
    "dual_annealing",
    "diff_evo",
    "firefly_algorithm",
    "greedy_ils",
    "mls",
    "basinhopping",
    "random_sample",
)
OPTUNA_STRATEGIES = ("optuna-gp", "optuna-tpe", "optuna-random")
SMAC_STRATEGIES = ("smac-bb", "smac-hpo", "smac-random")
#: Every peer strategy name listed by :func:`gpautotune.strategies.available_strategies`.
PEER_STRATEGIES = (
    *OPTUNA_STRATEGIES,
    *SMAC_STRATEGIES,
    *(f"kt-{name}" for name in KERNEL_TUNER_STRATEGIES),
)


def is_peer(name: str) -> bool:
    """Whether a strategy name is one of the peers' adapters (``kt-<any>`` included)."""
    return name in PEER_STRATEGIES or name.startswith("kt-")
