"""Runner of benchmarks/tomato_mp_power_rule.md: the two-function part of tomato_mp's book preset with 48 samples
per tuning base seed (the candidates use the first 24, 32 or 48), per-sample numbers to JSON.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_power.py OUT.json 118 [119 ...]`` (tuning seeds >= 118 only).
"""

import json
import sys
import time
from dataclasses import replace

from explorables.tomato_mp.experiment import TomatoMPConfig, _two_functions

out, seeds = sys.argv[1], [int(s) for s in sys.argv[2:]]
assert all(s >= 118 for s in seeds), "tuning seeds only (>= 118)"
res = {}
for s in seeds:
    cfg = replace(TomatoMPConfig.preset("book"), seed=s, workers=1, two_function_seeds=tuple(range(48)))
    c, w = time.process_time(), time.time()
    summary, _ = _two_functions(cfg)
    res[s] = {"cpu_s": time.process_time() - c, "wall_s": time.time() - w, "seeds": summary["seeds"]}
    print(f"seed {s}: CPU {res[s]['cpu_s']:.1f} s, wall {res[s]['wall_s']:.1f} s (under load)", flush=True)
    json.dump(res, open(out, "w"), default=float)
