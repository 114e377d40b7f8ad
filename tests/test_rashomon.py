"""Tests of the Rashomon chapter: closed forms against refits and sampling, invariances, directions, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from explorables.core.tables import apply_gates
from explorables.core.verdicts import drive
from explorables.rashomon import (
    AdditiveBasis,
    drop_feature,
    exact_log_volume,
    fit,
    headline,
    log_volume,
    profile_loss_grid,
    reducibility_cost,
    refit_cost,
    threshold,
    tie_features,
)
from explorables.rashomon import data as D
from explorables.rashomon.claims import (
    CRITERIA,
    ambiguity_check,
    claims,
    closed_form_check,
    contradiction_verdict,
    diversity_headroom_gate,
    diversity_verdict,
    feature_noise_verdict,
    gam_mechanism_verdict,
    headroom_gate,
    headrooms,
    identity_check,
    linear_mechanism_verdict,
    logistic_mechanism_verdict,
    loss_rises,
    noise_check,
    real_data_verdict,
    real_gains,
    relative_level_check,
)
from explorables.rashomon.diversity import (
    ellipsoid_ambiguity,
    ellipsoid_pattern_diversity,
    prediction_diversity,
    rashomon_diversity,
    sample_rashomon,
)
from explorables.rashomon.models import loss_value

from .smoke_runs import smoke_run


@pytest.fixture(scope="module")
def linear_problem():
    X, y = D.linear_data(800, [1.5, -0.7, 0.3], 0.8, seed=1, correlation=0.3)
    return X, y, fit(X, y)


@pytest.fixture(scope="module")
def logistic_problem():
    X, y = D.logistic_data(800, [1.2, 0.6], 0.1, seed=2)
    return X, y, fit(X, y, "logistic", ridge=1e-6)


def test_least_squares_fit_matches_numpy_lstsq(linear_problem):
    X, y, f = linear_problem
    ref, *_ = np.linalg.lstsq(np.c_[np.ones(len(X)), X], y, rcond=None)
    np.testing.assert_allclose(f.beta, ref, atol=1e-10)
    assert f.loss_value == pytest.approx(loss_value(X, y, f.beta, "squared"), rel=1e-12)


def test_logistic_fit_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression

    X, y = D.logistic_data(1000, [1.0, -0.5, 0.25], 0.1, seed=3)
    ours = fit(X, y, "logistic")
    ref = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.w, ref.coef_[0], atol=1e-5)
    assert ours.beta[0] == pytest.approx(ref.intercept_[0], abs=1e-5)


@pytest.mark.parametrize("C", [drop_feature(3, 0), drop_feature(3, 2), tie_features(3, 0, 1), np.eye(3)[:2]])
def test_least_squares_cost_equals_constrained_refit(linear_problem, C):
    X, y, f = linear_problem
    assert reducibility_cost(f, C) == pytest.approx(refit_cost(X, y, f, C), rel=1e-9, abs=1e-12)


def test_least_squares_volume_equals_monte_carlo(linear_problem):
    X, y, f = linear_problem
    mc = exact_log_volume(X, y, f, 0.02, samples=60_000, seed=0)
    assert abs(mc.log_volume - log_volume(f, 0.02)) < 4 * mc.std_error
    # the least-squares set *is* the Laplace ellipsoid: no accepted sample beyond radius 1/enlarge
    assert mc.max_radius <= 1 / mc.enlarge + 1e-9 and not mc.possibly_truncated


def test_logistic_laplace_volume_agrees_with_exact_for_small_theta(logistic_problem):
    X, y, f = logistic_problem
    mc = exact_log_volume(X, y, f, 1e-3, samples=60_000, seed=0)
    assert abs(mc.log_volume - log_volume(f, 1e-3)) < 0.05  # within 5% in volume
    assert not mc.possibly_truncated


def test_logistic_laplace_cost_agrees_with_refit(logistic_problem):
    X, y, f = logistic_problem
    for C in (drop_feature(2, 0), drop_feature(2, 1), tie_features(2, 0, 1)):
        exact, approx = refit_cost(X, y, f, C), reducibility_cost(f, C)
        assert approx == pytest.approx(exact, rel=0.25), (exact, approx)


def test_absolute_volume_is_independent_of_sigma_and_relative_grows():
    X_vols, rel_vols = [], []
    for sigma in (0.2, 1.0, 3.0):
        X, y = D.linear_data(500, [1.0, 0.5], sigma, seed=0)  # the same X for every sigma
        f = fit(X, y)
        X_vols.append(log_volume(f, 0.01))
        rel_vols.append(log_volume(f, threshold(f, 0.05, relative=True)))
    assert np.ptp(X_vols) < 1e-9
    assert np.all(np.diff(rel_vols) > 0)


def test_gam_basis_reproduces_linear_functions_and_constraints_work():
    X, y = D.additive_data(1500, 0.1, seed=0)
    basis = AdditiveBasis(X)
    Z = basis.transform(X)
    f = fit(Z, y, ridge=1e-8)
    # the shape-linear constraint of an already linear shape (f2 = x) costs almost nothing,
    # that of a curved one (f1 = sin) costs a lot; both equal the explicit refit
    cheap, dear = basis.make_linear(1), basis.make_linear(0)
    assert reducibility_cost(f, cheap) < 1e-3 < 0.1 < reducibility_cost(f, dear)
    assert reducibility_cost(f, dear) == pytest.approx(refit_cost(Z, y, f, dear), rel=1e-6)
    # the linear direction really is linear: its shape function is a straight line
    grid = np.linspace(X[:, 2].min(), X[:, 2].max(), 21)  # inside the knots' range
    w = np.zeros(basis.n_coefficients)
    w[basis.groups[2]] = basis.linear[2]
    shape = basis.shape(w, 2, grid)
    np.testing.assert_allclose(np.diff(shape, 2), 0, atol=1e-10)


def test_profile_grid_minimum_matches_fit(logistic_problem):
    X, y, f = logistic_problem
    w1 = np.linspace(f.w[0] - 0.05, f.w[0] + 0.05, 11)
    w2 = np.linspace(f.w[1] - 0.05, f.w[1] + 0.05, 11)
    grid = profile_loss_grid(X, y, "logistic", w1, w2, ridge=1e-6)
    assert grid.min() >= f.loss_value - 1e-9
    assert grid[5, 5] == pytest.approx(f.loss_value, abs=1e-6)


# --- prediction diversity: models drawn from the Rashomon set ---------------------------------------------


def test_samples_lie_inside_the_ellipsoid_and_the_exact_least_squares_set(linear_problem, logistic_problem):
    for _, _, f in (linear_problem, logistic_problem):
        models = sample_rashomon(f, 0.01, 2_000, seed=3)
        delta = models - f.beta
        quad = np.einsum("ki,ij,kj->k", delta, f.hessian, delta)
        assert np.all(quad <= 2 * 0.01 * (1 + 1e-9))
        assert quad.max() > 2 * 0.01 * 0.9  # uniform in the ellipsoid: draws reach near its edge
    X, y, f = linear_problem
    models = sample_rashomon(f, 0.01, 2_000, seed=3)
    assert np.all(loss_value(X, y, models, "squared") <= f.loss_value + 0.01 * (1 + 1e-9))  # exact for least squares


def test_diversity_is_zero_when_the_set_is_a_point(linear_problem, logistic_problem):
    for X, _, f in (linear_problem, logistic_problem):
        models = sample_rashomon(f, 0.0, 50, seed=1)
        np.testing.assert_allclose(models, np.broadcast_to(f.beta, models.shape))
        d = prediction_diversity(f, X, models)
        assert d.spread == pytest.approx(0.0, abs=1e-12) and d.ambiguity == 0.0


def test_least_squares_spread_grows_as_the_square_root_of_the_level(linear_problem):
    X, _, f = linear_problem
    small, big = rashomon_diversity(f, X, 0.01, 300, seed=5), rashomon_diversity(f, X, 0.04, 300, seed=5)
    assert big.spread == pytest.approx(2 * small.spread, rel=1e-10)  # the same draws, stretched by sqrt(4)


def test_ambiguity_cannot_fall_as_the_level_grows(logistic_problem):
    X, _, f = logistic_problem
    values = [rashomon_diversity(f, X, level, 300, seed=2).ambiguity for level in (0.001, 0.004, 0.01, 0.05, 0.2)]
    assert all(a <= b for a, b in itertools.pairwise(values))
    assert values[-1] > values[0]


def test_ambiguity_stays_within_the_ellipsoids_analytic_reach(logistic_problem):
    """A point's label can flip inside the ellipsoid only if |margin| <= sqrt(2 theta x^T H^-1 x)."""
    X, _, f = logistic_problem
    X1 = np.c_[np.ones(len(X)), X]
    reach = np.sqrt(2 * 0.01 * np.einsum("ni,ij,nj->n", X1, np.linalg.inv(f.hessian), X1))
    possible = np.mean(np.abs(X1 @ f.beta) <= reach)
    d = rashomon_diversity(f, X, 0.01, 2_000, seed=4)
    assert d.sampled_ambiguity <= possible
    assert d.ambiguity == pytest.approx(possible, abs=1.5 / len(X))  # the closed form (boundary ties aside)


def test_closed_form_ambiguity_equals_dense_sampling_in_two_dimensions():
    """Brute force on a tiny 2-parameter example (intercept and one weight): draw the ellipse densely, and a point is
    ambiguous when some drawn model flips it. Dense draws reach every flippable point (bar razor-thin margins)."""
    X, y = D.logistic_data(60, [1.0], 0.2, seed=11)
    f = fit(X, y, "logistic")
    level = 0.02
    closed = ellipsoid_ambiguity(f, X, level)
    # the ellipse's boundary, densely (the extreme margins lie on it), and its inside
    t = np.linspace(0, 2 * np.pi, 20_001)
    u = np.c_[np.cos(t), np.sin(t)]
    chol = np.linalg.cholesky(f.hessian)
    boundary = f.beta + np.sqrt(2 * level) * np.linalg.solve(chol.T, u.T).T
    models = np.r_[boundary, sample_rashomon(f, level, 20_000, seed=1)]
    brute = prediction_diversity(f, X, models).sampled_ambiguity
    assert 0.0 < closed < 1.0
    assert brute == pytest.approx(closed, abs=1e-12)


def test_sampled_ambiguity_never_exceeds_the_closed_form_and_approaches_it(logistic_problem):
    X, _, f = logistic_problem
    values = [rashomon_diversity(f, X, 0.01, k, seed=6) for k in (20, 200, 2_000, 20_000)]
    closed = values[0].ambiguity
    assert all(v.ambiguity == closed for v in values)  # the set's own: no draw count in it
    assert all(v.sampled_ambiguity <= closed for v in values)
    assert closed - values[-1].sampled_ambiguity < closed - values[0].sampled_ambiguity
    assert closed - values[-1].sampled_ambiguity <= 0.1 * closed


def test_pattern_diversity_is_the_mean_disagreement_of_distinct_pairs(logistic_problem):
    X, _, f = logistic_problem
    models = sample_rashomon(f, 0.05, 40, seed=9)
    labels = (models[:, :1] + models[:, 1:] @ X.T) > 0
    pairs = [np.mean(labels[i] != labels[j]) for i, j in itertools.combinations(range(len(models)), 2)]
    d = prediction_diversity(f, X, models)
    assert d.pattern_diversity == pytest.approx(np.mean(pairs), rel=1e-12)
    assert d.pattern_diversity <= d.sampled_ambiguity / 2 * len(models) / (len(models) - 1) + 1e-12
    assert prediction_diversity(f, X, models[:1]).pattern_diversity == 0.0  # one model: no pair


def test_pattern_diversity_does_not_grow_with_the_draw_count(logistic_problem):
    """Unlike the sampled ambiguity, the pattern diversity's estimate is unbiased for every draw count: small and
    large draws agree within their sampling error, and it stays at most half the set's closed-form ambiguity."""
    X, _, f = logistic_problem
    small = [rashomon_diversity(f, X, 0.05, 50, seed=s).sampled_pattern for s in range(20)]
    big = rashomon_diversity(f, X, 0.05, 20_000, seed=99)
    assert np.mean(small) == pytest.approx(big.sampled_pattern, abs=4 * np.std(small) / np.sqrt(len(small)) + 1e-3)
    assert big.sampled_pattern <= big.ambiguity / 2 + 1e-3
    assert 0.0 < big.pattern_se < 0.01  # many draws resolve it


def test_closed_form_pattern_diversity_is_what_the_draws_estimate(logistic_problem):
    """The closed form (one ball coordinate's Beta law) is the mean of the draws' unbiased estimates, within their
    sampling error, at several levels; it is the set's own (no draw count), at most half the closed-form ambiguity,
    0 at level 0 (one model) and rises with the level."""
    X, _, f = logistic_problem
    closed = []
    for level in (0.005, 0.05, 0.5):
        d = rashomon_diversity(f, X, level, 20_000, seed=3)
        assert d.pattern_diversity == ellipsoid_pattern_diversity(f, X, level)
        assert abs(d.sampled_pattern - d.pattern_diversity) <= 4 * d.pattern_se
        assert d.pattern_diversity <= d.ambiguity / 2 + 1e-12
        closed.append(d.pattern_diversity)
    assert all(a < b for a, b in itertools.pairwise(closed))
    assert ellipsoid_pattern_diversity(f, X, 0.0) == 0.0


def test_closed_form_pattern_diversity_in_two_dimensions_by_quadrature():
    """Brute force on a 2-parameter example: the share of the ellipse predicting 1 on each point, by a fine grid of the
    unit disc (uniform in the disc is uniform in the ellipse), gives the same mean pairwise disagreement."""
    X, y = D.logistic_data(40, [1.0], 0.2, seed=12)
    f = fit(X, y, "logistic")
    level = 0.05
    g = np.linspace(-1, 1, 801)
    u = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    u = u[np.sum(u**2, axis=1) <= 1]
    models = f.beta + np.sqrt(2 * level) * np.linalg.solve(np.linalg.cholesky(f.hessian).T, u.T).T
    q = ((models[:, :1] + models[:, 1:] @ X.T) > 0).mean(axis=0)
    assert 0.0 < ellipsoid_pattern_diversity(f, X, level)
    assert ellipsoid_pattern_diversity(f, X, level) == pytest.approx(np.mean(2 * q * (1 - q)), abs=2e-3)


def test_least_squares_spread_ignores_the_labels_and_matches_the_closed_form(linear_problem):
    """At a fixed level the least-squares set's shape holds no labels, so neither does the spread of its predictions;
    the mean prediction variance over the training points is 2 theta / (p + 2) * mean x^T H^-1 x = theta p / (p + 2)."""
    X, y, f = linear_problem
    other = fit(X, y[::-1] * 3.0)  # the same design, other labels
    a, b = rashomon_diversity(f, X, 0.01, 400, seed=7), rashomon_diversity(other, X, 0.01, 400, seed=7)
    assert a.spread == pytest.approx(b.spread, rel=1e-9)
    models = sample_rashomon(f, 0.01, 20_000, seed=8)
    margins = models[:, :1] + models[:, 1:] @ X.T
    p = f.n_params
    assert np.mean(np.var(margins, axis=0)) == pytest.approx(0.01 * p / (p + 2), rel=0.05)


def test_smoke_run_diversity(smoke):
    s = smoke.summary
    for kind in ("linear", "gam"):  # the identity over σ, exactly (the same draws at every level)
        assert all(np.ptp(v) < 1e-9 for v in s[kind]["by_seed"]["spread_abs"])
        assert all(a == 0.0 for a in s[kind]["ambiguity_abs"])
    for kind in ("logistic", "gam_logistic"):
        assert all(0.0 <= a <= 1.0 for a in s[kind]["ambiguity_abs"])
        for amb, sampled in zip(s[kind]["by_seed"]["ambiguity_abs"], s[kind]["by_seed"]["ambiguity_sampled"],
                                strict=True):  # fmt: skip
            assert all(b <= a for a, b in zip(amb, sampled, strict=True))
        dc = s[kind]["draw_check"]
        assert dc["sampled"] <= dc["sampled_more"] + 0.02 and dc["sampled_more"] <= dc["closed"]
        assert abs(dc["pattern_sampled_more"] - dc["pattern_closed"]) <= 4 * dc["pattern_se_more"]
    lm = s["linear_mechanism"]
    assert len(lm["by_draw"]["drop w1"]) == smoke.config.mechanism_draws
    assert all(len(v) == len(lm["levels"]) for v in lm["by_draw"]["drop w1"])


# --- the experiment: claimed directions on the smoke preset -----------------------------------------


@pytest.fixture(scope="module")
def smoke():
    return smoke_run("rashomon")


def test_smoke_directions(smoke):
    s = smoke.summary
    assert np.ptp(s["linear"]["log_volume_abs"]) < 1e-9
    assert s["linear"]["log_volume_rel"][-1] > s["linear"]["log_volume_rel"][0]
    assert s["logistic"]["size"][-1] < 0.5 * s["logistic"]["size"][0]  # attenuation
    assert s["logistic"]["log_volume_abs"][-1] < s["logistic"]["log_volume_abs"][0]
    assert s["logistic"]["reachable_abs"][-1] > s["logistic"]["reachable_abs"][0]
    assert s["gam_logistic"]["size"][-1] < s["gam_logistic"]["size"][0]  # flattening


def test_headline_reports_the_run_it_is_given(smoke):
    lines = headline(smoke)
    assert len(lines) == 3 and all(isinstance(line, str) and line for line in lines)
    ex = smoke.summary["exactness"]
    assert f"in {ex['dim']} dims" in lines[2]
    assert f"{ex['linear']['closed_form']:.3f}" in lines[2]


def test_explorable_has_one_frame_per_noise_level(smoke):
    from explorables.rashomon.figures import explorable_figure

    fig = explorable_figure(smoke)
    assert len(fig.layout.sliders[0].steps) == smoke.config.n_view_levels
    # per frame, in each of the two panels: the landscape, the two level sets and the best fit; plus the
    # three simplification lines per panel, in no frame, so visible on every frame
    assert len(fig.data) == 8 * smoke.config.n_view_levels + 6
    shown = [tr for tr in fig.data if tr.visible]
    assert len(shown) == 8 + 6
    assert sum(tr.name in ("w1 = 0", "w2 = 0", "w1 = w2") for tr in shown) == 6


def test_lab_level_only_redraws_and_noise_refits():
    from explorables.rashomon.lab import RashomonLab

    lab = RashomonLab(n=400)
    image, fitted = lab.image.value, lab.fitted
    lab.theta.value = 0.1
    assert lab.image.value != image and "reachable" in lab.status.value
    assert lab.fitted is fitted  # the costs do not depend on the level: no refit
    lab.noise.value = 0.3
    assert lab.fitted is not fitted


# --- verdicts on constructed numbers (Claims kit 3: intervals over seeds) ---------------------------------

UP, FLAT, DOWN = [3.0, 4.0, 3.0, 4.0, 3.0], [0.0] * 5, [-1.0, -2.0, -1.0, -2.0, -1.0]
NOISY, SHRINK = [-2.0, 3.0, 0.0, 2.0, -1.0], [-2.0, -2.2, -2.1, -2.3, -2.0]


def test_every_criterion_reaches_every_branch():
    assert drive(CRITERIA) == []


def test_noise_check_needs_every_seed_of_every_sweep():
    assert noise_check({"logistic": [0.3, 0.2], "linear": [8.0, 9.0]}, 0.01).startswith("pass")
    assert noise_check({"logistic": [0.3, 0.05], "linear": [8.0, 9.0]}, 0.01).startswith("fail: ")
    assert "logistic" in noise_check({"logistic": [0.3, 0.05], "linear": [8.0, 9.0]}, 0.01)
    assert noise_check({"logistic": [0.3, 0.2]}, 0.1).startswith("fail")  # the need scales with theta


def test_headroom_gate_needs_one_simplification_out_of_reach_on_every_seed():
    assert headroom_gate({"a": [1.0, 3.0], "b": [2.0, 2.0]}).startswith("pass")
    assert headroom_gate({"a": [1.0, 0.0], "b": [2.0, 2.0]}).startswith("fail: ")  # one seed has all reachable
    assert "a" in headroom_gate({"a": [1.0, 0.0], "b": [2.0, 2.0]})
    assert relative_level_check([3.0, 4.0, 3.0]).startswith("pass")
    assert relative_level_check([0.0, 0.0, 0.0]).startswith("fail")


def test_checks_pass_and_fail():
    assert identity_check(0.0).startswith("pass") and identity_check(1e-6).startswith("fail")
    assert closed_form_check(1.0, 0.01, False).startswith("pass")
    assert closed_form_check(4.0, 0.01, False).startswith("fail")  # 4 standard errors is too far
    assert closed_form_check(1.0, 0.05, False).startswith("fail")
    assert closed_form_check(1.0, 0.01, True).startswith("fail")  # a truncated sample decides nothing
    assert closed_form_check(float("nan"), 0.01, False).startswith("fail")


def test_contradiction_needs_a_smaller_set_and_more_reachable_on_the_interval():
    assert contradiction_verdict(SHRINK, UP).startswith("yes")
    assert contradiction_verdict(FLAT, UP).startswith("no")  # the volume did not shrink
    assert contradiction_verdict([0.5, 0.6, 0.4], UP).startswith("no")  # it grew
    assert contradiction_verdict(SHRINK, FLAT).startswith("no")  # nothing became reachable
    assert contradiction_verdict(SHRINK, NOISY).startswith("unclear")  # the gain is within seed noise
    assert contradiction_verdict([-2.0], [3.0]).startswith("unclear")  # one seed decides nothing
    assert feature_noise_verdict(SHRINK, UP).startswith("yes")
    assert feature_noise_verdict(SHRINK, [1.0, 0.0, 1.0]).startswith("unclear")  # one seed gained none
    assert feature_noise_verdict([0.5, 0.4, 0.6], UP).startswith("no")


def test_mechanism_verdicts_can_say_every_word():
    # linear: the cost of dropping w1 keeps at least SHRINK_RATIO of its clean value (no attenuation)
    assert linear_mechanism_verdict([1.0, 1.1, 0.98, 1.05]).startswith("yes")
    assert linear_mechanism_verdict([0.2, 0.3, 0.25]).startswith("no")  # costs fell: attenuation did the work
    assert linear_mechanism_verdict([0.5, 1.5, 0.9]).startswith("unclear")
    assert linear_mechanism_verdict([1.0]).startswith("unclear")  # one seed decides nothing
    assert logistic_mechanism_verdict([0.2, 0.3, 0.25], [0.1, 0.05, 0.08]).startswith("yes")
    assert logistic_mechanism_verdict([0.2, 0.3, 0.25], [1.1, 1.12, 1.11]).startswith("no")  # the cost did not fall
    assert logistic_mechanism_verdict([0.95, 0.97, 0.96], [0.1, 0.05, 0.08]).startswith("no")  # |w| barely fell
    assert logistic_mechanism_verdict([0.2, 0.3, 0.25], [0.5, 1.5, 0.9]).startswith("unclear")
    # the landed GAM verdict returned "partly" on both branches: it must be able to say yes, no and unclear
    assert gam_mechanism_verdict(UP, UP).startswith("yes")
    assert gam_mechanism_verdict(DOWN, UP).startswith("partly: more simplifications reachable at a fixed θ")
    assert gam_mechanism_verdict(DOWN, FLAT).startswith("no")
    assert gam_mechanism_verdict(NOISY, FLAT).startswith("unclear")


def test_diversity_verdict_needs_a_smaller_set_and_more_pattern_diversity_per_sweep():
    more, noisy = [0.2, 0.25, 0.22, 0.24, 0.2], [-0.2, 0.3, 0.0, 0.2, -0.1]
    assert diversity_verdict({"a": SHRINK, "b": SHRINK}, {"a": more, "b": more}).startswith("yes")
    assert diversity_verdict({"a": SHRINK, "b": FLAT}, {"a": more, "b": more}).startswith("partly")
    assert diversity_verdict({"a": FLAT, "b": SHRINK}, {"a": more, "b": FLAT}).startswith("no")
    assert diversity_verdict({"a": SHRINK, "b": SHRINK}, {"a": noisy, "b": noisy}).startswith("unclear")
    assert diversity_verdict({"a": SHRINK}, {"a": [0.01, 0.02, 0.015, 0.01]}).startswith("no")  # below the gain
    assert diversity_headroom_gate({"a": [0.05, 0.07]}).startswith("pass")
    assert diversity_headroom_gate({"a": [0.05, 0.49]}).startswith("fail: ")  # no room
    assert ambiguity_check([0.2], [0.3], [0.1], [0.02], [1.0, -2.0]).startswith("pass")
    assert "standard errors" in ambiguity_check([0.2], [0.3], [0.1], [0.02], [1.0, 4.5])  # draws off the closed form
    assert ambiguity_check([0.2, 0.3], [0.3, 0.3], [0.1], [0.02]).startswith("pass")
    assert ambiguity_check([0.2, 0.35], [0.3, 0.3], [0.1], [0.02]).startswith("fail")  # draws beyond the set
    assert ambiguity_check([0.2, 0.3], [0.3, 0.3], [0.1], [-0.01]).startswith("fail")  # more draws pass the set
    assert ambiguity_check([0.2, 0.3], [0.3, 0.3], [0.1], [0.15]).startswith("fail")  # more draws got further
    assert identity_check(0.0, "prediction spread").startswith("pass")
    assert "prediction spread" in identity_check(1e-3, "prediction spread")


def test_real_data_verdict_is_judged_at_the_fixed_level_per_set():
    assert real_data_verdict({"a": UP, "b": UP}).startswith("yes")
    assert real_data_verdict({"a": UP, "b": DOWN}).startswith("partly")
    assert real_data_verdict({"a": FLAT, "b": DOWN}).startswith("no")  # behind everywhere: no, never partly
    assert real_data_verdict({"a": NOISY, "b": DOWN}).startswith("unclear")


def test_claims_of_the_smoke_run_have_gates_checks_and_claims(smoke):
    rows = apply_gates(claims(smoke))
    kinds = [r.kind for r in rows]
    assert kinds.count("gate") == 5 and kinds.count("check") == 6
    gates = {r.name for r in rows if r.kind == "gate"}
    assert all(set(r.gates) <= gates for r in rows if r.kind == "claim")
    assert all(r.gates for r in rows if r.kind == "claim" and not r.claim.startswith(("Logistic models", "Linear")))
    rooms = headrooms(smoke)
    assert set(rooms["real data"]) == set(smoke.summary["real"]) and set(rooms["GAMs"]) == {"gam", "gam_logistic"}
    assert all(0 <= h <= total for sweeps in rooms.values() for total, hs in sweeps.values() for h in hs)
    rises = loss_rises(smoke)
    assert set(rises) >= {"linear", "logistic", "gam", "gam_logistic", "feature_noise", *smoke.summary["real"]}
    assert all(len(r) == len(smoke.config.seeds) for name, r in rises.items() if name != "feature_noise")
    assert len(rises["feature_noise"]) == smoke.config.feature_noise_draws  # its own, cheaper draws
    gains = real_gains(smoke)
    assert set(gains) == set(smoke.summary["real"])


# --- bad input -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: fit(np.ones((5, 2)), np.ones(4)), "y must have shape"),
        (lambda: fit(np.array([[np.nan, 1.0]]), np.ones(1)), "finite"),
        (lambda: fit(np.ones((5, 2)), np.ones(5), "hinge"), "loss"),
        (lambda: fit(np.ones((5, 2)), np.full(5, 2.0), "logistic"), "labels 0 and 1"),
        (lambda: fit(np.c_[np.arange(5.0), np.arange(5.0)], np.arange(5.0)), "singular"),
        (lambda: fit(np.ones((5, 2)), np.ones(5), ridge=-1), "ridge"),
        (lambda: threshold(fit(*D.linear_data(20, [1, 1], 1.0)), 0.0), "theta"),
        (lambda: reducibility_cost(fit(*D.linear_data(20, [1, 1], 1.0)), np.ones((1, 3))), "columns"),
        (lambda: D.logistic_data(10, [1.0], 0.7), "flip_rate"),
        (lambda: D.real_data("iris"), "name"),
        (lambda: tie_features(3, 1, 1), "two different features"),
        (lambda: sample_rashomon(fit(*D.linear_data(20, [1, 1], 1.0)), -0.1), "level"),
        (lambda: sample_rashomon(fit(*D.linear_data(20, [1, 1], 1.0)), float("nan")), "level"),
        (lambda: sample_rashomon(fit(*D.linear_data(20, [1, 1], 1.0)), 0.01, 0), "n_models"),
        (lambda: prediction_diversity(fit(*D.linear_data(20, [1, 1], 1.0)), np.ones((4, 3)), np.ones((2, 3))), "X"),
        (lambda: prediction_diversity(fit(*D.linear_data(20, [1, 1], 1.0)), np.ones((4, 2)), np.ones((2, 4))), "mode"),
        (lambda: drop_feature(2, 5), "j must be an integer"),
        (lambda: profile_loss_grid(np.ones((3, 2)), np.ones(3), "hinge", np.zeros(2), np.zeros(2)), "loss"),
        (lambda: D.additive_logistic_data(10, 0.7), "flip_rate"),
        (
            lambda: exact_log_volume(
                *D.linear_data(20, [1, 1], 1.0), fit(*D.linear_data(20, [1, 1], 1.0)), 0.01, batch=0
            ),
            "batch",
        ),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_separable_data_is_caught_or_regularised():
    X = np.r_[np.linspace(-2, -1, 20), np.linspace(1, 2, 20)][:, None]
    y = (X[:, 0] > 0).astype(float)
    with pytest.raises(ValueError, match="separable"):
        fit(X, y, "logistic")
    f = fit(X, y, "logistic", ridge=1e-3)  # documented remedy: finite, no NaN
    assert np.all(np.isfinite(f.beta)) and np.isfinite(log_volume(f, 0.01))


def test_feature_noise_moves_the_linear_volume_that_target_noise_cannot(smoke):
    """Issue 28: the target-noise volume is an identity; noise on the features grows X^T X / n, so the
    fixed-theta volume falls on every seed while the estimate attenuates."""
    fn = smoke.summary["feature_noise"]
    assert np.ptp(smoke.summary["linear"]["log_volume_abs"]) < 1e-9
    for volume in fn["by_seed"]["log_volume_abs"]:
        assert volume[-1] < volume[0] - 1.0
    assert fn["size"][-1] < 0.5 * fn["size"][0]
