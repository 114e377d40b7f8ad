"""The bit-for-bit tree comparison that the worker-process and resume tests rely on can fail."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from .trees import assert_same_tree, differences, without_timings


def test_equal_trees_compare_the_same_with_nan_equal_to_nan():
    a = {"x": [1.0, float("nan")], "t": torch.tensor([1.0, float("nan")]), "n": np.arange(3.0), "s": "ok"}
    b = {"s": "ok", "n": np.arange(3.0), "t": torch.tensor([1.0, float("nan")]), "x": (1.0, float("nan"))}
    assert differences(a, b) == []
    assert differences(a, b, ordered=True) == [" (keys)"]


@pytest.mark.parametrize(
    ("b", "where"),
    [
        ({"x": [1.0, 2.0 + 1e-15]}, "/x[1]"),
        ({"x": [1.0]}, "/x (length)"),
        ({"y": [1.0, 2.0]}, " (keys)"),
        ({"x": [1.0, np.array([2.0, 3.0])]}, "/x[1]"),
    ],
)
def test_any_difference_is_found_and_named(b, where):
    a = {"x": [1.0, 2.0]}
    assert differences(a, b) == [where]
    with pytest.raises(AssertionError, match="differing"):
        assert_same_tree(a, b)


def test_wall_clock_entries_are_dropped_and_nothing_else():
    tree = {"timings": {"a_s": 1.0}, "loss": [{"fit_s": 2.0, "step_cost_seconds": 3.0, "value": 4.0}]}
    assert without_timings(tree) == {"loss": [{"value": 4.0}]}
