"""Issue 41, session 81 (``benchmarks/unirap_pairs_rule.md``): the book preset at one tuning base seed, with the code on
``PYTHONPATH`` (this branch: E7; main: the reference for the time term and the untouched rows). Prints one JSON line:
the wall and CPU seconds of ``run()`` (this process and the reaped worker), every row's word (before and after gates)
and measured text, and the staged-vs-mixed, transfer and parsing intervals over the first 3, 5 and all pairs.

Usage: ``PYTHONPATH=src python benchmarks/unirap_pairs_candidate.py BASE``.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from dataclasses import replace

from explorables.core.tables import apply_gates
from explorables.core.verdicts import interval
from explorables.unirap import claims as C
from explorables.unirap import experiment as X


def _iv(v) -> dict:
    iv = interval(v)
    return {
        "n": len(v),
        "text": iv.format(signed=True),
        "half_width": float((iv.high - iv.low) / 2),
        "word": C.compare(v, C.MARGIN),
    }


def main() -> None:
    base = int(sys.argv[1])
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base).validated()
    w0, c0 = time.perf_counter(), time.process_time()
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = X.run(cfg)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
    low = min(cfg.labelled_grid)
    rows = {
        "efficiency": C.leads(res)[low],
        "transfer": C.transfer_leads(res)[low],
        "parsing": C.parsing_gains(res)[low],
    }
    out = {
        name: {"first3": _iv(v[:3]), "first5": _iv(v[:5]) if len(v) >= 5 else None, "all": _iv(v), "values": v.tolist()}
        for name, v in rows.items()
    }
    raw = {(r.name or r.claim[:40]): r.outcome for r in C.claims(res)}
    words = [
        (r.name or r.claim[:40], raw[r.name or r.claim[:40]], r.outcome, r.measured) for r in apply_gates(C.claims(res))
    ]
    print(
        json.dumps(
            {
                "base": base,
                "code": X.__file__,
                "curriculum_arm_seeds": getattr(cfg, "curriculum_arm_seeds", 0),
                "wall_s": round(wall, 1),
                "cpu_main_s": round(cpu, 1),
                "cpu_worker_s": round(child, 1),
                "cpu_total_s": round(cpu + child, 1),
                "load": open("/proc/loadavg").read().split()[:3],
                "utc": time.strftime("%H:%M:%S", time.gmtime()),
                "timings": res.summary.get("timings"),
                "intervals": out,
                "rows": words,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":  # spawned workers re-import this file
    main()
