"""Session 84's same-numbers check for rpkd's budget change (``rpkd_budget_s84.md``).

``run OUT [SEED]``: the page's ``run_protocols`` on the book preset at base seed ``SEED`` (default 310, a tuning
seed), both results' summaries and curves pickled to ``OUT``; prints the wall and CPU seconds (this process and its
reaped children: the joblib workers are shut down first). Run it with each tree's ``src`` on ``PYTHONPATH``.
``compare A B``: every value of two such pickles (or any nested dicts / lists / arrays), timings left out; prints how
many differ and the largest difference.
"""

from __future__ import annotations

import dataclasses
import pickle
import resource
import sys
import time

import numpy as np


def run(out: str, seed: int = 310) -> None:
    start = time.perf_counter()
    from explorables.rpkd import RPKDConfig
    from explorables.rpkd.experiment import run_protocols

    cfg = dataclasses.replace(RPKDConfig.preset("book"), seed=seed)
    imported = time.perf_counter()
    few, std = run_protocols(cfg)
    ran = time.perf_counter()
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "wb") as f:
        pickle.dump({"few": (few.summary, few.curves), "std": (std.summary, std.curves)}, f)
    print(f"wall import {imported - start:.1f} run {ran - imported:.1f}; cpu self {own.ru_utime + own.ru_stime:.1f} "
          f"children {children.ru_utime + children.ru_stime:.1f}")


def differences(a, b, path: str = "") -> tuple[int, list[str], float]:
    """(values compared, paths that differ, largest absolute difference)."""
    if isinstance(a, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        parts = [differences(a[k], b[k], f"{path}/{k}") for k in a if k != "timings"]
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        parts = [differences(x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b, strict=True))]
    elif hasattr(a, "shape"):
        x, y = np.asarray(a), np.asarray(b)
        same = np.array_equal(x, y, equal_nan=x.dtype.kind == "f")
        big = 0.0 if same else float(np.nanmax(np.abs(x.astype(float) - y.astype(float))))
        return x.size, [] if same else [path], big
    else:
        same = a == b or (isinstance(a, float) and np.isnan(a) and np.isnan(b))
        big = abs(a - b) if not same and isinstance(a, (int, float)) else 0.0
        return 1, [] if same else [path], big
    return (sum(p[0] for p in parts), [q for p in parts for q in p[1]], max((p[2] for p in parts), default=0.0))


def compare(a: str, b: str) -> None:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        n, paths, largest = differences(pickle.load(fa), pickle.load(fb))
    print(f"compared {n} values; differing {len(paths)}; largest difference {largest}")
    print(paths[:20])


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], *(int(s) for s in sys.argv[3:]))
    else:
        compare(sys.argv[2], sys.argv[3])
