"""Distances between samples: MMD (kernel two-sample distance), the Fréchet distance, cell frequencies."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import torch

from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Int, Positive, Tuple
from ..core.resources import check_memory
from ..core.validation import check_int

#: RBF bandwidths of the MMD on the 2-D toy (a sum of kernels: no single length scale to tune)
BANDWIDTHS: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0)


def _points(name: str, value: torch.Tensor | np.ndarray) -> None:
    if value.ndim < 2 or len(value) < 2:
        raise ArgumentError(
            f"{name} must be a sample of at least 2 points, shape (n, ...) with n >= 2, got {tuple(value.shape)}"
        )


@checked(x=Array(), y=Array(), bandwidths=Tuple(Positive()))
def mmd2(
    x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray, bandwidths: tuple[float, ...] = BANDWIDTHS
) -> float:
    """Unbiased estimate of the squared MMD between samples ``x`` and ``y`` with a sum of RBF kernels.

    ``MMD^2 = E k(x, x') + E k(y, y') - 2 E k(x, y)`` (Gretton et al., 2012); the unbiased
    estimator drops the diagonal terms, so it can be slightly negative when the two agree.
    ``x`` is ``(n, ...)`` and ``y`` ``(m, ...)`` with ``n, m >= 2`` and the same size per point.
    """
    x, y = torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y, dtype=torch.float64)
    _points("x", x)
    _points("y", y)
    x, y = x.flatten(1), y.flatten(1)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x and y must have the same dimension, got {x.shape[1]} and {y.shape[1]}")
    n, m = len(x), len(y)
    check_memory({"the Gram matrices of x and y (n and m points)": 8.0 * 3 * (n + m) ** 2})

    def k(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        d2 = torch.cdist(a, b).pow(2)
        return sum(torch.exp(-d2 / (2 * h * h)) for h in bandwidths)

    k_xx, k_yy = k(x, x), k(y, y)  # each Gram matrix once (it is the expensive part)
    kxx = (k_xx.sum() - k_xx.diagonal().sum()) / (n * (n - 1))
    kyy = (k_yy.sum() - k_yy.diagonal().sum()) / (m * (m - 1))
    return float(kxx + kyy - 2 * k(x, y).mean())


@checked(cells=Array(integer=True), n_cells=Int(1, 10**8))
def cell_frequencies(cells: torch.Tensor | np.ndarray, n_cells: int) -> np.ndarray:
    """Empirical distribution of a discrete statistic (counts / n): ``cells`` holds integers in ``[0, n_cells)``."""
    n_cells = check_int("n_cells", n_cells, minimum=1)
    c = np.asarray(torch.as_tensor(cells).cpu(), dtype=np.int64).reshape(-1)
    if c.size == 0:
        raise ValueError("cells must be non-empty")
    if c.min() < 0 or c.max() >= n_cells:
        raise ValueError(f"cells must lie in [0, {n_cells - 1}]")
    return np.bincount(c, minlength=n_cells) / c.size


@checked(
    x=Array("n d"),
    x_cells=Array("n", integer=True),
    y=Array("m d"),
    y_cells=Array("m", integer=True),
    weights=Array("s"),
)
def conditional_mmd2(
    x: torch.Tensor, x_cells: torch.Tensor, y: torch.Tensor, y_cells: torch.Tensor, weights: np.ndarray
) -> float:
    """``sum_s weights[s] MMD^2(x | s, y | s)``: how far the conditionals given the statistic are apart.

    ``x`` ``(n, d)`` and ``y`` ``(m, d)`` are samples, ``x_cells`` and ``y_cells`` their cells (integer
    tensors), ``weights`` ``(S,)`` holds a weight ``>= 0`` per cell. Cells with fewer than 5 points in
    either sample are skipped (their weight is renormalised away); NaN if every cell is skipped.
    """
    for name, value in (("x", x), ("x_cells", x_cells), ("y", y), ("y_cells", y_cells)):
        if not isinstance(value, torch.Tensor):
            raise ArgumentError(f"{name} must be a torch tensor, got {type(value).__name__}")
    if np.any(np.asarray(weights) < 0):
        raise ArgumentError("weights must be >= 0 (one weight per cell)")
    total, mass = 0.0, 0.0
    for s, w in enumerate(np.asarray(weights, dtype=np.float64)):
        xs, ys = x[x_cells == s], y[y_cells == s]
        if w > 0 and len(xs) >= 5 and len(ys) >= 5:
            total += w * mmd2(xs, ys)
            mass += w
    return total / mass if mass > 0 else float("nan")


@checked(a=Array("n d"), b=Array("m e"))  # d = e: checked below, with its own message
def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Fréchet distance between Gaussians fitted to two sets of embeddings (the formula of FID).

    ``|mu_a - mu_b|^2 + tr(S_a + S_b - 2 (S_a S_b)^(1/2))``, with scipy's matrix square root.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"a and b must be (n, d) arrays with the same d, got {a.shape} and {b.shape}")
    if len(a) < 2 or len(b) < 2:
        raise ValueError("a and b need at least 2 rows each")
    mu_a, mu_b = a.mean(0), b.mean(0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    covmean = scipy.linalg.sqrtm(cov_a @ cov_b)
    covmean = np.real(covmean)
    return float(((mu_a - mu_b) ** 2).sum() + np.trace(cov_a + cov_b - 2 * covmean))
