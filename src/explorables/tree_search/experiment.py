"""The chapter's experiment, one code path for every scale.

``run(TreeSearchConfig.preset("book"))`` is what the chapter executes (trees of about 2,000
vertices), ``"smoke"`` what the tests execute, and ``"paper"`` trees of a million vertices on a CPU
(``python -m explorables run tree_search --scale paper``). Parts, each checkpointed on its own:

1. ``family_<name>``: for each synthetic family and each prediction error ``eta`` in the grid,
   ``n_targets_per_eta`` random targets with a prediction at distance exactly ``eta``; queries of
   centroid search, spine search and the robust variant (mean and worst), the exact pathwidth and
   the explicit bound.
2. ``real``: the same on Python syntax trees and a package's directory tree, and on a digits
   dendrogram with *learned* predictions (``eta`` is whatever the nearest neighbour after a PCA
   to each dimension in ``d_pca_grid`` gives), with a positive control on the same dendrogram: the
   same targets with a prediction ``CONTROL_ETA`` steps away, set by us.
2b. ``crossover``: every ``eta`` in 1..max(eta_grid) on the trees with ``eta`` set by us, for
   ``n_crossover_seeds`` seeds: where spine search stops beating centroid search (a grid of powers
   of two would flatter doubling search).
3. ``lower_bound``: complete binary trees with the prediction at the root: the worst case over
   targets at distance ``eta`` grows linearly in ``eta`` for every algorithm (at least
   ``eta / 2`` queries by counting: ``2^eta`` targets, at most 4 answers per query).
3b. ``family``: the lower-bound family, nested spiders ``S_k(L)`` (:mod:`.lower_bound`): exact
   pathwidth, the adversary's proven bound ``1 + k floor(log2 L)``, the exact optimum (tree-depth),
   and the queries the adversary forces on centroid, spine, robust and optimal (ranking) search.
4. ``small_trees``: every tree up to ``exhaustive_max_size`` vertices, every target and prediction:
   the bound is never exceeded; centroid search against the exact optimum.
5. ``explorable``: search traces on small drawn trees for the chapter's figure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import networkx as nx
import numpy as np

from ..core.arguments import checked as checked_args
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Choice, Int, Rule, Tuple, param
from .families import (
    N_DIGITS,
    SYNTHETIC,
    ast_tree,
    digits_dendrogram,
    directory_tree,
    package_directory,
    stdlib_source,
    synthetic_tree,
)
from .lower_bound import (
    Adversary,
    NestedSpider,
    forced_queries,
    k_log_eta,
    nested_spider,
    nested_spider_size,
    ranking_search,
    tree_depth,
    vertex_ranking,
)
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


@dataclasses.dataclass(frozen=True, repr=False)
class StdlibModule(Rule):
    """A pure-Python standard-library module, by dotted name (read as source, never imported)."""

    def check(self, name: str, value: Any) -> str:
        try:
            stdlib_source(value)
        except ValueError:
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}") from None
        return value

    def describe(self) -> str:
        return "the dotted name of a pure-Python standard-library module (e.g. 'json.decoder')"

    def bad_values(self) -> list[Any]:
        return ["no_such_module", "numpy", "sys", 3, "../json", ""]


@dataclasses.dataclass(frozen=True, repr=False)
class InstalledPackage(Rule):
    """An installed top-level package, by name (its folder is walked, nothing is imported)."""

    def check(self, name: str, value: Any) -> str:
        try:
            package_directory(value)
        except ValueError:
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}") from None
        return value

    def describe(self) -> str:
        return "the name of an installed top-level package outside the working directory (e.g. 'numpy')"

    def bad_values(self) -> list[Any]:
        return ["no_such_package", "numpy.linalg", "../numpy", "", 3]


@dataclass(frozen=True)
class TreeSearchConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    family_tree_size: int = param(
        2000, Int(16, 20_000_000), "vertices of each synthetic tree (complete binary: the largest with at most that)"
    )
    families: tuple[str, ...] = param(
        SYNTHETIC, Tuple(Choice(SYNTHETIC), distinct=True), "synthetic tree families searched on the eta grid"
    )
    eta_grid: tuple[int, ...] = param(
        (0, 1, 2, 4, 8, 16, 32, 64), Tuple(Int(0)), "prediction errors eta = d(prediction, target), in tree edges"
    )
    n_targets_per_eta: int = param(30, Int(1), "random targets per tree and eta, each with a prediction eta edges away")
    n_crossover_seeds: int = param(
        3, Int(1, 20), "seeds of the dense crossover scan (every eta in 1..max(eta_grid), trees with eta set by us)"
    )
    crossover_targets_per_eta: int = param(
        12, Int(1), "random targets per tree, eta and seed in the dense crossover scan"
    )
    ast_modules: tuple[str, ...] = param(
        ("json.decoder", "argparse"), Tuple(StdlibModule()), "standard-library modules whose syntax trees are searched"
    )
    directory_package: str = param("numpy", InstalledPackage(), "installed package whose directory tree is searched")
    directory_max_size: int = param(3000, Int(2), "vertices of the directory tree at most (the walk stops there)")
    n_dendrogram_points: int = param(
        1000, Int(4, 1700), "digits clustered into the Ward dendrogram (of the 1,797 in load_digits)"
    )
    n_dendrogram_queries: int = param(
        300, Int(1, 1793), "held-out digits searched for in the dendrogram (at most 1,797 - n_dendrogram_points)"
    )
    d_pca_grid: tuple[int, ...] = param(
        (2, 16), Tuple(Int(1, 64)), "PCA dimensions of the learned predictors (nearest neighbour after the PCA)"
    )
    lower_bound_height: int = param(
        12, Int(2, 22), "height of the complete binary tree of the lower bound (2^(h+1) - 1 vertices)"
    )
    n_lower_bound_targets: int = param(60, Int(1), "targets per depth eta on the lower-bound tree (all if fewer)")
    family_ks: tuple[int, ...] = param(
        (1, 2, 3, 4), Tuple(Int(1, 12), distinct=True), "pathwidths k of the nested spiders S_k(L) (lower-bound family)"
    )
    family_lengths: tuple[int, ...] = param(
        (4, 8, 16), Tuple(Int(3, 4096), distinct=True), "top-path lengths L of the nested spiders S_k(L)"
    )
    family_max_size: int = param(
        10_000, Int(8, 2_000_000), "largest nested spider built (vertices); larger (k, L) pairs are skipped"
    )
    n_family_targets: int = param(
        100, Int(1), "random targets per nested spider for spine search's sampled worst case (besides the adversary)"
    )
    exhaustive_max_size: int = param(
        8, Int(1, 12), "every tree with at most this many vertices: every target and prediction checked"
    )
    optimal_max_size: int = param(
        10, Int(1, 14), "centroid search against the exact optimum on every tree with at most this many vertices"
    )

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            family_tree_size=300,
            eta_grid=(0, 1, 2, 4, 8),
            n_targets_per_eta=8,
            crossover_targets_per_eta=4,
            ast_modules=("bisect",),
            directory_max_size=400,
            n_dendrogram_points=200,
            n_dendrogram_queries=40,
            lower_bound_height=7,
            n_lower_bound_targets=10,
            family_ks=(1, 2, 3),
            family_lengths=(4, 8),
            family_max_size=1200,
            n_family_targets=20,
            exhaustive_max_size=6,
            optimal_max_size=7,
        ),
        "book": {},
        "paper": dict(
            family_tree_size=1_000_000,
            eta_grid=(0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
            n_targets_per_eta=200,
            ast_modules=("json.decoder", "argparse", "typing", "ast"),
            directory_package="scipy",
            directory_max_size=100_000,
            n_dendrogram_points=1500,
            n_dendrogram_queries=297,
            lower_bound_height=19,
            n_lower_bound_targets=500,
            family_ks=(1, 2, 3, 4, 5, 6),
            family_lengths=(4, 8, 16, 32, 64),
            family_max_size=2_000_000,
            n_family_targets=500,
            exhaustive_max_size=10,
            optimal_max_size=12,
        ),
    }
    PAPER_WANTS_GPU: ClassVar[bool] = False
    PAPER_HARDWARE: ClassVar[str] = (
        "a CPU with >= 8 GB of memory (trees of 10^6 vertices); an hour or two, estimated from single "
        "searches, not timed end to end"
    )

    def cross_checks(self) -> None:
        held_out = N_DIGITS - self.n_dendrogram_points
        if self.n_dendrogram_queries > held_out:
            raise ValueError(
                f"n_dendrogram_queries must be <= {held_out} (1,797 digits - n_dendrogram_points), "
                f"got {self.n_dendrogram_queries}"
            )


class TreeSearchResults(Results[TreeSearchConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the traces the figures draw."""


def _run_all(tree: Tree, D: SpineDecomposition, target: int, prediction: int) -> dict[str, int]:
    """Queries of centroid, spine and robust search for one (target, prediction); each must end at the target."""
    out = {}
    for alg in ALGORITHMS:

        def ask(v: int) -> int:
            return tree.step(v, target)

        # called from skip_nested bodies (run, measure_tree): the searches skip their checks
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


@checked_args(skip_nested=True, etas=Tuple(Int(0)))  # the searches, bounds and draws in its loop skip their checks
def measure_tree(
    tree: Tree,
    etas: Sequence[int],
    per_eta: int,
    rng: np.random.Generator,
    D: SpineDecomposition | None = None,
) -> dict[str, Any]:
    """Queries of every algorithm against random targets with a prediction at each distance ``eta``.

    Per ``eta`` (a tuple or list of at least one distance): mean and worst queries of each algorithm over
    ``per_eta`` targets (fewer if no vertex is that far), and counts of searches above :func:`spine_bound` or
    :func:`robust_bound`.
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
    tree = synthetic_tree(name, cfg.family_tree_size, seed=cfg.seed)
    return measure_tree(tree, cfg.eta_grid, cfg.n_targets_per_eta, rng), {}


def first_loss(etas: list[int], spine_mean: list[float], centroid_mean: list[float]) -> int | None:
    """The smallest eta at which spine search's mean is not below centroid search's (``None``: it never loses)."""
    for eta, sp, ce in zip(etas, spine_mean, centroid_mean, strict=True):
        if sp >= ce:
            return int(eta)
    return None


def _crossover_trees(cfg: TreeSearchConfig, seed: int) -> dict[str, Tree]:
    """The trees on which we set eta ourselves: the synthetic families (drawn with ``seed``) and the real trees."""
    trees = {name: synthetic_tree(name, cfg.family_tree_size, seed=seed) for name in cfg.families}
    for module in cfg.ast_modules:
        trees[f"AST {module}"] = ast_tree(module)
    trees[f"directory {cfg.directory_package}"] = directory_tree(cfg.directory_package, cfg.directory_max_size)
    return trees


def _crossover(cfg: TreeSearchConfig) -> tuple[dict, dict]:
    """Where spine search stops beating centroid search: every eta in 1..max(eta_grid), several seeds.

    A grid of powers of two flatters doubling search (at eta = 2^j the prediction's distance is one of
    its probes), so the crossover is read off a dense grid. Per tree and seed (seed ``cfg.seed + i``,
    which also draws the random synthetic trees): the mean queries per eta over
    ``crossover_targets_per_eta`` targets, the first eta at which spine search's mean is not below
    centroid search's (:func:`first_loss`), and the number of etas at which it loses (lists, one entry
    per seed; ``etas`` too, since a random tree may not reach every eta).
    """
    etas = tuple(range(1, max(max(cfg.eta_grid), 1) + 1))
    out: dict[str, Any] = {}
    for i in range(cfg.n_crossover_seeds):
        seed = cfg.seed + i
        for j, (name, tree) in enumerate(_crossover_trees(cfg, seed).items()):
            rng = np.random.default_rng([seed, 6, j])
            f = measure_tree(tree, etas, cfg.crossover_targets_per_eta, rng)
            row = out.setdefault(
                name, {"seeds": [], "etas": [], "first_loss": [], "losses": [], "spine_mean": [], "centroid_mean": []}
            )
            row["etas"].append(f["etas"])  # a random tree of some seed may not reach every eta
            row["seeds"].append(seed)
            row["first_loss"].append(first_loss(f["etas"], f["spine_mean"], f["centroid_mean"]))
            row["losses"].append(int(sum(s >= c for s, c in zip(f["spine_mean"], f["centroid_mean"], strict=True))))
            row["spine_mean"].append(f["spine_mean"])
            row["centroid_mean"].append(f["centroid_mean"])
    return out, {}


ETA_BINS = ((0, 0), (1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, 32), (33, 10**9))


def _real(cfg: TreeSearchConfig) -> tuple[dict, dict]:
    rng = np.random.default_rng([cfg.seed, 2])
    out: dict[str, Any] = {}
    for module in cfg.ast_modules:
        out[f"AST {module}"] = measure_tree(ast_tree(module), cfg.eta_grid, cfg.n_targets_per_eta, rng)
    out[f"directory {cfg.directory_package}"] = measure_tree(
        directory_tree(cfg.directory_package, cfg.directory_max_size), cfg.eta_grid, cfg.n_targets_per_eta, rng
    )
    # the dendrogram with learned predictions (one entry per PCA dimension)
    curves = {}
    for n_dims in cfg.d_pca_grid:
        key = dendrogram_key(cfg, n_dims)
        out[key], curves[key] = _dendrogram(cfg, n_dims)
    return out, curves


def dendrogram_key(cfg: TreeSearchConfig, n_dims: int) -> str:
    """The summary key of the dendrogram run with a ``n_dims``-D PCA predictor."""
    return "digits dendrogram" if n_dims == cfg.d_pca_grid[0] else f"digits dendrogram ({n_dims}-D PCA)"


def _dendrogram(cfg: TreeSearchConfig, n_dims: int) -> tuple[dict, dict]:
    """Held-out digits: target = leaf of the pixel-space nearest neighbour, prediction = PCA neighbour."""
    dg = digits_dendrogram(cfg.n_dendrogram_points, cfg.n_dendrogram_queries, cfg.seed, n_dims)
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
    control = {}
    if n_dims == cfg.d_pca_grid[0]:  # the positive control, once per dendrogram (the tree is the same for every dims)
        control = {"control": _dendrogram_control(tree, D, dg.targets.tolist(), np.random.default_rng([cfg.seed, 7]))}
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
        # per held-out digit, for the interval of the paired difference (claims.real_inputs_verdict)
        "spine_queries": [int(c) for c in counts["spine"]],
        "centroid_queries": [int(c) for c in counts["centroid"]],
        "bound_violations": int(sum(c > spine_bound(e, k) for c, e in zip(counts["spine"], etas, strict=True))),
        **control,
    }
    return summary, {"eta": etas_a, **{a: np.array(counts[a]) for a in ALGORITHMS}}


CONTROL_ETA = 2
"""The dendrogram's positive control: a prediction this many tree steps from the target (set by us), the
closest a wrong leaf can be to a leaf target (a sibling)."""


def _dendrogram_control(tree: Tree, D: SpineDecomposition, targets: list[int], rng: np.random.Generator) -> dict:
    """The same targets with a prediction :data:`CONTROL_ETA` steps away: can a good prediction pay on this tree?"""
    heights = branch_heights(tree)
    spine, centroid = [], []
    for t in targets:
        p = random_vertex_at_distance(tree, t, CONTROL_ETA, rng, heights)
        if p < 0:
            continue
        res = _run_all(tree, D, t, p)
        spine.append(res["spine"])
        centroid.append(res["centroid"])
    return {"eta": CONTROL_ETA, "spine_queries": spine, "centroid_queries": centroid}


def _lower_bound(cfg: TreeSearchConfig) -> tuple[dict, dict]:
    """Complete binary tree, prediction at the root, targets at every depth."""
    from .families import complete_binary_parents

    rng = np.random.default_rng([cfg.seed, 3])
    tree = Tree.from_parents(complete_binary_parents(cfg.lower_bound_height))
    D = spine_decomposition(tree)
    rows = []
    for eta in range(1, cfg.lower_bound_height + 1):
        level = np.flatnonzero(tree.depth == eta)
        many = len(level) > cfg.n_lower_bound_targets
        chosen = rng.choice(level, cfg.n_lower_bound_targets, replace=False) if many else level
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


FAMILY_ALGORITHMS = ("centroid", "spine", "robust", "optimal")


def _spine_queries(tree: Tree, D: SpineDecomposition, prediction: int, target: int) -> int:
    return len(spine_search(tree, D, prediction, lambda v: tree.step(v, target)))


def forced_counts(
    spider: NestedSpider, D: SpineDecomposition, ranks: np.ndarray
) -> tuple[dict[str, int], bool, dict[str, int]]:
    """Queries the :class:`~.lower_bound.Adversary` forces on each of :data:`FAMILY_ALGORITHMS` on ``spider``
    (``D`` its spine decomposition, ``ranks`` its vertex ranking), whether every run ended at the one
    target all of the adversary's answers point to, and that target per algorithm."""
    tree = spider.tree
    searches = {
        "centroid": lambda ask: centroid_search(tree, ask),
        "spine": lambda ask: spine_search(tree, D, spider.prediction, ask),
        "robust": lambda ask: robust_search(tree, D, spider.prediction, ask),
        "optimal": lambda ask: ranking_search(tree, ranks, ask),
    }
    forced, targets, consistent = {}, {}, True
    for name, search in searches.items():
        adversary = Adversary(spider)
        mem = Memory(adversary)
        queried = search(mem)
        t = adversary.target
        consistent &= t >= 0 and queried[-1] == t
        consistent &= all(tree.step(v, t) == a for v, a in mem.answers.items())
        forced[name] = len(queried)
        targets[name] = int(t)
    return forced, bool(consistent), targets


def _family_lower_bound(cfg: TreeSearchConfig) -> tuple[dict, dict]:
    """Nested spiders S_k(L): every algorithm against the adversary, and spine search on random targets.

    Pairs with ``L < k`` are skipped (the proof gives Ω(k log η) only for ``L >= k``), and so are spiders
    above ``family_max_size`` vertices. Spine search is checked against :func:`spine_bound` at each
    target's own error ``d(prediction, target)`` (the adversary's final target and the sampled ones).
    """
    rng = np.random.default_rng([cfg.seed, 7])
    rows = []
    for k in cfg.family_ks:
        for length in cfg.family_lengths:
            if length < k:
                continue
            n = nested_spider_size(k, length)
            if n > cfg.family_max_size:
                continue
            s = nested_spider(k, length)
            tree = s.tree
            D = spine_decomposition(tree)
            ranks = vertex_ranking(tree)
            forced, consistent, adv_targets = forced_counts(s, D, ranks)
            dist = tree.distances_from(s.prediction)
            targets = rng.choice(tree.n, min(cfg.n_family_targets, tree.n), replace=False)
            sampled = [_spine_queries(tree, D, s.prediction, int(t)) for t in targets]
            checked = [(forced["spine"], adv_targets["spine"]), *zip(sampled, targets.tolist(), strict=True)]
            slack = [q - spine_bound(int(dist[t]), D.pathwidth) for q, t in checked]
            rows.append(
                {
                    "k": k,
                    "length": length,
                    "n": tree.n,
                    "pathwidth": D.pathwidth,
                    "eta": s.eta,
                    "k_log_eta": k_log_eta(k, s.eta),
                    "proven_bound": forced_queries(k, length),
                    "optimum": int(ranks.max()),
                    "forced": forced,
                    "adversary_consistent": bool(consistent),
                    "spine_sampled_worst": int(max(sampled)),
                    "spine_checked": len(checked),
                    "spine_bound_violations": int(sum(x > 0 for x in slack)),
                    "spine_worst_slack": int(max(slack)),
                }
            )
    return {"rows": rows, "algorithms": list(FAMILY_ALGORITHMS)}, {}


def _small_trees(cfg: TreeSearchConfig) -> tuple[dict, dict]:
    """Every tree up to exhaustive_max_size vertices, every (target, prediction); centroid vs optimum."""
    checked = violations = robust_violations = misses = 0
    worst_slack = -(10**9)
    pw_checked = pw_mismatches = 0
    for g in all_trees(cfg.exhaustive_max_size):
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
    ranking_mismatches = 0
    for n in range(2, cfg.optimal_max_size + 1):
        per_n = []
        for g in nx.nonisomorphic_trees(n):
            tree = Tree.from_networkx(g)
            opt = optimal_worst_case(tree)
            ranking_mismatches += tree_depth(tree) != opt
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
        "max_n": cfg.exhaustive_max_size,
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
        "ranking_mismatches": int(ranking_mismatches),
        "ranking_trees": len(gaps),
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


@checked_args(skip_nested=True)  # the tree methods in its loops skip their checks
def run(
    config: TreeSearchConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> TreeSearchResults:
    """Run every part of the experiment (module docstring); resumable part by part.

    Every random draw comes from a generator seeded explicitly from ``config.seed``, so the global
    random states are left alone.
    """
    cfg, checkpoint = start_run(TreeSearchConfig, config, checkpoint, seed=False)
    parts: dict[str, Any] = {}
    for i, name in enumerate(cfg.families):
        parts[f"family_{name.replace(' ', '_')}"] = lambda name=name, i=i: _family(cfg, name, i)
    parts["real"] = lambda: _real(cfg)
    parts["crossover"] = lambda: _crossover(cfg)
    parts["lower_bound"] = lambda: _lower_bound(cfg)
    parts["family"] = lambda: _family_lower_bound(cfg)
    parts["small_trees"] = lambda: _small_trees(cfg)
    parts["explorable"] = lambda: _explorable(cfg)
    summary, curves = run_parts_timed(checkpoint, parts, progress)
    summary["families"] = {name: summary.pop(f"family_{name.replace(' ', '_')}") for name in cfg.families}
    for name in cfg.families:
        curves.pop(f"family_{name.replace(' ', '_')}", None)
    return TreeSearchResults(cfg, summary, curves)


@checked_args()
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
