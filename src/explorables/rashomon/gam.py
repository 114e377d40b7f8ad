"""Generalised additive models as linear models on a spline basis, and their simplifications.

Each feature ``x_j`` is expanded into cubic B-splines (``sklearn.preprocessing.SplineTransformer``,
last spline dropped so the basis is identifiable against the intercept), so a GAM
``b + sum_j f_j(x_j)`` is a linear model with coefficients grouped by feature, and everything in
:mod:`.models` applies. A simplification of a shape function is a linear constraint on its group:

* *drop* ``f_j``: the whole group is zero;
* *make* ``f_j`` *linear*: the group lies on the coefficient vector that reproduces ``x`` (B-splines
  reproduce polynomials of their degree, so this vector exists and is found by least squares).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import null_space
from sklearn.preprocessing import SplineTransformer

from ..core.arguments import Array, OfInstance, checked
from ..core.params import Int
from ..core.validation import check_int

#: a feature index of the basis: an integer in [0, d - 1]
FEATURE = OfInstance("_check_feature", "a feature index in [0, d - 1]")


@checked(X=Array("n d", min_size=(("n", 2),)), n_knots=Int(3, 1_000), degree=Int(1, 5))
class AdditiveBasis:
    """The spline expansion of every feature, fitted on training inputs ``X``."""

    def __init__(self, X: np.ndarray, n_knots: int = 6, degree: int = 3):
        X = np.asarray(X, dtype=np.float64)
        if np.any(X.min(0) == X.max(0)):
            raise ValueError("X must vary in every column (a spline basis needs a range of values to place its knots)")
        self.spline = SplineTransformer(n_knots=n_knots, degree=degree, include_bias=False).fit(X)
        self.d = X.shape[1]
        self.per_feature = self.spline.n_features_out_ // self.d
        raw = self.spline.transform(X)
        self.mean = raw.mean(0)
        self.groups = [slice(j * self.per_feature, (j + 1) * self.per_feature) for j in range(self.d)]
        # coefficients that reproduce x_j (up to a constant) within each group
        self.linear = []
        for j, g in enumerate(self.groups):
            basis = np.c_[np.ones(len(X)), raw[:, g]]
            coef, *_ = np.linalg.lstsq(basis, X[:, j], rcond=None)
            self.linear.append(coef[1:] / np.linalg.norm(coef[1:]))

    @property
    def n_coefficients(self) -> int:
        return self.per_feature * self.d

    def _check_inputs(self, name: str, X: object) -> np.ndarray:
        """Inputs of the basis: a finite array of shape (n, d), one column per feature the basis was fitted on."""
        return Array("n d").check_dims(name, X, {"d": (self.d, "the basis's features")})

    def _check_weights(self, name: str, w: object) -> np.ndarray:
        """GAM coefficients: a finite 1-D array with one entry per basis column."""
        return Array("k").check_dims(name, w, {"k": (self.n_coefficients, "the basis's coefficients")})

    def _check_feature(self, name: str, j: object) -> int:
        return check_int(name, j, minimum=0, maximum=self.d - 1)

    @checked(X=OfInstance("_check_inputs", "a finite array of shape (n, d), d the basis's features"))
    def transform(self, X: np.ndarray) -> np.ndarray:
        """The centred design matrix of the GAM."""
        return self.spline.transform(np.asarray(X, dtype=np.float64)) - self.mean

    @checked(
        skip_nested=True,  # its own transform call runs bare
        w=OfInstance("_check_weights", "a finite 1-D array of the basis's n_coefficients"),
        j=FEATURE,
        grid=Array("g"),
    )
    def shape(self, w: np.ndarray, j: int, grid: np.ndarray) -> np.ndarray:
        """``f_j`` on ``grid`` (a finite 1-D array) for coefficients ``w`` (centred as in training)."""
        X = np.zeros((len(grid), self.d))
        X[:, j] = grid
        Z = self.transform(X)
        return Z[:, self.groups[j]] @ w[self.groups[j]]

    @checked(j=FEATURE)
    def drop(self, j: int) -> np.ndarray:
        """Constraint ``f_j = 0``."""
        C = np.zeros((self.per_feature, self.n_coefficients))
        C[:, self.groups[j]] = np.eye(self.per_feature)
        return C

    @checked(j=FEATURE)
    def make_linear(self, j: int) -> np.ndarray:
        """Constraint ``f_j(x) = a x + c``: the group is orthogonal to everything but the linear vector."""
        complement = null_space(self.linear[j][None, :]).T  # (k-1, k)
        C = np.zeros((complement.shape[0], self.n_coefficients))
        C[:, self.groups[j]] = complement
        return C
