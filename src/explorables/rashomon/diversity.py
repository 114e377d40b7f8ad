r"""Prediction diversity: how much the models of a Rashomon set disagree on the data.

The Rashomon set's third notion, next to its size (:func:`~.models.log_volume`) and the simplifications
it contains (:func:`~.models.reducibility_cost`). We draw models uniformly from the quadratic Rashomon
set, the ellipsoid :math:`E_\theta = \{\hat\beta + \Delta : \Delta^T H \Delta \le 2\theta\}` that the
chapter's volumes use (exactly the Rashomon set for least squares, its second-order form for the
logistic loss), and measure the spread of their predictions on a set of points:

* ``spread``: the mean over points of the standard deviation, across the sampled models, of the
  prediction (the fitted value for least squares, the predicted probability for the logistic loss);
* ``ambiguity`` (logistic only): the fraction of points whose predicted label (probability above 1/2)
  some model *of the set* changes from the best model's label, the "ambiguity" of predictive multiplicity
  (Marx, Calmon and Ustun, 2020). It is defined over the whole set, and for an ellipsoid it has a closed
  form (:func:`ellipsoid_ambiguity`): the margin :math:`x_{1i}^T\beta` ranges over
  :math:`x_{1i}^T\hat\beta \pm \sqrt{2\theta\,x_{1i}^T H^{-1} x_{1i}}` on :math:`E_\theta`, so point
  :math:`i` is ambiguous exactly when :math:`|x_{1i}^T\hat\beta| < \sqrt{2\theta\,x_{1i}^T H^{-1} x_{1i}}`
  (:math:`x_{1i} = (1, x_i)`);
* ``sampled_ambiguity``: the same fraction over the sampled models only, a check: it can never exceed the
  closed form (every sampled model lies in the set) and approaches it as the draws grow;
* ``pattern_diversity`` (logistic only): the mean pairwise disagreement of the models' labels, the mean
  over points of :math:`2q_i(1-q_i)` with :math:`q_i` the share of the set (by volume, i.e. of uniform
  draws) that predicts 1 on point :math:`i`: the chance that two models drawn uniformly from the set
  disagree on a random point, Semenova et al.'s (2023) pattern diversity, here weighted by volume rather
  than over distinct patterns. It is estimated without bias by the mean over distinct pairs of draws,
  :math:`2\hat q_i(1-\hat q_i)\,k/(k-1)` for :math:`k` draws, so unlike the sampled ambiguity its
  estimate does not grow with the draw count. At most half the closed-form ambiguity: only ambiguous
  points can have :math:`0 < q_i < 1`.

Sampling: with :math:`H = LL^T` (Cholesky) and :math:`u` uniform in the unit ball,
:math:`\Delta = \sqrt{2\theta}\,L^{-T}u` is uniform in :math:`E_\theta` and
:math:`\Delta^T H \Delta = 2\theta\lVert u\rVert^2 \le 2\theta`. The same seed gives the same
:math:`u`, so a larger level only stretches the same draws: the least-squares spread grows exactly as
:math:`\sqrt\theta` and the ambiguity cannot fall.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

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


@checked(
    spread=Float(0.0),
    ambiguity=Float(0.0, 1.0),
    n_models=Int(1, MAX_MODELS),
    sampled_ambiguity=Float(0.0, 1.0),
    pattern_diversity=Float(0.0, 1.0),
    pattern_split=Float(0.0, 1.0),
)
@dataclass(frozen=True)
class Diversity:
    """Prediction diversity of a Rashomon set on some points (see the module docstring): ``ambiguity`` is the
    set's (closed form from :func:`rashomon_diversity`; 0 for least squares), the others are estimated from
    ``n_models`` draws; ``pattern_split`` is how far the pattern diversity of the first half of the draws lies
    from the second's (how well the draws resolve it)."""

    spread: float
    ambiguity: float
    n_models: int
    sampled_ambiguity: float = 0.0
    pattern_diversity: float = 0.0
    pattern_split: float = 0.0


@checked(X=Array("n d"), level=Float(0.0))
def ellipsoid_ambiguity(fitted: Fit, X: np.ndarray, level: float) -> float:
    """The ambiguity of the whole quadratic Rashomon set ``{beta_hat + Delta : Delta^T H Delta <= 2 level}`` on
    the points ``X``, in closed form: the fraction of points with ``|x1^T beta_hat| < sqrt(2 level x1^T H^-1 x1)``,
    ``x1 = (1, x)`` (some model of the set puts them on the other side of the decision boundary). 0 for least
    squares, which has no labels to change."""
    X = np.asarray(X, dtype=np.float64)
    if X.shape[1] != fitted.w.size:
        raise ValueError(f"X must have {fitted.w.size} columns (the weights of fitted), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X must contain only finite numbers")
    if fitted.loss == "squared":
        return 0.0
    X1 = np.column_stack([np.ones(len(X)), X])
    try:
        chol = np.linalg.cholesky(fitted.hessian)
    except np.linalg.LinAlgError:
        msg = "the loss Hessian of fitted is not positive definite (singular design); use ridge > 0"
        raise ValueError(msg) from None
    reach = np.sqrt(2 * level * np.sum(solve_triangular(chol, X1.T, lower=True) ** 2, axis=0))  # sqrt(2θ x1' H^-1 x1)
    return float(np.mean(np.abs(X1 @ fitted.beta) < reach))


def _pattern(labels: np.ndarray) -> float:
    """Mean over points of the disagreement of distinct pairs of rows of ``labels`` (models x points, 0/1)."""
    k = labels.shape[0]
    if k < 2:
        return 0.0
    q = labels.mean(axis=0)
    return float(np.mean(2 * q * (1 - q)) * k / (k - 1))


@checked(X=Array("n d"), models=Array("k p"))
def prediction_diversity(fitted: Fit, X: np.ndarray, models: np.ndarray) -> Diversity:
    """The spread of the predictions of ``models`` (rows ``(b, w)``, e.g. from :func:`sample_rashomon`) on the
    points ``X``, and for the logistic loss their ambiguity against ``fitted``'s labels and their pattern diversity
    (0 for least squares). ``ambiguity`` here is the sampled one (no level is known); :func:`rashomon_diversity`
    reports the set's closed form."""
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
    labels = margins > 0
    sampled = float((labels != best[None, :]).any(axis=0).mean())
    half = len(models) // 2
    return Diversity(
        spread=float(np.std(expit(margins), axis=0).mean()),
        ambiguity=sampled,
        n_models=len(models),
        sampled_ambiguity=sampled,
        pattern_diversity=_pattern(labels),
        pattern_split=abs(_pattern(labels[:half]) - _pattern(labels[half:])),
    )


@checked(X=Array("n d"), level=Float(0.0), n_models=Int(1, MAX_MODELS), seed=Int(0))
def rashomon_diversity(fitted: Fit, X: np.ndarray, level: float, n_models: int = 200, seed: int = 0) -> Diversity:
    """:func:`prediction_diversity` of ``n_models`` models drawn by :func:`sample_rashomon` at ``level``, with the
    set's closed-form ambiguity (:func:`ellipsoid_ambiguity`) as ``ambiguity``; the draws' own value stays in
    ``sampled_ambiguity``."""
    sampled = prediction_diversity(fitted, X, sample_rashomon(fitted, level, n_models, seed))
    return replace(sampled, ambiguity=ellipsoid_ambiguity(fitted, X, level))
