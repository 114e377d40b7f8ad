"""The two-function part of tomato_mp's book preset on one tuning base seed with one point layout of the
four quadrants; benchmarks/tomato_mp_quadrants_rule.md.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_quadrants.py 102 B``.
"""

import sys
import time
from dataclasses import replace

import numpy as np

from explorables.tomato_mp import claims as C
from explorables.tomato_mp.experiment import PARTS, TomatoMPConfig

CANDIDATES = {
    "A": dict(quadrant_layout="groups", quadrant_spread=0.6),
    "B": dict(quadrant_layout="square"),
    "C": dict(quadrant_layout="blob", quadrant_spread=1.0),
}
seed, cand = int(sys.argv[1]), sys.argv[2]
cfg = replace(TomatoMPConfig.preset("book"), seed=seed, **CANDIDATES[cand])
t = time.time()
tf, _ = PARTS["two_functions"](cfg)
alone, pair, gain = C.two_function_values(tf)
best = [max(one["f"]["ari"], one["h"]["ari"]) for one in tf["seeds"]]
for one in tf["seeds"]:
    print(
        f"  sample {one['seed']}: "
        + ", ".join(
            f"{k} K={one[k]['n_clusters']} ARI {one[k]['ari']:.2f}"
            for k in ("f", "h", "f_and_h", "diagonal", "density")
        )
    )
print(f"base seed {seed} cand {cand} wall {time.time() - t:.1f} s (under load)")
print(
    f"single recovers on {int(sum(alone))} of {len(alone)}; best single ARI max {max(best):.3f}; "
    f"room (min 0.8 - best) {min(0.8 - b for b in best):.3f}; pair mean ARI {np.mean(pair):.3f}; "
    f"gain mean {np.mean(gain):+.3f}; pair recovers on "
    f"{sum(C.recovers(one['f_and_h'], one['true']) for one in tf['seeds'])}"
)
