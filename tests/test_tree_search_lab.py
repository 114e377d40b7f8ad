"""The tree-search live lab: controls re-run the search and redraw; the query slider only redraws."""

from __future__ import annotations

import pytest

from explorables.tree_search.lab import LAB_TREES, TreeSearchLab, lab_tree


def test_lab_builds_and_renders_an_image():
    lab = TreeSearchLab(n=40)
    assert lab.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "queries" in lab.status.value
    assert lab.run.queries[-1] == lab.run.target


def test_changing_eta_reruns_and_the_step_slider_only_redraws():
    lab = TreeSearchLab(n=40, eta=2)
    before_run, before_img = lab.run, lab.image.value
    lab.eta.value = 9
    assert lab.run is not before_run and lab.image.value != before_img
    run, img = lab.run, lab.image.value
    lab.step.value = 1
    assert lab.run is run and lab.image.value != img
    assert "after 1 of" in lab.status.value


@pytest.mark.parametrize("name", LAB_TREES)
def test_every_lab_tree_searches_to_the_target(name):
    tree, D, _ = lab_tree(name, 40)
    assert D.pathwidth >= 1 and tree.n >= 15
    lab = TreeSearchLab(tree=name, n=40)
    for alg in ("robust", "centroid", "spine"):
        lab.algorithm.value = alg
        assert lab.run.queries[-1] == lab.run.target

