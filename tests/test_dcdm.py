"""Chapter 07 (dcdm): the forward process, the Dirichlet ELBO, the sampler, the arms, the verdicts.

Determinism, JSON summaries, config validation, figures and the lab are the contract test's job.
"""

from __future__ import annotations

import copy
import inspect

import numpy as np
import pytest
import torch
from torch.distributions import Dirichlet, kl_divergence

from explorables.core.checkpoint import Checkpointer
from explorables.core.datasets import write_cifar
from explorables.core.verdicts import drive
from explorables.dcdm import claims as C
from explorables.dcdm import data as Dt
from explorables.dcdm import dcdm as M
from explorables.dcdm import experiment as X
from explorables.dcdm.metrics import (
    cluster_scores,
    majority_labels,
    mmd2,
    principal_axes,
    usage_weighted_purity,
    variance_ratios,
)
from explorables.dcdm.networks import Ensemble, MLPDenoiser, MLPEncoder, UNet
from explorables.dcdm.training import (
    ARMS,
    ConceptModels,
    TrainSettings,
    generator_noise,
    member_seed,
    train_concept_models,
)

from .trees import assert_same_tree


def test_forward_process_has_the_stated_mean_and_variance():
    """Monte Carlo: x_t has mean sqrt(abar) x0 + (1 - sqrt(abar)) m and variance 1 - abar, eq. (dcdm-forward)."""
    torch.manual_seed(0)
    schedule = M.NoiseSchedule.cosine(30)
    x0, m = torch.tensor([1.5, -0.5]), torch.tensor([-2.0, 3.0])
    for t in (0, 10, 29):
        n = 200_000
        tt = torch.full((n,), t)
        x = M.forward_sample(x0.expand(n, 2), m.expand(n, 2), tt, torch.randn(n, 2), schedule)
        ab = schedule.alpha_bars[t]
        assert torch.allclose(x.mean(0), ab.sqrt() * x0 + (1 - ab.sqrt()) * m, atol=0.01)
        assert torch.allclose(x.var(0), (1 - ab).expand(2), rtol=0.02, atol=1e-4)
    assert schedule.alpha_bars[-1] < 1e-2  # x_T is (almost) N(m, I): the mean has moved to the centre


def test_forward_marginal_is_the_composition_of_mean_shifted_steps():
    """x_t = sqrt(alpha_t) x_{t-1} + (1 - sqrt(alpha_t)) m + sqrt(beta_t) eps, iterated, gives eq. (dcdm-forward)."""
    torch.manual_seed(1)
    schedule = M.NoiseSchedule.cosine(8)
    n, x0, m = 200_000, torch.tensor([2.0]), torch.tensor([-1.0])
    x = x0.expand(n, 1).clone()
    for t in range(8):
        a = schedule.alphas[t]
        x = a.sqrt() * x + (1 - a.sqrt()) * m + (1 - a).sqrt() * torch.randn(n, 1)
        mean, std = M.forward_mean_std(x0, m, torch.tensor(t), schedule)
        assert abs(float(x.mean()) - float(mean)) < 0.01
        assert abs(float(x.std()) - float(std)) < 0.01


def test_dirichlet_kl_matches_torch_and_monte_carlo():
    torch.manual_seed(2)
    alpha = torch.rand(5, 4) * 3 + 0.05
    prior = torch.full((4,), 0.3)
    ours = M.dirichlet_kl(alpha, 0.3)
    reference = kl_divergence(Dirichlet(alpha), Dirichlet(prior.expand(5, 4)))
    assert torch.allclose(ours, reference, atol=1e-5)
    q = Dirichlet(alpha[0].double())
    x = q.sample((400_000,))
    mc = (q.log_prob(x) - Dirichlet(prior.double()).log_prob(x)).mean()
    assert abs(float(mc) - float(ours[0])) < 0.05 * float(ours[0]) + 0.02
    assert float(M.dirichlet_kl(torch.full((3,), 0.3), 0.3)) == pytest.approx(0.0, abs=1e-6)  # KL(p || p) = 0


def test_elbo_terms_are_finite_and_gradients_flow_through_the_dirichlet():
    torch.manual_seed(3)
    schedule = M.NoiseSchedule.cosine(10)
    den = MLPDenoiser(3, 10, 16, 2)
    for scale in (0.0, 10.0, -10.0):  # extreme encoder outputs: concentrations at both clamps
        h = (torch.randn(32, 4) * scale).requires_grad_(True)
        centres = torch.randn(4, 3, requires_grad=True)
        loss, parts = M.dcdm_loss(torch.randn(32, 3), h, centres, den, schedule, beta=0.1, prior=0.3)
        assert torch.isfinite(loss) and torch.isfinite(parts["kl"]) and torch.isfinite(parts["reconstruction"])
        loss.backward()
        assert torch.isfinite(h.grad).all() and torch.isfinite(centres.grad).all()
        assert centres.grad.abs().sum() > 0  # the centres learn from the ELBO
    h = torch.zeros(32, 4, requires_grad=True)
    M.dcdm_loss(torch.randn(32, 3), h, torch.randn(4, 3), den, schedule, beta=0.0, prior=0.3)[0].backward()
    assert h.grad.abs().sum() > 0  # rsample: the reconstruction term alone reaches the encoder


def test_one_concept_reduces_to_ddpm():
    """K = 1: pi = 1 and KL = 0; with the centre at 0 the DCDM loss is DDPM's loss (same draws), and with a
    centre c it is DDPM's loss on x - c for a denoiser that works in y = x - m."""
    schedule = M.NoiseSchedule.cosine(10)
    den = MLPDenoiser(2, 10, 16, 2)
    x0, h = torch.randn(64, 2), torch.randn(64, 1)
    torch.manual_seed(4)
    ours, parts = M.dcdm_loss(x0, h, torch.zeros(1, 2), den, schedule, beta=1.0, prior=0.3)
    torch.manual_seed(4)
    ddpm = M.ddpm_loss(x0, den, schedule)
    assert float(parts["kl"]) == pytest.approx(0.0, abs=1e-6)
    assert torch.allclose(ours, ddpm, atol=1e-6)
    c = torch.tensor([[2.0, -1.0]])

    def in_y(x_t, t, m):  # the same network applied to y_t = x_t - m
        return den(x_t - m, t, torch.zeros_like(m))

    torch.manual_seed(5)
    shifted, _ = M.dcdm_loss(x0, h, c, in_y, schedule, beta=1.0, prior=0.3)
    torch.manual_seed(5)
    assert torch.allclose(shifted, M.ddpm_loss(x0 - c, den, schedule), atol=1e-5)


def test_reverse_process_with_the_exact_noise_predictor_recovers_a_point_mass():
    """For data = a single point a, eps*(x_t) = (y_t - sqrt(abar) (a - m)) / sqrt(1 - abar); the sampler
    must then return a from any start, for any centre m (eq. (dcdm-reverse))."""
    schedule = M.NoiseSchedule.cosine(20)
    a = torch.tensor([0.7, -1.2])

    def oracle(x_t, t, m):
        ab = schedule.alpha_bars[t][..., None]
        return (x_t - m - ab.sqrt() * (a - m)) / (1 - ab).sqrt()

    torch.manual_seed(6)
    m = torch.randn(50, 2) * 3
    out = M.reverse_process(oracle, schedule, m)
    assert torch.allclose(out, a.expand(50, 2), atol=1e-4)


def test_swap_weights_and_intervention_keep_the_input_when_nothing_changes():
    pi = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    swapped = M.swap_weights(pi, torch.tensor([2, 0]))
    assert torch.allclose(swapped, torch.tensor([[0.1, 0.2, 0.7], [0.8, 0.1, 0.1]]))
    assert torch.allclose(swapped.sum(-1), pi.sum(-1))
    schedule = M.NoiseSchedule.cosine(10)
    a = torch.tensor([0.5, 0.5])

    def oracle(x_t, t, m):
        ab = schedule.alpha_bars[t][..., None]
        return (x_t - m - ab.sqrt() * (a - m)) / (1 - ab).sqrt()

    centres = torch.randn(3, 2)
    out = M.intervene(a.expand(2, 2), pi, swapped, centres, oracle, schedule, t_edit=6)
    assert torch.allclose(out, a.expand(2, 2), atol=1e-4)
    with pytest.raises(ValueError, match="t_edit"):
        M.intervene(a.expand(2, 2), pi, pi, centres, oracle, schedule, t_edit=10)


def test_intervention_pairs_cover_every_other_used_concept_once():
    """Each input is swapped towards every used concept but its top one (inputs in order, no repeats); the
    average over these targets is the mean of one uniformly random other concept, so the estimand is kept."""
    rng = np.random.default_rng(0)
    top, used = np.array([0, 2, 5, 2]), np.array([0, 2, 3, 5])
    rows, targets = X.intervention_pairs(top, used, rng)
    assert rows.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    for i, k in enumerate(top):
        assert sorted(targets[rows == i].tolist()) == sorted(set(used.tolist()) - {k})
    # a top concept outside the used ones: every used concept is a target
    rows, targets = X.intervention_pairs(np.array([1]), used, rng)
    assert targets.tolist() == used.tolist() and rows.tolist() == [0] * 4
    # one used concept: the input is "swapped" towards its own top concept (no other exists)
    rows, targets = X.intervention_pairs(np.array([3, 3]), np.array([3]), rng)
    assert rows.tolist() == [0, 1] and targets.tolist() == [3, 3]


def test_intervention_pairs_draw_at_most_max_targets_distinct_concepts():
    used = np.arange(20)
    top = np.array([4, 7, 4])
    rows, targets = X.intervention_pairs(top, used, np.random.default_rng(1), max_targets=9)
    assert np.bincount(rows).tolist() == [9, 9, 9]
    for i, k in enumerate(top):
        t = targets[rows == i]
        assert len(set(t.tolist())) == 9 and k not in t and set(t.tolist()) <= set(used.tolist())
    again = X.intervention_pairs(top, used, np.random.default_rng(1), max_targets=9)
    assert np.array_equal(again[1], targets)  # seeded: the same draws
    # at the book's K (10 digit concepts, 6 mixture ones) no draw happens: every other concept, no rng consumed
    rng = np.random.default_rng(2)
    state = rng.bit_generator.state
    X.intervention_pairs(np.array([0, 9]), np.arange(10), rng)
    assert rng.bit_generator.state == state
    assert X.INTERVENTION_TARGETS >= 9
    with pytest.raises(ValueError, match="max_targets"):
        X.intervention_pairs(top, used, rng, max_targets=0)


def test_intervention_scores_use_one_edit_per_input_and_target():
    """The scorer edits each (input, target) pair once: the classifier sees inputs x targets points per call."""
    torch.manual_seed(0)
    n, k, d = 5, 4, 2
    centres = torch.randn(1, k, d)
    schedule = M.NoiseSchedule.cosine(10)

    class Denoisers:
        def member(self, e):
            return lambda x_t, t, m: torch.zeros_like(x_t)

    class Models:
        pass

    models = Models()
    models.denoiser, models.centres, models.schedule = Denoisers(), centres, schedule
    data = Dt.Dataset.__new__(Dt.Dataset)
    data.x_test, data.y_train = torch.randn(n, d), np.array([0, 1, 2, 3])
    weights = torch.softmax(torch.randn(n, k), -1)
    seen = []

    def classify(x):
        seen.append(len(x))
        return np.zeros(len(x), dtype=int)

    usage = np.full(k, 0.25)
    out = X._intervention_scores(models, 0, data, weights, usage, np.arange(k), classify, 5, np.random.default_rng(0))
    assert seen[:2] == [n * (k - 1)] * 2
    assert set(out) == {"intervention_hit", "intervention_base", "intervention_keep"}


def test_labels_never_reach_the_training_code():
    """Training functions take inputs and settings, never labels."""
    forbidden = {"y", "labels", "label", "y_train", "targets", "classes", "data"}
    for fn in (
        train_concept_models,
        M.dcdm_loss,
        ConceptModels.assign,
        ConceptModels.concept_weights,
        ConceptModels.sample_concepts,
    ):
        assert not forbidden & set(inspect.signature(fn).parameters), fn.__name__
    assert not forbidden & set(TrainSettings.__dataclass_fields__)
    # the experiment hands train_concept_models the inputs tensor, not the Dataset that also holds labels
    source = inspect.getsource(X._train_and_evaluate)
    assert "train_concept_models(\n        data.x_train," in source


def test_training_is_blind_to_the_labels(monkeypatch):
    """Behaviour, not only signatures: the mixture experiment with its labels shuffled trains exactly the
    same models (centres, samples, concept usage), while the label-based scores change."""
    cfg = X.DCDMConfig.preset(
        "smoke", seeds=(0, 1), n_mixture_train=200, n_mixture_steps=20, n_diffusion_steps=5, n_snapshots=2
    )
    real = Dt.mixture_data

    def shuffled(*args, **kwargs):
        data = real(*args, **kwargs)
        data.y_train = np.random.default_rng(9).permutation(data.y_train)
        return data

    summary, curves = X._mixture(cfg, None, False)
    monkeypatch.setattr(Dt, "mixture_data", shuffled)
    summary_s, curves_s = X._mixture(cfg, None, False)
    assert np.array_equal(curves["centres"], curves_s["centres"])
    assert np.array_equal(curves["samples"], curves_s["samples"])
    assert np.array_equal(curves["usage"], curves_s["usage"])
    assert summary["arms"]["dcdm"]["nmi"] != summary_s["arms"]["dcdm"]["nmi"]


def test_ensemble_members_are_independent_models():
    ens = Ensemble(lambda: MLPEncoder(3, 4, 8, 2), [0, 1])
    x = torch.randn(2, 5, 3)
    out = ens(x)
    torch.manual_seed(1)
    single = MLPEncoder(3, 4, 8, 2)
    assert torch.allclose(out[1], single(x[1]), atol=1e-6)
    assert torch.allclose(ens.member(0)(x[0]), out[0], atol=1e-6)


@pytest.mark.parametrize("kind", ["encoder", "denoiser"])
def test_the_batched_mlp_path_equals_vmap_bit_for_bit(kind):
    """The MLPs' stacked_forward (one batched product per layer) gives the outputs and gradients of
    mapping the module over the members with vmap, bit for bit (the book's numbers do not depend on it)."""
    if kind == "encoder":
        make, args = (lambda: MLPEncoder(5, 4, 16, 2)), (torch.randn(3, 7, 5),)
    else:
        make = lambda: MLPDenoiser(5, 20, 16, 3)  # noqa: E731
        args = (torch.randn(3, 2, 7, 5), torch.randint(20, (3, 2, 7)), torch.randn(3, 2, 7, 5))
    ens = Ensemble(make, [0, 1, 2])
    fast = ens(*args)
    cls = type(ens._base[0])
    stacked = cls.stacked_forward
    try:
        del cls.stacked_forward  # the generic path: vmap over functional_call
        slow = ens(*args)
        (g_slow,) = torch.autograd.grad(slow.square().sum(), [ens.params["net__0__weight"]])
    finally:
        cls.stacked_forward = stacked
    (g_fast,) = torch.autograd.grad(ens(*args).square().sum(), [ens.params["net__0__weight"]])
    assert fast.shape == slow.shape
    assert torch.equal(fast, slow)
    assert torch.equal(g_fast, g_slow)


def test_a_resumed_training_loop_continues_the_uninterrupted_run_bit_for_bit(tmp_path):
    """Issue 53: the loop draws from torch's global random state, which the run re-seeds after a
    checkpoint is restored; the loop state must carry that state, or a resumed run silently differs."""
    data = Dt.mixture_data(200, 10, 4, 0.25, seed=0)
    settings = TrainSettings(3, 30, 10, 16, 5e-3, 0.003, 0.3)

    def train(checkpoint=None, stop_at=None):
        def interrupt(step, models):
            if step == stop_at:
                raise KeyboardInterrupt

        torch.manual_seed(7)  # as the experiment does before training, resumed or not
        return train_concept_models(
            data.x_train, settings, lambda: MLPEncoder(2, 3, 8, 2), lambda: MLPDenoiser(2, 10, 8, 2),
            seeds=(0,), arms=("dcdm",), checkpoint=checkpoint, name="train",
            snapshot_steps=() if stop_at is None else (stop_at,), on_snapshot=interrupt,
        )  # fmt: skip

    whole = train()
    with pytest.raises(KeyboardInterrupt):
        train(Checkpointer(tmp_path, every_s=0.0), stop_at=17)
    torch.manual_seed(12345)  # anything the process did in between
    resumed = train(Checkpointer(tmp_path, every_s=0.0, resume=True))
    assert torch.equal(whole.centres, resumed.centres)
    for a, b in zip(whole.encoder.parameters(), resumed.encoder.parameters(), strict=True):
        assert torch.equal(a, b)


def test_smoke_training_beats_chance_nmi_on_the_mixture():
    data = Dt.mixture_data(600, 10, 4, 0.25, seed=0)
    settings = TrainSettings(4, 120, 20, 64, 5e-3, 0.003, 0.3)
    torch.manual_seed(0)
    models = train_concept_models(
        data.x_train,
        settings,
        lambda: MLPEncoder(2, 4, 32, 2),
        lambda: MLPDenoiser(2, 20, 32, 2),
        seeds=(0, 1),
        arms=("dcdm",),
    )
    assign = models.assign(data.x_train)
    rng = np.random.default_rng(0)
    for row in assign:
        nmi = cluster_scores(data.y_train, row)["nmi"]
        chance = cluster_scores(rng.permutation(data.y_train), row)["nmi"]
        assert nmi > chance + 0.3


def test_metrics_on_hand_made_inputs():
    assert cluster_scores(np.array([0, 0, 1, 1]), np.array([5, 5, 2, 2]))["nmi"] == pytest.approx(1.0)
    assert list(majority_labels(np.array([0, 0, 0, 2]), np.array([3, 3, 1, 7]), 3)) == [3, -1, 7]
    total, purity = usage_weighted_purity(np.array([[1, 1, 1, 2], [0, 0, 0, 0]]), np.array([0.5, 0.5]))
    assert list(purity) == [0.75, 1.0] and total == pytest.approx(0.875)
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(300, 2)), rng.normal(size=(300, 2)), rng.normal(size=(300, 2)) + 2
    assert abs(mmd2(a, b, 1.0)) < 0.02 < mmd2(a, c, 1.0)
    # the pairwise distances without the (n, m, D) broadcast agree with it (paper scale: D = 3072)
    from explorables.dcdm.metrics import squared_distances

    np.testing.assert_allclose(squared_distances(a, c), ((a[:, None] - c[None]) ** 2).sum(-1), atol=1e-9)
    with pytest.raises(ValueError, match="labels and assignment"):
        cluster_scores(np.zeros(3), np.zeros(4))


def test_mmd2_matches_a_brute_force_sum():
    """The vectorised estimator against the definition written out pair by pair (one bandwidth and several)."""
    from explorables.dcdm.metrics import kernel_bandwidths, median_bandwidth

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(7, 3)), rng.normal(size=(5, 3)) + 0.5

    def brute(hs):
        def k(a, b):
            return np.mean([np.exp(-np.sum((a - b) ** 2) / (2 * h * h)) for h in hs])

        n, m = len(x), len(y)
        xx = sum(k(x[i], x[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
        yy = sum(k(y[i], y[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
        xy = sum(k(x[i], y[j]) for i in range(n) for j in range(m)) / (n * m)
        return xx + yy - 2 * xy

    assert mmd2(x, y, 0.7) == pytest.approx(brute([0.7]), rel=1e-10)
    assert mmd2(x, y, (0.3, 1.1)) == pytest.approx(brute([0.3, 1.1]), rel=1e-10)
    # the multi-bandwidth kernel is the mean of the single ones, so its MMD² is the mean of theirs
    assert mmd2(x, y, (0.3, 1.1)) == pytest.approx((mmd2(x, y, 0.3) + mmd2(x, y, 1.1)) / 2, rel=1e-10)
    hs = kernel_bandwidths(x, (0.5, 2.0))
    assert hs == pytest.approx((0.5 * median_bandwidth(x), 2.0 * median_bandwidth(x)))
    with pytest.raises(ValueError, match="bandwidth"):
        mmd2(x, y, (0.3, -1.0))


def test_variance_ratios_are_one_for_the_data_itself_and_the_scale_squared_for_a_scaled_copy():
    """A second draw from the reference's own distribution has ratios near 1 on every leading component; a
    copy scaled by c (and shifted) has exactly c² on every one; the components come largest first."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=(6, 6))
    cov = a @ a.T + 0.1 * np.eye(6)
    reference = rng.multivariate_normal(np.arange(6.0), cov, size=20000)
    other = rng.multivariate_normal(np.arange(6.0), cov, size=20000)
    ratios = variance_ratios(other, reference, 4)
    assert ratios.shape == (4,)
    np.testing.assert_allclose(ratios, 1.0, atol=0.05)
    for c in (0.5, 1.3):
        np.testing.assert_allclose(variance_ratios(c * reference + 7.0, reference), c**2, rtol=1e-10)
    assert variance_ratios(other, reference, 99).shape == (6,)  # at most the dimension
    # along a component the sample does not stretch, the ratio stays 1: stretch only the leading direction
    _, v = np.linalg.eigh(np.cov(reference, rowvar=False))
    lead = v[:, -1]
    stretched = reference + 0.5 * np.outer((reference - reference.mean(0)) @ lead, lead)
    r = variance_ratios(stretched, reference, 3)
    assert r[0] == pytest.approx(2.25, rel=1e-10) and r[1:] == pytest.approx([1.0, 1.0], rel=1e-10)
    # the axes computed once (a thin SVD) give the same ratios as the eigendecomposition of the covariance
    w, v = np.linalg.eigh(np.cov(reference, rowvar=False))
    directions, variances = principal_axes(reference, 3)
    np.testing.assert_allclose(variances, w[::-1][:3], rtol=1e-10)
    np.testing.assert_allclose(np.abs(directions.T @ v[:, ::-1][:, :3]), np.eye(3), atol=1e-8)
    np.testing.assert_array_equal(
        variance_ratios(other, reference, 3, axes=(directions, variances)), variance_ratios(other, reference, 3)
    )
    with pytest.raises(ValueError, match="spread"):
        principal_axes(reference[:3], 5)  # three points span at most two directions
    with pytest.raises(ValueError, match="same D"):
        variance_ratios(other[:, :3], reference)
    with pytest.raises(ValueError, match="spread"):
        variance_ratios(other, np.zeros((10, 6)))


def test_multi_bandwidth_mmd_sees_the_modes_the_median_misses():
    """On the 2-D mixture a Gaussian with the data's mean and covariance fills the ring's hole; at the median
    bandwidth alone that barely shows, the kernel with smaller bandwidths sees it clearly (same samples)."""
    from explorables.dcdm.data import sample_mixture
    from explorables.dcdm.experiment import gaussian_fit_samples
    from explorables.dcdm.metrics import kernel_bandwidths, median_bandwidth

    rng = np.random.default_rng(5)
    a, _ = sample_mixture(400, 6, 0.25, rng)
    b, _ = sample_mixture(400, 6, 0.25, rng)
    g = gaussian_fit_samples(a, 400, 1)
    h, hs = median_bandwidth(b), kernel_bandwidths(b)
    single, multi = mmd2(g, b, h) - mmd2(a, b, h), mmd2(g, b, hs) - mmd2(a, b, hs)
    assert multi > 3 * single and multi > 0.01


def test_centres_start_off_the_data_and_fixed_centres_stay_fixed():
    """Every concept arm of one seed starts from the same centres, near the data mean and away from the
    training inputs (not exemplars); the fixed-centres arm ends where it started, the learned arms do not."""
    from explorables.dcdm.data import mixture_data
    from explorables.dcdm.training import initial_centres

    data = mixture_data(300, 50, 6, 0.25, 0)
    x = data.x_train
    start = initial_centres(x, 6, 11)
    nearest = torch.cdist(start, x).min(1).values
    spacing = torch.cdist(x[:100], x[100:]).min(1).values.median()  # typical gap between nearby inputs
    assert (nearest > 5 * spacing).all()  # every start is far from every training input (the ring's hole)
    assert torch.equal(start, initial_centres(x, 6, 11)) and not torch.equal(start, initial_centres(x, 6, 12))
    settings = TrainSettings(6, 30, 10, 32, 1e-2, 0.003, 0.3)
    models = train_concept_models(
        x, settings, lambda: MLPEncoder(2, 6, 16, 1), lambda: MLPDenoiser(2, 10, 16, 1), seeds=(0, 1)
    )
    for i, s in enumerate(models.seeds):
        begin = initial_centres(x, 6, member_seed(0, s))
        assert torch.equal(models.centres[models.index("fixed_centres", i)], begin)
        assert not torch.allclose(models.centres[models.index("dcdm", i)], begin)
        assert (models.centres[models.index("ddpm", i)] == 0).all()
    with pytest.raises(ValueError, match="noise"):
        initial_centres(x, 6, 0, noise=-1.0)


def test_denoising_loss_per_level_shape_and_pairing():
    """One error per member and noise level; the same seed gives the same draws (the arms are paired), and
    an oracle-free property: near t = T - 1, x_t is almost m + eps, so a denoiser returning x_t - m is close
    there and far off at t = 0."""
    from explorables.dcdm.data import mixture_data

    data = mixture_data(200, 40, 6, 0.25, 0)
    settings = TrainSettings(6, 5, 20, 32, 1e-2, 0.003, 0.3)
    models = train_concept_models(
        data.x_train, settings, lambda: MLPEncoder(2, 6, 16, 1), lambda: MLPDenoiser(2, 20, 16, 1), seeds=(0,)
    )
    a = models.denoising_loss(data.x_test, [0, 10, 19], seed=4)
    assert a.shape == (len(models.arms), 3)
    assert torch.equal(a, models.denoising_loss(data.x_test, [0, 10, 19], seed=4))

    models.denoiser = type("E", (), {"__call__": lambda self, x_t, t, m: x_t - m})()
    b = models.denoising_loss(data.x_test, [0, 19], seed=4)
    assert (b[:, 1] < 0.3).all() and (b[:, 0] > 0.5).all()


def test_denoising_loss_per_level_equals_a_brute_force_loop():
    """The batched per-level error equals, for every member, level and input one by one, the Dirichlet-mean
    centre m = (alpha / sum alpha) C, x_t = sqrt(abar) x + (1 - sqrt(abar)) m + sqrt(1 - abar) eps written
    out by hand, and || eps - eps_theta(x_t, t, m) ||^2 / D averaged over the inputs (same noise draws)."""
    from explorables.dcdm.data import mixture_data

    data = mixture_data(120, 7, 4, 0.25, 1)
    settings = TrainSettings(4, 8, 12, 16, 1e-2, 0.003, 0.3)
    models = train_concept_models(
        data.x_train, settings, lambda: MLPEncoder(2, 4, 8, 1), lambda: MLPDenoiser(2, 12, 8, 1), seeds=(0, 3)
    )
    x, steps = data.x_test, [0, 5, 11]
    got = models.denoising_loss(x, steps, seed=9)
    gen = torch.Generator().manual_seed(9)
    eps_of = {t: torch.randn(x.shape, generator=gen) for t in steps}  # one draw per level, shared by the arms
    for e in range(models.n_members):
        arm = models.arms[e // len(models.seeds)]
        enc, den = models.encoder.member(e), models.denoiser.member(e)
        for j, t in enumerate(steps):
            ab = float(models.schedule.alpha_bars[t])
            errors = []
            for i in range(len(x)):
                h = enc(x[i])
                w = h.softmax(-1) if arm == "softmax" else M.concentrations(h) / M.concentrations(h).sum()
                m = w @ models.centres[e]
                eps = eps_of[t][i]
                x_t = ab**0.5 * x[i] + (1 - ab**0.5) * m + (1 - ab) ** 0.5 * eps
                errors.append(float(((eps - den(x_t, torch.tensor(t), m)) ** 2).mean()))
            assert abs(float(got[e, j]) - np.mean(errors)) < 1e-5, (arm, t)


def test_digit_centres_start_away_from_every_training_image():
    """On the digits too the concept arms start off the data: no start is a training image, or near one (every
    start is further from its nearest training image than a typical image is from its nearest neighbour)."""
    from explorables.dcdm.training import initial_centres

    data = Dt.digits_data(20, 100, 0)
    x = data.x_train
    start = initial_centres(x, 10, member_seed(0, 0))
    nearest = torch.cdist(start, x).min(1).values
    d = torch.cdist(x, x)
    d.fill_diagonal_(float("inf"))
    typical = d.min(1).values.median()
    assert (nearest > typical).all()
    # and every start sits nearer the data mean than any training image does
    assert (start - x.mean(0)).norm(dim=1).max() < (x - x.mean(0)).norm(dim=1).min()


def test_data_floors_are_one_draw_per_seed():
    """One floor per seed index, each from its own draw of training inputs (as many as asked, at most the
    training set), reproducible from the seed; the mean of the draws is near the held-out data's own floor."""
    from explorables.dcdm.data import mixture_data
    from explorables.dcdm.metrics import kernel_bandwidths

    data = mixture_data(800, 200, 6, 0.25, 0)
    xtr, xte = data.x_train.numpy(), data.x_test.numpy()
    h = kernel_bandwidths(xte)
    a = X.data_floors(xtr, xte, h, 3, 400, seed=5)
    assert len(a) == 3 and len(set(a)) == 3
    assert a == X.data_floors(xtr, xte, h, 3, 400, seed=5) and a != X.data_floors(xtr, xte, h, 3, 400, seed=6)
    assert X.data_floors(xtr, xte, h, 2, 10**6, seed=5)[0] == pytest.approx(mmd2(xtr, xte, h))  # capped: all
    assert abs(np.mean(a)) < 0.01


def test_the_quality_rows_subtract_each_seeds_own_floor():
    """Paired floors: when every seed's scores move with that seed's floor, the per-seed floor cancels the
    movement (a tight interval), while one floor for all seeds leaves it in the interval; a floor of the wrong
    length is refused."""
    floors = np.array([-0.004, 0.0, 0.004])
    ddpm = floors + 0.010
    dcdm = floors + 0.0115  # 1.15 x the DDPM's excess: within the 1.25 margin on every seed
    assert C.quality_verdict(dcdm, ddpm, floors).startswith("yes")
    assert C.quality_verdict(dcdm, ddpm, 0.0).startswith("unclear")
    assert C.quality_gate(ddpm, 0.05, floors).startswith("pass")
    np.testing.assert_allclose(C.quality_margin(ddpm, floors), C.QUALITY_MARGIN * 0.010)
    with pytest.raises(ValueError, match="one per seed"):
        C.quality_verdict(dcdm, ddpm, [0.0, 0.0])


def test_verdicts_follow_their_criteria():
    hi, lo, mid = [0.80, 0.82, 0.81], [0.30, 0.31, 0.29], [0.2, 0.6, 0.4]
    assert C.discovery_verdict(hi, hi, lo).startswith("yes")
    assert C.discovery_verdict(hi, [0.95, 0.96, 0.97], lo).startswith("partly")  # learned, but k-means is better
    assert C.discovery_verdict(lo, hi, lo).startswith("no")
    assert C.discovery_verdict(mid, [0.95, 0.96, 0.97], lo).startswith("unclear")
    # paired by seed: a mean gain that one seed contradicts is not a "yes"
    assert not C.discovery_verdict([0.9, 0.5, 0.8], hi, [0.05, 0.55, 0.3]).startswith("yes")
    abl = {"fixed_centres": lo, "softmax": hi, "no_kl": hi}
    assert C.ablation_verdict(hi, abl).startswith("partly") and "yes: fixed centres" in C.ablation_verdict(hi, abl)
    assert C.ablation_verdict(hi, dict.fromkeys(abl, lo)).startswith("yes")
    # level with every ablation (a tight interval around 0) reads no, not unclear: the margin is an effect size
    assert C.ablation_verdict(lo, dict.fromkeys(abl, lo)).startswith("no")
    assert C.ablation_verdict(mid, dict.fromkeys(abl, lo)).startswith("unclear")
    assert C.purity_verdict(hi, lo, lo).startswith("yes")
    assert C.purity_verdict(hi, lo, hi).startswith("partly")  # fixed centres give samples as pure
    assert C.purity_verdict(lo, lo, lo).startswith("no")
    assert C.purity_verdict([0.5, 0.9, 0.7], [0.55, 0.85, 0.7], [0.55, 0.85, 0.7]).startswith("unclear")
    # quality, on input-free samples: the margin is a quarter of the DDPM's own excess over the data floor
    ddpm, near, far = [0.010, 0.0101, 0.0102], [0.0101, 0.0102, 0.010], [0.02, 0.021, 0.022]
    assert C.quality_verdict(near, ddpm, 0.0).startswith("yes")
    assert C.quality_verdict(far, ddpm, 0.0).startswith("no")
    assert C.quality_verdict([0.008, 0.0125, 0.0115], ddpm, 0.0).startswith("unclear")


def test_the_quality_margin_scales_with_the_ddpm_excess():
    """The allowed cost is a fraction of the DDPM's excess over the floor: it grows and shrinks with it, a
    DCDM twice as far from the data as the DDPM never reads "no cost", and nothing about a Gaussian fit enters."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        floor = float(rng.uniform(-0.002, 0.002))
        excess = rng.uniform(0.001, 0.05) * (1 + 0.01 * rng.standard_normal(3))
        ddpm = floor + excess
        np.testing.assert_allclose(C.quality_margin(ddpm, floor), C.QUALITY_MARGIN * excess)
        np.testing.assert_allclose(C.quality_margin(ddpm, floor, 0.5), 2 * C.quality_margin(ddpm, floor, 0.25))
        twice = floor + 2 * excess
        assert C.quality_verdict(twice, ddpm, floor).startswith("no")
        within = floor + (1 + 0.5 * C.QUALITY_MARGIN) * excess
        assert C.quality_verdict(within, ddpm, floor).startswith("yes")
    # the same absolute gap passes against a poor DDPM and fails against a good one
    gap = 0.004
    poor, good = [0.04, 0.0401, 0.0402], [0.004, 0.0041, 0.0042]
    assert C.quality_verdict([v + gap for v in poor], poor, 0.0).startswith("yes")
    assert C.quality_verdict([v + gap for v in good], good, 0.0).startswith("no")


def test_a_wide_interval_worse_on_average_reads_no():
    """Non-inferiority: a cost beyond the margin on average reads "no" however wide the interval, never
    "unclear" or "yes"; a mean within the margin with a wide interval is "unclear"."""
    ddpm = [0.010, 0.010, 0.010]
    wide_worse = [0.002, 0.030, 0.025]  # mean cost well above the margin, low end below the DDPM
    assert C.interval(np.subtract(wide_worse, ddpm)).low < 0
    assert C.quality_verdict(wide_worse, ddpm, 0.0).startswith("no")
    wide_within = [0.004, 0.016, 0.010]
    assert C.quality_verdict(wide_within, ddpm, 0.0).startswith("unclear")


def test_mechanism_and_intervention_verdicts_follow_their_criteria():
    # the mechanism: DCDM's denoising error a fifth below both controls; only below the DDPM; level with both
    low, high = [0.2, 0.21, 0.19], [0.4, 0.41, 0.4]
    assert C.mechanism_verdict(low, high, high).startswith("yes")
    assert C.mechanism_verdict(low, high, low).startswith("partly")  # fixed centres reduce it as much
    assert C.mechanism_verdict(high, high, high).startswith("no")
    assert C.mechanism_verdict([0.2, 0.4, 0.3], [0.3, 0.35, 0.4], [0.3, 0.35, 0.4]).startswith("unclear")
    assert C.intervention_verdict([0.7, 0.72, 0.71], [0.05, 0.06, 0.04]).startswith("yes")
    assert C.intervention_verdict([0.3, 0.32, 0.31], [0.05, 0.06, 0.04]).startswith("no")
    assert C.intervention_verdict([0.3, 0.7, 0.5], [0.0, 0.0, 0.0]).startswith("unclear")
    with pytest.raises(ValueError, match="same length"):
        C.intervention_verdict([0.7, 0.7], [0.1, 0.1, 0.1])


def test_gates_and_the_check_follow_their_criteria():
    # the clusters gate tests the data: k-means against its own score on permuted labels (chance)
    assert C.cluster_gate([0.8, 0.82, 0.81], [0.01, 0.012, 0.011]).startswith("pass")
    assert C.cluster_gate([0.02, 0.015, 0.018], [0.01, 0.012, 0.011]).startswith("fail")  # no structure found
    assert C.classifier_gate(0.95).startswith("pass") and C.classifier_gate(0.5).startswith("fail")
    assert C.quality_gate([0.001, 0.0011, 0.0012], 0.01, 0.0).startswith("pass")
    assert C.quality_gate([0.008, 0.009, 0.0085], 0.01, 0.0).startswith("fail")
    # measured from the data floor: what held-out data itself scores is not held against the DDPM
    ddpm = [0.0059, 0.006, 0.0061]
    assert C.quality_gate(ddpm, 0.01, 0.0).startswith("fail")
    assert C.quality_gate(ddpm, 0.01, 0.004).startswith("pass")
    assert C.kl_verdict(C.kl_check_error()).startswith("pass") and C.kl_verdict(1.0).startswith("fail")
    assert drive(C.CRITERIA) == []
    # the samples of the quality gate's reference have the data's mean and covariance
    x = np.random.default_rng(0).normal(size=(4000, 3)) @ np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 0.2]])
    g = X.gaussian_fit_samples(x, 20000, seed=1)
    assert np.allclose(g.mean(0), x.mean(0), atol=0.03) and np.allclose(np.cov(g.T), np.cov(x.T), atol=0.05)


def _gaussian_fit_samples_through_the_rows(x: np.ndarray, n: int, seed: int) -> np.ndarray:
    """The law of :func:`X.gaussian_fit_samples` (the mean and covariance of ``x``) for ``x`` with fewer rows
    than columns: ``z @ (x - mean) / sqrt(rows - 1)`` has exactly the sample covariance, without the
    eigendecomposition of the columns' covariance (3,072 x 3,072 for CIFAR, about 60% of the paper-path
    test's CPU; the real function is checked in ``test_gates_and_the_check_follow_their_criteria``)."""
    x = np.asarray(x, dtype=np.float64)
    assert x.ndim == 2 and 2 <= len(x) < x.shape[1]
    z = np.random.default_rng(seed).standard_normal((n, len(x)))
    return x.mean(0) + z @ (x - x.mean(0)) / np.sqrt(len(x) - 1)


def test_the_gaussian_reference_through_the_rows_has_the_datas_covariance():
    x = np.random.default_rng(3).normal(size=(5, 8))  # fewer rows than columns, as in the paper-path test
    for draw in (_gaussian_fit_samples_through_the_rows, X.gaussian_fit_samples):
        draws = draw(x, 100_000, seed=4)
        assert draws.shape == (100_000, 8)
        assert np.allclose(draws.mean(0), x.mean(0), atol=0.03) and np.allclose(np.cov(draws.T), np.cov(x.T), atol=0.06)


def test_paper_path_reads_cifar_from_the_data_root_and_trains_unets(tmp_path, monkeypatch):
    monkeypatch.setattr(X, "gaussian_fit_samples", _gaussian_fit_samples_through_the_rows)
    write_cifar(tmp_path, "cifar10", n_train=120, n_test=24, n_classes=3)
    data = Dt.cifar_data(str(tmp_path), 0, 20, seed=0)
    assert data.x_train.shape == (120, 3072) and data.x_test.shape == (20, 3072)
    assert data.x_train.min() >= -1 and data.x_train.max() <= 1
    assert data.decode(data.x_test[:2].numpy()).shape == (2, 32, 32, 3)
    unet = UNet(3, 32, 10, width=8, d_time=8)
    assert unet(torch.randn(2, 3072), torch.tensor([0, 5]), torch.randn(2, 3072)).shape == (2, 3072)
    cfg = X.DCDMConfig.preset(
        "paper",
        device="cpu",
        data_root=str(tmp_path),
        n_concepts=3,
        n_diffusion_steps=4,
        n_image_steps=2,
        encoder_d_hidden=8,
        denoiser_d_hidden=8,
        batch_size=4,
        n_test=20,
        n_samples_per_concept=2,
        n_intervene=3,
        n_snapshots=2,
        seeds=(0, 1),
        n_mixture_train=100,
        n_mixture_steps=2,
        mixture_d_hidden=8,
    )
    summary = X._images(cfg, None, False)[0]
    assert summary["dataset"] == "cifar10" and set(summary["arms"]) == set(ARMS)
    with pytest.raises(ValueError, match="data-root"):
        Dt.cifar_data("", 0, 6, seed=0)
    with pytest.raises(ValueError, match="network"):
        X.DCDMConfig.preset("book", network="unet")


def _fake_results(
    dcdm_nmi: float,
    kmeans_nmi: float,
    dcdm_mmd: float,
    ddpm_mmd: float,
    purity_fixed: float = 0.3,
    denoise: tuple[float, float, float] | None = None,
):
    """A summary with the keys claims() reads; each per-seed list varies a little around its value.
    ``denoise``: the mean denoising errors of DCDM, fixed centres and the DDPM (no mechanism row without)."""
    per = lambda m: [m - 0.005, m, m + 0.005]  # noqa: E731
    stat = lambda m: {"mean": m, "sd": 0.005}  # noqa: E731

    def arm(nmi, purity, mmd, err=None):
        keys = {"nmi": nmi, "ari": 0.2, "purity": purity, "mmd2": mmd, "mmd2_prior": mmd}
        keys |= {"var_ratio_min": 0.85, "var_ratio_max": 1.2, "var_ratio_prior_min": 0.8, "var_ratio_prior_max": 1.25}
        if err is not None:
            keys["denoise_mean"] = err
        return {**{k: stat(v) for k, v in keys.items()}, **{f"{k}_per_seed": per(v) for k, v in keys.items()}}

    errs = denoise or (None, None, None)
    arms = {a: arm(0.3, 0.3, ddpm_mmd, errs[2]) for a in ARMS}
    arms["dcdm"] = arm(dcdm_nmi, 0.8, dcdm_mmd, errs[0])
    arms["fixed_centres"] = arm(0.3, purity_fixed, ddpm_mmd, errs[1])
    untrained = {"nmi": stat(0.2), "nmi_per_seed": per(0.2)}
    part = {
        "arms": arms,
        "kmeans": {"nmi": stat(kmeans_nmi), "nmi_per_seed": per(kmeans_nmi), "nmi_chance_per_seed": per(0.01)},
        "untrained": untrained,
        "mmd2_floor": 0.0,
        "mmd2_gaussian": 1.0,
        "var_ratio_gaussian": {"min": 0.97, "max": 1.04},
        "var_ratio_components": 10,
        "classifier_test_accuracy": 0.95,
        "noise_levels": [0, 5, 9],
    }
    return X.DCDMResults(X.DCDMConfig.preset("smoke"), {"mixture": part, "images": copy.deepcopy(part)})


def test_mechanism_row_and_sentence_follow_the_verdict():
    both = _fake_results(0.75, 0.76, 0.1, 0.1, denoise=(0.2, 0.4, 0.5))
    assert "clearly below fixed ones" in C.mechanism_sentence(both)
    rows = [r for r in C.claims(both) if r.claim == "the weighted centre reduces denoising error"]
    assert len(rows) == 2 and all(r.verdict.startswith("yes") for r in rows)
    only_ddpm = _fake_results(0.75, 0.76, 0.1, 0.1, denoise=(0.2, 0.2, 0.5))
    assert "not clearly better than fixed ones" in C.mechanism_sentence(only_ddpm)
    level = _fake_results(0.75, 0.76, 0.1, 0.1, denoise=(0.5, 0.5, 0.5))
    assert "does not lower the denoising error" in C.mechanism_sentence(level)


def test_moments_sentence_quotes_the_ratios_and_explains_only_a_failed_gate():
    passed = _fake_results(0.75, 0.76, 0.1, 0.1)  # DDPM at 0.1 of the Gaussian fit's excess: the gate passes
    text = C.moments_sentence(passed, "images")
    assert "10 leading principal components" in text and "0.85–1.20" in text and "0.80–1.25" in text
    assert "0.97–1.04" in text and "dcdm_room_rule.md" not in text
    failed = _fake_results(0.75, 0.76, 0.9, 0.9)  # DDPM as far as the fit: the gate fails
    text = C.moments_sentence(failed, "images")
    assert "cannot give the DDPM the edge" in text and "benchmarks/dcdm_room_rule.md" in text


def test_sentences_follow_the_verdicts():
    good = _fake_results(0.75, 0.76, 0.1, 0.1)
    assert "about as well as k-means" in C.discovery_sentence(good, "images")
    assert "not further from the data" in C.quality_sentence(good)
    assert C.prototype_sentence(good).startswith("On the 2-D mixture, the learned concepts give samples purer")
    assert C.ablation_sentence(good).startswith("DCDM's concepts track the labels clearly better")
    rows = C.claims(good)
    assert [r.kind for r in rows].count("check") == 1 and [r.kind for r in rows].count("gate") == 6
    assert len([r for r in rows if r.kind == "claim"]) == 8  # no intervention rows without intervention scores
    worse = _fake_results(0.5, 0.75, 0.9, 0.1)
    assert "only one of the two parts holds" in C.discovery_sentence(worse, "mixture")
    assert "further from the data than the plain DDPM's by more than the margin" in C.quality_sentence(worse)
    # the verdict reads only the input-free samples: near-reconstructions from training codes do not rescue it
    prior_worse = _fake_results(0.75, 0.76, 0.1, 0.1)
    for part in ("mixture", "images"):
        prior_worse.summary[part]["arms"]["dcdm"]["mmd2_per_seed"] = [0.0, 0.0001, 0.0002]
        prior_worse.summary[part]["arms"]["dcdm"]["mmd2_prior_per_seed"] = [0.5, 0.51, 0.49]
    assert "further from the data than the plain DDPM's by more than the margin" in C.quality_sentence(prior_worse)
    quality_rows = [r for r in C.claims(prior_worse) if r.claim == "concept discovery does not cost generation quality"]
    assert len(quality_rows) == 2 and all(r.verdict.startswith("no") for r in quality_rows)
    assert all("near reconstruction" in r.measured for r in quality_rows)  # kept only as a labelled measure
    posterior_worse = _fake_results(0.75, 0.76, 0.1, 0.1)
    for part in ("mixture", "images"):
        posterior_worse.summary[part]["arms"]["dcdm"]["mmd2_per_seed"] = [0.5, 0.51, 0.49]
    assert "not further from the data" in C.quality_sentence(posterior_worse)
    as_pure = _fake_results(0.75, 0.76, 0.1, 0.1, purity_fixed=0.8)
    assert "whether or not the centre was learned" in C.prototype_sentence(as_pure)
    # a failed gate turns its claims untested, and the sentences say so
    weak = _fake_results(0.75, 0.76, 0.1, 0.1)
    weak.summary["images"]["classifier_test_accuracy"] = 0.5
    assert "too weak to judge purity" in C.prototype_sentence(weak)
    assert "the learned concepts give samples purer" in C.prototype_sentence(weak)  # the mixture's still reads yes


def test_the_control_is_the_encoder_the_trained_models_started_from():
    cfg = X.DCDMConfig.preset("smoke", seeds=(3, 4))
    data = Dt.mixture_data(200, 10, 4, 0.25, seed=0)
    make_encoder = lambda: MLPEncoder(2, 4, 16, 2)  # noqa: E731
    seen = {}

    def at_start(step, models):
        idx = [models.index("dcdm", i) for i in range(len(models.seeds))]
        seen[step] = models.assign(data.x_train)[idx]

    torch.manual_seed(0)
    state = torch.get_rng_state()
    control = X.untrained_assignment(cfg, make_encoder, data.x_train)
    assert torch.equal(torch.get_rng_state(), state)  # the control leaves the global generator alone
    train_concept_models(
        data.x_train,
        TrainSettings(4, 2, 10, 16, 1e-3, 0.0, 0.3),
        make_encoder,
        lambda: MLPDenoiser(2, 10, 16, 1),
        seeds=cfg.seeds,
        base_seed=cfg.seed,
        arms=("dcdm", "softmax"),
        snapshot_steps=(0,),
        on_snapshot=at_start,
    )
    assert np.array_equal(control, seen[0])


def _tiny_dcdm_and_ddpm(seeds: tuple[int, ...]):
    """A DCDM and a plain-DDPM arm trained for a few steps on a small mixture (the sampling tests' models)."""
    data = Dt.mixture_data(200, 10, 4, 0.25, seed=0)
    models = train_concept_models(
        data.x_train,
        TrainSettings(4, 3, 10, 16, 1e-3, 0.003, 0.3),
        lambda: MLPEncoder(2, 4, 16, 2),
        lambda: MLPDenoiser(2, 10, 16, 1),
        seeds=seeds,
        arms=("dcdm", "ddpm"),
    )
    return data, models


def test_samples_from_the_prior_look_at_no_input_and_leave_the_global_generator_alone():
    """Generation from the model's own Dir(alpha_0) (the sample-quality check): seeded, the global random state
    untouched, one sample per member; the plain DDPM arm (centres at 0) samples with m = 0."""
    _, models = _tiny_dcdm_and_ddpm(seeds=(0, 1))
    state = torch.get_rng_state()
    a = models.sample_prior(7, 0.3, seed=3)
    assert torch.equal(torch.get_rng_state(), state)
    assert a.shape == (4, 7, 2) and torch.isfinite(a).all()
    assert torch.equal(a, models.sample_prior(7, 0.3, seed=3))
    assert not torch.equal(a, models.sample_prior(7, 0.3, seed=4))
    ddpm = models.index("ddpm", 0)
    zero = M.reverse_process(models.denoiser, models.schedule, torch.zeros(4, 7, 2), noise=generator_noise(3))[ddpm]
    assert torch.allclose(a[ddpm], zero, atol=1e-6)


def test_input_free_samples_never_read_the_data():
    """The quality claim's samples: drawing from the prior never calls the encoder (no input is inferred from),
    and they do not change when the training data the model was fit on is overwritten."""
    data, models = _tiny_dcdm_and_ddpm(seeds=(0,))
    before = models.sample_prior(9, 0.3, seed=5)

    def no_input(*args, **kwargs):
        raise AssertionError("input-free generation called the encoder")

    models.encoder.forward = no_input
    data.x_train.normal_()
    assert torch.equal(before, models.sample_prior(9, 0.3, seed=5))


def test_the_clusters_gate_chance_level_is_near_zero_and_finds_no_structure_where_there_is_none():
    labels = np.repeat(np.arange(5), 200)
    perfect = labels.copy()
    chance = X.chance_nmi(labels, perfect, seed=0)
    assert 0 <= chance < 0.05 and C.cluster_gate([1.0, 1.0, 0.999], [chance] * 3).startswith("pass")
    rng = np.random.default_rng(1)
    unrelated = [cluster_scores(labels, rng.integers(0, 5, labels.size))["nmi"] for _ in range(3)]
    chances = [X.chance_nmi(labels, rng.integers(0, 5, labels.size), seed=s) for s in range(3)]
    assert C.cluster_gate(unrelated, chances).startswith("fail")
    assert X.chance_nmi(labels, perfect, seed=0) == X.chance_nmi(labels, perfect, seed=0)  # seeded


def test_concept_weights_lie_on_the_simplex_and_the_softmax_arm_is_deterministic():
    torch.manual_seed(7)
    h = torch.randn(2, 5, 4) * 3
    pi = M.concept_weights(h, torch.tensor([False, True]))
    assert pi.shape == (2, 5, 4) and (pi >= 0).all()
    torch.testing.assert_close(pi.sum(-1), torch.ones(2, 5))
    torch.testing.assert_close(pi[1], h[1].softmax(-1))  # the softmax member: softmax(h), no draw
    alpha = M.concentrations(h)
    assert float(alpha.min()) >= np.exp(M.LOG_ALPHA_RANGE[0]) - 1e-6
    assert float(alpha.max()) <= np.exp(M.LOG_ALPHA_RANGE[1]) + 1e-3
    with pytest.raises(ValueError, match="softmax"):
        M.concept_weights(h, torch.tensor([True, False, True]))


def test_a_tiny_run_scores_every_arm_and_its_headline_quotes_the_summary():
    cfg = X.DCDMConfig.preset(
        "smoke",
        seeds=(0,),
        n_diffusion_steps=3,
        n_modes=3,
        n_mixture_train=40,
        n_mixture_concepts=3,
        n_mixture_steps=2,
        mixture_d_hidden=4,
        n_concepts=3,
        d_pca=4,
        n_test=20,
        n_image_train=60,
        n_image_steps=2,
        encoder_d_hidden=4,
        denoiser_d_hidden=4,
        denoiser_n_layers=1,
        batch_size=8,
        n_samples_per_concept=2,
        n_intervene=2,
        n_snapshots=2,
    )
    results = X.run(cfg)
    lines = X.headline(results)
    assert len(lines) == 2
    for part, line in zip(("mixture", "images"), lines, strict=True):
        assert set(results.summary[part]["arms"]) == set(ARMS)
        nmi = results.summary[part]["arms"]["dcdm"]["nmi"]["mean"]
        assert line.startswith(f"{part}: DCDM NMI {nmi:.3f}")
        d = results.summary[part]
        assert d["var_ratio_components"] == min(10, 2 if part == "mixture" else cfg.d_pca)
        for arm in ARMS:
            for key in ("var_ratio", "var_ratio_prior"):
                lo, hi = d["arms"][arm][f"{key}_min"]["mean"], d["arms"][arm][f"{key}_max"]["mean"]
                assert 0 < lo <= hi
        assert 0 < d["var_ratio_gaussian"]["min"] <= d["var_ratio_gaussian"]["max"]
    assert "leading principal components" in C.moments_sentence(results, "images")
    with pytest.raises(ValueError, match="results"):
        X.headline(X.DCDMResults(cfg, {"mixture": {}}))


def _tiny_config(**changes) -> X.DCDMConfig:
    return X.DCDMConfig.preset(
        "smoke", seeds=(0, 1), n_diffusion_steps=4, n_modes=3, n_mixture_train=60, n_mixture_concepts=3,
        n_mixture_steps=6, mixture_d_hidden=8, n_concepts=3, d_pca=4, n_test=30, n_image_train=80, n_image_steps=6,
        encoder_d_hidden=8, denoiser_d_hidden=8, denoiser_n_layers=1, batch_size=8, n_samples_per_concept=3,
        n_intervene=4, n_snapshots=2, **changes,
    )  # fmt: skip


def test_the_mixture_run_in_a_worker_process_gives_the_in_process_numbers(monkeypatch):
    """processes=2: a spawned worker runs the mixture while this process runs the images; every number and
    curve equals the in-process run's (processes=1), in the same order; only the part times differ."""
    submitted = []

    class Pool(X.ProcessPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            submitted.append(args[1])
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(X, "ProcessPoolExecutor", Pool)
    alone = X.run(_tiny_config(processes=1))
    assert submitted == []
    shared = X.run(_tiny_config(processes=2))
    assert submitted == ["mixture"]
    assert list(shared.summary) == ["mixture", "images", "timings"]
    assert list(shared.summary["timings"]) == ["mixture_s", "images_s"]
    assert_same_tree({k: v for k, v in alone.summary.items() if k != "timings"},
                     {k: v for k, v in shared.summary.items() if k != "timings"})  # fmt: skip
    assert_same_tree(alone.curves, shared.curves, ordered=True)


def test_a_resumed_run_with_its_parts_stored_starts_no_worker(tmp_path, monkeypatch):
    cfg = _tiny_config(processes=2)
    whole = X.run(cfg, checkpoint=Checkpointer(tmp_path, every_s=0.0))
    submitted = []
    monkeypatch.setattr(X, "ProcessPoolExecutor", lambda *a, **k: submitted.append(a))
    resumed = X.run(cfg, checkpoint=Checkpointer(tmp_path, every_s=0.0, resume=True))
    assert submitted == []
    assert_same_tree(whole.curves, resumed.curves, ordered=True)


def test_processes_is_checked():
    with pytest.raises(ValueError, match="processes"):
        X.DCDMConfig.preset("smoke", processes=-1).validated()


def test_adam_with_foreach_trains_the_per_tensor_loops_models_bit_for_bit(monkeypatch):
    """The training loop's Adam(foreach=True), one batched update for all parameters, gives the per-tensor
    loop's parameters bit for bit (torch's CPU default), so the book's numbers do not depend on it."""
    data = Dt.mixture_data(200, 10, 4, 0.25, seed=0)
    settings = TrainSettings(3, 25, 10, 16, 5e-3, 0.003, 0.3)

    def train():
        torch.manual_seed(7)
        return train_concept_models(
            data.x_train, settings, lambda: MLPEncoder(2, 3, 8, 2), lambda: MLPDenoiser(2, 10, 8, 2), seeds=(0, 1)
        )

    batched = train()
    adam = torch.optim.Adam
    monkeypatch.setattr(torch.optim, "Adam", lambda params, **kw: adam(params, **{**kw, "foreach": False}))
    looped = train()
    assert torch.equal(batched.centres, looped.centres)
    for a, b in zip([*batched.encoder.parameters(), *batched.denoiser.parameters()],
                    [*looped.encoder.parameters(), *looped.denoiser.parameters()], strict=True):  # fmt: skip
        assert torch.equal(a, b)
    assert batched.losses == looped.losses


def test_dcdm_clamps_the_cosine_schedule_at_its_own_max_beta():
    """dcdm's schedule (core.diffusion's, with MAX_BETA 0.5 by default) keeps the last reverse step's division by
    sqrt(alpha) small; the book page and every call site rely on the default."""
    assert M.MAX_BETA == 0.5
    assert float(M.NoiseSchedule.cosine(10).betas.max()) == pytest.approx(0.5)
    assert isinstance(M.NoiseSchedule.cosine(10), M.NoiseSchedule)
    with pytest.raises(ValueError, match="n_steps"):
        M.NoiseSchedule.cosine(0)
