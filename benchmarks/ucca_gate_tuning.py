"""Runs the candidates of benchmarks/ucca_gate_rule.md on the tuning base seeds (>= 100 only) and prints, per
seed, every signal gate, the identifiable gate, the Gaussian control's word under G3 (its first 3 seeds) and G8,
the ablation rows and the run time (measured under load; a limit, never a target).

    PYTHONPATH=src python benchmarks/ucca_gate_tuning.py [--wz]

(Its output in ucca_gate_tuning_out.txt is from commit a6cb36f: logged wine, Gaussian control on 8 seeds,
ablations on every dataset. Since then `wine_views` standardises (what `--wz` did), the control has 3 seeds and
the ablations run on the clustered data only, so a rerun prints those.)
"""

from __future__ import annotations

import sys
import time

import numpy as np

from explorables.ucca import claims as C
from explorables.ucca import data as D
from explorables.ucca import experiment as E

TUNING_SEEDS = (100, 101, 102, 103, 104)


def main() -> None:
    if "--wz" in sys.argv:  # candidate Wz: wine standardised instead of logged
        table = __import__("sklearn.datasets", fromlist=["load_wine"]).load_wine()
        z = (table.data - table.data.mean(0)) / table.data.std(0)
        D.wine_views = lambda: D.TwoViews(z[:, :6], z[:, 6:], table.target.astype(int))
        E.wine_views = D.wine_views
    for base in TUNING_SEEDS:
        cfg = E.UCCAConfig.preset("book", seed=base, datasets=(*E.BOOK_DATASETS, "digits"))
        t = time.perf_counter()
        res = E.run(cfg)
        seconds = time.perf_counter() - t
        rows = C.claims(res)
        timings = res.summary["timings"]
        print(f"== base seed {base}: run {seconds:.1f} s with digits; parts {timings} (measured under load)")
        for r in rows:
            if r.kind == "gate":
                print(f"  gate {r.name}: {r.verdict[:90]} | {r.measured}")
        g = res.summary["gaussian"]["ucca_over_oracle"]["values"]
        print(f"  control G8: {C.gaussian_control_verdict(g)[:80]}  per seed {np.round(g, 2).tolist()}")
        print(f"  control G3: {C.gaussian_control_verdict(g[:3])[:80]}")
        for r in rows:
            if r.kind == "claim":
                print(f"  claim {r.claim[:60]}: {r.verdict[:140]}")
                print(f"        {r.measured[:300]}")


if __name__ == "__main__":
    main()
