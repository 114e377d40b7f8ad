"""Reader of benchmarks/tomato_mp_robust_rule.md: every row's word per tuning seed for C0, R32, R40 and R48, the gates'
headroom, the cost projection, the bootstrap D2, equality of the first 8 samples reduced vs whole, and the decision.

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_robust_read.py benchmarks/tomato_mp_robust_12[234].json``.
"""

import copy
import json
import sys
from collections import Counter
from dataclasses import replace

import numpy as np

from explorables.core.tables import apply_gates
from explorables.core.verdicts import interval
from explorables.tomato_mp import claims as C
from explorables.tomato_mp.experiment import TomatoMPConfig, TomatoMPResults

PAGE_QUIET, BUDGET, HURT_ROOM, ROOM = 33.4, 55.0, C.HURT + 0.05, 0.70
KEEP = {"ToMAToMP clusters with several functions at once": "partly",
        "Strong improvement over non-topological and topological baselines": "partly"}
ROBUST = "ToMAToMP is robust to outliers"


def cut(summary: dict, n: int) -> dict:
    s = copy.deepcopy(summary)
    o = s["outliers"]
    for key in ("seeds", "seed_runs", "seed_independence", "tomato_wrong"):
        o[key] = o[key][:n]
    for d in s["datasets"].values():
        d["seeds"] = d["seeds"][:n]
    return s


def rows_of(seed: int, n: int, summary: dict):
    cfg = replace(TomatoMPConfig.preset("book"), seed=seed, n_seeds=n, workers=1)
    return apply_gates(C.claims(TomatoMPResults(cfg, summary)))


def headroom(seed: int, summary: dict) -> list[str]:
    """Eligibility 1 beyond the gates' words: outliers_hurt's lower end, one_not_enough's room, k_matters' minimum."""
    o = summary["outliers"]
    extra = [w - c for w, c in o["tomato_wrong"]]
    low = interval(extra).low
    tf = summary["two_functions"]["seeds"]
    best = max(max(one["f"]["ari"], one["h"]["ari"]) for one in tf)
    alone = sum(C.recovers(one["f"], one["true"]) or C.recovers(one["h"], one["true"]) for one in tf)
    fr = sorted({i["fraction"] for one in o["seed_independence"] for i in one})
    kmin = min(C.k_distinct(o["seed_runs"], fr))
    ok = low >= HURT_ROOM and best <= ROOM and alone == 0 and kmin >= C.K_COUNTS
    return [ok, f"hurt low {low:.3f} (>= {HURT_ROOM:.2f}), best single ARI {best:.3f} (<= {ROOM}), "
            f"alone recovers {alone}, k_matters min distinct {kmin}"]


data = [json.load(open(p)) for p in sys.argv[1:]]
seeds = [d["seed"] for d in data]
words: dict[str, dict[int, dict[str, str]]] = {}
elig: dict[str, bool] = {}
for cand, src, n in (("C0", "C0", 8), ("R32", "R48", 32), ("R40", "R48", 40), ("R48", "R48", 48)):
    print(f"\n== {cand} ==")
    ok_all = True
    for d in data:
        s = cut(d[src]["summary"], n)
        rows = rows_of(d["seed"], n, s)
        w = {r.claim: r.outcome for r in rows}
        words.setdefault(cand, {})[d["seed"]] = w
        cost = PAGE_QUIET
        if src == "R48":
            # the R candidate's CPU at n samples: the parts that scale with n_seeds (outliers, datasets) prorated
            pc = d["R48"]["part_cpu"]
            scaled = (pc["outliers"] + pc["datasets"]) * n / 48 + pc["k_sweep"] + pc["two_functions"]
            cost = PAGE_QUIET + scaled - sum(d["C0"]["part_cpu"].values())
        gates_ok = all(r.outcome == "pass" for r in rows if r.kind in ("check", "gate"))
        room_ok, room = headroom(d["seed"], s)
        keep_ok = all(w[k] == v for k, v in KEEP.items())
        ok = gates_ok and room_ok and keep_ok and cost <= BUDGET
        ok_all &= ok
        print(f"seed {d['seed']}: eligible {ok} (gates {gates_ok}, room {room_ok}, keep {keep_ok}, "
              f"projected page {cost:.1f} s); {room}")
        for r in rows:
            print(f"   [{r.kind}] {r.claim}: {r.verdict[:160]}")
    elig[cand] = ok_all
    print(f"{cand}: robustness words {[words[cand][s][ROBUST] for s in seeds]}; eligible on all: {ok_all}")

print("\n== D2: bootstrap of the pooled reduced samples ==")
S, G = [], []
for d in data:
    o = d["R48"]["summary"]["outliers"]
    share, gains = C.robustness_parts(o["seed_runs"], o["true"])
    S += share
    G += gains["ToMATo on f"]
S, G = np.asarray(S), np.asarray(G)
print(f"pooled {len(S)}: share {C._iv(S)} (sd {S.std(ddof=1):.3f}), gain {C._iv(G)} (sd {G.std(ddof=1):.3f}); "
      f"word on all: {C.robustness_verdict(S, {'ToMATo on f': G})}")
d2: dict[str, tuple[str, float]] = {}
for n in (8, 32, 40, 48):
    rng = np.random.default_rng(0)
    cnt = Counter()
    for _ in range(4000):
        i = rng.integers(0, len(S), n)
        cnt[C.robustness_verdict(S[i], {"ToMATo on f": G[i]}).split(":")[0]] += 1
    real = {k: v for k, v in cnt.items() if k != "unclear"}
    modal = max(real, key=real.get) if real else "unclear"
    d2[f"R{n}"] = (modal, cnt[modal] / 4000)
    print(f"n={n}: {dict(cnt)}; modal real word {modal}, share {cnt[modal] / 4000:.3f}")

print("\n== equality of the first 8 samples, reduced vs whole ==")
for d in data:
    a, b = d["C0"]["summary"], d["R48"]["summary"]
    diff = tot = 0
    for ra, rb in zip(a["outliers"]["seed_runs"], b["outliers"]["seed_runs"][:8], strict=True):
        for x, y in zip(ra, rb, strict=True):
            for k in ("mp_plain", "mp_robust"):
                tot += 1
                diff += x[k]["n_clusters"] != y[k]["n_clusters"] or x[k]["ari"] != y[k]["ari"]
    pairs = [(x, y) for ra, rb in zip(a["outliers"]["seed_independence"], b["outliers"]["seed_independence"][:8],
                                      strict=True) for x, y in zip(ra, rb, strict=True)]
    ind = sum(x["ari_between"] != y["ari_between"] for x, y in pairs)
    ds = dtot = 0
    for name in a["datasets"]:
        for x, y in zip(a["datasets"][name]["seeds"], b["datasets"][name]["seeds"][:8], strict=True):
            for k in ("mp_plain", "mp_robust"):
                dtot += 1
                ds += x[k]["n_clusters"] != y[k]["n_clusters"] or x[k]["ari"] != y[k]["ari"]
    print(f"seed {d['seed']}: outlier results differing {diff} of {tot}, independence ARIs {ind} of {len(pairs)}, "
          f"data-set results {ds} of {dtot}; CPU C0 {d['C0']['cpu_s']:.1f} s {d['C0']['part_cpu']}, "
          f"R48 {d['R48']['cpu_s']:.1f} s {d['R48']['part_cpu']}")

print("\n== decision ==")
d1 = {c: len({words[c][s][ROBUST] for s in seeds}) == 1 and words[c][seeds[0]][ROBUST] in ("yes", "no", "partly")
      for c in words}
for c in words:
    extra = f", D2 {d2[c][0]} {d2[c][1]:.3f}" if c in d2 else ""
    print(f"{c}: eligible {elig[c]}, D1 {d1[c]}{extra}")
if elig["C0"] and d1["C0"]:
    print("C0 stays (eligible and D1)")
else:
    win = next((c for c in ("R32", "R40", "R48") if elig[c] and d1[c] and d2[c][1] >= 0.80), None)
    print(f"adopt {win}" if win else "no candidate passes: C0 stays")
