"""Reads the runner's JSON for benchmarks/tomato_mp_power_rule.md: criteria 1-4 per candidate n.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_power_read.py OUT.json``.
"""

import json
import sys
from collections import Counter

import numpy as np

from explorables.core.verdicts import compare
from explorables.tomato_mp.claims import ARI_MARGIN, RECOVERED_ARI, recovers, two_functions_verdict

QUIET_PAGE_S, BOUND_S = 32.7, 50.0
res = json.load(open(sys.argv[1]))


def values(samples):
    alone = [recovers(o["f"], o["true"]) or recovers(o["h"], o["true"]) for o in samples]
    best = [max(o["f"]["ari"], o["h"]["ari"]) for o in samples]
    pair = [o["f_and_h"]["ari"] for o in samples]
    gain = [p - b for p, b in zip(pair, best, strict=True)]
    return alone, best, np.array(pair), np.array(gain)


def words(pair, gain):
    return two_functions_verdict(pair, gain).split(":")[0], compare(pair, RECOVERED_ARI), compare(gain, ARI_MARGIN)


pooled = [o for s in res.values() for o in s["seeds"]]
cpu = float(np.mean([s["cpu_s"] for s in res.values()]))
print(f"tuning seeds {list(res)}: {len(pooled)} samples; part CPU per 48 samples {cpu:.1f} s (under load)")
rng = np.random.default_rng(0)
_, _, P, G = values(pooled)
print(
    f"pooled: pair {P.mean():.3f} sd {P.std(ddof=1):.3f}; gain {G.mean():.3f} sd {G.std(ddof=1):.3f}; "
    f"single recovers on {sum(values(pooled)[0])} of {len(pooled)}; best single max {max(values(pooled)[1]):.2f}"
)
for n in (16, 24, 32, 48):
    c1, seedw = True, []
    for s, r in res.items():
        alone, best, pair, gain = values(r["seeds"][:n])
        c1 &= not any(alone) and max(best) <= 0.70
        w = words(pair, gain)
        seedw.append(w)
        print(
            f"  n={n} seed {s}: {two_functions_verdict(pair, gain)}; single recovers {sum(alone)}, "
            f"best single max {max(best):.2f}"
        )
    c2 = len(set(seedw)) == 1 and seedw[0][2] == "yes"
    boot = Counter()
    for _ in range(4000):
        idx = rng.integers(0, len(pooled), n)
        boot[words(P[idx], G[idx])] += 1
    modal, count = boot.most_common(1)[0]
    share = count / 4000
    extra = cpu * (n - 16) / 48
    proj = QUIET_PAGE_S + max(extra, 0.0)
    c3, c4 = share >= 0.90, proj <= BOUND_S
    print(
        f"n={n}: c1 room {c1}; c2 one word {c2} {seedw}; c3 bootstrap modal {modal} share {share:.3f} "
        f"({dict(boot)}) {c3}; c4 projected {proj:.1f} s {c4}; PASS {c1 and c2 and c3 and c4}"
    )
