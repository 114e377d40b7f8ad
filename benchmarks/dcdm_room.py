"""Screen for benchmarks/dcdm_room_rule.md: the digits quality gate's DDPM arm alone, with candidate changes.

Trains the plain DDPM (m = 0) of the chapter's digits part from member seeds (0, 1, 2) of one base seed, with
an optional EMA of the weights, batch size, width, depth, steps, and samples with DDPM's posterior variance
(beta tilde, the chapter's sampler) or beta_t. Scores the chapter's quality gate (claims.quality_gate) on the
chapter's own floor and Gaussian fit, with 300 samples per member (as the gate's ``mmd2``) and with 1200.

    PYTHONPATH=src .venv/bin/python benchmarks/dcdm_room.py BASE STEPS WIDTH LAYERS [BATCH] [EMA]
"""

import json
import math
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
base, steps, width, layers = (int(v) for v in sys.argv[1:5])
batch = int(sys.argv[5]) if len(sys.argv) > 5 else 128
decay = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
T, lr, seeds = 50, 3e-3, (0, 1, 2)
t0 = time.time()
torch.manual_seed(base + 1)
data = Dt.digits_data(20, 300, base)
x = data.x_train
d = x.shape[1]
den = Ensemble(lambda: MLPDenoiser(d, T, width, layers), [member_seed(base, s) for s in seeds])
sch = M.NoiseSchedule.cosine(T)
opt = torch.optim.Adam(den.parameters(), lr=lr)
sc = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1 + math.cos(math.pi * min(k, steps) / steps)))
ema = [p.detach().clone() for p in den.parameters()]
for _ in range(steps):
    loss = M.ddpm_loss(x[torch.randint(len(x), (len(seeds), batch))], den, sch)
    opt.zero_grad()
    loss.sum().backward()
    opt.step()
    sc.step()
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
        y = (y - b / (1 - ab).sqrt() * eps) / a.sqrt()
        if t > 0:
            var = b * (1 - sch.alpha_bars[t - 1]) / (1 - ab) if kind == "tilde" else b
            y = y + var.sqrt() * draw(tuple(m.shape))
    return y.numpy()


out = {
    "base": base,
    "steps": steps,
    "width": width,
    "layers": layers,
    "batch": batch,
    "ema": decay,
    "gaussian": round(gauss, 5),
    "floors": [round(f, 5) for f in floors],
}
for kind in ("tilde", "beta"):
    s = sample(kind)
    for n in (300, 1200):
        out[f"{kind}/{n}"] = quality_gate([mmd2(s[e, :n], xt, bw) for e in range(3)], gauss, floors)
    out[f"{kind}/var_ratio"] = round(float(np.mean([s[e].var(0).sum() / xt.var(0).sum() for e in range(3)])), 3)
out["train_s"], out["total_s"] = round(train_s, 1), round(time.time() - t0, 1)
print(json.dumps(out))
