"""The chapter's experiment, one code path for every scale.

``run(TreeSearchConfig.preset("book"))`` is what the chapter executes (trees of about 2,000
vertices), ``"smoke"`` what the tests execute, and ``"paper"`` trees of a million vertices on a CPU
(``python -m explorables run tree_search --scale paper``). Parts, each checkpointed on its own:

1. ``family_<name>``: for each synthetic family and each prediction error ``eta`` in the grid,
   ``targets_per_eta`` random targets with a prediction at distance exactly ``eta``; queries of
   centroid search, spine search and the robust variant (mean and worst), the exact pathwidth and
   the explicit bound.
2. ``real``: the same on Python syntax trees and a package's directory tree, and on a digits
   dendrogram with *learned* predictions (``eta`` is whatever the nearest neighbour after a PCA
   to each dimension in ``dendrogram_dims`` gives).
3. ``lower_bound``: complete binary trees with the prediction at the root: the worst case over
   targets at distance ``eta`` grows linearly in ``eta`` for every algorithm (at least
   ``eta / 2`` queries by counting: ``2^eta`` targets, at most 4 answers per query).
4. ``small_trees``: every tree up to ``exhaustive_max_n`` vertices, every target and prediction:
   the bound is never exceeded; centroid search against the exact optimum.
5. ``explorable``: search traces on small drawn trees for the chapter's figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import networkx as nx
import numpy as np

from ..core.checkpoint import Checkpointer, run_parts
from ..core.config import ExperimentConfig
from ..core.validation import check_int
from .families import SYNTHETIC, ast_tree, digits_dendrogram, directory_tree, synthetic_tree
from .pathwidth import SpineDecomposition, all_trees, spine_decomposition, vertex_separation_bruteforce
from .search import (
    Memory,
    candidate_mask,
    centroid_bound,
    centroid_search,
    optimal_worst_case,
    robust_bound,
    robust_search,
    spine_bound,
    spine_search,
)
from .tree import Tree, branch_heights, random_vertex_at_distance

ALGORITHMS = ("centroid", "spine", "robust")


@dataclass(frozen=True)
class TreeSearchConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    family_n: int = 2000
    families: tuple[str, ...] = SYNTHETIC
    etas: tuple[int, ...] = (0, 1, 2, 4, 8, 16, 32, 64)
    targets_per_eta: int = 30
    ast_modules: tuple[str, ...] = ("json.decoder", "argparse")
    directory_package: str = "numpy"
    directory_max: int = 3000
    dendrogram_points: int = 1000
    dendrogram_queries: int = 300
    dendrogram_dims: tuple[int, ...] = (2, 16)
    lower_bound_height: int = 12
    lower_bound_targets: int = 60
    exhaustive_max_n: int = 8
    optimal_max_n: int = 10

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            family_n=300,
            etas=(0, 1, 2, 4, 8),
            targets_per_eta=8,
            ast_modules=("bisect",),
            directory_max=400,
            dendrogram_points=200,
            dendrogram_queries=40,
            lower_bound_height=7,
            lower_bound_targets=10,
            exhaustive_max_n=6,
            optimal_max_n=7,
        ),
        "book": {},
        "paper": dict(
            family_n=1_000_000,
            etas=(0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
            targets_per_eta=200,
            ast_modules=("json.decoder", "argparse", "typing", "ast"),
            directory_package="scipy",
            directory_max=100_000,
            dendrogram_points=1500,
            dendrogram_queries=297,
            lower_bound_height=19,
            lower_bound_targets=500,
            exhaustive_max_n=10,
            optimal_max_n=12,
        ),
    }
    PAPER_WANTS_GPU: ClassVar[bool] = False
    PAPER_HARDWARE: ClassVar[str] = (
        "a CPU with >= 8 GB of memory (trees of 10^6 vertices); an hour or two, estimated from single "
        "searches, not timed end to end"
    )

    def validated(self) -> TreeSearchConfig:
        """Check every field; raises ``ValueError`` naming the field and its allowed range."""
        check_int("family_n", self.family_n, minimum=16, maximum=20_000_000)
        for f in self.families:
            if f not in SYNTHETIC:
                raise ValueError(f"families must be drawn from {SYNTHETIC}, got {f!r}")
        if not self.etas:
            raise ValueError("etas must hold at least one integer >= 0")
        for e in self.etas:
            check_int("etas", e, minimum=0)
        check_int("targets_per_eta", self.targets_per_eta, minimum=1)
        check_int("directory_max", self.directory_max, minimum=2)
        check_int("dendrogram_points", self.dendrogram_points, minimum=4, maximum=1700)
        check_int("dendrogram_queries", self.dendrogram_queries, minimum=1, maximum=1797 - self.dendrogram_points)
        if not self.dendrogram_dims:
            raise ValueError("dendrogram_dims must hold at least one PCA dimension in [1, 64]")
        for d in self.dendrogram_dims:
            check_int("dendrogram_dims", d, minimum=1, maximum=64)
        check_int("lower_bound_height", self.lower_bound_height, minimum=2, maximum=22)
        check_int("lower_bound_targets", self.lower_bound_targets, minimum=1)
        check_int("exhaustive_max_n", self.exhaustive_max_n, minimum=1, maximum=12)
        check_int("optimal_max_n", self.optimal_max_n, minimum=1, maximum=14)
        return self


@dataclass
class TreeSearchResults:
    """What :func:`run` returns: a JSON-able ``summary`` and the traces the figures draw."""

    config: TreeSearchConfig
    summary: dict[str, Any]
    curves: dict[str, Any] = field(repr=False)


def _run_all(tree: Tree, D: SpineDecomposition, target: int, prediction: int) -> dict[str, int]:
    """Queries of centroid, spine and robust search for one (target, prediction); each must end at the target."""
    out = {}
    for alg in ALGORITHMS:

        def ask(v: int) -> int:
            return tree.step(v, target)

        if alg == "centroid":
            q = centroid_search(tree, ask)
        elif alg == "spine":
            q = spine_search(tree, D, prediction, ask)
        else:
            q = robust_search(tree, D, prediction, ask)
        if q[-1] != target:
            raise RuntimeError(f"{alg} search ended at {q[-1]}, not at the target {target}")
        out[alg] = len(q)
    return out


def measure_tree(
    tree: Tree,
    etas: tuple[int, ...],
    per_eta: int,
    rng: np.random.Generator,
    D: SpineDecomposition | None = None,
) -> dict[str, Any]:
    """Queries of every algorithm against random targets with a prediction at each distance ``eta``.

    Per ``eta``: mean and worst queries of each algorithm over ``per_eta`` targets (fewer if no vertex
    is that far), and counts of searches above :func:`spine_bound` or :func:`robust_bound`.
    """
    D = spine_decomposition(tree) if D is None else D
    heights = branch_heights(tree)
    k = D.pathwidth
    rows: dict[str, list] = {f"{a}_{s}": [] for a in ALGORITHMS for s in ("mean", "max")}
    used, samples, violations, robust_violations = [], [], 0, 0
    for eta in etas:
        counts: dict[str, list[int]] = {a: [] for a in ALGORITHMS}
        tries = 0
        while len(counts["spine"]) < per_eta and tries < 20 * per_eta:
            tries += 1
            t = int(rng.integers(tree.n))
            p = random_vertex_at_distance(tree, t, eta, rng, heights)
            if p < 0:
                continue
            res = _run_all(tree, D, t, p)
            for a in ALGORITHMS:
                counts[a].append(res[a])
            violations += res["spine"] > spine_bound(eta, k)
            robust_violations += res["robust"] > robust_bound(tree.n) or (
                res["spine"] <= centroid_bound(tree.n) and res["robust"] != res["spine"]
            )
        if not counts["spine"]:
            continue
        used.append(int(eta))
        samples.append(len(counts["spine"]))
        for a in ALGORITHMS:
            rows[f"{a}_mean"].append(float(np.mean(counts[a])))
            rows[f"{a}_max"].append(int(np.max(counts[a])))
    return {
        "n": tree.n,
        "pathwidth": k,
        "levels": D.depth,
        "centroid_bound": centroid_bound(tree.n),
        "robust_bound": robust_bound(tree.n),
        "etas": used,
        "samples": samples,
        "spine_bound": [spine_bound(e, k) for e in used],
        "bound_violations": int(violations),
        "robust_violations": int(robust_violations),
        **rows,
    }


def _family(cfg: TreeSearchConfig, name: str, index: int) -> tuple[dict, dict]:
    rng = np.random.default_rng([cfg.seed, 1, index])
    tree = synthetic_tree(name, cfg.family_n, seed=cfg.seed)
    return measure_tree(tree, cfg.etas, cfg.targets_per_eta, rng), {}


ETA_BINS = ((0, 0), (1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, 32), (33, 10**9))


def _real(cfg: TreeSearchConfig) -> tuple[dict, dict]:
    rng = np.random.default_rng([cfg.seed, 2])
    out: dict[str, Any] = {}
    for module in cfg.ast_modules:
        out[f"AST {module}"] = measure_tree(ast_tree(module), cfg.etas, cfg.targets_per_eta, rng)
    out[f"directory {cfg.directory_package}"] = measure_tree(
        directory_tree(cfg.directory_package, cfg.directory_max), cfg.etas, cfg.targets_per_eta, rng
    )
    # the dendrogram with learned predictions (one entry per PCA dimension)
    curves = {}
    for n_dims in cfg.dendrogram_dims:
        key = dendrogram_key(cfg, n_dims)
        out[key], curves[key] = _dendrogram(cfg, n_dims)
    return out, curves


def dendrogram_key(cfg: TreeSearchConfig, n_dims: int) -> str:
    """The summary key of the dendrogram run with a ``n_dims``-D PCA predictor."""
    return "digits dendrogram" if n_dims == cfg.dendrogram_dims[0] else f"digits dendrogram ({n_dims}-D PCA)"


def _dendrogram(cfg: TreeSearchConfig, n_dims: int) -> tuple[dict, dict]:
    """Held-out digits: target = leaf of the pixel-space nearest neighbour, prediction = PCA neighbour."""
    dg = digits_dendrogram(cfg.dendrogram_points, cfg.dendrogram_queries, cfg.seed, n_dims)
    tree, D = dg.tree, spine_decomposition(dg.tree)
    etas, counts = [], {a: [] for a in ALGORITHMS}
    for t, p in zip(dg.targets.tolist(), dg.predictions.tolist(), strict=True):
        etas.append(tree.dist(p, t))
        res = _run_all(tree, D, t, p)
        for a in ALGORITHMS:
            counts[a].append(res[a])
    etas_a = np.array(etas)
    bins = []
    for lo, hi in ETA_BINS:
        sel = (etas_a >= lo) & (etas_a <= hi)
        if sel.any():
            bins.append(
                {
                    "bin": f"{lo}" if lo == hi else (f"{lo}–{hi}" if hi < 10**9 else f"≥ {lo}"),
                    "count": int(sel.sum()),
                    "eta_mean": float(etas_a[sel].mean()),
                    **{f"{a}_mean": float(np.mean(np.array(counts[a])[sel])) for a in ALGORITHMS},
                }
            )
    k = D.pathwidth
    summary = {
        "pca_dims": n_dims,
        "n": tree.n,
        "pathwidth": k,
        "levels": D.depth,
        "centroid_bound": centroid_bound(tree.n),
        "queries": len(etas),
        "eta_median": float(np.median(etas_a)),
        "eta_zero_fraction": float(np.mean(etas_a == 0)),
        "bins": bins,
        **{f"{a}_mean": float(np.mean(counts[a])) for a in ALGORITHMS},
        "bound_violations": int(sum(c > spine_bound(e, k) for c, e in zip(counts["spine"], etas, strict=True))),
    }
    return summary, {"eta": etas_a, **{a: np.array(counts[a]) for a in ALGORITHMS}}


def _lower_bound(cfg: TreeSearchConfig) -> tuple[dict, dict]:
    """Complete binary tree, prediction at the root, targets at every depth."""
    from .families import complete_binary_parents

    rng = np.random.default_rng([cfg.seed, 3])
    tree = Tree.from_parents(complete_binary_parents(cfg.lower_bound_height))
    D = spine_decomposition(tree)
    rows = []
    for eta in range(1, cfg.lower_bound_height + 1):
        level = np.flatnonzero(tree.depth == eta)
        many = len(level) > cfg.lower_bound_targets
        chosen = rng.choice(level, cfg.lower_bound_targets, replace=False) if many else level
        res = [_run_all(tree, D, int(t), 0) for t in chosen]
        rows.append(
            {
                "eta": eta,
                "targets": len(chosen),
                "all_targets": bool(len(chosen) == len(level)),
                "counting_bound": int(np.ceil(eta / 2)),
                **{f"{a}_max": int(max(r[a] for r in res)) for a in ALGORITHMS},
                **{f"{a}_mean": float(np.mean([r[a] for r in res])) for a in ALGORITHMS},
            }
        )
    etas = np.array([r["eta"] for r in rows], dtype=float)
    worst = np.array([r["spine_max"] for r in rows], dtype=float)
    slope = float(np.polyfit(etas, worst, 1)[0])
    return {"n": tree.n, "pathwidth": D.pathwidth, "rows": rows, "spine_worst_slope_per_eta": slope}, {}


def _small_trees(cfg: TreeSearchConfig) -> tuple[dict, dict]:
    """Every tree up to exhaustive_max_n vertices, every (target, prediction); centroid vs optimum."""
    checked = violations = robust_violations = misses = 0
    worst_slack = -(10**9)
    pw_checked = pw_mismatches = 0
    for g in all_trees(cfg.exhaustive_max_n):
        tree = Tree.from_networkx(g)
        D = spine_decomposition(tree)
        k = D.pathwidth
        pw_checked += 1
        pw_mismatches += k != vertex_separation_bruteforce(g)
        for t in range(tree.n):
            dist = tree.distances_from(t)
            for p in range(tree.n):
                res = _run_all(tree, D, t, p)
                checked += 1
                b = spine_bound(int(dist[p]), k)
                violations += res["spine"] > b
                worst_slack = max(worst_slack, res["spine"] - b)
                robust_violations += res["robust"] > robust_bound(tree.n)
                misses += res["centroid"] > centroid_bound(tree.n)
    gaps, opt_rows = [], []
    for n in range(2, cfg.optimal_max_n + 1):
        per_n = []
        for g in nx.nonisomorphic_trees(n):
            tree = Tree.from_networkx(g)
            opt = optimal_worst_case(tree)
            cen = max(len(centroid_search(tree, lambda v, t=t, tr=tree: tr.step(v, t))) for t in range(n))
            per_n.append(cen - opt)
        gaps += per_n
        opt_rows.append(
            {
                "n": n,
                "trees": len(per_n),
                "centroid_optimal_fraction": float(np.mean(np.array(per_n) == 0)),
                "max_gap": int(max(per_n)),
            }
        )
    return {
        "max_n": cfg.exhaustive_max_n,
        "pairs_checked": checked,
        "trees_checked": pw_checked,
        "pathwidth_mismatches": int(pw_mismatches),
        "bound_violations": int(violations),
        "worst_slack": int(worst_slack),
        "robust_violations": int(robust_violations),
        "centroid_bound_violations": int(misses),
        "optimal": opt_rows,
        "centroid_optimal_fraction": float(np.mean(np.array(gaps) == 0)),
        "centroid_max_gap": int(max(gaps)),
    }, {}


EXPLORABLE_TREES = (("caterpillar", 45), ("spider", 43), ("complete binary", 63), ("random recursive", 60))
EXPLORABLE_ETAS = (0, 1, 2, 4, 8)


def search_trace(tree: Tree, D: SpineDecomposition, algorithm: str, target: int, prediction: int) -> dict[str, list]:
    """The queries of one search and the candidate set before each query (for drawing)."""
    mem = Memory(lambda v: tree.step(v, target))
    if algorithm == "spine":
        spine_search(tree, D, prediction, mem)
    elif algorithm == "robust":
        robust_search(tree, D, prediction, mem)
    else:
        centroid_search(tree, mem)
    cands, seen = [], {}
    for v in mem.queried:
        cands.append(np.flatnonzero(candidate_mask(tree, seen)).tolist())
        seen[v] = mem.answers[v]
    return {"queries": mem.queried, "candidates": cands}


def _explorable(cfg: TreeSearchConfig) -> tuple[dict, dict]:
    """Traces of spine and centroid search on small drawn trees, for a few prediction errors."""
    rng = np.random.default_rng([cfg.seed, 5])
    out: dict[str, Any] = {}
    for name, n in EXPLORABLE_TREES:
        base = synthetic_tree(name, n, seed=cfg.seed)
        ecc = np.array([base.distances_from(v).max() for v in range(base.n)])
        tree = Tree(base.n, base.edges, root=int(np.argmin(ecc)))  # rooted at a centre, for drawing
        D = spine_decomposition(tree)
        heights = branch_heights(tree)
        # a target far from the root, so that every eta in the grid is possible
        far = np.flatnonzero(tree.depth == tree.depth.max())
        target = int(far[len(far) // 2])
        runs = {}
        for eta in EXPLORABLE_ETAS:
            p = random_vertex_at_distance(tree, target, eta, rng, heights)
            if p < 0:
                continue
            runs[str(eta)] = {
                "prediction": p,
                "spine": search_trace(tree, D, "spine", target, p),
                "centroid_queries": len(search_trace(tree, D, "centroid", target, p)["queries"]),
            }
        out[name] = {
            "parents": tree.parent.tolist(),
            "target": target,
            "pathwidth": D.pathwidth,
            "top_spine": D.spines[0].tolist(),
            "runs": runs,
        }
    return out, {}


def run(
    config: TreeSearchConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> TreeSearchResults:
    """Run every part of the experiment (module docstring); resumable part by part."""
    cfg = (config or TreeSearchConfig.preset("book")).validated()
    checkpoint = checkpoint or Checkpointer(None)
    checkpoint.bind(cfg.identity())
    parts: dict[str, Any] = {}
    for i, name in enumerate(cfg.families):
        parts[f"family_{name.replace(' ', '_')}"] = lambda name=name, i=i: _family(cfg, name, i)
    parts["real"] = lambda: _real(cfg)
    parts["lower_bound"] = lambda: _lower_bound(cfg)
    parts["small_trees"] = lambda: _small_trees(cfg)
    parts["explorable"] = lambda: _explorable(cfg)
    summary, curves, timings = run_parts(checkpoint, parts, progress)
    families = {name: summary.pop(f"family_{name.replace(' ', '_')}") for name in cfg.families}
    for name in cfg.families:
        curves.pop(f"family_{name.replace(' ', '_')}", None)
    summary["families"] = families
    summary["timings"] = timings
    return TreeSearchResults(config=cfg, summary=summary, curves=curves)


def headline(results: TreeSearchResults) -> list[str]:
    """A few key numbers for the end-of-run summary of the command line."""
    s = results.summary
    lines = []
    for name, f in {**s["families"], **{k: v for k, v in s["real"].items() if "etas" in v}}.items():
        lines.append(
            f"{name} (n={f['n']:,}, pw={f['pathwidth']}): "
            f"spine mean {f['spine_mean'][0]:.1f}→{f['spine_mean'][-1]:.1f} "
            f"for eta {f['etas'][0]}→{f['etas'][-1]}; centroid {np.mean(f['centroid_mean']):.1f}; "
            f"bound violations {f['bound_violations']}"
        )
    for d in (v for v in s["real"].values() if "pca_dims" in v):
        lines.append(
            f"digits dendrogram, {d['pca_dims']}-D PCA prediction (median eta {d['eta_median']:.0f}): "
            f"spine {d['spine_mean']:.2f}, robust {d['robust_mean']:.2f}, centroid {d['centroid_mean']:.2f} queries"
        )
    return lines
