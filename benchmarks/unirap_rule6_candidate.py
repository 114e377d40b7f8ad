"""Issue 41, eleventh pass (``benchmarks/unirap_rule6.md``): the candidates' tuning harness.

The tenth pass's harness (``unirap_rule5_candidate.py`` with ``C1``: curriculum models at 512 labels, member seeds
0-9, the book preset at 400 steps, best of two phase-1 starts by the training loss over phase 1's last 20 steps:
the book's setup today) with one change per candidate:

* ``B0``: none (the book's setup, rerun on this machine);
* ``D1``: Adam's ``beta2`` 0.99 instead of 0.999 in both phases (every member alike);
* ``D2``: phase 2's learning rate holds its peak (after the same 20-step warm-up) for the first two thirds of
  phase 2, then decays linearly to 0 (phase 1 unchanged).

Prints one JSON line per base seed (with every model's margin) and a total line.

Usage: ``PYTHONPATH=src python benchmarks/unirap_rule6_candidate.py {B0,D1,D2} BASE [BASE ...]``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))

import unirap_steps_candidate as H

from explorables.core.threads import one_cpu_thread
from explorables.unirap import experiment as X
from explorables.unirap.training import MAX_GRAD_NORM, Member, clip_members, losses, targets

CANDIDATES = ("B0", "D1", "D2")


def factor(candidate: str, phase: int, n: int):
    """The learning-rate multiplier per step ``t`` of a phase of ``n`` steps."""
    if candidate == "D2" and phase == 2:
        hold = round(2 * n / 3)
        return lambda t: min(1.0, (t + 1) / 20) * (1.0 if t < hold else 1 - (t - hold) / (n - hold))
    return lambda t: min(1.0, (t + 1) / 20) * (1 - 0.8 * t / n)


def train_loop(candidate, phase, model, pool, idx, weights, lr):
    """``training.train`` step for step, with the candidate's change; per-member losses per step."""
    beta2 = 0.99 if candidate == "D1" else 0.999
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, beta2), foreach=True)
    n = idx.shape[0]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor(candidate, phase, n))
    tgt = targets(pool, model.image_size)
    per_member = np.zeros((n, model.n_members), np.float32)
    model.train()
    for t in range(n):
        batch = idx[t]
        out = model(pool["images"][batch], pool["tokens"][batch])
        per = (losses.__wrapped__(out, {k: v[batch] for k, v in tgt.items()}) * weights[t]).sum(-1).mean(-1)
        loss = per.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip_members(model, MAX_GRAD_NORM)
        opt.step()
        sched.step()
        per_member[t] = per.detach().numpy()
    model.eval()
    return per_member


def models(candidate: str, base: int) -> tuple[list[dict[str, float]], list[int]]:
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base, seeds=H.MEMBER_SEEDS).validated()
    parsing, pool_data, _ = X.datasets(cfg)
    pool = {k: torch.as_tensor(np.concatenate([parsing[k], pool_data[k]])) for k in X.ARRAYS}
    members = [Member("curriculum", cfg.n_labelled, s) for s in cfg.seeds]
    plans = [X.member_schedule(cfg, m) for m in members]
    split, k = X.phase_steps(cfg), cfg.phase1_starts
    first = X.make_model(cfg, list(cfg.seeds) * k, "unified", [r for r in range(k) for _ in cfg.seeds])
    rows = slice(0, split)
    order = plans * k
    per = train_loop(candidate, 1, first, pool, torch.as_tensor(np.stack([i[rows] for i, _ in order], 1)),
                     torch.as_tensor(np.stack([w[rows] for _, w in order], 1)), cfg.lr)
    chosen = per[-X.START_WINDOW:].mean(0).reshape(k, len(members)).argmin(0)
    model = X.make_model(cfg, list(cfg.seeds), "unified")
    model.load_state_dict(X.fork(first.state_dict(), [int(r) * len(members) + m for m, r in enumerate(chosen)],
                                 "unified"))
    rows = slice(split, cfg.n_steps)
    train_loop(candidate, 2, model, pool, torch.as_tensor(np.stack([i[rows] for i, _ in plans], 1)),
               torch.as_tensor(np.stack([w[rows] for _, w in plans], 1)), cfg.phase2_lr)
    summary, _ = X.score(cfg, model, members, lambda m: str(m.seed))
    got = [{k: v["per_seed"][0] for k, v in summary[str(s)][str(cfg.n_labelled)].items()} for s in cfg.seeds]
    return got, chosen.tolist()


def report(rows: list[dict[str, float]]) -> dict[str, float]:
    out = H.report(rows)
    margin = np.minimum(np.array([r["mask_iou"] for r in rows]) - 0.60,
                        np.array([r["grasp_success"] for r in rows]) - 0.50)
    out["near"] = int((margin < 0.05).sum())
    return out


if __name__ == "__main__":
    candidate = sys.argv[1]
    if candidate not in CANDIDATES:
        raise SystemExit(f"candidate must be one of {CANDIDATES}")
    bases = tuple(int(a) for a in sys.argv[2:])
    rows: list = []
    with one_cpu_thread("cpu"):
        for base in bases:
            start = time.perf_counter()
            got, chosen = models(candidate, base)
            rows += got
            print(json.dumps({"base": base, "candidate": candidate, "seconds": round(time.perf_counter() - start, 1),
                              "chosen_start": chosen, "models": got, "so_far": report(rows)}), flush=True)
    print(json.dumps({"candidate": candidate, "bases": list(bases), **report(rows)}), flush=True)
