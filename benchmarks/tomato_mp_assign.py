"""Book preset of tomato_mp on one tuning base seed with the assignment of candidate A (Euclidean
minimum spanning tree) or B (the filtration's diagonal order); benchmarks/tomato_mp_assign_rule.md.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_assign.py 100 B``.
"""
import sys
import time
from dataclasses import replace

import numpy as np

from explorables.core.verdicts import first_word
from explorables.tomato_mp import claims as C
from explorables.tomato_mp import multiparam as M
from explorables.tomato_mp.experiment import TomatoMPConfig, run

seed, cand = int(sys.argv[1]), sys.argv[2]
if cand == "B" and not getattr(M, "ASSIGN_ALONG", False):

    def assign_b(filt, X, selected, scale):
        saved = M.propagate
        M.propagate = lambda X_, owner: M.propagate_along(filt, X_, owner)
        try:
            return ORIG_ASSIGN(filt, X, selected, scale)
        finally:
            M.propagate = saved

    ORIG_ASSIGN = M.assign
    M.assign = assign_b
cfg = replace(TomatoMPConfig.preset("book"), seed=seed, workers=1)
t = time.time()
r = run(cfg)
s = r.summary
_, pair, gain = C.two_function_values(s["two_functions"])
rec = C.recovered_cells(s["outliers"]["seed_runs"], s["outliers"]["true"])
means = C.seed_method_means(r)
print(f"seed {seed} cand {cand} wall {time.time() - t:.1f}")
print(f"pair mean ARI {np.mean(pair):.3f}; gain mean {np.mean(gain):+.3f}; recovered cells {rec}; "
      f"mp_robust mean ARI over settings {np.mean(means['mp_robust']):.3f}; mp_plain {np.mean(means['mp_plain']):.3f}")
for row in C.claims(r):
    print(row.kind, first_word(row.verdict), "|", row.claim[:50], "|", row.measured[:160])
