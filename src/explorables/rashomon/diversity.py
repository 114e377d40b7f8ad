r"""Prediction diversity: how much the models of a Rashomon set disagree on the data.

The Rashomon set's third notion, next to its size (:func:`~.models.log_volume`) and the simplifications
it contains (:func:`~.models.reducibility_cost`). We draw models uniformly from the quadratic Rashomon
set, the ellipsoid :math:`E_\theta = \{\hat\beta + \Delta : \Delta^T H \Delta \le 2\theta\}` that the
chapter's volumes use (exactly the Rashomon set for least squares, its second-order form for the
logistic loss), and measure the spread of their predictions on a set of points:

* ``spread``: the mean over points of the standard deviation, across the sampled models, of the
  prediction (the fitted value for least squares, the predicted probability for the logistic loss);
* ``ambiguity`` (logistic only): the fraction of points whose predicted label (probability above 1/2)
  some sampled model changes from the best model's label, the "ambiguity" of predictive multiplicity.

Sampling: with :math:`H = LL^T` (Cholesky) and :math:`u` uniform in the unit ball,
:math:`\Delta = \sqrt{2\theta}\,L^{-T}u` is uniform in :math:`E_\theta` and
:math:`\Delta^T H \Delta = 2\theta\lVert u\rVert^2 \le 2\theta`. The same seed gives the same
:math:`u`, so a larger level only stretches the same draws: the least-squares spread grows exactly as
:math:`\sqrt\theta` and the ambiguity cannot fall.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import expit

from ..core.arguments import Array, checked
from ..core.params import Float, Int
from .models import Fit

#: the most models one draw takes (a bigger number is a typo, not a study)
MAX_MODELS = 10**6


@checked(level=Float(0.0), n_models=Int(1, MAX_MODELS), seed=Int(0))
def sample_rashomon(fitted: Fit, level: float, n_models: int = 200, seed: int = 0) -> np.ndarray:
    """``n_models`` parameter vectors ``(b, w)`` (rows) drawn uniformly in the quadratic Rashomon set
    ``{beta_hat + Delta : Delta^T H Delta <= 2 level}``; ``level = 0`` gives ``beta_hat`` itself."""
    p = fitted.n_params
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((n_models, p))
    u *= (rng.random(n_models) ** (1 / p) / np.linalg.norm(u, axis=1))[:, None]  # uniform in the unit ball
    try:
        chol = np.linalg.cholesky(fitted.hessian)
    except np.linalg.LinAlgError:
        msg = "the loss Hessian of fitted is not positive definite (singular design); use ridge > 0"
        raise ValueError(msg) from None
    delta = np.sqrt(2 * level) * solve_triangular(chol.T, u.T, lower=False).T  # Delta = sqrt(2 level) L^{-T} u
    return fitted.beta + delta


@checked(spread=Float(0.0), ambiguity=Float(0.0, 1.0), n_models=Int(1, MAX_MODELS))
@dataclass(frozen=True)
class Diversity:
    """Prediction diversity of sampled models on some points (see the module docstring)."""

    spread: float
    ambiguity: float
    n_models: int


@checked(X=Array("n d"), models=Array("k p"))
def prediction_diversity(fitted: Fit, X: np.ndarray, models: np.ndarray) -> Diversity:
    """The spread of the predictions of ``models`` (rows ``(b, w)``, e.g. from :func:`sample_rashomon`) on the
    points ``X``, and for the logistic loss the ambiguity against ``fitted``'s labels (0 for least squares)."""
    X, models = np.asarray(X, dtype=np.float64), np.asarray(models, dtype=np.float64)
    if X.shape[1] != fitted.w.size:
        raise ValueError(f"X must have {fitted.w.size} columns (the weights of fitted), got shape {X.shape}")
    if models.shape[1] != fitted.n_params:
        raise ValueError(f"models must have {fitted.n_params} columns (b, w), got shape {models.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(models))):
        raise ValueError("X and models must contain only finite numbers")
    margins = models[:, :1] + models[:, 1:] @ X.T  # (models, points)
    if fitted.loss == "squared":
        return Diversity(spread=float(np.std(margins, axis=0).mean()), ambiguity=0.0, n_models=len(models))
    best = (fitted.beta[0] + X @ fitted.w) > 0
    flipped = ((margins > 0) != best[None, :]).any(axis=0)
    return Diversity(
        spread=float(np.std(expit(margins), axis=0).mean()), ambiguity=float(flipped.mean()), n_models=len(models)
    )


@checked(X=Array("n d"), level=Float(0.0), n_models=Int(1, MAX_MODELS), seed=Int(0))
def rashomon_diversity(fitted: Fit, X: np.ndarray, level: float, n_models: int = 200, seed: int = 0) -> Diversity:
    """:func:`prediction_diversity` of ``n_models`` models drawn by :func:`sample_rashomon` at ``level``."""
    return prediction_diversity(fitted, X, sample_rashomon(fitted, level, n_models, seed))
