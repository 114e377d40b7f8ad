"""Zero-sum matrix games used in the chapter.

Convention throughout: the row player ``x`` *minimises* the bilinear loss ``x^T A y`` and the
column player ``y`` *maximises* it. A Nash equilibrium ``(x*, y*)`` is *interior* when every
coordinate of both strategies is positive; the linear last-iterate rate of the paper holds for
games with a unique interior equilibrium.
"""

from __future__ import annotations

import numpy as np

from ..core.arguments import checked
from ..core.params import Int
from ..core.validation import check_distribution, check_in_range, check_int, check_positive


@checked()
def matching_pennies() -> np.ndarray:
    """Matching pennies: the unique equilibrium is uniform for both players."""
    return np.array([[1.0, -1.0], [-1.0, 1.0]])


@checked()
def rock_paper_scissors() -> np.ndarray:
    """Rock-paper-scissors as the row player's loss; the unique equilibrium is uniform."""
    return np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])


@checked()
def biased_rock_paper_scissors(bias: float = 3.0) -> np.ndarray:
    """Rock-paper-scissors where the (rock beats scissors) outcome is scaled by ``bias``.

    The matrix stays antisymmetric, so the game value is 0 and the unique equilibrium is
    interior but no longer uniform: it is proportional to ``(1, bias, 1)`` for both players.
    """
    b = check_positive("bias", bias)
    return np.array([[0.0, 1.0, -b], [-1.0, 0.0, 1.0], [b, -1.0, 0.0]])


@checked()
def hard_game(delta: float) -> np.ndarray:
    r"""The 2x2 family :math:`A_\delta = [[1/2+\delta, 1/2], [0, 1]]`.

    Its unique equilibrium (see :func:`hard_game_equilibrium`) approaches a vertex of the
    simplex as ``delta -> 0``, which is where OMWU's energy stops dissipating. Used by Cai et
    al. (NeurIPS 2024) to show that OMWU's last iterate can converge arbitrarily slowly.
    """
    d = check_in_range("delta", delta, 0.0, 1.0, low_inclusive=False)
    return np.array([[0.5 + d, 0.5], [0.0, 1.0]])


@checked()
def hard_game_equilibrium(delta: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Closed-form equilibrium of :func:`hard_game`.

    :math:`x^* = (1, \delta)/(1+\delta)` and :math:`y^* = (1, 1+2\delta)/(2(1+\delta))`,
    found by equalising the opponent's payoffs (``A^T x*`` and ``A y*`` are constant vectors).
    """
    d = check_in_range("delta", delta, 0.0, 1.0, low_inclusive=False)
    x = np.array([1.0, d]) / (1.0 + d)
    y = np.array([1.0, 1.0 + 2.0 * d]) / (2.0 * (1.0 + d))
    return x, y


@checked()
def game_with_equilibrium(
    x_star: np.ndarray, y_star: np.ndarray, rng: np.random.Generator | int = 0, scale: float = 1.0
) -> np.ndarray:
    r"""A random game whose equilibrium is the chosen interior pair ``(x_star, y_star)``.

    Double centring of a Gaussian matrix ``B``:
    :math:`A = B - \mathbf 1 x^{*T} B - B y^* \mathbf 1^T + (x^{*T} B y^*) \mathbf 1 \mathbf 1^T`,
    so that :math:`A y^* = 0` and :math:`A^T x^* = 0`. Then every strategy is a best response to
    the other player's equilibrium strategy, ``(x*, y*)`` is an equilibrium with value 0, and
    for square games it is unique with probability one.
    """
    x_star = np.asarray(x_star, dtype=np.float64)
    y_star = np.asarray(y_star, dtype=np.float64)
    for name, p in (("x_star", x_star), ("y_star", y_star)):
        if p.ndim != 1 or p.size < 2:
            raise ValueError(f"{name} must be a 1-D probability vector with at least 2 entries, got shape {p.shape}")
    x_star = check_distribution("x_star", x_star, x_star.size)
    y_star = check_distribution("y_star", y_star, y_star.size)
    scale = check_positive("scale", scale)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(check_int("rng", rng, minimum=0))
    n, m = x_star.size, y_star.size
    b = gen.standard_normal((n, m))
    ones_n, ones_m = np.ones(n), np.ones(m)
    a = b - np.outer(ones_n, x_star @ b) - np.outer(b @ y_star, ones_m) + (x_star @ b @ y_star)
    return scale * a / np.abs(a).max()


@checked(n=Int(2, 10_000))
def random_interior_game(
    n: int, rng: np.random.Generator | int = 0, min_prob: float = 0.05
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random ``n x n`` game with a random interior equilibrium; returns ``(A, x*, y*)``.

    The equilibrium strategies are drawn from a Dirichlet(1) distribution and then mixed with
    the uniform distribution so that every coordinate is at least ``min_prob / n``... which keeps
    the game's condition (and hence the convergence rate) away from the degenerate boundary.
    """
    min_prob = check_in_range("min_prob", min_prob, 0.0, 1.0, low_inclusive=False)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(check_int("rng", rng, minimum=0))
    x_star = (1 - min_prob) * gen.dirichlet(np.ones(n)) + min_prob / n
    y_star = (1 - min_prob) * gen.dirichlet(np.ones(n)) + min_prob / n
    return game_with_equilibrium(x_star, y_star, gen), x_star, y_star
