"""Plan of jeffrey's ``paper`` preset: the toy's networks, the image denoiser (U-Net), the guidance networks on
the model's samples, and the ancestral sampling that draws those samples."""

from __future__ import annotations

import math

import torch

from ..core.plan import Part, parameter_count
from ..jeffrey import diffusion as D
from ..jeffrey import toy as Y
from ..jeffrey.experiment import image_denoiser

CIFAR_SHAPE = (3, 32, 32)
CIFAR_TRAIN = 50_000


def _fit_step(model, loss):
    return lambda: D.fit(model, loss, n_steps=1, lr=2e-4, generator=torch.Generator().manual_seed(0))


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    gen = torch.Generator().manual_seed(0)
    T = cfg.n_diffusion_steps
    schedule = D.NoiseSchedule.cosine(T, "cpu")
    seeds = len(cfg.seeds)
    toy_batch = 16 if dry else cfg.toy_batch_size
    toy = Y.sample_toy(max(toy_batch, 1024), gen)
    denoiser = D.TimeMLP(2, 2, T, cfg.toy_d_hidden)
    clf = D.TimeMLP(2, Y.N_CELLS, T, cfg.toy_d_hidden // 2, n_layers=2)
    shape = CIFAR_SHAPE
    d = math.prod(shape)
    pixels = torch.rand(256, *shape, generator=gen) * 2 - 1  # synthetic images of CIFAR-10's shape
    unet = image_denoiser(cfg, shape, torch.device("cpu"))
    n_cells = 20
    h_net = D.TimeMLP(d, n_cells, T, 128, n_layers=2)
    resident = CIFAR_TRAIN * d * 4
    found = [
        Part("toy denoiser", f"one Adam step of the toy's noise predictor on {cfg.toy_batch_size} points",
             _fit_step(denoiser, D.denoiser_loss(toy, schedule, toy_batch)), steps=cfg.n_toy_denoiser_steps,
             parameters=parameter_count(denoiser)),
        Part("toy classifiers", f"one Adam step of a toy cell classifier on {cfg.toy_batch_size} points",
             _fit_step(clf, D.classifier_loss(toy, Y.toy_cells(toy), schedule, toy_batch)),
             steps=cfg.n_toy_classifier_steps * seeds, parameters=parameter_count(clf),
             note="one per seed (the noisy-classifier arms add more)"),
        Part("image denoiser", f"one Adam step of the {cfg.denoiser} on {cfg.image_batch_size} images", None,
             step_at=lambda b: _fit_step(unet, D.denoiser_loss(pixels, schedule, b)), batch=cfg.image_batch_size,
             small_batches=(2, 4), steps=cfg.n_image_denoiser_steps, parameters=parameter_count(unet),
             resident_bytes=resident, note="synthetic images of CIFAR-10's shape"),
        Part("guidance networks", f"one Adam step of a pixel-space time MLP on {cfg.image_batch_size} samples",
             None, step_at=lambda b: _fit_step(h_net, D.classifier_loss(pixels, torch.zeros(256, dtype=torch.long),
                                                                         schedule, b)),
             batch=cfg.image_batch_size, small_batches=(2, 4),
             steps=(cfg.n_h_steps + cfg.n_image_classifier_steps + cfg.n_class_classifier_steps) * seeds,
             parameters=parameter_count(h_net), note="log h_t, the 20-cell and the 10-class classifiers, per seed"),
    ]
    for name, n, draws in (("sampling, pool", cfg.n_ratio_samples, 1),
                           ("sampling, compared", max(cfg.n_image_samples, cfg.n_fair_samples), 3)):
        n_here = 4 if dry else n

        @torch.no_grad()
        def forward(n_here=n_here):
            with torch.device("meta"):
                x = torch.empty(n_here, *shape)
                t = torch.zeros(n_here, dtype=torch.long)
                net = image_denoiser(cfg, shape, torch.device("meta"))
                return net(x, t)

        found.append(Part(name, f"one denoiser call on {n:,} images (reverse step)", forward, steps=T * draws * seeds,
                          device="meta", parameters=parameter_count(unet),
                          note=f"{draws} draw(s) of {T} steps per seed; guided steps also differentiate a guidance "
                          "network (not counted)" + (f"; dry: {n_here} images" if dry else "")))
    paper_scale = ("partly: CIFAR-10 with a 2-level U-Net trained for 200k steps; the paper guides large pretrained "
                   "models (e.g. on FFHQ / CelebA-HQ), which the image_folder path reads but the preset does not use")
    return found, paper_scale, "the image steps are measured on synthetic images of CIFAR-10's shape"
