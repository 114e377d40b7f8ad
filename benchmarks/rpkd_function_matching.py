"""rpkd: shared fresh views with KD at T = 1 under the standard protocol (round 4): R (reference), V2, V1.

The candidates, criteria and decision rule: ``rpkd_function_matching_rule.md`` (committed before any run).

    PYTHONPATH=src python benchmarks/rpkd_function_matching.py 130 131 132   # appends to rpkd_function_matching.jsonl
    PYTHONPATH=src python benchmarks/rpkd_function_matching.py -1            # a quick test on the smoke preset
    PYTHONPATH=src python benchmarks/rpkd_function_matching.py --summary

Per seed: the package's ``teacher_part`` (no probe) once per class count, shared by every candidate (the teacher
does not depend on the ``standard_*`` fields); then each candidate's ``students`` under ``standard_protocol``
(the page's four standard arms, five student seeds); gates from the package.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from explorables.core.threads import one_cpu_thread
from explorables.rpkd.claims import distill_gate, headroom_gate, learns_check, per_seed
from explorables.rpkd.experiment import RPKDConfig, _results, standard_protocol, students, teacher_part

HERE = Path(__file__).parent
OUT = HERE / "rpkd_function_matching.jsonl"
CANDIDATES = {
    "R": {"standard_augment": 0, "standard_temperature": 0.0},
    "V2": {"standard_augment": 2, "standard_temperature": 1.0},
    "V1": {"standard_augment": 1, "standard_temperature": 1.0},
}


def one_seed(seed: int) -> list[dict]:
    scale = "smoke" if seed < 0 else "book"
    base = RPKDConfig.preset(scale, seed=abs(seed), device="cpu").validated()
    rows = []
    with one_cpu_thread("cpu"):
        cpu0 = time.process_time()
        shared = {n: teacher_part(base, n, probe=False) for n in base.class_grid}
        teacher_cpu = time.process_time() - cpu0
        for name, fields in CANDIDATES.items():
            cfg = RPKDConfig.preset(scale, seed=abs(seed), device="cpu", **fields).validated()
            std_cfg = standard_protocol(cfg)
            cpu0, wall0 = time.process_time(), time.perf_counter()
            summary = {}
            for n in cfg.class_grid:
                acc, _ = students(std_cfg, n, shared[n])
                summary[f"C={n}"] = {"n_classes": n, "teacher_accuracy": shared[n]["teacher_accuracy"], "accuracy": acc}
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            std = _results(std_cfg, summary, {})
            gates = [distill_gate(std), headroom_gate(std), learns_check([std])]
            row = {
                "seed": seed,
                "candidate": name,
                "fields": fields,
                "cpu_s": round(cpu, 2),
                "wall_s": round(wall, 1),
                "teacher_cpu_s": round(teacher_cpu, 1),
                "rows": [
                    {"kind": g.kind, "name": g.name, "claim": g.claim, "verdict": g.verdict, "measured": g.measured}
                    for g in gates
                ],
                "accuracy_standard": {
                    n: {a: per_seed(std, a, n).tolist() for a in std_cfg.arms} for n in cfg.class_grid
                },
                "teacher": {n: shared[n]["teacher_accuracy"] for n in cfg.class_grid},
            }
            print(
                json.dumps({k: row[k] for k in ("seed", "candidate", "cpu_s", "wall_s")}),
                time.strftime("%H:%M:%S"),
                flush=True,
            )
            for g in gates:
                print("  ", g.name or g.claim[:40], g.verdict.split(":")[0], "|", g.measured, flush=True)
            if seed >= 0:
                with OUT.open("a") as f:
                    f.write(json.dumps(row) + "\n")
            rows.append(row)
    return rows


def _gate(row: dict, key: str) -> dict:
    for r in row["rows"]:
        if r["name"] == key or (key == "learns" and r["claim"].startswith("every student arm learns")):
            return r
    raise KeyError(key)


def summary() -> None:
    rows = [json.loads(line) for line in OUT.open()]
    ref_cpu = {r["seed"]: r["cpu_s"] for r in rows if r["candidate"] == "R"}
    keys = ("distill_standard", "headroom_standard", "learns")
    print("| candidate | seed | " + " | ".join(keys) + " | CPU s (students) | above R |")
    print("|---|---|" + "---|" * (len(keys) + 2))
    for r in rows:
        words = [_gate(r, k)["verdict"].split(":")[0] for k in keys]
        extra = r["cpu_s"] - ref_cpu[r["seed"]] if r["seed"] in ref_cpu else float("nan")
        print(f"| {r['candidate']} | {r['seed']} | " + " | ".join(words) + f" | {r['cpu_s']:.1f} | {extra:+.1f} |")
    print()
    for r in rows:
        print(f"- {r['candidate']} seed {r['seed']} distill_standard: {_gate(r, 'distill_standard')['measured']}")
    print()
    print("| candidate | seed | C | teacher | CE | KD | OFA | RPKD |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        for n, acc in r["accuracy_standard"].items():
            cells = " | ".join(f"{np.mean(acc[a]):.3f}" for a in ("ce", "kd", "ofa", "rpkd"))
            print(f"| {r['candidate']} | {r['seed']} | {n} | {r['teacher'][n]:.3f} | {cells} |")


def main(args: list[str]) -> None:
    if "--summary" in args:
        summary()
        return
    for seed in map(int, args):
        assert seed < 0 or seed >= 130, "tuning seeds >= 130 only (never base seeds 0-4)"
        one_seed(seed)


if __name__ == "__main__":
    main(sys.argv[1:])
