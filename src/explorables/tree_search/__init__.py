"""Chapter 13: learning-augmented search on trees.

The query model and trees as arrays (:mod:`.tree`), exact pathwidth and the spine decomposition
(:mod:`.pathwidth`), the lower-bound family and its adversary (:mod:`.lower_bound`), the search
algorithms (:mod:`.search`), the trees searched (:mod:`.families`), the experiment
(:mod:`.experiment`), its figures (:mod:`.figures`) and the live lab (:mod:`.lab`, imported on
demand: it needs ipywidgets).
"""

from .experiment import TreeSearchConfig, TreeSearchResults, headline, run
from .families import (
    REAL,
    SYNTHETIC,
    ast_tree,
    digits_dendrogram,
    directory_tree,
    real_tree,
    synthetic_size,
    synthetic_tree,
)
from .lower_bound import Adversary, forced_queries, nested_spider, nested_spider_size, tree_depth, vertex_ranking
from .pathwidth import (
    SpineDecomposition,
    pathwidth,
    pathwidth_by_branches,
    spine_decomposition,
    subtree_labels,
    vertex_separation_bruteforce,
)
from .search import (
    Memory,
    centroid_bound,
    centroid_search,
    optimal_worst_case,
    queries_for,
    robust_bound,
    robust_search,
    spine_bound,
    spine_search,
)
from .tree import FOUND, Tree, TreeSearchOracle, branch_heights, random_vertex_at_distance

Config = TreeSearchConfig

__all__ = [
    "FOUND",
    "REAL",
    "SYNTHETIC",
    "Adversary",
    "Config",
    "Memory",
    "SpineDecomposition",
    "Tree",
    "TreeSearchConfig",
    "TreeSearchOracle",
    "TreeSearchResults",
    "ast_tree",
    "branch_heights",
    "centroid_bound",
    "centroid_search",
    "digits_dendrogram",
    "directory_tree",
    "forced_queries",
    "headline",
    "nested_spider",
    "nested_spider_size",
    "optimal_worst_case",
    "pathwidth",
    "pathwidth_by_branches",
    "queries_for",
    "random_vertex_at_distance",
    "real_tree",
    "robust_bound",
    "robust_search",
    "run",
    "spine_bound",
    "spine_decomposition",
    "spine_search",
    "subtree_labels",
    "synthetic_size",
    "synthetic_tree",
    "tree_depth",
    "vertex_ranking",
    "vertex_separation_bruteforce",
]
