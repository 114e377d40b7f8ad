"""Issue 41, session 76 (``benchmarks/unirap_rule8.md``): the book preset at one tuning base seed, with the code on
``PYTHONPATH`` (this branch: S6; main: the reference for the time term). Prints one JSON line: the wall and CPU
seconds of ``run()``, every row's word and measured text (gates applied), and the staged-vs-mixed, transfer and
parsing intervals over the first 3 pairs and over all of them.

Usage: ``PYTHONPATH=src python benchmarks/unirap_rule8_candidate.py BASE``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

from explorables.core.tables import apply_gates
from explorables.core.verdicts import interval
from explorables.unirap import claims as C
from explorables.unirap import experiment as X


def _iv(v) -> dict:
    iv = interval(v)
    return {"n": len(v), "text": iv.format(signed=True), "half_width": float((iv.high - iv.low) / 2)}


def main() -> None:
    base = int(sys.argv[1])
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base).validated()
    w0, c0 = time.perf_counter(), time.process_time()
    res = X.run(cfg)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    low = min(cfg.labelled_grid)
    rows = {
        "efficiency": C.leads(res)[low],
        "transfer": C.transfer_leads(res)[low],
        "parsing": C.parsing_gains(res)[low],
    }
    out = {name: {"first3": _iv(v[:3]), "all": _iv(v), "values": v.tolist()} for name, v in rows.items()}
    words = [(r.name or r.claim[:40], r.outcome, r.measured) for r in apply_gates(C.claims(res))]
    print(
        json.dumps(
            {
                "base": base,
                "code": X.__file__,
                "arm_seeds": list(cfg.arm_seeds),
                "wall_s": round(wall, 1),
                "cpu_s": round(cpu, 1),
                "timings": res.summary.get("timings"),
                "intervals": out,
                "rows": words,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":  # spawned workers re-import this file
    main()
