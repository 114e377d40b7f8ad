"""Diagnosis of the robustness row's noise (benchmarks/tomato_mp_spread_rule.md, last section): the outlier part
of the book preset on one tuning base seed with ``n`` samples; per-sample recovered share and paired gain over
ToMATo on f, their sd, and how many samples each part's 95% t-interval would need to clear its threshold.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_robust_noise.py 104 16``.
"""

import sys
import time
from dataclasses import replace

import numpy as np
from scipy.stats import t as student

from explorables.tomato_mp import claims as C
from explorables.tomato_mp.experiment import PARTS, TomatoMPConfig

seed, n = int(sys.argv[1]), int(sys.argv[2])
cfg = replace(TomatoMPConfig.preset("book"), seed=seed, n_seeds=n, workers=1)
t0 = time.time()
out, _ = PARTS["outliers"](cfg)
share, gains = C.robustness_parts(out["seed_runs"], out["true"])
print(f"base seed {seed}, {n} samples, wall {time.time() - t0:.1f} s (under load)")
for i, runs in enumerate(out["seed_runs"]):
    print(
        f"  sample {out['seeds'][i]}: "
        + "; ".join(
            f"q={r['fraction']}: MP K={r['mp_robust']['n_clusters']}/{r['mp_robust']['n_labels']} "
            f"ARI {r['mp_robust']['ari']:.2f}, "
            f"ToMATo K={r['tomato_ref']['n_clusters']} ARI {r['tomato_ref']['ari']:.2f}"
            for r in runs
        )
    )


def need(values, threshold):
    """Samples at which mean - t(n-1) * sd / sqrt(n) >= threshold, with this mean and sd (None: mean below)."""
    m, sd = float(np.mean(values)), float(np.std(values, ddof=1))
    if m <= threshold:
        return None
    for k in range(2, 1000):
        if m - student.ppf(0.975, k - 1) * sd / np.sqrt(k) >= threshold:
            return k
    return None


for name, v, thr in (
    ("recovered share", share, C.ROBUST_SHARE),
    ("gain over ToMATo on f", gains["ToMATo on f"], C.ARI_MARGIN),
    ("gain over the DTM alone", gains[C.CONTROL], C.ARI_MARGIN),
):
    for k in (8, n):
        print(f"{name}, first {k}: {C._iv(v[:k])} vs {thr} -> {C.compare(v[:k], thr)}")
    print(f"{name}: sd {np.std(v, ddof=1):.3f}; samples needed to clear {thr} at this mean and sd: {need(v, thr)}")
print("robustness verdict (all samples):", C.robustness_verdict(share, {"ToMATo on f": gains["ToMATo on f"]}))
