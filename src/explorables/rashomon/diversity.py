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
  points can have :math:`0 < q_i < 1`. It too has a closed form on the ellipsoid
  (:func:`ellipsoid_pattern_diversity`): the margin of a uniform draw is
  :math:`x_{1i}^T\hat\beta + r_i t` with :math:`r_i = \sqrt{2\theta\,x_{1i}^T H^{-1} x_{1i}}` and :math:`t` one
  coordinate of a uniform point of the unit ball in :math:`p` dimensions, whose law is
  :math:`(1+t)/2 \sim \mathrm{Beta}(\tfrac{p+1}{2}, \tfrac{p+1}{2})`; so
  :math:`q_i = F_t(x_{1i}^T\hat\beta / r_i)` exactly, with no Monte-Carlo error;
* ``sampled_pattern``, ``pattern_se``: the draws' unbiased estimate of the pattern diversity and its standard
  error (batch means over ``PATTERN_BATCHES`` batches of the draws), a check against the closed form.

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
from scipy.special import betainc, expit

from ..core.arguments import Array, checked
from ..core.params import Float, Int
from .models import Fit

#: the most models one draw takes (a bigger number is a typo, not a study)
MAX_MODELS = 10**6
#: batches of the draws whose pattern diversities give the standard error of the sampled one (batch means)
PATTERN_BATCHES = 20


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
    sampled_pattern=Float(0.0, 1.0),
    pattern_se=Float(0.0),
)
@dataclass(frozen=True)
class Diversity:
    """Prediction diversity of a Rashomon set on some points (see the module docstring): ``ambiguity`` and
    ``pattern_diversity`` are the set's (closed forms from :func:`rashomon_diversity`; 0 for least squares), the
    others are estimated from ``n_models`` draws; ``pattern_se`` is the standard error of ``sampled_pattern``
    (batch means; 0 with fewer than ``2 * PATTERN_BATCHES`` draws)."""

    spread: float
    ambiguity: float
    n_models: int
    sampled_ambiguity: float = 0.0
    pattern_diversity: float = 0.0
    sampled_pattern: float = 0.0
    pattern_se: float = 0.0


@checked(X=Array("n d"), level=Float(0.0))
def ellipsoid_ambiguity(fitted: Fit, X: np.ndarray, level: float) -> float:
    """The ambiguity of the whole quadratic Rashomon set ``{beta_hat + Delta : Delta^T H Delta <= 2 level}`` on
    the points ``X``, in closed form: the fraction of points with ``|x1^T beta_hat| < sqrt(2 level x1^T H^-1 x1)``,
    ``x1 = (1, x)`` (some model of the set puts them on the other side of the decision boundary). 0 for least
    squares, which has no labels to change."""
    X = _check_points(fitted, X)
    if fitted.loss == "squared":
        return 0.0
    margin, reach = _margin_reach(fitted, X, level)
    return float(np.mean(np.abs(margin) < reach))


def _check_points(fitted: Fit, X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.shape[1] != fitted.w.size:
        raise ValueError(f"X must have {fitted.w.size} columns (the weights of fitted), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X must contain only finite numbers")
    return X


def _margin_reach(fitted: Fit, X: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per point, the best model's margin ``x1^T beta_hat`` and how far the set moves it,
    ``sqrt(2 level x1^T H^-1 x1)``."""
    X1 = np.column_stack([np.ones(len(X)), X])
    try:
        chol = np.linalg.cholesky(fitted.hessian)
    except np.linalg.LinAlgError:
        msg = "the loss Hessian of fitted is not positive definite (singular design); use ridge > 0"
        raise ValueError(msg) from None
    reach = np.sqrt(2 * level * np.sum(solve_triangular(chol, X1.T, lower=True) ** 2, axis=0))  # sqrt(2θ x1' H^-1 x1)
    return X1 @ fitted.beta, reach


@checked(X=Array("n d"), level=Float(0.0))
def ellipsoid_pattern_diversity(fitted: Fit, X: np.ndarray, level: float) -> float:
    """The pattern diversity of the whole quadratic Rashomon set on the points ``X``, in closed form: the mean over
    points of ``2 q (1 - q)``, where ``q`` is the share of the set (by volume) that predicts 1 on the point. A uniform
    draw's margin is ``m + r t`` (``m = x1^T beta_hat``, ``r = sqrt(2 level x1^T H^-1 x1)``) with ``t`` one coordinate
    of a uniform point of the unit ball in ``p`` dimensions, ``(1 + t) / 2 ~ Beta((p+1)/2, (p+1)/2)``; so
    ``q = F_t(m / r)``. 0 for least squares (no labels) and at ``level = 0`` (one model)."""
    X = _check_points(fitted, X)
    if fitted.loss == "squared":
        return 0.0
    margin, reach = _margin_reach(fitted, X, level)
    a = (fitted.n_params + 1) / 2
    s = np.divide(margin, reach, out=np.where(margin >= 0, np.inf, -np.inf), where=reach > 0)
    q = betainc(a, a, np.clip((1 + s) / 2, 0.0, 1.0))  # P(t < s) = P(the draw's margin > 0), t symmetric
    return float(np.mean(2 * q * (1 - q)))


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
    pattern = _pattern(labels)
    se = 0.0
    if len(models) >= 2 * PATTERN_BATCHES:  # batch means: the spread of the batches' unbiased estimates
        batches = [_pattern(b) for b in np.array_split(labels, PATTERN_BATCHES)]
        se = float(np.std(batches, ddof=1) / np.sqrt(PATTERN_BATCHES))
    return Diversity(
        spread=float(np.std(expit(margins), axis=0).mean()),
        ambiguity=sampled,
        n_models=len(models),
        sampled_ambiguity=sampled,
        pattern_diversity=pattern,
        sampled_pattern=pattern,
        pattern_se=se,
    )


@checked(X=Array("n d"), level=Float(0.0), n_models=Int(1, MAX_MODELS), seed=Int(0))
def rashomon_diversity(fitted: Fit, X: np.ndarray, level: float, n_models: int = 200, seed: int = 0) -> Diversity:
    """:func:`prediction_diversity` of ``n_models`` models drawn by :func:`sample_rashomon` at ``level``, with the
    set's closed forms as ``ambiguity`` (:func:`ellipsoid_ambiguity`) and ``pattern_diversity``
    (:func:`ellipsoid_pattern_diversity`); the draws' own values stay in ``sampled_ambiguity`` and
    ``sampled_pattern``."""
    sampled = prediction_diversity(fitted, X, sample_rashomon(fitted, level, n_models, seed))
    return replace(
        sampled,
        ambiguity=ellipsoid_ambiguity(fitted, X, level),
        pattern_diversity=ellipsoid_pattern_diversity(fitted, X, level),
    )
