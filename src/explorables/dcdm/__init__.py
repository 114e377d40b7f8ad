"""Chapter 07: the Dirichlet Concept Diffusion Model (DCDM).

K learned concept centres; an encoder infers ``Dir(alpha(x_0))`` over them; the weighted centre
``m = pi C`` shifts the forward-diffusion mean and conditions the denoiser; one objective (the
diffusion loss plus the Dirichlet KL) trains everything, with no labels.
"""

from .dcdm import (
    NoiseSchedule,
    concentrations,
    concept_weights,
    dcdm_loss,
    ddpm_loss,
    dirichlet_kl,
    forward_mean_std,
    forward_sample,
    intervene,
    reverse_process,
    swap_weights,
)
from .experiment import DCDMConfig, DCDMResults, headline, run
from .training import ARMS, ConceptModels, TrainSettings, train_concept_models

Config = DCDMConfig

__all__ = [
    "ARMS",
    "ConceptModels",
    "Config",
    "DCDMConfig",
    "DCDMResults",
    "NoiseSchedule",
    "TrainSettings",
    "concentrations",
    "concept_weights",
    "dcdm_loss",
    "ddpm_loss",
    "dirichlet_kl",
    "forward_mean_std",
    "forward_sample",
    "headline",
    "intervene",
    "reverse_process",
    "run",
    "swap_weights",
    "train_concept_models",
]
