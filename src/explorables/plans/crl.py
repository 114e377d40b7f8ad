"""Plan of crl's ``paper`` preset: the one training loop that fits every VAE (arms x seeds x restarts) together, the
training curve's MCC snapshots, and the final ELBO over every member's observations."""

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
    # alive through the snapshots and the final passes: every member's observations and labels on the device and
    # fit()'s one-hot environments (m x n x n_model_envs floats); the measured passes hold the first `rows` of them
    resident = 4 * m * (n - rows) * cfg.d_obs + 8 * m * (n - rows) + 4 * m * n * n_model_envs

    def elbo_at(b):
        gen = torch.Generator().manual_seed(0)

        @torch.no_grad()
        def run():
            return model.elbo(x[:, :b], env[:, :b], gen)
        return run

    @torch.no_grad()
    def final(b):
        onehot = torch.nn.functional.one_hot(env[:, :b], n_model_envs).to(x.dtype)
        mu, log_var = model.encode(x[:, :b], onehot)
        return mu, log_var, encode_means(model, x[:, :b], env[:, :b])

    def final_at(b):
        return lambda: final(b)

    found = [
        Part("training", f"one Adam step of {m} VAEs ({len(arm_list)} arms x {len(cfg.seeds)} seeds x "
             f"{cfg.n_restarts} restarts) on {cfg.batch_size} observations each", step, steps=cfg.n_steps,
             parameters=sum(p.numel() for p in model.parameters()), resident_bytes=4 * m * (n - rows) * (cfg.d_obs + 2),
             note=f"synthetic observations of the preset's shape ({n:,} per member, {cfg.d_obs} wide)"
             + (f"; dry: batch {batch}" if dry else "")),
        Part("MCC snapshots", f"every member's posterior means on all its {n:,} observations (encode_means)", None,
             step_at=lambda b: lambda: encode_means(model, x[:, :b], env[:, :b]), batch=n,
             small_batches=(rows // 2, rows), steps=cfg.n_steps // cfg.record_every + 1,
             parameters=sum(p.numel() for p in model.parameters()), resident_bytes=resident,
             note=f"the training curve's snapshot every {cfg.record_every} steps and the final one: one forward pass "
             f"of the encoders over every member's {n:,} observations at once, measured at {rows // 2:,} and "
             f"{rows:,} and extrapolated; resident: the rest of the observations and fit()'s one-hot environments "
             f"({resident / 1e9:.3g} GB); the MCC itself (numpy, on the CPU) is not in the plan"),
        Part("final ELBO", f"every member's ELBO on all its {n:,} observations (encoder, decoder and prior at once)",
             None, step_at=lambda b: elbo_at(b), batch=n, small_batches=(rows // 2, rows), steps=4,
             parameters=sum(p.numel() for p in model.parameters()), resident_bytes=resident,
             note=f"after training, averaged over 4 noise draws (no gradient); measured at {rows // 2:,} and "
             f"{rows:,} observations and extrapolated; the same resident data"),
        Part("final means", f"the active units' encode and the final posterior means on all {n:,} observations", None,
             step_at=lambda b: final_at(b), batch=n, small_batches=(rows // 2, rows), steps=1,
             parameters=sum(p.numel() for p in model.parameters()), resident_bytes=resident,
             note="as after training: the active units' one-hot environments and posterior (means and variances) "
             f"stay alive while encode_means runs; measured at {rows // 2:,} and {rows:,} observations and "
             "extrapolated; the same resident data"),
    ]
    paper_scale = ("partly: the paper's synthetic SCMs with changing edges (10 latents, 40 environments) and a "
                   "motion-capture-like arm; it has no rendered-image data set")
    return found, paper_scale, ("one training step is a fit() call with n_steps=1 (the model and optimiser are built "
                                "in it)")
