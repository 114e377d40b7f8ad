"""Chapter 09 (UCCA): the science. The chapter contract (config fields, determinism, claims shape,
figures, lab) is covered by tests/test_contract.py."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import quadratic_assignment
from sklearn.cross_decomposition import CCA as SklearnCCA

from explorables.core.verdicts import drive
from explorables.ucca import experiment as E
from explorables.ucca import method as M
from explorables.ucca.baselines import cca_on_pairing, random_pairing
from explorables.ucca.cca import cca, qap_objective, sum_squared_correlations, variate_correlations, whiten
from explorables.ucca.claims import (
    CRITERIA,
    baselines_verdict,
    comparison_sentence,
    gaussian_control_verdict,
    identifiable_gate,
    identity_verdict,
    qap_diagnosis,
    qap_step_sentence,
    recovered_seeds,
    recovery_verdict,
    signal_gate,
)
from explorables.ucca.data import synthetic_views, unpaired
from explorables.ucca.method import entropic_pairing, faq_pairing, refine_pairing, reflected_pairings, ucca


def _whitened_pair(rng, n=40, d=3):
    return whiten(rng.standard_normal((n, 6)), d), whiten(rng.standard_normal((n, 5)), d)


# --- classical CCA and the CCA-QAP identity -------------------------------------------------------


def test_whitening_gives_identity_covariance():
    rng = np.random.default_rng(0)
    Xw = whiten(rng.standard_normal((100, 7)) @ rng.standard_normal((7, 7)), 4)
    np.testing.assert_allclose(Xw.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(Xw.T @ Xw / 100, np.eye(4), atol=1e-10)


def test_cca_qap_identity_on_random_permutations():
    """Σρ² of whitened views paired by P equals tr(A P B Pᵀ)/n² (eq. ucca-qap), for any P."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = int(rng.integers(10, 60))
        Xw, Yw = _whitened_pair(rng, n)
        A, B = Xw @ Xw.T, Yw @ Yw.T
        perm = rng.permutation(n)
        rho = np.linalg.svd(Xw.T @ Yw[perm] / n, compute_uv=False)
        assert np.sum(rho**2) == pytest.approx(qap_objective(A, B, perm) / n**2, abs=1e-12)
        assert sum_squared_correlations(Xw, Yw, perm) == pytest.approx(np.sum(rho**2), abs=1e-12)


def test_qap_objective_follows_scipys_convention():
    """Our objective of scipy's returned permutation equals scipy's reported value."""
    rng = np.random.default_rng(2)
    Xw, Yw = _whitened_pair(rng, 30)
    A, B = Xw @ Xw.T, Yw @ Yw.T
    res = quadratic_assignment(A, B, options=dict(maximize=True, rng=rng))
    assert qap_objective(A, B, res.col_ind) == pytest.approx(res.fun, rel=1e-12)


def test_our_cca_matches_scikit_learn_up_to_sign():
    rng = np.random.default_rng(3)
    z = rng.standard_normal((400, 2))
    X = z @ rng.standard_normal((2, 5)) + 0.5 * rng.standard_normal((400, 5))
    Y = z @ rng.standard_normal((2, 4)) + 0.5 * rng.standard_normal((400, 4))
    ours = cca(X, Y, 2)
    u, v = ours.transform(X, Y)
    sk = SklearnCCA(n_components=2, max_iter=5000, tol=1e-12).fit(X, Y)
    su, sv = sk.transform(X, Y)
    for c in range(2):
        assert abs(np.corrcoef(u[:, c], su[:, c])[0, 1]) == pytest.approx(1.0, abs=1e-6)
        assert abs(np.corrcoef(v[:, c], sv[:, c])[0, 1]) == pytest.approx(1.0, abs=1e-6)
        assert np.corrcoef(su[:, c], sv[:, c])[0, 1] == pytest.approx(ours.correlations[c], abs=1e-6)


def test_alternation_never_decreases_its_objective():
    """Both steps of eq. (ucca-alternate) maximise the sum of the top-k correlations."""
    rng = np.random.default_rng(4)
    views = synthetic_views(120, rng=rng)
    X, Y, _ = unpaired(views, rng)
    Xw, Yw = whiten(X, 3), whiten(Y, 3)
    _, objectives = refine_pairing(Xw, Yw, rng.permutation(120), 2, 15)
    assert np.all(np.diff(objectives) >= -1e-12)


def test_faq_pairing_never_scores_below_its_starts_and_brute_force_on_tiny_inputs():
    """On n = 6 (720 permutations), FAQ from rotation starts is compared with the exact QAP optimum."""
    from itertools import permutations

    rng = np.random.default_rng(5)
    Xw, Yw = _whitened_pair(rng, 6, 2)
    best = max(sum_squared_correlations(Xw, Yw, np.array(p)) for p in permutations(range(6)))
    found, scores = faq_pairing(Xw, Yw, n_restarts=10, rng=rng)
    assert sum_squared_correlations(Xw, Yw, found) == pytest.approx(max(scores))
    assert max(scores) <= best + 1e-12
    assert max(scores) >= 0.9 * best


def test_reflections_lead_back_from_a_sign_flipped_pairing_toward_the_truth():
    """A pairing with some canonical directions of the truth reflected scores lower on eq. (ucca-qap); among
    its own reflections (eq. ucca-reflect) is one scoring higher, so the sign flips can climb back."""
    rng = np.random.default_rng(0)
    X, Y, shuffle = unpaired(synthetic_views(60, rng=rng, noise=0.1), rng)
    truth = np.argsort(shuffle)
    Xw, Yw = whiten(X, 3), whiten(Y, 3)
    flipped = reflected_pairings(Xw, Yw, truth)
    assert len(flipped) == 2**3 - 1
    for p in flipped:
        assert sorted(p) == list(range(60))  # a permutation
        value = sum_squared_correlations(Xw, Yw, p)
        assert value < sum_squared_correlations(Xw, Yw, truth)
        assert max(sum_squared_correlations(Xw, Yw, q) for q in reflected_pairings(Xw, Yw, p)) > value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_search_ends_at_least_as_high_as_every_reflection_of_its_pairing(seed):
    """With reflections, no sign flip of the returned pairing's directions (eq. ucca-reflect) scores higher on
    eq. (ucca-qap); without them, exactly n_faq FAQ runs."""
    views = synthetic_views(70, rng=np.random.default_rng(seed), noise=0.3)
    X, Y, _ = unpaired(views, np.random.default_rng(seed))
    Xw, Yw = whiten(X, 3), whiten(Y, 3)
    _, plain_scores = faq_pairing(Xw, Yw, n_restarts=6, n_faq=2, reflect=False, rng=np.random.default_rng(seed))
    assert len(plain_scores) == 2
    found, scores = faq_pairing(Xw, Yw, n_restarts=6, n_faq=2, rng=np.random.default_rng(seed))
    value = sum_squared_correlations(Xw, Yw, found)
    assert len(scores) >= 2 + 2**3 - 1  # at least one round of the 7 reflections
    assert value == pytest.approx(max(scores))
    assert all(sum_squared_correlations(Xw, Yw, p) <= value + 1e-12 for p in reflected_pairings(Xw, Yw, found))


def test_entropic_relaxation_reaches_a_good_pairing_on_small_clustered_data():
    rng = np.random.default_rng(6)
    views = synthetic_views(80, rng=rng, noise=0.1)
    X, Y, _ = unpaired(views, rng)
    Xw, Yw = whiten(X, 3), whiten(Y, 3)
    pairing, scores = entropic_pairing(Xw, Yw, n_restarts=3, epsilon=0.5, n_outer=10, n_sinkhorn=30, rng=rng)
    _, faq_scores = faq_pairing(Xw, Yw, n_restarts=3, rng=rng)
    assert sum_squared_correlations(Xw, Yw, pairing) == pytest.approx(max(scores))
    assert max(scores) >= 0.9 * max(faq_scores)


# --- UCCA on synthetic data: where it works and where it cannot -------------------------------------


def _scores(latent: str, seed: int, n: int = 150) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    views = synthetic_views(n + 300, latent=latent, rng=rng)
    train, test = views.subset(np.arange(n)), views.subset(np.arange(n, n + 300))
    X, Y_shuffled, _ = unpaired(train, rng)
    oracle = variate_correlations(cca(train.X, train.Y, 2, d=3), test.X, test.Y).mean()
    fit = ucca(X, Y_shuffled, n_components=2, d=3, n_restarts=8, rng=rng)
    found = variate_correlations(fit.fit, test.X, test.Y).mean()
    rand = np.mean([
        variate_correlations(cca_on_pairing(X, Y_shuffled, random_pairing(n, rng), 2, 3), test.X, test.Y).mean()
        for _ in range(10)
    ])  # fmt: skip
    return float(oracle), float(found), float(rand)


def test_ucca_recovers_the_true_correlation_on_a_clustered_latent():
    results = np.array([_scores("clustered", s) for s in (1, 3, 5)])
    oracle, found, rand = results.mean(0)
    assert found >= 0.8 * oracle
    assert found >= rand + 0.5


def test_ucca_cannot_recover_it_on_a_gaussian_latent():
    results = np.array([_scores("gaussian", s) for s in (1, 3, 5)])
    oracle, found, _ = results.mean(0)
    assert oracle > 0.9  # the views are strongly correlated: the pairing, not the data, is what is missing
    assert found < 0.8 * oracle


# --- the true pairing never reaches the method --------------------------------------------------------


def test_the_true_pairing_never_reaches_ucca_or_the_baselines(monkeypatch):
    """Every method gets X and a shuffled Y (never row-aligned with X); scores use the held-out true pairs."""
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def spy(real):
        def wrapped(X, Y, *args, **kwargs):
            seen.append((np.array(X), np.array(Y)))
            return real(X, Y, *args, **kwargs)

        return wrapped

    for name in ("ucca", "wasserstein_procrustes_pairing", "gromov_wasserstein_pairing"):
        monkeypatch.setattr(E, name, spy(getattr(E, name)))
    reflected: list[np.ndarray] = []  # the reflection step runs inside ucca, on what ucca was given
    real_reflect = M.reflected_pairings

    def spy_reflect(Xw, Yw, pairing):
        reflected.append(np.array(Yw))
        return real_reflect(Xw, Yw, pairing)

    monkeypatch.setattr(M, "reflected_pairings", spy_reflect)
    cfg = E.UCCAConfig.preset("smoke", datasets=("clustered",), seeds=(0,))
    rng = np.random.default_rng([cfg.seed, 0, E.DATASETS.index("clustered")])
    train, _ = E.load_split(cfg, "clustered", rng)  # the same draw the trial makes
    E.trial(cfg, "clustered", 0)
    assert len(seen) == 5  # UCCA, its two ablations, Wasserstein–Procrustes, Gromov–Wasserstein
    assert reflected  # the step ran, and only on the whitened shuffled Y ucca received
    np.testing.assert_allclose(reflected[0], whiten(seen[0][1], cfg.d_reduced))
    for X, Y in seen:
        np.testing.assert_array_equal(X, train.X)
        assert not np.array_equal(Y, train.Y)  # shuffled ...
        np.testing.assert_array_equal(np.sort(Y, axis=0), np.sort(train.Y, axis=0))  # ... but the same rows
        aligned = np.mean(np.all(np.isclose(Y, train.Y), axis=1))
        assert aligned < 0.1  # almost no row is where its partner is


def test_the_truth_started_diagnosis_never_feeds_back_into_any_method(monkeypatch):
    """The diagnosis FAQ started at the truth (text only) leaves every method's numbers unchanged."""
    cfg = E.UCCAConfig.preset("smoke", datasets=("clustered",), seeds=(0,))
    with_diagnosis = E.trial(cfg, "clustered", 0)
    monkeypatch.setattr(E, "truth_basin_objective", lambda *a, **k: float("nan"))
    monkeypatch.setattr(E, "sum_squared_correlations", lambda *a, **k: float("nan"))
    without = E.trial(cfg, "clustered", 0)
    for key in (*E.METHODS, "ucca_pairing", "qap_found"):
        assert without[key] == with_diagnosis[key], key
    assert np.isnan(without["qap_truth_basin"]) and not np.isnan(with_diagnosis["qap_truth_basin"])


# --- bad input ------------------------------------------------------------------------------------------


def test_mismatched_sample_counts_are_refused():
    rng = np.random.default_rng(8)
    with pytest.raises(ValueError, match=r"Y must have shape \(n, q\) with n = 50 \(from X\)"):
        ucca(rng.standard_normal((50, 4)), rng.standard_normal((49, 4)), rng=rng)
    with pytest.raises(ValueError, match=r"Y must have shape \(n, q\) with n = 50 \(from X\)"):
        cca(rng.standard_normal((50, 4)), rng.standard_normal((49, 4)), 1)


def test_too_few_samples_or_dimensions_for_the_components_are_refused():
    rng = np.random.default_rng(9)
    with pytest.raises(ValueError, match="n_components"):
        ucca(rng.standard_normal((50, 4)), rng.standard_normal((50, 4)), n_components=3, d=2, rng=rng)
    with pytest.raises(ValueError, match="d must be"):
        ucca(rng.standard_normal((5, 8)), rng.standard_normal((5, 8)), d=6, rng=rng)  # d <= n - 1
    with pytest.raises(ValueError, match="d must be"):
        cca(rng.standard_normal((50, 2)), rng.standard_normal((50, 4)), 1, d=3)  # d <= min(p, q)


def test_nans_are_refused_with_the_views_name():
    rng = np.random.default_rng(10)
    X, Y = rng.standard_normal((30, 4)), rng.standard_normal((30, 4))
    Y[3, 1] = np.nan
    with pytest.raises(ValueError, match="Y must hold only finite"):
        ucca(X, Y, rng=rng)


def test_bad_permutations_and_solvers_are_refused():
    rng = np.random.default_rng(11)
    Xw, Yw = _whitened_pair(rng, 10)
    with pytest.raises(ValueError, match="perm must be a permutation"):
        sum_squared_correlations(Xw, Yw, np.array([0] * 10))
    with pytest.raises(ValueError, match="solver"):
        ucca(Xw, Yw, d=2, solver="magic", rng=rng)


# --- verdicts -----------------------------------------------------------------------------------------


def test_verdict_functions_follow_their_criteria():
    one, zero, half, hi = [1.0, 1.0, 1.0], [0.0, 0.01, 0.0], [0.5, 0.52, 0.48], [0.9, 0.92, 0.91]
    assert identity_verdict(1e-15).startswith("pass") and identity_verdict(1e-3).startswith("fail")
    assert signal_gate(one, zero).startswith("pass") and signal_gate(half, zero).startswith("fail")
    assert recovery_verdict(hi, one, zero).startswith("yes")
    assert recovery_verdict([0.7, 0.71, 0.69], one, zero).startswith("partly")  # above random + 0.5, < 0.8 x oracle
    partly = recovery_verdict(hi, one, half)  # >= 0.8 x oracle but not random + 0.5
    assert partly.startswith("partly") and "no: UCCA − random" in partly  # its words say which part failed
    assert recovery_verdict([0.2, 0.21, 0.19], one, zero).startswith("no")
    assert recovery_verdict([0.3, 1.0, 0.6], one, [0.2, 0.2, 0.2]).startswith("unclear")
    assert recovered_seeds({"ucca": {"values": [0.9, 0.1, 0.85]}, "oracle": {"values": [1.0, 1.0, 1.0]},
                            "random": {"values": [0.0, 0.0, 0.4]}}) == 1  # fmt: skip
    assert baselines_verdict({"a": hi, "b": hi}, {"a": {"w": half}, "b": {"w": half}}).startswith("yes")
    assert baselines_verdict({"a": hi, "b": half}, {"a": {"w": half}, "b": {"w": half}}).startswith("partly")
    # behind or level with every baseline reads no, never partly
    assert baselines_verdict({"a": half}, {"a": {"w": hi, "g": half}}).startswith("no")
    assert baselines_verdict({"a": [0.3, 1.0, 0.6]}, {"a": {"w": half}}).startswith("unclear")
    with pytest.raises(ValueError, match="same length"):
        baselines_verdict({"a": [0.9, 0.9]}, {"a": {"w": half}})
    assert gaussian_control_verdict([0.2, 0.3, 0.25]).startswith("yes")
    assert gaussian_control_verdict(hi).startswith("no")
    # two of three Gaussian seeds recovering is not a limit: the interval reaches above 0.8
    assert gaussian_control_verdict([0.97, 1.0, 0.2]).startswith("unclear")
    assert identifiable_gate(hi).startswith("pass") and identifiable_gate(half).startswith("fail")
    assert drive(CRITERIA) == []
    assert "search" in qap_diagnosis([1.0, 1.0], [2.0, 2.0])
    assert "objective itself" in qap_diagnosis([2.0, 2.0], [1.9, 2.0])
    assert "1 of 2" in qap_diagnosis([1.0, 2.0], [2.0, 2.0])


def test_comparison_sentence_names_the_best_method():
    from types import SimpleNamespace

    def stats(u, w, g):
        return {m: {"mean": v} for m, v in (("ucca", u), ("wasserstein_procrustes", w), ("gromov_wasserstein", g))}

    summary = {"clustered": stats(0.9, 0.4, 0.5), "digits": stats(0.1, 0.5, 0.0),
               "gaussian": stats(0.4, 0.42, 0.0), "breast_cancer": stats(0.1, 0.2, 0.0)}  # fmt: skip
    res = SimpleNamespace(config=SimpleNamespace(datasets=tuple(summary)), summary=summary)
    text = comparison_sentence(res)
    assert "UCCA is best (0.90)" in text
    assert "Wasserstein–Procrustes is ahead (0.50" in text
    assert "within 0.05" in text
    assert "no unpaired method reaches 0.3 (best 0.20)" in text
    steps = qap_step_sentence(res)
    assert "+0.50 (UCCA ahead)" in steps and "-0.40 (Wasserstein–Procrustes ahead)" in steps
    assert "-0.02 (little)" in steps


# --- the rest of the public API -------------------------------------------------------------------------


def test_a_fitted_whitening_maps_its_own_view_to_identity_covariance_and_is_whiten():
    from explorables.ucca import fit_whitening

    X = synthetic_views(60, rng=np.random.default_rng(3)).X
    w = fit_whitening(X, 4)
    Xw = w(X)
    np.testing.assert_allclose(Xw.T @ Xw / X.shape[0], np.eye(4), atol=1e-10)
    np.testing.assert_allclose(Xw, whiten(X, 4))
    with pytest.raises(ValueError, match="d must be"):
        fit_whitening(X, 0)


def test_the_unpaired_baselines_return_permutations_no_worse_than_random_on_identical_views():
    from explorables.ucca import gromov_wasserstein_pairing, wasserstein_procrustes_pairing

    rng = np.random.default_rng(4)
    X = synthetic_views(40, d_x=5, d_y=5, rng=rng).X
    Y = X[rng.permutation(40)]  # the same rows, shuffled: a pairing with every correlation 1 exists
    Xw, Yw = whiten(X, 3), whiten(Y, 3)
    random_score = np.mean([sum_squared_correlations(Xw, Yw, random_pairing(40, rng)) for _ in range(20)])
    for pairing in (
        wasserstein_procrustes_pairing(X, Y, d=3, n_restarts=4, rng=np.random.default_rng(0)),
        gromov_wasserstein_pairing(X, Y),
    ):
        np.testing.assert_array_equal(np.sort(pairing), np.arange(40))
        assert sum_squared_correlations(Xw, Yw, pairing) > random_score


def test_the_bundled_real_views_pair_row_by_row():
    from explorables.ucca import breast_cancer_views, digit_halves, wine_views

    for views, p, q, n_classes in ((digit_halves(), 32, 32, 10), (breast_cancer_views(), 10, 10, 2),
                                   (wine_views(), 6, 7, 3)):  # fmt: skip
        assert views.X.shape[0] == views.Y.shape[0] == views.labels.shape[0]
        assert (views.X.shape[1], views.Y.shape[1]) == (p, q)
        assert np.all(np.isfinite(views.X)) and np.all(np.isfinite(views.Y))
        assert set(np.unique(views.labels)) == set(range(n_classes))


def test_a_tiny_run_reports_every_dataset_and_its_headline():
    from explorables.ucca import UCCAConfig, UCCAResults, headline, run

    cfg = UCCAConfig.preset(
        "smoke", datasets=("gaussian",), seeds=(0,), n_train=30, n_test=30, n_restarts=2, n_faq=1,
        n_alternations=1, n_random_pairings=1, n_identity_checks=2, non_gaussianity_grid=(0.0,),
    )  # fmt: skip
    results = run(cfg)
    assert isinstance(results, UCCAResults)
    assert results.summary["identity"]["max_gap"] < 1e-8  # eq. (ucca-qap) holds on every permutation
    lines = headline(results)
    assert lines[0].startswith("identity") and any(line.startswith("gaussian:") for line in lines)


def test_wine_halves_share_a_clustered_signal_the_true_pairing_carries():
    """The wine views: the true pairing's first canonical correlation is high, a random pairing's is not, and the
    cultivars separate the shared direction (a clustered, non-Gaussian shared structure)."""
    from explorables.ucca import wine_views

    views, rng = wine_views(), np.random.default_rng(0)
    Xw, Yw = whiten(views.X, 3), whiten(views.Y, 3)
    n = Xw.shape[0]
    truth = np.linalg.svd(Xw.T @ Yw / n, compute_uv=False)[0]
    shuffled = np.linalg.svd(Xw.T @ Yw[rng.permutation(n)] / n, compute_uv=False)[0]
    assert truth > 0.7 > shuffled
    u = Xw @ np.linalg.svd(Xw.T @ Yw / n)[0][:, 0]
    means = [u[views.labels == c].mean() for c in range(3)]
    assert max(means) - min(means) > 1.0  # the cultivars sit apart along the first canonical direction


def test_subset_refuses_row_indices_out_of_range_naming_the_parameter():
    views = synthetic_views(10, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(views.subset(np.array([3, 1])).X, views.X[[3, 1]])
    with pytest.raises(ValueError, match=r"rows must hold row indices in \[0, 9\], got 2 to 10"):
        views.subset(np.array([2, 10]))
    with pytest.raises(ValueError, match="rows must hold integers"):
        views.subset(np.array([0.5]))


# --- the ablations of step 2 (issue 50) -------------------------------------------------------------------


def test_faq_off_is_the_best_ranked_start_then_the_alternation_and_never_runs_faq(monkeypatch):
    rng = np.random.default_rng(5)
    views = synthetic_views(60, rng=rng)
    X, Y, _ = unpaired(views, rng)
    Xw, Yw = whiten(X, 3), whiten(Y, 3)
    expected = M.ranked_starts(Xw, Yw, 6, np.random.default_rng(1))[0]

    def no_faq(*args, **kwargs):
        raise AssertionError("FAQ ran with the solver off")

    monkeypatch.setattr(M, "quadratic_assignment", no_faq)
    fit = ucca(X, Y, d=3, n_restarts=6, n_alternations=0, solver="none", reflect=False, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(fit.pairing, expected)  # no alternation, no reflection: the best-ranked start
    fit = ucca(X, Y, d=3, n_restarts=6, n_alternations=5, solver="none", reflect=False, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(fit.pairings[0], expected)  # the alternation starts from it
    # with the reflections (by assignment, no FAQ): the start or a reflection of it, never lower on Σρ²
    fit = ucca(X, Y, d=3, n_restarts=6, n_alternations=0, solver="none", rng=np.random.default_rng(1))
    assert fit.qap_objective >= sum_squared_correlations(Xw, Yw, expected) - 1e-12
    assert all(s <= fit.qap_objective + 1e-12 for p in reflected_pairings(Xw, Yw, fit.pairing)
               for s in [sum_squared_correlations(Xw, Yw, p)])  # fmt: skip
    assert all(b >= a - 1e-12 for a, b in zip(fit.objectives, fit.objectives[1:], strict=False))


def test_faq_off_from_uccas_top_start_equals_redrawing_the_starts():
    # the trial's FAQ-off ablation takes UCCA's best-ranked screened start instead of drawing the starts again
    # from a copy of UCCA's generator: the same pairing and the same fit, without the second screening
    rng = np.random.default_rng(7)
    X, Y, _ = unpaired(synthetic_views(60, rng=rng), rng)
    kw = dict(d=3, n_restarts=6, n_faq=2, n_alternations=3)
    fit = ucca(X, Y, rng=np.random.default_rng(2), **kw)
    Xw, Yw = whiten(X, 3), whiten(Y, 3)
    np.testing.assert_array_equal(fit.top_start, M.ranked_starts(Xw, Yw, 6, np.random.default_rng(2))[0])
    redrawn = ucca(X, Y, solver="none", rng=np.random.default_rng(2), **kw)
    reused = ucca(X, Y, solver="none", top_start=fit.top_start, rng=np.random.default_rng(99), **kw)
    np.testing.assert_array_equal(reused.pairing, redrawn.pairing)
    np.testing.assert_array_equal(reused.fit.x_weights, redrawn.fit.x_weights)
    assert ucca(X, Y, starts="scipy", rng=np.random.default_rng(2), **kw).top_start is None
    with pytest.raises(ValueError, match="top_start is for solver='none'"):
        ucca(X, Y, top_start=fit.top_start, rng=np.random.default_rng(2), **kw)


def test_faq_from_scipys_starts_never_uses_the_rotation_starts(monkeypatch):
    rng = np.random.default_rng(6)
    X, Y, _ = unpaired(synthetic_views(50, rng=rng), rng)
    starts_seen = []
    real_qap = M.quadratic_assignment

    def spy_qap(A, B, method, options):
        starts_seen.append(options["P0"] if isinstance(options["P0"], str) else "matrix")
        return real_qap(A, B, method=method, options=options)

    def no_rotation(*args, **kwargs):
        raise AssertionError("a rotation start was drawn")

    monkeypatch.setattr(M, "quadratic_assignment", spy_qap)
    monkeypatch.setattr(M, "screened_start", no_rotation)
    fit = ucca(X, Y, d=3, n_faq=3, starts="scipy", reflect=False, rng=np.random.default_rng(2))
    assert starts_seen == ["randomized"] * 3
    np.testing.assert_array_equal(np.sort(fit.pairing), np.arange(50))
    with pytest.raises(ValueError, match="starts"):
        ucca(X, Y, d=3, starts="barycenter", rng=np.random.default_rng(2))


def test_the_rotation_pipeline_is_unchanged_by_the_ranked_starts_helper():
    """faq_pairing's first FAQ runs start from ranked_starts' best: the same draws, the same order."""
    rng = np.random.default_rng(7)
    Xw, Yw = _whitened_pair(rng, n=30)
    ranked = M.ranked_starts(Xw, Yw, 5, np.random.default_rng(3))
    scores = [float(np.sum((Xw.T @ Yw[p] / 30) ** 2)) for p in ranked]
    assert scores == sorted(scores, reverse=True)
    _, restarts = faq_pairing(Xw, Yw, n_restarts=5, n_faq=1, reflect=False, rng=np.random.default_rng(3))
    assert restarts[0] >= scores[0] - 1e-12  # FAQ from the best start never ends below it


def test_faq_off_and_ucca_screen_the_same_starts_in_a_trial(monkeypatch):
    """The FAQ-off ablation is paired with UCCA on its starts: UCCA screens them once and the ablation takes the
    best-ranked one (the pairing a second screening from a copy of UCCA's generator would give: the test above)."""
    seen, tops = [], []
    real, real_ucca = M.ranked_starts, E.ucca

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append(np.array(out))
        return out

    def spy_ucca(*args, **kwargs):
        tops.append(kwargs.get("top_start"))
        return real_ucca(*args, **kwargs)

    monkeypatch.setattr(M, "ranked_starts", spy)
    monkeypatch.setattr(E, "ucca", spy_ucca)
    cfg = E.UCCAConfig.preset("smoke", datasets=("clustered",), seeds=(0,), n_random_pairings=2)
    E.trial(cfg, "clustered", 0)
    assert len(seen) == 1  # UCCA's screening only (scipy's starts draw none; FAQ off reuses UCCA's best)
    np.testing.assert_array_equal(tops[1], seen[0][0])  # the FAQ-off call (second) got UCCA's best-ranked start


def test_the_ablation_rows_stand_alone_and_the_entropic_run_says_what_did_not_run():
    """With the entropic solver, FAQ from scipy's starts cannot run: its row is absent, FAQ off keeps its row,
    and the page's sentence says which ran (the page used to crash here)."""
    from explorables.ucca import UCCAConfig, run
    from explorables.ucca.claims import ABLATION_CLAIMS, ablation_sentence, claims

    cfg = UCCAConfig.preset(
        "smoke", datasets=("clustered", "gaussian"), seeds=(0, 1), n_train=30, n_test=30, n_restarts=2, n_faq=1,
        n_alternations=1, n_random_pairings=2, n_identity_checks=2, non_gaussianity_grid=(0.0,), solver="entropic",
    )  # fmt: skip
    results = run(cfg)
    assert results.summary["clustered"]["ucca_scipy_starts"] is None
    texts = [row.claim for row in claims(results)]
    assert ABLATION_CLAIMS["ucca_no_faq"] in texts and ABLATION_CLAIMS["ucca_scipy_starts"] not in texts
    sentence = ablation_sentence(results)
    assert "FAQ from scipy's starts did not run at this scale" in sentence and "FAQ off" in sentence


def test_the_moving_rows_sentence_names_every_row_whose_word_moves():
    from explorables.ucca.claims import moving_rows_sentence

    def row(claim, verdicts, name="", setting="x"):
        return {"kind": "claim", "claim": claim, "name": name, "setting": setting, "verdicts": verdicts,
                "agree": len(set(verdicts)) == 1}  # fmt: skip

    study = {"rows": [row("A", ["yes", "no"]), row("B", ["yes", "yes"]), row("C", ["no", "unclear"], setting="wine: h"),
                      row("C", ["no", "no"], setting="other")]}  # fmt: skip
    text = moving_rows_sentence(study, ["A", "C"], 3)
    assert "2 row(s)" in text and "“A” (yes, no)" in text and "“C (wine: h)” (no, unclear)" in text
    assert "“B”" not in text and "t(2) = 4.30" in text
    assert "reads the same" in moving_rows_sentence({"rows": [row("B", ["yes", "yes"])]}, [], 3)


def test_each_ablation_has_one_row_per_dataset_it_ran_on():
    """benchmarks/ucca_ablation_rule.md: one row per (ablation, dataset), the dataset named first in the setting,
    its verdict from that dataset alone, gated by that dataset's signal gate only."""
    from explorables.ucca import UCCAConfig, run
    from explorables.ucca.claims import ABLATION_CLAIMS, claims
    from explorables.ucca.experiment import DATASET_NAMES

    cfg = UCCAConfig.preset(
        "smoke", datasets=("clustered", "gaussian"), ablation_datasets=("clustered", "gaussian"), seeds=(0, 1),
        n_train=30, n_test=30, n_restarts=2, n_faq=1, n_alternations=1, n_random_pairings=2, n_identity_checks=2,
        non_gaussianity_grid=(0.0,),
    )  # fmt: skip
    rows = claims(run(cfg))
    for m, text in ABLATION_CLAIMS.items():
        mine = [r for r in rows if r.claim == text]
        assert [r.setting.split(";")[0] for r in mine] == [DATASET_NAMES["clustered"], DATASET_NAMES["gaussian"]]
        assert [r.gates for r in mine] == [("signal (clustered)",), ("signal (gaussian)",)]
        assert all(r.measured.startswith("UCCA ") and "ablated" in r.measured for r in mine), m


def test_batch_screened_starts_are_orthogonal_maps_and_ranked_permutations():
    """n_candidates: rotations screened on a batch of rows (orthogonal maps, best first by the batch's Σρ²), the
    best n_restarts screened on the full views; 0 leaves the random starts as they were; fewer than n_restarts is
    refused."""
    rng = np.random.default_rng(11)
    Xw, Yw = _whitened_pair(rng, n=80)
    rotations = M.batch_screened_rotations(Xw, Yw, 20, np.random.default_rng(4))
    assert len(rotations) == 20
    for q in rotations:
        np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-10)
    ranked = M.ranked_starts(Xw, Yw, 5, np.random.default_rng(4), n_candidates=20)
    assert len(ranked) == 5
    assert all(np.array_equal(np.sort(p), np.arange(80)) for p in ranked)
    scores = [float(np.sum((Xw.T @ Yw[p] / 80) ** 2)) for p in ranked]
    assert scores == sorted(scores, reverse=True)
    off = M.ranked_starts(Xw, Yw, 5, np.random.default_rng(4), n_candidates=0)
    for a, b in zip(off, M.ranked_starts(Xw, Yw, 5, np.random.default_rng(4)), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="n_candidates"):
        M.ranked_starts(Xw, Yw, 5, np.random.default_rng(4), n_candidates=3)
    with pytest.raises(ValueError, match="n_candidates"):
        E.UCCAConfig(n_restarts=32, n_candidates=8)
    X, Y, _ = unpaired(synthetic_views(60, rng=rng), rng)
    fit = ucca(X, Y, d=3, n_restarts=4, n_candidates=16, n_faq=2, rng=np.random.default_rng(1))
    assert fit.top_start is not None
