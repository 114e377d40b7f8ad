"""Bit-for-bit comparison of results trees, shared by the tests that check a worker process, a resumed run or a
faster code path gives the same numbers as the plain run.

A results tree is nested dicts, lists and tuples of numbers, strings, numpy arrays and torch tensors (a
``Results.summary`` or ``Results.curves``). Two trees are the same when they have the same keys and lengths and
every leaf is equal to the bit, with NaN equal to NaN (a NaN in a summary means "not measured", not a fault).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch


def differences(a: Any, b: Any, path: str = "", *, ordered: bool = False) -> list[str]:
    """The paths where ``a`` and ``b`` differ (empty when they are the same); with ``ordered`` a dict's keys must
    also come in the same order."""
    if isinstance(a, dict):
        if not isinstance(b, dict) or (list(a) != list(b) if ordered else set(a) != set(b)):
            return [f"{path} (keys)"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}/{k}", ordered=ordered)]
    if isinstance(a, (list, tuple)):
        if not isinstance(b, (list, tuple)) or len(a) != len(b):
            return [f"{path} (length)"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{path}[{i}]", ordered=ordered)]  # fmt: skip
    if isinstance(a, (np.ndarray, torch.Tensor)) or isinstance(b, (np.ndarray, torch.Tensor)):
        x, y = np.asarray(a), np.asarray(b)
        same = x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc" and y.dtype.kind in "fc")
        return [] if same else [path]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return []
    return [] if a == b else [path]


def assert_same_tree(a: Any, b: Any, *, ordered: bool = False) -> None:
    """Fail, naming every differing path, unless ``a`` and ``b`` are the same tree to the bit."""
    found = differences(a, b, ordered=ordered)
    assert not found, f"{len(found)} differing entries, first: {found[:5]}"


def without_timings(value: Any) -> Any:
    """``value`` without its wall-clock entries (``timings``, keys ending ``_s``, keys with ``seconds``), which
    differ between any two runs."""
    if isinstance(value, dict):
        kept = {k: v for k, v in value.items() if not (k == "timings" or k.endswith("_s") or "seconds" in k)}
        return {k: without_timings(v) for k, v in kept.items()}
    if isinstance(value, (list, tuple)):
        return [without_timings(v) for v in value]
    return value
