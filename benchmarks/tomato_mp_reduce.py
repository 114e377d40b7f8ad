"""The two-function part of tomato_mp's book preset with the MMA on the whole graph and on the graph
without its dominated edges (``reduce``), side by side: CPU seconds and whether every sample's count,
ARI and labels agree (benchmarks/tomato_mp_reduce.md).

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_reduce.py <spread> <base seed> [<base seed> ...]``
"""

import sys
import time
from dataclasses import replace

import numpy as np

from explorables.tomato_mp import experiment as E

spread = float(sys.argv[1])
whole_graph = E.run_tomato_mp


def without_reduction(*args, **kwargs):
    return whole_graph(*args, **{**kwargs, "reduce": False})


for base in map(int, sys.argv[2:]):
    cfg = replace(E.TomatoMPConfig.preset("book"), seed=base, quadrant_spread=spread)
    out = {}
    for mode in ("whole", "reduced"):
        E.run_tomato_mp = without_reduction if mode == "whole" else whole_graph
        t = time.process_time()
        out[mode] = (*E.PARTS["two_functions"](cfg), time.process_time() - t)
    E.run_tomato_mp = whole_graph
    (sa, ca, ta), (sb, cb, tb) = out["whole"], out["reduced"]
    same = {name: 0 for name in ("f", "h", "f_and_h")}
    for one_a, one_b, lab_a, lab_b in zip(sa["seeds"], sb["seeds"], ca["seeds"], cb["seeds"], strict=True):
        for name in same:
            same[name] += (one_a[name] == one_b[name]) and bool(np.array_equal(lab_a[name], lab_b[name]))
    print(
        f"spread {spread} base seed {base}: CPU whole {ta:.1f} s, reduced {tb:.1f} s ({ta / tb:.1f}x); samples "
        f"with identical count, ARI and labels (of {len(sa['seeds'])}): {same}; summaries identical: {sa == sb}",
        flush=True,
    )
