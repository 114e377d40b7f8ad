"""Diagnosis only (benchmarks/tomato_mp_power.md, last section; no candidate, no package change): the outlier part
of the book preset on one fresh tuning base seed with ``n`` blob samples, its MMAs on the whole graph (as the page)
and on the reduced graph (``reduce=True``, patched in here only): CPU of each, how many (sample, fraction, method)
results differ, and from the whole-graph samples a bootstrap of the robustness row's word at 8, 16 and 24 samples.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_power_robust.py 121 16`` (tuning seeds >= 121 only).
"""

import sys
import time
from collections import Counter
from dataclasses import replace

import numpy as np

from explorables.tomato_mp import claims as C
from explorables.tomato_mp import experiment as E

seed, n = int(sys.argv[1]), int(sys.argv[2])
assert seed >= 121, "fresh tuning seeds only"
cfg = replace(E.TomatoMPConfig.preset("book"), seed=seed, n_seeds=n, workers=1)
whole_fn = E.run_tomato_mp
out = {}
for name in ("whole", "reduced"):
    E.run_tomato_mp = whole_fn if name == "whole" else (lambda *a, **k: whole_fn(*a, **{**k, "reduce": True}))
    c, w = time.process_time(), time.time()
    out[name], _ = E._outliers(cfg)
    print(f"{name}: CPU {time.process_time() - c:.1f} s, wall {time.time() - w:.1f} s (under load)", flush=True)
E.run_tomato_mp = whole_fn
true = out["whole"]["true"]
diff = sum(
    a[k]["n_clusters"] != b[k]["n_clusters"] or a[k]["ari"] != b[k]["ari"]
    for ra, rb in zip(out["whole"]["seed_runs"], out["reduced"]["seed_runs"], strict=True)
    for a, b in zip(ra, rb, strict=True)
    for k in ("mp_plain", "mp_robust")
)
ind = sum(
    a["ari_between"] != b["ari_between"]
    for ra, rb in zip(out["whole"]["seed_independence"], out["reduced"]["seed_independence"], strict=True)
    for a, b in zip(ra, rb, strict=True)
)
print(f"differing (sample, fraction, method) results: {diff} of {2 * n * 3}; independence ARIs: {ind} of {n * 3}")
for name in ("whole", "reduced"):
    share, gains = C.robustness_parts(out[name]["seed_runs"], true)
    g = gains["ToMATo on f"]
    sds = f"sd {np.std(share, ddof=1):.3f} / {np.std(g, ddof=1):.3f}"
    print(f"{name}: share {C._iv(share)}, gain {C._iv(g)} ({sds})")
    for k in (8, n):
        print(f"  first {k}: {C.robustness_verdict(share[:k], {'ToMATo on f': g[:k]})}")
share, gains = C.robustness_parts(out["whole"]["seed_runs"], true)
S, G = np.asarray(share), np.asarray(gains["ToMATo on f"])
rng = np.random.default_rng(0)
for k in (8, 16, 24):
    words = Counter()
    for _ in range(4000):
        i = rng.integers(0, n, k)
        words[C.robustness_verdict(S[i], {"ToMATo on f": G[i]}).split(":")[0]] += 1
    print(f"bootstrap of {k} whole-graph samples: {dict(words)}")
