"""Input checks of the chapter (on top of :mod:`explorables.core.validation`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.validation import check_matrix


def check_points(name: str, X: Any, min_points: int = 2) -> np.ndarray:
    """A finite ``(n, d)`` float array with ``n >= min_points``."""
    arr = check_matrix(name, X)
    if len(arr) < min_points:
        raise ValueError(f"{name} must hold at least {min_points} points, got {len(arr)}")
    if min_points >= 2 and len(arr) and np.all(arr == arr[0]):
        raise ValueError(f"{name} must hold at least 2 distinct points, got {len(arr)} copies of one point")
    return arr


def check_function(name: str, f: Any, n: int | None = None) -> np.ndarray:
    """A finite 1-D float array (of length ``n`` when given): function values on the points."""
    try:
        arr = np.asarray(f, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 1-D array of real numbers: {exc}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if n is not None and len(arr) != n:
        raise ValueError(f"{name} must have one value per point: length {n}, got {len(arr)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (no NaN or inf)")
    return arr


def check_functions(name: str, fs: Any, n: int) -> np.ndarray:
    """One or several functions on ``n`` points, as a ``(p, n)`` array (a 1-D input, array or plain
    list of numbers, is one function)."""
    if fs is None or isinstance(fs, (str, bytes)) or np.isscalar(fs):
        raise ValueError(f"{name} must be one function ({n} values) or several (a (p, {n}) array or a list of them), "
                         f"got {type(fs).__name__}")
    if isinstance(fs, (list, tuple)) and len(fs) and all(np.isscalar(v) for v in fs):
        return check_function(name, fs, n)[None, :]  # a plain list of floats is one function
    if isinstance(fs, (list, tuple)):
        arr = None
    else:
        try:
            arr = np.asarray(fs, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
        if arr.ndim not in (1, 2):
            raise ValueError(f"{name} must be one function ({n} values) or a (p, {n}) array, got shape {arr.shape}")
    if arr is not None and arr.ndim == 1:
        return check_function(name, arr, n)[None, :]
    rows = list(fs) if arr is None else list(arr)
    if not rows:
        raise ValueError(f"{name} must hold at least one function")
    return np.stack([check_function(f"{name}[{i}]", row, n) for i, row in enumerate(rows)])
