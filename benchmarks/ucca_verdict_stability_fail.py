"""Diagnosis (ucca8): on the trials where UCCA or an ablation misses, is it the search or the objective?

Per trial: Σρ² of UCCA's step-2 pairing, of the truth, of FAQ started at the truth; and UCCA's score with more
FAQ runs or more screened starts (the same draws otherwise)."""

import copy
import sys
import time

import numpy as np

from explorables.ucca import experiment as E
from explorables.ucca.cca import sum_squared_correlations, variate_correlations, whiten
from explorables.ucca.data import unpaired
from explorables.ucca.method import ucca

for arg in sys.argv[1:]:
    b, ds, s = arg.split(":")
    b, s = int(b), int(s)
    cfg = E.UCCAConfig(seed=b)
    rng = np.random.default_rng([cfg.seed, s, E.DATASETS.index(ds)])
    train, test = E.load_split(cfg, ds, rng)
    X, Y, sh = unpaired(train, rng)
    truth = np.argsort(sh)
    Xw, Yw = whiten(X, 3, name="X"), whiten(Y, 3, name="Y")
    st = dict(n_components=2, d=3, n_restarts=32, n_faq=4, n_alternations=10)
    out = {}
    for name, kw in {
        "book": {},
        "faq8": {"n_faq": 8},
        "r64": {"n_restarts": 64},
        "r64faq8": {"n_restarts": 64, "n_faq": 8},
        "r128faq16": {"n_restarts": 128, "n_faq": 16},
    }.items():
        t = time.process_time()
        f = ucca(X, Y, rng=copy.deepcopy(rng), **{**st, **kw})
        out[name] = (
            round(float(np.mean(variate_correlations(f.fit, test.X, test.Y))), 2),
            round(f.qap_objective, 4),
            round(time.process_time() - t, 1),
        )
    print(
        f"{b} {ds} {s}: truth {sum_squared_correlations(Xw, Yw, truth):.4f} "
        f"basin {E.truth_basin_objective(Xw, Yw, truth):.4f} | "
        + "; ".join(f"{k} score {v[0]} Σρ² {v[1]} cpu {v[2]}" for k, v in out.items()),
        flush=True,
    )
