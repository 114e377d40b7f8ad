"""Data with known ground truth, and real tabular data that ships with scikit-learn (no downloads)."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

from ..core.validation import check_in_range, check_int

REAL_DATASETS = ("diabetes", "breast_cancer", "wine")


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def linear_data(n: int, w_star, sigma: float, seed=0, correlation: float = 0.0):
    """``y = X w* + sigma * eps``, standard Gaussian features with pairwise correlation ``correlation``."""
    n = check_int("n", n, minimum=2)
    w_star = np.asarray(w_star, dtype=np.float64)
    sigma = check_in_range("sigma", sigma, 0.0, np.inf)
    correlation = check_in_range("correlation", correlation, 0.0, 1.0, high_inclusive=False)
    rng = _rng(seed)
    d = w_star.size
    cov = (1 - correlation) * np.eye(d) + correlation
    X = rng.standard_normal((n, d)) @ np.linalg.cholesky(cov).T
    return X, X @ w_star + sigma * rng.standard_normal(n)


def logistic_data(n: int, w_star, flip_rate: float, seed=0):
    """Labels from the logistic model ``P(y=1|x) = sigmoid(x.w*)``, then a fraction ``flip_rate`` flipped."""
    n = check_int("n", n, minimum=2)
    w_star = np.asarray(w_star, dtype=np.float64)
    flip_rate = check_in_range("flip_rate", flip_rate, 0.0, 0.5)
    rng = _rng(seed)
    X = rng.standard_normal((n, w_star.size))
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ w_star))).astype(np.float64)
    flip = rng.random(n) < flip_rate
    y[flip] = 1 - y[flip]
    return X, y


SHAPES = {
    "sin(πx)": lambda x: np.sin(np.pi * x),
    "x": lambda x: x,
    "x² − 1/3": lambda x: x**2 - 1 / 3,
    "0": lambda x: 0 * x,
}


def additive_data(n: int, sigma: float, seed=0, shapes: tuple[str, ...] = tuple(SHAPES)):
    """``y = sum_j f_j(x_j) + sigma * eps`` with ``x`` uniform on ``[-1, 1]`` and the named shapes."""
    n = check_int("n", n, minimum=2)
    sigma = check_in_range("sigma", sigma, 0.0, np.inf)
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        raise ValueError(f"shapes must be among {list(SHAPES)}, got {unknown}")
    rng = _rng(seed)
    X = rng.uniform(-1, 1, (n, len(shapes)))
    signal = sum(SHAPES[s](X[:, j]) for j, s in enumerate(shapes))
    return X, signal + sigma * rng.standard_normal(n)


def additive_logistic_data(n: int, flip_rate: float, seed=0, shapes: tuple[str, ...] = tuple(SHAPES), scale=2.0):
    """Labels from ``P(y=1|x) = sigmoid(scale * sum_j f_j(x_j))``, then a fraction ``flip_rate`` flipped."""
    flip_rate = check_in_range("flip_rate", flip_rate, 0.0, 0.5)
    X, signal = additive_data(n, 0.0, seed, shapes)
    rng = _rng(np.random.default_rng([1, seed]) if not isinstance(seed, np.random.Generator) else seed)
    y = (rng.random(n) < 1 / (1 + np.exp(-scale * signal))).astype(np.float64)
    return X, flip_labels(y, flip_rate, rng)


def real_data(name: str) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    """``(X standardised, y, feature names, loss)`` for a scikit-learn dataset.

    ``diabetes`` is a regression (y standardised); ``breast_cancer`` is binary; ``wine`` becomes
    binary (class 0 against the rest).
    """
    if name == "diabetes":
        data, loss = load_diabetes(), "squared"
        y = (data.target - data.target.mean()) / data.target.std()
    elif name == "breast_cancer":
        data, loss = load_breast_cancer(), "logistic"
        y = data.target.astype(np.float64)
    elif name == "wine":
        data, loss = load_wine(), "logistic"
        y = (data.target == 0).astype(np.float64)
    else:
        raise ValueError(f"name must be one of {REAL_DATASETS}, got {name!r}")
    X = (data.data - data.data.mean(0)) / data.data.std(0)
    return X, y, list(data.feature_names), loss


def flip_labels(y: np.ndarray, rate: float, seed=0) -> np.ndarray:
    """Flip a fraction ``rate`` of 0/1 labels at random."""
    rate = check_in_range("rate", rate, 0.0, 0.5)
    rng = _rng(seed)
    y = y.copy()
    flip = rng.random(len(y)) < rate
    y[flip] = 1 - y[flip]
    return y
