"""Chapter 12: rule 2 of the runaway multiplier (benchmarks/trust_region_cl_radius_rule2.md, committed before this ran):
rule 1's candidate P2 (projection and lambda <= 1e5) on fresh tuning base seeds 110-114. Writes
``benchmarks/trust_region_cl_radius2.json`` and prints the pick.

    PYTHONPATH=src:benchmarks nice -n 5 python benchmarks/trust_region_cl_radius2.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from trust_region_cl_radius import CANDIDATES, one

BASE_SEEDS = (110, 111, 112, 113, 114)
OUT = Path(__file__).with_suffix(".json")


def main() -> None:
    runs = json.loads(OUT.read_text())["runs"] if OUT.is_file() else []
    for base in BASE_SEEDS:
        if not any(r["base_seed"] == base for r in runs):
            runs.append(one("P2", CANDIDATES["P2"], base))
            OUT.write_text(json.dumps({"runs": runs}, indent=1))
        r = next(r for r in runs if r["base_seed"] == base)
        print(f"P2 base={base}: max lambda {r['max_multiplier']:.4g} (task ends at the bound: {r['at_bound']}); ratio "
              f"{min(r['trcl_distance_ratio']):.3f}..{max(r['trcl_distance_ratio']):.3f}; "
              + ", ".join(f"{r['names'][c] or k}:{w.split(':')[0]}" for c, w in r["words"].items()
                          if (k := r["kinds"][c]) in ("gate", "check")), flush=True)  # fmt: skip
    ok = all(
        math.isfinite(r["max_multiplier"])
        and all(w.startswith("pass") for c, w in r["words"].items() if r["kinds"][c] in ("gate", "check"))
        for r in runs
    )
    print(f"P2: {'passes' if ok else 'fails'}; pick: {'P2' if ok else 'P1 (kept)'}")


if __name__ == "__main__":
    main()
