"""Chapter 17: causal representation learning with changing causal influences.

Latent causal models whose influences change across environments, and their observations
(:mod:`.scm`), VAEs with a causal, a factorised and a plain prior trained as one ensemble
(:mod:`.model`), the mean correlation coefficient after optimal matching (:mod:`.metrics`), the exact likelihood lens
under a known flow (:mod:`.lens`), the
experiment (:mod:`.experiment`), its claims (:mod:`.claims`), figures (:mod:`.figures`) and the
live lab (:mod:`.lab`, imported on demand: it needs ipywidgets).
"""

from .experiment import PATTERNS, CRLConfig, CRLResults, arms, changing_edges, headline, make_arm_data, run
from .metrics import correlation_matrix, matched_correlations, mcc
from .model import PRIORS, EnsembleVAE, encode_means, fit
from .scm import (
    MOTION_GAITS,
    MOTION_JOINTS,
    NOISE_FAMILIES,
    LatentData,
    LatentSCM,
    default_graph,
    make_data,
    make_mixing,
    make_motion_data,
    make_scm,
    mix,
    motion_scm,
    sample_latents,
    stick_figure,
)

Config = CRLConfig

__all__ = [
    "MOTION_GAITS",
    "MOTION_JOINTS",
    "NOISE_FAMILIES",
    "PATTERNS",
    "PRIORS",
    "CRLConfig",
    "CRLResults",
    "Config",
    "EnsembleVAE",
    "LatentData",
    "LatentSCM",
    "arms",
    "changing_edges",
    "correlation_matrix",
    "default_graph",
    "encode_means",
    "fit",
    "headline",
    "make_arm_data",
    "make_data",
    "make_mixing",
    "make_motion_data",
    "make_scm",
    "matched_correlations",
    "mcc",
    "mix",
    "motion_scm",
    "run",
    "sample_latents",
    "stick_figure",
]
