"""Tests of the lower-bound family (nested spiders), its adversary and the exact optimum by vertex ranking:
pathwidth by the exact code and brute force, the proven bound against several algorithms (one of them
optimal, one random), answers consistent with one target, and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from explorables.tree_search import (
    Tree,
    TreeSearchConfig,
    centroid_search,
    optimal_worst_case,
    pathwidth,
    robust_search,
    spine_decomposition,
    spine_search,
    vertex_separation_bruteforce,
)
from explorables.tree_search.experiment import forced_counts
from explorables.tree_search.lower_bound import (
    Adversary,
    forced_queries,
    nested_spider,
    nested_spider_size,
    ranking_search,
    tree_depth,
    vertex_ranking,
)
from explorables.tree_search.pathwidth import all_trees
from explorables.tree_search.search import Memory, candidate_mask

SMALL = [(k, L) for k in (1, 2, 3) for L in (3, 4, 5, 7, 8) if nested_spider_size(k, L) <= 1200]


@pytest.mark.parametrize(("k", "length"), SMALL)
def test_nested_spider_has_the_stated_size_pathwidth_k_and_every_vertex_within_eta(k, length):
    s = nested_spider(k, length)
    assert s.tree.n == nested_spider_size(k, length)
    assert pathwidth(s.tree) == k == spine_decomposition(s.tree).pathwidth
    assert s.tree.distances_from(s.prediction).max() == s.eta
    assert sorted(v for p in s.paths for v in p) == list(range(s.tree.n))  # the blocks partition the tree


@pytest.mark.parametrize("length", [3, 4, 5, 6, 7, 8])
def test_pathwidth_of_the_smallest_spiders_equals_brute_force_vertex_separation(length):
    s = nested_spider(1, length)  # 2 L <= 16 vertices: brute force over all vertex orders
    assert vertex_separation_bruteforce(s.tree.to_networkx()) == pathwidth(s.tree) == 1


def test_vertex_ranking_is_a_ranking_and_its_height_is_the_brute_force_optimum():
    for g in all_trees(9):
        tree = Tree.from_networkx(g)
        ranks = vertex_ranking(tree)
        assert tree_depth(tree) == optimal_worst_case(tree) == ranks.max()
        for u, v in itertools.combinations(range(tree.n), 2):  # equal ranks are separated by a larger one
            if ranks[u] == ranks[v]:
                assert ranks[tree.path(u, v)].max() > ranks[u]
        for t in range(tree.n):  # ranking search attains the optimum on every target
            assert len(ranking_search(tree, ranks, lambda v, t=t, tr=tree: tr.step(v, t))) <= ranks.max()


def _random_search(tree: Tree, ask: Memory, rng: np.random.Generator) -> list[int]:
    """Query a uniformly random candidate until found (an algorithm the adversary was not designed for)."""
    while True:
        cand = np.flatnonzero(candidate_mask(tree, ask.answers))
        if ask(int(rng.choice(cand))) < 0:
            return ask.queried


@pytest.mark.parametrize(("k", "length"), SMALL)
def test_the_adversary_forces_the_proven_bound_on_every_algorithm_with_consistent_answers(k, length):
    s = nested_spider(k, length)
    D = spine_decomposition(s.tree)
    ranks = vertex_ranking(s.tree)
    forced, consistent = forced_counts(s, D, ranks)
    assert consistent
    assert min(forced.values()) >= forced_queries(k, length)
    assert forced["optimal"] <= tree_depth(s.tree)  # the optimal algorithm never pays more than the optimum
    assert tree_depth(s.tree) >= forced_queries(k, length)
    rng = np.random.default_rng(0)
    for _ in range(5):
        adversary = Adversary(s)
        mem = Memory(adversary)
        queried = _random_search(s.tree, mem, rng)
        assert len(queried) >= forced_queries(k, length)
        assert queried[-1] == adversary.target
        assert all(s.tree.step(v, adversary.target) == a for v, a in mem.answers.items())


@pytest.mark.parametrize("length", [3, 4, 5, 6, 7, 8])
def test_brute_force_optimum_on_tiny_spiders_is_at_least_the_proven_bound(length):
    s = nested_spider(1, length)
    assert optimal_worst_case(s.tree) >= forced_queries(1, length)
    assert optimal_worst_case(s.tree) == tree_depth(s.tree)


def test_the_adversary_answers_queries_outside_its_set_without_shrinking_it():
    s = nested_spider(2, 8)
    adv = Adversary(s)
    adv(s.paths[0][4])  # halves toward [0, 3] (the longer side)
    assert (adv.lo, adv.hi) == (0, 3)
    before = (adv.block, adv.lo, adv.hi)
    adv(s.paths[0][6])  # outside G[0, 3]
    assert (adv.block, adv.lo, adv.hi) == before
    assert adv.halvings == 1 and adv.target == -1


def test_searches_against_the_adversary_end_at_its_target():
    s = nested_spider(2, 5)
    D = spine_decomposition(s.tree)
    for search in (
        lambda a: centroid_search(s.tree, a),
        lambda a: spine_search(s.tree, D, s.prediction, a),
        lambda a: robust_search(s.tree, D, s.prediction, a),
    ):
        adv = Adversary(s)
        assert search(Memory(adv))[-1] == adv.target >= 0


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="k"):
        nested_spider(0, 4)
    with pytest.raises(ValueError, match="length"):
        nested_spider(2, 0)
    with pytest.raises(ValueError, match="k and length"):
        nested_spider(8, 64)
    with pytest.raises(ValueError, match="spider"):
        Adversary("not a spider")
    s = nested_spider(1, 4)
    with pytest.raises(ValueError, match="v must be a vertex"):
        Adversary(s)(99)
    with pytest.raises(ValueError, match="ranks"):
        ranking_search(s.tree, np.zeros(s.tree.n, dtype=int), lambda v: -1)
    with pytest.raises(ValueError, match="family_ks"):
        TreeSearchConfig(family_ks=(0, 2))
    with pytest.raises(ValueError, match="family_lengths"):
        TreeSearchConfig(family_lengths=(2,))
    with pytest.raises(ValueError, match="family_max_size"):
        TreeSearchConfig(family_max_size=float("nan"))


def test_family_part_of_the_smoke_run_and_its_figure():
    from explorables.tree_search import run
    from explorables.tree_search.claims import family_lower_ratios, family_table, spine_upper_ratios
    from explorables.tree_search.figures import family_figure

    cfg = TreeSearchConfig.preset("smoke")
    results = run(cfg)
    rows = results.summary["family"]["rows"]
    pairs = [(k, L) for k in cfg.family_ks for L in cfg.family_lengths]
    built = [(k, L) for k, L in pairs if nested_spider_size(k, L) <= cfg.family_max_size]
    assert [(r["k"], r["length"]) for r in rows] == built
    for r in rows:
        assert r["pathwidth"] == r["k"] and r["adversary_consistent"]
        assert min(r["forced"].values()) >= r["proven_bound"] and r["optimum"] >= r["proven_bound"]
        assert r["forced"]["optimal"] <= r["optimum"]
        assert max(r["forced"]["spine"], r["spine_sampled_worst"]) <= r["spine_bound"]
    assert len(family_lower_ratios(results)) == len(spine_upper_ratios(results)) == len(rows)
    assert family_table(results).count("\n") == len(rows) + 1
    fig = family_figure(results)
    assert len(fig.layout.xaxis.title.text) <= 14 and len(fig.layout.yaxis.title.text) <= 14
    assert {t.name for t in fig.data} >= {"spine, forced", "centroid, forced", "optimum (any algorithm)"}
