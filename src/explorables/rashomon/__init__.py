"""Chapter 04: noise, Rashomon sets and simpler models.

Models, Rashomon volumes and reducibility costs (:mod:`.models`), additive models on splines
(:mod:`.gam`), exact volumes by Monte-Carlo (:mod:`.montecarlo`), the diversity of the predictions of models
drawn from a Rashomon set (:mod:`.diversity`), data (:mod:`.data`), the
experiment (:mod:`.experiment`), figures, claims and the live lab (:mod:`.lab`, on demand).
"""

from .diversity import Diversity, prediction_diversity, rashomon_diversity, sample_rashomon
from .experiment import RashomonConfig, RashomonResults, headline, profile_loss_grid, run
from .gam import AdditiveBasis
from .models import Fit, drop_feature, fit, log_volume, reducibility_cost, refit_cost, threshold, tie_features
from .montecarlo import MonteCarloVolume, exact_log_volume

Config = RashomonConfig

__all__ = [
    "AdditiveBasis",
    "Config",
    "Diversity",
    "Fit",
    "MonteCarloVolume",
    "RashomonConfig",
    "RashomonResults",
    "drop_feature",
    "exact_log_volume",
    "fit",
    "headline",
    "log_volume",
    "prediction_diversity",
    "profile_loss_grid",
    "rashomon_diversity",
    "reducibility_cost",
    "refit_cost",
    "run",
    "sample_rashomon",
    "threshold",
    "tie_features",
]
