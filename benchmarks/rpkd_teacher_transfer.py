"""rpkd: a teacher without dead channels (T1) and a transfer set the teacher did not train on (S1).

The candidates, criteria and decision rule: ``rpkd_teacher_transfer_rule.md`` (committed before any run).

    PYTHONPATH=src python benchmarks/rpkd_teacher_transfer.py 123 124 125   # appends to rpkd_teacher_transfer.jsonl
    PYTHONPATH=src python benchmarks/rpkd_teacher_transfer.py -1            # a quick test on the smoke preset
    PYTHONPATH=src python benchmarks/rpkd_teacher_transfer.py --summary     # the table and the decision
    PYTHONPATH=src python benchmarks/rpkd_teacher_transfer.py --only T1 124 125   # one candidate only

Per seed, three runs of the page's ``run_protocols`` (both protocols, ``workers=1``: one process, every job, so
that ``time.process_time`` counts the page's whole kernel CPU): the reference (the book preset), T1
(``teacher_norm=True``) and T1 + S1 (``teacher_norm=True, transfer="disjoint"``). Rows: the package's own claims.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

from explorables.rpkd.claims import claims, per_seed
from explorables.rpkd.experiment import RPKDConfig, run_protocols

HERE = Path(__file__).parent
OUT = HERE / "rpkd_teacher_transfer.jsonl"
CANDIDATES = {"reference": {}, "T1": {"teacher_norm": True},
              "T1+S1": {"teacher_norm": True, "transfer": "disjoint"}}
ARMS = ("ce", "kd", "ofa", "rpkd", "feature_match")


def one_seed(seed: int, only: tuple[str, ...] = tuple(CANDIDATES)) -> list[dict]:
    scale = "smoke" if seed < 0 else "book"
    rows = []
    for name, fields in CANDIDATES.items():
        if name not in only:
            continue
        # every field named: the row reads the same whatever the book preset's defaults become
        full = {"teacher_norm": False, "transfer": "shared"} | fields
        cfg = dataclasses.replace(RPKDConfig.preset(scale, seed=abs(seed), device="cpu"), **full).validated()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        few, std = run_protocols(cfg, workers=1)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        row = {"seed": seed, "candidate": name, "fields": full, "cpu_s": cpu, "wall_s": wall,
               "rows": [{"kind": c.kind, "name": c.name, "claim": c.claim, "verdict": c.verdict,
                         "measured": c.measured} for c in claims(few, std)]}
        for tag, r in (("few", few), ("standard", std)):
            grid = r.summary["class_grid"]
            row[f"accuracy_{tag}"] = {n: {a: per_seed(r, a, n).tolist() for a in r.config.arms} for n in grid}
        row["teacher"] = {n: few.summary[f"C={n}"]["teacher_accuracy"] for n in few.summary["class_grid"]}
        row["dead"] = {n: few.summary[f"C={n}"]["dead_channels"] for n in few.summary["class_grid"]}
        row["teacher_train"] = {n: few.summary[f"C={n}"]["teacher_train_accuracy"] for n in few.summary["class_grid"]}
        row["soft_max"] = {n: few.summary[f"C={n}"]["teacher_soft_max"] for n in few.summary["class_grid"]}
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("seed", "candidate", "cpu_s", "wall_s", "dead")}), flush=True)
        if seed >= 0:
            with OUT.open("a") as f:
                f.write(json.dumps(row) + "\n")
    return rows


def _word(row: dict, key: str) -> str:
    for r in row["rows"]:
        if r["name"] == key or (key == "dead" and "dead channels" in r["claim"]) or (
                key == "learns" and r["claim"].startswith("every student arm learns")):
            return r["verdict"].split(":")[0]
    return "-"


def summary() -> None:
    rows = [json.loads(line) for line in OUT.open()]
    ref_cpu = {r["seed"]: r["cpu_s"] for r in rows if r["candidate"] == "reference"}
    keys = ("dead", "headroom", "headroom_standard", "distill", "distill_standard", "learns")
    print("| candidate | seed | " + " | ".join(keys) + " | dead per C | CPU s | above ref |")
    print("|---|---|" + "---|" * (len(keys) + 3))
    for r in rows:
        extra = r["cpu_s"] - ref_cpu.get(r["seed"], r["cpu_s"])
        dead = ", ".join(f"{c}: {n}" for c, n in r["dead"].items())
        print(f"| {r['candidate']} | {r['seed']} | " + " | ".join(_word(r, k) for k in keys)
              + f" | {dead} | {r['cpu_s']:.1f} | {extra:+.1f} |")
    print()
    for r in rows:
        print(f"{r['candidate']}, seed {r['seed']}:")
        for x in r["rows"]:
            if x["kind"] in ("gate", "check") or x["name"]:
                print(f"- {x['name'] or x['claim']}: {x['verdict'].split(':')[0]} ({x['measured']})")
        for tag in ("few", "standard"):
            acc = r[f"accuracy_{tag}"]
            print(f"- accuracy ({tag}): " + "; ".join(
                f"C = {c}: teacher {r['teacher'][c]:.3f}, " + ", ".join(
                    f"{a} {sum(v) / len(v):.3f}" for a, v in arms.items()) for c, arms in acc.items()))
        print()


if __name__ == "__main__":
    if sys.argv[1:] == ["--summary"]:
        summary()
    else:  # --only NAME[,NAME]: those candidates only
        args = sys.argv[1:]
        only = tuple(args[args.index("--only") + 1].split(",")) if "--only" in args else tuple(CANDIDATES)
        seeds = [a for i, a in enumerate(args) if a != "--only" and (i == 0 or args[i - 1] != "--only")]
        for s in map(int, seeds):
            one_seed(s, only)
