"""Candidates of benchmarks/uggrh_seeds_rule.md on tuning base seeds 100-102 (never 0-4).

    PYTHONPATH=src nice -n 5 python benchmarks/uggrh_seeds.py   # appends to benchmarks/uggrh_seeds.jsonl

Each line: candidate, base seed, run seconds (under load; not used to decide), every row's word and measured text.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

from explorables.core.tables import apply_gates
from explorables.uggrh import UGGRHConfig, run
from explorables.uggrh.claims import claims

CANDIDATES = {
    "K3": dict(seeds=(0, 1, 2), missing_rate_grid=(0.0, 0.35, 0.7), imbalance_share_grid=(0.0, 0.5, 1.0)),
    "S4": dict(seeds=(0, 1, 2, 3), missing_rate_grid=(0.0, 0.7), imbalance_share_grid=(0.0, 0.5, 1.0)),
}
OUT = Path(__file__).with_suffix(".jsonl")


def main(names: list[str], bases: list[int]) -> None:
    for base in bases:
        for name in names:
            cfg = dataclasses.replace(UGGRHConfig.preset("book", seed=base), **CANDIDATES[name])
            start = time.perf_counter()
            results = run(cfg)
            rows = apply_gates(claims(results))
            line = {"candidate": name, "base_seed": base, "seconds": round(time.perf_counter() - start, 1),
                    "timings": results.summary["timings"],
                    "rows": [{"kind": r.kind, "claim": r.claim, "verdict": r.verdict.split(":")[0],
                              "measured": r.measured} for r in rows]}  # fmt: skip
            with OUT.open("a") as f:
                f.write(json.dumps(line) + "\n")
            words = [r["verdict"] for r in line["rows"] if r["kind"] != "check"]
            print(name, base, line["seconds"], words, flush=True)


if __name__ == "__main__":
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else list(CANDIDATES)
    bases = [int(b) for b in sys.argv[2].split(",")] if len(sys.argv) > 2 else [100, 101, 102]
    if any(b < 100 for b in bases):
        raise SystemExit("tuning seeds are >= 100")
    main(names, bases)
