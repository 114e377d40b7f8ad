"""rpkd: fair tuning of KD's (alpha, T) and OFA's (weight, epsilon) under the standard protocol.

The candidates, criteria and decision rule: ``rpkd_baseline_tuning_rule.md`` (committed before any run).

    PYTHONPATH=src python benchmarks/rpkd_baseline_tuning.py 118 119 120 121   # appends to rpkd_baseline_tuning.jsonl
    PYTHONPATH=src python benchmarks/rpkd_baseline_tuning.py -1                # a quick test on the smoke preset
    PYTHONPATH=src python benchmarks/rpkd_baseline_tuning.py --summary         # the tables and the decision

Per seed the three teachers are the package's ``teacher_part`` (trained once, shared by every run); each run is the
package's ``student_part`` under ``standard_protocol`` with arms CE, KD, OFA and one row of the grid. Every member
of the ensemble is its own network, so KD setting i and OFA setting j combine as if they ran together (CE is the
same in every run: asserted). The decision uses the package's ``distill_gate`` and ``learns_check`` on that
composed run.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from explorables.core.threads import one_cpu_thread
from explorables.core.verdicts import interval
from explorables.rpkd.claims import distill_gate, headroom_gate, learns_check, pooled
from explorables.rpkd.experiment import RPKDConfig, _results, standard_protocol, student_part, teacher_part

HERE = Path(__file__).parent
OUT = HERE / "rpkd_baseline_tuning.jsonl"
#: run -> ((kd_weight, temperature), (ofa_weight, ofa_eps)); run 1 is today's book preset
GRID = {
    1: ((1.0, 4.0), (1.0, 1.5)),
    2: ((1.0, 1.0), (1.0, 1.0)),
    3: ((1.0, 2.0), (0.5, 1.0)),
    4: ((1.0, 8.0), (0.5, 1.5)),
    5: ((4.0, 1.0), (2.0, 1.0)),
    6: ((4.0, 2.0), (2.0, 1.5)),
    7: ((4.0, 4.0), (4.0, 1.0)),
    8: ((4.0, 8.0), (4.0, 1.5)),
}
REFERENCE = GRID[1]
TIE = 0.005
ARMS3 = ("ce", "kd", "ofa")


def one_seed(seed: int) -> list[dict]:
    scale = "smoke" if seed < 0 else "book"
    base = RPKDConfig.preset(scale, seed=abs(seed), device="cpu").validated()
    std = dataclasses.replace(standard_protocol(base), arms=ARMS3)
    rows = []
    with one_cpu_thread("cpu"):
        t0 = time.process_time()
        shared = {n: teacher_part(base, n) for n in base.class_grid}
        teacher_cpu = time.process_time() - t0
        for run, ((alpha, temp), (w, eps)) in GRID.items():
            cfg = dataclasses.replace(std, kd_weight=alpha, temperature=temp, ofa_weight=w, ofa_eps=eps)
            cpu0 = time.process_time()
            parts = {n: student_part(cfg, n, shared[n]) for n in cfg.class_grid}
            rows.append(
                {
                    "seed": seed,
                    "run": run,
                    "kd": [alpha, temp],
                    "ofa": [w, eps],
                    "cpu_s": round(time.process_time() - cpu0, 1),
                    "teacher_cpu_s": round(teacher_cpu, 1),
                    "teacher_accuracy": {n: s["teacher_accuracy"] for n, (s, _) in parts.items()},
                    "per_seed": {
                        arm: {n: s["accuracy"][arm]["per_seed"] for n, (s, _) in parts.items()} for arm in ARMS3
                    },
                }
            )
            print(seed, run, rows[-1]["cpu_s"], time.strftime("%H:%M:%S"), flush=True)
    return rows


def composed(rows: list[dict], kd_run: int, ofa_run: int):
    """The standard run of one seed with CE, KD of ``kd_run`` and OFA of ``ofa_run`` (a package Results)."""
    by_run = {r["run"]: r for r in rows}
    seed = rows[0]["seed"]
    cfg = dataclasses.replace(
        standard_protocol(RPKDConfig.preset("smoke" if seed < 0 else "book", seed=abs(seed), device="cpu")), arms=ARMS3
    )
    summary = {}
    for n in cfg.class_grid:
        key = str(n) if str(n) in by_run[1]["per_seed"]["ce"] else n
        acc = {}
        for arm, run in (("ce", 1), ("kd", kd_run), ("ofa", ofa_run)):
            v = np.asarray(by_run[run]["per_seed"][arm][key], dtype=float)
            acc[arm] = {"per_seed": v.tolist(), "mean": float(v.mean()), "sd": float(v.std(ddof=1))}
        summary[f"C={n}"] = {"n_classes": n, "teacher_accuracy": by_run[1]["teacher_accuracy"][key], "accuracy": acc}
    return _results(cfg, summary, {})


def low_bound(rows: list[dict], arm: str, run: int) -> tuple[float, float]:
    res = composed(rows, run if arm == "kd" else 1, run if arm == "ofa" else 1)
    iv = interval(pooled(res, arm, "ce"))
    return float(iv.low), float(iv.mean)


def load() -> dict[int, list[dict]]:
    seeds: dict[int, list[dict]] = {}
    for r in map(json.loads, OUT.read_text().splitlines()):
        seeds.setdefault(r["seed"], []).append(r)
    for rows in seeds.values():  # CE is the same network in every run: the runs combine
        ce = [json.dumps(r["per_seed"]["ce"], sort_keys=True) for r in rows]
        assert len(set(ce)) == 1, "CE differs across runs"
    return seeds


def choose(arm: str, scores: dict[int, float]) -> int:
    best = max(scores.values())
    tied = [run for run, s in scores.items() if s >= best - TIE]
    if 1 in tied:
        return 1
    i = 0 if arm == "kd" else 1

    def key(run: int):
        weight, other = GRID[run][i]
        return (weight, abs(np.log2(other / 4.0)) if arm == "kd" else (0 if other == 1.5 else 1))

    return min(tied, key=key)


def summary() -> None:
    seeds = load()
    print(f"seeds: {sorted(seeds)}\n")
    scores = {}
    for arm in ("kd", "ofa"):
        i = 0 if arm == "kd" else 1
        print(
            f"| {arm.upper()} setting | "
            + " | ".join(f"seed {s}: mean [low]" for s in sorted(seeds))
            + " | score (mean of low) |\n|---" * 1
            + "|---" * (len(seeds) + 1)
            + "|"
        )
        scores[arm] = {}
        for run in GRID:
            cells, lows = [], []
            for s in sorted(seeds):
                low, mean = low_bound(seeds[s], arm, run)
                lows.append(low)
                cells.append(f"{mean:+.3f} [{low:+.3f}]")
            scores[arm][run] = float(np.mean(lows))
            print(f"| run {run}: {GRID[run][i]} | " + " | ".join(cells) + f" | {scores[arm][run]:+.3f} |")
        print()
    kd_run, ofa_run = choose("kd", scores["kd"]), choose("ofa", scores["ofa"])
    print(f"tuned: KD run {kd_run} {GRID[kd_run][0]}, OFA run {ofa_run} {GRID[ofa_run][1]}\n")
    ok = True
    for s in sorted(seeds):
        res = composed(seeds[s], kd_run, ofa_run)
        gates = {"distill": distill_gate(res), "learns": learns_check([res]), "headroom": headroom_gate(res)}
        ok &= all(gates[k].verdict.startswith("pass") for k in ("distill", "learns"))
        for k, g in gates.items():
            print(f"seed {s} {k}: {g.verdict.split(':')[0]} ({g.measured})")
        for arm in ("kd", "ofa"):
            gains = {
                n: float(
                    np.mean(res.summary[f"C={n}"]["accuracy"][arm]["per_seed"])
                    - np.mean(res.summary[f"C={n}"]["accuracy"]["ce"]["per_seed"])
                )
                for n in (10, 5, 2)
                if f"C={n}" in res.summary
            }
            print(f"seed {s} {arm.upper()} − CE per C: " + ", ".join(f"C = {n}: {g:+.3f}" for n, g in gains.items()))
    print(
        f"\ndecision: {'ADOPT' if ok and (kd_run, ofa_run) != (1, 1) else 'KEEP'} (every criterion on every seed: {ok})"
    )


def main(args: list[str]) -> None:
    if "--summary" in args:
        summary()
        return
    for seed in [int(a) for a in args if not a.startswith("--")]:
        rows = one_seed(seed)
        if seed >= 0:
            with OUT.open("a") as f:
                for row in rows:
                    f.write(json.dumps(row) + "\n")
        else:
            print(composed(rows, 2, 3).summary["C=2"]["accuracy"]["kd"])


if __name__ == "__main__":
    main(sys.argv[1:])
