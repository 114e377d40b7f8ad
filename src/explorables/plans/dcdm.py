"""Plan of dcdm's ``paper`` preset: the 2-D mixture's training loop and CIFAR-10's (U-Nets, every arm x seed), and
CIFAR-10's evaluation: the encoder passes over the training set and the T-step reverse processes that sample every
member (by concept, like held-out inputs, from the prior) and regenerate edited inputs (interventions)."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from ..core.plan import Part, dry_note, parameter_count
from ..dcdm import data as Dt
from ..dcdm import dcdm as M
from ..dcdm.experiment import INTERVENTION_TARGETS, _networks, untrained_assignment
from ..dcdm.networks import MLPDenoiser, MLPEncoder
from ..dcdm.training import ARMS, CONCEPT_ARMS, TrainSettings, train_concept_models

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
             note=source),
    ]
    # the evaluation (experiment.evaluate) with the trained models' shapes: models from one step on a few inputs
    models = train_concept_models(images.x_train[:8], dataclasses.replace(img_settings, n_steps=1, batch_size=2),
                                  *img_nets, seeds=cfg.seeds, base_seed=cfg.seed)
    e, k, _ = models.centres.shape
    data_bytes = images.x_train.nbytes  # the training images stay on the device through the evaluation
    n_train = len(images.x_train)

    def reverse_at(b, member=None):  # one step of the reverse process (a denoiser call and the update) on b per member
        centres = models.centres[:1] if member is not None else models.centres
        m = centres[:, :1].expand(-1, b, -1).contiguous()
        x = torch.randn(m.shape, generator=torch.Generator().manual_seed(3))
        net = models.denoiser if member is None else models.denoiser.member(member)
        m, x = (m[0], x[0]) if member is not None else (m, x)

        @torch.no_grad()
        def step():
            return M.reverse_process(net, models.schedule, m, x_start=x, t_start=0)
        return step

    t = cfg.n_diffusion_steps
    t_edit = round(cfg.edit_fraction * (t - 1))
    n_edit = min(cfg.n_intervene, cfg.n_test)
    few = (1, 2)
    sampling = [("concepts", k * cfg.n_samples_per_concept, "sample_concepts: every concept"),
                ("like inputs", cfg.n_test, "sample_like: weights inferred from random training inputs"),
                ("prior", 4 * cfg.n_test, "sample_prior: weights drawn from the prior, 4 x n_test")]
    for what, per_member, why in sampling:
        found.append(Part(f"sampling: {what}", f"one reverse step of all {e} members on {per_member:,} samples each",
                          None, step_at=reverse_at, batch=per_member, small_batches=few, steps=t,
                          parameters=one(img_nets), resident_bytes=data_bytes,
                          note=f"{why}; T = {t} steps, all samples at once; measured at {few[0]} and {few[1]} "
                          "samples per member and extrapolated"))
    n_concept_members = len(CONCEPT_ARMS) * len(cfg.seeds)
    n_pairs = n_edit * max(1, min(INTERVENTION_TARGETS, k - 1))  # each input towards up to 9 other used concepts
    found.append(Part("interventions", f"one reverse step of one member on {n_pairs:,} edited (input, target concept) "
                      "pairs", None, step_at=lambda b: reverse_at(b, member=0), batch=n_pairs, small_batches=few,
                      steps=n_concept_members * 2 * (t_edit + 1), parameters=one(img_nets) // members,
                      resident_bytes=data_bytes,
                      note=f"{n_concept_members} concept members x 2 (edited, kept) x {t_edit + 1} steps from "
                      f"t_edit = {t_edit}, one member at a time; {n_edit} held-out inputs, each towards at most "
                      f"{INTERVENTION_TARGETS} other used concepts (at most K - 1 = {k - 1})"))
    found.append(Part("untrained assignment", f"the {len(cfg.seeds)} initial encoders on all {n_train:,} training "
                      "images at once (the clusters' control)", None,
                      step_at=lambda b: lambda: untrained_assignment(cfg, img_nets[0], images.x_train[:b]),
                      batch=n_train, small_batches=(8, 16), steps=1, resident_bytes=data_bytes,
                      parameters=parameter_count(img_nets[0]()) * len(cfg.seeds),
                      note="experiment.untrained_assignment: one forward pass, no chunks; measured at 8 and 16 "
                      "images and extrapolated"))
    chunk = 4096  # ConceptModels.concept_weights' chunk
    found.append(Part("assignments", f"every member's concept weights on one chunk of {chunk:,} images", None,
                      step_at=lambda b: lambda: models.concept_weights(images.x_train[:b]), batch=chunk,
                      small_batches=(8, 16), steps=-(-n_train // chunk) + -(-cfg.n_test // chunk),
                      parameters=one(img_nets), resident_bytes=data_bytes,
                      note="the training set's and the test set's chunks; measured at 8 and 16 images"))
    dry_note(found[:2], dry, f"batches of {batch}")
    paper_scale = ("partly: CIFAR-10 with a small U-Net (64 base channels), T = 1000 and 100k steps of batch 64; "
                   "the paper's CIFAR-10 / CelebA runs use a larger DDPM U-Net")
    return found, paper_scale, ("each training step is a train_concept_models call with n_steps=1 (models and "
                                "optimiser built); the mixture's evaluation (2-D samples from small MLPs) and the "
                                "training snapshots' samples (one member, a few per concept) are not in the plan")
