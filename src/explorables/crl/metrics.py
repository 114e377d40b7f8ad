"""Mean correlation coefficient (MCC) after the optimal matching of learned to true components."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.stats import rankdata

from ..core.arguments import Array, checked
from ..core.params import Choice
from ..core.validation import check_choice

KINDS: tuple[str, ...] = ("pearson", "spearman")
_RULES = dict(z_true=Array("n d"), z_learned=Array("m k"), kind=Choice(KINDS))


@checked(**_RULES)
def correlation_matrix(z_true: np.ndarray, z_learned: np.ndarray, kind: str = "pearson") -> np.ndarray:
    """``|corr(z_true[:, i], z_learned[:, j])|`` for every pair, ``(d_true, d_learned)``.

    ``kind="spearman"`` correlates ranks: it scores 1 for any strictly monotone component-wise map,
    the indeterminacy left by the post-nonlinear model.
    """
    check_choice("kind", kind, ("pearson", "spearman"))
    a, b = np.asarray(z_true, dtype=float), np.asarray(z_learned, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or len(a) != len(b) or len(a) < 2:
        raise ValueError(f"z_true and z_learned must be (n, d) arrays with the same n >= 2, got {a.shape}, {b.shape}")
    if kind == "spearman":
        a, b = rankdata(a, axis=0), rankdata(b, axis=0)
    a = (a - a.mean(0)) / np.maximum(a.std(0), 1e-12)
    b = (b - b.mean(0)) / np.maximum(b.std(0), 1e-12)
    return np.abs(a.T @ b) / len(a)


@checked(skip_nested=True, **_RULES)  # correlation_matrix in the body runs bare: its arguments are checked here
def matched_correlations(z_true: np.ndarray, z_learned: np.ndarray, kind: str = "pearson") -> np.ndarray:
    """Per true component, its absolute correlation with the learned component it is matched to.

    The matching maximises the summed absolute correlation (scipy's ``linear_sum_assignment``, the
    Hungarian method), so a permuted, rescaled copy of the latents scores 1 on every component.
    """
    corr = correlation_matrix(z_true, z_learned, kind)
    rows, cols = linear_sum_assignment(-corr)
    out = np.zeros(corr.shape[0])
    out[rows] = corr[rows, cols]
    return out


@checked(skip_nested=True, **_RULES)  # matched_correlations in the body runs bare
def mcc(z_true: np.ndarray, z_learned: np.ndarray, kind: str = "pearson") -> float:
    """The mean correlation coefficient: the mean of :func:`matched_correlations`."""
    return float(matched_correlations(z_true, z_learned, kind).mean())
