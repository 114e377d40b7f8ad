"""Issue 41, tenth pass (``benchmarks/unirap_rule5.md``): the time term of candidate C1.

One book run (``run()``, base seed 100) of the unchanged setup (``phase1_starts=1``, the same code path as main's:
start 0's weights, the only start chosen) and then one of C1 (``phase1_starts=2``), each in a fresh process, back to
back; prints their wall times, the ratio, the projection 52.9 s x ratio, the load, and the competence of each run.

Usage: ``PYTHONPATH=src python benchmarks/unirap_rule5_time.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = """
import json, time
from explorables.unirap import experiment as X
t = time.perf_counter()
r = X.run(X.UniRAPConfig.preset("book", seed=100, phase1_starts={k}))
s = time.perf_counter() - t
cur = r.summary["unified"]["curriculum"][str(r.summary["n_labelled"])]
print(json.dumps({{"phase1_starts": {k}, "seconds": round(s, 1), "min_iou": min(cur["mask_iou"]["per_seed"]),
                  "min_grasp": min(cur["grasp_success"]["per_seed"])}}))
"""

if __name__ == "__main__":
    out = {}
    for k in (1, 2):
        load = os.getloadavg()[0]
        got = json.loads(subprocess.run([sys.executable, "-c", CHILD.format(k=k)], check=True, capture_output=True,
                                        text=True).stdout.strip().splitlines()[-1])
        got["load_before"] = round(load, 2)
        out[k] = got
        print(json.dumps(got), flush=True)
    ratio = out[2]["seconds"] / out[1]["seconds"]
    print(json.dumps({"ratio": round(ratio, 3), "projected_quiet_cold_s": round(52.9 * ratio, 1)}), flush=True)
