"""Plan of dcdm's ``paper`` preset: the 2-D mixture's training loop and CIFAR-10's (U-Nets, every arm x seed)."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from ..core.plan import Part, parameter_count
from ..dcdm import data as Dt
from ..dcdm.experiment import _networks
from ..dcdm.networks import MLPDenoiser, MLPEncoder
from ..dcdm.training import ARMS, TrainSettings, train_concept_models

CIFAR_TRAIN = 50_000


#: training inputs handed to the measured step (a step reads one batch; the rest of the set counts as resident)
STEP_INPUTS = 2048


def _step(x, settings, nets, cfg):
    # a slice: the setup's data statistics (initial centres) and argument checks on 50,000 images would dominate
    x = x[:STEP_INPUTS]
    return lambda: train_concept_models(x, settings, *nets, seeds=cfg.seeds, base_seed=cfg.seed)


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    members = len(ARMS) * len(cfg.seeds)
    batch = 2 if dry else cfg.batch_size
    mix = Dt.mixture_data(cfg.n_mixture_train, 500, cfg.n_modes, cfg.mixture_std, cfg.seed)
    mix_settings = TrainSettings(cfg.n_mixture_concepts, 1, cfg.n_diffusion_steps, batch, cfg.lr, cfg.beta, cfg.prior)
    mix_nets = (lambda: MLPEncoder(2, cfg.n_mixture_concepts, cfg.mixture_d_hidden, 2),
                lambda: MLPDenoiser(2, cfg.n_diffusion_steps, cfg.mixture_d_hidden, 3))
    if cfg.data_root:
        images = Dt.cifar_data(cfg.data_root, cfg.n_image_train, cfg.n_test, cfg.seed)
        source = f"CIFAR-10 from {cfg.data_root}"
    else:  # synthetic vectors of the loader's shape
        n = cfg.n_image_train or CIFAR_TRAIN
        x = torch.rand(n, 3 * 32 * 32, generator=torch.Generator().manual_seed(0)) * 2 - 1
        images = Dt.Dataset("cifar10", x, np.zeros(n, int), x[:10], np.zeros(10, int), 10, (32, 32, 3))
        source = f"synthetic images of CIFAR-10's shape ({n} x 3072)"
    img_settings = TrainSettings(cfg.n_concepts, 1, cfg.n_diffusion_steps, batch, cfg.lr, cfg.beta, cfg.prior)
    img_nets = _networks(cfg, images, cfg.n_concepts, cfg.encoder_d_hidden, cfg.denoiser_d_hidden,
                         cfg.denoiser_n_layers)
    one = lambda nets: parameter_count(nets[0](), nets[1]()) * members  # noqa: E731
    found = [
        Part("mixture", f"one Adam step of {members} members (MLPs) on {cfg.batch_size} points each",
             _step(mix.x_train, mix_settings, mix_nets, cfg), steps=cfg.n_mixture_steps,
             parameters=one(mix_nets), note=f"{len(ARMS)} arms x {len(cfg.seeds)} seeds side by side"),
        Part("images", f"one Adam step of {members} members ({cfg.network}) on {cfg.batch_size} images each",
             None, steps=cfg.n_image_steps, batch=batch, small_batches=(1, 2),
             step_at=lambda b: _step(images.x_train, dataclasses.replace(img_settings, batch_size=b), img_nets, cfg),
             parameters=one(img_nets), resident_bytes=images.x_train[STEP_INPUTS:].nbytes,
             note=f"{source}; sampling for the evaluation (T = {cfg.n_diffusion_steps} "
             "denoiser calls per sample) is not in the plan"),
    ]
    if dry:
        found[0].note += f"; dry: batches of {batch}"
    paper_scale = ("partly: CIFAR-10 with a small U-Net (64 base channels), T = 1000 and 100k steps of batch 64; "
                   "the paper's CIFAR-10 / CelebA runs use a larger DDPM U-Net")
    return found, paper_scale, "each step is a train_concept_models call with n_steps=1 (models and optimiser built)"
