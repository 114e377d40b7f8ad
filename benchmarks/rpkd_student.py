"""rpkd: the students' training steps, candidates of ``benchmarks/rpkd_student_rule.md``, on tuning seeds only.

    PYTHONPATH=src python benchmarks/rpkd_student.py            # appends to rpkd_student.jsonl
    PYTHONPATH=src python benchmarks/rpkd_student.py --summary  # prints the table for rpkd_student.md

Every candidate runs the page's own code (``teacher_part`` once per class count, shared by every candidate
and both protocols as in ``run_protocols``; ``student_part`` per protocol), all arms of the book preset, and
is judged by the package's own ``claims`` (the headroom gates and the "every arm learns" check). CPU time is
``time.process_time`` of each part on one thread; a candidate's kernel CPU is its three teachers plus its six
student parts (what ``run_protocols(workers=1)`` would spend).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from explorables.core.threads import one_cpu_thread
from explorables.rpkd.claims import claims, gain
from explorables.rpkd.experiment import RPKDConfig, _results, standard_protocol, student_part, teacher_part

HERE = Path(__file__).parent
OUT = HERE / "rpkd_student.jsonl"
SEEDS = (101, 102, 103, 104)
CANDIDATES = {"150": 150, "300": 300, "600": 600}  # n_student_steps (today: 150)
CPU_LIMIT = 80.0  # kernel CPU seconds (one thread) a candidate may cost


def one_seed(seed: int, candidates: dict[str, int] = CANDIDATES) -> list[dict]:
    torch_device = "cpu"
    scale = "smoke" if seed < 0 else "book"  # a negative seed: a quick test of this script on the smoke preset
    base = RPKDConfig.preset(scale, seed=abs(seed), device=torch_device).validated()
    rows = []
    with one_cpu_thread(torch_device):
        teachers, teacher_cpu = {}, 0.0
        for n in base.class_grid:
            t = time.process_time()
            teachers[n] = teacher_part(base, n)
            teacher_cpu += time.process_time() - t
        for name, steps in candidates.items():
            few = dataclasses.replace(base, n_student_steps=steps)
            runs, student_cpu = [], 0.0
            for cfg in (few, standard_protocol(few)):
                parts = {}
                for n in cfg.class_grid:
                    t = time.process_time()
                    parts[n] = student_part(cfg, n, teachers[n])
                    student_cpu += time.process_time() - t
                summary = {f"C={n}": p[0] for n, p in parts.items()}
                runs.append(_results(cfg, summary, {f"C={n}": p[1] for n, p in parts.items()}))
            rows_ = {(r.name or r.claim): r for r in claims(*runs)}
            learns = rows_["every student arm learns the task"]
            row = {
                "candidate": name, "seed": seed, "n_student_steps": steps,
                "headroom_few": rows_["headroom"].verdict, "headroom_standard": rows_["headroom_standard"].verdict,
                "headroom_few_measured": rows_["headroom"].measured,
                "headroom_standard_measured": rows_["headroom_standard"].measured,
                "learns": learns.verdict, "learns_measured": learns.measured,
                "teacher_cpu_s": teacher_cpu, "student_cpu_s": student_cpu, "kernel_cpu_s": teacher_cpu + student_cpu,
            }
            for tag, r in zip(("few", "standard"), runs, strict=True):
                for arm in ("kd", "rpkd"):
                    row[f"{arm}_minus_ce_{tag}"] = float(np.mean([gain(r, arm, "ce", n) for n in r.config.class_grid]))
                row[f"accuracy_{tag}"] = {n: {a: r.summary[f"C={n}"]["accuracy"][a]["mean"] for a in r.config.arms}
                                          for n in r.config.class_grid}
            row["teacher"] = {n: teachers[n]["teacher_accuracy"] for n in base.class_grid}
            rows.append(row)
    return rows


def main() -> None:
    if "--summary" in sys.argv:
        rows = [json.loads(line) for line in OUT.read_text().splitlines()]
        print("| steps | seed | headroom few | headroom standard | learns | KD − CE std | RPKD − CE std "
              "| KD − CE few | RPKD − CE few | kernel CPU s |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(rows, key=lambda r: (r["n_student_steps"], r["seed"])):
            print(f"| {r['n_student_steps']} | {r['seed']} | {r['headroom_few'][:4]} | {r['headroom_standard'][:4]} | "
                  f"{r['learns'][:4]} ({r['learns_measured'].split()[-1]}) | {r['kd_minus_ce_standard']:+.3f} | "
                  f"{r['rpkd_minus_ce_standard']:+.3f} | {r['kd_minus_ce_few']:+.3f} | {r['rpkd_minus_ce_few']:+.3f} | "
                  f"{r['kernel_cpu_s']:.1f} |")
        return
    from joblib import Parallel, delayed

    seeds, candidates = SEEDS, CANDIDATES
    if "--only" in sys.argv:  # e.g. --only 150 103 104: one candidate on some seeds (a run cut short by time)
        i = sys.argv.index("--only")
        candidates = {sys.argv[i + 1]: CANDIDATES[sys.argv[i + 1]]}
        seeds = tuple(int(s) for s in sys.argv[i + 2:])
    for rows in Parallel(n_jobs=2, return_as="generator")(delayed(one_seed)(s, candidates) for s in seeds):
        with OUT.open("a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
                print(row["candidate"], row["seed"], row["headroom_few"][:4], row["headroom_standard"][:4],
                      row["learns"][:4], row["learns_measured"], f"{row['kernel_cpu_s']:.1f}", flush=True)


if __name__ == "__main__":
    main()
