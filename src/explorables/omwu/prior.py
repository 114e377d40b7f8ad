r"""The earlier linear rate's dependence on the game, in our reading, for 2x2 games.

Wei, Lee, Zhang and Luo (ICLR 2021) prove that OMWU with a constant step size converges linearly in
the last iterate when the equilibrium is unique, with a contraction constant that depends on the
game. We could not read their theorem statement from a stored source, so the *shape* used here is
**our reading of the structure of their argument**, not a formula quoted from the paper:

* a per-step decrease of their potential of order :math:`\eta^2 c^2 \lVert z_t - z^*\rVert_1^2`, where
  :math:`c` is the game's error-bound (metric-subregularity) constant,
  :math:`\mathrm{gap}(z) \ge c\,\lVert z - z^*\rVert_1`;
* near the equilibrium, :math:`\mathrm{KL}(z^*\|z) \lesssim \lVert z - z^*\rVert_1^2 / \xi` with
  :math:`\xi` the smallest equilibrium probability,

which together give a rate per step of order :math:`\eta^2\,\xi\,c^2` (universal constant unknown).
On the hard family :math:`A_\delta`, :math:`\xi = \delta/(1+\delta)` and :math:`c = \delta/2`, so
the earlier rate scales like :math:`\delta^3` where the measured one scales like :math:`\delta`.
"""

from __future__ import annotations

import numpy as np

from ..core.arguments import Array, checked
from ..core.params import Positive
from .equilibrium import solve_nash


@checked(A=Array("2 2"))
def error_bound_constant_2x2(A: np.ndarray) -> float:
    r"""The largest :math:`c` with :math:`\mathrm{gap}(x, y) \ge c\,(\lVert x-x^*\rVert_1 + \lVert y-y^*\rVert_1)`.

    For a 2x2 game with an interior equilibrium the duality gap is, around the equilibrium, the sum of a
    piecewise-linear function of :math:`x_2 - x^*_2` and one of :math:`y_2 - y^*_2`, so the smallest
    ratio gap / distance sits on one of the four axis directions. With :math:`a = A_{2\cdot} - A_{1\cdot}`
    and :math:`b = A_{\cdot 2} - A_{\cdot 1}`,
    :math:`c = \tfrac12 \min(\max_j a_j, -\min_j a_j, \max_i b_i, -\min_i b_i)`.
    """
    A = np.asarray(A, dtype=np.float64)
    if not solve_nash(A).is_interior:
        raise ValueError("A must have an interior equilibrium (the error-bound constant is defined around it)")
    a = A[1] - A[0]
    b = A[:, 1] - A[:, 0]
    return 0.5 * float(min(a.max(), -a.min(), b.max(), -b.min()))


@checked(A=Array("n m"), eta=Positive())
def prior_rate_shape(A: np.ndarray, eta: float) -> float:
    r"""Our reading of the earlier linear rate's game dependence: :math:`\eta^2\,\xi\,c^2` (2x2 games).

    ``xi`` is the smallest equilibrium probability of either player and ``c`` the error-bound constant of
    :func:`error_bound_constant_2x2`. The universal constant in front is unknown, so only ratios and
    exponents of this shape are meaningful.
    """
    A = np.asarray(A, dtype=np.float64)
    nash = solve_nash(A)
    xi = float(min(nash.x.min(), nash.y.min()))
    return float(eta) ** 2 * xi * error_bound_constant_2x2(A) ** 2
