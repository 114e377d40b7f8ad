"""Diagnosis (ucca8): per tuning base seed, per dataset, per inner seed 0..N-1, the current book trial's values."""

import json
import sys
import time

import numpy as np

from explorables.ucca.experiment import UCCAConfig, trial

base = [int(s) for s in sys.argv[1].split(",")]
n_inner = int(sys.argv[2])
out = sys.argv[3]
extra = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
with open(out, "a") as f:
    for b in base:
        cfg = UCCAConfig(seed=b, **extra)
        for ds in ("clustered", "gaussian", "breast_cancer", "wine"):
            for s in range(n_inner):
                t0 = time.process_time()
                t = trial(cfg, ds, s)
                row = {"base": b, "dataset": ds, "inner": s, "cpu": round(time.process_time() - t0, 2), "extra": extra}
                row |= {
                    m: float(np.mean(t[m]))
                    for m in ("oracle", "ucca", "ucca_no_faq", "ucca_scipy_starts", "random")
                    if m in t
                }
                f.write(json.dumps(row) + "\n")
                f.flush()
