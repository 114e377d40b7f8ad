"""Read benchmarks/uggrh_noise_<base>.json (benchmarks/uggrh_noise.py): per unstable row, the effect, its spread and
where the spread comes from; and how many seeds the interval rule would need.

    python benchmarks/uggrh_noise_report.py 104
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats

# row -> (quantity per fit from per-query AP vectors, margin the interval is judged against)
ROWS = {
    "gain 32 bits (UGGRH - baseline)": (lambda f: f["uggrh"] - f["baseline"], 0.03),
    "control (UGGRH - control)": (lambda f: f["uggrh"] - f["control"], 0.03),
    "robust 32 bits: drop difference": (lambda f: (f["baseline0"] - f["baseline"]) - (f["uggrh0"] - f["uggrh"]), 0.01),
    "robust 32 bits: start (UGGRH - baseline at 0%)": (lambda f: f["uggrh0"] - f["baseline0"], -0.03),
    "robust vs control: drop difference": (
        lambda f: (f["baseline0"] - f["control"]) - (f["uggrh0"] - f["uggrh"]),
        0.01,
    ),
    "module: refinement cost": (lambda f: f["uggrh"] - f["no_refinement"], 0.01),
    "module: graph attention cost": (lambda f: f["uggrh"] - f["no_graph_attention"], 0.01),
    "module: fusion cost": (lambda f: f["uggrh"] - f["no_fusion"], 0.01),
    "imbalance gain, 0% images missing": (lambda f: f["uggrh_s0"] - f["baseline_s0"], 0.03),
    "imbalance gain, 100% images missing": (lambda f: f["uggrh_s1"] - f["baseline_s1"], 0.03),
}


KEYS = {
    "gain 32 bits (UGGRH - baseline)": ("uggrh", "baseline"),
    "control (UGGRH - control)": ("uggrh", "control"),
    "robust 32 bits: drop difference": ("uggrh0",),
    "robust 32 bits: start (UGGRH - baseline at 0%)": ("uggrh0",),
    "robust vs control: drop difference": ("uggrh0",),
    "module: refinement cost": ("no_refinement",),
    "module: graph attention cost": ("no_graph_attention",),
    "module: fusion cost": ("no_fusion",),
    "imbalance gain, 0% images missing": ("uggrh_s0",),
    "imbalance gain, 100% images missing": ("uggrh_s1",),
}


def seeds_needed(gap: float, sd: float, cap: int = 200) -> int:
    """Smallest n whose 95 % t half-width t(n-1) sd / sqrt(n) is below |gap| (the expected interval excludes the
    margin at the mean effect; half the base seeds would still straddle at exactly that n)."""
    for n in range(2, cap + 1):
        if stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n) < abs(gap):
            return n
    return cap


def main(base: int) -> None:
    d = json.loads(Path(__file__).with_name(f"uggrh_noise_{base}.json").read_text())
    splits, reps = d["splits"], d["reps"]
    fits = {(f["split"], f["rep"]): {k: np.asarray(v) for k, v in f["ap"].items()} for f in d["fits"]}
    print(f"base seed {base}: {len(splits)} splits x {reps} network seeds, {d['seconds']} s (under load)\n")
    print("| row | effect (mean over all fits) | sd per inner seed (book design) | training sd (within split) | "
          "query-set sd | rest of split sd | interval over the splits (book network seed) | margin | "
          "seeds for the interval to exclude the margin at this effect |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (q, margin) in ROWS.items():
        if any(k not in next(iter(fits.values())) for k in KEYS[name]):
            continue
        per_q = {k: q(f) for k, f in fits.items()}  # per-query AP differences
        x = np.array([[per_q[(s, r)].mean() for r in range(reps)] for s in splits])  # split x rep
        within = float(x.var(axis=1, ddof=1).mean())  # training noise variance
        between_means = float(x.mean(axis=1).var(ddof=1))
        split_var = max(between_means - within / reps, 0.0)
        query_var = float(np.mean([per_q[k].var(ddof=1) / per_q[k].size for k in per_q]))
        rest = max(split_var - query_var, 0.0)
        total_sd = float(np.sqrt(split_var + within))
        book = x[:4, 0]
        nb = len(book)
        t = stats.t.ppf(0.975, nb - 1)
        lo, hi = book.mean() - t * book.std(ddof=1) / np.sqrt(nb), book.mean() + t * book.std(ddof=1) / np.sqrt(nb)
        effect = float(x.mean())
        print(f"| {name} | {effect:+.3f} | {total_sd:.3f} | {np.sqrt(within):.3f} | {np.sqrt(query_var):.3f} | "
              f"{np.sqrt(rest):.3f} | {book.mean():+.3f} [{lo:+.3f}, {hi:+.3f}] | {margin:+.2f} | "
              f"{seeds_needed(effect - margin, total_sd)} |")  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 104)
