"""Issue 41, session 75 (``benchmarks/unirap_members2_rule.md``): more members for the control and the no-parsing
arm only. The book preset at one tuning base seed with the given ``arm_seeds``; prints one JSON line with the wall
seconds of ``run()``, every row's word (gates applied) and the parsing gate's interval over the first 3, 6 and 8
members of the two arms (as many as there are).

Usage: ``PYTHONPATH=src python benchmarks/unirap_members2_candidate.py BASE [ARM_SEED ...]``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

from explorables.core.tables import apply_gates
from explorables.unirap import claims as C
from explorables.unirap import experiment as X


def main() -> None:
    base, arm_seeds = int(sys.argv[1]), tuple(int(a) for a in sys.argv[2:])
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base, arm_seeds=arm_seeds).validated()
    t0 = time.perf_counter()
    res = X.run(cfg)
    seconds = time.perf_counter() - t0
    gain = C.parsing_gains(res)[min(cfg.labelled_grid)]
    gate = {str(k): C.parsing_gate(gain[:k]) for k in (3, 6, 8) if k <= len(gain)}
    rows = [(r.name or r.claim[:40], r.outcome, r.measured) for r in apply_gates(C.claims(res))]
    print(json.dumps({"base": base, "arm_seeds": list(arm_seeds), "seconds": round(seconds, 1),
                      "timings": res.summary.get("timings"), "parsing_gain": gain.tolist(), "gate": gate,
                      "rows": rows}), flush=True)


if __name__ == "__main__":  # spawned workers re-import this file
    main()
