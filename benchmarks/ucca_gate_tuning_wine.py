"""The W / Wz candidates of benchmarks/ucca_gate_rule.md: wine's signal gate on tuning seeds 100-104.

The script that printed benchmarks/ucca_gate_tuning_wine_out.txt (ch/ucca5), committed as it ran (recovered
from the helper's scratch copy). At that time ``experiment.wine_views`` still logged the features (candidate W);
wine is standardised since (candidate Wz, picked), so today both names run the standardised table: rerunning it
does not reproduce the W lines. Not rerun. Usage: ``PYTHONPATH=src python benchmarks/ucca_gate_tuning_wine.py``.
"""

import numpy as np
from sklearn.datasets import load_wine

from explorables.ucca import claims as C
from explorables.ucca import data as D
from explorables.ucca import experiment as E

table = load_wine()
logged = E.wine_views


def standardised():
    z = (table.data - table.data.mean(0)) / table.data.std(0)
    return D.TwoViews(z[:, :6], z[:, 6:], table.target.astype(int))


for name, fn in (("W", logged), ("Wz", standardised)):
    E.wine_views = fn
    for base in (100, 101, 102, 103, 104):
        cfg = E.UCCAConfig.preset("book", seed=base)
        s, _ = E._dataset(cfg, "wine")
        print(
            name,
            base,
            C.signal_gate(s["oracle"]["values"], s["random"]["values"]),
            "| oracle",
            np.round(s["oracle"]["values"], 2),
            "ucca",
            np.round(s["ucca"]["values"], 2),
            flush=True,
        )
