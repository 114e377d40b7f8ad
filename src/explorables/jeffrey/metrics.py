"""Distances between samples: MMD (kernel two-sample distance), the Fréchet distance, cell frequencies."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import torch

from ..core.validation import check_int

#: RBF bandwidths of the MMD on the 2-D toy (a sum of kernels: no single length scale to tune)
BANDWIDTHS: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0)


def mmd2(x: torch.Tensor, y: torch.Tensor, bandwidths: tuple[float, ...] = BANDWIDTHS) -> float:
    """Unbiased estimate of the squared MMD between samples ``x`` and ``y`` with a sum of RBF kernels.

    ``MMD^2 = E k(x, x') + E k(y, y') - 2 E k(x, y)`` (Gretton et al., 2012); the unbiased
    estimator drops the diagonal terms, so it can be slightly negative when the two agree.
    """
    x, y = torch.as_tensor(x, dtype=torch.float64).flatten(1), torch.as_tensor(y, dtype=torch.float64).flatten(1)
    if len(x) < 2 or len(y) < 2:
        raise ValueError(f"mmd2 needs at least 2 points in each sample, got {len(x)} and {len(y)}")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x and y must have the same dimension, got {x.shape[1]} and {y.shape[1]}")

    def k(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        d2 = torch.cdist(a, b).pow(2)
        return sum(torch.exp(-d2 / (2 * h * h)) for h in bandwidths)

    n, m = len(x), len(y)
    k_xx, k_yy = k(x, x), k(y, y)  # each Gram matrix once (it is the expensive part)
    kxx = (k_xx.sum() - k_xx.diagonal().sum()) / (n * (n - 1))
    kyy = (k_yy.sum() - k_yy.diagonal().sum()) / (m * (m - 1))
    return float(kxx + kyy - 2 * k(x, y).mean())


def cell_frequencies(cells: torch.Tensor | np.ndarray, n_cells: int) -> np.ndarray:
    """Empirical distribution of a discrete statistic (counts / n)."""
    n_cells = check_int("n_cells", n_cells, minimum=1)
    c = np.asarray(torch.as_tensor(cells).cpu(), dtype=np.int64)
    if c.size == 0:
        raise ValueError("cells must be non-empty")
    if c.min() < 0 or c.max() >= n_cells:
        raise ValueError(f"cells must lie in [0, {n_cells - 1}]")
    return np.bincount(c, minlength=n_cells) / c.size


def conditional_mmd2(
    x: torch.Tensor, x_cells: torch.Tensor, y: torch.Tensor, y_cells: torch.Tensor, weights: np.ndarray
) -> float:
    """``sum_s weights[s] MMD^2(x | s, y | s)``: how far the conditionals given the statistic are apart.

    Cells with fewer than 5 points in either sample are skipped (their weight is renormalised away).
    """
    total, mass = 0.0, 0.0
    for s, w in enumerate(np.asarray(weights, dtype=np.float64)):
        xs, ys = x[x_cells == s], y[y_cells == s]
        if w > 0 and len(xs) >= 5 and len(ys) >= 5:
            total += w * mmd2(xs, ys)
            mass += w
    return total / mass if mass > 0 else float("nan")


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
