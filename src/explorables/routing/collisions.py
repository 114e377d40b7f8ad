"""Routing collisions: weightings ``alpha' != alpha`` on the simplex with ``V alpha' = V alpha``.

For a head with value matrix ``V`` (``d x n``: one value vector per source token) the weightings
that give the same output as ``alpha`` form the polytope

    F(alpha) = { alpha' >= 0 : [V; 1^T] alpha' = [V alpha; 1] },

a slice of the simplex by the affine space ``alpha + ker [V; 1^T]``. When ``alpha`` is interior its
dimension is ``n - rank [V; 1^T] >= n - 1 - rank V``, positive as soon as ``rank V <= n - 2``
(Brunner et al., 2020, make the same point for ``n > d_head``). A *harmful* collision is an
``alpha'`` in ``F(alpha)`` whose dominant source differs: :func:`find_collision` looks for one with
a linear program (scipy's HiGHS), maximising the margin ``alpha'_j - max_{i != j} alpha'_i``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from ..core.arguments import Array, checked
from ..core.params import Float, Int, Positive
from ..core.validation import check_int, check_matrix

RANK_TOL = 1e-10


def _check_weights(V: np.ndarray, alpha) -> np.ndarray:
    try:
        a = np.asarray(alpha, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"alpha must be a vector of weights: {exc}") from None
    if a.shape != (V.shape[1],):
        raise ValueError(f"alpha must have shape ({V.shape[1]},) (one weight per column of V), got {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or abs(a.sum() - 1) > 1e-9:
        raise ValueError("alpha must be a point of the simplex: finite, non-negative, summing to 1")
    return a


def augmented(V) -> np.ndarray:
    """``[V; 1^T]``: the value matrix with a row of ones (the simplex constraint)."""
    V = check_matrix("V", V)
    return np.vstack([V, np.ones((1, V.shape[1]))])


@checked(V=Array("d n"))
def fibre_dimension(V: np.ndarray) -> int:
    """``n - rank [V; 1^T]``: the dimension of the collision set of an interior ``alpha``."""
    A = augmented(V)
    return int(A.shape[1] - np.linalg.matrix_rank(A, tol=RANK_TOL * max(1.0, np.abs(A).max())))


def suppressed_dimensions(V) -> int:
    """Routing degrees of freedom the head's output cannot see: ``(n - 1) - (rank [V; 1^T] - 1)``.

    ``alpha`` has ``n - 1`` degrees of freedom on the simplex; the output keeps ``rank [V;1^T] - 1``
    of them, so this equals :func:`fibre_dimension`.
    """
    return fibre_dimension(V)


@checked(
    alpha_prime=Array("n", min_size=(("n", 2),)),
    source=Int(0),
    original_source=Int(0),
    margin=Positive(),
    residual=Float(0.0),
    lp_calls=Int(1),
)
@dataclass
class Collision:
    """A colliding weighting ``alpha_prime`` whose dominant source is ``source`` (not ``alpha``'s)."""

    alpha_prime: np.ndarray
    source: int
    original_source: int
    margin: float  # alpha'_source - max_{i != source} alpha'_i  (> 0)
    residual: float  # ||V alpha' - V alpha||_inf
    lp_calls: int

    def __post_init__(self) -> None:
        n = len(self.alpha_prime)
        if np.any(np.asarray(self.alpha_prime) < 0):
            raise ValueError("alpha_prime must be a weighting: its entries must be >= 0")
        for name in ("source", "original_source"):
            if (position := getattr(self, name)) >= n:
                raise ValueError(f"{name} must be a position of alpha_prime, in [0, {n - 1}], got {position}")
        if self.source == self.original_source:
            raise ValueError(f"source must differ from original_source (a harmful collision), both are {self.source}")


def _max_margin(A: np.ndarray, b: np.ndarray, j: int) -> tuple[float, np.ndarray] | None:
    """Solve max t s.t. A a = b, a >= 0, a_j - a_i >= t (i != j), over ``(a, t)``; ``None`` if infeasible."""
    n = A.shape[1]
    others = [i for i in range(n) if i != j]
    G = np.zeros((n - 1, n + 1))  # rows: a_i - a_j + t <= 0
    G[np.arange(n - 1), others] = 1.0
    G[:, j] = -1.0
    G[:, n] = 1.0
    c = np.zeros(n + 1)
    c[n] = -1.0
    res = linprog(
        c,
        A_ub=G,
        b_ub=np.zeros(n - 1),
        A_eq=np.hstack([A, np.zeros((A.shape[0], 1))]),
        b_eq=b,
        bounds=[(0, None)] * n + [(-1, 1)],
        method="highs",
    )
    if res.status != 0:
        return None
    return float(res.x[n]), res.x[:n]


@checked(V=Array("d n"), alpha=Array("n"), min_margin=Positive(), candidates=Int(1))
def find_collision(
    V: np.ndarray, alpha: np.ndarray, *, min_margin: float = 1e-6, candidates: int | None = None
) -> Collision | None:
    """A weighting ``alpha'`` with ``V alpha' = V alpha``, on the simplex, whose argmax is another token.

    Tries the other tokens ``j`` in decreasing order of ``alpha_j`` (at most ``candidates`` of them):
    for each, one LP maximises the margin ``alpha'_j - max_{i != j} alpha'_i`` over the collision
    polytope. The first ``j`` with margin > ``min_margin`` wins. The LP's vertex is then pulled a
    little toward ``alpha`` (a convex combination, still in the polytope) so that no coordinate sits
    on the boundary, and projected back onto ``{[V; 1^T] a = [V alpha; 1]}`` with the pseudo-inverse,
    which brings the residual to rounding level. Returns ``None`` when no such ``alpha'`` exists.
    """
    A = augmented(V)
    a = _check_weights(A[:-1], alpha)
    n = A.shape[1]
    candidates = n - 1 if candidates is None else check_int("candidates", candidates, maximum=n - 1)
    b = A @ a
    source = int(np.argmax(a))
    order = [j for j in np.argsort(-a, kind="stable") if j != source][:candidates]
    pinv = np.linalg.pinv(A)
    for calls, j in enumerate(order, start=1):
        solved = _max_margin(A, b, int(j))
        if solved is None or solved[0] <= min_margin:
            continue
        t, vertex = solved
        theta = 1.0 - 0.25 * t  # keeps a margin >= t/2 and every coordinate >= (t/4) min(alpha)
        candidate = theta * np.clip(vertex, 0.0, None) + (1 - theta) * a
        candidate = candidate + pinv @ (b - A @ candidate)
        candidate = np.clip(candidate, 0.0, None)
        rest = np.delete(candidate, j)
        margin = float(candidate[j] - rest.max())
        if margin <= 0:
            continue
        residual = float(np.abs(A[:-1] @ candidate - A[:-1] @ a).max())
        return Collision(candidate, int(j), source, margin, residual, calls)
    return None


@checked(v=Array(None))
def segment_in_triangle(v: np.ndarray, output: float) -> np.ndarray | None:
    """The preimage ``{alpha in simplex: v . alpha = output}`` for ``n = 3`` and a 1 x 3 ``V``.

    With rank 1 = n - 2 it is a segment; returns its two endpoints (barycentric, shape ``(2, 3)``),
    or ``None`` when ``output`` lies outside ``[min v, max v]``.
    """
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    if v.shape != (3,):
        raise ValueError(f"v must have 3 entries (one value per token), got shape {v.shape}")
    points = []
    for i, k in ((0, 1), (1, 2), (0, 2)):  # edges of the triangle: alpha = s e_i + (1 - s) e_k
        if v[i] == v[k]:
            if np.isclose(v[i], output):
                points += [np.eye(3)[i], np.eye(3)[k]]
            continue
        s = (output - v[k]) / (v[i] - v[k])
        if -1e-12 <= s <= 1 + 1e-12:
            p = np.zeros(3)
            p[i], p[k] = s, 1 - s
            points.append(np.clip(p, 0, 1))
    if not points:
        return None
    points = np.unique(np.round(np.array(points), 12), axis=0)
    if len(points) == 1:
        return np.vstack([points[0], points[0]])
    far = max(((p, q) for p in points for q in points), key=lambda pq: np.abs(pq[0] - pq[1]).sum())
    return np.vstack(far)


@checked(endpoints=Array("2 n"), samples=Int(2, 10**7))
def dominant_pieces(endpoints: np.ndarray, samples: int = 401) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Split a segment (two barycentric endpoints) into pieces by dominant token: ``(token, start, end)``."""
    endpoints = np.asarray(endpoints, dtype=np.float64)
    s = np.linspace(0.0, 1.0, samples)[:, None]
    pts = (1 - s) * endpoints[0] + s * endpoints[1]
    owner = pts.argmax(1)
    pieces, start = [], 0
    for k in range(1, samples + 1):
        if k == samples or owner[k] != owner[start]:
            if k - start > 1:  # a single sample is a tie on a boundary, not a piece
                pieces.append((int(owner[start]), pts[start], pts[k - 1]))
            start = k
    return pieces
