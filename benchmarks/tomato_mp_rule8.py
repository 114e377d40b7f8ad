"""benchmarks/tomato_mp_rule8_rule.md: the book preset's two-function part on tuning base seeds with candidate B+R
(groups' sd 1.0, every MMA of the part on the graph without its dominated edges), criteria 1 and 2.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_rule8.py 115 116 117``
"""

import sys
import time
from dataclasses import replace

import numpy as np

from explorables.tomato_mp import claims as C
from explorables.tomato_mp import experiment as E

package = E.run_tomato_mp


def reduced(*args, **kwargs):
    return package(*args, **{**kwargs, "reduce": True})


E.run_tomato_mp = reduced
for seed in map(int, sys.argv[1:]):
    cfg = replace(E.TomatoMPConfig.preset("book"), seed=seed, quadrant_spread=1.0)
    t = time.process_time()
    tf, _ = E.PARTS["two_functions"](cfg)
    cpu = time.process_time() - t
    alone, pair, gain = C.two_function_values(tf)
    best = [max(one["f"]["ari"], one["h"]["ari"]) for one in tf["seeds"]]
    n_rec = sum(C.recovers(one["f_and_h"], one["true"]) for one in tf["seeds"])
    print(
        f"base seed {seed} B+R: CPU {cpu:.1f} s; single recovers on {int(sum(alone))} of {len(alone)}; best single "
        f"ARI max {max(best):.3f} mean {np.mean(best):.3f}; pair ARI mean {np.mean(pair):.4f} {C._iv(pair)} (recovers "
        f"on {n_rec}); gain {C._iv(gain)}; gate {C.one_not_enough_gate(alone)}; level "
        f"{C.compare(pair, C.RECOVERED_ARI)}; gain part {C.compare(gain, C.ARI_MARGIN)}; claim "
        f"{C.two_functions_verdict(pair, gain)}",
        flush=True,
    )
