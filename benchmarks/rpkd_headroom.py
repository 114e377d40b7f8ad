"""rpkd: the headroom gate's margin (teacher minus a CE student) for the candidates of
``benchmarks/rpkd_headroom_rule.md``, on tuning seeds only.

    PYTHONPATH=src python benchmarks/rpkd_headroom.py [CANDIDATE ...]     # appends to rpkd_headroom.jsonl
    PYTHONPATH=src python benchmarks/rpkd_headroom.py --summary            # writes rpkd_headroom.md

The teacher, the split and the labelled subsets are those of ``class_count_part`` (the package's own
functions); the students are the CE arm only (for speed), under both protocols.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from explorables.rpkd.data import make_split, student_labels, super_labels
from explorables.rpkd.experiment import RPKDConfig, load_task
from explorables.rpkd.losses import RandomPrototypes
from explorables.rpkd.training import accuracy, teacher_targets, train_students, train_teachers

HERE = Path(__file__).parent
OUT = HERE / "rpkd_headroom.jsonl"
SEEDS = (101, 102, 103, 104)
THRESHOLD = 0.05  # the gate's margin (claims.HEADROOM), restated so the rule's file is self-contained
CANDIDATES = {
    "A": dict(teacher_width=16, n_teacher_steps=1000),
    "B": dict(teacher_width=16, n_teacher_steps=1000, student_width=8),
    "C": dict(teacher_width=16, n_teacher_steps=1000, shift=1),
    "D": dict(teacher_width=8, n_teacher_steps=1500, shift=1),
    "E": dict(teacher_width=8, n_teacher_steps=1500, shift=1, student_width=8),
}


def margins(cfg: RPKDConfig) -> dict:
    """Per protocol and C: teacher accuracy, CE accuracy per student seed, dead teacher channels."""
    task = load_task(cfg)
    n = len(task.fine)
    n_train = n - cfg.n_test
    out: dict = {"standard": {}, "few_label": {}, "dead": {}, "teacher": {}}
    for c in cfg.class_grid:
        base = make_split(n, cfg.n_test, n_train, cfg.seed)  # the train/test split does not depend on n_labelled
        x_train, fine_train = task.images[base.train], task.fine[base.train]
        x_test, y_test = task.images[base.test], super_labels(task.fine[base.test], c)
        teacher = train_teachers(x_train[None], super_labels(fine_train, c)[None], c, width=cfg.teacher_width,
                                 n_steps=cfg.n_teacher_steps, batch_size=cfg.batch_size, lr=cfg.lr,
                                 seed=cfg.seed + 31 * c, device="cpu")
        t_acc = float(accuracy(teacher, x_test[None], y_test[None])[0])
        with torch.no_grad():
            features = teacher(x_train[None])[1][0]
        out["dead"][c] = int(((features > 0).float().amax(dim=(0, 2, 3)) == 0).sum())
        out["teacher"][c] = t_acc
        t_logits, t_tokens = teacher_targets(teacher, x_train[None], cfg.grid)
        prototypes = RandomPrototypes(cfg.n_prototypes, cfg.d_prototype, t_tokens.shape[-1], cfg.seed + 7)
        orders = [torch.randperm(len(fine_train), generator=torch.Generator().manual_seed(cfg.seed * 1000 + s))
                  for s in cfg.seeds]
        order = torch.stack(orders)
        n_seeds = len(cfg.seeds)
        for protocol, n_labelled in (("standard", n_train), ("few_label", cfg.n_labelled)):
            labels = torch.stack([student_labels(fine_train[o], n_labelled, c) for o in orders])
            model, _ = train_students(
                cfg.student, ("ce",), x_train[order], labels, t_logits[0][order], t_tokens[0][order], prototypes,
                cfg.weights(), width=cfg.student_width, grid=cfg.grid, n_steps=cfg.n_student_steps,
                batch_size=cfg.batch_size, lr=cfg.lr, temperature=cfg.temperature, tau=cfg.tau, ofa_eps=cfg.ofa_eps,
                seed=cfg.seed + c, device="cpu")
            ce = accuracy(model, x_test[None].expand(n_seeds, *x_test.shape), y_test[None].expand(n_seeds, -1))
            out[protocol][c] = {"ce": ce.tolist(), "margin": (t_acc - ce).tolist()}
    return out


def main(names: list[str]) -> None:
    torch.set_num_threads(1)
    for name in names:
        for seed in SEEDS:
            cfg = dataclasses.replace(RPKDConfig.preset("book"), seed=seed, **CANDIDATES[name]).validated()
            start = time.process_time()
            result = margins(cfg)
            row = {"candidate": name, "settings": CANDIDATES[name], "seed": seed, **result,
                   "cpu_s": round(time.process_time() - start, 1)}
            with OUT.open("a") as f:
                f.write(json.dumps(row) + "\n")
            worst = min(min(v["margin"]) for p in ("standard", "few_label") for v in result[p].values())
            print(f"{name} seed {seed}: worst margin {worst:+.3f}; "
                  + "; ".join(f"{p} " + " ".join(f"C={c} {min(v['margin']):+.3f}" for c, v in result[p].items())
                              for p in ("standard", "few_label")), flush=True)


def summary() -> None:
    rows = [json.loads(line) for line in OUT.read_text().splitlines()]
    lines = ["# rpkd: headroom candidates (rule: `rpkd_headroom_rule.md`)", "",
             "Worst margin (teacher − CE, min over the 3 student seeds) per tuning seed, class count and protocol; "
             f"the gate needs ≥ {THRESHOLD:.2f} everywhere. Teacher test accuracy and dead last-layer channels "
             "per C (first seed). CPU seconds: teachers and CE students of one seed (measured under load).", "",
             "| candidate | settings | protocol | C = 10 | C = 5 | C = 2 | worst | passes |",
             "|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["candidate"] for r in rows):
        mine = [r for r in rows if r["candidate"] == name]
        worst_all = min(min(v["margin"]) for r in mine for p in ("standard", "few_label") for v in r[p].values())
        for p in ("standard", "few_label"):
            per_c = {c: min(min(r[p][c]["margin"]) for r in mine) for c in mine[0][p]}
            worst = min(per_c.values())
            lines.append(f"| {name} | {json.dumps(mine[0]['settings'])} | {p} | "
                         + " | ".join(f"{v:+.3f}" for v in per_c.values())
                         + f" | {worst:+.3f} | {'yes' if worst_all >= THRESHOLD else 'no'} |")
    lines += ["", "| candidate | seed | teacher accuracy (C = 10, 5, 2) | dead channels | CE, standard (mean per C) "
              "| CPU s |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['candidate']} | {r['seed']} | " + ", ".join(f"{v:.3f}" for v in r["teacher"].values())
                     + " | " + ", ".join(str(v) for v in r["dead"].values()) + " | "
                     + ", ".join(f"{np.mean(v['ce']):.3f}" for v in r["standard"].values()) + f" | {r['cpu_s']} |")
    (HERE / "rpkd_headroom.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--summary"]:
        summary()
    else:
        main(sys.argv[1:] or list(CANDIDATES))
