"""Tests of the tree-search chapter: brute-force oracles on every small tree, the bounds the chapter
states, the query model, the real inputs, the claimed directions on the smoke run, bad input."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from explorables.tree_search import (
    FOUND,
    Tree,
    TreeSearchConfig,
    TreeSearchOracle,
    ast_tree,
    branch_heights,
    centroid_bound,
    digits_dendrogram,
    directory_tree,
    headline,
    optimal_worst_case,
    pathwidth,
    pathwidth_by_branches,
    queries_for,
    random_vertex_at_distance,
    real_tree,
    robust_bound,
    run,
    spine_bound,
    spine_decomposition,
    synthetic_tree,
    vertex_separation_bruteforce,
)
from explorables.tree_search.claims import claims, dendrogram_table, eta_table, markdown_table
from explorables.tree_search.families import (
    caterpillar_parents,
    complete_binary_parents,
    path_parents,
    spider_parents,
)
from explorables.tree_search.pathwidth import all_trees

from .smoke_runs import smoke_run


def _trees(max_n: int):
    return [Tree.from_networkx(g) for g in all_trees(max_n)]


# --- exact pathwidth -----------------------------------------------------------------------------


def test_pathwidth_equals_brute_force_vertex_separation_on_all_trees_up_to_10_vertices():
    count = 0
    for g in all_trees(10):
        assert pathwidth(g) == vertex_separation_bruteforce(g), sorted(g.edges)
        count += 1
    assert count == 201  # 1 + 1 + 1 + 2 + 3 + 6 + 11 + 23 + 47 + 106 trees


def test_pathwidth_does_not_depend_on_the_root():
    for g in all_trees(8):
        values = {pathwidth(Tree.from_networkx(g, root=r)) for r in g.nodes}
        assert len(values) == 1


def test_pathwidth_agrees_with_the_branch_rule_on_random_larger_trees():
    rng = np.random.default_rng(0)
    for n in (12, 13, 14, 15):
        for _ in range(2):
            g = nx.random_labeled_tree(n, seed=int(rng.integers(1 << 30)))
            assert pathwidth(g) == pathwidth_by_branches(g)


@pytest.mark.parametrize("height", range(0, 11))
def test_complete_binary_tree_has_pathwidth_ceil_half_height(height):
    assert pathwidth(Tree.from_parents(complete_binary_parents(height))) == math.ceil(height / 2)


def test_closed_forms_of_the_simple_families():
    assert pathwidth(Tree.from_parents(path_parents(1))) == 0
    assert pathwidth(Tree.from_parents(path_parents(500))) == 1
    assert pathwidth(Tree.from_parents(caterpillar_parents(500, 3))) == 1
    assert pathwidth(nx.star_graph(20)) == 1
    assert pathwidth(Tree.from_parents(spider_parents(3 * 40 + 1, 3))) == 2  # three long legs
    assert pathwidth(Tree.from_parents(spider_parents(2 * 40 + 1, 2))) == 1  # two legs: a path


def test_spine_decomposition_is_exact_and_partitions_the_tree():
    for tree in [*_trees(9)[::7], synthetic_tree("random recursive", 400, seed=3), ast_tree("bisect")]:
        D = spine_decomposition(tree)
        g = tree.to_networkx()
        spine_vertices = np.concatenate(D.spines)
        assert sorted(spine_vertices.tolist()) == list(range(tree.n))  # every vertex on exactly one spine
        for c, spine in enumerate(D.spines):
            for a, b in itertools.pairwise(spine):  # consecutive spine vertices are adjacent
                assert b in tree.neighbours(int(a))
            members = [v for v in range(tree.n) if D.contains(c, v)]
            sub = nx.relabel_nodes(g.subgraph([tree.labels[v] for v in members]), tree.index)
            assert nx.is_tree(sub)
            assert pathwidth(sub) == D.pw[c] <= D.pathwidth - D.level[c]
            assert int(D.level[c]) <= D.pathwidth


# --- the query model -----------------------------------------------------------------------------


def test_oracle_answers_the_neighbour_toward_the_target_and_counts():
    g = nx.random_labeled_tree(30, seed=1)
    g = nx.relabel_nodes(g, {v: f"v{v}" for v in g})
    oracle = TreeSearchOracle(g, "v7")
    for v in g.nodes:
        answer = oracle.query(v)
        if v == "v7":
            assert answer == FOUND
        else:
            assert answer == nx.shortest_path(g, v, "v7")[1]
    assert oracle.queries == 30 and len(oracle.history) == 30


def test_tree_arrays_agree_with_networkx():
    g = nx.random_labeled_tree(60, seed=5)
    tree = Tree.from_networkx(g)
    lengths = dict(nx.all_pairs_shortest_path_length(g))
    rng = np.random.default_rng(0)
    for _ in range(200):
        u, v = (int(x) for x in rng.integers(60, size=2))
        assert tree.dist(u, v) == lengths[tree.labels[u]][tree.labels[v]]
        assert [tree.labels[x] for x in tree.path(u, v)] == nx.shortest_path(g, tree.labels[u], tree.labels[v])
    np.testing.assert_array_equal(tree.distances_from(0), [lengths[tree.labels[0]][tree.labels[v]] for v in range(60)])


def test_random_vertex_at_distance_is_exact_or_reports_none():
    tree = synthetic_tree("random recursive", 200, seed=2)
    heights = branch_heights(tree)
    rng = np.random.default_rng(1)
    for t in range(0, 200, 9):
        dist = tree.distances_from(t)
        for eta in range(0, int(dist.max()) + 3):
            p = random_vertex_at_distance(tree, t, eta, rng, heights)
            if eta > dist.max():
                assert p == -1
            else:
                assert dist[p] == eta


# --- every algorithm on every small tree ----------------------------------------------------------


def _check_all_pairs(tree: Tree) -> None:
    D = spine_decomposition(tree)
    k, n = D.pathwidth, tree.n
    for t in range(n):
        dist = tree.distances_from(t)
        centroid = queries_for(tree, "centroid", t)
        assert centroid[-1] == t and len(centroid) <= centroid_bound(n)
        for p in range(n):
            spine = queries_for(tree, "spine", t, p, D)
            robust = queries_for(tree, "robust", t, p, D)
            assert spine[-1] == t and robust[-1] == t
            assert len(set(spine)) == len(spine)  # never asks twice
            assert len(spine) <= spine_bound(int(dist[p]), k)
            assert len(robust) <= robust_bound(n)
            if len(spine) <= centroid_bound(n):
                assert robust == spine
            if p == t:
                assert len(spine) == len(robust) == 1


def test_every_algorithm_finds_every_target_for_every_prediction_on_all_trees_up_to_9_vertices():
    for tree in _trees(9):
        _check_all_pairs(tree)


def test_every_target_and_prediction_on_sampled_trees_with_10_to_12_vertices():
    rng = np.random.default_rng(0)
    for n in (10, 11, 12):
        trees = list(nx.nonisomorphic_trees(n))
        for i in rng.choice(len(trees), 6, replace=False):
            _check_all_pairs(Tree.from_networkx(trees[int(i)]))


def test_caterpillar_and_spider_stay_within_c_log_eta():
    """pw 1: 2 ceil(log2(eta+1)) + 3 <= 2 log2(eta+2) + 5; pw 2: 4 ceil(...) + 4 <= 4 log2(eta+2) + 8."""
    for parents, c, c0 in ((caterpillar_parents(60, 2), 2, 5), (spider_parents(49, 4), 4, 8)):
        tree = Tree.from_parents(parents)
        D = spine_decomposition(tree)
        assert D.pathwidth == c // 2
        for t in range(tree.n):
            dist = tree.distances_from(t)
            for p in range(tree.n):
                q = len(queries_for(tree, "spine", t, p, D))
                assert q <= c * math.log2(dist[p] + 2) + c0


def test_doubling_search_on_a_path_is_logarithmic_in_eta():
    tree = Tree.from_parents(path_parents(300))
    D = spine_decomposition(tree)
    assert len(D.spines) == 1  # the whole path is one spine
    for t in range(0, 300, 7):
        for p in range(300):
            q = len(queries_for(tree, "spine", t, p, D))
            assert q <= 2 * math.ceil(math.log2(abs(t - p) + 1)) + 1


def test_doubling_along_a_spine_finds_every_exit_within_its_per_level_cost():
    """The function shown on the page, alone: a spine of 200 vertices, every start and every exit
    (the target on the spine, or an exit whose answer leaves the spine), at most 2 ceil(log2(d+1)) + 1 queries."""
    from explorables.tree_search.search import doubling_along_spine

    spine = np.arange(200)
    for exit_at in range(0, 200, 3):
        for leaves in (False, True):  # the target is the exit itself, or hangs off it
            for i in range(0, 200, 5):
                asked: list[int] = []

                def q(v: int, asked=asked, exit_at=exit_at, leaves=leaves) -> int:
                    asked.append(v)
                    if v == exit_at:
                        return 1000 if leaves else -1  # 1000: an off-spine neighbour
                    return v + 1 if exit_at > v else v - 1

                j, answer = doubling_along_spine(spine, i, q)
                d = abs(exit_at - i)
                assert j == exit_at and answer == (1000 if leaves else -1)
                assert len(asked) == len(set(asked)) <= 2 * math.ceil(math.log2(d + 1)) + 1, (i, exit_at)


@pytest.mark.parametrize("name", ["random recursive", "complete binary", "spider"])
def test_explicit_bound_on_seeded_samples_of_large_trees(name):
    tree = synthetic_tree(name, 30_000, seed=1)
    D = spine_decomposition(tree)
    heights = branch_heights(tree)
    rng = np.random.default_rng(2)
    for eta in (0, 1, 3, 8, 20, 64):
        for _ in range(15):
            t = int(rng.integers(tree.n))
            p = random_vertex_at_distance(tree, t, eta, rng, heights)
            if p < 0:
                continue
            for alg, bound in (("spine", spine_bound(eta, D.pathwidth)), ("robust", robust_bound(tree.n)),
                               ("centroid", centroid_bound(tree.n))):  # fmt: skip
                q = queries_for(tree, alg, t, p, D)
                assert q[-1] == t and len(q) <= bound


def test_optimal_worst_case_closed_forms_and_centroid_is_never_better():
    for n in range(1, 15):
        assert optimal_worst_case(Tree.from_parents(path_parents(n))) == math.floor(math.log2(n)) + 1
    assert optimal_worst_case(Tree.from_networkx(nx.star_graph(9))) == 2
    for tree in _trees(8):
        centroid = max(len(queries_for(tree, "centroid", t)) for t in range(tree.n))
        assert optimal_worst_case(tree) <= centroid <= centroid_bound(tree.n)


def test_synthetic_size_counts_the_vertices_and_the_paper_preset_reaches_a_million():
    from explorables.tree_search import SYNTHETIC, synthetic_size

    for name in SYNTHETIC:
        for n in (3, 7, 8, 100, 1023, 1024):
            assert synthetic_size(name, n) == synthetic_tree(name, n, seed=0).n, (name, n)
    paper = TreeSearchConfig.preset("paper")
    sizes = {name: synthetic_size(name, paper.family_tree_size) for name in paper.families}
    assert paper.family_tree_size == 10**6
    assert all(size == 10**6 for name, size in sizes.items() if name != "complete binary")
    assert sizes["complete binary"] == 2**19 - 1  # the largest complete binary tree with <= 10^6 vertices


# --- real inputs ---------------------------------------------------------------------------------


def test_real_trees_are_trees_and_deterministic():
    a, b = ast_tree("bisect"), ast_tree("bisect")
    assert a.labels == b.labels and a.n > 100
    d1, d2 = directory_tree("numpy", 500), directory_tree("numpy", 500)
    assert d1.labels == d2.labels and d1.n == 500
    dg = digits_dendrogram(60, 20, seed=0)
    assert dg.tree.n == 2 * 60 - 1
    leaves = {v for v in range(dg.tree.n) if not dg.tree.children[v]}
    assert set(dg.targets.tolist()) <= leaves and set(dg.predictions.tolist()) <= leaves
    dg2 = digits_dendrogram(60, 20, seed=0)
    np.testing.assert_array_equal(dg.targets, dg2.targets)
    np.testing.assert_array_equal(dg.predictions, dg2.predictions)


def test_real_tree_is_the_named_input_and_size_caps_the_directory_walk():
    assert real_tree("AST json.decoder").labels == ast_tree("json.decoder").labels
    d = real_tree("directory numpy", size=300)
    assert d.n == 300 and d.labels == directory_tree("numpy", 300).labels
    assert nx.is_tree(d.to_networkx())
    dg = real_tree("digits dendrogram", size=200)  # 100 digits clustered: a binary tree with 2 * 100 - 1 vertices
    assert dg.n == 2 * 100 - 1 and sum(1 for v in range(dg.n) if not dg.children[v]) == 100


def test_module_and_package_settings_never_import_or_read_the_working_directory(tmp_path, monkeypatch):
    """Issue 29: ast_modules / directory_package used to go to importlib.import_module, so a
    ``NAME.py`` where the command ran was executed. Now names are checked and sources read as text."""
    import sys

    from explorables.tree_search.families import package_directory, stdlib_source

    marker = tmp_path / "ran"
    for name in ("bisect", "evil_module"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    (tmp_path / "numpy").mkdir()
    (tmp_path / "numpy" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend("")
    assert stdlib_source("bisect").parent != tmp_path and ast_tree("bisect").n > 100
    assert package_directory("numpy") != tmp_path / "numpy"
    for bad in ("evil_module", "numpy", "sys", "math", "json.nope", "../bisect", ""):
        with pytest.raises(ValueError, match="standard-library module"):
            stdlib_source(bad)
    with pytest.raises(ValueError, match="ast_modules"):
        TreeSearchConfig.preset("smoke", ast_modules=("evil_module",))
    with pytest.raises(ValueError, match="directory_package"):
        TreeSearchConfig.preset("smoke", directory_package="numpy.linalg")
    assert not marker.exists()
    was_imported = "this" in sys.modules  # `this` prints the Zen of Python when imported
    ast_tree("this")
    assert ("this" in sys.modules) == was_imported


# --- the smoke run -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smoke():
    return smoke_run("tree_search")


def test_smoke_run_shows_the_claimed_directions(smoke):
    s = smoke.summary
    for name, f in s["families"].items():
        assert f["bound_violations"] == 0 and f["robust_violations"] == 0, name
        assert f["spine_mean"][0] == 1.0  # eta = 0: one query
        i1 = f["etas"].index(1)
        assert f["spine_mean"][i1] < f["centroid_mean"][i1], name  # a good prediction beats centroid search
    assert s["small_trees"]["bound_violations"] == 0 and s["small_trees"]["pathwidth_mismatches"] == 0
    rows = s["lower_bound"]["rows"]
    assert rows[-1]["spine_max"] >= rows[-1]["counting_bound"] >= math.log2(rows[-1]["eta"] + 1)
    assert s["lower_bound"]["spine_worst_slope_per_eta"] > 0.4  # linear in eta, not logarithmic
    rows = {c.claim: c for c in claims(smoke)}
    assert [c.outcome for c in rows.values() if c.kind == "check"] == ["pass"] * 5
    control = next(d["control"] for d in s["real"].values() if "control" in d)
    assert control["eta"] == 2 and len(control["spine_queries"]) == len(control["centroid_queries"]) > 0
    assert "|" in markdown_table(claims(smoke)) and "gate" in markdown_table(claims(smoke))
    assert "η=" in eta_table(smoke) and "all" in dendrogram_table(smoke)


def test_headline_has_one_line_per_family_and_learned_predictor(smoke):
    s = smoke.summary
    lines = headline(smoke)
    learned = [v for v in s["real"].values() if "pca_dims" in v]
    with_etas = [k for k, v in s["real"].items() if "etas" in v]
    assert len(lines) == len(s["families"]) + len(with_etas) + len(learned)
    for line, (name, f) in zip(lines, s["families"].items(), strict=False):
        assert line.startswith(f"{name} (n={f['n']:,}, pw={f['pathwidth']})")
        assert line.endswith(f"bound violations {f['bound_violations']}")


def test_explorable_figure_steps_through_searches_and_stays_small(smoke):
    from explorables.tree_search.figures import all_figures

    figs = all_figures(smoke)
    assert len(figs["explorable"].frames) > 20
    assert len(figs["explorable"].to_json()) < 2_000_000


def test_resuming_from_finished_parts_gives_identical_results(tmp_path, smoke):
    from explorables.core.checkpoint import Checkpointer

    config = TreeSearchConfig.preset("smoke")
    ck = Checkpointer(tmp_path, every_s=0)
    run(config, checkpoint=ck)
    # as if killed after the first parts: drop the last three finished parts
    for name in ("part/lower_bound", "part/small_trees", "part/explorable"):
        ck.entries.pop(name)
    ck.save("run", ck.entries["run"])
    resumed = run(config, checkpoint=Checkpointer(tmp_path, resume=True))
    for key in ("families", "real", "lower_bound", "small_trees", "explorable"):
        assert resumed.summary[key] == smoke.summary[key]


# --- verdicts and glued sentences on constructed results (every branch) ---------------------------


def _learned(dims: int, spine: float, centroid: float, n: int = 8) -> dict:
    """A dendrogram entry whose per-digit queries have the given means (spine varies by ±1 around its mean)."""
    noise = [-1.0, 0.0, 1.0, 0.0] * (n // 4)
    return {
        "pca_dims": dims,
        "spine_mean": spine,
        "centroid_mean": centroid,
        "spine_queries": [spine + e for e in noise],
        "centroid_queries": [centroid] * len(noise),
    }


def _grid(spine: list[float], centroid: list[float], etas=(0, 1, 2, 4), pathwidth: int = 1, bound: int = 11) -> dict:
    return {
        "n": 2000,
        "pathwidth": pathwidth,
        "etas": list(etas),
        "spine_mean": spine,
        "centroid_mean": centroid,
        "spine_max": [math.ceil(x) for x in spine],
        "robust_max": [math.ceil(x) for x in spine],
        "centroid_bound": bound,
    }


def test_real_inputs_verdict_reads_the_interval_per_predictor_and_joins_them():
    from explorables.tree_search.claims import NOTABLY, real_inputs_verdict

    ast = _grid([1, 3, 5, 7], [5, 5, 5, 5])  # spine search wins at eta = 0, 1 (a tie at eta = 2 is no win)
    good, bad = 8 * NOTABLY - 2, 9.0  # against a centroid mean of 8: the whole interval below / above 0.9 x 8
    fair = 8 * NOTABLY  # the interval straddles 0.9 x 8
    assert real_inputs_verdict({"a": _learned(2, good, 8), "b": _learned(16, good, 8)}).startswith("yes")
    partly = real_inputs_verdict({"a": _learned(2, bad, 8), "b": _learned(16, good, 8), "AST x": ast})
    assert partly.startswith("partly") and "no: 2-D PCA" in partly and "up to η = 1" in partly
    assert real_inputs_verdict({"a": _learned(2, fair, 8), "b": _learned(16, good, 8)}).startswith("partly")
    assert real_inputs_verdict({"a": _learned(2, fair, 8)}).startswith("unclear")
    no = real_inputs_verdict({"a": _learned(2, bad, 8), "b": _learned(16, 8.0, 8), "AST x": ast})
    assert no.startswith("no:") and "up to η = 1" in no  # behind on both: no; eta set by us does not rescue it
    assert real_inputs_verdict({"AST x": ast}).startswith("no")  # no learned prediction: nothing to say yes to


def test_criteria_reach_every_branch_and_thresholds_are_declared_once():
    from explorables.core.verdicts import drive
    from explorables.tree_search import claims as ts_claims

    assert drive(ts_claims.CRITERIA) == []
    assert {c.kind for c in ts_claims.CRITERIA} == {"check", "gate", "claim"}
    assert ts_claims.counting_check([1, 12], [1, 6], [1, 6]).startswith("pass")  # attaining the bound is fine
    assert ts_claims.counting_check([1, 12], [1, 5], [1, 9]).startswith("fail")  # a miscounted bound
    assert ts_claims.counting_check([1, 4], [1, 2], [1, 3]).startswith("fail")  # 2 < log2(5): too shallow to tell
    assert ts_claims.bound_verdict(0, ts_claims.MIN_SEARCHES).startswith("yes")
    assert ts_claims.bound_verdict(0, ts_claims.MIN_SEARCHES - 1).startswith("unclear")
    slope, se = ts_claims.worst_slope([{"eta": e, "spine_max": 2 * e + 1} for e in range(1, 6)])
    assert slope == pytest.approx(2.0) and se == pytest.approx(0.0)


def _results(families: dict, real: dict | None = None):
    from explorables.tree_search import TreeSearchResults

    return TreeSearchResults(TreeSearchConfig(), {"families": families, "real": real or {}}, curves={})


def test_slope_sentence_follows_the_fitted_slopes():
    from explorables.tree_search.claims import log_slopes, slope_sentence

    etas = (0, 1, 3, 7, 15)  # log2(eta + 1) = 0, 1, 2, 3, 4
    steep = _grid([1, 2, 4, 6, 8], [9] * 5, etas, pathwidth=2)  # slope 2
    flat = _grid([1, 2, 3, 4, 5], [9] * 5, etas, pathwidth=1)  # slope 1
    fits = log_slopes(_results({"a": flat, "b": steep}))
    assert fits["a"][0] == pytest.approx(1.0) and fits["b"][0] == pytest.approx(2.0) and fits["b"][1] == 1.0
    assert "grows with the pathwidth" in slope_sentence(_results({"a": flat, "b": steep}))
    inverted = {"a": {**flat, "pathwidth": 3}, "b": steep}  # lower pathwidth, steeper curve
    assert "does not simply follow" in slope_sentence(_results(inverted))


def test_robust_centroid_and_learned_sentences_count_what_they_say():
    from explorables.tree_search.claims import centroid_sentence, learned_sentence, robust_sentence

    f = _grid([1, 3, 5, 7], [5, 5, 5, 5])
    f["robust_max"] = [1, 2, 5, 9]  # lower at eta = 1, higher at eta = 4
    text = robust_sentence(_results({"t": f}))
    assert "at 2 of 4" in text and "a smaller one at 1 (t at η = 1: 2 vs 3)" in text and "a larger one at 1" in text
    assert "45% (t) to 45% (t)" in centroid_sentence(_results({"t": f}))  # 5 / 11
    real = {"a": _learned(2, 9.0, 8.0), "b": _learned(16, 4.0, 8.0)}
    assert learned_sentence(_results({}, real)) == (
        "spine search beats centroid search on average with the 16-D PCA prediction, but not with the 2-D one"
    )
    real["b"]["spine_mean"] = 8.0  # a tie is no win
    assert learned_sentence(_results({}, real)).startswith("spine search does not beat")


def test_bin_comparison_uses_only_bins_populated_under_every_predictor():
    from explorables.tree_search.claims import bin_comparison, bin_sentence

    def dendro(dims, bins):
        return {**_learned(dims, 5.0, 8.0), "eta_zero_fraction": 0.5, "bins": [
            {"bin": b, "count": c, "spine_mean": m} for b, c, m in bins]}  # fmt: skip

    real = {"a": dendro(2, [("0", 20, 1.0), ("2", 30, 6.0), ("3–4", 3, 1.0)]),
            "b": dendro(16, [("0", 50, 1.0), ("2", 12, 7.5), ("3–4", 40, 9.0)])}  # fmt: skip
    gap, shared = bin_comparison(_results({}, real), min_count=10)
    assert shared == ["2"] and gap == pytest.approx(1.5)  # eta = 0 and the sparse bin "3–4" are left out
    assert "noticeably different" in bin_sentence(_results({}, real))
    assert bin_sentence(_results({}, real), min_count=20).startswith("No η bin")  # no bin has 20 under both
    real["b"]["bins"][1]["spine_mean"] = 6.5
    assert "about the same" in bin_sentence(_results({}, real)) and "at most 0.50" in bin_sentence(_results({}, real))


def _family_rows(*, weak: int = 0, pw_off: bool = False, spine_over: bool = False) -> list[dict]:
    """Constructed nested-spider rows (k = 1, 2, 3; L = 8); ``weak`` trees get forced counts and an optimum far below
    k log2(eta+1); ``spine_over``: spine search above its bound at some target's own error."""
    rows = []
    for i, k in enumerate((1, 2, 3)):
        eta = 5 * k
        klog = k * math.log2(eta + 1)
        proven = 1 + 3 * k
        low = i < weak
        forced = {a: (1 if low else proven + j) for j, a in enumerate(("centroid", "spine", "robust", "optimal"))}
        rows.append({"k": k, "length": 8, "n": 10**k, "pathwidth": k + (pw_off and k == 2), "eta": eta,
                     "k_log_eta": klog, "proven_bound": 1 if low else proven, "optimum": 1 if low else proven + 1,
                     "forced": forced, "adversary_consistent": True,
                     "spine_sampled_worst": 10**3 if spine_over else proven, "spine_checked": 101,
                     "spine_bound_violations": int(spine_over),
                     "spine_worst_slack": 900 if spine_over else -1})  # fmt: skip
    return rows


def _claims_results(*, path_worst: int = 7, slope: float = 1.0, violations: int = 0, slack: int = 0,
                    robust_violations: int = 0, pathwidth_mismatches: int = 0, control: float = 4.0,
                    family: list[dict] | None = None):  # fmt: skip
    """A constructed summary with every entry ``claims`` reads; the keywords break one criterion each."""
    path = {**_grid([1, 3, 4, 5], [8, 8, 8, 8], etas=(0, 1, 2, 4)), "samples": [5] * 4,
            "bound_violations": violations, "robust_violations": robust_violations}  # fmt: skip
    path["spine_max"] = [1, 3, 5, path_worst]  # 2 ceil(log2(4 + 1)) + 1 = 7 at eta = 4
    rows = [{"eta": e, "counting_bound": math.ceil(e / 2), "spine_max": 1 + slope * e, "centroid_max": 13}
            for e in range(1, 13)]  # fmt: skip
    small = {"pairs_checked": 1000, "bound_violations": 0, "max_n": 8, "worst_slack": slack, "robust_violations": 0,
             "trees_checked": 47, "pathwidth_mismatches": pathwidth_mismatches, "centroid_bound_violations": 0,
             "centroid_optimal_fraction": 0.9, "centroid_max_gap": 1, "ranking_mismatches": 0,
             "ranking_trees": 200}  # fmt: skip
    ctrl = _learned(2, control, 8.0)
    dendro = {**_learned(2, 6.0, 8.0), "eta_median": 3.0, "robust_mean": 6.0, "bound_violations": 0, "queries": 50,
              "control": {"eta": 2, "spine_queries": ctrl["spine_queries"],
                          "centroid_queries": ctrl["centroid_queries"]}}  # fmt: skip
    results = _results({"path": path}, {"digits dendrogram": dendro})
    results.summary["lower_bound"] = {"n": 8191, "pathwidth": 6, "rows": rows, "spine_worst_slope_per_eta": slope}
    results.summary["small_trees"] = small
    results.summary["family"] = {"rows": _family_rows() if family is None else family,
                                 "algorithms": ["centroid", "spine", "robust", "optimal"]}  # fmt: skip
    return results


def test_claims_verdicts_follow_their_criteria_on_constructed_summaries():
    from explorables.core.tables import apply_gates

    def outcomes(**broken):
        return [c.outcome for c in claims(_claims_results(**broken))]

    kinds = [c.kind for c in claims(_claims_results())]
    assert kinds == ["check"] * 5 + ["gate"] * 2 + ["claim"] * 3
    assert outcomes() == ["pass"] * 7 + ["yes", "yes", "yes"]
    assert outcomes(path_worst=8)[0] == "fail"  # one search above 2 ceil(log2(eta + 1)) + 1
    assert outcomes(robust_violations=1)[1] == "fail"
    assert outcomes(pathwidth_mismatches=1)[2] == "fail"
    # the counting bound is a check; our slope is only a number in it, whatever it is
    assert outcomes(slope=0.5)[3] == "pass"
    assert "slope of our worst case 0.50" in claims(_claims_results(slope=0.5))[3].measured
    assert outcomes(slope=-0.1)[3] == "fail"  # a search below ceil(eta / 2) would be a bug
    weak = _family_rows(weak=1)  # a forced count below the proven bound would be a bug in the adversary
    weak[0]["proven_bound"] = 4
    assert outcomes(family=weak)[4] == "fail"
    assert outcomes(control=8.0)[5] == "fail"  # a prediction two steps off does not pay: the setup cannot tell
    assert outcomes(family=_family_rows(pw_off=True))[6] == "fail"  # a tree whose pathwidth is not k
    assert outcomes(family=_family_rows()[:2])[6] == "fail"  # two values of k cannot show the growth in k
    assert outcomes(violations=1)[7] == "no"
    assert outcomes(family=_family_rows(weak=1))[8] == "partly"
    assert outcomes(family=_family_rows(weak=3))[8] == "no"
    assert outcomes(family=_family_rows(spine_over=True))[8] == "partly"  # lower bound shown, ours not within it
    gated = [c.outcome for c in apply_gates(claims(_claims_results(control=8.0, family=_family_rows(pw_off=True))))]
    assert gated[8:] == ["untested", "untested"]  # the family's gate and the dendrogram control failed
    assert "(the bound is attained)" in claims(_claims_results())[7].measured
    assert "attained" not in claims(_claims_results(slack=-2))[7].measured


def test_small_trees_sentence_says_attained_spare_or_failed():
    from explorables.tree_search.claims import small_trees_sentence

    assert small_trees_sentence(_claims_results()).endswith("the bound holds and is attained.")
    assert small_trees_sentence(_claims_results(slack=-2)).endswith("holds with at least 2 queries to spare.")
    failed = _claims_results(slack=1)
    failed.summary["small_trees"]["bound_violations"] = 3
    assert small_trees_sentence(failed).endswith("the bound fails: 3 searches exceed it, by up to 1 query.")
    assert small_trees_sentence(failed).startswith("On all 1,000 (target, prediction) pairs of the trees with at most")


# --- bad input -----------------------------------------------------------------------------------


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="graph must be a tree"):
        Tree.from_networkx(nx.cycle_graph(5))
    with pytest.raises(ValueError, match="graph must be a tree"):
        Tree.from_networkx(nx.empty_graph(3))
    with pytest.raises(ValueError, match="undirected"):
        Tree.from_networkx(nx.DiGraph([(0, 1)]))
    with pytest.raises(ValueError, match="n - 1"):
        Tree(4, np.array([[0, 1], [1, 2]]))
    with pytest.raises(ValueError, match="connected"):
        Tree(4, np.array([[0, 1], [1, 0], [2, 3]]))
    with pytest.raises(ValueError, match="edges must join"):
        Tree(3, np.array([[0, 1], [1, 5]]))
    oracle = TreeSearchOracle(nx.path_graph(4), 2)
    with pytest.raises(ValueError, match="not a vertex"):
        oracle.query(17)
    with pytest.raises(ValueError, match="target"):
        TreeSearchOracle(nx.path_graph(4), "x")
    tree = Tree.from_parents(path_parents(5))
    with pytest.raises(ValueError, match="prediction"):
        queries_for(tree, "spine", 0, 9, spine_decomposition(tree))
    with pytest.raises(ValueError, match="algorithm"):
        queries_for(tree, "magic", 0, 1, spine_decomposition(tree))
    with pytest.raises(ValueError, match="family"):
        synthetic_tree("fern", 100)
    with pytest.raises(ValueError, match="at most 16"):
        optimal_worst_case(Tree.from_parents(path_parents(20)))


def test_cli_kill_and_resume_matches_an_uninterrupted_run(tmp_path):
    from .cli_runs import cli, kill_mid_run, untimed_results

    args = ["run", "tree_search", "--scale", "smoke", "--quiet", "--no-figures"]
    full, interrupted = tmp_path / "full", tmp_path / "interrupted"
    done = cli(*args, "--out", str(full))
    assert done.returncode == 0, done.stderr
    entries = kill_mid_run(args, interrupted, timeout_s=120)
    parts = [k for k in entries if k.startswith("part/")]
    assert 0 < len(parts) < 9, parts  # killed part-way
    resumed = cli(*args, "--out", str(interrupted), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert untimed_results(interrupted) == untimed_results(full)


def test_dense_crossover_scan_reads_every_eta_and_undoes_the_power_of_two_artefact():
    """On a grid of powers of two the path looks won up to eta = 64 (each eta is a doubling probe);
    on every eta in 1..64 spine search loses long before, on every seed."""
    import dataclasses

    from explorables.tree_search.claims import dense_wins_up_to, wins_up_to
    from explorables.tree_search.experiment import _crossover, measure_tree
    from explorables.tree_search.families import synthetic_tree

    cfg = dataclasses.replace(
        TreeSearchConfig.preset("smoke"),
        families=("path",),
        family_tree_size=2000,
        eta_grid=(0, 1, 2, 4, 8, 16, 32, 64),
        crossover_targets_per_eta=6,
        n_crossover_seeds=3,
    )
    cross, _ = _crossover(cfg)
    path = cross["path"]
    assert path["seeds"] == [cfg.seed, cfg.seed + 1, cfg.seed + 2]
    assert all(etas == list(range(1, 65)) for etas in path["etas"])
    assert "AST bisect" in cross and f"directory {cfg.directory_package}" in cross
    grid = measure_tree(synthetic_tree("path", 2000), cfg.eta_grid, 6, np.random.default_rng(0))
    assert wins_up_to(grid) >= 32  # the artefact the dense scan removes
    as_list = measure_tree(synthetic_tree("path", 2000), list(cfg.eta_grid), 6, np.random.default_rng(0))
    assert as_list == grid  # a list of etas is the same request as a tuple
    assert max(dense_wins_up_to(path)) < 32 and min(path["losses"]) >= 16


def test_dense_wins_and_crossover_sentence_follow_first_loss():
    from explorables.tree_search.claims import crossover_sentence, dense_wins_up_to, real_inputs_verdict
    from explorables.tree_search.experiment import first_loss

    assert first_loss([1, 2, 3, 4], [1, 2, 5, 1], [3, 3, 5, 9]) == 3  # a tie is a loss, later wins do not count
    assert first_loss([1, 2], [1, 1], [2, 2]) is None
    row = {"etas": [[1, 2, 3, 4]] * 2 + [[1, 2]], "first_loss": [3, 2, None], "losses": [2, 3, 0]}
    assert dense_wins_up_to(row) == [2, 1, 2]
    res = _results({}, {})
    res.summary["crossover"] = {"path": row}
    text = crossover_sentence(res)
    assert "up to η = 1–2 on the path" in text and "0–3 of the 2–4 values" in text
    ast = _grid([1, 3, 5, 7], [5, 5, 5, 5])  # the grid says: wins up to eta = 1
    verdict = real_inputs_verdict({"AST x": ast, "a": _learned(2, 2.0, 8)}, {"AST x": row})
    assert verdict.startswith("yes") and "up to η = 1–2" in verdict
