"""Chapter 14: tracing all actual causes (TrAC) in Boolean structural causal models.

Models (:mod:`.scm`), the modified Halpern–Pearl definition, its oracle and baselines
(:mod:`.causes`), our reconstruction of TrAC (:mod:`.trac`), the integer-programming single-cause
baseline of Ibrahim & Pretschner (:mod:`.ilp`), responsibility and blame
(:mod:`.responsibility`), the literature's examples (:mod:`.examples`), the experiment
(:mod:`.experiment`), figures (:mod:`.figures`) and the live lab (:mod:`.lab`, needs ipywidgets).
"""

from .causes import (
    Cause,
    CauseSet,
    ac2_witness,
    brute_force_causes,
    but_for_causes,
    first_cause,
    is_actual_cause,
    minimal_sets,
    parse_outcome,
    pruned_search,
)
from .examples import Example, classic_examples
from .ilp import CheckResult, Enumeration, ilp_check, ilp_enumerate, ilp_minimal_cause
from .responsibility import blame, context_distribution, responsibility
from .scm import SCM, parse_formula, random_boolean_scm
from .trac import trac, witness_map, witness_target_table

__all__ = [
    "SCM",
    "Cause",
    "CauseSet",
    "CheckResult",
    "Enumeration",
    "Example",
    "ac2_witness",
    "blame",
    "brute_force_causes",
    "but_for_causes",
    "classic_examples",
    "context_distribution",
    "first_cause",
    "ilp_check",
    "ilp_enumerate",
    "ilp_minimal_cause",
    "is_actual_cause",
    "minimal_sets",
    "parse_formula",
    "parse_outcome",
    "pruned_search",
    "random_boolean_scm",
    "responsibility",
    "trac",
    "witness_map",
    "witness_target_table",
]

from .experiment import TracConfig, TracResults, headline, run

Config = TracConfig
__all__ += ["Config", "TracConfig", "TracResults", "headline", "run"]
