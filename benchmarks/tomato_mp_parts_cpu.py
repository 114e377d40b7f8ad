"""CPU seconds of each part of tomato_mp's book preset, in one process (workers = 1), on tuning base seed 111:
cost only, no verdict read (benchmarks/tomato_mp_spread2.md, last section).

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_parts_cpu.py``.
"""

import time
from dataclasses import replace

from explorables.tomato_mp.experiment import PARTS, TomatoMPConfig

cfg = replace(TomatoMPConfig.preset("book"), seed=111, workers=1)
tot = 0.0
for name, fn in PARTS.items():
    c, w = time.process_time(), time.time()
    fn(cfg)
    dc = time.process_time() - c
    tot += dc
    print(f"{name}: CPU {dc:.1f} s, wall {time.time() - w:.1f} s (under load)", flush=True)
print(f"all parts CPU {tot:.1f} s")
