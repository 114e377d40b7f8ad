"""Issue 41, session-73 review (``benchmarks/unirap_members_rule.md``): the 5-member candidate's tuning harness.

The book preset at each given (tuning) base seed with ``seeds=(0, 1, 2, 3, 4)``; prints one JSON line per base seed
with every row's word (gates applied) and measured text, and the words of members 0-2 of the same run (every per-seed
list cut to its first 3, means and sds recomputed).

Usage: ``PYTHONPATH=src python benchmarks/unirap_members_candidate.py BASE [BASE ...]``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

import numpy as np

from explorables.core.tables import apply_gates
from explorables.unirap import claims as C
from explorables.unirap import experiment as X

MEMBERS = (0, 1, 2, 3, 4)


def first(summary, k: int):
    """``summary`` with every ``{"per_seed", "mean", "sd"}`` cut to its first ``k`` seeds."""
    if isinstance(summary, dict):
        if "per_seed" in summary and "mean" in summary:
            arr = np.asarray(summary["per_seed"][:k], dtype=float)
            return {"per_seed": arr.tolist(), "mean": float(arr.mean()), "sd": float(arr.std(ddof=1))}
        return {key: first(v, k) for key, v in summary.items()}
    return summary


def words(results) -> list[tuple[str, str, str]]:
    return [(r.name or r.claim[:40], r.outcome, r.measured) for r in apply_gates(C.claims(results))]


def main() -> None:
    for base in map(int, sys.argv[1:]):
        t0 = time.perf_counter()
        cfg = replace(X.UniRAPConfig.preset("book"), seed=base, seeds=MEMBERS).validated()
        res = X.run(cfg)
        seconds = time.perf_counter() - t0
        cut = X.UniRAPResults(res.config, dict(first(res.summary, 3), n_seeds=3), res.curves)
        print(json.dumps({"base": base, "members": list(MEMBERS), "seconds": round(seconds, 1),
                          "rows5": words(res), "rows3": words(cut)}), flush=True)


if __name__ == "__main__":  # spawned workers re-import this file
    main()
