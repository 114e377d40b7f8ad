"""rpkd: shared fresh augmentation under the standard protocol, candidates of ``rpkd_consistent_aug_rule.md``.

    PYTHONPATH=src python benchmarks/rpkd_consistent_aug.py 112 113 114   # appends to rpkd_consistent_aug.jsonl
    PYTHONPATH=src python benchmarks/rpkd_consistent_aug.py -1            # a quick test on the smoke preset
    PYTHONPATH=src python benchmarks/rpkd_consistent_aug.py --summary     # the table for rpkd_consistent_aug.md
    PYTHONPATH=src python benchmarks/rpkd_consistent_aug.py --round2 115 116 117   # rpkd_consistent_aug2_rule.md

Per seed the three teachers are the package's ``teacher_part`` (trained once, shared by every candidate); every
candidate runs the package's ``student_part`` under ``standard_protocol`` on one thread, and its rows are the
package's own ``headroom_gate``, ``distill_gate`` and ``learns_check``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from explorables.core.threads import one_cpu_thread
from explorables.core.verdicts import interval
from explorables.rpkd.claims import distill_gate, headroom_gate, learns_check, pooled, teacher_edges
from explorables.rpkd.experiment import RPKDConfig, _results, standard_protocol, student_part, teacher_part

HERE = Path(__file__).parent
OUT = HERE / "rpkd_consistent_aug.jsonl"
#: per round, name -> (standard_augment, standard_steps) ("0": the reference, today's preset)
ROUNDS = {1: {"0": (0, 0), "A": (1, 0), "B": (2, 0)},  # rpkd_consistent_aug_rule.md
          2: {"0": (0, 0), "C": (2, 250), "D": (1, 250)}}  # rpkd_consistent_aug2_rule.md
CPU_LIMIT = 16.0  # kernel CPU seconds a candidate's standard parts may cost above the reference's


def one_seed(seed: int, round_: int = 1) -> list[dict]:
    scale = "smoke" if seed < 0 else "book"
    base = RPKDConfig.preset(scale, seed=abs(seed), device="cpu").validated()
    rows = []
    with one_cpu_thread("cpu"):
        t0 = time.process_time()
        shared = {n: teacher_part(base, n) for n in base.class_grid}
        teacher_cpu = time.process_time() - t0
        for name, (a, steps) in ROUNDS[round_].items():
            cfg = standard_protocol(RPKDConfig.preset(scale, seed=abs(seed), device="cpu", standard_augment=a,
                                                      standard_steps=steps))
            cpu0, wall0 = time.process_time(), time.perf_counter()
            parts = {n: student_part(cfg, n, shared[n]) for n in cfg.class_grid}
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            summary = {f"C={n}": s for n, (s, _) in parts.items()}
            res = _results(cfg, summary, {f"C={n}": c for n, (_, c) in parts.items()})
            gates = {"distill": distill_gate(res), "headroom": headroom_gate(res), "learns": learns_check([res])}
            best = max(("kd", "ofa"), key=lambda arm: float(pooled(res, arm, "ce").mean()))
            iv = interval(pooled(res, best, "ce"))
            rows.append({
                "round": round_, "seed": seed, "candidate": name, "standard_augment": a,
                "n_student_steps": cfg.n_student_steps, "cpu_s": round(cpu, 1),
                "wall_s": round(wall, 1), "teacher_cpu_s": round(teacher_cpu, 1),
                "words": {k: g.verdict.split(":")[0] for k, g in gates.items()},
                "measured": {k: g.measured for k, g in gates.items()},
                "best": best, "gate_low": float(iv.low), "gate_mean": float(iv.mean),
                "gains": {arm: {n: float(np.mean(res.summary[f"C={n}"]["accuracy"][arm]["per_seed"])
                                         - np.mean(res.summary[f"C={n}"]["accuracy"]["ce"]["per_seed"]))
                                for n in cfg.class_grid} for arm in ("kd", "ofa", "rpkd")},
                "accuracy": {arm: {n: res.summary[f"C={n}"]["accuracy"][arm]["mean"] for n in cfg.class_grid}
                             for arm in cfg.arms},
                "edges_min": {n: float(v.min()) for n, v in teacher_edges(res).items()},
            })
            print(seed, name, rows[-1]["cpu_s"], rows[-1]["words"], round(iv.low, 3), flush=True)
    return rows


def summary(round_: int = 1) -> None:
    rows = [r for r in map(json.loads, OUT.read_text().splitlines()) if r.get("round", 1) == round_]
    ref = {r["seed"]: r["cpu_s"] for r in rows if r["candidate"] == "0"}
    print("| candidate | seed | distill (standard) | gate interval low | headroom (standard) | learns | "
          "CPU s (standard parts) | above reference |\n|---|---|---|---|---|---|---|---|")
    for r in rows:
        w = r["words"]
        name = f"{r['candidate']} (a = {r['standard_augment']}, {r.get('n_student_steps', 150)} steps)"
        print(f"| {name} | {r['seed']} | {w['distill']} | {r['gate_low']:+.3f} "
              f"| {w['headroom']} | {w['learns']} | {r['cpu_s']} | {r['cpu_s'] - ref[r['seed']]:+.1f} |")
    for r in rows:
        print(f"\n{r['candidate']} (a = {r['standard_augment']}), seed {r['seed']}:")
        for k, text in r["measured"].items():
            print(f"- {k}: {r['words'][k]} ({text})")
        print("- gains over CE per C: " + "; ".join(
            f"{arm.upper()} " + ", ".join(f"C = {n}: {g:+.3f}" for n, g in v.items()) for arm, v in r["gains"].items()))


def main(args: list[str]) -> None:
    round_ = 2 if "--round2" in args else 1
    if "--summary" in args:
        summary(round_)
        return
    for seed in [int(a) for a in args if not a.startswith("--")]:
        for row in one_seed(seed, round_):
            if seed >= 0:
                with OUT.open("a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
