"""Chapter 16 (in progress): Muon in the river valley.

Done so far: Muon's Newton–Schulz orthogonalisation (:mod:`.orthogonalize`, identical to
``torch.optim.Muon``'s in bfloat16), the mixed-spiked matrix sensing model as a river valley
(:mod:`.sensing`, our reconstruction), and GD / Muon / the two-stage schedule on it
(:mod:`.optimizers`). Not yet: the experiment presets, figures, live lab, the tiny language
model and the book page; the chapter is not registered with the runner until they exist.
"""

from .optimizers import SensingRun, optimize, oscillation
from .orthogonalize import NS_COEFFICIENTS, newton_schulz, polar_factor
from .sensing import SensingProblem, make_problem

__all__ = [
    "NS_COEFFICIENTS",
    "SensingProblem",
    "SensingRun",
    "make_problem",
    "newton_schulz",
    "optimize",
    "oscillation",
    "polar_factor",
]
