"""Screen for benchmarks/dcdm_gauss_rule.md: the digits quality gate's DDPM arm alone, with or without a fixed
Gaussian base under the MLP denoiser (``GaussianDenoiser`` below: the exact noise predictor for a Gaussian
with the training inputs' mean and covariance; the MLP learns the residual). Exploratory: nothing here is in
the package.

Trains the plain DDPM (m = 0) of the chapter's digits part at the book's settings (MLP 64 x 2, batch 128, T = 50,
Adam 3e-3 with cosine decay) from member seeds (0, 1, 2) of one base seed, optionally with an EMA of the weights,
and scores the chapter's quality gate (claims.quality_gate) on the chapter's own per-seed floors and Gaussian fit,
with 300 samples per member (the gate's count) and 1200, for DDPM's posterior variance (beta tilde, the
chapter's sampler), for beta_t and for DDIM (eta = 0); and the held-out denoising error at seven steps.
Environment: DCDM_T (diffusion steps, default 50), DCDM_RSCALE (scale the residual by sqrt(abar_t)).

    PYTHONPATH=src .venv/bin/python benchmarks/dcdm_gauss.py BASE STEPS GAUSS [EMA [zero]]
"""

import json
import math
import os
import sys
import time

import numpy as np
import torch

from explorables.dcdm import data as Dt
from explorables.dcdm import dcdm as M
from explorables.dcdm.claims import quality_gate
from explorables.dcdm.experiment import data_floors, gaussian_fit_samples
from explorables.dcdm.metrics import kernel_bandwidths, mmd2
from explorables.dcdm.networks import Ensemble, MLPDenoiser
from explorables.dcdm.training import generator_noise, member_seed

torch.set_num_threads(1)


class GaussianDenoiser:
    """The exact noise predictor when the data are Gaussian: ``E[eps | x_t]`` for ``x_0 ~ N(mean, cov)``.

    With ``x_t = sqrt(abar_t) x_0 + (1 - sqrt(abar_t)) m + sqrt(1 - abar_t) eps`` (eq. (dcdm-forward); ``m = 0``
    for a plain DDPM) and ``x~_t = x_t - (1 - sqrt(abar_t)) m``, it is
    ``sqrt(1 - abar_t) (abar_t cov + (1 - abar_t) I)^-1 (x~_t - sqrt(abar_t) mean)``, computed in the
    eigenbasis of ``cov``. It ignores what ``m`` says about ``x_0`` (the same base for every arm); a denoiser
    built on it (``GaussianBaseDenoiser`` below) learns only what the data hold beyond their first two
    moments. Fixed (no parameters): the moments come from the training inputs, as a Gaussian fit's do.
    """

    def __init__(self, mean: torch.Tensor, cov: torch.Tensor, alpha_bars: torch.Tensor):
        mean, cov, ab = (torch.as_tensor(v, dtype=torch.float64) for v in (mean, cov, alpha_bars))
        d = mean.shape[-1]
        if mean.shape != (d,) or cov.shape != (d, d) or ab.dim() != 1:
            raise ValueError(
                f"mean (D,), cov (D, D) and alpha_bars (T,) expected, got {mean.shape}, {cov.shape}, {ab.shape}"
            )
        lam, vec = torch.linalg.eigh((cov + cov.T) / 2)
        lam = lam.clamp(min=0.0)
        self.mean, self.vec = mean.float(), vec.float()
        self.sqrt_ab = ab.sqrt().float()
        # per step and eigen-direction: sqrt(1 - abar) / (abar lambda + 1 - abar)
        self.scale = ((1 - ab).sqrt()[:, None] / (ab[:, None] * lam[None, :] + (1 - ab)[:, None])).float()

    def __call__(self, x_t: torch.Tensor, t: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        r = self.sqrt_ab.to(x_t.device)[t][..., None]
        centred = x_t - (1 - r) * m - r * self.mean.to(x_t.device)
        vec = self.vec.to(x_t.device)
        return ((centred @ vec) * self.scale.to(x_t.device)[t]) @ vec.T


class GaussianBaseDenoiser(MLPDenoiser):
    """The chapter's MLP denoiser plus a fixed :class:`GaussianDenoiser` (the MLP learns the residual); with
    ``DCDM_RSCALE`` set, the residual is scaled by ``sqrt(abar_t)`` (it fades out where noise dominates)."""

    def __init__(self, d_data, n_steps, d_hidden, n_layers, gaussian, rscale=None):
        super().__init__(d_data, n_steps, d_hidden, n_layers)
        self.gaussian, self.rscale = gaussian, rscale

    def _out(self, out, x_t, t, m):
        if self.rscale is not None:
            out = out * self.rscale[t][..., None]
        return out + self.gaussian(x_t, t, m)

    def forward(self, x_t, t, m):
        return self._out(super().forward(x_t, t, m), x_t, t, m)

    def stacked_forward(self, params, x_t, t, m):
        return self._out(super().stacked_forward(params, x_t, t, m), x_t, t, m)


base, steps, use_gauss = (int(v) for v in sys.argv[1:4])
decay = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
T = int(os.environ.get("DCDM_T", "50"))
lr, seeds, width, layers, batch = 3e-3, (0, 1, 2), 64, 2, 128
t0 = time.time()
torch.manual_seed(base + 1)
data = Dt.digits_data(20, 300, base)
x = data.x_train
d = x.shape[1]
sch = M.NoiseSchedule.cosine(T)
xn64 = x.double()
g = GaussianDenoiser(xn64.mean(0), torch.cov(xn64.T), sch.alpha_bars) if use_gauss else None
rscale = sch.alpha_bars.sqrt() if os.environ.get("DCDM_RSCALE") else None


def make():
    if g is None:
        return MLPDenoiser(d, T, width, layers)
    return GaussianBaseDenoiser(d, T, width, layers, g, rscale)


den = Ensemble(make, [member_seed(base, s) for s in seeds])
# "zero": the MLP's output layer starts at zero (the model starts as its base)
zero = len(sys.argv) > 5 and sys.argv[5] == "zero"
if zero:
    with torch.no_grad():
        for k, p in den.params.items():
            if k.startswith(f"net__{2 * layers}__"):
                p.zero_()
opt = torch.optim.Adam(den.parameters(), lr=lr)
sc = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1 + math.cos(math.pi * min(k, steps) / max(steps, 1))))
ema = [p.detach().clone() for p in den.parameters()]
for _ in range(steps):
    loss = M.ddpm_loss(x[torch.randint(len(x), (len(seeds), batch))], den, sch)
    opt.zero_grad()
    loss.sum().backward()
    opt.step()
    sc.step()
    if decay:
        with torch.no_grad():
            for a, p in zip(ema, den.parameters(), strict=True):
                a.lerp_(p, 1 - decay)
if decay:
    with torch.no_grad():
        for a, p in zip(ema, den.parameters(), strict=True):
            p.copy_(a)
train_s = time.time() - t0
xt, xn = data.x_test.numpy(), data.x_train.numpy()
bw = kernel_bandwidths(xt)
floors = data_floors(xn, xt, bw, 3, 1200, base)
gauss = mmd2(gaussian_fit_samples(xn, 1200, base + 13), xt, bw)


@torch.no_grad()
def sample(kind):
    draw = generator_noise(base + 11)
    m = torch.zeros(3, 1200, d)
    y = draw(tuple(m.shape))
    for t in range(T - 1, -1, -1):
        eps = den(y, torch.full(m.shape[:-1], t, dtype=torch.long), m)
        b, a, ab = sch.betas[t], sch.alphas[t], sch.alpha_bars[t]
        if kind == "ddim":  # deterministic (eta = 0): the probability-flow step of Song et al. 2021
            ab_prev = sch.alpha_bars[t - 1] if t > 0 else torch.tensor(1.0)
            x0_hat = (y - (1 - ab).sqrt() * eps) / ab.sqrt()
            y = ab_prev.sqrt() * x0_hat + (1 - ab_prev).sqrt() * eps
            continue
        y = (y - b / (1 - ab).sqrt() * eps) / a.sqrt()
        if t > 0:
            var = b * (1 - sch.alpha_bars[t - 1]) / (1 - ab) if kind == "tilde" else b
            y = y + var.sqrt() * draw(tuple(m.shape))
    return y.numpy()


out = {
    "base": base,
    "steps": steps,
    "gauss": use_gauss,
    "ema": decay,
    "zero": zero,
    "gaussian_excess": round(gauss - float(np.mean(floors)), 5),
    "floors": [round(f, 5) for f in floors],
}
for kind in ("tilde", "beta", "ddim"):
    s = sample(kind)
    for n in (300, 1200):
        v = [mmd2(s[e, :n], xt, bw) for e in range(3)]
        out[f"{kind}/{n}"] = quality_gate(v, gauss, floors)
        out[f"{kind}/{n}/excess"] = [round(a - f, 5) for a, f in zip(v, floors, strict=True)]
    out[f"{kind}/var_ratio"] = round(float(np.mean([s[e].var(0).sum() / xt.var(0).sum() for e in range(3)])), 3)
with torch.no_grad():  # held-out denoising error per step (mean over members), the same draws for every candidate
    gen = torch.Generator().manual_seed(base + 17)
    x_te = data.x_test
    per_t = []
    for t in [round(f * (T - 1)) for f in (0, 0.1, 0.2, 0.4, 0.6, 0.8, 1)]:
        eps = torch.randn(x_te.shape, generator=gen)
        ab = sch.alpha_bars[t]
        x_t = (ab.sqrt() * x_te + (1 - ab).sqrt() * eps).expand(3, -1, -1)
        tt = torch.full(x_t.shape[:-1], t, dtype=torch.long)
        per_t.append(round(float(((eps - den(x_t, tt, torch.zeros_like(x_t))) ** 2).mean()), 4))
    out["heldout_loss_at_0_.1_.2_.4_.6_.8_1T"] = per_t
out["train_s"], out["total_s"] = round(train_s, 1), round(time.time() - t0, 1)
print(json.dumps(out, ensure_ascii=False))
