"""rpkd: room for a known distiller under the standard protocol: K1 (KD at T = 1 there) and K2 (K1 + disjoint).

The candidates, criteria and decision rule: ``rpkd_standard_kd_rule.md`` (committed before any run).

    PYTHONPATH=src python benchmarks/rpkd_standard_kd.py K1 127 128 129   # appends to rpkd_standard_kd.jsonl
    PYTHONPATH=src python benchmarks/rpkd_standard_kd.py K2 127 128 129
    PYTHONPATH=src python benchmarks/rpkd_standard_kd.py K1 -1            # a quick test on the smoke preset
    PYTHONPATH=src python benchmarks/rpkd_standard_kd.py --summary

K1 changes only the standard protocol's students: per seed, the package's ``teacher_part`` (no probe) and its
``students`` under ``standard_protocol`` (the page's four standard arms), gates from the package. K2 changes both
protocols: the page's ``run_protocols(workers=1)`` and the package's ``claims``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from explorables.core.threads import one_cpu_thread
from explorables.rpkd.claims import claims, distill_gate, headroom_gate, learns_check, per_seed
from explorables.rpkd.experiment import RPKDConfig, _results, run_protocols, standard_protocol, students, teacher_part

HERE = Path(__file__).parent
OUT = HERE / "rpkd_standard_kd.jsonl"
CANDIDATES = {
    "K1": {"standard_temperature": 1.0, "transfer": "shared"},
    "K2": {"standard_temperature": 1.0, "transfer": "disjoint"},
}


def _row(seed, name, fields, cpu, wall, gates, std, few=None):
    row = {
        "seed": seed,
        "candidate": name,
        "fields": fields,
        "cpu_s": round(cpu, 1),
        "wall_s": round(wall, 1),
        "rows": [
            {"kind": c.kind, "name": c.name, "claim": c.claim, "verdict": c.verdict, "measured": c.measured}
            for c in gates
        ],
    }
    for tag, r in (("standard", std), ("few", few)):
        if r is not None:
            row[f"accuracy_{tag}"] = {
                n: {a: per_seed(r, a, n).tolist() for a in r.config.arms} for n in r.summary["class_grid"]
            }
    row["teacher"] = {n: std.summary[f"C={n}"]["teacher_accuracy"] for n in std.summary["class_grid"]}
    return row


def one_seed(name: str, seed: int) -> dict:
    scale = "smoke" if seed < 0 else "book"
    fields = CANDIDATES[name]
    cfg = RPKDConfig.preset(scale, seed=abs(seed), device="cpu", **fields).validated()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if name == "K1":
        std_cfg = standard_protocol(cfg)
        summary = {}
        with one_cpu_thread("cpu"):
            for n in cfg.class_grid:
                shared = teacher_part(cfg, n, probe=False)
                acc, _ = students(std_cfg, n, shared)
                summary[f"C={n}"] = {"n_classes": n, "teacher_accuracy": shared["teacher_accuracy"], "accuracy": acc}
        std = _results(std_cfg, summary, {})
        gates = [distill_gate(std), headroom_gate(std), learns_check([std])]
        few = None
    else:
        few, std = run_protocols(cfg, workers=1)
        gates = claims(few, std)
    row = _row(seed, name, fields, time.process_time() - cpu0, time.perf_counter() - wall0, gates, std, few)
    print(
        json.dumps({k: row[k] for k in ("seed", "candidate", "cpu_s", "wall_s")}), time.strftime("%H:%M:%S"), flush=True
    )
    for g in gates:
        if g.kind in ("gate", "check"):
            print("  ", g.name or g.claim[:40], g.verdict.split(":")[0], "|", g.measured, flush=True)
    if seed >= 0:
        with OUT.open("a") as f:
            f.write(json.dumps(row) + "\n")
    return row


def _word(row: dict, key: str) -> str:
    for r in row["rows"]:
        if r["name"] == key or (key == "learns" and r["claim"].startswith("every student arm learns")):
            return r["verdict"].split(":")[0]
    return "-"


def summary() -> None:
    rows = [json.loads(line) for line in OUT.open()]
    keys = ("distill_standard", "headroom_standard", "learns", "headroom", "distill")
    print("| candidate | seed | " + " | ".join(keys) + " | CPU s | wall s |")
    print("|---|---|" + "---|" * (len(keys) + 2))
    for r in rows:
        print(
            f"| {r['candidate']} | {r['seed']} | "
            + " | ".join(_word(r, k) for k in keys)
            + f" | {r['cpu_s']} | {r['wall_s']} |"
        )
    for r in rows:
        for g in r["rows"]:
            if g["name"] in ("distill_standard", "headroom_standard", "distill", "headroom"):
                word = g["verdict"].split(":")[0]
                print(f"- {r['candidate']} seed {r['seed']} {g['name']}: {word} ({g['measured']})")


def main(args: list[str]) -> None:
    if "--summary" in args:
        summary()
        return
    name = args[0]
    for seed in map(int, args[1:]):
        assert seed < 0 or seed >= 127, "tuning seeds >= 127 only"
        one_seed(name, seed)


if __name__ == "__main__":
    main(sys.argv[1:])
