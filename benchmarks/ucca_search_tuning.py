"""Tuning run of benchmarks/ucca_search_rule.md (ucca9): UCCA's start search, candidates K, B256, B1024.

Usage: ucca_search_tuning.py BASE[,BASE...] OUT.jsonl [CANDIDATE,...] [PLAN]
(round 2, benchmarks/ucca_search2_rule.md: candidates K,B256, plan "r2"; runs at commit 9f067c8 or later while
``ucca(..., n_candidates=...)`` exists).
Per (dataset, base seed, inner seed), the book trial's data and generator (as ``experiment.trial`` draws them);
per candidate, UCCA fitted from a copy of the generator in the same state (K is then the book's UCCA exactly),
and the FAQ-off ablation on that fit's best-ranked start. The truth is used only to score: the step-2 Σρ² against
the Σρ² FAQ reaches from the truth (``truth_basin_objective``), and the test correlation against the oracle's.
"""

import copy
import json
import sys
import time

import numpy as np

from explorables.ucca import experiment as E
from explorables.ucca.cca import cca, variate_correlations, whiten
from explorables.ucca.data import unpaired
from explorables.ucca.method import ucca

CANDIDATES = {"K": 0, "B256": 256, "B1024": 1024}
PLANS = {
    "r1": [("clustered", range(6)), ("breast_cancer", range(6)), ("gaussian", range(2)), ("wine", range(2))],
    "r2": [("breast_cancer", range(6)), ("clustered", range(3)), ("gaussian", range(2))],
}

bases, out = [int(b) for b in sys.argv[1].split(",")], sys.argv[2]
if len(sys.argv) > 3:
    CANDIDATES = {n: CANDIDATES[n] for n in sys.argv[3].split(",")}
PLAN = PLANS[sys.argv[4] if len(sys.argv) > 4 else "r1"]
with open(out, "a") as f:
    for ds, inner in PLAN:
        for b in bases:
            cfg = E.UCCAConfig(seed=b)
            for s in inner:
                rng = np.random.default_rng([cfg.seed, s, E.DATASETS.index(ds)])
                train, test = E.load_split(cfg, ds, rng)
                X, Y, shuffle = unpaired(train, rng)
                truth = np.argsort(shuffle)
                d, k = cfg.d_reduced, cfg.n_components
                Xw, Yw = whiten(X, d, name="X"), whiten(Y, d, name="Y")
                oracle = float(np.mean(variate_correlations(cca(train.X, train.Y, k, d=d), test.X, test.Y)))
                basin = E.truth_basin_objective(Xw, Yw, truth)
                settings = dict(
                    n_components=k, d=d, n_restarts=cfg.n_restarts, n_faq=cfg.n_faq, n_alternations=cfg.n_alternations
                )
                rec = {"dataset": ds, "base": b, "inner": s, "oracle": oracle, "basin": basin}
                for name, nc in CANDIDATES.items():
                    r = copy.deepcopy(rng)
                    t0 = time.process_time()
                    fit = ucca(X, Y, n_candidates=nc, rng=r, **settings)
                    cpu = time.process_time() - t0
                    no_faq = ucca(X, Y, solver="none", top_start=fit.top_start, rng=r, **settings)
                    rec[name] = {
                        "cpu": round(cpu, 2),
                        "score": float(np.mean(variate_correlations(fit.fit, test.X, test.Y))),
                        "qap": fit.qap_objective,
                        "no_faq": float(np.mean(variate_correlations(no_faq.fit, test.X, test.Y))),
                        "search_miss": bool(fit.qap_objective < basin - 1e-4),
                    }
                f.write(json.dumps(rec) + "\n")
                f.flush()
                print(
                    ds, b, s, f"oracle {oracle:.2f} basin {basin:.4f} |",
                    " ".join(
                        f"{n} {v['score']:.2f}/{v['qap']:.4f}{'*' if v['search_miss'] else ''} nofaq {v['no_faq']:.2f} "
                        f"{v['cpu']}s;"
                        for n, v in ((n, rec[n]) for n in CANDIDATES)
                    ),
                    flush=True,
                )  # fmt: skip
