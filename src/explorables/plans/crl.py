"""Plan of crl's ``paper`` preset: the one training loop that fits every VAE (arms x seeds x restarts) together."""

from __future__ import annotations

import torch

from ..core.plan import Part
from ..crl.experiment import MOTION_GAITS, arms
from ..crl.model import encode_means, fit

#: observations per member handed to the measured step (a step draws one batch; the rest counts as resident)
STEP_ROWS = 4096


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    arm_list = arms(cfg)
    members = [(a, s, r) for a in arm_list for s in range(len(cfg.seeds)) for r in range(cfg.n_restarts)]
    m = len(members)
    n = cfg.n_envs * cfg.n_per_env
    rows = min(n, STEP_ROWS)
    n_model_envs = max(cfg.n_envs, len(MOTION_GAITS))
    d_latent = max(3 if a.data == "motion" else cfg.d_latent for a in arm_list)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(m, rows, cfg.d_obs, generator=gen)  # synthetic observations of the preset's shape
    env = torch.randint(cfg.n_envs, (m, rows), generator=gen)
    priors = [a.prior for a, _, _ in members]
    batch = 8 if dry else cfg.batch_size
    seeds = list(range(m))

    def step():
        return fit(x, env, priors, n_model_envs, d_latent, seeds=seeds, n_steps=1, batch_size=batch, lr=cfg.lr,
                   width=cfg.width, sparsity=cfg.sparsity, obs_std=cfg.obs_std, obs_std_start=cfg.obs_std_start,
                   warmup=cfg.warmup, cosine=cfg.cosine, encoder_env=cfg.encoder_env)

    model = step()
    found = [
        Part("training", f"one Adam step of {m} VAEs ({len(arm_list)} arms x {len(cfg.seeds)} seeds x "
             f"{cfg.n_restarts} restarts) on {cfg.batch_size} observations each", step, steps=cfg.n_steps,
             parameters=sum(p.numel() for p in model.parameters()), resident_bytes=4 * m * (n - rows) * (cfg.d_obs + 2),
             note=f"synthetic observations of the preset's shape ({n:,} per member, {cfg.d_obs} wide)"
             + (f"; dry: batch {batch}" if dry else "")),
        Part("MCC snapshots", f"every member's posterior means on all its {n:,} observations (encode_means)", None,
             step_at=lambda b: lambda: encode_means(model, x[:, :b], env[:, :b]), batch=n,
             small_batches=(rows // 2, rows), steps=cfg.n_steps // cfg.record_every + 1,
             parameters=sum(p.numel() for p in model.parameters()),
             note=f"the training curve's snapshot every {cfg.record_every} steps and the final one: one forward pass "
             f"of the encoders over every member's {n:,} observations at once, measured at {rows // 2:,} and "
             f"{rows:,} and extrapolated; the MCC itself (numpy, on the CPU) is not in the plan"),
    ]
    paper_scale = ("partly: the paper's synthetic SCMs with changing edges (10 latents, 40 environments) and a "
                   "motion-capture-like arm; it has no rendered-image data set")
    return found, paper_scale, ("one training step is a fit() call with n_steps=1 (the model and optimiser are built "
                                "in it)")
