"""Issue 41, ninth pass: the time and reproduction terms of ``benchmarks/unirap_rule2.md``.

One book run (``run()``, default processes) at a tuning base seed (100), wall time, and the curriculum models' box /
mIoU / grasp at 512 labels per member seed (for the reproduction check against ``unirap_steps_480.jsonl``).
Run it with ``PYTHONPATH`` pointing at the source to time (the unchanged setup, then the candidate, back to back).

Usage: ``PYTHONPATH=src python benchmarks/unirap_rule2_time.py [BASE_SEED]``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace


def main() -> None:
    from explorables.unirap import experiment as X

    base = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base).validated()
    start = time.perf_counter()
    res = X.run(cfg)
    wall = time.perf_counter() - start
    cur = res.summary["unified"]["curriculum"][str(cfg.n_labelled)]
    print(json.dumps({"base": base, "n_steps": cfg.n_steps, "wall_s": round(wall, 1), "load": os.getloadavg(),
                      "timings": {k: round(v, 1) for k, v in res.summary["timings"].items()},
                      "curriculum_512": {k: v["per_seed"] for k, v in cur.items()},
                      "pose_direct_grasp": res.summary["unified"]["pose_direct"][str(cfg.n_labelled)]
                      ["grasp_success"]["per_seed"]}), flush=True)


if __name__ == "__main__":
    main()
