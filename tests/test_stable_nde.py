"""Chapter 08 (stable_nde): solver orders, JVPs, the losses' identities, the alignment claim's direction,
what the truth may reach, stability metrics, resume, verdicts and clear errors.

The chapter contract (JSON summary, determinism, config fields, figures, lab) is in test_contract.py.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from explorables.core.checkpoint import Checkpointer
from explorables.core.threads import one_cpu_thread
from explorables.core.verdicts import drive
from explorables.stable_nde import (
    Config,
    complete_loss,
    cosine_rows,
    energy_drift,
    gradient_cosines,
    headline,
    histogram_distance,
    integrate,
    jacobian_loss,
    kuramoto_sivashinsky,
    lorenz63,
    lyapunov_exponent,
    make_model,
    make_system,
    noise_loss,
    one_step_loss,
    pendulum,
    rollout,
    run,
    sample_windows,
    stack_models,
    train,
    true_jvp,
    unrolled_loss,
)
from explorables.stable_nde import claims as C
from explorables.stable_nde.losses import (
    CHEAP_METHODS,
    Batch,
    directional_derivative,
    heldout_unrolled_error,
    method_loss,
    pairs_from_windows,
    rollout_errors,
)
from explorables.stable_nde.metrics import blow_up_step
from explorables.stable_nde.solvers import _euler_step, _rk4_step
from explorables.stable_nde.solvers import step as solver_step

from .trees import assert_same_tree, without_timings


@pytest.fixture(autouse=True)
def _one_thread():
    with one_cpu_thread():
        yield


def _pendulum_setup(n_members: int = 2, seed: int = 0):
    system = pendulum(dt=0.2)
    data = torch.stack([system.trajectories(6, 30, torch.Generator().manual_seed(seed + s)) for s in range(n_members)])
    model = make_model(system, n_members, width=8, seeds=tuple(range(seed, seed + n_members)), init_gain=1.0)
    return system, data, model


# ---------------------------------------------------------------- solvers


@pytest.mark.parametrize(("solver", "order"), [("euler", 1), ("rk4", 4)])
def test_solvers_converge_at_their_order_on_a_linear_ode(solver, order):
    a = torch.tensor([[-0.1, 1.0], [-1.0, -0.1]], dtype=torch.float64)  # damped rotation
    x0 = torch.tensor([1.0, 0.5], dtype=torch.float64)
    exact = torch.linalg.matrix_exp(2.0 * a) @ x0

    def field(x):
        return x @ a.T

    errors = [(integrate(field, x0, 2.0, n, solver) - exact).norm().item() for n in (40, 80, 160)]
    rates = [math.log2(e1 / e2) for e1, e2 in itertools.pairwise(errors)]
    assert all(abs(r - order) < 0.25 for r in rates), rates


def test_one_steps_on_a_linear_ode_are_their_taylor_polynomials():
    """For x' = lambda x (elementwise), Euler is (1 + h lambda) x and RK4 is sum_{k <= 4} (h lambda)^k / k! x."""
    lam, h = -0.7, 0.3
    x = torch.tensor([[1.0, 0.5], [-0.3, 2.0]], dtype=torch.float64)

    def field(z):
        return lam * z

    assert torch.allclose(_euler_step(field, x, h), (1 + h * lam) * x, rtol=1e-14)
    taylor = sum((h * lam) ** k / math.factorial(k) for k in range(5))
    assert torch.allclose(_rk4_step(field, x, h), taylor * x, rtol=1e-13)


def test_make_system_builds_the_named_system_with_its_arguments():
    assert make_system("pendulum", dt=0.3).dt == 0.3 and make_system("pendulum").dim == 2
    lorenz = make_system("lorenz", dt=0.01)
    assert lorenz.dim == 3 and lorenz.spin_up_steps == lorenz63(dt=0.01).spin_up_steps == 1000
    ks = make_system("ks", n_grid=16, dt=0.5)
    assert ks.dim == 16 and ks.linear_symbol.shape == (9,)
    assert torch.equal(ks.linear_symbol, kuramoto_sivashinsky(16, dt=0.5).linear_symbol)
    with pytest.raises(ValueError, match="name"):
        make_system("duffing")


def test_the_truth_conserves_the_pendulum_energy():
    system = pendulum(dt=0.2)
    x0 = system.trajectories(8, 1, torch.Generator().manual_seed(0))[:, 0]
    traj = rollout(system, x0, 1000)
    h = system.energy(traj)
    assert (h - h[0]).abs().max() < 1e-4


# ---------------------------------------------------------------- JVPs and losses


def test_forward_mode_jvp_equals_central_differences_for_model_and_truth():
    system, data, model = _pendulum_setup()
    x = data[:, :, 3]
    v = torch.randn(x.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    fwd = directional_derivative(model.step, x, v, "forward")[1]
    diff = directional_derivative(model.step, x, v, "difference")[1]
    assert torch.allclose(fwd, diff, rtol=1e-6, atol=1e-8)
    assert torch.allclose(true_jvp(system, x, v, "forward"), true_jvp(system, x, v, "difference"), atol=1e-8)
    # and an independent check: a one-sided difference with a tiny step
    h = 1e-7
    one_sided = (model.step(x + h * v) - model.step(x)) / h
    assert torch.allclose(fwd, one_sided, atol=1e-5)


def test_jacobian_loss_and_its_gradient_agree_between_jvp_modes():
    _, data, model = _pendulum_setup()
    x, y = data[:, :, 3], data[:, :, 4]
    v = 0.1 * torch.randn(x.shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    grads = []
    for mode in ("forward", "difference"):
        model.zero_grad()
        loss = jacobian_loss(model, x, y, v, weight=5.0, jvp_mode=mode)
        loss.backward()
        grads.append(model.member_vectors([p.grad.clone() for p in model.parameters()]))
    assert torch.allclose(grads[0], grads[1], rtol=1e-5, atol=1e-9)


def test_unrolled_loss_with_one_step_equals_the_one_step_loss_and_gradient():
    _, data, model = _pendulum_setup()
    windows = sample_windows(data, 16, 1, torch.Generator().manual_seed(0))
    a = unrolled_loss(model, windows)
    b = one_step_loss(model, windows[:, :, 0], windows[:, :, 1])
    assert torch.equal(a, b)
    ga = torch.autograd.grad(a, list(model.parameters()))
    gb = torch.autograd.grad(b, list(model.parameters()))
    assert all(torch.equal(u, w) for u, w in zip(ga, gb, strict=True))


def test_rollout_shaped_noise_has_the_unrolled_loss_value_and_complete_removes_true_error_growth():
    system, data, model = _pendulum_setup()
    windows = sample_windows(data, 8, 5, torch.Generator().manual_seed(3))
    errors = rollout_errors(model, windows)
    assert torch.equal(errors[:, :, 0], torch.zeros_like(errors[:, :, 0]))
    batch = pairs_from_windows(windows, errors)
    # the pushforward loss evaluates the same squared errors as the unrolled loss (only its gradient is truncated)
    noise = method_loss("noise_rollout", model, batch)
    assert torch.allclose(noise, unrolled_loss(model, windows), rtol=1e-12)
    # the complete loss of the *true* model is ~0 at any perturbation (consistency); clean-target noise's is not
    exact = make_model(system, 2, width=8)
    exact.step = system.true_step  # the truth in the model's place
    x, y = batch.x, batch.y
    delta = 1e-3 * torch.randn(x.shape, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    clean_target = method_loss("noise_rollout", exact, batch.__class__(x, y, delta))
    assert clean_target > 0
    assert complete_loss(exact, x, y, delta) < 1e-4 * clean_target


def test_noise_loss_is_the_one_step_loss_at_the_perturbed_input():
    _, data, model = _pendulum_setup()
    x, y = data[:, :, 3], data[:, :, 4]
    delta = 0.01 * torch.randn(x.shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    assert torch.equal(noise_loss(model, x, y, torch.zeros_like(x)), one_step_loss(model, x, y))
    assert torch.equal(noise_loss(model, x, y, delta), one_step_loss(model, x + delta, y))


def test_stacked_models_step_every_member_as_its_own_model():
    system, data, model = _pendulum_setup()
    other = make_model(system, 3, width=8, seeds=(5, 6, 7))
    stacked = stack_models([model, other])
    assert stacked.n_members == 5
    x = data[:, :, 3]
    x5 = torch.cat([x, x[:1].expand(3, -1, -1)])
    with torch.no_grad():
        expected = torch.cat([model.step(x5[:2]), other.step(x5[2:])])
        assert torch.allclose(stacked.step(x5), expected, rtol=1e-13, atol=1e-15)
    with pytest.raises(ValueError, match="models"):
        stack_models([model, make_model(system, 1, width=4)])


def test_heldout_error_is_the_unrolled_loss_per_member():
    _, data, model = _pendulum_setup()
    windows = sample_windows(data, 8, 5, torch.Generator().manual_seed(6))
    per_member = heldout_unrolled_error(model, windows)
    assert per_member.shape == (2,)
    assert torch.allclose(per_member.sum(), unrolled_loss(model, windows), rtol=1e-12)
    # member 0 alone gives member 0's value
    single = make_model(pendulum(dt=0.2), 1, width=8, seeds=(0,), init_gain=1.0)
    assert torch.allclose(heldout_unrolled_error(single, windows[:1]), per_member[:1], rtol=1e-12)


def test_jacobian_term_does_not_shrink_with_the_noise_scale():
    """The Jacobian-matching probes are unit-size (the term is quadratic in the probe): the loss must not
    depend on ``noise_std``, and its regulariser must equal weight x the mean of |(J_theta - J) v|^2."""
    system, data, model = _pendulum_setup()
    batch = pairs_from_windows(sample_windows(data, 8, 1, torch.Generator().manual_seed(7)))
    values = [
        method_loss("jacobian", model, batch, noise_std=sd, weight=3.0, generator=torch.Generator().manual_seed(8))
        for sd in (0.01, 0.5)
    ]
    assert torch.equal(values[0], values[1])
    onestep = method_loss("one_step", model, batch)
    v = model.scale * torch.randn(batch.x.shape, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    mismatch = directional_derivative(model.step, batch.x, v)[1] - true_jvp(system, batch.x, v, "forward")
    expected = onestep + 3.0 * ((mismatch / model.scale) ** 2).sum(-1).mean(-1).sum()
    assert torch.allclose(values[0], expected, rtol=1e-6)
    assert values[0] - onestep > 1e-2 * onestep  # not negligible next to the one-step loss
    assert isinstance(batch, Batch)


def test_cosines_lie_in_minus_one_one_and_are_exact_on_parallel_vectors():
    a = torch.randn(4, 10, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert torch.allclose(cosine_rows(a, 3 * a), torch.ones(4, dtype=torch.float64))
    assert torch.allclose(cosine_rows(a, -a), -torch.ones(4, dtype=torch.float64))
    assert torch.equal(cosine_rows(torch.zeros_like(a), a), torch.zeros(4, dtype=torch.float64))
    _, data, model = _pendulum_setup()
    windows = sample_windows(data, 8, 4, torch.Generator().manual_seed(0))
    for cos in gradient_cosines(model, windows, generator=torch.Generator().manual_seed(0)).values():
        assert cos.shape == (2,) and bool(((cos >= -1) & (cos <= 1)).all())


def test_the_alignment_averages_distinct_draws_and_one_draw_is_the_earlier_single_draw():
    """ALIGNMENT_DRAWS: the draws are different windows and perturbations, the run's cosine is their mean, and with
    one draw it is, to the bit, the single draw runs made before the averaging (windows from ``seed + 11``,
    perturbations from ``seed + 13``)."""
    from explorables.stable_nde.experiment import (
        ALIGNMENT_DRAW_OFFSET,
        ALIGNMENT_DRAWS,
        _alignment_draws,
        _draw_mean_cosines,
    )

    assert ALIGNMENT_DRAWS > 1
    _, data, model = _pendulum_setup()
    cfg = Config.preset("smoke", n_alignment_windows=8, horizon=4)
    seed = 5
    draws = _alignment_draws(data, cfg, seed)
    assert len(draws) == ALIGNMENT_DRAWS
    assert all(not torch.equal(a, b) for a, b in itertools.combinations(draws, 2))  # independent draws
    (one,) = _alignment_draws(data, cfg, seed, draws=1)
    before = sample_windows(data, 8, 4, torch.Generator().manual_seed(seed + 11))
    assert torch.equal(one, before) and torch.equal(draws[0], before)
    kw = dict(noise_std=cfg.noise_std, weight=cfg.jacobian_weight, jvp_mode=cfg.jvp_mode)
    single = gradient_cosines(model, before, generator=torch.Generator().manual_seed(seed + 13), **kw)
    mean_one = _draw_mean_cosines(model, [one], cfg, seed)
    assert set(mean_one) == set(single)
    assert all(torch.equal(mean_one[m], single[m]) for m in single)
    mean = _draw_mean_cosines(model, draws, cfg, seed)
    each = [
        gradient_cosines(model, w, generator=torch.Generator().manual_seed(seed + 13 + ALIGNMENT_DRAW_OFFSET * d), **kw)
        for d, w in enumerate(draws)
    ]
    for m in single:
        assert torch.allclose(mean[m], sum(c[m] for c in each) / len(each), rtol=0, atol=1e-12)
        assert not torch.equal(each[0][m], each[1][m])  # the draws measure different cosines
    assert any(not torch.equal(mean[m], single[m]) for m in single)  # so the mean is not draw 0


def test_complete_regulariser_aligns_better_with_the_unrolled_gradient_than_one_step():
    """The claimed direction on a seeded Lorenz case (3 members, after 50 one-step Adam steps), with a margin."""
    system = lorenz63(dt=0.02)
    data = torch.stack([system.trajectories(8, 40, torch.Generator().manual_seed(20 + s)) for s in range(3)])
    model = make_model(system, 3, width=16, seeds=(2, 3, 4))
    train(model, data, "one_step", n_steps=50, batch_size=32, horizon=8, data_seed=2)
    windows = sample_windows(data, 32, 8, torch.Generator().manual_seed(2))
    cos = gradient_cosines(model, windows, jvp_mode="difference", generator=torch.Generator().manual_seed(0))
    assert cos["complete"].mean() > cos["one_step"].mean() + 0.1
    assert cos["noise_rollout"].mean() > cos["one_step"].mean() + 0.1


def test_methods_that_claim_not_to_use_the_true_dynamics_never_call_it():
    system, data, _ = _pendulum_setup()
    calls = {"n": 0}
    true_residual = system.true_residual

    def counting(x):
        calls["n"] += 1
        return true_residual(x)

    system.true_residual = counting  # data already generated: from here on, every call is counted
    for method in ("one_step", "unrolled", "noise_iso", "noise_rollout"):
        model = make_model(system, 2, width=8)
        train(model, data, method, n_steps=3, batch_size=8, horizon=4, refresh_every=2)
    assert calls["n"] == 0
    for method in ("jacobian", "complete"):  # these declare that they use the true J(x) v
        train(make_model(system, 2, width=8), data, method, n_steps=1, batch_size=8, horizon=4)
    assert calls["n"] > 0


# ---------------------------------------------------------------- training, metrics, resume


def test_training_resumes_from_a_checkpoint_to_the_same_weights(tmp_path):
    _, data, _ = _pendulum_setup()
    system = pendulum(dt=0.2)
    straight = make_model(system, 2, width=8)
    train(straight, data, "complete", n_steps=12, batch_size=16, horizon=4, refresh_every=5)

    checkpoint = Checkpointer(tmp_path, every_s=0.0)
    first = make_model(system, 2, width=8)
    train(
        first,
        data,
        "complete",
        n_steps=7,
        batch_size=16,
        horizon=4,
        refresh_every=5,
        checkpoint=checkpoint,
        name="loop",
    )
    resumed = make_model(system, 2, width=8)
    train(
        resumed,
        data,
        "complete",
        n_steps=12,
        batch_size=16,
        horizon=4,
        refresh_every=5,
        checkpoint=Checkpointer(tmp_path, resume=True),
        name="loop",
    )
    for a, b in zip(straight.parameters(), resumed.parameters(), strict=True):
        assert torch.equal(a, b)


def test_lyapunov_exponent_of_a_linear_map_and_of_lorenz():
    a = 1.3

    def linear(x):
        return a * x

    lam = lyapunov_exponent(linear, torch.zeros(1, 2, 3, dtype=torch.float64), 50, 0.1)
    assert torch.allclose(lam, torch.full((1, 2), math.log(a) / 0.1, dtype=torch.float64))
    system = lorenz63(dt=0.02)
    x0 = system.trajectories(4, 1, torch.Generator().manual_seed(0))[:, 0]
    est = lyapunov_exponent(
        system, x0, 2000, system.dt, n_transient=100, generator=torch.Generator().manual_seed(0)
    )
    assert 0.6 < float(est.mean()) < 1.2  # the literature value is about 0.906


def test_energy_drift_and_histogram_distance_on_closed_forms():
    system = pendulum()
    traj = torch.zeros(4, 2, 2, dtype=torch.float64)  # (T + 1, rollouts, (q, p)): H = p^2/2 - cos q
    traj[-1, 0, 1] = 1.0  # rollout 0 ends at p = 1: H goes from -1 to -1/2
    traj[2:, 1, 0] = float("inf")  # rollout 1 blows up
    drift = energy_drift(traj, system.energy)
    assert drift[0].item() == pytest.approx(0.5) and math.isnan(drift[1].item())
    # over a window of 3 steps, rollout 0's |ΔH| is 0, 0, 1/2: a mean of 1/6; over 1 step rollout 1 is still finite
    assert energy_drift(traj, system.energy, 3)[0].item() == pytest.approx(1 / 6)
    assert energy_drift(traj, system.energy, 1)[1].item() == pytest.approx(0.0)
    with pytest.raises(ValueError, match="window"):
        energy_drift(traj, system.energy, 4)
    reference = np.linspace(0.0, 1.0, 101)
    assert histogram_distance(reference + 0.25, reference) == pytest.approx(0.25)  # W1 of a shift is its size
    with_blow_ups = np.concatenate([reference + 0.25, [np.nan, np.inf]])
    assert histogram_distance(with_blow_ups, reference) == pytest.approx(0.25)  # non-finite samples left out
    assert math.isnan(histogram_distance(np.full(3, np.nan), reference))  # every rollout blew up


def test_blow_up_step_finds_the_first_escape():
    traj = torch.zeros(6, 3, 2, dtype=torch.float64)
    traj[3:, 1, 0] = 100.0
    traj[2, 2, 1] = float("nan")
    assert blow_up_step(traj, 10.0).tolist() == [6, 3, 2]


def test_a_rollout_that_blows_up_keeps_its_non_finite_states_and_a_step_refuses_them():
    """Issue 53: the one-step methods refuse a non-finite state at the boundary, naming it; inside a rollout (and the
    Lyapunov estimate) of the model or system they run unchecked, so a rollout that blows up returns, and blow_up_step
    marks the escape. Issue 38: the rollout is the boundary (skip_nested), nothing is unwrapped: a bound step method
    is refused with a pointer to pass the model itself, and a function of the reader's runs checked, as its code."""
    from explorables.core.arguments import ArgumentError

    system = pendulum(dt=0.2)
    model = make_model(system, 2, width=8)
    x0 = torch.tensor([[[0.1, 0.0], [1e308, 1e308]]] * 2, dtype=torch.float64)  # row 1 overflows at once
    traj = rollout(model, x0, 5)
    assert bool(torch.isfinite(traj[:, :, 0]).all()) and not bool(torch.isfinite(traj[1:, :, 1]).all())
    first = blow_up_step(traj, system.blow_up_radius)
    assert bool((first[:, 0] == 6).all()) and bool((first[:, 1] <= 1).all())  # row 0 never escapes, row 1 at once
    truth = rollout(system, x0[0], 5)
    assert not bool(torch.isfinite(truth[1:, 1]).all())
    lyap = lyapunov_exponent(model, x0, 3, system.dt)
    assert bool(torch.isfinite(lyap[:, 0]).all()) and bool(torch.isnan(lyap[:, 1]).all())
    x = traj[2, :, :1]  # finite states
    assert model.residual(x).shape == x.shape
    torch.testing.assert_close(system.step_with(model.residual, x), model.step(x), rtol=0, atol=0)  # eq. (nde-step)
    for step in (model.step, model.residual, system.true_step):
        with pytest.raises(ArgumentError, match=r"\bx\b.*finite"):
            step(traj[2])
    with pytest.raises(ArgumentError, match="x"):
        system.step_with(model.residual, traj[2])
    for call in (lambda: rollout(model.step, x0, 5), lambda: lyapunov_exponent(model.step, x0, 3, system.dt)):
        with pytest.raises(ArgumentError, match="dynamics must be the model itself"):
            call()
    true_step = system.true_step
    for call in (lambda: rollout(true_step, x0[0], 5), lambda: lyapunov_exponent(true_step, x0[0], 3, 1)):
        with pytest.raises(ArgumentError, match="dynamics must be the system itself"):
            call()
    with pytest.raises(ArgumentError, match=r"\bx\b.*finite"):  # the reader's function calls the model's step checked
        rollout(lambda x: model.step(x), x0, 5)
    finite = x0[:, :1]  # on finite states the reader's function gives the model's rollout, to the bit
    assert torch.equal(rollout(lambda x: model.step(x), finite, 5), rollout(model, finite, 5))


def test_smoke_run_on_kuramoto_sivashinsky_uses_the_same_code_path():
    cfg = Config.preset(
        "smoke",
        systems=("ks",),
        ks_grid=16,
        ks_dt=0.5,
        n_trajectories=2,
        trajectory_steps=10,
        n_train_steps=4,
        alignment_steps=(0, 4),
        n_rollouts=2,
        rollout_steps=20,
        width=4,
        depth=1,
        seeds=(0, 1),
    )
    results = run(cfg)
    s = results.summary["ks"]
    (line,) = headline(results)
    assert line.startswith("ks: cosine with unrolled at step 0")
    assert set(s["stability"]) >= {"one_step", "complete", "unrolled"}
    assert all(-1 <= c <= 1 for v in s["alignment"]["cosine"].values() for row in v for c in row)


def test_training_data_are_the_truth_plus_observation_noise_of_the_stated_size():
    from explorables.stable_nde.experiment import build_system, make_data

    cfg = Config.preset("smoke", n_trajectories=16, trajectory_steps=40)
    system = build_system(cfg, "lorenz")
    clean = make_data(system, cfg.replace(lorenz_observation_noise=0.0), (3, 4), torch.device("cpu"))
    noisy = make_data(system, cfg, (3, 4), torch.device("cpu"))
    truth = torch.stack([system.trajectories(16, 40, torch.Generator().manual_seed(s)) for s in (3, 4)])
    assert torch.equal(clean, truth)
    sd = ((noisy - clean) / system.scale).std(dim=(0, 1, 2))  # per coordinate, in units of the scale
    assert torch.allclose(sd, torch.full_like(sd, cfg.lorenz_observation_noise), rtol=0.1)
    # the other systems read observation_noise, and Lorenz ignores it
    assert torch.equal(make_data(system, cfg.replace(observation_noise=0.0), (3, 4), torch.device("cpu")), noisy)
    pendulum = build_system(cfg, "pendulum")
    clean_p = make_data(pendulum, cfg.replace(observation_noise=0.0), (3,), torch.device("cpu"))
    noisy_p = make_data(pendulum, cfg.replace(lorenz_observation_noise=0.0), (3,), torch.device("cpu"))
    sd_p = ((noisy_p - clean_p) / pendulum.scale).std(dim=(0, 1, 2))
    assert torch.allclose(sd_p, torch.full_like(sd_p, cfg.observation_noise), rtol=0.1)


def test_every_method_starts_from_the_shared_warm_start():
    from explorables.stable_nde.experiment import _system_part, member_seeds

    cfg = Config.preset("smoke", systems=("pendulum",), pretrain_steps=5, n_train_steps=4, alignment_steps=(0, 4))
    store = Checkpointer(None)  # in memory: the part's entries stay readable
    _system_part(cfg, 0, "pendulum", store, False)
    warm = store.get("pendulum/pretrained")["model"]
    snapshot = store.get("pendulum/trained/one_step")["snapshots"]["0"]  # the one-step run before its first step
    assert all(torch.equal(warm[k], snapshot[k]) for k in warm)
    fresh = make_model(pendulum(dt=cfg.pendulum_dt), len(cfg.seeds), width=cfg.width, seeds=member_seeds(cfg, 0))
    assert any(not torch.equal(v, fresh.state_dict()[k]) for k, v in warm.items())  # it was trained


def test_simulator_targets_train_toward_the_exact_step_from_the_noisy_input():
    """The simulator-access control: its loss is the one-step loss on pairs (x~, Phi(x~)), not on the observed pairs."""
    from explorables.stable_nde.training import _sample_windows

    system, data, _ = _pendulum_setup()
    gen = torch.Generator().manual_seed(9)
    noisy = data + 0.1 * system.scale * torch.randn(data.shape, generator=gen, dtype=data.dtype)
    pairs = pairs_from_windows(_sample_windows(noisy, 16, 1, torch.Generator().manual_seed(0)))  # train's first batch
    model = make_model(system, 2, width=8, init_gain=1.0)
    with torch.no_grad():
        exact = one_step_loss(model, pairs.x, system.true_step(pairs.x)).item() / 2
        observed = one_step_loss(model, pairs.x, pairs.y).item() / 2
    record = train(model, noisy, "one_step", n_steps=1, batch_size=16, horizon=1, data_seed=0, simulator_targets=True)
    assert record.losses[0] == pytest.approx(exact, rel=1e-9)
    assert record.losses[0] != pytest.approx(observed, rel=1e-3)
    with pytest.raises(ValueError, match="simulator_targets"):
        train(model, noisy, "noise_iso", n_steps=1, batch_size=16, horizon=1, simulator_targets=True)


@pytest.mark.parametrize("scale", ["smoke", "book", "paper"])
def test_heldout_and_rollout_draws_are_disjoint_from_the_training_draws(scale):
    from explorables.stable_nde.experiment import draw_seeds

    for base in (0, 1, 2, 3, 4, 100, 104):
        cfg = Config.preset(scale, seed=base)
        for i in range(len(cfg.systems)):
            d = draw_seeds(cfg, i)
            train_draws = set(d["data"]) | set(d["observation_noise"])
            held = set(d["rollout"]) | set(d["heldout"])
            assert not train_draws & held, (scale, base, i)


def test_decay_starts_at_the_full_learning_rate_and_changes_later_steps():
    """Linear decay: step 0 runs at ``lr`` (a one-step run is unchanged), later steps at less (a longer run differs)."""
    system, data, _ = _pendulum_setup()

    def weights(n_steps: int, decay: bool) -> torch.Tensor:
        model = make_model(system, 2, width=8, init_gain=1.0)
        train(model, data, "one_step", n_steps=n_steps, batch_size=16, horizon=1, lr=0.05, decay=decay)
        return model.member_vectors().detach()

    assert torch.equal(weights(1, True), weights(1, False))
    assert not torch.allclose(weights(10, True), weights(10, False))


# ---------------------------------------------------------------- verdicts


UP, FLAT, MID = [0.3, 0.32, 0.31], [0.0, 0.01, -0.01], [0.0, 0.2, 0.1]


def test_alignment_and_lens_verdicts():
    assert C.alignment_verdict({"a": UP, "b": UP}).startswith("yes")
    assert C.alignment_verdict({"a": UP, "b": FLAT}).startswith("partly")
    assert C.alignment_verdict({"a": FLAT, "b": FLAT}).startswith("no")
    assert C.alignment_verdict({"a": MID, "b": FLAT}).startswith("unclear")
    # the margin is judged on the interval: a mean gain of 0.12 whose interval reaches below 0.1 is not a "yes"
    assert C.alignment_verdict({"a": [0.05, 0.2, 0.11]}).startswith("unclear")
    assert C.lens_verdict({"a": UP}, {"a": UP}).startswith("yes")
    assert C.lens_verdict({"a": UP}, {"a": FLAT}).startswith("partly")
    assert "yes: rollout noise, a" in C.lens_verdict({"a": UP}, {"a": FLAT})
    assert C.lens_verdict({"a": FLAT}, {"a": FLAT}).startswith("no")
    assert C.lens_verdict({"a": MID}, {"a": FLAT}).startswith("unclear")
    # isotropic noise is a part of the noise paradigm: when it fails, "yes" falls to "partly", and it is named
    both = C.lens_verdict({"a": UP}, {"a": UP}, isotropic_gains={"a": FLAT})
    assert both.startswith("partly") and "no: isotropic noise, a" in both
    assert C.lens_verdict({"a": UP}, {"a": UP}, isotropic_gains={"a": UP}).startswith("yes")
    with pytest.raises(TypeError, match="isotropic_gains"):
        C.lens_verdict({"a": UP}, {"a": UP}, isotropic_gains=[0.1, 0.2])


def test_the_lens_row_judges_isotropic_noise_and_the_alignment_row_names_what_it_measures():
    res = _fake_results(0.5)
    for n in res.config.systems:  # rollout noise and Jacobian matching align, isotropic noise does not
        cos = res.summary[n]["alignment"]["cosine"]
        cos["noise_rollout"] = cos["jacobian"] = [[0.9, 0.91, 0.89]] * len(res.config.alignment_steps)
    rows = {r.claim: r for r in C.claims(res)}
    lens = rows["Noise injection and Jacobian regularisation both approximate the unrolled gradient"]
    assert lens.outcome == "partly" and "no: isotropic noise, pendulum" in lens.verdict
    assert "isotropic" in lens.setting
    comp = rows[C.ALIGNMENT_CLAIM]
    assert "aligns with the unrolled gradient" in comp.claim and "not whether" in comp.setting


def test_stability_rows_say_whether_any_arm_diverged_and_record_the_like_for_like_arm():
    res = _fake_results(0.5)
    factor = res.config.control_step_factor
    rows = {r.claim if r.kind == "claim" else r.name: r for r in C.claims(res)}
    for n in res.config.systems:
        for name in (*_stability_rows(n, factor), f"stability ({n})"):
            assert "no divergence in any arm" in rows[name].verdict
        one = rows[_stability_rows(n, factor)[0]]
        # Jacobian matching (metric 1.0) beside the complete regulariser (0.5): recorded, read by no verdict
        assert "like-for-like arm, no verdict" in one.measured and "Jacobian matching: blow-up" in one.measured
        assert "complete against it: blow-ups" in one.measured and "metric ratio 0.50" in one.measured
        assert one.outcome == "yes"
    res.summary["lorenz"]["stability"]["jacobian"]["blow_up_fraction"]["per_seed"] = [0.0, 0.25, 0.0]
    rows = {r.claim if r.kind == "claim" else r.name: r for r in C.claims(res)}
    lorenz = rows[_stability_rows("lorenz", factor)[1]].verdict
    assert "divergence in some arm: largest blow-up fraction 0.25, Jacobian matching" in lorenz
    assert "no divergence in any arm" in rows[_stability_rows("pendulum", factor)[1]].verdict
    with pytest.raises(ValueError, match="stab"):
        C._divergence_note({})


def test_stability_verdicts():
    zero, one = [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]
    assert C.system_stability(zero, zero, [0.5, 0.55, 0.5], one)[0] == "yes"  # same blow-ups, half the drift
    assert C.system_stability(zero, [0.5, 0.6, 0.5], one, one)[0] == "yes"  # clearly fewer blow-ups
    assert C.system_stability([0.5, 0.6, 0.5], zero, [0.5, 0.55, 0.5], one)[0] == "no"  # more blow-ups
    assert C.system_stability(zero, zero, [1.0, 1.01, 0.99], one)[0] == "no"  # no gain at all
    assert C.system_stability(zero, zero, [0.3, 1.5, 0.8], one)[0] == "unclear"
    nan = [float("nan")] * 3
    assert C.system_stability(one, one, nan, nan)[0] == "no"  # everything blows up for both: not more stable
    stable, same = (zero, zero, [0.5, 0.55, 0.5], one), (zero, zero, [1.0, 1.01, 0.99], one)
    assert C.stability_claim({"a": stable, "b": stable}).startswith("yes")
    assert C.stability_claim({"a": stable, "b": same}).startswith("partly")
    assert C.stability_claim({"a": same, "b": same}).startswith("no")
    assert "the longer one-step control" in C.stability_claim({"a": same}, against="the longer one-step control")


def test_checks_and_the_reference_gate():
    assert C.expensive_check({"a": 4.0, "b": 3.0}).startswith("pass")
    assert C.expensive_check({"a": 4.0, "b": 1.2}) == "fail: unrolled < 2× one-step on b"
    assert C.cheap_check({"a": 0.4}).startswith("pass") and C.cheap_check({"a": 0.9}).startswith("fail")
    assert C.reference_gate([0.1, 0.2, 0.3], [1.0, 1.0, 1.0]).startswith("pass")
    assert C.reference_gate([0.1, 0.9, 0.3], [1.0, 1.0, 1.0]).startswith("fail")  # every seed must clear it
    assert C.reference_gate([0.1, float("inf"), 0.3], [1.0, 1.0, 1.0]).startswith("fail")
    assert drive(C.CRITERIA) == []


# ---------------------------------------------------------------- clear errors


def test_bad_inputs_give_clear_errors():
    system, data, model = _pendulum_setup()
    f = system.known
    with pytest.raises(ValueError, match="dt"):
        pendulum(dt=0.0)
    with pytest.raises(ValueError, match="t_end"):
        integrate(f, data[0, 0, 0], -1.0, 10)
    with pytest.raises(ValueError, match="dt"):
        solver_step(f, data[0, 0, 0], -0.1)
    with pytest.raises(ValueError, match="solver"):
        integrate(f, data[0, 0, 0], 1.0, 10, "midpoint")
    with pytest.raises(ValueError, match="horizon"):
        sample_windows(data, 4, 31, torch.Generator())
    with pytest.raises(ValueError, match="horizon"):
        unrolled_loss(model, data[:, :, :1])
    with pytest.raises(ValueError, match="windows"):
        unrolled_loss(model, data[0])
    with pytest.raises(ValueError, match="x must have shape"):
        one_step_loss(model, data[0, :, 0], data[0, :, 1])
    with pytest.raises(ValueError, match="delta"):
        complete_loss(model, data[:, :, 0], data[:, :, 1], data[:1, :, 0])
    with pytest.raises(ValueError, match="method"):
        train(model, data, "magic", n_steps=1, batch_size=8, horizon=2)
    with pytest.raises(ValueError, match="batch_size"):
        train(model, data, "one_step", n_steps=1, batch_size=2, horizon=4)
    with pytest.raises(ValueError, match="max_energy"):
        pendulum(max_energy=1.5)
    with pytest.raises(ValueError, match="horizon"):
        Config.preset("smoke", horizon=50)
    with pytest.raises(ValueError, match="alignment_steps"):
        Config.preset("smoke", alignment_steps=(0, 10_000))
    assert np.isfinite(float(one_step_loss(model, data[:, :, 0], data[:, :, 1])))


def _fake_results(unrolled_loss: float, unrolled_metric: float = 0.5, flat_on: tuple[str, ...] = ()):
    """A summary with the keys claims() reads: the unrolled model's held-out loss is ``unrolled_loss`` x one-step's,
    its stability metric ``unrolled_metric`` x one-step's."""
    cfg = Config.preset("smoke")
    methods = C.TRAINED
    per = lambda m: {"per_seed": [m * (1 + 0.01 * i) for i in range(3)], "mean": m, "sd": 0.01}  # noqa: E731
    summary = {}
    for n in cfg.systems:
        key = C.secondary_metric(n)[0]
        stability = {m: {"blow_up_fraction": per(0.0), "heldout_loss": per(1.0), key: per(1.0)} for m in methods}
        stability["unrolled"]["heldout_loss"] = per(unrolled_loss)
        stability["complete"][key] = per(0.5)
        stability["unrolled"][key] = per(1.0 if n in flat_on else unrolled_metric)
        cosine = {m: [[0.5, 0.51, 0.49]] * len(cfg.alignment_steps) for m in CHEAP_METHODS}
        cosine["complete"] = [[0.8, 0.81, 0.79]] * len(cfg.alignment_steps)
        summary[n] = {
            "step_cost_seconds": {m: 0.001 * (4 if m == "unrolled" else 1) for m in methods},
            "stability": stability,
            "alignment": {"cosine": cosine},
        }
    return C.StableNDEResults(cfg, summary, {})


def _stability_rows(system: str, factor: int) -> tuple[str, str, str]:
    """The names of one system's three stability rows: against one-step training, the longer control, and the
    simulator-access control."""
    suffix = C._MEASURE[system] + ")"
    return (
        f"The complete regulariser improves the stability of the learned dynamics ({system}{suffix}",
        f"The complete regulariser is more stable than one-step training with {factor}× the steps ({system}{suffix}",
        f"The complete regulariser is more stable than one-step training on exact simulator targets ({system}{suffix}",
    )


def test_control_rows_read_yes_only_when_the_regulariser_beats_the_control():
    """The control rows are assertions about the complete regulariser: "yes" means it is more stable than the
    control, "no" that the control is at least as stable."""
    res = _fake_results(0.5)
    factor = res.config.control_step_factor
    words = C.verdict_words(res)
    _, longer, sim = _stability_rows("pendulum", factor)
    assert words[longer] == words[sim] == "yes"  # complete 0.5x the controls' metric
    for n in res.config.systems:
        st = res.summary[n]["stability"]
        key = C.secondary_metric(n)[0]
        st[C.SIM_CONTROL][key] = {"per_seed": [0.1, 0.11, 0.1], "mean": 0.1, "sd": 0.01}  # the control wins
    words = C.verdict_words(res)
    assert words[sim] == "no" and words[longer] == "yes"


def test_claims_follow_the_reference_gate():
    good = C.claims(_fake_results(0.5))
    assert [r.kind for r in good].count("check") == 2 and [r.kind for r in good].count("gate") == 4
    words = {r.claim: r.outcome for r in C.apply_gates(good) if r.kind == "claim"}
    for n in ("pendulum", "lorenz"):
        assert words[_stability_rows(n, 2)[0]] == "yes"
    assert words[C.ALIGNMENT_CLAIM] == "yes"
    assert words["Noise injection and Jacobian regularisation both approximate the unrolled gradient"] == "no"
    assert "as it should" in C.reference_sentence(_fake_results(0.5))
    bad = _fake_results(0.95)  # the reference does not fit its own loss: every claim untested
    assert set(C.verdict_words(bad).values()) == {"untested"}
    assert "under-trained" in C.reference_sentence(bad)
    assert "are judged" in C.stability_gate_sentence(_fake_results(0.5))


def test_stability_rows_follow_the_stability_gate():
    """When the rollouts cannot tell unrolled from one-step training, the stability rows read untested, the
    alignment rows keep their verdicts."""
    flat = _fake_results(0.5, unrolled_metric=1.0)
    words = C.verdict_words(flat)
    for n in ("pendulum", "lorenz"):
        for name in _stability_rows(n, flat.config.control_step_factor):
            assert words[name] == "untested"
    assert words[C.ALIGNMENT_CLAIM] == "yes"
    assert "read untested" in C.stability_gate_sentence(flat)


def test_a_failed_stability_gate_leaves_only_its_own_system_untested():
    """Lorenz's rollouts cannot tell unrolled from one-step training, the pendulum's can: only Lorenz's stability
    rows read untested, and the failed gate is named in their verdict."""
    half = _fake_results(0.5, flat_on=("lorenz",))
    rows = {r.claim: r for r in C.apply_gates(C.claims(half))}
    factor = half.config.control_step_factor
    for pend, lor in zip(_stability_rows("pendulum", factor)[:2], _stability_rows("lorenz", factor)[:2], strict=True):
        assert rows[pend].outcome != "untested"
        assert rows[lor].outcome == "untested"
        assert "stability (lorenz)" in rows[lor].verdict
    sentence = C.stability_gate_sentence(half)
    assert "lorenz" in sentence and "on pendulum the gate passes" in sentence
    zero, one = [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]
    assert C.stability_gate(zero, zero, [0.5, 0.55, 0.5], one).startswith("pass")
    assert C.stability_gate(zero, zero, [1.0, 1.01, 0.99], one).startswith("fail")
    assert C.stability_gate(zero, zero, [0.3, 1.5, 0.8], one).startswith("fail")  # unclear is not a pass


def test_lyapunov_sentence_lists_what_the_table_holds():
    res = _fake_results(0.5)
    st = res.summary["lorenz"]["stability"]
    for i, m in enumerate(st):
        st[m]["lyapunov"] = {"per_seed": [0.1 * i] * 3, "mean": 0.1 * i, "sd": 0.0}
    res.summary["lorenz"]["truth"] = {"lyapunov": 0.9}
    text = C.lyapunov_sentence(res)
    labels = [C.LABELS[m] for m in st]
    positions = [text.index(label + " ") for label in labels]
    assert positions == sorted(positions, reverse=True)  # highest exponent first
    assert "truth 0.90" in text
    with pytest.raises(ValueError, match="system"):
        C.lyapunov_sentence(res, "weather")


def _fake_study(results: list) -> dict:
    """A seed study (the layout of :func:`explorables.core.seed_study.run_study`) from fake runs, one per base seed."""
    tables = [C.apply_gates(C.claims(r)) for r in results]
    rows = []
    for i, r in enumerate(tables[0]):
        words = [t[i].outcome for t in tables]
        rows.append({"kind": r.kind, "claim": r.claim, "name": r.name, "setting": r.setting, "verdicts": words,
                     "measured": [t[i].measured for t in tables], "agree": len(set(words)) == 1})  # fmt: skip
    return {"slug": "stable_nde", "seeds": list(range(len(results))), "rows": rows}


def test_study_reading_reads_its_numbers_from_the_study():
    """Every number of the page's seed-study paragraphs comes from the study: change the runs, the text follows."""
    runs = [_with_chaos(_fake_results(0.5, unrolled_metric=u), {}, {}) for u in (0.5, 0.25)]
    study = _fake_study(runs)
    text = C.study_reading(study, runs[0].config.control_step_factor)
    assert set(text) == {"lens", "stability", "lorenz", "lorenz_claims", "heldout"}
    assert text["lorenz_claims"].startswith("On Lorenz the complete regulariser's $W_1(z)$ is ")
    assert "leans" not in text["lorenz_claims"]  # no row reads unclear
    # every arm's held-out loss (the fake runs: unrolled about 0.5, every other arm 1), and what it says of alignment
    assert "On Lorenz it is 0.51 for unrolled models and 1 for one-step models; rollout-shaped noise 1," in (
        text["heldout"])
    assert "the simulator-target control 1." in text["heldout"]
    # rollout-shaped noise aligns like one-step in the fake runs, the complete regulariser better: not the best, so
    # no lesson is drawn, though its loss equals one-step's
    assert "the four cheap losses on no base seed on the pendulum" in text["heldout"]
    assert "(on a log scale) on every base seed on the pendulum" in text["heldout"]
    assert "does not predict" not in text["heldout"]
    # one-step's metric is about twice, then about four times the unrolled model's
    ratios = []
    for r in runs:
        st = r.summary["pendulum"]["stability"]
        one, unr = (float(f"{st[m]['energy_drift']['mean']:.2f}") for m in ("one_step", "unrolled"))
        ratios.append(one / unr)
    assert f"{min(ratios):.1f} to {max(ratios):.1f} times" in text["stability"]
    assert "yes on every base seed" in text["stability"]  # the complete regulariser's rows of the fake runs
    assert "on every base seed" in text["lens"]
    assert "Isotropic noise" in text["lens"] and "aligns almost by construction" in text["lens"]
    # the like-for-like arm: Jacobian matching's metric 1.0, the complete regulariser's 0.5 of it, on each system
    for key, label in (("stability", "first-period energy error"), ("lorenz_claims", "$W_1(z)$")):
        assert f"reaches a {label} of 1.01" in text[key] and "is 0.50 times it" in text[key]
        assert f"wholly at or below {C.STABILITY_RATIO:g} on every base seed (no verdict" in text[key]
    comp = next(r for r in study["rows"] if r["claim"] == C.ALIGNMENT_CLAIM)
    comp["verdicts"][1] = "unclear"  # now mixed over base seeds: the tally follows
    assert "unclear on one base seed" in C.study_reading(study, 2)["lens"]
    # an unclear simulator-target row says which way it leans, from the means (the regulariser's 0.5 against 1)
    sim = next(r for r in study["rows"] if r["claim"].startswith(
        "The complete regulariser is more stable than one-step training on exact simulator targets (lorenz"))
    sim["verdicts"] = ["unclear"] * len(sim["verdicts"])
    leaning = C.study_reading(study, 2)["lorenz_claims"]
    assert "above the control's on no base seed, so the row leans towards yes, for the regulariser" in leaning
    with pytest.raises(ValueError, match="no row"):
        C.study_reading({"rows": []}, 2)


def test_blow_up_and_dissipation_sentences_follow_the_run():
    res = _fake_results(0.5)
    assert "No trained model" in C.blow_up_sentence(res)
    res.summary["lorenz"]["stability"]["jacobian"]["blow_up_fraction"]["per_seed"] = [0.0, 0.25, 0.0]
    assert "0.25" in C.blow_up_sentence(res) and "Jacobian matching" in C.blow_up_sentence(res)
    for st in res.summary["pendulum"]["stability"].values():
        st["energy_lost"] = {"per_seed": [1.0, 1.0, 1.0]}
    assert C.dissipation_sentence(res).startswith("Every rollout")
    res.summary["pendulum"]["stability"]["one_step"]["energy_lost"] = {"per_seed": [0.25, 0.25, 0.25]}
    assert C.dissipation_sentence(res).startswith("Not all") and "one-step 25%" in C.dissipation_sentence(res)
    with pytest.raises(ValueError, match="system"):
        C.dissipation_sentence(res, "lorenz")


def test_trajectories_per_seed_match_one_call_per_seed():
    for system in (pendulum(dt=0.2), lorenz63(dt=0.02)):
        gens = lambda: [torch.Generator().manual_seed(s) for s in (3, 7, 11)]  # noqa: E731
        together = system.trajectories_per_seed(4, 6, gens())
        apart = torch.stack([system.trajectories(4, 6, g) for g in gens()])
        assert together.shape == apart.shape == (3, 4, 7, system.dim)
        torch.testing.assert_close(together, apart, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="generators"):
        pendulum().trajectories_per_seed(4, 6, [])


def test_z_spread_sentence_reads_the_histograms():
    res = _fake_results(0.5)
    edges = np.linspace(0.0, 50.0, 41)
    narrow = np.zeros(40)
    narrow[20] = 1.0 / (edges[21] - edges[20])  # all mass in one bin: sd 0
    wide = np.full(40, 1.0 / 50.0)  # uniform on [0, 50]: mean 25, sd 50 / sqrt(12)
    hist = dict.fromkeys(C.TRAINED, wide)
    hist["unrolled"] = narrow
    res.curves["lorenz"] = {"z_edges": edges, "z_truth": wide, "z_hist": hist}
    text = C.z_spread_sentence(res)
    assert f"truth 25.0 ± {50 / math.sqrt(12):.1f}" in text
    assert f"unrolled (K steps) {0.5 * (edges[20] + edges[21]):.1f} ± 0.0" in text
    with pytest.raises(ValueError, match="system"):
        C.z_spread_sentence(res, "pendulum")


def test_the_committed_study_gives_the_page_its_paragraphs():
    """The page's seed-study paragraphs parse the committed study (its row names match the claims table's)."""
    from explorables.core.seed_study import load_study

    study = load_study("stable_nde")
    text = C.study_reading(study, Config().control_step_factor)
    assert "base seed" in text["lens"] and "base seed" in text["stability"]
    assert {r.claim for r in C.claims(_fake_results(0.5))} <= {r["claim"] for r in study["rows"]} | {
        r.claim for r in C.claims(_fake_results(0.5)) if "2× the steps" in r.claim
    }


def test_a_system_run_in_a_worker_process_gives_the_in_process_numbers():
    cfg = Config.preset(
        "smoke", n_trajectories=4, trajectory_steps=20, pretrain_steps=5, n_train_steps=4, alignment_steps=(0, 4),
        n_rollouts=2, rollout_steps=30, n_lyapunov=2, lyapunov_steps=10, seeds=(0, 1),
    )  # fmt: skip
    alone = run(cfg.replace(processes=1))
    shared = run(cfg.replace(processes=2))
    assert_same_tree(without_timings(alone.summary), without_timings(shared.summary))
    assert_same_tree(without_timings(alone.curves), without_timings(shared.curves))


def test_processes_is_checked():
    with pytest.raises(ValueError, match="processes"):
        Config.preset("smoke", processes=-1).validated()


def test_energy_half_life_on_closed_forms():
    """The first time the energy above rest has halved: at the step it happens, inf when never, NaN when the
    rollout breaks first."""
    from explorables.stable_nde.metrics import energy_half_life

    system = pendulum()
    traj = torch.zeros(4, 3, 2, dtype=torch.float64)  # q = 0: H + 1 = p^2 / 2
    traj[:, 0, 1] = torch.tensor([1.0, 0.9, 0.7, 0.5], dtype=torch.float64)  # 0.5, 0.405, 0.245 (halved), 0.125
    traj[:, 1, 1] = 1.0  # conserves its energy
    traj[:, 2, 1] = 1.0
    traj[1:, 2, 0] = float("nan")  # breaks at step 1, before any halving
    out = energy_half_life(traj, system.energy, -1.0, 0.25)
    assert out[0].item() == pytest.approx(2 * 0.25)
    assert math.isinf(out[1].item()) and math.isnan(out[2].item())
    with pytest.raises(ValueError, match="dt"):
        energy_half_life(traj, system.energy, -1.0, 0.0)


def _with_chaos(res, lyap: dict[str, float], z: dict[str, float], truth=(0.9, 23.5)):
    """Give a fake run's Lorenz models and truth a Lyapunov exponent and a long-run mean of z."""
    st = res.summary["lorenz"]["stability"]
    for m in st:
        st[m]["lyapunov"] = {"per_seed": [lyap.get(m, 0.5)] * 3, "mean": lyap.get(m, 0.5), "sd": 0.0}
        st[m]["z_mean"] = {"per_seed": [z.get(m, 23.0)] * 3, "mean": z.get(m, 23.0), "sd": 0.0}
    res.summary["lorenz"]["truth"] = {"lyapunov": truth[0], "z_mean": truth[1]}
    return res


def test_the_lorenz_gate_records_the_exponents_and_z_means_and_the_page_reads_them():
    """The stability gate's measured text carries each model's exponent and mean z next to the truth's, and the
    page's Lorenz paragraph reads them back from a study of such runs: change the runs, the text follows."""
    runs = [
        _with_chaos(_fake_results(0.5), {"unrolled": 0.3, "one_step": 0.03}, {"unrolled": 21.0, "one_step": 23.9}),
        _with_chaos(_fake_results(0.5), {"unrolled": 0.4, "one_step": 0.09}, {"unrolled": 21.5, "one_step": 24.1}),
    ]
    gate = next(r for r in C.claims(runs[0]) if r.name == "stability (lorenz)")
    assert "largest Lyapunov exponent" in gate.measured and "truth 0.90" in gate.measured
    assert "mean z" in gate.measured and "truth 23.5" in gate.measured
    plain = next(r for r in C.claims(_fake_results(0.5)) if r.name == "stability (lorenz)")
    assert "Lyapunov" not in plain.measured  # a run without the numbers: nothing invented
    text = C.study_reading(_fake_study(runs), runs[0].config.control_step_factor)["lorenz"]
    assert "0.03 to 0.09 for one-step models" in text and "0.30 to 0.40 for unrolled models" in text
    assert "21.0 to 21.5 for unrolled models" in text and "truth's 23.5" in text
    assert "unrolled above one-step on every base seed" in text and "below the truth on every base seed" in text
    assert text.startswith("No rollout of either model blows up")
    runs[1].summary["lorenz"]["stability"]["unrolled"]["blow_up_fraction"]["per_seed"] = [0.25, 0.25, 0.25]
    assert "0.25" in C.study_reading(_fake_study(runs), 2)["lorenz"]


def test_sign_words_follow_the_gains():
    """The lens paragraph's words on the Jacobian gain's sign follow the numbers, every branch."""
    assert C._sign_words([-0.1, -0.2]).startswith("below zero") and "every base seed" in C._sign_words([-0.1, -0.2])
    assert C._sign_words([0.1, 0.2]).startswith("above zero")
    assert C._sign_words([-0.1, 0.2, 0.3]) == "below zero on one of three base seeds, above on the others"


def test_gate_power_sentence_is_the_interval_arithmetic():
    res = _fake_results(0.5)
    st = res.summary["lorenz"]["stability"]
    st["unrolled"]["z_distance"]["per_seed"] = [1.0, 2.0, 1.5]
    st["one_step"]["z_distance"]["per_seed"] = [1.0, 1.0, 1.0]
    logs = [0.0, math.log(2.0), math.log(1.5)]
    from explorables.core.verdicts import interval

    iv = interval(logs)
    text = C.gate_power_sentence(res)
    assert f"standard deviation of {np.std(logs, ddof=1):.2f} over 3 seeds" in text
    assert f"at most {C.STABILITY_RATIO * math.exp(iv.mean - iv.high):.2f}" in text
    assert f"this run: {math.exp(iv.mean):.2f}" in text
    st["unrolled"]["z_distance"]["per_seed"] = [math.nan, 2.0, math.nan]
    assert "fewer than two seeds" in C.gate_power_sentence(res)
    with pytest.raises(ValueError, match="system"):
        C.gate_power_sentence(res, "weather")


def test_half_life_sentence_orders_the_methods_and_says_when_the_cap_was_hit():
    res = _fake_results(0.5)
    res.summary["pendulum"]["dt"] = 0.2
    cap = res.config.rollout_steps * 0.2
    for i, st in enumerate(res.summary["pendulum"]["stability"].values()):
        st["energy_half_life"] = {"per_seed": [1.0 + i] * 3, "mean": 1.0 + i, "sd": 0.0}
    sim = res.summary["pendulum"]["stability"][C.SIM_CONTROL]
    sim["energy_half_life"] = {"per_seed": [cap, cap, 3.0], "mean": (2 * cap + 3) / 3, "sd": 1.0}
    text = C.half_life_sentence(res)
    order = [text.index(C.LABELS[m] + " ") for m in ("one_step", "unrolled", C.SIM_CONTROL)]
    assert order == sorted(order)  # shortest first
    assert "never halved within the rollout on 2 of 3 seeds" in text
    with pytest.raises(ValueError, match="system"):
        C.half_life_sentence(res, "lorenz")


def test_a_run_records_the_numbers_the_page_reads_beside_the_verdicts():
    cfg = Config.preset(
        "smoke", n_trajectories=4, trajectory_steps=20, pretrain_steps=5, n_train_steps=4, alignment_steps=(0, 4),
        n_rollouts=4, rollout_steps=30, n_lyapunov=2, lyapunov_steps=10, seeds=(0, 1), processes=1,
    )  # fmt: skip
    res = run(cfg)
    lor, pend = res.summary["lorenz"], res.summary["pendulum"]
    assert 10.0 < lor["truth"]["z_mean"] < 40.0  # the attractor's z lies around 23.5
    for m in C.TRAINED:
        assert len(lor["stability"][m]["z_mean"]["per_seed"]) == 2
        hl = pend["stability"][m]["energy_half_life"]["per_seed"]
        assert all(0.0 <= v <= cfg.rollout_steps * cfg.pendulum_dt for v in hl)
    assert "The truth conserves" in C.half_life_sentence(res) and "log ratio" in C.gate_power_sentence(res)


def test_the_first_ensemble_of_a_run_with_more_seeds_is_the_run_with_only_its_seeds(monkeypatch):
    """``ENSEMBLE_SIZE`` splits the seeds into consecutive ensembles that train apart: the first one's members get the
    numbers of a run with only those seeds, and the later ones are new members (not copies)."""
    cfg = Config.preset(
        "smoke", systems=("pendulum",), n_trajectories=4, trajectory_steps=20, pretrain_steps=5, n_train_steps=4,
        alignment_steps=(0, 4), n_rollouts=2, rollout_steps=30, seeds=(0, 1), processes=1,
    )  # fmt: skip
    from explorables.stable_nde import experiment

    monkeypatch.setattr(experiment, "ENSEMBLE_SIZE", 2)
    small = run(cfg)
    split = run(cfg.replace(seeds=(0, 1, 2, 3, 4)))
    for m, entry in small.summary["pendulum"]["stability"].items():
        for key in ("heldout_loss", "energy_drift"):
            got = split.summary["pendulum"]["stability"][m][key]["per_seed"]
            assert got[:2] == pytest.approx(entry[key]["per_seed"], rel=1e-9, abs=1e-12), (m, key)
            assert len(got) == 5 and len(set(got)) == 5, (m, key)
    # a step's CPU time is that of every ensemble (three of at most two members here)
    assert all(v > 0 for v in split.summary["pendulum"]["step_cost_seconds"].values())


def test_ensemble_groups_cover_the_seeds_in_order_and_the_size_is_checked():
    from explorables.stable_nde.experiment import ensemble_groups

    assert ensemble_groups(Config.preset("smoke", seeds=(0, 1, 2, 3, 4)), 2) == [(0, 1), (2, 3), (4,)]
    assert ensemble_groups(Config.preset("smoke", seeds=(0, 1, 2)), 5) == [(0, 1, 2)]
    assert ensemble_groups(Config.preset("book")) == [(0, 1, 2, 3, 4), (5, 6, 7, 8, 9)]
    with pytest.raises(ValueError, match="size"):
        ensemble_groups(Config.preset("smoke"), 0)


def test_metric_text_is_the_mean_and_sd_of_the_method_metric():
    from explorables.core.verdicts import fmt_mean_sd
    from explorables.stable_nde.claims import metric_text

    cfg = Config.preset("smoke", seeds=(0, 1, 2))
    values = {"per_seed": [0.1, 0.2, 0.3]}
    entry = {"energy_drift": values, "z_distance": values}
    summary = {n: {"stability": dict.fromkeys(C.TRAINED, entry)} for n in cfg.systems}
    results = C.StableNDEResults(cfg, summary, {})
    assert metric_text(results, "lorenz", "jacobian") == fmt_mean_sd([0.1, 0.2, 0.3], 2)
    with pytest.raises(ValueError, match="system"):
        metric_text(results, "ks", "jacobian")
    with pytest.raises(ValueError, match="method"):
        metric_text(results, "lorenz", "nope")
