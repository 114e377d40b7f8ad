"""Compare two pickles of ``topoprune_same_numbers_run.py``: every leaf of summary and curves, timings left out."""

from __future__ import annotations

import pickle
import sys

import numpy as np


def compare(a, b, path: str = "", found: list | None = None) -> list:
    """``[(path, largest absolute difference)]`` of every numeric leaf; raises on a structural difference."""
    found = [] if found is None else found
    if path.startswith("/summary/timings") or path.endswith("_s"):
        return found
    if isinstance(a, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        for k in a:
            compare(a[k], b[k], f"{path}/{k}", found)
    elif isinstance(a, (list, tuple)) and not (a and isinstance(a[0], (int, float))):
        assert len(a) == len(b), path
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            compare(u, v, f"{path}/{i}", found)
    elif isinstance(a, (int, float, np.ndarray, list, tuple, np.generic)):
        u, v = np.asarray(a), np.asarray(b)
        assert u.shape == v.shape, path
        if u.dtype.kind in "fc" or v.dtype.kind in "fc":
            found.append((path, float(np.max(np.abs(u.astype(float) - v.astype(float)), initial=0.0))))
        else:
            assert np.array_equal(u, v), path
            found.append((path, 0.0))
    else:
        assert a == b, (path, a, b)
        found.append((path, 0.0))
    return found


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f, open(sys.argv[2], "rb") as g:
        leaves = compare(pickle.load(f), pickle.load(g))
    worst = max(leaves, key=lambda x: x[1])
    print(f"{len(leaves)} leaves compared, {sum(d == 0 for _, d in leaves)} identical; largest difference "
          f"{worst[1]} at {worst[0]}")  # fmt: skip
