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
    forced, consistent, targets = forced_counts(s, D, ranks)
    assert consistent
    assert all(0 <= t < s.tree.n for t in targets.values())
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
        assert r["spine_bound_violations"] == 0 and r["spine_worst_slack"] <= 0
        assert r["spine_checked"] == 1 + min(cfg.n_family_targets, r["n"])
        assert r["eta"] == r["k"] * (r["length"] // 2 + 1)
    assert len(family_lower_ratios(results)) == len(spine_upper_ratios(results)) == len(rows)
    assert family_table(results).count("\n") == len(rows) + 1
    fig = family_figure(results)
    assert len(fig.layout.xaxis.title.text) <= 14 and len(fig.layout.yaxis.title.text) <= 14
    assert {t.name for t in fig.data} >= {"spine, forced", "centroid, forced", "optimum (any algorithm)"}


def test_family_skips_pairs_with_a_top_path_shorter_than_k():
    from explorables.tree_search.experiment import _family_lower_bound

    cfg = TreeSearchConfig(family_ks=(2, 4), family_lengths=(3, 4), n_family_targets=5, family_max_size=2000)
    rows = _family_lower_bound(cfg)[0]["rows"]
    assert [(r["k"], r["length"]) for r in rows] == [(2, 3), (2, 4), (4, 4)]
    assert all(r["length"] >= r["k"] for r in rows)


def test_the_optimality_ratio_is_at_least_one_half_by_the_proof_for_powers_of_two():
    """On S_k(L), L a power of two and L >= k: 1 + k log2 L >= k log2(eta + 1) / 2 (eta + 1 <= L**2)."""
    import math

    from explorables.tree_search.lower_bound import k_log_eta

    for k in range(1, 13):
        for e in range(2, 13):
            L = 2**e
            if L < k:
                continue
            eta = k * (L // 2 + 1)
            assert eta + 1 <= L * L
            assert forced_queries(k, L) >= 0.5 * k_log_eta(k, eta)
            assert math.log2(eta + 1) <= 2 * math.log2(L)


def _block_vertices(s, b: int) -> set[int]:
    out, stack = set(), [b]
    while stack:
        c = stack.pop()
        out.update(s.paths[c])
        stack.extend(x for x in s.kids[c] if x >= 0)
    return out


def _layout(s, b: int) -> list[int]:
    """Top-path vertex v_j, then the copy hanging from it, for j = 0..L-1 (vertex separation <= level)."""
    order = []
    for j, v in enumerate(s.paths[b]):
        order.append(v)
        if s.levels[b] > 0 and s.kids[b][j] >= 0:
            order += _layout(s, s.kids[b][j])
    return order


def _vertex_separation(tree: Tree, order: list[int]) -> int:
    pos = np.empty(tree.n, dtype=int)
    pos[order] = np.arange(tree.n)
    last = pos.copy()  # the latest position of a vertex or its neighbours
    for u, v in tree.edges:
        last[u], last[v] = max(last[u], pos[v]), max(last[v], pos[u])
    # vertices placed at positions <= i with a neighbour after i
    return max(int(np.sum((pos <= i) & (last > i))) for i in range(tree.n))


@pytest.mark.parametrize(("k", "length"), [(3, 4), (4, 4), (3, 5), (4, 5)])
def test_pathwidth_certificates_for_k_3_and_4(k, length):
    """Upper: a path layout of vertex separation k. Lower: an inner top-path vertex whose removal leaves
    three components, each holding a whole copy of S_(k-1) (three branches of pathwidth >= k-1 force k)."""
    s = nested_spider(k, length)
    order = _layout(s, 0)
    assert sorted(order) == list(range(s.tree.n))
    assert _vertex_separation(s.tree, order) == k
    import networkx as nx

    g0 = nx.Graph(s.tree.edges.tolist())  # internal ids
    for level in range(2, k + 1):  # the witness at one block per level, recursively down to S_1 (an edge)
        b = s.levels.index(level)
        g = g0.copy()
        g.remove_node(s.paths[b][1])
        copies = [_block_vertices(s, c) for c in s.kids[b]]  # the copies of S_(level-1) hanging from b
        held = [any(c <= set(comp) for c in copies) for comp in nx.connected_components(g)]
        assert sum(held) >= 3
