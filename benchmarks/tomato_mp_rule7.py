"""benchmarks/tomato_mp_reduce_rule.md: the book preset's two-function part on one tuning base seed, four ways
({A: sd 0.6, B: sd 1.0} x {whole graph, reduced MMA}), with the quantities of criteria R, 1 and 2.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_rule7.py 112 [113 ...]``
"""

import sys
import time
from dataclasses import replace

import numpy as np

from explorables.tomato_mp import claims as C
from explorables.tomato_mp import experiment as E

DESIGNS = {"A": 0.6, "B": 1.0}
reduced = E.run_tomato_mp


def whole(*args, **kwargs):
    return reduced(*args, **{**kwargs, "reduce": False})


def words(tf):
    alone, pair, gain = C.two_function_values(tf)
    return {
        "gate": C.one_not_enough_gate(alone),
        "level": C.compare(pair, C.RECOVERED_ARI),
        "gain": C.compare(gain, C.ARI_MARGIN),
        "claim": C.two_functions_verdict(pair, gain),
        "pair": pair,
        "alone": alone,
        "gain_values": gain,
    }


for seed in map(int, sys.argv[1:]):
    for design, spread in DESIGNS.items():
        cfg = replace(E.TomatoMPConfig.preset("book"), seed=seed, quadrant_spread=spread)
        out = {}
        for mode, fn in (("whole", whole), ("reduced", reduced)):
            E.run_tomato_mp = fn
            t = time.process_time()
            tf, curves = E.PARTS["two_functions"](cfg)
            out[mode] = (tf, curves, time.process_time() - t)
        E.run_tomato_mp = reduced
        (ta, ca, cpu_a), (tb, cb, cpu_b) = out["whole"], out["reduced"]
        same = {name: 0 for name in ("f", "h", "f_and_h")}
        for one_a, one_b, lab_a, lab_b in zip(ta["seeds"], tb["seeds"], ca["seeds"], cb["seeds"], strict=True):
            for name in same:
                same[name] += (one_a[name] == one_b[name]) and bool(np.array_equal(lab_a[name], lab_b[name]))
        print(
            f"== seed {seed} design {design} (sd {spread}): CPU whole {cpu_a:.1f} s, reduced {cpu_b:.1f} s; "
            f"identical (of {len(ta['seeds'])}) {same}",
            flush=True,
        )
        for mode, (tf, _, _) in out.items():
            w = words(tf)
            best = [max(one["f"]["ari"], one["h"]["ari"]) for one in tf["seeds"]]
            n_rec = sum(C.recovers(one["f_and_h"], one["true"]) for one in tf["seeds"])
            print(
                f"   {mode:8s}: single recovers on {int(sum(w['alone']))}; best single ARI max {max(best):.3f} "
                f"mean {np.mean(best):.3f}; pair ARI mean {np.mean(w['pair']):.4f} {C._iv(w['pair'])} (recovers on "
                f"{n_rec}); gain {C._iv(w['gain_values'])}; "
                f"gate {w['gate']}; level {w['level']}; gain part {w['gain']}; claim {w['claim']}",
                flush=True,
            )
