"""The tomato_mp live lab: τ only redraws, k reruns ToMATo, the other controls rerun the MMA."""

from __future__ import annotations

import numpy as np
import pytest

from explorables.tomato_mp.lab import FUNCTIONS, TomatoMPLab, compute_mp, prepare


@pytest.fixture(scope="module")
def lab():
    return TomatoMPLab(n_lines=20)


def test_lab_renders_an_image_and_a_status(lab):
    assert lab.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "ToMAToMP" in lab.status.value


def test_tau_only_redraws(lab):
    mp, run, img = lab.mp, lab.tomato_run, lab.image.value
    lab.tau.value = 0.0  # keep every peak: more clusters
    assert lab.mp is mp and lab.tomato_run is run
    assert lab.image.value != img
    n_all = len(run.diagram.pairs) + len(run.diagram.essential)
    assert f"K={n_all}" in lab.status.value


def test_k_reruns_tomato_but_not_the_mma(lab):
    mp, run = lab.mp, lab.tomato_run
    lab.k.value = 25
    assert lab.tomato_run is not run and lab.mp is mp


def test_outlier_fraction_reruns_the_mma(lab):
    mp = lab.mp
    lab.fraction.value = 0.1
    assert lab.mp is not mp


def test_two_functions_add_a_parameter():
    _, _, F, _, _ = prepare("blobs", FUNCTIONS[1], 0.0)
    assert F.shape[0] == 2
    assert compute_mp("blobs", FUNCTIONS[1], 0.0, 15).filtration.parameters == ("radius", "f1", "f2", "DTM")


def test_iris_is_shown_in_two_dimensions():
    X, view, _, truth, _ = prepare("iris", FUNCTIONS[0], 0.0)
    assert X.shape == (150, 4) and view.shape == (150, 2) and len(np.unique(truth)) == 3
