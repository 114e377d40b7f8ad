"""Chapter 03: Optimistic Multiplicative Weights in zero-sum games, energy dissipation.

The method (:mod:`.dynamics`), the games (:mod:`.games`), equilibria (:mod:`.equilibrium`),
the energy and distances (:mod:`.metrics`), the experiment (:mod:`.experiment`), its figures
(:mod:`.figures`) and the live lab (:mod:`.lab`, imported on demand: it needs ipywidgets).
"""

from .dynamics import Trajectory, omwu_numpy, omwu_step, simulate
from .equilibrium import NashEquilibrium, solve_nash
from .experiment import OMWUConfig, OMWUResults, headline, run
from .games import (
    biased_rock_paper_scissors,
    game_with_equilibrium,
    hard_game,
    hard_game_equilibrium,
    matching_pennies,
    random_interior_game,
    rock_paper_scissors,
)
from .metrics import (
    distance_tv,
    duality_gap,
    energy,
    fit_linear_rate,
    kl_from_log,
    predicted_dissipation,
    total_variation,
)

Config = OMWUConfig

__all__ = [
    "Config",
    "NashEquilibrium",
    "OMWUConfig",
    "OMWUResults",
    "Trajectory",
    "biased_rock_paper_scissors",
    "distance_tv",
    "duality_gap",
    "energy",
    "fit_linear_rate",
    "game_with_equilibrium",
    "hard_game",
    "hard_game_equilibrium",
    "headline",
    "kl_from_log",
    "matching_pennies",
    "omwu_numpy",
    "omwu_step",
    "predicted_dissipation",
    "random_interior_game",
    "rock_paper_scissors",
    "run",
    "simulate",
    "solve_nash",
    "total_variation",
]
