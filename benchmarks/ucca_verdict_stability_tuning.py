"""Tuning run of benchmarks/ucca_verdict_stability_rule.md (ucca8): candidates R and W on tuning base seeds.

Usage: ucca_verdict_stability_tuning.py BASE[,BASE...] CANDIDATE[,CANDIDATE...] OUT.jsonl
Candidates: K (the book preset as it is), R (n_restarts 64), W (wine on inner seeds 0-9), WR (both).
Per base seed and candidate, the datasets of the six moving rows run through the package's own ``_dataset``;
per row: its word (the chapter's verdict functions, unchanged) and the per-inner-seed values.
"""

import json
import sys
import time

import numpy as np

from explorables.ucca.claims import baselines_verdict, recovery_verdict
from explorables.ucca.experiment import UCCAConfig, _dataset

CANDIDATES = {
    "K": ({}, ("clustered", "breast_cancer", "wine")),
    "R": ({"n_restarts": 64}, ("clustered", "breast_cancer", "wine")),
    "W": ({"seeds": tuple(range(10))}, ("wine",)),
    "WR": ({"seeds": tuple(range(10)), "n_restarts": 64}, ("wine",)),
}

bases, names, out = [int(b) for b in sys.argv[1].split(",")], sys.argv[2].split(","), sys.argv[3]
with open(out, "a") as f:
    for b in bases:
        for c in names:
            extra, datasets = CANDIDATES[c]
            cfg = UCCAConfig(seed=b, **extra)
            for ds in datasets:
                t0 = time.process_time()
                s, _ = _dataset(cfg, ds)
                v = {m: s[m]["values"] for m in ("oracle", "ucca", "ucca_no_faq", "ucca_scipy_starts", "random")}
                rows = {"recovery": recovery_verdict(v["ucca"], v["oracle"], v["random"])}
                for m in ("ucca_no_faq", "ucca_scipy_starts"):
                    rows[m] = baselines_verdict({ds: v["ucca"]}, {ds: {m: v[m]}})
                rec = {
                    "base": b,
                    "candidate": c,
                    "dataset": ds,
                    "cpu_s": round(time.process_time() - t0, 1),
                    "words": {k: w.split(":")[0] for k, w in rows.items()},
                    "verdicts": rows,
                    "values": v,
                }
                f.write(json.dumps(rec) + "\n")
                f.flush()
                print(
                    b, c, ds, rec["cpu_s"], rec["words"], {m: np.round(x, 2).tolist() for m, x in v.items()}, flush=True
                )
