"""Chapter 19: ToMATo and ToMAToMP, multi-parameter topological clustering.

Persistence by hand and with gudhi, and ToMATo (:mod:`.persistence`); data and density estimates
(:mod:`.data`); ToMAToMP from multipers' MMA decomposition (:mod:`.multiparam`); the experiment
(:mod:`.experiment`), its figures (:mod:`.figures`), the claims (:mod:`.claims`) and the live lab
(:mod:`.lab`, imported on demand: it needs ipywidgets).
"""

from .data import DATASETS, Dataset, corrupt, dtm, log_kde, make_dataset
from .experiment import TomatoMPConfig, TomatoMPResults, headline, run
from .multiparam import (
    MultiFiltration,
    Summand,
    ToMAToMPResult,
    build_filtration,
    connecting_radius,
    from_gudhi,
    mma_h0,
    summand_prominence,
    summands,
    to_simplextree,
    tomato_mp,
)
from .persistence import (
    Diagram,
    TomatoResult,
    gap_threshold,
    gudhi_superlevel_persistence,
    largest_gap_count,
    superlevel_persistence,
    tomato,
)

Config = TomatoMPConfig

__all__ = [
    "DATASETS",
    "Config",
    "Dataset",
    "Diagram",
    "MultiFiltration",
    "Summand",
    "ToMAToMPResult",
    "TomatoMPConfig",
    "TomatoMPResults",
    "TomatoResult",
    "build_filtration",
    "connecting_radius",
    "corrupt",
    "dtm",
    "from_gudhi",
    "gap_threshold",
    "gudhi_superlevel_persistence",
    "headline",
    "largest_gap_count",
    "log_kde",
    "make_dataset",
    "mma_h0",
    "run",
    "summand_prominence",
    "summands",
    "superlevel_persistence",
    "to_simplextree",
    "tomato",
    "tomato_mp",
]
