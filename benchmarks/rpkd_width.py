"""rpkd: the mixer student's width, candidates of ``benchmarks/rpkd_width_rule.md``, on tuning seeds only.

    PYTHONPATH=src python benchmarks/rpkd_width.py 105 106 107 108   # appends to rpkd_width.jsonl
    PYTHONPATH=src python benchmarks/rpkd_width.py --summary         # prints the table for rpkd_width.md

Every candidate runs the page's own code (``teacher_part`` once per class count, shared by every candidate
and both protocols as in ``run_protocols``; ``student_part`` per protocol), all arms of the book preset, and
is judged by the package's own ``claims`` (the headroom gates and the "every arm learns" check). Besides the
verdicts, each row keeps every arm's margin over chance (smallest over student seeds) per class count and
protocol, to say which arm is short. CPU is ``time.process_time`` on one thread (three teachers plus six
student parts, what ``run_protocols(workers=1)`` would spend).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from explorables.core.threads import one_cpu_thread
from explorables.rpkd.claims import claims, per_seed
from explorables.rpkd.experiment import RPKDConfig, _results, standard_protocol, student_part, teacher_part

HERE = Path(__file__).parent
OUT = HERE / "rpkd_width.jsonl"
CANDIDATES = {"8": 8, "12": 12, "16": 16}  # student_width (today: 8, run as the reference)
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
        for name, width in candidates.items():
            few = dataclasses.replace(base, student_width=width)
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
                "candidate": name, "seed": seed, "student_width": width,
                "headroom_few": rows_["headroom"].verdict, "headroom_standard": rows_["headroom_standard"].verdict,
                "headroom_few_measured": rows_["headroom"].measured,
                "headroom_standard_measured": rows_["headroom_standard"].measured,
                "learns": learns.verdict, "learns_measured": learns.measured,
                "teacher_cpu_s": teacher_cpu, "student_cpu_s": student_cpu, "kernel_cpu_s": teacher_cpu + student_cpu,
                "teacher": {n: teachers[n]["teacher_accuracy"] for n in base.class_grid},
            }
            for tag, r in zip(("few", "standard"), runs, strict=True):
                row[f"accuracy_{tag}"] = {n: {a: per_seed(r, a, n).tolist() for a in r.config.arms}
                                          for n in r.config.class_grid}
                row[f"margin_{tag}"] = {n: {a: float(np.min(per_seed(r, a, n)) - 1.0 / n) for a in r.config.arms}
                                        for n in r.config.class_grid}
            rows.append(row)
    return rows


def smallest(row: dict) -> tuple[float, str]:
    """The smallest margin over chance of a row and where it sits (protocol, C, arm)."""
    cells = [(m, f"{tag}, C = {n}, {a}") for tag in ("few", "standard")
             for n, d in row[f"margin_{tag}"].items() for a, m in d.items()]
    return min(cells)


def main() -> None:
    if "--summary" in sys.argv:
        rows = [json.loads(line) for line in OUT.read_text().splitlines()]
        print("| width | seed | headroom few | headroom standard | learns | smallest margin (where) | kernel CPU s |")
        print("|---|---|---|---|---|---|---|")
        for r in sorted(rows, key=lambda r: (r["student_width"], r["seed"])):
            m, where = smallest(r)
            print(f"| {r['student_width']} | {r['seed']} | {r['headroom_few'][:4]} | {r['headroom_standard'][:4]} | "
                  f"{r['learns'][:4]} | {m:+.3f} ({where}) | {r['kernel_cpu_s']:.1f} |")
        return
    from joblib import Parallel, delayed

    seeds = tuple(int(s) for s in sys.argv[1:] if not s.startswith("-"))
    if any(0 <= s < 100 for s in seeds):
        raise ValueError(f"tuning seeds must be >= 100 (base seeds 0-4 are the book's), got {seeds}")
    for rows in Parallel(n_jobs=2, return_as="generator")(delayed(one_seed)(s) for s in seeds):
        with OUT.open("a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
                m, where = smallest(row)
                print(row["candidate"], row["seed"], row["headroom_few"][:4], row["headroom_standard"][:4],
                      row["learns"][:4], f"{m:+.3f} ({where})", f"{row['kernel_cpu_s']:.1f}", flush=True)


if __name__ == "__main__":
    main()
