"""Chapter 18: TopoPrune, topological data pruning (our reconstruction from the abstract).

Local persistence made differentiable (:mod:`.persistence`, gudhi + torch), the UMAP embedding
(:mod:`.embedding`), class-balanced selection and the baselines (:mod:`.selection`), the data and
networks (:mod:`.models`), the experiment (:mod:`.experiment`), its claims (:mod:`.claims`),
figures (:mod:`.figures`) and the live lab (:mod:`.lab`, imported on demand: it needs ipywidgets).
"""

from .embedding import knn_radius, umap_embedding
from .experiment import METHODS, TopoPruneConfig, TopoPruneResults, headline, run
from .models import add_feature_noise, digits_split, extract_features, train_feature_network, train_on_subsets
from .persistence import (
    FlagPairs,
    averaged_knn_radius,
    batched_pairs,
    flag_pairs,
    local_clouds,
    mst_pairs,
    nearest_others,
    neighbourhood_persistence,
    neighbourhoods,
    pair_changes,
    persistence_scores,
    persistence_values,
    topological_scores,
    total_persistence,
)
from .selection import (
    ccs_selection,
    centre_distance,
    class_budget,
    d2_selection,
    random_selection,
    select_by_score,
)

Config = TopoPruneConfig

__all__ = [
    "METHODS",
    "Config",
    "FlagPairs",
    "TopoPruneConfig",
    "TopoPruneResults",
    "add_feature_noise",
    "averaged_knn_radius",
    "batched_pairs",
    "ccs_selection",
    "centre_distance",
    "class_budget",
    "d2_selection",
    "digits_split",
    "extract_features",
    "flag_pairs",
    "headline",
    "knn_radius",
    "local_clouds",
    "mst_pairs",
    "nearest_others",
    "neighbourhood_persistence",
    "neighbourhoods",
    "pair_changes",
    "persistence_scores",
    "persistence_values",
    "random_selection",
    "run",
    "select_by_score",
    "topological_scores",
    "total_persistence",
    "train_feature_network",
    "train_on_subsets",
    "umap_embedding",
]
