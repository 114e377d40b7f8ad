"""Runs the candidates of benchmarks/ucca_ablation_rule.md on tuning base seeds 100-102 (>= 100 only): per seed,
the book run as it is and BW (ablations also on breast cancer and wine), back to back in one process; prints the
time ratios (B's from the per-part timings) and, for the record only, the ablation rows' verdicts.

    PYTHONPATH=src python benchmarks/ucca_ablation_tuning.py
"""

from __future__ import annotations

import time

from explorables.ucca import claims as C
from explorables.ucca import experiment as E

TUNING_SEEDS = (100, 101, 102)
BW = ("clustered", "breast_cancer", "wine")


def main() -> None:
    for base in TUNING_SEEDS:
        times, timings, rows = {}, {}, {}
        for name, ablate in (("current", ("clustered",)), ("BW", BW)):
            cfg = E.UCCAConfig.preset("book", seed=base, ablation_datasets=ablate)
            t = time.perf_counter()
            res = E.run(cfg)
            times[name], timings[name], rows[name] = time.perf_counter() - t, res.summary["timings"], C.claims(res)
        extra_bc = timings["BW"]["breast_cancer_s"] - timings["current"]["breast_cancer_s"]
        b = times["current"] + extra_bc
        print(
            f"== base seed {base} (under load): current {times['current']:.1f} s, BW {times['BW']:.1f} s "
            f"(ratio {times['BW'] / times['current']:.2f}), B ~{b:.1f} s (ratio {b / times['current']:.2f})"
        )
        print(f"   parts current { ({k: round(v, 1) for k, v in timings['current'].items()}) }")
        print(f"   parts BW      { ({k: round(v, 1) for k, v in timings['BW'].items()}) }")
        for r in rows["BW"]:
            if r.claim.startswith("Ablation"):
                print(f"   {r.claim[:50]}: {r.verdict[:200]}")
                print(f"      {r.measured[:300]}")


if __name__ == "__main__":
    main()
