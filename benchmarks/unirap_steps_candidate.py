"""Issue 41, eighth pass: does more training per model make the competence gate's models reliable?

Tuning base seeds 100-107 only (the study's are 0-4; 7 and 8 were run as unseen seeds), member seeds 0-9: 80
curriculum models at the book preset's largest label budget (512), each trained as the gate's models are
(phase 1, the curriculum's stages 1-2 on parsing scenes, then stage 3 from those weights; the book preset's every
other setting), only without the other regimes in the ensembles (members are independent), and scored on the base
seed's 300 test scenes. Prints, per candidate ``n_steps``, the count of failing models (part-mask IoU below 0.60
or grasp success below 0.50, the gate's bars), the 10th percentile of the margin over the bars (the smaller of
IoU - 0.60 and grasp - 0.50) and the mean IoU and grasp.

The decision rule was written into the page's criteria box and committed before this script first ran.
Results (one JSON line per base seed, then the total): ``benchmarks/unirap_steps_480.jsonl`` (the candidate: 0 failing
of 80, kept) and ``benchmarks/unirap_steps_400.jsonl`` (the unchanged setup, run afterwards as a check of this
script: 4 failing, the seventh pass's record exactly).

Usage: ``PYTHONPATH=src python benchmarks/unirap_steps_candidate.py N_STEPS [BASE_SEEDS ...]``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

import numpy as np
import torch

from explorables.core.device import resolve_device
from explorables.core.threads import one_cpu_thread
from explorables.unirap import experiment as X
from explorables.unirap.claims import COMPETENCE
from explorables.unirap.training import Member, train

MEMBER_SEEDS = tuple(range(10))
TUNING_BASE_SEEDS = tuple(range(100, 108))


def models(n_steps: int, base: int) -> list[dict[str, float]]:
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base, seeds=MEMBER_SEEDS, n_steps=n_steps).validated()
    device = resolve_device(cfg.device)
    parsing, pool_data, _ = X.datasets(cfg)
    pool = {k: torch.as_tensor(np.concatenate([parsing[k], pool_data[k]])) for k in X.ARRAYS}
    members = [Member("curriculum", cfg.n_labelled, s) for s in cfg.seeds]
    plans = [X.member_schedule(cfg, m) for m in members]
    split = X.phase_steps(cfg)
    model = X.make_model(cfg, list(cfg.seeds), "unified")
    for rows, lr in ((slice(0, split), cfg.lr), (slice(split, cfg.n_steps), cfg.phase2_lr)):
        idx = torch.as_tensor(np.stack([i[rows] for i, _ in plans], 1))
        weights = torch.as_tensor(np.stack([w[rows] for _, w in plans], 1))
        train(model, pool, idx, weights, lr=lr)
    summary, _ = X.score(cfg, model, members, lambda m: str(m.seed))
    del device
    return [{k: v["per_seed"][0] for k, v in summary[str(s)][str(cfg.n_labelled)].items()} for s in cfg.seeds]


def report(rows: list[dict[str, float]]) -> dict[str, float]:
    iou = np.array([r["mask_iou"] for r in rows])
    grasp = np.array([r["grasp_success"] for r in rows])
    margin = np.minimum(iou - COMPETENCE["mask_iou"], grasp - COMPETENCE["grasp_success"])
    return {"models": len(rows), "failing": int((margin < 0).sum()), "margin_p10": float(np.percentile(margin, 10)),
            "mean_iou": float(iou.mean()), "mean_grasp": float(grasp.mean())}


if __name__ == "__main__":
    n_steps = int(sys.argv[1])
    bases = tuple(int(a) for a in sys.argv[2:]) or TUNING_BASE_SEEDS
    rows: list[dict[str, float]] = []
    with one_cpu_thread("cpu"):
        for base in bases:
            start = time.perf_counter()
            got = models(n_steps, base)
            rows += got
            print(json.dumps({"base": base, "seconds": round(time.perf_counter() - start, 1), "models": got,
                              "so_far": report(rows)}), flush=True)
    print(json.dumps({"n_steps": n_steps, "bases": list(bases), **report(rows)}), flush=True)
