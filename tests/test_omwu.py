"""Tests of the OMWU chapter: closed forms, invariants, oracles, the claimed directions, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.special import logsumexp, softmax

from explorables.core.tables import apply_gates
from explorables.core.verdicts import drive
from explorables.omwu import (
    OMWUConfig,
    biased_rock_paper_scissors,
    duality_gap,
    energy,
    fit_linear_rate,
    game_with_equilibrium,
    hard_game,
    hard_game_equilibrium,
    kl_from_log,
    matching_pennies,
    omwu_numpy,
    omwu_step,
    predicted_dissipation,
    random_interior_game,
    rock_paper_scissors,
    simulate,
    solve_nash,
    total_variation,
)
from explorables.omwu.claims import (
    CRITERIA,
    best_iterate_lower_bound_verdict,
    boundary_measured,
    boundary_verdict,
    claims,
    dissipation_size_verdict,
    dissipation_verdict,
    gap_rate_verdict,
    horizon_gate_verdict,
    linear_rate_verdict,
    mwu_gate_verdict,
    rate_scaling_verdict,
    regions_gate_verdict,
    settled_gate_verdict,
)
from explorables.omwu.prior import error_bound_constant_2x2, prior_rate_shape

from .smoke_runs import smoke_run

# --- one step by hand -------------------------------------------------------------------------


def test_first_two_steps_match_hand_computation():
    A = np.array([[2.0, -1.0], [0.5, 1.0]])
    eta = 0.3
    x0, y0 = np.array([0.6, 0.4]), np.array([0.25, 0.75])
    log_x, log_y = omwu_numpy(A, eta, 2, x0, y0)
    # t = 0 -> 1: g_{-1} = g_0, so the step is 2 g_0 - g_0 = g_0 (plain MWU).
    gx0, gy0 = A @ y0, A.T @ x0
    x1 = x0 * np.exp(-eta * gx0)
    x1 /= x1.sum()
    y1 = y0 * np.exp(eta * gy0)
    y1 /= y1.sum()
    np.testing.assert_allclose(np.exp(log_x[1]), x1, rtol=1e-14)
    np.testing.assert_allclose(np.exp(log_y[1]), y1, rtol=1e-14)
    # t = 1 -> 2: the optimistic step 2 g_1 - g_0.
    gx1, gy1 = A @ y1, A.T @ x1
    x2 = x1 * np.exp(-eta * (2 * gx1 - gx0))
    x2 /= x2.sum()
    y2 = y1 * np.exp(eta * (2 * gy1 - gy0))
    y2 /= y2.sum()
    np.testing.assert_allclose(np.exp(log_x[2]), x2, rtol=1e-14)
    np.testing.assert_allclose(np.exp(log_y[2]), y2, rtol=1e-14)


@pytest.mark.parametrize("optimistic", [True, False])
def test_omwu_step_matches_the_update_written_out(optimistic):
    """The function the chapter shows: eq. (omwu-step) (or MWU) in multiplicative form, by hand."""
    A = np.array([[2.0, -1.0], [0.5, 1.0]])
    eta = 0.3
    x1, y1 = np.array([0.6, 0.4]), np.array([0.25, 0.75])
    x0, y0 = np.array([0.3, 0.7]), np.array([0.5, 0.5])  # the previous iterates
    gx0, gy0 = A @ y0, A.T @ x0
    A_t = torch.from_numpy(A[None])
    u, v, gx, gy = omwu_step(
        A_t, A_t.transpose(1, 2), torch.from_numpy(np.log(x1))[None], torch.from_numpy(np.log(y1))[None],
        torch.from_numpy(gx0)[None], torch.from_numpy(gy0)[None], torch.tensor([[eta]], dtype=torch.float64),
        optimistic=optimistic,
    )  # fmt: skip
    gx1, gy1 = A @ y1, A.T @ x1
    np.testing.assert_allclose(gx[0].numpy(), gx1, rtol=1e-14)
    np.testing.assert_allclose(gy[0].numpy(), gy1, rtol=1e-14)
    step_x, step_y = (2 * gx1 - gx0, 2 * gy1 - gy0) if optimistic else (gx1, gy1)
    x2, y2 = x1 * np.exp(-eta * step_x), y1 * np.exp(eta * step_y)
    np.testing.assert_allclose(u[0].exp().numpy(), x2 / x2.sum(), rtol=1e-14)
    np.testing.assert_allclose(v[0].exp().numpy(), y2 / y2.sum(), rtol=1e-14)
    assert abs(float(torch.logsumexp(u[0], 0))) < 1e-15  # stored normalised: u = log x


@pytest.mark.parametrize("method", ["omwu", "mwu"])
def test_numpy_and_batched_torch_agree(method):
    rng = np.random.default_rng(1)
    games = [random_interior_game(3, rng)[0] for _ in range(3)] + [rock_paper_scissors()]
    A = np.stack(games)
    x0 = rng.dirichlet(np.ones(3), size=4)
    y0 = rng.dirichlet(np.ones(3), size=4)
    eta = np.array([0.05, 0.1, 0.2, 0.3])
    traj = simulate(A, eta, 500, x0, y0, method=method)
    for b in range(4):
        log_x, log_y = omwu_numpy(A[b], eta[b], 500, x0[b], y0[b], method=method)
        assert np.abs(traj.log_x[:, b].numpy() - log_x).max() < 1e-12
        assert np.abs(traj.log_y[:, b].numpy() - log_y).max() < 1e-12


def test_one_thread_for_tiny_games_changes_no_bit(monkeypatch):
    """simulate runs tiny games on one torch thread (core.threads.threads_for): two give the same bits."""
    from contextlib import nullcontext

    from explorables.omwu import dynamics

    rng = np.random.default_rng(2)
    A = np.stack([random_interior_game(4, rng)[0] for _ in range(64)])
    one = simulate(A, 0.1, 300)
    before = torch.get_num_threads()
    monkeypatch.setattr(dynamics, "threads_for", lambda *_: nullcontext())
    torch.set_num_threads(2)
    try:
        two = simulate(A, 0.1, 300)
    finally:
        torch.set_num_threads(before)
    assert torch.equal(one.log_x, two.log_x) and torch.equal(one.log_y, two.log_y)


def test_record_every_keeps_first_and_last():
    traj = simulate(matching_pennies(), 0.1, 1003, record_every=100)
    steps = traj.steps.tolist()
    assert steps[0] == 0 and steps[-1] == 1003 and steps[1:-1] == list(range(100, 1001, 100))
    full = simulate(matching_pennies(), 0.1, 1003)
    torch.testing.assert_close(traj.log_x[-1], full.log_x[-1], rtol=0, atol=0)


# --- invariants -------------------------------------------------------------------------------


def test_iterates_stay_on_simplex_and_finite_for_1e5_steps_on_hard_game():
    traj = simulate(hard_game(1e-3), 0.1, 100_000, record_every=7)
    for log_p in (traj.log_x, traj.log_y):
        assert torch.isfinite(log_p).all()
        # normalised logits: logsumexp == 0 means the strategy sums to one exactly
        assert torch.logsumexp(log_p, -1).abs().max() < 1e-12
        assert (log_p <= 1e-15).all()
    # near the boundary: the smallest probability is far below float64's subnormal range
    # yet stays representable through its logarithm
    assert traj.log_x.min() < -50


# --- equilibria -------------------------------------------------------------------------------


def test_equilibrium_of_rock_paper_scissors_is_uniform():
    ne = solve_nash(rock_paper_scissors())
    np.testing.assert_allclose(ne.x, np.full(3, 1 / 3), atol=1e-9)
    np.testing.assert_allclose(ne.y, np.full(3, 1 / 3), atol=1e-9)
    assert abs(ne.value) < 1e-9 and ne.is_interior


def test_equilibrium_of_matching_pennies():
    ne = solve_nash(matching_pennies())
    np.testing.assert_allclose(ne.x, [0.5, 0.5], atol=1e-9)
    np.testing.assert_allclose(ne.y, [0.5, 0.5], atol=1e-9)


@pytest.mark.parametrize("delta", [0.5, 0.1, 1e-3])
def test_lp_recovers_closed_form_of_hard_game(delta):
    ne = solve_nash(hard_game(delta))
    x_star, y_star = hard_game_equilibrium(delta)
    np.testing.assert_allclose(ne.x, x_star, atol=1e-8)
    np.testing.assert_allclose(ne.y, y_star, atol=1e-8)
    # closed form: both best-response payoffs are equalised
    A = hard_game(delta)
    assert np.ptp(A.T @ x_star) < 1e-12 and np.ptp(A @ y_star) < 1e-12


def test_biased_rps_equilibrium_is_proportional_to_1_bias_1():
    ne = solve_nash(biased_rock_paper_scissors(3.0))
    np.testing.assert_allclose(ne.x, np.array([1, 3, 1]) / 5, atol=1e-8)


@pytest.mark.parametrize("seed", range(5))
def test_lp_recovers_chosen_equilibrium_of_double_centred_game(seed):
    rng = np.random.default_rng(seed)
    x_star, y_star = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
    A = game_with_equilibrium(x_star, y_star, rng)
    np.testing.assert_allclose(A @ y_star, 0, atol=1e-12)
    np.testing.assert_allclose(A.T @ x_star, 0, atol=1e-12)
    ne = solve_nash(A)
    np.testing.assert_allclose(ne.x, x_star, atol=1e-7)
    np.testing.assert_allclose(ne.y, y_star, atol=1e-7)


# --- metrics against direct formulas -----------------------------------------------------------


def test_kl_tv_and_gap_match_direct_formulas():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
    assert float(kl_from_log(p, np.log(q))) == pytest.approx(np.sum(p * np.log(p / q)), rel=1e-12)
    assert float(kl_from_log(np.array([1.0, 0.0]), np.log([0.5, 0.5]))) == pytest.approx(np.log(2))
    assert float(total_variation(p, q)) == pytest.approx(0.5 * np.abs(p - q).sum())
    A = rng.standard_normal((4, 3))
    x, y = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(3))
    gap = float(duality_gap(torch.from_numpy(A[None]), torch.from_numpy(x[None]), torch.from_numpy(y[None]))[0])
    assert gap == pytest.approx((A.T @ x).max() - (A @ y).min())
    ne = solve_nash(A)
    assert (
        float(duality_gap(torch.from_numpy(A[None]), torch.from_numpy(ne.x[None]), torch.from_numpy(ne.y[None]))[0])
        < 1e-8
    )


# --- the energy: dissipation and its prediction --------------------------------------------------


def _energy_run(A, x_star, y_star, eta, steps):
    traj = simulate(A, eta, steps)
    E = energy(traj.log_x, traj.log_y, x_star, y_star)[:, 0].numpy()
    pred = predicted_dissipation(traj.A, traj.x[:-1], traj.y[:-1], x_star, y_star, traj.eta)[:, 0].numpy()
    return traj, E, pred


@pytest.mark.parametrize("delta", [0.3, 0.05])
def test_energy_non_increasing_after_first_step_on_hard_game(delta):
    x_star, y_star = hard_game_equilibrium(delta)
    _, E, _ = _energy_run(hard_game(delta), x_star, y_star, 0.05, 5_000)
    assert np.all(np.diff(E[1:]) <= 1e-12)
    assert E[-1] < E[1]


@pytest.mark.parametrize("seed", range(3))
def test_energy_non_increasing_on_random_interior_games(seed):
    A, x_star, y_star = random_interior_game(4, seed)
    _, E, _ = _energy_run(A, x_star, y_star, 0.05, 3_000)
    assert np.all(np.diff(E[1:]) <= 1e-12)


def test_dissipation_matches_second_order_prediction():
    """Median of measured/predicted within 2%, and 90% of steps within 10% (eta = 0.05)."""
    x_star, y_star = hard_game_equilibrium(0.1)
    _, E, pred = _energy_run(hard_game(0.1), x_star, y_star, 0.05, 10_000)
    actual = np.diff(E)[1:]
    ok = (E[1:-1] > 1e-9) & (np.abs(pred[1:]) > 1e-14)
    ratio = actual[ok] / pred[1:][ok]
    assert abs(np.median(ratio) - 1) < 0.02
    assert np.mean(np.abs(ratio - 1) < 0.1) > 0.9


def test_prediction_error_shrinks_like_eta_cubed():
    """The prediction is second order: halving eta should cut the absolute error by ~8x."""
    x_star, y_star = hard_game_equilibrium(0.3)
    errors = []
    for eta in (0.1, 0.05):
        _, E, pred = _energy_run(hard_game(0.3), x_star, y_star, eta, 50)
        errors.append(np.abs(np.diff(E)[1:20] - pred[1:20]).max())
    assert 4 < errors[0] / errors[1] < 16


def test_kl_decays_linearly_on_interior_game():
    A, x_star, y_star = random_interior_game(3, 7)
    traj, E, _ = _energy_run(A, x_star, y_star, 0.1, 20_000)
    rate = fit_linear_rate(E, traj.steps.numpy())
    assert rate > 0
    # linear means log E is close to a straight line in the tail: residuals are small
    tail = slice(len(E) // 2, None)
    t = traj.steps.numpy()[tail]
    resid = np.log(E[tail]) - np.polyval(np.polyfit(t, np.log(E[tail]), 1), t)
    assert np.abs(resid).max() < 0.5


def test_mwu_energy_increases_on_matching_pennies():
    x_star = y_star = np.array([0.5, 0.5])
    traj = simulate(matching_pennies(), 0.1, 1_000, x0=np.array([0.7, 0.3]), method="mwu")
    E = energy(traj.log_x, traj.log_y, x_star, y_star)[:, 0].numpy()
    assert np.all(np.diff(E) > 0)


def test_rate_scales_like_eta_squared_and_delta():
    deltas, etas = [0.4, 0.2, 0.4], [0.1, 0.1, 0.2]
    A = np.stack([hard_game(d) for d in deltas])
    eq = [hard_game_equilibrium(d) for d in deltas]
    traj = simulate(A, np.array(etas), 15_000)
    E = energy(traj.log_x, traj.log_y, np.stack([e[0] for e in eq]), np.stack([e[1] for e in eq])).numpy()
    r = [fit_linear_rate(E[:, b], traj.steps.numpy()) for b in range(3)]
    assert 3.0 < r[2] / r[0] < 5.0  # doubling eta: ~4x
    assert 1.5 < r[0] / r[1] < 2.7  # halving delta: ~2x


# --- the experiment on the smoke preset: the claimed directions ----------------------------------


@pytest.fixture(scope="module")
def smoke_results():
    return smoke_run("omwu")


def test_smoke_run_shows_claimed_directions(smoke_results):
    s = smoke_results.summary
    b = s["bottleneck"]
    assert b["max_energy_increase_after_t1"] <= 1e-12
    assert b["relative_dissipation_near_boundary"] < 0.1 * b["relative_dissipation_away_from_boundary"]
    rates = np.array(b["rate_at_eta"])
    assert np.all(np.diff(rates) < 0)  # smaller delta (later in the list) -> slower
    rows = s["best_iterate"]["rows"]
    assert rows[-1]["worst_best_kl"] > 0.5 * rows[0]["worst_best_kl"]  # KL does not go to zero
    assert rows[-1]["worst_best_gap"] < rows[0]["worst_best_gap"]  # the gap does
    assert s["mwu_vs_omwu"]["mwu"]["energy_end"] > s["mwu_vs_omwu"]["mwu"]["energy_start"]
    assert s["mwu_vs_omwu"]["omwu"]["energy_end"] < s["mwu_vs_omwu"]["omwu"]["energy_start"]


def test_headline_quotes_the_run(smoke_results):
    from explorables.omwu import headline

    lines = headline(smoke_results)
    assert lines and all(isinstance(line, str) and line for line in lines)
    assert f"{smoke_results.summary['random_games']['size']}x" in " ".join(lines)


def test_explorable_has_one_frame_of_five_traces_per_delta(smoke_results):
    from explorables.omwu.figures import explorable_figure, idea_figure

    explorable = explorable_figure(smoke_results)
    n_deltas = len(smoke_results.config.delta_grid)
    assert len(explorable.layout.sliders[0].steps) == n_deltas
    assert len(explorable.data) == 5 * n_deltas
    assert sum(bool(tr.visible) for tr in explorable.data) == 5
    assert len(idea_figure(smoke_results).axes) >= 2


# --- verdicts on constructed numbers --------------------------------------------------------------


def test_criteria_reach_every_branch():
    assert drive(CRITERIA) == []


def test_dissipation_verdicts():
    assert dissipation_verdict(3e-16).startswith("yes")
    assert dissipation_verdict(1e-12).startswith("yes")  # the criterion is inclusive
    assert dissipation_verdict(2e-12).startswith("unclear")  # above round-off, below a resolvable increase
    assert dissipation_verdict(2e-9).startswith("no")
    assert dissipation_verdict(float("nan")).startswith("unclear")
    assert dissipation_size_verdict(1.0).startswith("pass")
    assert dissipation_size_verdict(0.951).startswith("pass")
    assert dissipation_size_verdict(1.05).startswith("fail")
    assert dissipation_size_verdict(float("nan")).startswith("fail")
    assert mwu_gate_verdict(0.1, 0.2).startswith("pass") and mwu_gate_verdict(0.1, 0.19).startswith("fail")


def test_boundary_verdict_gate_and_text():
    assert boundary_verdict(1e-6, 1e-3).startswith("yes")
    assert boundary_verdict(1e-4, 1e-3).startswith("unclear")  # exactly a tenth is not "far smaller"
    assert boundary_verdict(2e-3, 1e-3).startswith("no")  # not smaller at all
    assert boundary_verdict(float("nan"), 1e-3).startswith("unclear")  # no step near the boundary
    assert regions_gate_verdict(1000, 5000).startswith("pass") and regions_gate_verdict(999, 5000).startswith("fail")
    assert "1,000× slower near" in boundary_measured(1e-6, 1e-3)
    assert "slower" not in boundary_measured(0.0, 1e-3)  # no ratio when nothing dissipates near


def test_rate_verdicts():
    assert linear_rate_verdict([1.0, 1.0, 1.0], 0.05, 20_000).startswith("yes")
    assert linear_rate_verdict([1.0, 0.0, 1.0], 0.05, 20_000).startswith("unclear")  # the seeds disagree
    assert linear_rate_verdict([0.0, 0.0, 0.0], 0.05, 20_000).startswith("no")
    assert linear_rate_verdict([0.375, 0.0, 0.25], 0.05, 20_000).startswith("no")
    with pytest.raises(ValueError, match="fraction_linear"):
        linear_rate_verdict([], 0.05, 20_000)
    assert horizon_gate_verdict([0.1, 0.05, 0.13]).startswith("pass")
    assert horizon_gate_verdict([0.1, 0.05, 0.22]).startswith("fail")  # one seed's median game still transient
    assert rate_scaling_verdict(1.0, 2.0).startswith("yes")
    assert rate_scaling_verdict(1.3, 2.0).startswith("no")
    assert rate_scaling_verdict(1.0, 1.7).startswith("no")
    assert rate_scaling_verdict(float("nan"), 2.0).startswith("unclear")
    assert settled_gate_verdict(6).startswith("pass") and settled_gate_verdict(5).startswith("fail")


def test_best_iterate_verdicts():
    assert best_iterate_lower_bound_verdict(1.0, 0.8).startswith("yes")
    assert best_iterate_lower_bound_verdict(0.9, 0.8).startswith("unclear")  # KL must keep more than 90%
    assert best_iterate_lower_bound_verdict(1.0, 0.5).startswith("unclear")
    assert best_iterate_lower_bound_verdict(0.4, 0.3).startswith("no")
    # a gap that decays more slowly than T^-1/2 at these horizons: longer ones could decide
    assert gap_rate_verdict(-0.36, 100, 10_000).startswith("unclear") and "T = 100…10,000" in gap_rate_verdict(
        -0.36, 100, 10_000
    )
    assert gap_rate_verdict(-0.52, 100, 100_000).startswith("yes")
    assert gap_rate_verdict(-0.45, 100, 10_000).startswith("yes")
    assert gap_rate_verdict(-0.05, 100, 10_000).startswith("no")
    assert gap_rate_verdict(-0.1, 100, 10_000).startswith("no")
    with pytest.raises(ValueError, match="gap_exponent"):
        gap_rate_verdict(float("nan"), 100, 10_000)


def test_claims_of_a_run_have_three_kinds_and_a_failed_gate_makes_its_claim_untested(smoke_results):
    rows = claims(smoke_results)
    assert {r.kind for r in rows} == {"check", "gate", "claim"}
    gates = {r.name for r in rows if r.kind == "gate"}
    assert all(set(r.gates) <= gates for r in rows)
    summary = {**smoke_results.summary, "random_games": {**smoke_results.summary["random_games"],
                                                         "energy_ratio_median_per_seed": [0.9, 0.9, 0.9]}}
    short = type(smoke_results)(config=smoke_results.config, summary=summary, curves=smoke_results.curves)
    linear = next(r for r in apply_gates(claims(short)) if r.claim.startswith("Linear last-iterate"))
    assert linear.outcome == "untested" and "'horizon'" in linear.verdict


def test_rate_windows_tell_a_linear_decay_from_a_transient():
    from explorables.omwu.metrics import rate_windows, rates_agree

    t = np.arange(4000, dtype=float)
    linear = np.exp(-1e-3 * t)
    early, late = rate_windows(linear, t)
    assert early == pytest.approx(1e-3) and late == pytest.approx(1e-3) and rates_agree(early, late, 0.05)
    # a sum of two exponentials: the slow one takes over late, so the windows disagree (but both rates > 0)
    transient = np.exp(-3e-3 * t) + 0.05 * np.exp(-2e-4 * t)
    early, late = rate_windows(transient, t)
    assert early > 0 and late > 0 and not rates_agree(early, late, 0.05)
    assert not rates_agree(float("nan"), 1.0, 0.05) and not rates_agree(-1.0, -1.0, 0.05)
    # decay to the float floor early: too few records above it for two windows
    assert np.isnan(rate_windows(np.r_[np.exp(-np.arange(10.0)), np.zeros(100)], np.arange(110.0))[0])
    with pytest.raises(ValueError, match="finite"):
        rate_windows(np.array([1.0, np.nan, 0.5, 0.2]), np.arange(4.0))


def test_sweep_table_marks_transient_rates(smoke_results):
    from explorables.omwu.claims import sweep_table

    b = smoke_results.summary["bottleneck"]
    assert len(b["rate_settled_at_eta"]) == len(b["deltas"])
    text = sweep_table(smoke_results)
    assert text.count("(transient)") == sum(not v for v in b["rate_settled_at_eta"])


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(A=np.array([[np.nan, 1.0], [0.0, 1.0]])), r"\bA must"),
        (dict(A=np.zeros((0, 2))), r"\bA must"),
        (dict(A=np.ones(3)), r"\bA must"),
        (dict(eta=0.0), "eta"),
        (dict(eta=-1.0), "eta"),
        (dict(steps=0), "steps"),
        (dict(x0=np.array([0.7, 0.7])), "x0"),
        (dict(x0=np.array([1.0, 0.0])), "x0"),
        (dict(y0=np.array([0.2, 0.3, 0.5])), "y0"),
        (dict(method="sgd"), "method"),
    ],
)
@pytest.mark.parametrize("impl", ["numpy", "torch"])
def test_bad_input_raises_value_error_naming_parameter(kwargs, name, impl):
    args = dict(A=matching_pennies(), eta=0.1, steps=10, x0=None, y0=None, method="omwu") | kwargs
    fn = omwu_numpy if impl == "numpy" else simulate
    with pytest.raises(ValueError, match=name):
        if impl == "numpy":
            fn(args["A"], args["eta"], args["steps"], args["x0"], args["y0"], args["method"])
        else:
            fn(args["A"], args["eta"], args["steps"], args["x0"], args["y0"], method=args["method"])


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: hard_game(0.0), "delta"),
        (lambda: hard_game(1.5), "delta"),
        (lambda: solve_nash(np.array([[1.0, np.inf]])), "A"),
        (lambda: solve_nash([]), "A"),
        (lambda: game_with_equilibrium(np.array([0.5, 0.6]), np.array([0.5, 0.5])), "x_star"),
        (lambda: OMWUConfig.preset("huge"), "scale"),
        (lambda: simulate(matching_pennies(), 0.1, 10, device="tpu"), "device"),
    ],
)
def test_other_bad_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_reference_helpers_are_consistent():
    """softmax/logsumexp sanity for the oracle: normalised logits reproduce the strategies."""
    log_x, _ = omwu_numpy(rock_paper_scissors(), 0.1, 50, np.array([0.5, 0.3, 0.2]))
    np.testing.assert_allclose(logsumexp(log_x, axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(softmax(log_x[-1]), np.exp(log_x[-1]), atol=1e-15)


def test_metrics_refuse_what_they_used_to_accept_silently():
    """Issue 28: an x* off the simplex, eta <= 0, NaN in a rate fit: a ValueError naming the argument."""
    import numpy as np
    import torch

    from explorables.omwu import metrics as M

    log_x = torch.log(torch.tensor([[0.5, 0.5]], dtype=torch.float64))
    good = torch.tensor([0.5, 0.5], dtype=torch.float64)
    with pytest.raises(ValueError, match="x_star"):
        M.energy(log_x, log_x, torch.tensor([0.9, 0.9], dtype=torch.float64), good)
    with pytest.raises(ValueError, match="y_star"):
        M.energy(log_x, log_x, good, torch.tensor([1.5, -0.5], dtype=torch.float64))
    with pytest.raises(ValueError, match="log_x"):
        M.energy(torch.full((1, 2), float("nan"), dtype=torch.float64), log_x, good, good)
    A = torch.eye(2, dtype=torch.float64)[None]
    x = torch.tensor([[0.5, 0.5]], dtype=torch.float64)
    assert float(M.predicted_dissipation(A, x, x, good, good, 0.1)) <= 0
    for eta in (-0.1, 0.0, float("nan")):
        with pytest.raises(ValueError, match="eta"):
            M.predicted_dissipation(A, x, x, good, good, eta)
    steps = np.arange(10.0)
    values = np.exp(-0.3 * steps)
    assert M.fit_linear_rate(values, steps) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="finite"):
        M.fit_linear_rate(np.where(steps == 7, np.nan, values), steps)
    with pytest.raises(ValueError, match="steps"):
        M.fit_linear_rate(values, steps[:-1])


def test_gap_sentence_follows_the_verdict():
    from explorables.omwu.claims import gap_sentence

    assert '"unclear"' in gap_sentence(-0.36, 100, 10_000) and "10,000" in gap_sentence(-0.36, 100, 10_000)
    assert '"yes"' in gap_sentence(-0.52, 100, 100_000)
    assert '"no"' in gap_sentence(0.1, 100, 10_000)


# --- the earlier bound's game dependence (our reading, explorables.omwu.prior) ----------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_error_bound_constant_is_the_smallest_gap_over_distance(seed):
    """Brute force over directions around z*: gap / ||z - z*||_1 never drops below c and reaches it."""
    rng = np.random.default_rng(seed)
    xs, ys = rng.dirichlet([3, 3]), rng.dirichlet([3, 3])
    A = game_with_equilibrium(xs, ys, rng)
    c = error_bound_constant_2x2(A)
    angles = np.r_[np.linspace(0, 2 * np.pi, 2001), np.arange(4) * np.pi / 2]
    r = 1e-4 * min(xs.min(), ys.min())
    dp, dq = r * np.cos(angles), r * np.sin(angles)
    x = np.stack([xs[0] - dp, xs[1] + dp], axis=-1)[:, None, :]
    y = np.stack([ys[0] - dq, ys[1] + dq], axis=-1)[:, None, :]
    ratio = duality_gap(A[None], x, y)[:, 0].numpy() / (2 * np.abs(dp) + 2 * np.abs(dq))
    assert c > 0
    assert ratio.min() >= c * (1 - 1e-9)
    assert ratio.min() == pytest.approx(c, rel=1e-6)


@pytest.mark.parametrize("delta", [0.4, 0.1, 0.01, 1e-3])
def test_prior_shape_on_hard_game_follows_its_formula(delta):
    """On A_delta: c = delta/2, xi = delta/(1+delta), so eta^2 xi c^2 has log-slope 3 - delta/(1+delta) in delta."""
    A = hard_game(delta)
    assert error_bound_constant_2x2(A) == pytest.approx(delta / 2, rel=1e-9)
    eta = 0.1
    assert prior_rate_shape(A, eta) == pytest.approx(eta**2 * delta / (1 + delta) * delta**2 / 4, rel=1e-6)
    h = 1e-4
    slope = np.log(prior_rate_shape(hard_game(delta * (1 + h)), eta) / prior_rate_shape(A, eta)) / np.log1p(h)
    assert slope == pytest.approx(3 - delta / (1 + delta), abs=1e-3)
    assert prior_rate_shape(A, 2 * eta) == pytest.approx(4 * prior_rate_shape(A, eta), rel=1e-12)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: error_bound_constant_2x2(rock_paper_scissors()), r"\bA must have shape \(2, 2\)"),
        (lambda: error_bound_constant_2x2(np.array([[0.0, 1.0], [1.0, 2.0]])), r"\bA must have an interior"),
        (lambda: prior_rate_shape(hard_game(0.1), 0.0), "eta"),
    ],
)
def test_prior_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_run_sets_the_earlier_bound_beside_the_measured_rate(smoke_results):
    b = smoke_results.summary["bottleneck"]
    deltas = np.array(b["deltas"])
    assert 2.5 < b["prior_exponent_delta"] <= 3.0
    ratio = np.array(b["rate_over_prior_at_eta"])
    assert ratio[np.argmin(deltas)] > ratio[np.argmax(deltas)]  # the earlier shape falls behind as delta shrinks
    # a bound sits below the rates it guarantees: with the largest valid constant no settled run falls under it
    settled = np.array(b["rate_settled_at_eta"])
    assert np.all(ratio[settled] >= 1 - 1e-9)
    np.testing.assert_allclose(
        np.array(b["rate_at_eta"]) / np.array(b["prior_rate_at_eta"]), ratio, rtol=1e-12
    )
    bi = smoke_results.summary["best_iterate"]
    assert bi["smallest_delta"] == pytest.approx(smoke_results.config.worst_case_delta_min)
    assert 0 < bi["smallest_delta_kl_kept"] <= 1 and 0 < bi["smallest_delta_tv_kept"] <= 1
