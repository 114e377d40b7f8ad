"""Exploration on tuning seeds (>= 100): which long-run measure of the Lorenz attractor separates one-step and
unrolled models (sixth pass, see stable_nde_noise_rule.md; its log is stable_nde_attractor_explore.log).

Usage: PYTHONPATH=src python benchmarks/stable_nde_attractor_explore.py JSON_CFG_OVERRIDES SEED...
"""

import json
import math
import sys

import numpy as np
import torch
from scipy.stats import wasserstein_distance as w1

from explorables.stable_nde.claims import reference_gate, stability_gate
from explorables.stable_nde.experiment import ROLLOUT_OFFSET, StableNDEConfig, build_system, make_data, member_seeds
from explorables.stable_nde.losses import heldout_unrolled_error
from explorables.stable_nde.metrics import blow_up_step, rollout
from explorables.stable_nde.models import make_model, stack_models
from explorables.stable_nde.training import train

torch.set_num_threads(1)


def maxima(z):  # z: (T, B) -> local maxima values pooled
    m = (z[1:-1] > z[:-2]) & (z[1:-1] > z[2:])
    v = z[1:-1][m]
    return v if v.size else z[-1:].ravel()


def acf(x, lags):  # x (T, B)
    x = x - x.mean(0)
    v = (x * x).mean(0)
    return np.array([((x[:-l] * x[l:]).mean(0) / v).mean() if l else 1.0 for l in lags])


def run(b, over):
    cfg = StableNDEConfig(seed=b, **over)
    system = build_system(cfg, "lorenz")
    seeds = member_seeds(cfg, 1)
    n = len(seeds)
    data = make_data(system, cfg, seeds, torch.device("cpu"))
    common = dict(
        batch_size=cfg.batch_size,
        horizon=cfg.horizon,
        noise_std=cfg.noise_std,
        weight=cfg.jacobian_weight,
        jvp_mode=cfg.jvp_mode,
        refresh_every=cfg.refresh_every,
    )
    warm = make_model(system, n, width=cfg.width, depth=cfg.depth, seeds=seeds, solver=cfg.solver)
    train(warm, data, "one_step", n_steps=cfg.pretrain_steps, lr=cfg.pretrain_lr, data_seed=seeds[0] + 5, **common)
    models = {}
    for m in ("one_step", "unrolled"):
        mod = make_model(system, n, width=cfg.width, depth=cfg.depth, seeds=seeds, solver=cfg.solver)
        mod.load_state_dict(warm.state_dict())
        train(mod, data, m, n_steps=cfg.n_train_steps, lr=cfg.lr, decay=True, data_seed=seeds[0] + 7, **common)
        models[m] = mod
    x0 = system.trajectories(cfg.n_rollouts, 1, torch.Generator().manual_seed(seeds[0] + ROLLOUT_OFFSET))[:, 0]
    joint = stack_models([models["one_step"], models["unrolled"]])
    T = cfg.rollout_steps
    traj = rollout(joint, x0.expand(joint.n_members, -1, -1).contiguous(), T)
    truth = rollout(system, x0, T)
    blown = (blow_up_step(traj, system.blow_up_radius) <= T).double().mean(-1).view(2, n)
    held = system.trajectories_per_seed(
        cfg.n_alignment_windows, cfg.horizon, [torch.Generator().manual_seed(500_000 + s) for s in seeds]
    )
    he = heldout_unrolled_error(joint, held.repeat(2, 1, 1, 1)).view(2, n)
    burn = T // 5
    tr = truth[burn:].numpy()
    tj = traj[burn:].numpy()
    lags = np.arange(0, int(2.0 / system.dt), max(1, int(0.1 / system.dt)))
    acf_t = acf(tr[..., 0], lags)
    rng = np.random.default_rng(0)
    dirs = rng.normal(size=(16, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    sc = system.scale.numpy()
    out = {}
    for i, m in enumerate(("one_step", "unrolled")):
        res = {k: [] for k in ("w1z", "w1x", "w1absx", "w1zmax", "sw1", "acf", "w1zc", "zmaxsd")}
        for s in range(n):
            y = tj[:, i * n + s]
            res["w1z"].append(w1(y[..., 2].ravel(), tr[..., 2].ravel()))
            res["w1x"].append(w1(y[..., 0].ravel(), tr[..., 0].ravel()))
            res["w1absx"].append(w1(np.abs(y[..., 0]).ravel(), np.abs(tr[..., 0]).ravel()))
            res["w1zmax"].append(w1(maxima(y[..., 2]), maxima(tr[..., 2])))
            res["zmaxsd"].append(float(maxima(y[..., 2]).std()))
            yc = y[..., 2] - y[..., 2].mean()
            tc = tr[..., 2] - tr[..., 2].mean()
            res["w1zc"].append(w1(yc.ravel(), tc.ravel()))
            res["sw1"].append(
                float(np.mean([w1((y.reshape(-1, 3) / sc) @ d, (tr.reshape(-1, 3) / sc) @ d) for d in dirs]))
            )
            res["acf"].append(float(np.sqrt(np.mean((acf(y[..., 0], lags) - acf_t) ** 2))))
        out[m] = res
    o, u = out["one_step"], out["unrolled"]
    line = {
        "seed": b,
        "ref": reference_gate(he[1].tolist(), he[0].tolist())[:4],
        "truth_zmaxsd": float(maxima(tr[..., 2]).std()),
    }
    for k in o:
        lr = [math.log(max(a, 1e-9) / max(c, 1e-9)) for a, c in zip(u[k], o[k], strict=True)]
        line[k] = (
            f"U {np.mean(u[k]):.3f} O {np.mean(o[k]):.3f} r {math.exp(np.mean(lr)):.2f} "
            + stability_gate(blown[1].tolist(), blown[0].tolist(), u[k], o[k])[:4]
        )
    print(json.dumps(line), flush=True)


over = json.loads(sys.argv[1])
for b in map(int, sys.argv[2:]):
    assert b >= 100
    run(b, over)
