"""Issue 41, tenth pass: what does a failing curriculum model look like? (diagnosis only; nothing is chosen here)

The eighth pass's harness (``unirap_steps_candidate.py``: curriculum models at the book preset's 512 labels, member
seeds 0-9, phase 1 then phase 2 from its weights, every other setting the book preset's) with the training loop
copied so that it can look inside: per member and step the three weighted losses, and every ``EVERY`` steps the
three metrics on (a) the base seed's 300 test scenes (looked at, never selected on), (b) 150 fresh validation scenes
drawn from the unused stream ``4 * base`` (an instrument here), (c) 150 of the member's own labelled training
scenes (the fit), and (d) the test scenes with the pose head fed the true part mask (is the grasp short because the
mask is?). The final step's test metrics must equal the harness's record (checked by the caller against the jsonl).

Usage: ``PYTHONPATH=src python benchmarks/unirap_diagnosis.py OUT.jsonl BASE [BASE ...]``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace

import numpy as np
import torch

from explorables.core.threads import one_cpu_thread
from explorables.unirap import experiment as X
from explorables.unirap import metrics
from explorables.unirap.model import decode
from explorables.unirap.scenes import JAW, make_dataset
from explorables.unirap.training import MAX_GRAD_NORM, Member, clip_members, losses, predict, targets

MEMBER_SEEDS = tuple(range(int(os.environ.get("UNIRAP_MEMBERS", "10"))))
EVERY = 20


def scores(model, data, n, pose_mask=None):
    images, tokens = torch.as_tensor(data["images"][:n]), torch.as_tensor(data["tokens"][:n])
    pm = None if pose_mask is None else torch.as_tensor(pose_mask[:n])
    pred = decode(predict(model, images, tokens, pose_mask=pm), model.image_size)
    sub = {k: v[:n] for k, v in data.items()}
    return [metrics.evaluate({k: v[i] for k, v in pred.items()}, sub, JAW * model.image_size / 32)
            for i in range(model.n_members)]


def train_logged(model, pool, idx, weights, lr, hook, offset):
    """``training.train`` step for step (same operations, same order), plus per-member losses and a hook."""
    opt = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)
    n_steps = idx.shape[0]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: min(1.0, (t + 1) / 20) * (1 - 0.8 * t / n_steps))
    tgt = targets(pool, model.image_size)
    comp = np.zeros((n_steps, model.n_members, 3), np.float32)
    gnorm = np.zeros((n_steps, model.n_members), np.float32)
    model.train()
    for t in range(n_steps):
        batch = idx[t]
        out = model(pool["images"][batch], pool["tokens"][batch])
        per = losses.__wrapped__(out, {k: v[batch] for k, v in tgt.items()})
        w = weights[t]
        loss = ((per * w).sum(-1)).mean(-1).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm[t] = clip_members(model, MAX_GRAD_NORM).detach().numpy()
        opt.step()
        sched.step()
        comp[t] = (per * w).mean(1).detach().numpy()
        if (t + 1) % EVERY == 0 or t + 1 == n_steps:
            model.eval()
            hook(offset + t + 1)
            model.train()
    model.eval()
    return comp, gnorm


def run(base: int) -> dict:
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base, seeds=MEMBER_SEEDS).validated()
    parsing, pool_data, test = X.datasets(cfg)
    val = make_dataset(150, 4 * base, cfg.image_size, "instruction", cfg.max_clutter, cfg.max_tools)
    pool = {k: torch.as_tensor(np.concatenate([parsing[k], pool_data[k]])) for k in X.ARRAYS}
    members = [Member("curriculum", cfg.n_labelled, s) for s in cfg.seeds]
    plans = [X.member_schedule(cfg, m) for m in members]
    split = X.phase_steps(cfg)
    model = X.make_model(cfg, list(cfg.seeds), "unified")
    log: dict = {"base": base, "steps": [], "test": [], "val": [], "fit": [], "true_mask": []}
    # the fit: the first 150 labelled scenes of member 0's permutation (every member at 512 sees the whole pool)
    fit = {k: v[:150] for k, v in pool_data.items()}

    def hook(step):
        log["steps"].append(step)
        log["test"].append(scores(model, test, len(test["images"])))
        log["val"].append(scores(model, val, 150))
        log["fit"].append(scores(model, fit, 150))
        log["true_mask"].append(scores(model, test, 150, pose_mask=test["masks"].astype(np.float32)))

    comps, norms = [], []
    for i, (rows, lr) in enumerate(((slice(0, split), cfg.lr), (slice(split, cfg.n_steps), cfg.phase2_lr))):
        idx = torch.as_tensor(np.stack([p[rows] for p, _ in plans], 1))
        weights = torch.as_tensor(np.stack([w[rows] for _, w in plans], 1))
        c, g = train_logged(model, pool, idx, weights, lr, hook, 0 if i == 0 else split)
        comps.append(c)
        norms.append(g)
    comp = np.concatenate(comps)
    gn = np.concatenate(norms)
    # per member: the three weighted losses averaged over 20-step windows; the gradient norm before clipping
    log["loss_windows"] = comp.reshape(-1, 20, len(members), 3).mean(1).round(4).tolist()
    log["gnorm_windows"] = gn.reshape(-1, 20, len(members)).mean(1).round(3).tolist()
    return log


if __name__ == "__main__":
    out = sys.argv[1]
    with one_cpu_thread("cpu"), open(out, "a") as f:
        for base in (int(a) for a in sys.argv[2:]):
            start = time.perf_counter()
            log = run(base)
            log["seconds"] = round(time.perf_counter() - start, 1)
            f.write(json.dumps(log) + "\n")
            f.flush()
            print(base, log["seconds"], flush=True)
