"""Plan of tree_search's ``paper`` preset (CPU code): building the million-vertex trees with their spine
decompositions, and searching one target with every algorithm."""

from __future__ import annotations

import math

import numpy as np

from ..core.plan import Part
from ..tree_search.experiment import measure_tree
from ..tree_search.families import synthetic_tree
from ..tree_search.pathwidth import spine_decomposition


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    n = 20_000 if dry else cfg.family_tree_size
    family = cfg.families[0]
    built = {}

    def build():
        built["tree"] = tree = synthetic_tree(family, n, seed=cfg.seed)
        built["D"] = spine_decomposition(tree)

    build()
    rng = np.random.default_rng(0)
    eta = cfg.eta_grid[len(cfg.eta_grid) // 2]
    trees = len(cfg.families) * (1 + cfg.n_crossover_seeds)
    grid = len(cfg.families) * len(cfg.eta_grid) * cfg.n_targets_per_eta
    dense = cfg.n_crossover_seeds * len(cfg.families) * max(max(cfg.eta_grid), 1) * cfg.crossover_targets_per_eta
    log_n = math.log2(cfg.family_tree_size)
    found = [
        Part("trees", f"one {family} tree of {cfg.family_tree_size:,} vertices and its spine decomposition", build,
             steps=trees, runs_on="cpu", repeat=1, operations=float(cfg.family_tree_size * log_n),
             note=f"{len(cfg.families)} families, built again for each of {cfg.n_crossover_seeds} crossover seeds; "
             "operations: n log n (the decomposition)"),
        Part("searches", f"one target searched by centroid, spine and robust search (eta = {eta})",
             lambda: measure_tree(built["tree"], (eta,), 1, rng, built["D"]), steps=grid + dense, runs_on="cpu",
             operations=float(3 * cfg.family_tree_size * log_n),
             note=f"{grid:,} on the eta grid and {dense:,} on the dense crossover grid; operations: every query "
             "narrows a candidate mask of n vertices, about log2 n queries per algorithm"),
    ]
    if dry:
        for part in found:
            part.note += f"; dry: trees of {n:,} vertices"
    paper_scale = ("yes: synthetic trees of a million vertices, Python syntax trees and a package's directory tree, "
                   "as the paper's setting asks (it states bounds, not data sets)")
    return found, paper_scale, ("CPU code at every scale (no GPU part); the real trees, lower-bound family and "
                                "exhaustive small trees are not in the plan")
