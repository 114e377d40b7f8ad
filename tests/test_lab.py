"""The OMWU live lab: controls re-run the method and redraw; the time slider only redraws."""

from __future__ import annotations

import numpy as np
import pytest

from explorables.omwu.lab import GAMES, OMWULab, compute, make_game, start_point


def test_lab_builds_and_renders_an_image():
    lab = OMWULab(steps=500)
    assert lab.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "energy" in lab.status.value


def test_changing_eta_reruns_and_changes_the_picture():
    lab = OMWULab(steps=500)
    before_run, before_img = lab.run, lab.image.value
    lab.eta.value = 0.3
    assert lab.run is not before_run
    assert lab.image.value != before_img


def test_time_slider_redraws_without_rerunning():
    lab = OMWULab(steps=500)
    run, img = lab.run, lab.image.value
    lab.window.value = 100
    assert lab.run is run
    assert lab.image.value != img
    assert "t=100" in lab.status.value


@pytest.mark.parametrize("game", GAMES)
def test_every_game_runs(game):
    r = compute(game, 0.05, 0.1, 300, 0.5, 0.5)
    assert np.all(np.isfinite(r.energy)) and r.energy.shape == (301,)
    assert np.all(r.gap >= -1e-12)


def test_lab_rejects_unknown_game_and_bad_eta():
    with pytest.raises(ValueError, match="game"):
        make_game("chess")
    with pytest.raises(ValueError, match="eta"):
        compute(GAMES[1], 0.05, 0.0, 100, 0.5, 0.5)
    np.testing.assert_allclose(start_point(3, 0.5), [0.5, 0.25, 0.25])
