"""Candidates of ``benchmarks/jeffrey_beyond_rule.md`` on one tuning base seed.

The full book preset (``run(config, workers=1)``), the chapter's claims table (every row's word), the
per-guidance-seed Fréchet numbers, and each candidate's reading of the "…beyond what standard guidance does" row
(C0 today, C1 pixel-PCA margin FD_CUT/2, C2 both sibling margins). Prints one JSON line; the caller appends it to
``benchmarks/jeffrey_beyond_candidates.jsonl``.

Run: ``PYTHONPATH=src nice -n 5 /work/main/.venv/bin/python benchmarks/jeffrey_beyond_candidates.py BASE``.
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np

from explorables.core.tables import apply_gates
from explorables.core.verdicts import compare, interval, scope_verdict
from explorables.jeffrey import claims as C
from explorables.jeffrey.experiment import JeffreyConfig, run

MARGINS = {"C0": (0.0, 0.0), "C1": (0.0, C.FD_CUT / 2), "C2": (C.FD_CUT, C.FD_CUT / 2)}


def candidate(j: dict[str, list[float]], cg: dict[str, list[float]], margins: tuple[float, float]) -> dict:
    parts, ivs = {}, {}
    for (name, key), m in zip((("target embedding", "metric"), ("pixel PCA", "control")), margins, strict=True):
        d = (1 - m) * np.asarray(cg[key]) - np.asarray(j[key])
        parts[name] = compare(d, 0.0)
        iv = interval(d)
        ivs[name] = [iv.mean, iv.low, iv.high]
    return {"verdict": scope_verdict(parts, "paired per seed"), "intervals": ivs}


def main(base: int) -> dict:
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_SELF)
    results = run(JeffreyConfig.preset("book", seed=base), workers=1)
    c1 = resource.getrusage(resource.RUSAGE_SELF)
    table = apply_gates(C.claims(results))
    ims = results.summary["images"]["seeds"]
    fd = {m: {k: C.seeds_of(ims, "frechet", m, k) for k in ("metric", "control")} for m in ("jeffrey", "classifier")}
    return {
        "base": base,
        "rows": [{"kind": r.kind, "name": r.name, "claim": r.claim[:70], "word": r.outcome} for r in table],
        "frechet": fd,
        "candidates": {c: candidate(fd["jeffrey"], fd["classifier"], m) for c, m in MARGINS.items()},
        "cpu_s": round(c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime, 1),
        "wall_s": round(time.time() - t0, 1),
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1])), ensure_ascii=False), flush=True)
