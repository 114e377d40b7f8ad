"""The two-function part of tomato_mp's book preset on tuning base seeds with the groups' sd of candidate A
(0.6) or B (1.0); benchmarks/tomato_mp_spread_rule.md.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_spread.py 105 A B`` (each candidate, back to back).
"""

import sys
import time
from dataclasses import replace

import numpy as np

from explorables.tomato_mp import claims as C
from explorables.tomato_mp.experiment import PARTS, TomatoMPConfig

CANDIDATES = {
    "A": dict(quadrant_layout="groups", quadrant_spread=0.6),
    "B": dict(quadrant_layout="groups", quadrant_spread=1.0),
}
seed = int(sys.argv[1])
for cand in sys.argv[2:]:
    cfg = replace(TomatoMPConfig.preset("book"), seed=seed, **CANDIDATES[cand])
    t = time.time()
    tf, _ = PARTS["two_functions"](cfg)
    wall = time.time() - t
    alone, pair, gain = C.two_function_values(tf)
    best = [max(one["f"]["ari"], one["h"]["ari"]) for one in tf["seeds"]]
    parts = {"level": C.compare(pair, C.RECOVERED_ARI), "gain": C.compare(gain, C.ARI_MARGIN)}
    print(
        f"base seed {seed} cand {cand}: wall {wall:.1f} s (under load); single recovers on {int(sum(alone))} of "
        f"{len(alone)}; best single ARI max {max(best):.3f} mean {np.mean(best):.3f}; pair ARI {C._iv(pair)} "
        f"(recovers on {sum(C.recovers(one['f_and_h'], one['true']) for one in tf['seeds'])}); gain {C._iv(gain)}; "
        f"density alone K=4 on {sum(one['density']['n_clusters'] == 4 for one in tf['seeds'])}, mean ARI "
        f"{np.mean([one['density']['ari'] for one in tf['seeds']]):.3f}; diagonal mean ARI "
        f"{np.mean([one['diagonal']['ari'] for one in tf['seeds']]):.3f}; gate {C.one_not_enough_gate(alone)}; "
        f"parts {parts}; claim {C.two_functions_verdict(pair, gain)}",
        flush=True,
    )
