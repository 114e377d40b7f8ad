"""Chapter 15 (Jeffrey guidance): the rule, the guidance potentials, the sampler, metrics, data, verdicts.

The chapter contract (JSON summary, determinism, config validation, figures, lab) is in test_contract.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import torch
from PIL import Image

from explorables.core.checkpoint import Checkpointer
from explorables.core.datasets import write_cifar
from explorables.jeffrey import claims as C
from explorables.jeffrey import diffusion as D
from explorables.jeffrey import images as I
from explorables.jeffrey import toy as Y
from explorables.jeffrey.experiment import (
    JeffreyConfig,
    JeffreyResults,
    headline,
    mutual_information,
    run,
    supported_target,
)
from explorables.jeffrey.metrics import cell_frequencies, conditional_mmd2, frechet_distance, mmd2
from explorables.jeffrey.rule import (
    check_target,
    classifier_guidance_marginal_with,
    flip_confusion,
    independent_target,
    jeffrey_marginal_with,
    jeffrey_update,
    jeffrey_weights,
    kl_divergence,
    tv_distance,
)

RNG = np.random.default_rng(0)


def random_joint(n_x: int, n_s: int, rng=RNG) -> np.ndarray:
    return rng.dirichlet(np.ones(n_x * n_s)).reshape(n_x, n_s)


# ------------------------------------------------------------------------------ Jeffrey's rule
@pytest.mark.parametrize("shape", [(2, 3), (5, 2), (4, 4)])
def test_update_keeps_conditionals_exactly_and_hits_the_target(shape):
    for _ in range(20):
        p = random_joint(*shape)
        q = RNG.dirichlet(np.ones(shape[1]))
        r = jeffrey_update(p, q)
        np.testing.assert_allclose(r.sum(0), q, atol=1e-12)
        np.testing.assert_allclose(r / r.sum(0), p / p.sum(0), atol=1e-12)


def test_update_is_the_kl_minimiser_with_that_marginal():
    """Minimise KL(r || p) (and KL(p || r)) over tables with s-marginal q numerically: Jeffrey's table wins."""
    p = random_joint(3, 3, np.random.default_rng(1))
    q = np.array([0.6, 0.3, 0.1])
    r_star = jeffrey_update(p, q)

    def table(theta: np.ndarray) -> np.ndarray:  # r(x | s) by a softmax per column, times q(s)
        logits = theta.reshape(3, 3)
        cond = np.exp(logits - logits.max(0)) / np.exp(logits - logits.max(0)).sum(0)
        return cond * q[None, :]

    for objective in (lambda th: kl_divergence(table(th), p), lambda th: kl_divergence(p, table(th))):
        best = min(
            (
                scipy.optimize.minimize(objective, np.random.default_rng(k).normal(size=9), method="BFGS")
                for k in range(5)
            ),
            key=lambda res: res.fun,
        )
        assert objective(np.log(r_star / q[None, :]).ravel()) <= best.fun + 1e-7
        np.testing.assert_allclose(table(best.x), r_star, atol=1e-3)


def test_marginal_with_a_confused_classifier_matches_reweighting_by_its_outputs():
    """Oracle: reweight samples by h(x) = sum_s' c(s' | x) w(s') with random classifier outputs; the weighted
    cell marginal is p(s)(Mw)(s)/Z with M the mean output per cell; M = I gives q, equal rows give p."""
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
    cells = rng.choice(4, size=20_000, p=p)
    outputs = rng.dirichlet(np.ones(4) * 0.5, size=len(cells))
    outputs[np.arange(len(cells)), cells] += 2.0
    outputs /= outputs.sum(1, keepdims=True)
    p_hat = np.bincount(cells, minlength=4) / len(cells)
    m = np.stack([outputs[cells == s].mean(0) for s in range(4)])
    h = outputs @ jeffrey_weights(q, p_hat)
    weighted = np.bincount(cells, weights=h, minlength=4) / h.sum()
    np.testing.assert_allclose(jeffrey_marginal_with(p_hat, q, m), weighted, atol=1e-12)
    np.testing.assert_allclose(jeffrey_marginal_with(p, q, np.eye(4)), q, atol=1e-12)
    np.testing.assert_allclose(jeffrey_marginal_with(p, q, np.full((4, 4), 0.25)), p, atol=1e-12)
    between = tv_distance(jeffrey_marginal_with(p, q, flip_confusion(4, 0.3)), q)
    assert 0 < between < tv_distance(p, q)  # part of the way
    with pytest.raises(ValueError, match="confusion"):
        jeffrey_marginal_with(p, q, np.eye(3))
    with pytest.raises(ValueError, match="confusion"):
        jeffrey_marginal_with(p, q, np.full((4, 4), 0.3))
    with pytest.raises(ValueError, match="rate"):
        flip_confusion(4, 1.5)


def test_classifier_guidance_with_noisy_labels_matches_simulation():
    """Oracle: draw s ~ p and a label s' ~ M[s]; classifier guidance with y ~ q samples p(x | label y)."""
    rng = np.random.default_rng(4)
    p, q, m = rng.dirichlet(np.ones(3) * 2), rng.dirichlet(np.ones(3) * 2), flip_confusion(3, 0.25)
    cells = rng.choice(3, size=200_000, p=p)
    noisy = np.array([rng.choice(3, p=m[s]) for s in cells[:20_000]])
    cells = cells[:20_000]
    sim = sum(q[y] * np.bincount(cells[noisy == y], minlength=3) / np.sum(noisy == y) for y in range(3))
    np.testing.assert_allclose(classifier_guidance_marginal_with(p, q, m), sim, atol=0.02)
    np.testing.assert_allclose(classifier_guidance_marginal_with(p, q, np.eye(3)), q, atol=1e-12)


def test_flipped_labels_and_soft_confusion():
    from explorables.jeffrey.experiment import flip_labels, soft_confusion

    labels = torch.randint(4, (40_000,), generator=torch.Generator().manual_seed(0))
    noisy = flip_labels(labels, 0.3, 4, torch.Generator().manual_seed(1))
    counts = np.zeros((4, 4))
    np.add.at(counts, (labels.numpy(), noisy.numpy()), 1)
    np.testing.assert_allclose(counts / counts.sum(1, keepdims=True), flip_confusion(4, 0.3), atol=0.015)
    with pytest.raises(ValueError, match="rate"):
        flip_labels(labels, -0.1, 4, torch.Generator())

    class Fixed(torch.nn.Module):  # logits depend on the first coordinate's sign only
        def forward(self, x, t):
            assert bool((t == 0).all())
            return torch.stack([x[:, 0] > 0, x[:, 0] <= 0, x[:, 0] != x[:, 0]], 1).float() * 2.0

    x = torch.randn(1000, 2, generator=torch.Generator().manual_seed(2))
    m = soft_confusion(Fixed(), x, torch.zeros(1000, dtype=torch.long), 3)
    share = float((x[:, 0] > 0).float().mean())
    hi, lo = np.exp(2) / (np.exp(2) + 2), 1 / (np.exp(2) + 2)
    np.testing.assert_allclose(m[0], [share * hi + (1 - share) * lo, share * lo + (1 - share) * hi, lo], atol=1e-6)
    np.testing.assert_allclose(m[1:], np.eye(3)[1:])  # empty cells: a perfect row


def test_pixel_pca_is_fitted_without_labels_and_centres_the_training_images():
    import inspect

    x = torch.randn(300, 1, 4, 4, generator=torch.Generator().manual_seed(0)) * torch.linspace(0.1, 2, 16).view(
        1, 1, 4, 4
    )
    pca = I.PixelPCA.fit(x, 5)
    e = pca(x)
    assert e.shape == (300, 5) and np.allclose(e.mean(0), 0, atol=1e-9)
    np.testing.assert_allclose(pca.components @ pca.components.T, np.eye(5), atol=1e-9)
    assert np.all(np.diff(e.var(0)) <= 1e-9)  # ordered by variance
    assert set(inspect.signature(I.PixelPCA.fit).parameters) == {"images", "n_components", "seed"}  # no labels
    back = I.PixelPCA.from_state(pca.state())
    np.testing.assert_allclose(back(x), e)


def test_weights_are_the_likelihood_ratio_and_independence_target_has_the_marginals():
    p = random_joint(2, 3)
    q = np.array([0.2, 0.5, 0.3])
    np.testing.assert_allclose(jeffrey_weights(q, p.sum(0)), q / p.sum(0))
    ind = independent_target(p)
    np.testing.assert_allclose(ind.sum(1), p.sum(1))
    np.testing.assert_allclose(ind.sum(0), p.sum(0))
    assert mutual_information(ind) == pytest.approx(0.0, abs=1e-12)
    assert mutual_information(p) > 0


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ([0.5, 0.6, -0.1], "entries >= 0"),
        ([0.5, 0.2, 0.2], "sum to 1"),
        ([0.5, np.nan, 0.5], "finite"),
        ([0.5, 0.5], "shape"),
        ([0.2, 0.3, 0.5], "where the model's marginal is 0"),
    ],
)
def test_bad_targets_are_refused_with_a_clear_error(target, message):
    marginal = np.array([0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match="target") as err:
        check_target(target, marginal)
    assert message in str(err.value)
    with pytest.raises(ValueError):
        jeffrey_update(np.array([[0.25, 0.25, 0.0], [0.25, 0.25, 0.0]]), target)


def test_zero_target_on_an_empty_cell_is_fine_and_supported_target_removes_unreachable_mass():
    np.testing.assert_allclose(jeffrey_weights([0.5, 0.5, 0.0], [0.25, 0.75, 0.0]), [2.0, 2 / 3, 0.0])
    np.testing.assert_allclose(supported_target(np.array([0.2, 0.3, 0.5]), np.array([0.5, 0.5, 0.0])), [0.4, 0.6, 0.0])


# ------------------------------------------------------------------------------ guidance potentials
def test_jeffrey_log_h_matches_the_definition_and_vanishes_for_unit_weights():
    logits = torch.randn(7, 4, dtype=torch.float64)
    w = torch.tensor([0.5, 2.0, 0.0, 1.5], dtype=torch.float64)
    with np.errstate(divide="ignore"):
        log_w = torch.log(w)
    brute = torch.log((torch.softmax(logits, -1) * w).sum(-1))
    torch.testing.assert_close(D.jeffrey_log_h(logits, log_w), brute)
    torch.testing.assert_close(
        D.jeffrey_log_h(logits, torch.zeros(4, dtype=torch.float64)), torch.zeros(7, dtype=torch.float64)
    )
    labels = torch.tensor([0, 1, 2, 3, 0, 1, 2])
    torch.testing.assert_close(
        D.classifier_log_prob(logits, labels), torch.log_softmax(logits, -1)[torch.arange(7), labels]
    )


def test_group_logits_marginalise_the_classifier():
    logits = torch.randn(5, 4)
    groups = torch.tensor([0, 0, 1, 1])
    coarse = torch.softmax(D.group_logits(logits, groups, 2), -1)
    fine = torch.softmax(logits, -1)
    torch.testing.assert_close(coarse, torch.stack([fine[:, :2].sum(1), fine[:, 2:].sum(1)], 1))


def test_noise_interpolates_between_the_data_and_the_noise_and_refuses_a_step_out_of_range():
    schedule = D.NoiseSchedule.cosine(10)
    x0, eps = torch.randn(3, 2), torch.randn(3, 2)
    t = torch.tensor([0, 4, 9])
    x_t = schedule.noise(x0, t, eps)
    ab = schedule.alpha_bars[t][:, None]
    torch.testing.assert_close(x_t, ab.sqrt() * x0 + (1 - ab).sqrt() * eps)
    assert bool((ab[1:] < ab[:-1]).all())  # later steps keep less of the data
    with pytest.raises(ValueError, match=r"\bt must hold diffusion steps in \[0, 9\]"):
        schedule.noise(x0, torch.tensor([0, 4, 10]), eps)
    with pytest.raises(ValueError, match=r"\beps must have the shape of x0"):
        schedule.noise(x0, t, eps[:, :1])


def test_guided_epsilon_adds_the_scaled_gradient_of_log_h():
    schedule = D.NoiseSchedule.cosine(10)
    a = torch.tensor([0.3, -2.0])
    x, eps = torch.randn(4, 2), torch.randn(4, 2)
    out = D.guided_epsilon(eps, x, 6, schedule, lambda z, t: z @ a, scale=2.5)  # grad log h = a
    torch.testing.assert_close(out, eps - 2.5 * (1 - schedule.alpha_bars[6]).sqrt() * a.expand(4, 2))


def test_unit_weights_leave_the_sampler_unchanged():
    schedule = D.NoiseSchedule.cosine(8)
    torch.manual_seed(0)
    den, clf = D.TimeMLP(2, 2, 8, 16), D.TimeMLP(2, 4, 8, 16)
    plain = D.sample(den, schedule, 50, (2,), generator=torch.Generator().manual_seed(3))
    potential = D.time_potential(clf, lambda lg: D.jeffrey_log_h(lg, torch.zeros(4)))
    guided = D.sample(
        den, schedule, 50, (2,), generator=torch.Generator().manual_seed(3), potential=potential, scale=3.0
    )
    torch.testing.assert_close(plain, guided)


def test_log_h_loss_is_minimised_by_the_log_of_the_mean_weight():
    """For a fixed x_t, E[w softplus(-f) + softplus(f)] is minimised at f = log E[w]: the logistic estimate of h_t."""
    w = torch.tensor([0.1, 3.0, 0.5, 1.2], dtype=torch.float64)
    f = torch.zeros((), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([f], lr=0.5, max_iter=500, tolerance_grad=1e-12, tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        loss = (w * torch.nn.functional.softplus(-f) + torch.nn.functional.softplus(f)).mean()
        loss.backward()
        return loss

    opt.step(closure)
    assert float(f.detach()) == pytest.approx(float(torch.log(w.mean())), abs=1e-6)


def test_sampler_refuses_bad_input():
    schedule = D.NoiseSchedule.cosine(5)
    den = D.TimeMLP(2, 2, 5, 8)
    with pytest.raises(ValueError, match="n"):
        D.sample(den, schedule, 0, (2,), generator=torch.Generator())
    with pytest.raises(ValueError, match="scale"):
        D.sample(den, schedule, 3, (2,), generator=torch.Generator(), scale=-1.0)
    with pytest.raises(ValueError, match="n_steps"):
        D.NoiseSchedule.cosine(0)  # core.diffusion's schedule: one step at least (the config asks for two)


def test_fit_resumes_to_the_same_weights(tmp_path):
    data = torch.randn(64, 2)
    schedule = D.NoiseSchedule.cosine(5)

    def train(checkpoint, stop_at=None):
        torch.manual_seed(0)
        model = D.TimeMLP(2, 2, 5, 8)
        loss = D.denoiser_loss(data, schedule, 16)
        calls = {"n": 0}

        def batch_loss(m, g):
            calls["n"] += 1
            if stop_at is not None and calls["n"] > stop_at:
                raise KeyboardInterrupt  # a kill in the middle of training
            return loss(m, g)

        D.fit(
            model,
            batch_loss,
            n_steps=30,
            lr=1e-2,
            generator=torch.Generator().manual_seed(1),
            checkpoint=checkpoint,
            name="model/denoiser",  # loop state, not a finished part: part/<name> holds summary, curves, seconds
        )
        return model

    reference = train(None)
    ck = Checkpointer(tmp_path, every_s=0.0)
    with pytest.raises(KeyboardInterrupt):
        train(ck, stop_at=12)
    resumed = train(Checkpointer(tmp_path, every_s=0.0, resume=True))
    for a, b in zip(reference.parameters(), resumed.parameters(), strict=True):
        torch.testing.assert_close(a, b)


# ------------------------------------------------------------------------------ toy and metrics
def test_exact_jeffrey_samples_have_the_target_marginal_and_the_model_conditionals():
    q = np.array([0.25, 0.25, 0.25, 0.25])
    gen = torch.Generator().manual_seed(0)
    x = Y.sample_jeffrey_target(20_000, q, gen)
    freq = cell_frequencies(Y.toy_cells(x), 4)
    assert tv_distance(freq, q) < 0.02
    base = Y.sample_toy(200_000, gen)
    for s in (1, 3):  # a rare cell and a common one: same conditional mean as p(x | s)
        torch.testing.assert_close(
            x[Y.toy_cells(x) == s].mean(0), base[Y.toy_cells(base) == s].mean(0), atol=0.05, rtol=0
        )
    with pytest.raises(ValueError, match="target"):
        Y.sample_jeffrey_target(10, [0.5, 0.5, 0.5, -0.5], gen)


def test_exact_score_is_the_gradient_of_the_noised_mixture_and_samples_the_toy():
    schedule = D.NoiseSchedule.cosine(50)
    score = Y.ExactNoisePredictor(schedule.alpha_bars)
    means, weights = Y._components(np.array(Y.TOY_JOINT))
    x = torch.randn(64, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 2
    for t in (0, 10, 30, 49):  # an independent route: autograd of the noised mixture's log density
        ab = schedule.alpha_bars[t].double()
        mix = torch.distributions.MixtureSameFamily(
            torch.distributions.Categorical(torch.as_tensor(weights)),
            torch.distributions.Independent(
                torch.distributions.Normal(
                    ab.sqrt() * torch.as_tensor(means), (ab * Y.MODE_STD**2 + 1 - ab).sqrt().expand(8, 2)
                ),
                1,
            ),
        )
        xr = x.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(mix.log_prob(xr).sum(), xr)
        eps = score(x, torch.full((64,), t))
        torch.testing.assert_close(eps, -(1 - ab).sqrt() * grad, atol=1e-8, rtol=1e-6)
    x = D.sample(score, schedule, 4000, (2,), generator=torch.Generator().manual_seed(1))
    assert tv_distance(cell_frequencies(Y.toy_cells(x), 4), Y.cell_marginal()) < 0.03


def test_exact_cell_classifier_is_the_bayes_posterior_of_the_cells():
    schedule = D.NoiseSchedule.cosine(50)
    gen = torch.Generator().manual_seed(0)
    x0 = Y.sample_toy(20_000, gen)
    cells = Y.toy_cells(x0)
    clf = Y.ExactCellClassifier(schedule.alpha_bars)
    t0 = torch.zeros(len(x0), dtype=torch.long)
    assert (clf(x0, t0).argmax(1) == cells).float().mean() > 0.99  # almost noise-free at t = 0
    # calibrated at a middle step: the mean posterior of the true cell equals the mean of P(cell | x_t) over x_t
    t = 20
    xt = schedule.noise(x0, torch.full((len(x0),), t), torch.randn(x0.shape, generator=gen))
    probs = torch.softmax(clf(xt, torch.full((len(x0),), t)), -1)
    np.testing.assert_allclose(probs.mean(0).numpy(), cell_frequencies(cells, 4), atol=0.01)
    for s in range(4):  # among points the classifier gives ~p to cell s, a share ~p lies in s
        hit = (probs[:, s] > 0.4) & (probs[:, s] < 0.6)
        if int(hit.sum()) > 200:
            assert abs(float((cells[hit] == s).float().mean()) - 0.5) < 0.08
    flip = flip_confusion(4, 0.3)
    noisy = Y.ExactCellClassifier(schedule.alpha_bars, confusion=flip)
    p_noisy = torch.softmax(noisy(x0[:500], t0[:500]), -1).double()
    p_clean = torch.softmax(clf(x0[:500], t0[:500]), -1).double()
    torch.testing.assert_close(p_noisy, p_clean @ torch.as_tensor(flip), atol=1e-6, rtol=0)


def test_exact_cell_classifier_keeps_far_tails_finite_and_matches_scipy_log_ndtr():
    """Far from the origin at t = 0 the wrong quadrants' probabilities are below float64's range as plain
    products of ndtr; in log space they stay finite, equal scipy.special.log_ndtr's sum, and keep a gradient."""
    from scipy.special import log_ndtr, logsumexp

    schedule = D.NoiseSchedule.cosine(50)
    clf = Y.ExactCellClassifier(schedule.alpha_bars)
    x = torch.tensor([[3.0, 2.5], [-4.0, 3.0], [60.0, -50.0]], dtype=torch.float64, requires_grad=True)
    t = torch.zeros(len(x), dtype=torch.long)
    logits = clf(x, t)
    assert torch.isfinite(logits).all()
    assert float(logits[2, 0]) < -1000  # P(cell 0 | far in cell 2) underflows as a product of probabilities
    # independent route: the same formula in numpy/scipy, float64
    log_r, d, var, a, b2 = Y._posterior(x.detach(), 0, schedule.alpha_bars, Y.TOY_JOINT)
    means = Y._components(np.array(Y.TOY_JOINT))[0][None]
    m = means + float(a * Y.MODE_STD**2 / var) * d.numpy()
    z = m / max(np.sqrt(Y.MODE_STD**2 * float(b2 / var)), 1e-6)
    up, down = log_ndtr(z), log_ndtr(-z)
    cells = np.stack(
        [down[..., 0] + down[..., 1], down[..., 0] + up[..., 1], up[..., 0] + down[..., 1], up[..., 0] + up[..., 1]], -1
    )
    expected = logsumexp(log_r.numpy()[..., None] + cells, axis=1)
    np.testing.assert_allclose(logits.detach().numpy(), expected, rtol=1e-10, atol=1e-10)
    (grad,) = torch.autograd.grad(logits[2, 0], x)
    assert torch.isfinite(grad).all() and float(grad.abs().sum()) > 0  # the guidance still has a direction


@pytest.mark.parametrize("coupling", [-1.0, -0.5, 0.0, 0.5, 1.0])
def test_joint_target_has_the_asked_marginals(coupling):
    q = Y.joint_target(0.3, 0.6, coupling).reshape(2, 2)
    np.testing.assert_allclose(q.sum(1)[1], 0.3, atol=1e-12)
    np.testing.assert_allclose(q.sum(0)[1], 0.6, atol=1e-12)
    if coupling == 0:
        assert mutual_information(q) == pytest.approx(0, abs=1e-12)
    if abs(coupling) == 1:
        assert q.min() == pytest.approx(0, abs=1e-12)
    with pytest.raises(ValueError, match="coupling"):
        Y.joint_target(0.3, 0.6, 1.5)


def test_mmd_separates_distributions_and_frechet_matches_the_gaussian_closed_form():
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(800, 2, generator=gen), torch.randn(800, 2, generator=gen)
    assert abs(mmd2(a, b)) < 0.01
    assert mmd2(a, b + 1.0) > 0.1
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, size=(200_000, 3))
    y = rng.normal(0, 1, size=(200_000, 3)) * np.array([2.0, 1.0, 0.5]) + np.array([1.0, 0.0, 0.0])
    closed = 1.0 + (1 - 2) ** 2 + 0 + (1 - 0.5) ** 2  # |mu|^2 + sum (sigma_a - sigma_b)^2 for diagonal covariances
    assert frechet_distance(x, y) == pytest.approx(closed, rel=0.02)
    with pytest.raises(ValueError, match="same d"):
        frechet_distance(x, y[:, :2])


def test_conditional_mmd2_weights_the_per_cell_distances():
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(400, 2, generator=gen), torch.randn(400, 2, generator=gen)
    cx, cy = (x[:, 0] > 0).long(), (y[:, 0] > 0).long()
    y = y + torch.tensor([0.0, 1.0]) * (cy[:, None] == 1)  # only the conditional of cell 1 moves
    got = conditional_mmd2(x, cx, y, cy, np.array([0.25, 0.75]))
    per_cell = [mmd2(x[cx == s], y[cy == s]) for s in (0, 1)]
    assert got == pytest.approx(0.25 * per_cell[0] + 0.75 * per_cell[1])
    assert per_cell[1] > 0.1 > abs(per_cell[0])
    # a cell with no points is skipped and its weight renormalised away
    assert conditional_mmd2(x, cx, y, cy, np.array([0.25, 0.75, 0.5])) == pytest.approx(got)


def test_seeded_smoke_run_moves_the_marginal_and_keeps_the_conditionals():
    """The claimed direction: TV to p(a)p(b) falls by >= 0.2; conditionals stay within 1.5x + 0.02 of the model's."""
    cfg = JeffreyConfig.preset(
        "smoke",
        use_images=False,
        seeds=(0,),
        n_diffusion_steps=25,
        toy_d_hidden=128,
        n_toy_denoiser_steps=1000,
        n_toy_classifier_steps=400,
        n_toy_samples=500,
    )
    results = run(cfg)
    t = results.summary["toy"]["seeds"][0]
    assert t["unguided"]["tv"] - t["jeffrey"]["tv"] >= 0.2
    assert t["jeffrey"]["cond_mmd2"] <= 1.5 * t["unguided"]["cond_mmd2"] + 0.02
    assert t["jeffrey"]["mutual_information"] < t["unguided"]["mutual_information"] / 2
    exact = t["exact"]  # the checks' exact networks: Jeffrey guidance reaches q; the noisy Bayes classifier does not
    assert exact["jeffrey"]["tv"] < 0.08 and exact["unguided"]["tv"] > 0.25
    assert exact["noisy"]["jeffrey_tv_to_predicted"] < exact["noisy"]["jeffrey_tv"]
    lines = headline(results)  # no image part: the two toy lines, quoting the summary
    toy = results.summary["toy"]
    assert len(lines) == 2 and "images" not in results.summary
    assert f"unguided {toy['unguided_tv']['mean']:.3f} -> Jeffrey {toy['jeffrey_tv']['mean']:.3f}" in lines[0]
    assert f"{toy['jeffrey_mmd2']['mean']:.4f}" in lines[1]
    with pytest.raises(ValueError, match="results"):
        headline(JeffreyResults(cfg, {"rule": {}}))


# ------------------------------------------------------------------------------ images and data
def test_held_out_images_never_reach_guidance(monkeypatch):
    """The Fréchet reference (test split) is seen by the metric only: scrambling it leaves every sample unchanged."""
    cfg = JeffreyConfig.preset("smoke", seeds=(0,))
    first = run(cfg).summary["images"]["seeds"][0]
    original = I.load_images

    def scrambled(*args, **kwargs):
        data = original(*args, **kwargs)
        data.test = torch.rand_like(data.test) * 2 - 1
        data.test_labels = data.test_labels.flip(0)
        return data

    monkeypatch.setattr(I, "load_images", scrambled)
    second = run(cfg).summary["images"]["seeds"][0]
    assert second["fairness"] == first["fairness"]  # statistics of the guided samples: identical
    assert second["frechet"]["jeffrey"]["metric"] != first["frechet"]["jeffrey"]["metric"]  # only the metric moved


def test_loading_cifar_and_image_folders_from_a_data_root(tmp_path):
    write_cifar(tmp_path / "c", "cifar10", n_train=30, n_test=6, n_classes=3)
    data = I.load_images("cifar10", str(tmp_path / "c"), n_test=4)
    assert data.train.shape == (30, 3, 32, 32) and data.test.shape == (4, 3, 32, 32)
    assert data.train.min() >= -1 and data.train.max() <= 1 and data.n_classes == 3
    for cls in ("smiling", "neutral"):
        (tmp_path / "f" / cls).mkdir(parents=True)
        for k in range(5):
            Image.fromarray(np.full((20, 20, 3), 40 * k, dtype=np.uint8)).save(tmp_path / "f" / cls / f"{k}.png")
    folder = I.load_images("image_folder", str(tmp_path / "f"), n_test=3, image_size=8)
    assert folder.train.shape == (7, 3, 8, 8) and folder.test.shape == (3, 3, 8, 8) and folder.n_classes == 2
    (tmp_path / "one" / "only").mkdir(parents=True)
    Image.fromarray(np.zeros((8, 8, 3), dtype=np.uint8)).save(tmp_path / "one" / "only" / "0.png")
    with pytest.raises(ValueError, match="at least 2 class folders"):
        I.load_images("image_folder", str(tmp_path / "one"), n_test=2)
    with pytest.raises(ValueError, match="data-root"):
        I.load_images("cifar10", "", n_test=2)
    with pytest.raises(ValueError, match="dataset"):
        I.load_images("imagenet")


def test_digits_split_and_unet_shapes():
    data = I.load_images("digits", n_test=100)
    assert data.train.shape[1:] == (1, 8, 8) and len(data.test) == 100
    assert data.train.min() >= -1 and data.train.max() <= 1
    unet = I.UNet(3, 10, width=16, d_time=16)
    out = unet(torch.randn(2, 3, 8, 8), torch.tensor([0, 9]))
    assert out.shape == (2, 3 * 8 * 8)


def test_density_ratio_recovers_a_gaussian_ratio():
    rng = np.random.default_rng(0)
    real, gen = rng.normal(1.0, 1.0, size=(4000, 1)), rng.normal(0.0, 1.0, size=(4000, 1))
    ratio = I.fit_density_ratio(real, gen, c=100.0)
    e = np.array([[-1.0], [0.0], [1.0], [2.0]])
    np.testing.assert_allclose(ratio.log_w(e), e[:, 0] - 0.5, atol=0.15)  # log N(e; 1, 1) / N(e; 0, 1) = e - 1/2


# ------------------------------------------------------------------------------ verdicts
def v(mean: float, spread: float = 0.0, n: int = 4) -> list[float]:
    """Synthetic per-seed values around ``mean`` (±``spread``, alternating)."""
    return [mean + spread * (-1) ** i for i in range(n)]


def test_criteria_reach_every_branch():
    from explorables.core.verdicts import drive

    assert drive(C.CRITERIA) == []
    assert {c.kind for c in C.CRITERIA} == {"check", "gate", "claim"}


def test_verdict_functions_give_each_outcome_on_paired_intervals():
    assert C.rule_check(0.0, 0.0, 0.1, 0.2).startswith("pass")
    assert C.rule_check(1e-3, 0.0, 0.1, 0.2).startswith("fail")
    assert C.rule_check(0.0, 0.0, 0.3, 0.2).startswith("fail")
    assert C.marginal_verdict(v(0.36), v(0.03, 0.01)).startswith("yes")  # cut more than 3x on every seed
    assert C.marginal_verdict(v(0.36), v(0.2, 0.01)).startswith("no")  # falls, but not 3x: no, not partly
    assert C.marginal_verdict(v(0.36), v(0.12, 0.1)).startswith("unclear")  # the interval straddles 0.36 / 3
    assert C.joint_verdict(v(0.1), v(0.01), v(0.05), v(0.05)).startswith("yes")
    assert C.joint_verdict(v(0.1), v(0.01), v(0.05), v(0.2)).startswith("partly")
    assert C.joint_verdict(v(0.1), v(0.08), v(0.05), v(0.2)).startswith("no")
    assert C.joint_verdict(v(0.1), v(0.033, 0.02), v(0.05), v(0.2)).startswith("unclear")
    both = {"MMD²": v(1.0, 0.1), "TV": v(0.05, 0.01)}
    assert C.better_verdict(both, {"MMD²": v(2.0, 0.1), "TV": v(0.1, 0.01)}).startswith("yes")
    assert C.better_verdict(both, {"MMD²": v(2.0, 0.1), "TV": v(0.01, 0.01)}).startswith("partly")
    assert C.better_verdict(both, {"MMD²": v(0.5, 0.1), "TV": v(0.01, 0.01)}).startswith("no")  # behind on both
    tie = C.better_verdict(both, {"MMD²": v(1.0, 0.3), "TV": v(0.05, 0.02)})
    assert tie.startswith("unclear")  # a tie within the seed spread says neither yes nor no
    assert C.frechet_verdict(v(100), v(70, 5), v(100), v(80, 5)).startswith("yes")
    assert C.frechet_verdict(v(100), v(70, 5), v(100), v(95, 2)).startswith("partly")
    assert C.frechet_verdict(v(100), v(97, 2), v(100), v(97, 2)).startswith("no")
    assert C.frechet_verdict(v(100), v(80, 15), v(100), v(97, 2)).startswith("unclear")
    assert C.independence_verdict(v(0.1), v(0.02), v(0.2), v(0.05)).startswith("yes")
    assert C.independence_verdict(v(0.1), v(0.02), v(0.2), v(0.15)).startswith("partly")
    assert C.independence_verdict(v(0.1), v(0.08), v(0.2), v(0.15)).startswith("no")
    assert C.independence_verdict(v(0.1), v(0.05, 0.04), v(0.2), v(0.15)).startswith("unclear")


def test_noisy_check_needs_both_methods_closer_to_their_prediction():
    far = (v(0.2), v(0.2))  # the unguided model's TV to each prediction
    assert C.noisy_check(v(0.02), v(0.3), v(0.03), v(0.3), *far).startswith("pass")
    assert C.noisy_check(v(0.3), v(0.02), v(0.03), v(0.3), *far).startswith("fail")  # Jeffrey reached q after all
    assert C.noisy_check(v(0.02), v(0.3), v(0.3), v(0.02), *far).startswith("fail")  # classifier guidance did
    # samples that did not move (as close to the prediction as the unguided model) fail, though nearer it than q
    assert C.noisy_check(v(0.02), v(0.3), v(0.03), v(0.3), v(0.02), v(0.2)).startswith("fail")
    assert C.noisy_check(v(0.02), v(0.3), v(0.03), v(0.3), v(0.2), v(0.03)).startswith("fail")


def test_noisy_check_fails_an_unguided_sampler_on_the_real_prediction():
    """Oracle: 'samples' equal to the unguided marginal are closer to the prediction than to q (the prediction lies
    between them), yet the check must fail them."""
    p = np.array([0.4, 0.1, 0.1, 0.4])
    q = independent_target(p.reshape(2, 2)).ravel()
    m = flip_confusion(4, 0.3)
    pj, pc = jeffrey_marginal_with(p, q, m), classifier_guidance_marginal_with(p, q, m)
    rows = [(tv_distance(p, pj), tv_distance(p, q), tv_distance(p, pc), tv_distance(p, q)) for _ in range(3)]
    to_pj, to_q, to_pc, _ = (list(x + 1e-3 * i for i, x in enumerate(col)) for col in zip(*rows, strict=True))
    assert tv_distance(p, pj) < tv_distance(p, q)  # the first part alone would pass
    assert C.noisy_check(to_pj, to_q, to_pc, to_q, to_pj, to_pc).startswith("fail")


def test_noisy_accuracy_is_exact_for_an_oracle_at_t0_and_falls_to_chance_for_a_constant():
    from explorables.jeffrey.experiment import noisy_accuracy

    schedule = D.NoiseSchedule.cosine(20)
    x0 = torch.randn(400, 2)
    cells = Y.toy_cells(x0)

    class Oracle(torch.nn.Module):
        def forward(self, x, t):
            return torch.nn.functional.one_hot(Y.toy_cells(x), Y.N_CELLS).float()

    class Constant(torch.nn.Module):
        def forward(self, x, t):
            return torch.zeros(len(x), Y.N_CELLS)

    acc = noisy_accuracy(Oracle(), x0, cells, schedule, torch.Generator().manual_seed(0))
    assert list(acc) == ["0", "5", "10", "15"] and acc["0"] == 1.0
    assert acc["15"] < acc["0"]  # noise hides the cell
    const = noisy_accuracy(Constant(), x0, cells, schedule, torch.Generator().manual_seed(0))
    assert const["0"] == pytest.approx(float((cells == 0).float().mean()))


def test_gates_pass_and_fail_on_paired_intervals():
    assert C.room_gate(v(0.36, 0.01)).startswith("pass") and C.room_gate(v(0.05, 0.01)).startswith("fail")
    assert C.control_gate(v(0.05), v(0.3), v(0.6)).startswith("pass")
    assert C.control_gate(v(0.25), v(0.3), v(0.6)).startswith("fail")  # not cut 3x
    assert C.control_gate(v(0.12, 0.05), v(0.10, 0.05), v(0.6)).startswith("fail")  # closer to the fair target
    assert C.floor_gate(v(200, 10), 9.0).startswith("pass") and C.floor_gate(v(15, 2), 9.0).startswith("fail")
    assert C.baseline_gate(v(0.17), v(0.09)).startswith("pass") and C.baseline_gate(v(0.17), v(0.2)).startswith("fail")
    assert C.capability_gate(v(0.2), v(0.1)).startswith("pass")
    assert C.capability_gate(v(0.2), v(0.18)).startswith("fail")  # moves, but less than a quarter of the way


def _toy_row(**over):
    row = {
        "unguided": {"tv": 0.36, "mmd2": 0.14, "cond_mmd2": 0.12},
        "jeffrey": {"tv": 0.04, "mmd2": 0.012, "cond_mmd2": 0.04},
        "classifier": {"tv": 0.03, "mmd2": 0.012, "cond_mmd2": 0.04},
        "control": {"tv_to_control": 0.05, "tv_to_fair": 0.23, "tv_unguided_to_control": 0.6},
        "noisy": {
            "accuracy": 0.6,
            "jeffrey_tv": 0.3,
            "classifier_tv": 0.31,
            "jeffrey_predicted_tv": 0.31,
            "classifier_predicted_tv": 0.33,
            "jeffrey_tv_to_predicted": 0.03,
            "classifier_tv_to_predicted": 0.04,
            "unguided_tv_to_jeffrey_predicted": 0.06,
            "unguided_tv_to_classifier_predicted": 0.05,
        },
        "misc": {"jeffrey_predicted_tv": 0.08},
    }
    exact = {k: dict(row[k]) for k in ("unguided", "jeffrey", "classifier", "noisy")}
    for path, value in over.items():
        method, key = path.split("__")
        if method.startswith("x_"):  # the exact networks
            exact[method[2:]][key] = value
        else:
            row[method][key] = value
    row.update(row.pop("misc"))
    row["exact"] = exact
    return row


def _image_row(jitter: float, predicted: float = 0.1, **fairness):
    fair = {"unguided": {"tv": 0.25, "mutual_information": 0.18}, "jeffrey": {"tv": 0.21, "mutual_information": 0.14},
            "classifier": {"tv": 0.1, "mutual_information": 0.05}}  # fmt: skip
    for path, value in fairness.items():
        method, key = path.split("__")
        fair[method][key] = value
    row = {
        "class_tv": {"unguided": 0.17 + jitter, "jeffrey": 0.1, "classifier": 0.09 + jitter},
        "fair_tv_floor": 0.07,
        "frechet": {
            m: {"metric": x + jitter, "control": 0.8 * x}
            for m, x in (("unguided", 200.0), ("jeffrey", 100.0), ("classifier", 185.0))
        },
        "fairness": {
            **{m: {k: x + jitter / 100 for k, x in d.items()} for m, d in fair.items()},
            "classifier_accuracy": 0.75,
            "accuracy_by_t": {"0": 0.75, "12": 0.5, "25": 0.2},
            "model_joint": [0.002, 0.098] + [0.05] * 18,
            "predicted_jeffrey": {"tv": predicted + jitter / 100},
            "predicted_classifier_tv": 0.12 + jitter / 100,
            "target": [0.05] * 20,
        },
    }
    # classifier guidance's joint: 70% thick (every class 0.03 thin, 0.07 thick: its class marginal is q's)
    row["fairness"]["classifier"]["joint"] = [0.03, 0.07] * 10
    return row


def _results(toy_rows, image_rows=None):
    from explorables.jeffrey.experiment import JeffreyResults

    summary = {
        "rule": {"conditional_change": 0.0, "marginal_error": 0.0, "kl_jeffrey": 0.44, "kl_random_min": 0.45},
        "toy": {"seeds": toy_rows},
    }
    if image_rows is not None:
        summary["images"] = {"seeds": image_rows}
        summary["image_model"] = {"n_train": 1000, "n_test": 500, "train_vs_test_frechet": 9.0}
    return JeffreyResults(JeffreyConfig.preset("smoke", seeds=(0, 1, 2, 3)), summary)


def test_claims_rows_have_their_kinds_and_gates_turn_claims_untested():
    from explorables.core.tables import apply_gates

    jit = (-1.0, 1.0, -0.5, 0.5)
    toy = [_toy_row(jeffrey__tv=0.04 + j / 100) for j in jit]
    rows = C.claims(_results(toy, [_image_row(j) for j in jit]))
    assert [r.kind for r in rows] == ["check"] * 2 + ["gate"] * 6 + ["claim"] * 5
    words = [r.outcome for r in apply_gates(rows)]
    assert words[:8] == ["pass"] * 8
    assert words[8] == "yes" and words[10] == "yes"  # the toy marginal; the Fréchet distance
    assert words[12] == "no"  # fairness on digits: neither number halved
    # classifier guidance cannot move the joint either: the fairness row is untested, not "no"
    stuck = [_image_row(j, classifier__tv=0.24) for j in jit]
    stuck_words = [r.outcome for r in apply_gates(C.claims(_results(toy, stuck)))]
    assert stuck_words[6] == "fail" and stuck_words[12] == "untested"
    # the unguided toy already at the target: the toy claims are untested, not "no"
    flat = [_toy_row(unguided__tv=0.05 + j / 1000) for j in jit]
    gated = [r.outcome for r in apply_gates(C.claims(_results(flat)))]
    assert gated[2] == "fail" and gated[4:] == ["untested"] * 2
    # the noisy-classifier check reads the exact networks, not the learned ones
    learned_off = [_toy_row(noisy__jeffrey_tv_to_predicted=0.5) for _ in jit]
    assert C.claims(_results(learned_off))[1].verdict.startswith("pass")
    exact_off = [_toy_row(x_noisy__jeffrey_tv_to_predicted=0.5) for _ in jit]
    assert C.claims(_results(exact_off))[1].verdict.startswith("fail")


def test_marginal_drift_bounds_the_joint_tv_from_below():
    rng = np.random.default_rng(0)
    for _ in range(50):
        j, q = rng.dirichlet(np.ones(20)), rng.dirichlet(np.ones(20))
        d = C.marginal_drift(j.tolist(), q.tolist())
        tv = 0.5 * float(np.abs(j - q).sum())
        assert d["class_tv"] <= tv + 1e-12 and d["thick_tv"] <= tv + 1e-12
        assert d["thick_share"] == pytest.approx(j[1::2].sum()) and d["target_thick"] == pytest.approx(q[1::2].sum())
    same = C.marginal_drift([0.1, 0.4, 0.4, 0.1], [0.25, 0.25, 0.25, 0.25])  # dependent, marginals kept
    assert same["class_tv"] == pytest.approx(0.0) and same["thick_tv"] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="same number of cells"):
        C.marginal_drift([0.5, 0.5], [0.25] * 4)


def test_fairness_and_toy_sentences_follow_the_verdicts():
    jit = (-1.0, 1.0, -0.5, 0.5)

    def fair(mi_after, tv_after, predicted=0.1, cg_tv=0.1, toy_predicted=0.08):
        rows = [_image_row(j, predicted, jeffrey__mutual_information=mi_after, jeffrey__tv=tv_after,
                           classifier__tv=cg_tv) for j in jit]  # fmt: skip
        toy = [_toy_row(misc__jeffrey_predicted_tv=toy_predicted + j / 100) for j in jit]
        return C.fairness_sentence(_results(toy, rows))

    assert "independent" in fair(0.02, 0.05)
    assert "not clearly by half" in fair(0.02, 0.2)
    assert "not reproduce" in fair(0.15, 0.2) and "classifier guidance with the same classifier" in fair(0.15, 0.2)
    assert "untested" in fair(0.15, 0.2, cg_tv=0.24)  # classifier guidance cannot move it either
    # ... and whether its own t = 0 confusion already predicts that (0.12 < 0.75 x 0.25: no; 0.22: yes)
    assert "at t = 0 it would allow the move" in fair(0.15, 0.2, cg_tv=0.24)
    limited = [_image_row(j, classifier__tv=0.24) for j in jit]
    for r in limited:
        r["fairness"]["predicted_classifier_tv"] = 0.22
    toy_rows = [_toy_row() for _ in jit]
    assert "its estimation error alone keeps guidance from the gate" in C.fairness_sentence(_results(toy_rows, limited))
    # ... and the sentence says how far its marginals alone keep it (70% thick against q's 50%: TV >= 0.2)
    drift = fair(0.15, 0.2, cg_tv=0.24)  # the marginals put 0.2 of its 0.24 on them
    assert "Most of that is the marginals" in drift and "70% of its samples are thick (q: 50%)" in drift
    assert "at least 0.200 from q" in drift and "at TV 0.000 from q's" in drift
    dependent = fair(0.15, 0.2, cg_tv=0.5)  # the same marginals, but a TV of 0.5: mostly the dependence
    assert "account for only 0.200 of that TV" in dependent and "goes from 0.180 to 0.050 nats" in dependent
    # the classifier's confusion allows half the unguided TV (0.25): the loss is along the way
    assert "not what stops it" in fair(0.15, 0.2, predicted=0.1) and "1.0 of the 20 cells" in fair(0.15, 0.2)
    assert "explains Jeffrey's shortfall" in fair(0.15, 0.2, predicted=0.2)  # the classifier is the limit, reached
    assert "short even of that" in fair(0.15, 0.24, predicted=0.15)  # the limit, not reached
    # the toy's clean-classifier prediction, as measured (toy Jeffrey TV 0.04)
    assert "pessimistic" in fair(0.15, 0.2, toy_predicted=0.08)
    assert "optimistic" in fair(0.15, 0.2, toy_predicted=0.0)
    assert "accuracy on unguided samples is 75% at t = 0" in fair(0.15, 0.2)

    def noisy(jeffrey_tv, classifier_tv, to_predicted=0.03):
        rows = [_toy_row(x_noisy__jeffrey_tv=jeffrey_tv + j / 100, x_noisy__classifier_tv=classifier_tv + j / 200,
                         x_noisy__jeffrey_tv_to_predicted=to_predicted) for j in jit]  # fmt: skip
        return C.noisy_sentence(_results(rows))

    assert "suffers more" in noisy(0.2, 0.3) and "where the classifier's confusion predicts" in noisy(0.2, 0.3)
    assert "suffers less" in noisy(0.3, 0.2)
    assert "suffers as much" in noisy(0.3, 0.3)
    assert "but not where" in noisy(0.3, 0.3, to_predicted=0.5)
    off = [_toy_row(x_noisy__classifier_tv_to_predicted=0.06 + j / 1000) for j in jit]  # unguided is at 0.05
    assert "does not land on its own prediction" in C.noisy_sentence(_results(off))
    # the learned classifier against its own t = 0 prediction (0.31): not checked, said in words
    assert "closer to q than that" in noisy(0.2, 0.3)  # learned Jeffrey at 0.30
    learned = [_toy_row(noisy__jeffrey_tv=0.35 + j / 100) for j in jit]
    assert "short of it" in C.noisy_sentence(_results(learned))
    spread = [_toy_row(noisy__jeffrey_tv=0.31 + j / 10) for j in jit]
    assert "within the seed spread" in C.noisy_sentence(_results(spread))
    # the near-equivalence, a measurement: the exact networks in the first sentence, the learned ones in the second
    toy = [_toy_row(jeffrey__tv=0.04 + j / 100, classifier__mmd2=0.012 + j / 1000) for j in jit]
    same = C.toy_baseline_sentence(_results(toy))
    assert same.count("they land within 0.1 of the unguided value of each other") == 2
    assert "Neither is clearly ahead" in same
    cg_ahead = [_toy_row(classifier__mmd2=0.010 + j / 10000) for j in jit]
    assert "classifier guidance is ahead on MMD²" in C.toy_baseline_sentence(_results(cg_ahead))
    assert same.count("Seed by seed, the two agree within 0.1 on 4 of 4 on MMD² and 4 of 4 on TV.") == 2
    apart = [_toy_row(classifier__mmd2=0.05 + j / 1000, classifier__tv=0.1 + j / 1000) for j in jit]
    text = C.toy_baseline_sentence(_results(apart))
    assert "With our learned networks, on MMD² and TV they differ by more" in text
    assert "agree within 0.1 on 0 of 4 on MMD² and 0 of 4 on TV." in text  # learned: per seed, none agrees
    assert "Jeffrey guidance is ahead" in text and "(the theory's premise), on MMD² and TV they land" in text
    wide = [_toy_row(x_classifier__tv=0.04 + j / 10) for j in jit]
    assert "on TV the paired difference's mean lies within that but its interval does not" in (
        C.toy_baseline_sentence(_results(wide))
    )


def test_sentences_follow_the_numbers():
    jit = (-1.0, 1.0, -0.5, 0.5)

    def cond(after):
        return C.conditional_sentence(_results([_toy_row(jeffrey__cond_mmd2=after + j / 1000) for j in jit]))

    kept = cond(0.13)
    assert "does not distort" in kept and "falls" not in kept
    assert "even falls" in cond(0.05)
    assert "distorts" in cond(0.3)

    def frechet(metric_after, control_after, classifier_control=None):
        rows = [_image_row(j) for j in jit]
        for r, j in zip(rows, jit, strict=True):
            r["frechet"]["jeffrey"] = {"metric": metric_after + j, "control": control_after + j}
            r["frechet"]["unguided"] = {"metric": 200.0 + j, "control": 150.0 - j}
            if classifier_control is not None:
                r["frechet"]["classifier"]["control"] = classifier_control + j
        return C.frechet_sentence(_results([_toy_row()] * 4, rows))

    # classifier guidance, aiming at neither embedding, passing the row's own pixel-PCA part (a 10% cut): the
    # independent judge's fall is guidance in general; a classifier guidance near the unguided one does not pass it
    shared = frechet(120, 100, classifier_control=110)
    assert "passes this row's own pixel-PCA part as well" in shared and "cuts the pixel-PCA distance by 27%" in shared
    assert "does not clearly pass" in frechet(120, 100, classifier_control=149)

    assert "also shows a clear fall" in frechet(120, 100)
    assert "part of the gap" in frechet(120, 100)
    assert "no clear change" in frechet(120, 150)
    assert "clearly worse" in frechet(120, 180)
    assert "reaches" in frechet(8, 100)
    assert "does not close" in frechet(210, 150)


def test_the_toy_worker_gives_the_numbers_of_a_serial_run():
    """The toy's parts in a spawned worker beside the image parts: every number and weight as one after the other."""
    cfg = JeffreyConfig.preset(
        "smoke", seeds=(0,), n_toy_denoiser_steps=50, n_image_denoiser_steps=50, n_class_classifier_steps=20
    )
    serial, parallel = run(cfg, workers=1), run(cfg, workers=2)
    assert list(parallel.summary) == list(serial.summary) == ["rule", "toy_model", "toy", "image_model", "images",
                                                              "timings"]  # fmt: skip
    for part in ("rule", "toy_model", "toy", "image_model", "images"):
        assert parallel.summary[part] == serial.summary[part]
    for curves in ("toy_model", "toy"):
        a, b = serial.curves[curves], parallel.curves[curves]
        states = ("denoiser", "classifier_state")
        for key in (k for k in states if k in a):
            assert all(torch.equal(a[key][w], b[key][w]) for w in a[key])
    with pytest.raises(ValueError, match="workers"):
        run(cfg, workers=-1)


def test_jeffrey_uses_the_cosine_schedule_of_nichol_and_dhariwal():
    """Betas clamped at 0.999 (the paper's schedule), not dcdm's 0.5."""
    assert float(D.NoiseSchedule.cosine(10).betas.max()) == pytest.approx(0.999)
