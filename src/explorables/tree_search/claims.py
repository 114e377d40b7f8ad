"""The chapter's claims table: each claim of the abstract, our setting, our number, a verdict.

Verdicts are computed from the measured numbers with the criteria written next to each claim,
so the table in the book is never typed by hand.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from ..core.tables import markdown_table as table
from .experiment import TreeSearchResults


def _measured(results: TreeSearchResults) -> dict[str, dict[str, Any]]:
    """Every tree measured on the eta grid: synthetic families and real trees."""
    s = results.summary
    return {**s["families"], **{k: v for k, v in s["real"].items() if "etas" in v}}


def dendrograms(results: TreeSearchResults) -> dict[str, dict[str, Any]]:
    """The dendrogram runs (one per learned predictor), by summary key."""
    return {k: v for k, v in results.summary["real"].items() if "pca_dims" in v}


def wins_up_to(f: dict[str, Any]) -> int:
    """The largest eta up to which spine search's mean beats centroid search's mean at every grid point."""
    best = -1
    for eta, sp, ce in zip(f["etas"], f["spine_mean"], f["centroid_mean"], strict=True):
        if sp < ce:
            best = eta
        else:
            break
    return best


def claims(results: TreeSearchResults) -> list[Claim]:
    """Evaluate the paper's claims on ``results`` (criteria in each entry)."""
    cfg, s = results.config, results.summary
    rows: list[Claim] = []
    trees = _measured(results)

    # 1. Doubling search on a path: at most 2 ceil(log2(eta+1)) + 1 queries.
    if "path" in s["families"]:
        p = s["families"]["path"]
        ok = all(m <= 2 * math.ceil(math.log2(e + 1)) + 1 for e, m in zip(p["etas"], p["spine_max"], strict=True))
        rows.append(
            Claim(
                "Sorted array (a path): doubling binary search needs O(log η) queries",
                f"path on {p['n']:,} vertices, η ∈ {{{', '.join(map(str, p['etas']))}}}, "
                f"{cfg.targets_per_eta} targets each",
                f"worst {p['spine_max'][-1]} queries at η = {p['etas'][-1]} "
                f"(2⌈log₂(η+1)⌉+1 = {2 * math.ceil(math.log2(p['etas'][-1] + 1)) + 1}); centroid "
                f"(binary search) ≈ {np.mean(p['centroid_mean']):.1f}",
                "yes" if ok else "no: a search exceeded 2⌈log₂(η+1)⌉+1",
            )
        )

    # 2. No O(log eta) algorithm on trees: complete binary tree, prediction at the root.
    lb = s["lower_bound"]
    last = lb["rows"][-1]
    rows.append(
        Claim(
            "On trees no algorithm achieves O(log η)",
            f"complete binary tree ({lb['n']:,} vertices), prediction at the root, target at depth η ≤ {last['eta']}",
            f"at η = {last['eta']} every algorithm needs ≥ ⌈η/2⌉ = {last['counting_bound']} (counting: 2^η targets, "
            f"≤ 4 answers per query) vs log₂(η+1) = {math.log2(last['eta'] + 1):.1f}; ours used {last['spine_max']}, "
            f"centroid {last['centroid_max']}; "
            f"worst grows by {lb['spine_worst_slope_per_eta']:.2f} queries per unit of η",
            "yes: linear in η, on a family whose pathwidth grows with n"
            if lb["spine_worst_slope_per_eta"] > 0.4
            else "no: the worst case did not grow linearly",
        )
    )

    # 3. O(k log eta): our explicit bound never exceeded.
    st = s["small_trees"]
    searches = sum(sum(f["samples"]) for f in trees.values())
    viol = sum(f["bound_violations"] for f in trees.values()) + st["bound_violations"]
    dends = dendrograms(results)
    viol += sum(d["bound_violations"] for d in dends.values())
    dend_searches = sum(d["queries"] for d in dends.values())
    ks = sorted({f["pathwidth"] for f in trees.values()})
    rows.append(
        Claim(
            "O(k log η) queries on trees of pathwidth k",
            f"our bound 2 + k(2⌈log₂(η+1)⌉+1), k = exact pathwidth ({', '.join(map(str, ks))}); "
            f"{len(trees)} trees × η grid, the dendrograms, and all {st['pairs_checked']:,} (target, prediction) "
            f"pairs on the trees with ≤ {st['max_n']} vertices",
            f"{viol} violations in {searches + st['pairs_checked'] + dend_searches:,} "
            f"searches; on the small trees max(queries − bound) = {st['worst_slack']}"
            + (" (the bound is attained)" if st["worst_slack"] == 0 else ""),
            "yes (for our reconstruction of the algorithm)" if viol == 0 else f"no: {viol} searches exceeded the bound",
        )
    )

    # 4. Existential optimality (a lower bound construction): only the counting bound measured.
    rows.append(
        Claim(
            "The O(k log η) bound is existentially optimal",
            "no construction of the paper's lower-bound trees; only the complete binary tree above",
            f"complete binary tree: pathwidth {lb['pathwidth']}, "
            f"worst {last['spine_max']} queries at η = {last['eta']}",
            "partly: consistent with the lower bound, but its Ω(k log η) family is not reproduced",
        )
    )

    # 5. Real inputs: notably fewer queries than the non-prediction algorithm.
    real = {k: v for k, v in s["real"].items() if "etas" in v}
    win = {k: wins_up_to(v) for k, v in real.items()}
    at1 = {
        k: (v["spine_mean"][v["etas"].index(1)], v["centroid_mean"][v["etas"].index(1)])
        for k, v in real.items()
        if 1 in v["etas"]
    }
    learned = "; ".join(
        f"{d['pca_dims']}-D PCA (median η = {d['eta_median']:.0f}): spine {d['spine_mean']:.2f}, "
        f"robust {d['robust_mean']:.2f}, centroid {d['centroid_mean']:.2f}"
        for d in dends.values()
    )
    better = [d["pca_dims"] for d in dends.values() if d["spine_mean"] < d["centroid_mean"]]
    rows.append(
        Claim(
            "On real-life inputs, notably fewer queries than the non-prediction algorithm",
            "ASTs and a directory tree (η set by us); digits dendrogram with learned predictions "
            "(nearest neighbour after PCA)",
            "; ".join(f"{k}: better up to η = {w}" for k, w in win.items())
            + ("; at η = 1: " + ", ".join(f"{a:.1f} vs {b:.1f}" for a, b in at1.values()) if at1 else "")
            + f"; dendrogram, mean queries: {learned}",
            "partly: it depends on the prediction's quality"
            + (
                f": the learned prediction wins with {', '.join(f'{d}-D' for d in better)} PCA"
                if better
                else ": our learned predictions lose to centroid search on average"
            )
            + (
                f" and loses with {', '.join(f'{d}-D' for d in lost)} PCA"
                if (lost := [d["pca_dims"] for d in dends.values() if d["pca_dims"] not in better])
                else ""
            )
            + "; with η set by us, it wins only for small η",
        )
    )

    # 6. Our robust variant: never more than 2 (floor(log2 n) + 1).
    rob = sum(f["robust_violations"] for f in trees.values()) + st["robust_violations"]
    rows.append(
        Claim(
            "(ours) Robust variant: never worse than 2× the centroid bound, equal to spine search when that is cheap",
            "spine search for ⌊log₂ n⌋+1 queries, then centroid search; same searches as above",
            f"{rob} violations",
            "yes" if rob == 0 else "no",
        )
    )

    # 7. Exact pathwidth and the centroid baseline.
    rows.append(
        Claim(
            "(ours) Exact pathwidth of trees; centroid search ≤ ⌊log₂ n⌋+1 and its gap to the optimum",
            f"all {st['trees_checked']} trees with ≤ {st['max_n']} vertices vs brute-force vertex separation; "
            f"exact optimum on all trees with ≤ {cfg.optimal_max_n} vertices",
            f"{st['pathwidth_mismatches']} pathwidth mismatches; {st['centroid_bound_violations']} centroid bound "
            f"violations; centroid optimal on {st['centroid_optimal_fraction']:.0%} of trees, "
            f"at most {st['centroid_max_gap']} query above",
            "yes" if st["pathwidth_mismatches"] == 0 and st["centroid_bound_violations"] == 0 else "no",
        )
    )
    return rows


def eta_table(results: TreeSearchResults) -> str:
    """Mean queries per eta for spine search / robust / centroid, every tree measured on the grid."""
    trees = _measured(results)
    etas = sorted({e for f in trees.values() for e in f["etas"]})
    header = ("tree", "n", "pw", *[f"η={e}" for e in etas])
    rows = []
    for name, f in trees.items():
        cells = []
        for e in etas:
            if e in f["etas"]:
                i = f["etas"].index(e)
                cells.append(f"{f['spine_mean'][i]:.1f} / {f['robust_mean'][i]:.1f} / {f['centroid_mean'][i]:.1f}")
            else:
                cells.append("–")
        rows.append((name, f"{f['n']:,}", f["pathwidth"], *cells))
    return table(header, rows)


def dendrogram_table(results: TreeSearchResults) -> str:
    """Learned predictions on the digits dendrogram: mean queries per eta bin, for each predictor."""
    header = ("prediction", "η", "held-out digits", "spine", "robust", "centroid")
    rows = []
    for d in dendrograms(results).values():
        name = f"{d['pca_dims']}-D PCA"
        for b in d["bins"]:
            rows.append(
                (
                    name,
                    b["bin"],
                    b["count"],
                    f"{b['spine_mean']:.2f}",
                    f"{b['robust_mean']:.2f}",
                    f"{b['centroid_mean']:.2f}",
                )
            )
        rows.append(
            (
                f"**{name}**",
                "all",
                d["queries"],
                f"**{d['spine_mean']:.2f}**",
                f"{d['robust_mean']:.2f}",
                f"**{d['centroid_mean']:.2f}**",
            )
        )
    return table(header, rows)
