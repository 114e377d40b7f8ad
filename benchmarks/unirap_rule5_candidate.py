"""Issue 41, tenth pass (``benchmarks/unirap_rule5.md``): the two candidates' tuning harness.

The eighth pass's harness (``unirap_steps_candidate.py``: curriculum models at 512 labels, member seeds 0-9, the book
preset at 400 steps) with one change:

* ``C1``: phase 1 from two initialisations per member (restart 0: the book's weights; restart 1: weights from
  ``SeedSequence([base, seed, 31, 1])``), the same batches; the restart with the lower mean training loss over
  phase 1's last 20 steps goes on to phase 2;
* ``C2``: phase 2's learning rate decays linearly to 0 (not to 20 % of its peak).

Prints one JSON line per base seed and stops once 2 models fail (the rule cannot pass then).

Usage: ``PYTHONPATH=src python benchmarks/unirap_rule5_candidate.py {C1,C2} BASE [BASE ...]``.
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
from explorables.unirap.model import UniRAP
from explorables.unirap.scenes import VOCAB
from explorables.unirap.training import MAX_GRAD_NORM, Member, clip_members, losses, targets

WINDOW = 20


def train_loop(model, pool, idx, weights, lr, final=0.2):
    """``training.train`` step for step, with the decay's end ``final`` (0.2 in the book) and per-member losses."""
    opt = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)
    n = idx.shape[0]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: min(1.0, (t + 1) / 20) * (1 - (1 - final) * t / n))
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


def restart_seed(base: int, seed: int, restart: int) -> int:
    return X.weight_seed(base, seed) if restart == 0 else \
        int(np.random.SeedSequence([base, seed, 31, restart]).generate_state(1)[0])


def models(candidate: str, base: int) -> tuple[list[dict[str, float]], list[int]]:
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base, seeds=H.MEMBER_SEEDS).validated()
    parsing, pool_data, _ = X.datasets(cfg)
    pool = {k: torch.as_tensor(np.concatenate([parsing[k], pool_data[k]])) for k in X.ARRAYS}
    members = [Member("curriculum", cfg.n_labelled, s) for s in cfg.seeds]
    plans = [X.member_schedule(cfg, m) for m in members]
    split = X.phase_steps(cfg)
    restarts = (0, 1) if candidate == "C1" else (0,)
    arch = dict(image_size=cfg.image_size, width=cfg.width, d_model=cfg.d_model, n_layers=cfg.n_layers,
                n_heads=cfg.n_heads, n_words=len(VOCAB))
    first = UniRAP([restart_seed(base, s, r) for r in restarts for s in cfg.seeds], **arch)
    rows = slice(0, split)
    order = [p for _ in restarts for p in plans]
    idx = torch.as_tensor(np.stack([i[rows] for i, _ in order], 1))
    weights = torch.as_tensor(np.stack([w[rows] for _, w in order], 1))
    per = train_loop(first, pool, idx, weights, cfg.lr)
    late = per[-WINDOW:].mean(0).reshape(len(restarts), len(members))
    chosen = late.argmin(0)
    model = X.make_model(cfg, list(cfg.seeds), "unified")
    model.load_state_dict(X.fork(first.state_dict(), [int(r) * len(members) + m for m, r in enumerate(chosen)],
                                 "unified"))
    rows = slice(split, cfg.n_steps)
    idx = torch.as_tensor(np.stack([i[rows] for i, _ in plans], 1))
    weights = torch.as_tensor(np.stack([w[rows] for _, w in plans], 1))
    train_loop(model, pool, idx, weights, cfg.phase2_lr, final=0.0 if candidate == "C2" else 0.2)
    summary, _ = X.score(cfg, model, members, lambda m: str(m.seed))
    got = [{k: v["per_seed"][0] for k, v in summary[str(s)][str(cfg.n_labelled)].items()} for s in cfg.seeds]
    return got, chosen.tolist()


if __name__ == "__main__":
    candidate = sys.argv[1]
    if candidate not in ("C1", "C2", "C0"):
        raise SystemExit("candidate must be C1, C2 (or C0: the unchanged setup through this loop)")
    bases = tuple(int(a) for a in sys.argv[2:])
    rows: list = []
    with one_cpu_thread("cpu"):
        for base in bases:
            start = time.perf_counter()
            got, chosen = models(candidate, base)
            rows += got
            so_far = H.report(rows)
            print(json.dumps({"base": base, "candidate": candidate, "seconds": round(time.perf_counter() - start, 1),
                              "chosen_restart": chosen, "models": got, "so_far": so_far}), flush=True)
            if so_far["failing"] >= 2:
                print(json.dumps({"stopped": "2 failing: the rule cannot pass"}), flush=True)
                break
    print(json.dumps({"candidate": candidate, "bases": list(bases[: len(rows) // 10]), **H.report(rows)}), flush=True)
