"""Chapter 16: Muon in the river valley.

Muon's orthogonalisation (:mod:`.orthogonalize`) and optimiser (:mod:`.optim`), the mixed-spiked
matrix sensing model as a river valley (:mod:`.sensing`, our reconstruction), GD / Muon / the
two-stage schedule on it (:mod:`.optimizers`), a tiny language model (:mod:`.lm`), the experiment
(:mod:`.experiment`), figures, claims and the live lab (:mod:`.lab`, on demand).
"""

from .experiment import MuonConfig, MuonResults, headline, run
from .optim import Muon
from .optimizers import SensingRun, optimize, oscillation
from .orthogonalize import NS_COEFFICIENTS, newton_schulz, polar_factor
from .sensing import SensingProblem, make_problem

Config = MuonConfig

__all__ = [
    "NS_COEFFICIENTS",
    "Config",
    "Muon",
    "MuonConfig",
    "MuonResults",
    "SensingProblem",
    "SensingRun",
    "headline",
    "make_problem",
    "newton_schulz",
    "optimize",
    "oscillation",
    "polar_factor",
    "run",
]
