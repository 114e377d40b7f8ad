"""Classical (paired) CCA by whitening and an SVD, and the CCA–QAP identity.

Notation (the chapter's equations): views ``X`` (n × p) and ``Y`` (n × q) whose rows are samples.
:func:`whiten` centres a view, keeps its top ``d`` principal directions and rescales them to unit
variance, giving ``X̃`` with ``X̃ᵀX̃ / n = I`` (eq. ``ucca-whiten``). For paired whitened views the
canonical correlations are the singular values of ``X̃ᵀỸ / n`` (eq. ``ucca-cca``); for a pairing
``P`` (row ``i`` of ``X`` with row ``perm[i]`` of ``Y``) the sum of their squares is the
Koopmans–Beckmann objective ``tr(A P B Pᵀ) / n²`` with ``A = X̃X̃ᵀ``, ``B = ỸỸᵀ`` (eq. ``ucca-qap``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.arguments import Array, OfInstance, checked
from ..core.params import Int, Text
from ..core.validation import check_int, check_matrix

#: the largest number of samples, features or directions a function here takes
MAX_SIZE = 10**6


@dataclass(frozen=True)
class Whitening:
    """A fitted whitening map ``x ↦ (x − mean) @ matrix`` (eq. ``ucca-whiten``)."""

    mean: np.ndarray  # (p,)
    matrix: np.ndarray  # (p, d): top-d principal directions divided by their standard deviations

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = check_matrix("X", X)
        if X.shape[1] != self.mean.shape[0]:
            raise ValueError(f"X must have {self.mean.shape[0]} columns, got {X.shape[1]}")
        return (X - self.mean) @ self.matrix


#: a :class:`CCAFit.transform` view, checked against the fit's widths
_OF_FIT = OfInstance("_check_view", "a finite array (n, p) for X, (n, q) for Y, p and q the fit's widths")


@checked(
    x_weights=Array("p k"), y_weights=Array("q k"), correlations=Array("k"), x_mean=Array("p"), y_mean=Array("q")
)
@dataclass(frozen=True)
class CCAFit:
    """Projections ``x_weights`` (p × k), ``y_weights`` (q × k) and the fitted canonical correlations."""

    x_weights: np.ndarray
    y_weights: np.ndarray
    correlations: np.ndarray  # (k,), decreasing
    x_mean: np.ndarray
    y_mean: np.ndarray

    def _check_view(self, name: str, value: object) -> object:
        """A view to project: a finite array with one column per row of its weights."""
        width = (self.x_weights if name == "X" else self.y_weights).shape[0]
        return Array(f"n {width}").check(name, value)

    @checked(X=_OF_FIT, Y=_OF_FIT)
    def transform(self, X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The canonical variates ``(X − mean_x) W_x`` and ``(Y − mean_y) W_y``."""
        return (X - self.x_mean) @ self.x_weights, (Y - self.y_mean) @ self.y_weights


@checked(X=Array("n p", min_size=(("n", 2),)), d=Int(1, MAX_SIZE), name=Text(nonempty=True))
def fit_whitening(X: np.ndarray, d: int, *, name: str = "X") -> Whitening:
    """Centre ``X``, keep its top ``d`` principal directions and scale them to unit variance.

    Implements eq. ``ucca-whiten``: ``X̃ = (X − x̄) V_d Λ_d^{-1/2}``, so that ``X̃ᵀX̃ / n = I_d``.
    Needs ``d <= min(p, n − 1)`` and a view of rank at least ``d``.
    """
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    d = check_int("d", d, 1, min(p, n - 1))
    mean = X.mean(axis=0)
    _, s, vt = np.linalg.svd(X - mean, full_matrices=False)
    var = s[:d] ** 2 / n
    if var[-1] <= 1e-12 * max(var[0], 1e-300):
        raise ValueError(f"{name} has rank < d = {d}: its top-{d} variances are {var}")
    # fix each direction's sign (largest loading positive) so the map is deterministic
    signs = np.sign(vt[:d][np.arange(d), np.abs(vt[:d]).argmax(axis=1)])
    return Whitening(mean=mean, matrix=(vt[:d].T * signs) / np.sqrt(var))


# fit_whitening runs bare
@checked(skip_nested=True, X=Array("n p", min_size=(("n", 2),)), d=Int(1, MAX_SIZE), name=Text(nonempty=True))
def whiten(X: np.ndarray, d: int, *, name: str = "X") -> np.ndarray:
    """``X̃``: ``X`` centred, reduced to ``d`` principal directions and whitened (eq. ``ucca-whiten``)."""
    return fit_whitening(X, d, name=name)(X)


@checked(skip_nested=True, X=Array("n p"), Y=Array("n q"), n_components=Int(1, MAX_SIZE), d=Int(1, MAX_SIZE))
def cca(X: np.ndarray, Y: np.ndarray, n_components: int, *, d: int | None = None) -> CCAFit:
    """Classical CCA of paired views (row ``i`` of ``X`` goes with row ``i`` of ``Y``).

    Each view is whitened (eq. ``ucca-whiten``) to ``d`` principal directions, or to its full rank
    when ``d`` is ``None``; then the SVD of ``X̃ᵀỸ / n`` gives the canonical correlations and
    directions (eq. ``ucca-cca``). Returns weights that act on the *centred raw* views.
    """
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    n = X.shape[0]
    if d is None:
        d_x, d_y = min(X.shape[1], n - 1), min(Y.shape[1], n - 1)
    else:
        d_x = d_y = check_int("d", d, 1, min(X.shape[1], Y.shape[1], n - 1))
    n_components = check_int("n_components", n_components, 1, min(d_x, d_y))
    wx, wy = fit_whitening(X, d_x, name="X"), fit_whitening(Y, d_y, name="Y")  # bare: the views are checked above
    u, s, vt = np.linalg.svd(wx(X).T @ wy(Y) / n)
    k = n_components
    return CCAFit(
        x_weights=wx.matrix @ u[:, :k],
        y_weights=wy.matrix @ vt[:k].T,
        correlations=s[:k],
        x_mean=wx.mean,
        y_mean=wy.mean,
    )


@checked(X=Array("n p"), Y=Array("n q"))
def variate_correlations(fit: CCAFit, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Pearson correlation of each pair of canonical variates on paired data ``(X, Y)``.

    This is how every method is scored: on the **true** pairing, usually of held-out samples.
    """
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    if X.shape[1] != fit.x_weights.shape[0] or Y.shape[1] != fit.y_weights.shape[0]:
        raise ValueError(
            f"X and Y must have the fit's {fit.x_weights.shape[0]} and {fit.y_weights.shape[0]} columns, "
            f"got {X.shape[1]} and {Y.shape[1]}"
        )
    u, v = fit.transform(X, Y)
    u, v = u - u.mean(0), v - v.mean(0)
    denom = np.sqrt((u**2).sum(0) * (v**2).sum(0))
    return np.where(denom > 0, (u * v).sum(0) / np.where(denom > 0, denom, 1.0), 0.0)


def check_permutation(perm: np.ndarray, n: int, name: str = "perm") -> np.ndarray:
    """``perm`` as an integer array that is a permutation of ``0 .. n−1``, else ``ValueError``."""
    perm = np.asarray(perm)
    if (
        perm.shape != (n,)
        or not np.issubdtype(perm.dtype, np.integer)
        or not np.array_equal(np.sort(perm), np.arange(n))
    ):
        raise ValueError(f"{name} must be a permutation of 0..{n - 1} (an integer array of length {n})")
    return perm


@checked(Xw=Array("n p"), Yw=Array("n q"), perm=Array("n"))
def sum_squared_correlations(Xw: np.ndarray, Yw: np.ndarray, perm: np.ndarray) -> float:
    """``Σ_i ρ_i²`` of whitened views paired by ``perm`` (row ``i`` of ``Xw`` with row ``perm[i]`` of ``Yw``).

    The left side of eq. ``ucca-qap``: the squared Frobenius norm of ``X̃ᵀ P Ỹ / n``.
    """
    Xw, Yw = np.asarray(Xw, dtype=np.float64), np.asarray(Yw, dtype=np.float64)
    perm = check_permutation(perm, Xw.shape[0])
    return float(np.sum((Xw.T @ Yw[perm] / Xw.shape[0]) ** 2))


@checked(A=Array("n n"), B=Array("n n"), perm=Array("_"))
def qap_objective(A: np.ndarray, B: np.ndarray, perm: np.ndarray) -> float:
    """Koopmans–Beckmann objective ``tr(Aᵀ P B Pᵀ) = Σ_ij A_ij B_perm(i)perm(j)`` (scipy's convention).

    The right side of eq. ``ucca-qap`` (times ``n²``) with ``A = X̃X̃ᵀ`` and ``B = ỸỸᵀ``.
    """
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    perm = check_permutation(perm, A.shape[0])
    return float(np.sum(A * B[np.ix_(perm, perm)]))
