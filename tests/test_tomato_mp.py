"""Chapter 19 (tomato_mp): persistence by hand vs gudhi, ToMATo's weaknesses, ToMAToMP, MMA."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import replace

import gudhi
import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, roc_auc_score
from sklearn.neighbors import KernelDensity

from explorables.core.checkpoint import Checkpointer
from explorables.tomato_mp import data, multiparam, persistence
from explorables.tomato_mp.experiment import TomatoMPConfig, headline, run
from explorables.tomato_mp.figures import explorable_figure, staircase


def random_graph(rng: np.random.Generator, n: int, p: float) -> np.ndarray:
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(len(iu)) < p
    return np.column_stack([iu[keep], ju[keep]])


def sorted_pairs(d: persistence.Diagram) -> np.ndarray:
    return d.pairs[np.lexsort((d.pairs[:, 1], d.pairs[:, 0]))]


# ---------------------------------------------------------------- persistence by hand


@pytest.mark.parametrize("seed", range(12))
def test_union_find_equals_gudhi_on_random_graphs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    edges = random_graph(rng, n, float(rng.uniform(0.02, 0.3)))  # often disconnected
    f = rng.normal(size=n)
    ours = persistence.superlevel_persistence(f, edges)
    ref = persistence.gudhi_superlevel_persistence(f, edges)
    np.testing.assert_allclose(sorted_pairs(ours), sorted_pairs(ref))
    np.testing.assert_allclose(ours.essential, ref.essential)
    assert len(ours.pairs) + len(ours.essential) == sum(1 for v in range(n) if _is_peak(v, f, edges))


def _is_peak(v: int, f: np.ndarray, edges: np.ndarray) -> bool:
    nb = np.r_[edges[edges[:, 0] == v, 1], edges[edges[:, 1] == v, 0]]
    return bool(np.all(f[nb] < f[v]))


def test_union_find_on_a_path_by_hand():
    # f on the path 0-1-2-3-4: peaks 3 (v1), 2 (v3) and 5 (v4)? no: v3=2 < v4=5, so peaks are v1 and v4
    f = np.array([1.0, 3.0, 0.0, 2.0, 5.0])
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4]])
    d = persistence.superlevel_persistence(f, edges)
    # v4 (5) is the oldest; v1 (3) joins it at v2 (0): pair (3, 0)
    np.testing.assert_allclose(d.pairs, [[3.0, 0.0]])
    np.testing.assert_allclose(d.essential, [5.0])
    np.testing.assert_allclose(d.prominence, [3.0])


def test_largest_gap_count():
    assert persistence.largest_gap_count([5.0, 4.5, 0.3, 0.2], n_essential=1) == 3
    assert persistence.largest_gap_count([], n_essential=2) == 2
    # Documented limitation: without ``top`` the rule keeps at least one finite peak, even for noise
    assert persistence.largest_gap_count([0.1, 0.09], n_essential=1) == 2 + 1  # the last gap (to 0) wins
    # With a prominence for the essential class, noise gives one cluster per component ...
    assert persistence.largest_gap_count([0.1, 0.09], n_essential=1, top=1.0) == 1
    assert persistence.largest_gap_count([0.1, 0.09], n_essential=2, top=1.0) == 2
    # ... and real peaks are still kept when the drop below them is the largest
    assert persistence.largest_gap_count([5.0, 4.5, 0.3, 0.2], n_essential=1, top=6.0) == 3


def test_zero_length_pairs_are_dropped_like_gudhi():
    f, edges = np.array([2.0, 1.0, 1.0]), np.array([[0, 2], [1, 2]])
    ours = persistence.superlevel_persistence(f, edges)
    ref = persistence.gudhi_superlevel_persistence(f, edges)
    assert ours.pairs.shape == ref.pairs.shape == (0, 2)
    np.testing.assert_allclose(ours.essential, ref.essential)


@pytest.mark.parametrize("seed", range(8))
def test_union_find_equals_gudhi_with_tied_integer_values(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(5, 40))
    edges = random_graph(rng, n, float(rng.uniform(0.05, 0.3)))
    f = rng.integers(0, 4, size=n).astype(float)  # many ties
    ours = persistence.superlevel_persistence(f, edges)
    ref = persistence.gudhi_superlevel_persistence(f, edges)
    np.testing.assert_allclose(sorted_pairs(ours), sorted_pairs(ref))
    np.testing.assert_allclose(ours.essential, ref.essential)
    assert np.all(ours.prominence > 0)


# ---------------------------------------------------------------- ToMATo (gudhi)


def test_tomato_recovers_separated_blobs():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [3.0, 5.0]])
    truth = np.repeat(np.arange(3), 60)
    X = centres[truth] + 0.5 * rng.normal(size=(180, 2))
    f = data.log_kde(X, 0.5)
    res = persistence.tomato(X, f, k=10)
    assert res.n_clusters == 3
    assert adjusted_rand_score(truth, res.labels) > 0.99
    # tau separates the kept peaks from the merged ones
    prom = res.diagram.prominence
    assert np.sum(prom > res.threshold) + len(res.diagram.essential) == 3


def test_tomato_count_changes_with_k_on_clean_data():
    ds = data.make_dataset("moons", 200, seed=0)
    f = data.log_kde(ds.X, 0.25)
    counts = {k: persistence.tomato(ds.X, f, k=k).n_clusters for k in (5, 10, 20, 40)}
    assert len(set(counts.values())) > 1, counts


def test_outlier_values_create_spurious_tomato_peaks():
    ds = data.make_dataset("blobs", 200, seed=0)
    f = data.log_kde(ds.X, 0.4)
    g, idx = data.corrupt(f, 0.10, seed=0)
    assert len(idx) == 20 and np.all(g[idx] > f.max())
    counts = [persistence.tomato(ds.X, g, k=k).n_clusters for k in (5, 10)]
    true = len(np.unique(ds.labels))
    assert all(c != true for c in counts), counts


def test_labels_at_does_not_change_the_fitted_result():
    ds = data.make_dataset("blobs", 120, seed=0)
    res = persistence.tomato(ds.X, data.log_kde(ds.X, 0.4), k=10)
    merged = res.labels_at(1e9)  # merge every finite peak
    assert merged.max() + 1 == len(res.diagram.essential)
    assert res.model.n_clusters_ == res.n_clusters
    np.testing.assert_array_equal(res.model.labels_, res.labels)


# ---------------------------------------------------------------- densities


def test_log_kde_matches_sklearn_up_to_a_constant():
    X = np.random.default_rng(1).normal(size=(80, 3))
    ours = data.log_kde(X, 0.7)
    ref = KernelDensity(bandwidth=0.7).fit(X).score_samples(X)
    diff = ours - ref
    np.testing.assert_allclose(diff, diff[0], atol=1e-9)


def test_dtm_matches_brute_force():
    X = np.random.default_rng(2).normal(size=(50, 2))
    k = int(np.ceil(0.1 * 50))
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    ref = np.sqrt(np.sort(D2, axis=1)[:, :k].mean(1))
    np.testing.assert_allclose(data.dtm(X, 0.1), ref, atol=1e-12)


# ---------------------------------------------------------------- multipers and ToMAToMP


def test_summand_prominence_is_the_largest_cube():
    s, corner = multiparam.summand_prominence(np.array([[0.0, 0.0]]), np.array([[0.5, 0.3]]))
    assert s == pytest.approx(0.3) and np.allclose(corner, 0)
    # a staircase: the best cube sits at the second birth
    s, corner = multiparam.summand_prominence(np.array([[0.0, 0.5], [0.4, 0.0]]), np.array([[0.45, 0.9], [1.0, 0.6]]))
    assert s == pytest.approx(0.6) and np.allclose(corner, [0.4, 0.0])


def test_mma_on_the_function_axis_reproduces_the_one_parameter_diagram():
    """With every edge at radius 0, each MMA summand is a bar of the function axis: the cube
    prominences must equal the union-find prominences of 1 - rank(f), up to MMA's grid error."""
    rng = np.random.default_rng(3)
    n = 30
    edges = random_graph(rng, n, 0.15)
    f = rng.normal(size=n)
    h = multiparam.ranks01(f)
    V = np.column_stack([np.zeros(n), 1 - h])
    E = np.column_stack([np.zeros(len(edges)), np.maximum(V[edges[:, 0], 1], V[edges[:, 1], 1])])
    filt = multiparam.MultiFiltration(V, edges, E, ("radius", "f"), 1.0)
    parts = multiparam.summands(multiparam.mma_h0(filt, n_lines=200))
    d = persistence.superlevel_persistence(h, edges)
    n_ess = len(d.essential)
    mma = np.sort([s.prominence for s in parts])[::-1]
    assert len(parts) == n_ess + len(d.pairs)  # one summand per peak
    np.testing.assert_allclose(mma[n_ess:], np.sort(d.prominence)[::-1], atol=0.02)


def test_safe_gudhi_conversion_regression():
    """Regression: converting a gudhi SimplexTree needs safe_conversion=True (multipers 2.2.3 +
    gudhi 3.13). The safe path must give the same complex and grades as a direct build."""
    st = gudhi.SimplexTree()
    f = np.array([0.3, 0.1, 0.7, 0.2])
    for i, v in enumerate(f):
        st.insert([i], filtration=v)
    for u, v in ((0, 1), (1, 2), (2, 3)):
        st.insert([u, v], filtration=max(f[u], f[v]))
    stm = multiparam.from_gudhi(st, num_parameters=2)
    assert stm.num_simplices == st.num_simplices()
    got = {tuple(s): np.asarray(g)[0] for s, g in stm.get_simplices()}
    want = {tuple(s): g for s, g in st.get_simplices()}
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == pytest.approx(want[key])


class _CopyableSimplexTree(gudhi.SimplexTree):
    """gudhi 3.13's ``SimplexTree.__deepcopy__`` takes no ``memo`` argument, so ``copy.deepcopy`` fails
    on it; this subclass copies with gudhi's copy constructor (the API fuzz keeps deep copies of calls)."""

    def __deepcopy__(self, memo):
        return _CopyableSimplexTree(self)


@pytest.mark.parametrize("num_parameters", [1, 3])
def test_from_gudhi_keeps_every_simplex_with_its_grade_on_the_first_axis(num_parameters):
    st = _CopyableSimplexTree()
    for i, v in enumerate((0.5, 0.25, 0.75)):
        st.insert([i], filtration=v)
    st.insert([0, 1, 2], filtration=1.0)  # a triangle: its edges enter with it
    stm = multiparam.from_gudhi(st, num_parameters=num_parameters)
    assert stm.num_parameters == num_parameters and stm.num_simplices == st.num_simplices() == 7
    want = {tuple(s): g for s, g in st.get_simplices()}
    for s, g in stm.get_simplices():
        assert np.asarray(g)[0] == pytest.approx(want[tuple(s)])


@pytest.mark.skipif(
    not os.environ.get("EXPLORABLES_CRASH_TESTS"), reason="documents a crash; set EXPLORABLES_CRASH_TESTS=1"
)
def test_unsafe_gudhi_conversion_crashes_the_interpreter():
    """The unsafe (default) conversion, run in a child process: with multipers 2.2.3 and gudhi 3.13
    it dies with SIGSEGV (or SIGABRT, bad_alloc, on 2.3.2). If this starts passing cleanly, the
    workaround in :func:`multiparam.from_gudhi` may be dropped."""
    code = textwrap.dedent("""
        import gudhi, multipers as mp
        st = gudhi.SimplexTree()
        for i in range(50):
            st.insert([i], filtration=float(i))
        mp.SimplexTreeMulti(st, num_parameters=2)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert proc.returncode != 0


@pytest.fixture(scope="module")
def blobs():
    ds = data.make_dataset("blobs", 150, seed=0)
    return ds, data.log_kde(ds.X, 0.4)


@pytest.mark.parametrize("fraction", [0.0, 0.10])
def test_tomato_mp_recovers_planted_clusters_and_ignores_the_radius_cap(blobs, fraction):
    ds, f = blobs
    g, _ = data.corrupt(f, fraction, seed=0)
    r0 = multiparam.connecting_radius(ds.X)
    a = multiparam.tomato_mp(ds.X, g, robust=True, n_lines=30)
    b = multiparam.tomato_mp(ds.X, g, robust=True, n_lines=30, r_max=1.25 * r0)
    true = len(np.unique(ds.labels))
    assert a.n_clusters == b.n_clusters == a.n_labels == true
    assert adjusted_rand_score(ds.labels, a.labels) > 0.8  # stated threshold
    assert adjusted_rand_score(a.labels, b.labels) > 0.95  # no graph parameter to tune


def test_tomato_mp_takes_several_functions(blobs):
    """Two functions give one more parameter; the second one (a coarser density) uses no labels.
    Whether the pair *helps* is measured by the experiment, not asserted here."""
    ds, f = blobs
    h = data.log_kde(ds.X, 0.8)
    res = multiparam.tomato_mp(ds.X, [f, h], robust=False, n_lines=30)
    assert res.filtration.parameters == ("radius", "f1", "f2")
    assert res.filtration.num_parameters == 3
    assert 1 <= res.n_labels <= res.n_clusters
    assert res.n_labels + res.n_empty_cores <= res.n_clusters  # empty cores give no label
    assert res.summands[0].essential


def test_a_result_may_hold_an_empty_core(blobs):
    """assign() gives a summand an empty core when every component is taken (documented); the result's
    argument check used to refuse that (``cores[3] must not be empty``, seen on tuning base seed 110 at
    groups' sd 1.0, benchmarks/tomato_mp_spread2.md). Non-integer cores are still refused."""
    ds, f = blobs
    res = multiparam.tomato_mp(ds.X, f, robust=False, n_lines=30)
    empty = np.zeros(0, dtype=np.int64)
    more = multiparam.ToMAToMPResult(
        res.labels, res.n_clusters + 1, res.prominences, res.summands, [*res.cores, empty], res.filtration
    )
    assert more.n_empty_cores == res.n_empty_cores + 1
    with pytest.raises(ValueError):
        multiparam.ToMAToMPResult(
            res.labels, res.n_clusters, res.prominences, res.summands, [np.array([0.5])], res.filtration
        )


def test_essential_summands_must_come_first():
    def part(prom, essential):
        return multiparam.Summand(np.zeros((1, 2)), np.ones((1, 2)), prom, np.zeros(2), essential)

    multiparam.check_essential_first([part(1.0, True), part(0.5, False)], 1)
    with pytest.raises(RuntimeError, match="essential"):
        multiparam.check_essential_first([part(1.0, False), part(0.5, True)], 1)
    with pytest.raises(RuntimeError, match="essential"):
        multiparam.check_essential_first([part(1.0, True), part(0.5, False)], 2)


def test_essential_summands_are_put_first_whatever_their_prominence():
    def part(prom, essential):
        return multiparam.Summand(np.zeros((1, 2)), np.ones((1, 2)), prom, np.zeros(2), essential)

    ordered = multiparam.essential_first([part(1.0, False), part(0.5, True), part(0.2, False)])
    assert [s.essential for s in ordered] == [True, False, False]
    assert [s.prominence for s in ordered] == [0.5, 1.0, 0.2]


def test_tomato_mp_accepts_minus_log_kde_on_iris():
    # issue 28: the essential summand was less prominent than a finite one and tomato_mp raised RuntimeError
    iris = data.make_dataset("iris")
    res = multiparam.tomato_mp(iris.X, -data.log_kde(iris.X, 0.3), n_lines=20)
    assert res.summands[0].essential and 1 <= res.n_labels <= res.n_clusters


def test_tomato_mp_takes_a_plain_list_of_floats():
    # issue 28: a list of floats was read as a list of functions, each a scalar
    moons = data.make_dataset("moons", 40, seed=0)
    f = data.log_kde(moons.X, 0.25)
    res = multiparam.tomato_mp(moons.X, [float(v) for v in f], n_lines=10)
    ref = multiparam.tomato_mp(moons.X, f, n_lines=10)
    assert np.array_equal(res.labels, ref.labels)


def test_tomato_never_reports_fewer_clusters_than_labels():
    # issue 28: asked for fewer clusters than the graph has components, n_clusters was below the labels' count
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 100]
    res = persistence.tomato(X, data.log_kde(X, 1.0), k=3, n_clusters=1)
    assert res.n_clusters == len(np.unique(res.labels)) == len(res.diagram.essential) >= 2


def test_copies_of_one_point_are_refused():
    # issue 28: 20 identical points gave 11 clusters silently
    with pytest.raises(ValueError, match="distinct points"):
        persistence.tomato(np.zeros((20, 2)), np.zeros(20), k=10)
    with pytest.raises(ValueError, match="distinct points"):
        multiparam.tomato_mp(np.ones((20, 2)), np.zeros(20))


def test_propagate_follows_the_minimum_spanning_tree():
    X = np.array([[0.0, 0], [1, 0], [2, 0], [10, 0], [11, 0]])
    labels = multiparam.propagate(X, np.array([0, -1, -1, 1, -1]))
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1])


def test_propagate_along_follows_the_filtration_not_the_euclidean_tree():
    # four equally spaced points, cores at both ends; f is low at point 1 and high at point 2, so the
    # diagonal of the (radius, f) filtration reaches the edge (2, 3) before (1, 2): point 2 joins the
    # right core, while the Euclidean tree (all steps of length 1) hands it to the left one
    X = np.array([[0.0, 0], [1, 0], [2, 0], [3, 0]])
    f = np.array([1.0, 0.0, 0.9, 0.95])
    filt = multiparam.build_filtration(X, f, robust=False, r_max=3.0)
    seeds = np.array([0, -1, -1, 1])
    np.testing.assert_array_equal(multiparam.propagate(X, seeds), [0, 0, 0, 1])
    np.testing.assert_array_equal(multiparam.propagate_along(filt, X, seeds), [0, 0, 1, 1])


@pytest.mark.parametrize("seed", [0, 1])
def test_propagate_along_keeps_cores_and_labels_every_point(seed):
    ds, F = data.make_quadrants(80, seed)
    filt = multiparam.build_filtration(ds.X, F, robust=False)
    seeds = np.full(80, -1)
    seeds[[0, 25, 45, 70]] = [0, 1, 2, 3]
    labels = multiparam.propagate_along(filt, ds.X, seeds)
    assert np.all(labels >= 0)  # the graph at the connecting radius is connected
    np.testing.assert_array_equal(labels[[0, 25, 45, 70]], [0, 1, 2, 3])
    assert np.all(multiparam.propagate_along(filt, ds.X, np.full(80, -1)) == -1)


def test_bad_input_gives_clear_errors(blobs):
    ds, f = blobs
    bad = f.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match=r"functions.*finite"):
        multiparam.tomato_mp(ds.X, bad)
    with pytest.raises(ValueError, match=r"f must (contain|hold) only finite"):
        persistence.tomato(ds.X, bad)
    with pytest.raises(ValueError, match="one value per point"):
        multiparam.tomato_mp(ds.X, f[:-1])
    with pytest.raises(ValueError, match="one value per point"):
        persistence.tomato(ds.X, f[:-1])
    with pytest.raises(ValueError, match="n_clusters"):
        multiparam.tomato_mp(ds.X[:5], f[:5], n_clusters=10)
    with pytest.raises(ValueError, match="n_clusters"):
        persistence.tomato(ds.X[:5], f[:5], k=2, n_clusters=10)
    with pytest.raises(ValueError, match="k must be"):
        persistence.tomato(ds.X[:5], f[:5], k=5)
    with pytest.raises(ValueError, match="X must"):
        multiparam.tomato_mp(np.full((4, 2), np.nan), f[:4])
    with pytest.raises(ValueError, match="edges"):
        persistence.superlevel_persistence([1.0, 2.0], [[0, 2]])
    with pytest.raises(ValueError, match="fraction"):
        data.corrupt(f, 0.9)
    with pytest.raises(ValueError, match="name"):
        data.make_dataset("mnist")
    with pytest.raises(ValueError, match="n_lines"):
        multiparam.mma_h0(multiparam.build_filtration(ds.X[:10], f[:10]), n_lines=1)


# ---------------------------------------------------------------- the experiment


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    folder = tmp_path_factory.mktemp("smoke")
    return run(TomatoMPConfig.preset("smoke"), checkpoint=Checkpointer(folder)), folder


def test_smoke_run_shows_the_claimed_directions(smoke):
    results, _ = smoke
    runs = results.summary["outliers"]["runs"]
    true = results.summary["outliers"]["true"]
    assert true == len(np.unique(data.make_dataset("blobs", results.config.n_points, results.config.seed).labels))
    assert all(r["mp_robust"]["n_clusters"] == true for r in runs)
    assert all(r["mp_robust"]["ari"] > 0.8 for r in runs)
    assert all(i["ari_between"] > 0.95 for i in results.summary["outliers"]["independence"])
    corrupted = [r for r in runs if r["fraction"] > 0]
    # ToMATo picks a wrong count for at least one k on corrupted data
    assert any(t["n_clusters"] != true for r in corrupted for t in r["tomato"].values())
    assert results.summary["k_sweep"]["moons"]["distinct_counts"] > 1


def test_headline_has_one_line_per_outlier_fraction_with_its_counts(smoke):
    results, _ = smoke
    runs = results.summary["outliers"]["runs"]
    lines = headline(results)
    assert len(lines) == len(runs) == len(results.config.outlier_fraction_grid)
    for line, r in zip(lines, runs, strict=True):
        assert line.startswith(f"outliers {r['fraction']:.0%}: ToMATo(k={r['tomato_ref']['k']})")
        assert f"ToMAToMP robust K={r['mp_robust']['n_clusters']} " in line


def test_resuming_from_finished_parts_gives_identical_results(smoke):
    results, folder = smoke
    resumed = run(TomatoMPConfig.preset("smoke"), checkpoint=Checkpointer(folder, resume=True))
    a = {k: v for k, v in results.summary.items() if k != "timings"}
    b = {k: v for k, v in resumed.summary.items() if k != "timings"}
    assert a == b
    assert resumed.summary["timings"] == results.summary["timings"]  # nothing was recomputed


def test_resuming_after_the_first_part_matches_an_uninterrupted_run(smoke, tmp_path):
    results, folder = smoke
    ck = Checkpointer(folder, resume=True)
    partial = Checkpointer(tmp_path)
    partial.entries = {k: v for k, v in ck.entries.items() if k in ("run", "part/outliers")}
    partial.save("run", ck.entries["run"])
    resumed = run(TomatoMPConfig.preset("smoke"), checkpoint=Checkpointer(tmp_path, resume=True))
    a = {k: v for k, v in results.summary.items() if k != "timings"}
    b = {k: v for k, v in resumed.summary.items() if k != "timings"}
    assert a == b


def test_two_functions_part_compares_each_function_with_the_pair(smoke):
    results, _ = smoke
    seeds = results.summary["two_functions"]["seeds"]
    assert [one["seed"] for one in seeds] == list(results.config.two_function_seeds)
    for tf in seeds:
        assert tf["f"]["parameters"] == ["radius", "f1"] == tf["h"]["parameters"]
        assert tf["f_and_h"]["parameters"] == ["radius", "f1", "f2"]
        for name in ("f", "h", "f_and_h"):
            assert 1 <= tf[name]["n_labels"] <= tf[name]["n_clusters"]


def test_two_functions_pair_beats_each_function_alone_on_the_smoke_run(smoke):
    """The claimed direction on the seeded smoke run: on the four quadrants, each function alone
    splits the cloud in bands (not the four quadrants), and the pair's ARI is above both."""
    results, _ = smoke
    for tf in results.summary["two_functions"]["seeds"]:
        assert tf["true"] == 4
        assert tf["f_and_h"]["ari"] > max(tf["f"]["ari"], tf["h"]["ari"])
        assert {"diagonal", "density"} <= set(tf)  # the references are run, not judged


def test_gate_draws_start_with_the_comparisons_own_draw(smoke):
    """With one draw, the gate's wrong-count shares are those of the comparison's own ToMATo runs;
    more draws only add samples, and with no corrupted fraction there is nothing extra."""
    from explorables.tomato_mp import claims as C
    from explorables.tomato_mp.experiment import _blobs, tomato_wrong_shares

    results, _ = smoke
    cfg, out = results.config, results.summary["outliers"]
    seed = out["seeds"][0]
    ds, f = _blobs(replace(cfg, seed=seed))
    one = tomato_wrong_shares(replace(cfg, gate_draws=1), ds, f, seed)
    assert one == pytest.approx(list(C.wrong_count_shares(out["seed_runs"][0], out["true"])))
    assert out["tomato_wrong"][0][1] == one[1]  # the clean share does not depend on the draws
    w, c = tomato_wrong_shares(replace(cfg, outlier_fraction_grid=(0.0,)), ds, f, seed)
    assert w == c


def test_iris_reuses_its_mma_only_where_the_input_is_the_same():
    """Iris is the same 150 flowers on every seed: without a subsample ToMAToMP's input does not
    change, so the datasets part computes its MMAs once; the reused entries equal a fresh run."""
    from explorables.tomato_mp.experiment import BANDWIDTH, _datasets, cluster_all

    cfg = replace(TomatoMPConfig.preset("smoke"), datasets=("iris",), n_seeds=2)
    second = _datasets(cfg)[0]["iris"]["seeds"][1]
    ds = data.make_dataset("iris", cfg.n_points, second["seed"])
    fresh, _ = cluster_all(replace(cfg, seed=second["seed"]), ds.X, data.log_kde(ds.X, BANDWIDTH["iris"]), ds.labels)
    assert {k: v for k, v in second.items() if k != "seed"} == {k: v for k, v in fresh.items() if k != "tomato"}


def test_quadrants_are_the_sign_patterns_and_each_function_sees_one_axis():
    ds, F = data.make_quadrants(200, seed=3, noise=0.0)
    x, y = ds.X[:, 0], ds.X[:, 1]
    assert F.shape == (2, 200) and ds.name == "quadrants"
    np.testing.assert_array_equal(ds.labels, 2 * (x > 0) + (y > 0))
    # f depends on x only, h on y only: computed from the positions, never from the labels
    np.testing.assert_allclose(F[0], data.two_bumps(x))
    np.testing.assert_allclose(F[1], data.two_bumps(y))
    # two bumps: peaks at ±1, a valley at 0, symmetric
    t = np.linspace(-3, 3, 601)
    b = data.two_bumps(t)
    np.testing.assert_allclose(b, b[::-1])
    assert b[300] < b[200] and b[300] < b[400] and np.argmax(b[:300]) == 200
    # noise is added, the positions and labels do not change with it
    ds2, F2 = data.make_quadrants(200, seed=3, noise=0.1)
    np.testing.assert_array_equal(ds2.X, ds.X)
    assert 0.05 < np.std(F2 - F) < 0.15
    for name, kwargs in (("spread", {"spread": 0.0}), ("noise", {"noise": -1.0}), ("n", {"n": 3})):
        with pytest.raises(ValueError, match=name):
            data.make_quadrants(**kwargs)


@pytest.mark.parametrize("layout", data.QUADRANT_LAYOUTS)
def test_quadrant_layouts_keep_labels_and_functions(layout):
    """Every layout labels a point by its quadrant and measures the same two functions of its position;
    by symmetry a function's values do not tell apart the two sides it does not see (f: top vs bottom)."""
    ds, F = data.make_quadrants(4000, seed=5, noise=0.0, layout=layout, spread=1.0)
    x, y = ds.X[:, 0], ds.X[:, 1]
    np.testing.assert_array_equal(ds.labels, 2 * (x > 0) + (y > 0))
    np.testing.assert_allclose(F, np.stack([data.two_bumps(x), data.two_bumps(y)]))
    assert np.all(np.bincount(ds.labels, minlength=4) > 800)  # four groups of about n / 4
    for g, other in ((F[0], y > 0), (F[1], x > 0)):  # AUC of f for top vs bottom, of h for right vs left
        auc = roc_auc_score(other, g)
        assert abs(auc - 0.5) < 0.03
    with pytest.raises(ValueError, match="layout"):
        data.make_quadrants(layout="ring")


def _boundary_to_inside(X: np.ndarray, axis: int, half: float = 0.2) -> float:
    """Points within ``half`` of the quadrant boundary (coordinate 0) over points within ``half`` of a
    quadrant's middle (coordinate ±1), along one axis: below 1, a density dip on the boundary."""
    t = X[:, axis]
    return np.sum(np.abs(t) < half) / (np.sum(np.abs(t - 1) < half) + np.sum(np.abs(t + 1) < half)) * 2


def test_quadrant_layouts_density_on_the_boundaries():
    """The arithmetic of benchmarks/tomato_mp_quadrants_rule.md: the four Gaussian groups (sd 0.6) dip to
    about half on the boundaries (the geometry can split them); the square is flat there, and the blob
    is densest there (no gap between the quadrants in the distribution)."""
    n = 40_000
    groups = data.make_quadrants(n, seed=1, layout="groups", spread=0.6)[0].X
    square = data.make_quadrants(n, seed=1, layout="square")[0].X
    blob = data.make_quadrants(n, seed=1, layout="blob", spread=1.0)[0].X
    for axis in (0, 1):
        assert 0.4 < _boundary_to_inside(groups, axis) < 0.6
        assert 0.9 < _boundary_to_inside(square, axis) < 1.1
        assert _boundary_to_inside(blob, axis) > 1.4
    assert np.all(np.abs(square) <= data.SQUARE_HALF_SIDE)


def _groups_marginal(t: np.ndarray, spread: float) -> np.ndarray:
    """The density of one coordinate of the four groups: ½ N(-1, s²) + ½ N(1, s²) (the equal-weight
    mixture at (±1, ±1) factorises, so the density of a point is this in x times this in y)."""
    return (
        0.5
        * (np.exp(-((t - 1) ** 2) / (2 * spread**2)) + np.exp(-((t + 1) ** 2) / (2 * spread**2)))
        / (spread * np.sqrt(2 * np.pi))
    )


@pytest.mark.parametrize("spread", [1.0, 1.2])
def test_groups_at_spread_one_are_densest_on_the_boundaries(spread):
    """The page's design since benchmarks/tomato_mp_rule8_rule.md (first proposed in tomato_mp_spread_rule.md):
    at sd ≥ 1 the groups' one-coordinate density is unimodal with its peak at 0, so along every line
    parallel to an axis the density is largest on the quadrant boundary and falls off monotonically: no
    valley between two quadrants for the radius to read (at the former 0.6 the boundary is a valley).
    Analytic, then on a large sample; and the config's default is such a spread."""
    t = np.linspace(0.0, 4.0, 4001)
    m = _groups_marginal(t, spread)
    assert np.all(np.diff(m) <= 1e-15) and np.argmax(m) == 0
    m06 = _groups_marginal(t, 0.6)
    assert m06[0] < 0.6 * m06.max()  # the former design: a valley on the boundary
    assert TomatoMPConfig.preset("book").quadrant_spread >= 1.0
    # the density of the points along x given any y is m(x) m(y), so its shape in x does not depend on y
    X = data.make_quadrants(200_000, seed=2, layout="groups", spread=spread)[0].X
    for axis in (0, 1):
        assert _boundary_to_inside(X, axis) > 1.0
        other = X[:, 1 - axis]
        for band in (np.abs(other) < 0.3, np.abs(other - 1) < 0.3, np.abs(other + 1.5) < 0.3):
            assert _boundary_to_inside(X[band], axis) > 0.95  # ~5,000 points near each line: ~2% sampling error


def test_each_quadrant_function_alone_has_two_superlevel_bands():
    """An oracle for the gate: with no noise, ToMATo on f alone (k-NN graph) sees two peaks (left,
    right), on the diagonal min(rank f, rank h) four."""
    ds, F = data.make_quadrants(400, seed=0, noise=0.0)
    assert persistence.tomato(ds.X, F[0], k=15).n_clusters == 2
    diag = np.minimum(multiparam.ranks01(F[0]), multiparam.ranks01(F[1]))
    assert persistence.tomato(ds.X, diag, k=15).n_clusters == 4


def test_explorable_slider_has_one_step_per_outlier_fraction(smoke):
    results, _ = smoke
    slider = explorable_figure(results).layout.sliders[0]
    assert len(slider.steps) == len(results.config.outlier_fraction_grid)
    # each step shows the three panels of its own fraction, nothing of the others
    shown = [{i for i, v in enumerate(step.args[0]["visible"]) if v} for step in slider.steps]
    assert all(len(a) >= 3 for a in shown)
    assert all(not a & b for i, a in enumerate(shown) for b in shown[i + 1 :])


def test_staircase_outline_of_a_rectangle():
    x, y = staircase(np.array([[0.2, 0.1]]), np.array([[0.6, 0.5]]))
    assert min(x) == pytest.approx(0.2) and max(x) == pytest.approx(0.6)
    assert min(y) == pytest.approx(0.1) and max(y) == pytest.approx(0.5)


def test_parallel_mmas_give_the_same_numbers(smoke):
    from explorables.tomato_mp.experiment import _outliers

    results, _ = smoke
    parallel, _ = _outliers(TomatoMPConfig.preset("smoke", workers=2))
    assert parallel == results.summary["outliers"]


def _entry(k: int, labels: int, ari: float) -> dict:
    return {"n_clusters": k, "n_labels": labels, "ari": ari, "parameters": []}


@pytest.mark.parametrize(
    ("per_seed", "verdict"),
    [
        ([(False, False, True)] * 3, "yes"),  # the pair on every seed, well above each alone
        ([(False, False, False)] * 3, "no"),  # nobody recovers
        ([(True, True, True)] * 3, "partly"),  # the pair recovers, but no better than each alone
    ],
)
def test_two_functions_verdict_follows_the_aris(per_seed, verdict):
    from explorables.tomato_mp.claims import two_functions_claim

    def ok(flag, i):
        return _entry(3, 3, 0.9 + 0.01 * i) if flag else _entry(4, 4, 0.5 + 0.01 * i)

    seeds = [{"seed": i, "true": 3, "f": ok(f, i), "h": ok(h, i), "f_and_h": ok(pair, i)}
             for i, (f, h, pair) in enumerate(per_seed)]
    tf = {"spread": 0.6, "noise": 0.03, "seeds": seeds}
    assert two_functions_claim(tf).verdict.startswith(verdict)


def test_findings_text_is_built_from_the_run(smoke):
    from explorables.tomato_mp import claims as C
    from explorables.tomato_mp.claims import findings_text

    results, _ = smoke
    text = findings_text(results)
    runs = results.summary["outliers"]["seed_runs"]
    rec = C.recovered_cells(runs, results.summary["outliers"]["true"])
    assert f"ToMAToMP on (radius, f) in {rec['mp_plain']}, ToMATo at k = 10 in {rec['tomato_ref']}" in text
    assert f"mean ARI {np.mean([one[0]['mp_robust']['ari'] for one in runs]):.2f}" in text


def test_outlier_sweep_repeats_on_every_seed_and_runs_the_dtm_control():
    from explorables.tomato_mp.experiment import _outliers, seeds_of

    cfg = TomatoMPConfig.preset("smoke", n_seeds=2, outlier_fraction_grid=(0.05,), k_grid=(10,), seed=3)
    summary, _ = _outliers(cfg)
    assert summary["seeds"] == [3000, 3001] and summary["seed_runs"][0] == summary["runs"]
    # base seeds share no draw (issue: base seed + i made neighbouring base seeds share 4 of 5 samples)
    assert not set(seeds_of(cfg)) & set(seeds_of(replace(cfg, seed=4)))
    first, second = (one[0] for one in summary["seed_runs"])
    assert first["n_outliers"] == second["n_outliers"] and first != second  # a new sample per seed
    # the control never sees f: with and without outliers it gives the same clustering
    clean, _ = _outliers(replace(cfg, outlier_fraction_grid=(0.0,)))
    assert clean["runs"][0]["tomato_dtm"] == first["tomato_dtm"]


def test_cross_checks_bound_k_by_the_number_of_points():
    with pytest.raises(ValueError, match="k_grid must be at most n_points - 1 = 49"):
        TomatoMPConfig.preset("smoke", n_points=50, k_grid=(5, 50))
    with pytest.raises(ValueError, match="reference_k"):
        TomatoMPConfig.preset("smoke", n_points=50, reference_k=60)
    assert TomatoMPConfig.preset("smoke", n_points=50, k_grid=(5, 49), reference_k=49).k_grid == (5, 49)


def test_sweep_workers_never_exceed_the_tasks_and_stay_one_off_the_cpu():
    from explorables.tomato_mp.experiment import sweep_workers

    assert sweep_workers(8, 3, "cpu") == 3
    assert sweep_workers(2, 10, "cpu") == 2
    assert 1 <= sweep_workers(0, 4, "cpu") <= 4
    assert sweep_workers(0, 1, "cpu") == 1


def test_sweep_workers_is_one_process_on_a_gpu(monkeypatch):
    import torch

    import explorables.tomato_mp.experiment as E

    monkeypatch.setattr(E, "resolve_device", lambda device: torch.device("cuda"))
    assert E.sweep_workers(0, 25, "cuda") == 1


@pytest.mark.parametrize("robust", [False, True])
def test_dropping_dominated_edges_keeps_the_components_at_every_grade(robust):
    """drop_dominated_edges removes edges uv with a path u w v of shorter edges whose grades are at most
    uv's: the components at every grade (hence H0 as a module) stay the same; against a by-hand loop."""
    ds, F = data.make_quadrants(120, 7, spread=1.0, noise=0.03)
    filt = multiparam.build_filtration(ds.X, F, robust=robust)
    small = multiparam.drop_dominated_edges(filt, block=97)
    assert 0 < len(small.edges) < len(filt.edges) / 2
    # by hand: an edge goes if some w is strictly closer to both ends and no higher in any function grade
    E, G, V = filt.edges, filt.edge_grades, filt.vertex_grades
    radius = {(int(a), int(b)): g[0] for (a, b), g in zip(E, G, strict=True)}
    radius.update({(b, a): r for (a, b), r in list(radius.items())})
    kept = [
        not any(
            radius.get((int(u), w), np.inf) < g[0] and radius.get((w, int(v)), np.inf) < g[0]
            and np.all(V[w, 1:] <= g[1:])
            for w in range(len(V))
        )
        for (u, v), g in zip(E, G, strict=True)
    ]
    np.testing.assert_array_equal(small.edges, E[np.array(kept)])
    rng = np.random.default_rng(0)
    for grade in rng.random((40, filt.num_parameters)):
        a, b = multiparam.components_at(filt, grade), multiparam.components_at(small, grade)
        assert len(set(zip(a, b, strict=True))) == len(set(a)) == len(set(b))  # the same partition


def test_dropping_dominated_edges_keeps_ties_and_higher_vertices():
    """Edge cases of the reduction: an equilateral triangle keeps every edge (no side is strictly longer than the
    other two, so dropping on ties could empty it); a vertex w higher in a function than the edge uv does not
    replace it (the path u w v enters later); a lower one does; a filtration that is not radius-first and
    lower-star is refused."""
    def filtration(vertex_f, edges, radii):
        V = np.column_stack([np.zeros(len(vertex_f)), vertex_f])
        E = np.array(edges)
        G = np.column_stack([radii, np.maximum(V[E[:, 0], 1], V[E[:, 1], 1])])
        return multiparam.MultiFiltration(V, E, G, ("radius", "f"), float(max(radii)))

    triangle = filtration([0.0, 0.0, 0.0], [(0, 1), (1, 2), (0, 2)], [1.0, 1.0, 1.0])
    assert len(multiparam.drop_dominated_edges(triangle).edges) == 3
    # u = 0, v = 1 joined by a long edge; w = 2 closer to both
    high_w = filtration([0.0, 0.0, 5.0], [(0, 1), (0, 2), (1, 2)], [2.0, 1.0, 1.0])
    assert len(multiparam.drop_dominated_edges(high_w).edges) == 3  # w enters later than uv: uv stays
    low_w = filtration([0.0, 0.0, 0.0], [(0, 1), (0, 2), (1, 2)], [2.0, 1.0, 1.0])
    kept = multiparam.drop_dominated_edges(low_w).edges
    assert len(kept) == 2 and [0, 1] not in kept.tolist()
    shifted = multiparam.MultiFiltration(low_w.vertex_grades, low_w.edges, low_w.edge_grades + np.array([0.0, 1.0]),
                                         low_w.parameters, low_w.r_max)  # edges enter later than their ends
    with pytest.raises(ValueError, match="lower-star"):
        multiparam.drop_dominated_edges(shifted)


def test_reduced_mma_gives_the_same_one_function_clustering():
    """With one function the reduced graph's MMA gives the same count, prominences and labels (as on every
    tuning sample compared, benchmarks/tomato_mp_reduce.md). With two it can differ (another approximation of
    the same module): only the whole graph is kept in the result."""
    ds, F = data.make_quadrants(150, 3, spread=1.0, noise=0.03)
    for G in (F[:1], F[1:]):
        a = multiparam.tomato_mp(ds.X, G, robust=False, n_lines=30)
        b = multiparam.tomato_mp(ds.X, G, robust=False, n_lines=30, reduce=True)
        assert a.n_clusters == b.n_clusters
        np.testing.assert_array_equal(a.prominences, b.prominences)
        np.testing.assert_array_equal(a.labels, b.labels)
    a = multiparam.tomato_mp(ds.X, F, robust=False, n_lines=30)
    b = multiparam.tomato_mp(ds.X, F, robust=False, n_lines=30, reduce=True)
    assert len(b.filtration.edges) == len(a.filtration.edges)  # the result keeps the whole graph


def test_book_two_function_samples_follow_the_power_rule():
    """benchmarks/tomato_mp_power_rule.md: the book preset draws 24 two-function samples per base seed (16 before),
    a book-preset change only: the paper preset resolves to the field default, and every other part keeps its
    samples."""
    book, paper = TomatoMPConfig.preset("book"), TomatoMPConfig.preset("paper")
    assert book.two_function_seeds == tuple(range(24))
    assert paper.two_function_seeds == TomatoMPConfig().two_function_seeds == (0, 1, 2)
    assert book.n_seeds == 8 and book.gate_draws == 8
