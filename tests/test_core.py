"""The shared core: validation messages, tables, device choice, seeding, presets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
import torch

from explorables.core.config import ExperimentConfig
from explorables.core.device import resolve_device
from explorables.core.seeding import seed_everything
from explorables.core.tables import Claim, claims_table, markdown_table
from explorables.core.validation import (
    check_choice,
    check_distribution,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: check_positive("eta", 0), "eta must be a finite number > 0"),
        (lambda: check_positive("eta", float("nan")), "eta must be finite"),
        (lambda: check_positive("eta", "x"), "eta must be a number"),
        (lambda: check_in_range("p", 1.5, 0, 1), r"p must lie in \[0, 1\]"),
        (lambda: check_in_range("p", 0, 0, 1, low_inclusive=False), r"p must lie in \(0, 1\]"),
        (lambda: check_int("T", 0), "T must be an integer >= 1"),
        (lambda: check_int("T", 2.5), "T must be an integer"),
        (lambda: check_int("T", True), "T must be an integer"),
        (lambda: check_matrix("A", [[1, np.inf]]), "A must contain only finite"),
        (lambda: check_matrix("A", [1, 2]), "A must be a 2-D matrix"),
        (lambda: check_distribution("x0", [0.5, 0.6], 2), "x0 must sum to 1"),
        (lambda: check_distribution("x0", [1.0, 0.0], 2), "x0 must have strictly positive"),
        (lambda: check_choice("method", "sgd", ("omwu", "mwu")), "method must be one of 'omwu', 'mwu'"),
        (lambda: resolve_device("tpu"), "device must be one of"),
    ],
)
def test_validation_messages_name_the_parameter_and_range(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_valid_inputs_pass_through():
    assert check_int("T", 3.0) == 3 and check_positive("eta", "0.5") == 0.5
    np.testing.assert_allclose(check_distribution("x", [0.25, 0.75], 2), [0.25, 0.75])
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda", "mps")


def test_markdown_table_escapes_pipes():
    table = markdown_table(("a", "b"), [("|w|", 1)])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| \\|w\\| | 1 |"]
    assert claims_table([Claim("c", "s", "m", "yes")]).splitlines()[-1] == "| c | s | m | yes |"


def test_seed_everything_makes_runs_repeat():
    seed_everything(5)
    a = (torch.rand(2), np.random.rand(2))  # noqa: NPY002 - checks the legacy global state is seeded
    gen = seed_everything(5)
    b = (torch.rand(2), np.random.rand(2))  # noqa: NPY002
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert isinstance(gen, np.random.Generator)


@dataclass(frozen=True)
class Toy(ExperimentConfig):
    steps: int = 3
    rates: tuple[float, ...] = (0.1,)
    flag: bool = False
    PRESETS: ClassVar[dict] = {"smoke": {"steps": 1}}


def test_config_strings_and_unknown_keys():
    cfg = Toy.preset("smoke").with_strings(["rates=0.5,0.25", "flag=yes", "seed=7"])
    assert cfg.steps == 1 and cfg.rates == (0.5, 0.25) and cfg.flag and cfg.seed == 7
    with pytest.raises(ValueError, match="unknown config key 'nope'"):
        cfg.with_strings(["nope=1"])
    with pytest.raises(ValueError, match="expects int"):
        cfg.with_strings(["steps=many"])
    with pytest.raises(ValueError, match="scale must be one of"):
        Toy.preset("huge")


def test_constructing_a_config_checks_it_as_preset_and_replace_do():
    from explorables.core.config import ExperimentConfig

    assert ExperimentConfig(seed=3).seed == 3
    assert ExperimentConfig(seed=3.0).seed == 3 and isinstance(ExperimentConfig(seed=3.0).seed, int)
    for bad in (-1, 2**32, "3", 2.5):
        with pytest.raises(ValueError, match="seed"):
            ExperimentConfig(seed=bad)
