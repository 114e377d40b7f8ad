"""Chapter 08: stable training of neural differential equations and hybrid models.

Solvers (:mod:`.solvers`), systems with known physics and the truth (:mod:`.systems`), hybrid
ensemble models (:mod:`.models`), the training losses (:mod:`.losses`), training and gradient
alignment (:mod:`.training`), stability metrics (:mod:`.metrics`), the experiment
(:mod:`.experiment`), its claims (:mod:`.claims`), figures (:mod:`.figures`) and the live lab
(:mod:`.lab`, imported on demand: it needs ipywidgets).
"""

from .experiment import StableNDEConfig, StableNDEResults, headline, run
from .losses import (
    METHOD_LABELS,
    METHODS,
    complete_loss,
    jacobian_loss,
    noise_loss,
    one_step_loss,
    rollout_errors,
    true_jvp,
    unrolled_loss,
)
from .metrics import blow_up_step, energy_drift, histogram_distance, lyapunov_exponent, rollout
from .models import EnsembleCNN, EnsembleMLP, HybridModel, make_model, stack_models
from .solvers import integrate
from .systems import System, kuramoto_sivashinsky, lorenz63, make_system, pendulum
from .training import cosine_rows, gradient_cosines, sample_windows, train

Config = StableNDEConfig

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "Config",
    "EnsembleCNN",
    "EnsembleMLP",
    "HybridModel",
    "StableNDEConfig",
    "StableNDEResults",
    "System",
    "blow_up_step",
    "complete_loss",
    "cosine_rows",
    "energy_drift",
    "gradient_cosines",
    "headline",
    "histogram_distance",
    "integrate",
    "jacobian_loss",
    "kuramoto_sivashinsky",
    "lorenz63",
    "lyapunov_exponent",
    "make_model",
    "make_system",
    "noise_loss",
    "one_step_loss",
    "pendulum",
    "rollout",
    "rollout_errors",
    "run",
    "sample_windows",
    "stack_models",
    "train",
    "true_jvp",
    "unrolled_loss",
]
