"""Chapter 12: trust-region continual learning (generative replay plus a Fisher-metric trust region).

Tasks (:mod:`.tasks`), the task-conditioned diffusion model (:mod:`.diffusion`), the continual
learners, the Fisher, the penalty, re-convergence and the MAML reading (:mod:`.continual`), the
sliced Wasserstein distance (:mod:`.metrics`), the experiment (:mod:`.experiment`), its claims
(:mod:`.claims`), figures (:mod:`.figures`) and the live lab (:mod:`.lab`, imported on demand).
"""

from .continual import (
    BASELINES,
    CONTROL,
    FREEZE,
    METHODS,
    Member,
    Method,
    Strengths,
    diagonal_fisher,
    isotropic_like,
    maml_reading,
    reconvergence_steps,
    train_sequence,
    trust_region_penalty,
)
from .diffusion import Net, init_params, make_schedule, per_sample_loss, predict_noise, sample
from .experiment import TRAINED, TrustRegionCLConfig, TrustRegionCLResults, headline, run
from .metrics import random_directions, sliced_wasserstein
from .tasks import TASK_LABELS, TASKS, TOY_TASKS, check_tasks, sample_task

Config = TrustRegionCLConfig

__all__ = [
    "BASELINES",
    "CONTROL",
    "FREEZE",
    "METHODS",
    "TASKS",
    "TASK_LABELS",
    "TOY_TASKS",
    "TRAINED",
    "Config",
    "Member",
    "Method",
    "Net",
    "Strengths",
    "TrustRegionCLConfig",
    "TrustRegionCLResults",
    "check_tasks",
    "diagonal_fisher",
    "headline",
    "init_params",
    "isotropic_like",
    "make_schedule",
    "maml_reading",
    "per_sample_loss",
    "predict_noise",
    "random_directions",
    "reconvergence_steps",
    "run",
    "sample",
    "sample_task",
    "sliced_wasserstein",
    "train_sequence",
    "trust_region_penalty",
]
