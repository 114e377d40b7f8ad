"""Chapter 09: Unpaired Canonical Correlation Analysis (UCCA) through the quadratic assignment problem.

Classical CCA and the CCA–QAP identity (:mod:`.cca`), UCCA itself (:mod:`.method`), data with a
known true pairing (:mod:`.data`), baselines (:mod:`.baselines`), the experiment
(:mod:`.experiment`), its claims (:mod:`.claims`), figures (:mod:`.figures`) and the live lab
(:mod:`.lab`, imported on demand: it needs ipywidgets).
"""

from .baselines import cca_on_pairing, gromov_wasserstein_pairing, random_pairing, wasserstein_procrustes_pairing
from .cca import CCAFit, cca, fit_whitening, qap_objective, sum_squared_correlations, variate_correlations, whiten
from .data import TwoViews, breast_cancer_views, digit_halves, synthetic_views, unpaired, wine_views
from .experiment import UCCAConfig, UCCAResults, headline, run
from .method import UCCAFit, entropic_pairing, faq_pairing, ranked_starts, refine_pairing, rotation_start, ucca

Config = UCCAConfig

__all__ = [
    "CCAFit",
    "Config",
    "TwoViews",
    "UCCAConfig",
    "UCCAFit",
    "UCCAResults",
    "breast_cancer_views",
    "cca",
    "cca_on_pairing",
    "digit_halves",
    "entropic_pairing",
    "faq_pairing",
    "fit_whitening",
    "gromov_wasserstein_pairing",
    "headline",
    "qap_objective",
    "random_pairing",
    "ranked_starts",
    "refine_pairing",
    "rotation_start",
    "run",
    "sum_squared_correlations",
    "synthetic_views",
    "ucca",
    "unpaired",
    "variate_correlations",
    "wasserstein_procrustes_pairing",
    "whiten",
    "wine_views",
]
