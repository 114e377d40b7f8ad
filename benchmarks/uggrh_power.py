"""Candidates of benchmarks/uggrh_power_rule.md on tuning base seeds 110-112 (never 0-4).

    PYTHONPATH=src nice -n 5 python benchmarks/uggrh_power.py C0,C5,C6,C8 110,111,112
    # appends to benchmarks/uggrh_power.jsonl

Each (candidate, base seed) runs the book preset with the candidate's changes in a child process; the line records
the CPU seconds of that child and its workers (``RUSAGE_CHILDREN``, the rule's cost measure), the wall seconds (under
load; not used), every row's word and measured text, and the per-seed paired differences that decide the rows.
"""

from __future__ import annotations

import dataclasses
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

CANDIDATES: dict[str, dict] = {
    "C0": dict(),
    "C5": dict(seeds=(0, 1, 2, 3, 4), n_epochs=64),
    "C6": dict(seeds=(0, 1, 2, 3, 4, 5), n_epochs=52),
    "C8": dict(seeds=tuple(range(8)), n_epochs=40),
}
OUT = Path(__file__).with_suffix(".jsonl")


def child(name: str, base: int, out: str) -> None:
    from explorables.core.tables import apply_gates
    from explorables.uggrh import UGGRHConfig, run
    from explorables.uggrh.claims import claims

    cfg = dataclasses.replace(UGGRHConfig.preset("book", seed=base), **CANDIDATES[name])
    start = time.perf_counter()
    results = run(cfg)
    rows = apply_gates(claims(results))
    line = {"candidate": name, "base_seed": base, "seeds": list(cfg.seeds), "n_epochs": cfg.n_epochs,
            "wall_s": round(time.perf_counter() - start, 1), "timings": results.summary["timings"],
            "rows": [{"kind": r.kind, "claim": r.claim, "verdict": r.verdict.split(":")[0], "verdict_text": r.verdict,
                      "measured": r.measured} for r in rows]}  # fmt: skip
    Path(out).write_text(json.dumps(line))


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main(names: list[str], bases: list[int]) -> None:
    for base in bases:
        for name in names:
            tmp = f"/tmp/uggrh_power_{name}_{base}.json"
            before = cpu_children()
            subprocess.run([sys.executable, __file__, "--child", name, str(base), tmp], check=True)
            line = json.loads(Path(tmp).read_text())
            line["cpu_s"] = round(cpu_children() - before, 1)
            with OUT.open("a") as f:
                f.write(json.dumps(line) + "\n")
            words = [r["verdict"] for r in line["rows"] if r["kind"] != "check"]
            print(name, base, line["cpu_s"], line["wall_s"], words, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        names = sys.argv[1].split(",")
        bases = [int(b) for b in sys.argv[2].split(",")]
        if any(not 110 <= b <= 119 for b in bases):
            raise SystemExit("tuning seeds of this rule are 110-119")
        main(names, bases)
