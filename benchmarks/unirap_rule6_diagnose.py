"""Issue 41, eleventh pass: why does a model still fall below a competence bar with the best of two phase-1 starts?
(diagnosis only; nothing is chosen here)

For one base seed and member seeds: phase 1 from both starts (the book's weights, as ``experiment.train_part``
makes them), each start's mean weighted loss over phase 1's last 20 steps (total and per task), the start the book
picks (the lower total), then phase 2 from *both* starts (members are independent of the ensemble they sit in, so
the chosen start's numbers are the book's), with the test metrics every ``EVERY`` steps of phase 2 (looked at,
never selected on). Tells whether a failing model is (a) a slow phase 1 that both starts share, (b) a wrong pick
between the starts, or (c) phase 2's own spread (late noise around a bar).

Usage: ``PYTHONPATH=src python benchmarks/unirap_rule6_diagnose.py BASE [MEMBER_SEEDS ...]``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

import numpy as np
import torch

from explorables.core.threads import one_cpu_thread
from explorables.unirap import experiment as X
from explorables.unirap import metrics
from explorables.unirap.model import decode
from explorables.unirap.scenes import JAW
from explorables.unirap.training import MAX_GRAD_NORM, Member, clip_members, losses, predict, targets

EVERY = 40


def loop(model, pool, idx, weights, lr, hook=None):
    """``training.train`` step for step (same operations, same order), with per-member, per-task losses."""
    opt = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)
    n = idx.shape[0]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: min(1.0, (t + 1) / 20) * (1 - 0.8 * t / n))
    tgt = targets(pool, model.image_size)
    comp = np.zeros((n, model.n_members, 3), np.float32)
    model.train()
    for t in range(n):
        batch = idx[t]
        out = model(pool["images"][batch], pool["tokens"][batch])
        per = losses.__wrapped__(out, {k: v[batch] for k, v in tgt.items()}) * weights[t]
        loss = per.sum(-1).mean(-1).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip_members(model, MAX_GRAD_NORM)
        opt.step()
        sched.step()
        comp[t] = per.mean(1).detach().numpy()
        if hook is not None and ((t + 1) % EVERY == 0 or t + 1 == n):
            model.eval()
            hook(t + 1)
            model.train()
    model.eval()
    return comp


def run(base: int, seeds: tuple[int, ...]) -> dict:
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base, seeds=seeds).validated()
    parsing, pool_data, test = X.datasets(cfg)
    pool = {k: torch.as_tensor(np.concatenate([parsing[k], pool_data[k]])) for k in X.ARRAYS}
    members = [Member("curriculum", cfg.n_labelled, s) for s in seeds]
    plans = [X.member_schedule(cfg, m) for m in members]
    split, k = X.phase_steps(cfg), cfg.phase1_starts
    order = plans * k
    model = X.make_model(cfg, list(seeds) * k, "unified", [s for s in range(k) for _ in seeds])
    rows = slice(0, split)
    comp = loop(model, pool, torch.as_tensor(np.stack([i[rows] for i, _ in order], 1)),
                torch.as_tensor(np.stack([w[rows] for _, w in order], 1)), cfg.lr)
    late = comp[-X.START_WINDOW:].mean(0)  # (k * n, 3)
    chosen = late.sum(-1).reshape(k, len(seeds)).argmin(0)
    rows = slice(split, cfg.n_steps)
    images, tokens = torch.as_tensor(test["images"]), torch.as_tensor(test["tokens"])
    traj: list = []

    def hook(step):
        pred = decode(predict(model, images, tokens), cfg.image_size)
        traj.append([step] + [metrics.evaluate({q: v[i] for q, v in pred.items()}, test, JAW)
                              for i in range(model.n_members)])

    comp2 = loop(model, pool, torch.as_tensor(np.stack([i[rows] for i, _ in order], 1)),
                 torch.as_tensor(np.stack([w[rows] for _, w in order], 1)), cfg.phase2_lr, hook)
    out = []
    for j, s in enumerate(seeds):
        rec = {"seed": s, "chosen": int(chosen[j]), "starts": []}
        for st in range(k):
            i = st * len(seeds) + j
            rec["starts"].append({
                "phase1_late": late[i].round(3).tolist(),
                "phase2_late": comp2[-20:, i].mean(0).round(3).tolist(),
                "final": {q: round(v, 3) for q, v in traj[-1][1 + i].items()},
                "grasp_traj": [round(r[1 + i]["grasp_success"], 3) for r in traj],
                "iou_traj": [round(r[1 + i]["mask_iou"], 3) for r in traj]})
        out.append(rec)
    return {"base": base, "steps": [r[0] for r in traj], "members": out}


if __name__ == "__main__":
    base = int(sys.argv[1])
    seeds = tuple(int(a) for a in sys.argv[2:]) or (0, 1, 2)
    with one_cpu_thread("cpu"):
        t = time.perf_counter()
        res = run(base, seeds)
        res["seconds"] = round(time.perf_counter() - t, 1)
    print(json.dumps(res))
