r"""Fitting, Rashomon sets and reducibility costs for linear, logistic and additive models.

A model is a parameter vector :math:`\beta = (b, w)` (an unpenalised intercept ``b`` and the
weights ``w``) on a design matrix ``X``. Its empirical loss is

* squared: :math:`L(\beta) = \frac1n \lVert y - b - Xw \rVert^2`;
* logistic: :math:`L(\beta) = \frac1n \sum_i \log(1 + e^{-s_i (b + x_i^T w)})`, labels
  :math:`s_i \in \{-1, +1\}`.

The **Rashomon set** at level :math:`\theta > 0` is
:math:`R_\theta = \{\beta : L(\beta) \le L(\hat\beta) + \theta\}`. With the Hessian :math:`H` of
:math:`L` at the minimiser, :math:`L(\beta) - L(\hat\beta) \approx \frac12 \Delta^T H \Delta`, so
:math:`R_\theta` is (exactly, for the squared loss) the ellipsoid
:math:`\{\Delta^T H \Delta \le 2\theta\}` of volume

.. math:: \mathrm{Vol}(R_\theta) = \frac{\pi^{p/2}}{\Gamma(p/2 + 1)}\,(2\theta)^{p/2}\,\det H^{-1/2},

with :math:`p` the number of parameters. A **simplification** is a linear constraint
:math:`Cw = 0` (drop a feature, tie two coefficients, make a shape function linear). Its
**reducibility cost** is the loss it forces us to give up,

.. math:: c(C) = \min_{Cw = 0} L(\beta) - L(\hat\beta),

and the simplification is *reachable inside the Rashomon set* exactly when :math:`c(C) \le \theta`.
For the squared loss, and to second order for the logistic loss,
:math:`c(C) = \frac12 (C\hat w)^T (C H^{-1}_{ww} C^T)^{-1} (C\hat w)` where :math:`H^{-1}_{ww}` is
the ``w`` block of :math:`H^{-1}` (the intercept is re-fitted freely).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.linalg import null_space
from scipy.optimize import minimize
from scipy.special import expit, gammaln, log_expit

from ..core.arguments import Array, checked
from ..core.params import Choice, Float, Int, Positive
from ..core.validation import check_choice, check_int

#: the largest number of features a constraint is built for (a bigger ``d`` is a typo, not a model)
MAX_FEATURES = 10**6

Loss = Literal["squared", "logistic"]
LOSSES = ("squared", "logistic")


def _check_data(X, y, loss: str) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-D array (samples x features), got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got {y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must contain only finite numbers")
    check_choice("loss", loss, LOSSES)
    if loss == "logistic" and not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("y must hold labels 0 and 1 for the logistic loss")
    return X, y


def loss_value(X: np.ndarray, y: np.ndarray, beta: np.ndarray, loss: Loss) -> np.ndarray:
    """Empirical loss of one parameter vector ``(b, w)`` or a batch of them (rows)."""
    check_choice("loss", loss, LOSSES)
    beta = np.atleast_2d(beta)
    margin = beta[:, :1] + beta[:, 1:] @ X.T  # (batch, n)
    if loss == "squared":
        out = np.mean((y[None, :] - margin) ** 2, axis=1)
    else:
        s = 2 * y - 1
        out = -np.mean(log_expit(s[None, :] * margin), axis=1)
    return out if out.shape[0] > 1 else out[0]


def _loss_grad_hess(X1: np.ndarray, y: np.ndarray, beta: np.ndarray, loss: Loss, ridge: float):
    n = X1.shape[0]
    margin = X1 @ beta
    penalty = ridge * np.r_[0.0, np.ones(len(beta) - 1)]  # the intercept is not penalised
    if loss == "squared":
        r = margin - y
        value = r @ r / n
        grad = 2 * X1.T @ r / n
        hess = 2 * X1.T @ X1 / n
    else:
        s = 2 * y - 1
        value = -np.mean(log_expit(s * margin))
        p = expit(margin)
        grad = X1.T @ (p - y) / n
        hess = (X1 * (p * (1 - p))[:, None]).T @ X1 / n
    value += 0.5 * penalty @ beta**2
    return value, grad + penalty * beta, hess + np.diag(penalty)


@checked(
    beta=Array("p"),
    hessian=Array("p p"),
    loss=Choice(LOSSES),
    ridge=Float(0.0),
)
@dataclass(frozen=True)
class Fit:
    """A fitted model: ``beta = (b, w)``, its loss, and the loss Hessian at ``beta``."""

    beta: np.ndarray
    loss_value: float
    hessian: np.ndarray
    loss: str
    ridge: float

    @property
    def w(self) -> np.ndarray:
        return self.beta[1:]

    @property
    def n_params(self) -> int:
        return self.beta.size


@checked(
    X=Array("n d"),
    y=Array("n"),
    loss=Choice(LOSSES),
    ridge=Float(0.0),
    basis=Array("d k", nonempty=False),  # k = 0: every weight fixed at 0, only the intercept is fitted
)
def fit(
    X: np.ndarray, y: np.ndarray, loss: Loss = "squared", ridge: float = 0.0, basis: np.ndarray | None = None
) -> Fit:
    """Minimise the (optionally ridge-penalised) loss, over ``w = basis @ z`` if ``basis`` is given.

    ``basis`` (``d x k``, orthonormal columns) restricts ``w`` to a subspace: that is how a
    simplification ``Cw = 0`` is fitted exactly (``basis`` = the null space of ``C``). The
    squared loss is solved in closed form; the logistic loss by Newton's method (scipy's
    trust-region Newton-CG). A tiny ``ridge`` keeps separable data finite.
    """
    X, y = _check_data(X, y, loss)
    if ridge < 0 or not np.isfinite(ridge):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")
    d = X.shape[1]
    B = np.eye(d) if basis is None else np.asarray(basis, dtype=np.float64)
    X1 = np.c_[np.ones(len(X)), X @ B]
    k = X1.shape[1]
    if loss == "squared":
        penalty = ridge * np.r_[0.0, np.ones(k - 1)]
        A = X1.T @ X1 / len(X) + 0.5 * np.diag(penalty)
        if np.linalg.cond(A) > 1e12:
            raise ValueError("the design is singular (collinear features); use ridge > 0")
        z = np.linalg.solve(A, X1.T @ y / len(X))
    else:
        res = minimize(
            lambda b: _loss_grad_hess(X1, y, b, loss, ridge)[0],
            np.zeros(k),
            jac=lambda b: _loss_grad_hess(X1, y, b, loss, ridge)[1],
            hess=lambda b: _loss_grad_hess(X1, y, b, loss, ridge)[2],
            method="trust-exact",
            options={"gtol": 1e-10, "maxiter": 500},
        )
        z = res.x
        # separable classes: the loss only reaches 0 as |w| -> infinity, so the optimiser stops at
        # some huge, arbitrary w with a near-zero loss
        if not np.all(np.isfinite(z)) or np.abs(z).max() > 1e6 or (ridge == 0 and res.fun < 1e-5):
            raise ValueError("the logistic fit diverged: the classes are (nearly) separable; use ridge > 0")
    beta = np.r_[z[0], B @ z[1:]]
    X1_full = np.c_[np.ones(len(X)), X]
    value, _, hess = _loss_grad_hess(X1_full, y, beta, loss, ridge)
    return Fit(beta=beta, loss_value=float(value), hessian=hess, loss=loss, ridge=ridge)


@checked(theta=Positive())
def threshold(fitted: Fit, theta: float, relative: bool = False) -> float:
    """The Rashomon level: ``theta`` itself, or ``theta * L(beta_hat)`` when ``relative``."""
    return theta * fitted.loss_value if relative else theta


@checked(level=Positive())
def log_volume(fitted: Fit, level: float) -> float:
    """Log-volume of the (quadratic) Rashomon set ``{Delta^T H Delta <= 2 level}``, all parameters."""
    p = fitted.n_params
    sign, logdet = np.linalg.slogdet(fitted.hessian)
    if sign <= 0:
        raise ValueError("the loss Hessian is not positive definite (singular design); use ridge > 0")
    return float(p / 2 * np.log(np.pi) - gammaln(p / 2 + 1) + p / 2 * np.log(2 * level) - 0.5 * logdet)


def _check_constraint(C: np.ndarray, d: int) -> np.ndarray:
    """``C`` as a 2-D float array of ``d`` columns with linearly independent rows (else a ``ValueError`` naming it)."""
    C = np.atleast_2d(np.asarray(C, dtype=np.float64))
    if C.ndim != 2:
        raise ValueError(f"constraint C must be 1-D or 2-D (rows of a constraint C w = 0), got shape {C.shape}")
    if C.shape[1] != d:
        raise ValueError(f"constraint C must have {d} columns (one per weight), got shape {C.shape}")
    if C.shape[0] > d or np.linalg.matrix_rank(C) < C.shape[0]:
        raise ValueError(f"constraint C must have linearly independent rows (at most {d}), got shape {C.shape}")
    return C


@checked(C=Array("... d"))
def reducibility_cost(fitted: Fit, C: np.ndarray) -> float:
    r"""The loss a simplification ``C w = 0`` costs, eq. (rashomon-cost): exact for the squared loss.

    Near the best fit the loss is the bowl :math:`L(\hat\beta + \Delta) = L(\hat\beta) + \frac12
    \Delta^T H \Delta` (exactly so for least squares). Minimising the bowl over the intercept and the
    weights with :math:`C(\hat w + \Delta_w) = 0` gives
    :math:`c(C) = \frac12 (C\hat w)^T (C [H^{-1}]_{ww} C^T)^{-1} (C\hat w)`: a Mahalanobis distance from
    :math:`\hat w` to the constraint. The simplification is reachable in :math:`R_\theta` iff
    :math:`c(C) \le \theta`, eq. (rashomon-set).
    """
    C = _check_constraint(C, fitted.w.size)
    # [H^-1]_ww: the w block of the inverse Hessian (the block of the inverse lets the intercept re-fit freely)
    cov = np.linalg.inv(fitted.hessian)[1:, 1:]
    # C w_hat: how far the best fit is from obeying the simplification (0 if it already does)
    cw = C @ fitted.w
    # c(C) = 1/2 (C w_hat)^T (C [H^-1]_ww C^T)^-1 (C w_hat), eq. (rashomon-cost)
    return float(0.5 * cw @ np.linalg.solve(C @ cov @ C.T, cw))


@checked(X=Array("n d"), y=Array("n"), C=Array("... d"))
def refit_cost(X: np.ndarray, y: np.ndarray, fitted: Fit, C: np.ndarray) -> float:
    """Exact reducibility cost: refit under ``C w = 0`` and return the loss increase."""
    if np.shape(X)[1] != fitted.w.size:
        raise ValueError(f"X must have {fitted.w.size} columns (the weights of fitted), got shape {np.shape(X)}")
    C = _check_constraint(C, fitted.w.size)
    constrained = fit(X, y, fitted.loss, fitted.ridge, basis=null_space(C))
    return constrained.loss_value - fitted.loss_value


# --- simplifications as constraints -------------------------------------------------------------


@checked(d=Int(1, MAX_FEATURES), j=Int(0))
def drop_feature(d: int, j: int) -> np.ndarray:
    """``w_j = 0``."""
    check_int("j", j, minimum=0, maximum=d - 1)
    C = np.zeros((1, d))
    C[0, j] = 1.0
    return C


@checked(d=Int(2, MAX_FEATURES), i=Int(0), j=Int(0))
def tie_features(d: int, i: int, j: int) -> np.ndarray:
    """``w_i = w_j`` (two different features)."""
    check_int("i", i, minimum=0, maximum=d - 1)
    check_int("j", j, minimum=0, maximum=d - 1)
    if i == j:
        raise ValueError(f"tie_features needs two different features, got i = j = {i}")
    C = np.zeros((1, d))
    C[0, i], C[0, j] = 1.0, -1.0
    return C
