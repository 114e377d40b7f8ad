"""Runner of benchmarks/tomato_mp_robust_rule.md (tuning base seeds 122-131 only): on one tuning base seed, the book
preset's whole experiment (``experiment.run``, one process) two ways, and the summaries written as JSON.

* ``C0``: today's book preset (``n_seeds`` 8, the MMAs of the outlier and data-set parts on the whole graph);
* ``R48``: ``n_seeds`` 48 with every MMA of the outlier and data-set parts on the reduced graph (``reduce=True``,
  patched in here only; the two-function part already runs reduced). R32 and R40 are its first 32 and 40 samples
  (the samples of a base seed b are 1000 b + i, so they are a prefix), cut by the reader.

Usage: ``PYTHONPATH=src nice -n 5 python benchmarks/tomato_mp_robust.py 122 OUT.json``.
"""

import json
import sys
import time
from dataclasses import replace

import numpy as np

from explorables.tomato_mp import experiment as E

seed, path = int(sys.argv[1]), sys.argv[2]
assert 122 <= seed <= 131, "tuning seeds 122-131 only"
whole_fn = E.run_tomato_mp


def reduced(*a, **k):
    return whole_fn(*a, **{**k, "reduce": True})


def plain(o):
    if isinstance(o, dict):
        return {str(k): plain(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [plain(v) for v in o]
    if isinstance(o, np.ndarray):
        return plain(o.tolist())
    if isinstance(o, np.generic):
        return o.item()
    return o


part_cpu: dict[str, float] = {}


def timed(name, fn):
    def wrapped(cfg):
        c = time.process_time()
        r = fn(cfg)
        part_cpu[name] = round(time.process_time() - c, 2)
        return r
    return wrapped


E.PARTS.update({name: timed(name, fn) for name, fn in dict(E.PARTS).items()})
out = {"seed": seed}
for name, n, fn in (("C0", 8, whole_fn), ("R48", 48, reduced)):
    E.run_tomato_mp = fn
    cfg = replace(E.TomatoMPConfig.preset("book"), seed=seed, n_seeds=n, workers=1)
    c, w = time.process_time(), time.time()
    res = E.run(cfg)
    cpu, wall = time.process_time() - c, time.time() - w
    print(f"seed {seed} {name}: CPU {cpu:.1f} s, wall {wall:.1f} s; parts CPU {part_cpu}", flush=True)
    out[name] = {"n_seeds": n, "cpu_s": cpu, "wall_s": wall, "part_cpu": dict(part_cpu), "summary": plain(res.summary)}
E.run_tomato_mp = whole_fn
with open(path, "w") as fh:
    json.dump(out, fh)
print("written", path)
