"""Nash equilibria of zero-sum matrix games by linear programming (``scipy.optimize.linprog``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from ..core.arguments import Array, checked


@checked(x=Array("n"), y=Array("m"))
@dataclass(frozen=True)
class NashEquilibrium:
    """An equilibrium ``(x, y)`` of ``min_x max_y x^T A y`` and the game's value."""

    x: np.ndarray
    y: np.ndarray
    value: float

    @property
    def is_interior(self) -> bool:
        """True when every coordinate of both strategies exceeds ``1e-9``."""
        return bool(self.x.min() > 1e-9 and self.y.min() > 1e-9)


@checked(A=Array("n m"))
def solve_nash(A: np.ndarray) -> NashEquilibrium:
    r"""Solve a zero-sum game exactly with two linear programs (HiGHS via scipy).

    Row player: :math:`\min_{x, w} w` subject to :math:`A^T x \le w \mathbf 1`,
    :math:`\mathbf 1^T x = 1`, :math:`x \ge 0`. Column player: :math:`\max_{y, z} z` subject to
    :math:`A y \ge z \mathbf 1`, :math:`\mathbf 1^T y = 1`, :math:`y \ge 0`. By the minimax
    theorem both optimal values equal the value of the game.
    """
    A = np.asarray(A, dtype=np.float64)
    n, m = A.shape
    # Row player: variables (x_1..x_n, w); minimise w.
    c = np.r_[np.zeros(n), 1.0]
    res_x = linprog(
        c,
        A_ub=np.c_[A.T, -np.ones(m)],
        b_ub=np.zeros(m),
        A_eq=np.r_[np.ones(n), 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * n + [(None, None)],
        method="highs",
    )
    # Column player: variables (y_1..y_m, z); maximise z == minimise -z.
    res_y = linprog(
        np.r_[np.zeros(m), -1.0],
        A_ub=np.c_[-A, np.ones(n)],
        b_ub=np.zeros(n),
        A_eq=np.r_[np.ones(m), 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * m + [(None, None)],
        method="highs",
    )
    if not (res_x.success and res_y.success):  # pragma: no cover - LPs of games are always feasible
        raise RuntimeError(f"linprog failed: {res_x.message}; {res_y.message}")
    x = np.clip(res_x.x[:n], 0.0, None)
    y = np.clip(res_y.x[:m], 0.0, None)
    return NashEquilibrium(x=x / x.sum(), y=y / y.sum(), value=float(res_x.x[-1]))
