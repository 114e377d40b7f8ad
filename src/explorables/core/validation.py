"""Input checks that fail early with a message naming the parameter and the allowed range.

Every public function of every chapter validates its inputs with these helpers, so that bad
input never turns into a silent wrong answer or a traceback from deep inside numpy or torch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def check_positive(name: str, value: float) -> float:
    """Return ``value`` as a float if it is finite and ``> 0``, else raise ``ValueError``."""
    v = _as_float(name, value)
    if not v > 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_in_range(
    name: str,
    value: float,
    low: float,
    high: float,
    *,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a float if it lies in the given interval, else raise ``ValueError``."""
    v = _as_float(name, value)
    ok_low = v >= low if low_inclusive else v > low
    ok_high = v <= high if high_inclusive else v < high
    if not (ok_low and ok_high):
        lb = "[" if low_inclusive else "("
        rb = "]" if high_inclusive else ")"
        raise ValueError(f"{name} must lie in {lb}{low}, {high}{rb}, got {value!r}")
    return v


def check_int(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int if it is an integer in ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    value = int(value)
    if maximum is None and value > 2**32 - 1:  # the implicit cap of core.params.Int
        maximum = 2**32 - 1
    if value < minimum or (maximum is not None and value > maximum):
        upper = "" if maximum is None else f" and <= {maximum}"
        raise ValueError(f"{name} must be an integer >= {minimum}{upper}, got {value!r}")
    return value


def check_matrix(name: str, value: Any) -> np.ndarray:
    """Return a finite, non-empty 2-D float64 array, else raise ``ValueError``."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 2-D array of real numbers: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (no NaN or inf)")
    return arr


def check_distribution(name: str, value: Any, size: int, *, atol: float = 1e-9) -> np.ndarray:
    """Return a probability vector of length ``size`` with strictly positive entries.

    Strict positivity is required because multiplicative-weights methods can never leave the
    boundary of the simplex: a zero coordinate stays zero forever.
    """
    try:
        p = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a probability vector: {exc}") from None
    if p.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError(f"{name} must have strictly positive finite entries (interior of the simplex)")
    if abs(p.sum() - 1.0) > atol:
        raise ValueError(f"{name} must sum to 1 (a point on the simplex), got sum {p.sum():.6g}")
    return p / p.sum()


def check_choice(name: str, value: Any, allowed: tuple[str, ...] | list[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise ``ValueError`` listing them."""
    if not isinstance(value, (str, int, float)) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def _as_float(name: str, value: Any) -> float:
    if isinstance(value, (bool, str, bytes)):  # float("0.5") would accept a string
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v
