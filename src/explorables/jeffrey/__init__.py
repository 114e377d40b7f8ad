"""Chapter 15: Jeffrey guidance for diffusion models.

Jeffrey's rule moves the marginal of a statistic ``s(x)`` to a target ``q`` and keeps every
conditional ``p(x | s)``; on a diffusion model it becomes guidance by ``grad log h_t``, with
``h_t(x_t) = E[q(s(x_0)) / p(s(x_0)) | x_t]``.
"""

from .diffusion import NoiseSchedule, TimeMLP, classifier_log_prob, guided_epsilon, jeffrey_log_h, sample
from .experiment import JeffreyConfig, JeffreyResults, headline, run
from .metrics import cell_frequencies, conditional_mmd2, frechet_distance, mmd2
from .rule import check_target, independent_target, jeffrey_update, jeffrey_weights, kl_divergence, tv_distance

Config = JeffreyConfig

__all__ = [
    "Config",
    "JeffreyConfig",
    "JeffreyResults",
    "NoiseSchedule",
    "TimeMLP",
    "cell_frequencies",
    "check_target",
    "classifier_log_prob",
    "conditional_mmd2",
    "frechet_distance",
    "guided_epsilon",
    "headline",
    "independent_target",
    "jeffrey_log_h",
    "jeffrey_update",
    "jeffrey_weights",
    "kl_divergence",
    "mmd2",
    "run",
    "sample",
    "tv_distance",
]
