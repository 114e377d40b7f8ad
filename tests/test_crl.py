"""Chapter 17 (crl): the generator, the MCC metric, the priors, the learner's inputs and the claimed direction."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
import torch
from scipy.stats import special_ortho_group
from torch import nn

from explorables.core.tables import apply_gates
from explorables.core.verdicts import drive
from explorables.crl import (
    MOTION_GAITS,
    MOTION_JOINTS,
    PATTERNS,
    CRLConfig,
    EnsembleVAE,
    changing_edges,
    correlation_matrix,
    default_graph,
    encode_means,
    fit,
    headline,
    make_arm_data,
    make_data,
    make_mixing,
    make_motion_data,
    make_scm,
    matched_correlations,
    mcc,
    mix,
    motion_scm,
    sample_latents,
    stick_figure,
)
from explorables.crl import experiment as crl_experiment
from explorables.crl.claims import (
    ABOVE_CHANCE,
    CRITERIA,
    GAP,
    MARGIN,
    PARENT_GAIN,
    beats_verdict,
    chance_check,
    claims,
    components_verdict,
    control_verdict,
    metric_check,
    motion_verdict,
    partial_verdict,
    pattern_word,
    recovery_gate,
)
from explorables.crl.scm import SEGMENTS, g, h

from .smoke_runs import smoke_run

# --- the metric ----------------------------------------------------------------------------------


def test_mcc_is_one_for_a_permuted_rescaled_shifted_copy():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((500, 4)) @ rng.standard_normal((4, 4))  # correlated latents
    perm = [2, 0, 3, 1]
    copy = z[:, perm] * np.array([-3.0, 0.5, 2.0, -0.1]) + 7.0
    assert np.allclose(matched_correlations(z, copy), 1.0)
    assert mcc(z, copy) == pytest.approx(1.0)


def test_spearman_mcc_is_one_for_monotone_component_maps():
    z = np.random.default_rng(1).standard_normal((400, 3))
    warped = np.column_stack([np.exp(z[:, 2]), z[:, 0] ** 3, -np.tanh(z[:, 1])])
    assert mcc(z, warped, "spearman") == pytest.approx(1.0)
    assert mcc(z, warped, "pearson") < 0.99


def test_mcc_is_near_zero_for_independent_noise():
    rng = np.random.default_rng(2)
    z, noise = rng.standard_normal((20_000, 3)), rng.standard_normal((20_000, 3))
    assert mcc(z, noise) < 0.03


def test_chance_level_is_set_by_the_dimension_of_the_whitened_latents():
    """A random rotation of the whitened latents scores about 0.83 MCC with three latents and much
    less with ten: why the page calls its three-latent MCCs hard to read. Rotating merely standardised,
    strongly correlated latents (the motion chain) would score far higher, which is why the chance
    level whitens first (issue 39 item 2)."""
    rng = np.random.default_rng(7)
    indep3, indep10 = rng.standard_normal((3000, 3)), rng.standard_normal((3000, 10))
    scm = make_scm(default_graph(3), None, 10, np.random.default_rng(3))
    z = sample_latents(scm, np.repeat(np.arange(10), 300), np.random.default_rng(4))
    c_chapter = crl_experiment.chance_mcc(z, 200, 0)
    c3, c10 = crl_experiment.chance_mcc(indep3, 200, 0), crl_experiment.chance_mcc(indep10, 200, 0)
    assert abs(c_chapter - c3) < 0.05
    assert c3 > 0.75
    assert c10 < c3 - 0.15
    angles = make_motion_data(motion_scm(np.random.default_rng(1)), 300, np.random.default_rng(2)).z
    standardised = (angles - angles.mean(0)) / angles.std(0)
    rotations = special_ortho_group.rvs(3, size=100, random_state=1)
    naive = np.median([mcc(angles, standardised @ r) for r in rotations])
    assert crl_experiment.chance_mcc(angles, 200, 0) < naive - 0.15


def test_chance_level_rotates_whitened_latents_and_knows_its_error():
    """The Pearson shortcut corr(z, w R) = corr(z, w) R and the Spearman ranking agree with scoring each
    rotated copy directly; the whitened latents are white; 500 rotations put the level's own standard
    error well under the margin."""
    scm = make_scm(default_graph(3), None, 10, np.random.default_rng(3))
    z = sample_latents(scm, np.repeat(np.arange(10), 100), np.random.default_rng(4))
    w = crl_experiment.whiten(z)
    np.testing.assert_allclose(np.cov(w.T, bias=True), np.eye(3), atol=1e-10)
    rotations = special_ortho_group.rvs(3, size=6, random_state=5)
    for kind in ("pearson", "spearman"):
        direct = [mcc(z, w @ r, kind) for r in rotations]
        np.testing.assert_allclose(crl_experiment.rotation_mccs(z, 6, 5, kind), direct, atol=1e-12)
    level, se = crl_experiment.chance_level(z, 500, 0)
    assert 0.6 < level < 0.95 and 0 < se <= ABOVE_CHANCE / 10
    with pytest.raises(ValueError, match="full-rank"):
        crl_experiment.whiten(np.column_stack([z[:, 0], z[:, 0], z[:, 1]]))


def test_chance_with_extra_latents_picks_the_best_of_more_rotated_coordinates():
    """The motion case scores three angles against six learned latents, the matching picking the best
    three. Its chance level rotates the three whitened angles together with three independent white
    dimensions (exactly white) and agrees with scoring each rotated copy directly."""
    angles = make_motion_data(motion_scm(np.random.default_rng(1)), 300, np.random.default_rng(2)).z
    w = crl_experiment.padded_white(angles, 6, 5)
    np.testing.assert_allclose(np.cov(w.T, bias=True), np.eye(6), atol=1e-10)
    np.testing.assert_allclose(w[:, :3], crl_experiment.whiten(angles))
    rotations = special_ortho_group.rvs(6, size=5, random_state=5)
    direct = [mcc(angles, w @ r) for r in rotations]
    np.testing.assert_allclose(crl_experiment.rotation_mccs(angles, 5, 5, n_latent=6), direct, atol=1e-12)
    # as many latents as targets: no padding, the plain chance level
    np.testing.assert_array_equal(
        crl_experiment.rotation_mccs(angles, 5, 5, n_latent=3), crl_experiment.rotation_mccs(angles, 5, 5)
    )
    with pytest.raises(ValueError, match="n_latent"):
        crl_experiment.padded_white(angles, 2, 0)


def test_the_motion_probe_reads_the_angles_and_nothing_else():
    """The motion gate's positive control: a supervised probe recovers the angles from the stick figure,
    and scores near zero on observations that do not hold them."""
    data = make_motion_data(motion_scm(np.random.default_rng(20)), 200, np.random.default_rng(21))
    assert crl_experiment.probe_mcc(data.x, data.z, 0) > 0.95
    noise = np.random.default_rng(3).standard_normal(data.x.shape)
    assert crl_experiment.probe_mcc(noise, data.z, 0) < 0.2


def test_matching_agrees_with_brute_force_over_permutations():
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = rng.standard_normal((50, 4)), rng.standard_normal((50, 4))
        b[:, 0] += a[:, 1]
        corr = correlation_matrix(a, b)
        best = max(sum(corr[i, p[i]] for i in range(4)) for p in itertools.permutations(range(4)))
        assert matched_correlations(a, b).sum() == pytest.approx(best)


def test_metric_refuses_bad_shapes():
    with pytest.raises(ValueError, match="z_true"):
        mcc(np.zeros((10, 3)), np.zeros((9, 3)))
    with pytest.raises(ValueError, match="kind"):
        mcc(np.zeros((10, 3)), np.zeros((10, 3)), "kendall")


# --- the generator -------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", PATTERNS)
def test_environment_changes_alter_exactly_the_stated_mechanisms(pattern):
    graph = default_graph(3)
    changing = changing_edges(pattern, sorted(graph.edges))
    scm = make_scm(graph, changing, 6, np.random.default_rng(4))
    z = np.random.default_rng(5).standard_normal((200, 3))
    for i in graph.nodes:
        outputs = [scm.mechanism(i, z, np.full(200, u)) for u in range(scm.n_envs)]
        differs = any(not np.allclose(outputs[0], o) for o in outputs[1:])
        assert differs == any(e in changing for e in graph.in_edges(i)), (pattern, i)
    for j, i in graph.edges:  # fixed edges keep one weight; changing ones take several
        assert (np.unique(scm.weights[:, j, i]).size > 1) == ((j, i) in changing)
    assert np.all(scm.weights[:, ~nx.to_numpy_array(graph, nodelist=range(3)).astype(bool)] == 0)


def test_patterns_of_one_seed_share_every_draw_but_the_changes():
    graph = default_graph(3)
    full = make_scm(graph, None, 5, np.random.default_rng(6))
    fixed = make_scm(graph, {(0, 1), (0, 2)}, 5, np.random.default_rng(6))
    assert np.array_equal(full.noise_scale, fixed.noise_scale) and np.array_equal(full.noise_loc, fixed.noise_loc)
    assert np.array_equal(full.weights[:, 0, 1], fixed.weights[:, 0, 1])
    assert np.all(fixed.weights[:, 1, 2] == full.weights[0, 1, 2])


def test_sampling_follows_the_additive_noise_model():
    scm = make_scm(default_graph(3), None, 4, np.random.default_rng(7))
    env = np.repeat(np.arange(4), 50)
    z = sample_latents(scm, env, np.random.default_rng(8))
    base = np.random.default_rng(8).standard_normal((200, 3))
    noise = scm.noise_loc[env] + scm.noise_scale[env] * base
    for i in range(3):  # z_i - f_i(pa_i; u) is exactly the exogenous noise
        assert np.allclose(z[:, i] - scm.mechanism(i, z, env), noise[:, i])
    lam = scm.weights[env]
    assert np.allclose(z[:, 2], lam[:, 0, 2] * g(z[:, 0]) + lam[:, 1, 2] * g(z[:, 1]) + noise[:, 2])


def test_post_nonlinear_latents_are_a_monotone_map_of_the_additive_ones():
    scm = make_scm(default_graph(3), None, 4, np.random.default_rng(9), post_nonlinear=True)
    env = np.repeat(np.arange(4), 50)
    z = sample_latents(scm, env, np.random.default_rng(10))
    base = np.random.default_rng(10).standard_normal((200, 3))
    mechanisms = np.column_stack([scm.mechanism(i, z, env) for i in range(3)])
    pre = scm.noise_loc[env] + scm.noise_scale[env] * base + mechanisms
    assert np.allclose(z, 0.5 * pre + 2.0 * np.tanh(2.0 * pre))


def test_post_nonlinear_chain_stays_well_scaled():
    """The post-nonlinearity must not compound along the chain (a cubic h overflowed to inf with ten
    latents, the paper preset, and gave the last of three latents a kurtosis in the thousands)."""
    from scipy.stats import kurtosis

    scm = make_scm(default_graph(10), None, 10, np.random.default_rng(15), post_nonlinear=True)
    z = sample_latents(scm, np.repeat(np.arange(10), 300), np.random.default_rng(16))
    assert np.all(np.isfinite(z))
    assert np.abs(kurtosis(z, axis=0)).max() < 5
    grid = np.linspace(-5, 5, 1001)
    assert np.all(np.diff(h(grid)) > 0)  # strictly increasing: invertible


def test_identifiability_prediction_follows_the_changing_edges():
    graph = default_graph(3)
    predict = {
        p: make_scm(graph, changing_edges(p, sorted(graph.edges)), 3, np.random.default_rng(0)).identifiable()
        for p in PATTERNS
    }
    assert predict["all"] == [True, True, True]
    assert predict["fix 0→1"] == [True, False, True]
    assert predict["fix 1→2"] == predict["fix 0→2"] == [True, True, False]
    assert predict["none"] == [True, False, False]


def test_mixing_is_injective_and_the_stick_figure_keeps_its_segments():
    rng = np.random.default_rng(11)
    mats = make_mixing(3, 10, rng)
    z = rng.standard_normal((50, 3))
    eps = 1e-6
    for row in z[:5]:
        jac = np.column_stack([(mix(row + eps * e, mats) - mix(row, mats)) / eps for e in np.eye(3)])
        assert np.linalg.matrix_rank(jac, tol=1e-6) == 3
    joints = stick_figure(rng.uniform(-1, 1, (40, 3)))
    lengths = np.linalg.norm(np.diff(joints, axis=1), axis=-1)
    assert np.allclose(lengths, SEGMENTS)


def test_generator_refuses_bad_input():
    graph = default_graph(3)
    with pytest.raises(ValueError, match="changing"):
        make_scm(graph, {(2, 0)}, 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_envs"):
        make_scm(graph, None, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="noise"):
        make_scm(graph, None, 4, np.random.default_rng(0), noise="cauchy")
    scm = make_scm(graph, None, 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="env"):
        sample_latents(scm, np.array([0, 4]), np.random.default_rng(0))
    with pytest.raises(ValueError, match="pattern"):
        changing_edges("fix 5→6", sorted(graph.edges))


def test_the_motion_chain_is_observed_through_its_stick_figure():
    scm = motion_scm(np.random.default_rng(20))
    assert scm.n_envs == len(MOTION_GAITS) and scm.d_latent == len(MOTION_JOINTS)
    assert scm.identifiable() == [True, True, True]
    assert motion_scm(np.random.default_rng(20), {(0, 1)}).identifiable() == [True, True, False]
    data = make_motion_data(scm, 50, np.random.default_rng(21))
    assert data.x.shape == (50 * len(MOTION_GAITS), 6) and data.z.shape == (50 * len(MOTION_GAITS), 3)
    np.testing.assert_array_equal(data.env, np.repeat(np.arange(len(MOTION_GAITS)), 50))
    np.testing.assert_allclose(data.x.std(0), 1.0)  # standardised observations
    assert correlation_matrix(data.z, data.x)[0].max() > 0.9  # the knee's position follows the hip's swing


# --- the model -----------------------------------------------------------------------------------


def test_priors_match_torch_distributions():
    model = EnsembleVAE(("causal", "factorised", "plain"), 6, 3, 4, seeds=(0, 1, 2))
    with torch.no_grad():
        for p in (model.loc, model.log_scale, model.influence):
            p.normal_(0, 0.5, generator=torch.Generator().manual_seed(3))
    z = torch.randn(3, 20, 3, generator=torch.Generator().manual_seed(4))
    env = torch.randint(0, 4, (3, 20), generator=torch.Generator().manual_seed(5))
    got = model.log_prior(z, env)
    const = 1.5 * np.log(2 * np.pi)
    gz = model.parent_functions(z).detach()
    with torch.no_grad():
        for m in range(3):
            loc, scale = model.loc[m, env[m]], model.log_scale[m, env[m]].exp()
            if m == 0:  # causal: z_i's mean adds sum_{j<i} lambda_ij(u) g_j(z_j)
                lam = model.influence[m, env[m]] * torch.tril(torch.ones(3, 3), -1)
                loc = loc + (lam @ gz[m].unsqueeze(-1)).squeeze(-1)
            if m == 2:  # plain: N(0, I)
                loc, scale = torch.zeros_like(loc), torch.ones_like(scale)
            want = torch.distributions.Normal(loc, scale).log_prob(z[m]).sum(-1) + const
            assert torch.allclose(got[m], want, atol=1e-5)


def test_the_shared_prior_uses_one_influence_table_for_every_environment():
    """The shared baseline: environment 0's influences serve every u (truth: lambda does not change), and
    its log-prior is the causal one with that table; the causal prior keeps one table per u."""
    model = EnsembleVAE(("causal", "shared"), 6, 3, 4, seeds=(0, 1))
    with torch.no_grad():
        model.influence.normal_(0, 0.5, generator=torch.Generator().manual_seed(3))
    lam = model.influences().detach()
    assert torch.equal(lam[1], lam[1, :1].expand(4, 3, 3)) and not torch.equal(lam[0], lam[0, :1].expand(4, 3, 3))
    assert torch.equal(lam[1], torch.tril(lam[1], -1))
    z = torch.randn(2, 20, 3, generator=torch.Generator().manual_seed(4))
    env = torch.randint(0, 4, (2, 20), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        model.influence[1] = model.influence[1, :1].expand(4, 3, 3).clone()
        model.influence[0] = model.influence[1]
        model.loc[0], model.log_scale[0] = model.loc[1], model.log_scale[1]
        model.g_in[0], model.g_bias[0], model.g_out[0] = model.g_in[1], model.g_bias[1], model.g_out[1]
        prior = model.log_prior(z[[1, 1]], env[[1, 1]])
    assert torch.allclose(prior[0], prior[1])  # with equal tables per u, the causal prior reads the same


def test_the_plain_vae_is_blind_to_the_environment():
    """The plain VAE never reads u; the environment priors' encoders read it only with encoder_env
    (the default is q(z | x) for every prior; u still enters through the prior)."""
    x = torch.randn(2, 20, 6, generator=torch.Generator().manual_seed(6)).expand(2, 20, 6)
    codes = [nn.functional.one_hot(torch.full((2, 20), u), 4).float() for u in (0, 3)]
    blind = EnsembleVAE(("causal", "plain"), 6, 3, 4, seeds=(0, 1))
    with torch.no_grad():
        (mu_a, _), (mu_b, _) = (blind.encode(x, c) for c in codes)
    assert torch.equal(mu_a, mu_b)  # default: q(z | x) for both
    model = EnsembleVAE(("causal", "plain"), 6, 3, 4, seeds=(0, 1), encoder_env=True)
    with torch.no_grad():
        (mu_a, _), (mu_b, _) = (model.encode(x, c) for c in codes)
    assert torch.equal(mu_a[1], mu_b[1])  # plain: q(z | x)
    assert not torch.allclose(mu_a[0], mu_b[0])  # causal with encoder_env: q(z | x, u)
    means = encode_means(model, x, torch.full((2, 20), 3))  # the posterior means, from labels
    assert means.shape == (2, 20, 3)
    np.testing.assert_array_equal(means, mu_b.numpy())


def test_members_train_as_they_would_alone():
    rng = np.random.default_rng(12)
    x = torch.tensor(rng.standard_normal((2, 60, 6)), dtype=torch.float32)
    env = torch.tensor(rng.integers(0, 3, (2, 60)))
    pair = fit(x, env, ("causal", "plain"), 3, 2, seeds=(7, 8), n_steps=30, batch_size=16)
    alone = fit(x[:1], env[:1], ("causal",), 3, 2, seeds=(7,), n_steps=30, batch_size=16)
    for a, b in zip(pair.parameters(), alone.parameters(), strict=True):
        assert torch.allclose(a[:1], b, atol=1e-4)


def test_interrupted_training_resumes_to_the_bit(tmp_path):
    from explorables.core.checkpoint import Checkpointer

    rng = np.random.default_rng(12)
    x = torch.tensor(rng.standard_normal((2, 60, 6)), dtype=torch.float32)
    env = torch.tensor(rng.integers(0, 3, (2, 60)))
    args, kw = (x, env, ("causal", "plain"), 3, 2), dict(seeds=(7, 8), batch_size=16)
    whole = fit(*args, n_steps=200, **kw)
    fit(
        *args,
        n_steps=100,
        checkpoint=Checkpointer(tmp_path, every_s=0.0),
        name="loop",
        extra_state=lambda: {"note": 1},
        **kw,
    )  # "killed" after 100 steps: its last loop state is on disk
    resumed = Checkpointer(tmp_path, every_s=3600.0, resume=True)
    assert resumed.get("loop")["step"] == 100 and resumed.get("loop")["extra"] == {"note": 1}
    calls: list[int] = []
    rest = fit(*args, n_steps=200, checkpoint=resumed, name="loop", callback=lambda k, _: calls.append(k), **kw)
    assert calls == [200]  # it went on from step 100, not from the start
    for a, b in zip(whole.parameters(), rest.parameters(), strict=True):
        assert torch.equal(a, b)


def test_fit_refuses_bad_shapes():
    with pytest.raises(ValueError, match="x must be"):
        fit(torch.zeros(2, 10, 4), torch.zeros(2, 9, dtype=torch.long), ("plain", "plain"), 2, 2, seeds=(0, 1))
    with pytest.raises(ValueError, match="priors"):
        EnsembleVAE(("gaussian",), 4, 2, 2, seeds=(0,))


# --- the experiment ------------------------------------------------------------------------------

TINY = dict(n_per_env=30, n_steps=100, edge_patterns=("all",), use_post_nonlinear=False, record_every=100)


def test_the_learner_never_receives_the_true_latents(monkeypatch):
    cfg = CRLConfig.preset("smoke", **TINY)
    seen: list = []
    real_fit = crl_experiment.fit

    def spy(*args, **kwargs):
        seen.extend([*args, *kwargs.values()])
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(crl_experiment, "fit", spy)
    crl_experiment.run(cfg)
    assert seen
    arrays = [
        np.asarray(a.cpu() if isinstance(a, torch.Tensor) else a, dtype=float)
        for a in seen
        if isinstance(a, (torch.Tensor, np.ndarray))
    ]
    for arm in crl_experiment.arms(cfg):
        for s in range(len(cfg.seeds)):
            z = make_arm_data(cfg, arm, s).z
            n = min(len(z), cfg.n_envs * cfg.n_per_env)
            for a in arrays:  # no column of any argument is (an affine copy of) a true latent
                cols = a.reshape(-1, a.shape[-1]) if a.ndim >= 2 else a.reshape(-1, 1)
                for block in np.split(cols, len(cols) // n) if len(cols) % n == 0 else []:
                    corr = correlation_matrix(z[:n], block) if block.std(0).min() > 0 else np.zeros(1)
                    assert corr.max() < 0.999


def test_a_run_killed_mid_training_resumes_to_the_same_results(tmp_path, monkeypatch):
    from explorables.core.checkpoint import Checkpointer

    cfg = CRLConfig.preset("smoke", **{**TINY, "n_steps": 200})
    whole = crl_experiment.run(cfg)
    real_fit = crl_experiment.fit

    def killed(*args, **kwargs):  # interrupted after step 100 of the same 200-step schedule
        record = kwargs["callback"]

        def stop(step, model):
            record(step, model)
            if step == 100:
                raise KeyboardInterrupt

        real_fit(*args, **{**kwargs, "callback": stop})

    monkeypatch.setattr(crl_experiment, "fit", killed)
    with pytest.raises(KeyboardInterrupt):
        crl_experiment.run(cfg, checkpoint=Checkpointer(tmp_path, every_s=0.0))
    monkeypatch.setattr(crl_experiment, "fit", real_fit)
    resumed = crl_experiment.run(cfg, checkpoint=Checkpointer(tmp_path, every_s=3600.0, resume=True))
    assert resumed.summary["arms"] == whole.summary["arms"]
    assert np.array_equal(resumed.curves["curve_steps"], whole.curves["curve_steps"])
    for name, curve in whole.curves["curve_mcc"].items():
        assert np.array_equal(resumed.curves["curve_mcc"][name], curve)


def test_smoke_run_shows_the_claimed_directions():
    """Seeded smoke run. The direction the paper implies for MCC (causal prior above the plain VAE
    with all influences changing) is *not* reproduced at our scale (see the chapter), so it is
    reported, not asserted: with three latents a random rotation already scores about 0.83 MCC, and a
    reviewer's runs with 4-8x the steps and 3x the samples still left the causal prior level with
    the plain VAE (the page's folded box tells this history), so no affordable seeded setting shows it.
    What must hold: the causal prior, which contains the plain and the factorised priors as special
    cases, fits the data better (higher ELBO, with a margin), and the prediction gives every latent a
    verdict."""
    results = smoke_run("crl")
    arms = results.summary["arms"]
    assert arms["causal / all"]["elbo"]["mean"] >= arms["plain / all"]["elbo"]["mean"] + 0.1
    assert arms["causal / all"]["elbo"]["mean"] >= arms["factorised / all"]["elbo"]["mean"]
    assert arms["causal / all"]["identifiable"] == [True, True, True]
    assert arms["causal / fix 1→2"]["identifiable"] == [True, True, False]
    for arm in arms.values():
        assert all(0.0 <= c["median"] <= 1.0 for c in arm["components"])
    lines = headline(results)  # one line per arm, quoting its MCC
    assert len(lines) == len(arms)
    for line, (name, arm) in zip(lines, arms.items(), strict=True):
        assert line.startswith(f"{name}: MCC {arm['mcc']['mean']:.2f}")


# --- the verdicts --------------------------------------------------------------------------------


def test_verdicts_on_constructed_numbers():
    """Synthetic per-seed numbers through every branch (interval rule: the 95% t-interval over seeds)."""
    up, down = [0.30, 0.31, 0.29], [0.0, 0.01, -0.01]
    assert ABOVE_CHANCE > MARGIN > 0 and GAP > 0 and PARENT_GAIN > 0
    assert metric_check(1e-14).startswith("pass") and metric_check(0.01).startswith("fail")
    assert recovery_gate([0.2, 0.3, 0.25]).startswith("pass")
    assert recovery_gate([0.5, 0.5, 0.1]).startswith("fail")  # the mean clears it, one seed does not
    assert components_verdict({"z0": up, "z1": up}).startswith("yes")
    assert components_verdict({"z0": up, "z1": down}).startswith("partly")
    assert components_verdict({"z0": down, "z1": down}).startswith("no")
    assert components_verdict({"z0": [0.0, 0.3, 0.15]}).startswith("unclear")  # straddles the margin
    assert beats_verdict({"plain": [0.1, 0.11, 0.09], "factorised": [0.09, 0.10, 0.11]}).startswith("yes")
    assert beats_verdict({"plain": [0.1, 0.11, 0.09], "factorised": down}).startswith("partly")
    assert beats_verdict({"plain": [-0.1, -0.12, -0.08], "factorised": down}).startswith("no")  # behind both
    assert beats_verdict({"plain": [0.3, -0.1, 0.2, -0.15, 0.05]}).startswith("unclear")  # mean 0.06, se 0.08
    assert pattern_word([up, up], [up]) == "yes"
    assert pattern_word([up, down], [up]) == "no"  # an identifiable one not recovered
    assert pattern_word([up, up], [down]) == "no"  # fixing the edge costs its child nothing
    assert pattern_word([up], [[0.6, -0.1, 0.5, -0.05, -0.05]]) == "unclear"  # a noisy increase
    assert partial_verdict({"a": ([up], [up]), "b": ([up], [down])}).startswith("partly")
    assert partial_verdict({"a": ([up], [down])}).startswith("no")
    rise = [0.2, 0.3, 0.25]  # the child's parent gain rises by this over the all-change run
    assert control_verdict({"z1": rise, "z2": rise}).startswith("yes")
    assert control_verdict({"z1": rise, "z2": down}).startswith("partly")
    assert control_verdict({"z1": down}).startswith("no")
    assert control_verdict({"z1": [0.0, 0.3, 0.15]}).startswith("unclear")  # straddles the threshold
    assert chance_check(0.004).startswith("pass") and chance_check(0.05).startswith("fail")
    assert motion_verdict(up, [0.1, 0.11, 0.09]).startswith("yes")
    assert motion_verdict(up, down).startswith("partly")  # above chance, level with the plain VAE
    assert motion_verdict(down, [0.1, 0.12, 0.08]).startswith("no")  # ahead of the plain VAE, below chance
    assert motion_verdict([0.0, 0.3, 0.15], up).startswith("unclear")
    assert drive(CRITERIA) == []


def test_claims_of_the_smoke_run_have_their_kinds_and_gates():
    rows = claims(smoke_run("crl"))
    kinds = [r.kind for r in rows]
    gates = {r.name for r in rows if r.kind == "gate"}
    assert kinds.count("check") == 5 and gates == {"ivae", "causal", "rotation", "motion"}
    assert all(r.gates for r in rows if r.kind == "claim")
    # the lens is a check (its gap has a closed form); the motion claim shares the VAE learner's gate
    assert any(r.kind == "check" and r.claim.startswith("Exact lens") for r in rows)
    assert next(r for r in rows if r.claim.startswith("Human-motion")).gates == ("motion", "ivae", "causal", "rotation")
    ivae = next(r for r in rows if r.name == "ivae")
    assert "active latents per seed" in ivae.measured
    for r in apply_gates(rows):  # a claim whose gate failed reads untested, never no
        failed = any(g.name in r.gates and g.outcome == "fail" for g in rows if g.kind == "gate")
        assert (r.outcome == "untested") == (r.kind == "claim" and failed)


def test_the_page_sentences_follow_the_numbers():
    """The control's direction sentence appears only when a child scores higher without changes; the
    active-latents sentence says collapse when a latent is inactive."""
    from explorables.crl.claims import active_sentence, control_direction

    def arm(comps, identifiable, active=None):
        out = {
            "components": [{"per_seed": c} for c in comps],
            "identifiable": identifiable,
            "chance": {"per_seed": [0.5, 0.5, 0.5]},
            "parent_gain": [[0.0] * len(comps)] * 3,
        }
        return out if active is None else {**out, "active": active}

    def results(none_child):
        arms = {
            "causal / all": arm([[0.9] * 3, [0.9] * 3], [True, True]),
            "causal / none": arm([[0.9] * 3, none_child], [True, False]),
            crl_experiment.IVAE_CHECK: arm([[0.6] * 3, [0.6] * 3], [True, True], active=[2, 1, 2]),
        }
        return crl_experiment.CRLResults(CRLConfig.preset("smoke"), {"arms": arms}, {})

    assert control_direction(results([0.5, 0.6, 0.55])) == ""  # drops, as predicted
    assert "1 of the 1 children (z1)" in control_direction(results([0.95, 0.97, 0.96]))
    assert "only 1 to 2 of its 2 latents" in active_sentence(results([0.5] * 3))


def test_exogenous_noise_is_what_the_sampler_added():
    from explorables.crl.experiment import exogenous_noise

    graph = default_graph(3)
    scm = make_scm(graph, set(), 4, np.random.default_rng(13))
    data = make_data(scm, 50, 6, np.random.default_rng(14))
    base = np.random.default_rng(14).standard_normal((200, 3))
    assert np.allclose(exogenous_noise(data), scm.noise_loc[data.env] + scm.noise_scale[data.env] * base)
    pnl = make_scm(graph, None, 4, np.random.default_rng(13), post_nonlinear=True)
    with pytest.raises(ValueError, match="post_nonlinear"):
        exogenous_noise(make_data(pnl, 10, 6, np.random.default_rng(0)))


def test_the_schedule_starts_linear_and_wide_and_ends_at_the_set_values():
    from explorables.crl.model import schedule

    lr0, slope0, std0 = schedule(0, 1000, 0.01, 0.1, 0.5, 0.6, True)
    assert (lr0, slope0, std0) == pytest.approx((0.01, 1.0, 0.5))
    lr_w, slope_w, std_w = schedule(600, 1000, 0.01, 0.1, 0.5, 0.6, True)
    assert (
        slope_w == pytest.approx(0.2)
        and std_w == pytest.approx(0.1)
        and lr_w == pytest.approx(0.005 * (1 - 0.309017), rel=1e-4)
    )
    mid = schedule(300, 1000, 0.01, 0.1, 0.5, 0.6, True)
    assert mid[1] == pytest.approx(0.6) and mid[2] == pytest.approx((0.5 * 0.1) ** 0.5)  # geometric halfway
    assert schedule(1000, 1000, 0.01, 0.1, 0.5, 0.6, True)[0] == pytest.approx(0.0, abs=1e-15)
    # no warm-up and no cosine: the constant, old schedule
    for step in (0, 500, 999):
        assert schedule(step, 1000, 0.01, 0.1, 0.1, 0.0, False) == (0.01, pytest.approx(0.2), pytest.approx(0.1))
    with pytest.raises(ValueError, match="warmup"):
        fit(torch.zeros(1, 10, 4), torch.zeros(1, 10, dtype=torch.long), ("plain",), 1, 2, seeds=(0,), warmup=1.5)
    with pytest.raises(ValueError, match="obs_std_start"):
        fit(torch.zeros(1, 10, 4), torch.zeros(1, 10, dtype=torch.long), ("plain",), 1, 2, seeds=(0,), obs_std_start=0)


def test_the_gate_arm_has_independent_latents_with_scales_in_range():
    """The ivae gate's data: the same nodes without edges (iVAE's own setting), so the latents are the
    exogenous noise; the noise scales are log-uniform in the configured range."""
    cfg = CRLConfig.preset("smoke", seeds=(0,))
    arm = next(a for a in crl_experiment.arms(cfg) if a.name == crl_experiment.IVAE_CHECK)
    data = make_arm_data(cfg, arm, 0)
    assert data.scm.graph.number_of_edges() == 0 and data.scm.d_latent == cfg.d_latent
    np.testing.assert_allclose(crl_experiment.exogenous_noise(data), data.z)
    low, high = cfg.noise_scales
    assert low <= data.scm.noise_scale.min() and data.scm.noise_scale.max() <= high
    many = make_scm(default_graph(3), None, 400, np.random.default_rng(0), scale_range=(0.25, 4.0))
    logs = np.log(many.noise_scale)
    assert abs(np.median(logs)) < 0.1  # log-uniform on [log 1/4, log 4] is symmetric about 0
    with pytest.raises(ValueError, match="scale_range"):
        make_scm(default_graph(3), None, 4, np.random.default_rng(0), scale_range=(2.0, 1.0))
    with pytest.raises(ValueError, match="noise_scales"):
        CRLConfig.preset("smoke", noise_scales=(2.0, 1.0))


def test_the_causal_gate_trains_the_causal_prior_on_the_ivae_gate_data():
    """The causal prior's gate: the causal-prior learner on exactly the ivae gate's edge-free draws (truth
    lambda = 0, inside its class), scored against the latents; every claim that trains the causal prior
    depends on it."""
    cfg = CRLConfig.preset("book")
    by_name = {a.name: a for a in crl_experiment.arms(cfg)}
    gate, ivae = by_name[crl_experiment.CAUSAL_CHECK], by_name[crl_experiment.IVAE_CHECK]
    assert (gate.prior, gate.data, gate.target) == ("causal", "independent", "latents")
    small = CRLConfig.preset("smoke", seeds=(0, 1))
    for s in range(2):
        a, b = make_arm_data(small, gate, s), make_arm_data(small, ivae, s)
        assert a.scm.graph.number_of_edges() == 0
        np.testing.assert_array_equal(a.x, b.x)
        np.testing.assert_array_equal(a.z, b.z)


def test_restarts_keep_the_member_with_the_highest_elbo():
    """Each setting trains n_restarts members; the one kept (its MCC is the arm's) has the highest
    training ELBO, which needs no true latents."""
    res = crl_experiment.run(CRLConfig.preset("smoke", use_motion=False))
    assert res.config.n_restarts > 1
    for arm in res.summary["arms"].values():
        for s, (elbos, mccs) in enumerate(zip(arm["restart_elbo"], arm["restart_mcc"], strict=True)):
            assert len(elbos) == res.config.n_restarts
            assert arm["elbo"]["per_seed"][s] == max(elbos)
            assert arm["mcc"]["per_seed"][s] == pytest.approx(mccs[int(np.argmax(elbos))])


def test_the_verdict_sentence_reads_the_gated_verdicts():
    """The page's verdict sentence names each claim's word after its gates: untested when the gate fails."""
    from explorables.core.tables import Claim
    from explorables.crl.claims import verdict_sentence

    claim = Claim("Identified", "s", "m", "yes: interval clears", gates=("ivae",))
    for gate_word, word in (("pass", "yes"), ("fail", "untested")):
        gate = Claim("gate", "s", "m", f"{gate_word}: x", kind="gate", name="ivae")
        assert verdict_sentence([gate, claim]).endswith(f"“Identified”: {word}.")
    assert verdict_sentence([]) == ""


def test_partial_and_control_claims_stand_only_behind_identification():
    """Both read the causal prior against its all-change run: their own word stands only when the
    all-change claim reads yes; otherwise unclear, naming why and keeping their own reading."""
    from explorables.crl.claims import behind_identification

    own = "no: pattern follows the prediction in none of 1"
    assert behind_identification("yes: every component recovered", own) == own
    for word in ("no", "unclear", "partly"):
        out = behind_identification(f"{word}: reason", own)
        assert out.startswith("unclear:") and f"reads {word}" in out and out.endswith(own)


def test_the_gate_reading_names_what_each_gate_certifies_and_the_chance_sentence_follows_the_numbers():
    from explorables.core.tables import Claim
    from explorables.crl.claims import gate_reading, identification_sentence

    def g(name, word):
        return Claim("gate", "s", "m", f"{word}: x", kind="gate", name=name)

    text = gate_reading([g("ivae", "pass"), g("causal", "fail")])
    assert "certifies that learner only" in text and "The causal gate fails" in text
    assert "The causal gate passes" in gate_reading([g("ivae", "pass"), g("causal", "pass")])

    def results(mcc):
        arm = {"mcc": {"per_seed": mcc}, "chance": {"per_seed": [0.7, 0.7, 0.7]}, "components": []}
        return crl_experiment.CRLResults(CRLConfig.preset("smoke"), {"arms": {"causal / all": arm}}, {})

    assert identification_sentence(results([0.69, 0.71, 0.70])).startswith("No sign of identification")
    assert identification_sentence(results([0.95, 0.96, 0.97])) == ""


def test_the_l1_weight_rule_and_the_book_weight_comes_from_tuning_draws():
    """The tuning rule: the smallest weight clearing the margin on every tuning draw where the factorised
    reference clears it; the largest smallest margin when none does. The tuning draws' data seeds never
    meet the seed study's (base seeds 0-4), and the book preset uses a weight of the grid."""
    from explorables.crl.tuning import SPARSITY_EXTRA, SPARSITY_GRID, TUNING_BASE_SEED, choose

    margins = {0.01: [0.1, 0.0, 0.3], 0.1: [0.3, 0.05, 0.2], 1.0: [0.3, 0.1, 0.3]}
    assert choose(margins, 0.15) == (1.0, False)  # the middle draw fails for every weight
    assert choose(margins, 0.15, reference=[0.3, 0.0, 0.3]) == (0.1, True)  # ... and for the reference too
    assert choose({0.1: [0.2], 1.0: [0.2]}, 0.15) == (0.1, True)  # the smallest passing weight
    with pytest.raises(ValueError, match="reference"):
        choose(margins, 0.15, reference=[0.0, 0.0, 0.0])
    book = CRLConfig.preset("book")
    assert book.sparsity in SPARSITY_GRID + SPARSITY_EXTRA
    tuning = CRLConfig.preset("book", seed=TUNING_BASE_SEED, seeds=tuple(range(6)))
    book = CRLConfig.preset("book")
    study_seeds = {
        crl_experiment.data_seed(CRLConfig.preset("book", seed=b), s) for b in range(5) for s in range(len(book.seeds))
    }
    assert not study_seeds & {crl_experiment.data_seed(tuning, s) for s in range(6)}


def test_the_parent_gain_is_zero_for_the_latent_itself_and_positive_elsewhere_in_its_class():
    """A learner that returns z itself gains nothing from the parents; one that returns the exogenous noise
    (z_i - f_i(pa_i), another member of the child's class when its influences are fixed) gains the parents'
    share; roots read 0."""
    from explorables.crl.experiment import exogenous_noise, parent_gains

    scm = make_scm(default_graph(3), set(), 4, np.random.default_rng(3))
    data = make_data(scm, 400, 6, np.random.default_rng(4))
    parents = [sorted(scm.graph.predecessors(i)) for i in range(3)]
    itself = parent_gains(data.z, data.z[:, [2, 0, 1]] * 2.0 + 1.0, parents)
    assert itself[0] == 0.0 and max(itself) < 1e-9
    noise = exogenous_noise(data)
    share = parent_gains(data.z, noise, parents)
    assert share[0] == 0.0 and min(share[1:]) > 0.02
    for i in (1, 2):  # the gain is what z_i alone misses of the noise: 1 - corr(z_i, n_i)^2 up to the fit
        assert share[i] == pytest.approx(1 - np.corrcoef(data.z[:, i], noise[:, i])[0, 1] ** 2, abs=0.1)


def test_the_rotation_lens_reads_a_rotation_as_chance_and_the_truth_as_recovered():
    """The rotation lens on real draws: the rotations' quantile lies above their median (it is their upper
    tail) and below chance + the margin at the book's six latents, with room for the truth above; at two
    latents chance sits so high (a rotation is at least 45° from some axis) that even the truth has no
    room, and the gate fails; it fails too when a lucky rotation reaches the margin."""
    from explorables.crl.claims import rotation_gate
    from explorables.crl.experiment import ROTATION_QUANTILE, chance_stats

    assert 0.5 < ROTATION_QUANTILE < 1
    rng = np.random.default_rng(3)
    six = make_data(make_scm(default_graph(6), None, 10, rng), 200, 10, rng).z
    median, se, q = chance_stats(six, 300, 0)
    assert median < q < median + ABOVE_CHANCE and 1 - median >= ABOVE_CHANCE and se < q - median
    two = np.random.default_rng(4).standard_normal((2000, 2))
    median2, _, q2 = chance_stats(two, 300, 0)
    assert 1 - median2 < ABOVE_CHANCE and q2 > median2  # two latents: MCC = max(|cos|, |sin|) ≥ 0.71
    assert rotation_gate([q - median], [1 - median]).startswith("pass")
    two_arms = rotation_gate([q - median, q2 - median2], [1 - median, 1 - median2])
    assert two_arms.startswith("fail") and "true latents" in two_arms
    assert "luckiest" not in two_arms and "quantile reaches" in rotation_gate([0.2], [0.3])
    with pytest.raises(ValueError, match="lucky and room"):
        rotation_gate([], [0.3])


def test_identification_reads_no_when_the_average_falls_short_and_names_a_component_that_clears():
    """The averaged rule decides no when the average's interval lies below the margin, even where one
    component clears it alone (the sentence names it); an average that straddles is read per component."""
    from explorables.crl.claims import identification_verdict

    up, down = [0.30, 0.31, 0.29], [0.0, 0.01, -0.01]
    wide = [0.05, 0.15, 0.10]  # its own interval straddles the margin, the average with ``down`` does not
    assert components_verdict({"z0": down, "z1": wide}).startswith("unclear")
    assert identification_verdict({"z0": down, "z1": wide}).startswith("no: averaged")
    assert "no component clears it" in identification_verdict({"z0": down, "z1": wide})
    assert identification_verdict({"z0": up, "z1": up}).startswith("yes")
    root_alone = identification_verdict({"z0": up, "z1": down, "z2": down})  # the average +0.10 ± 0.02
    assert root_alone.startswith("no") and "alone, z0 clears it" in root_alone
    assert identification_verdict({"z0": up, "z1": down}).startswith("partly")  # the average straddles
    assert identification_verdict({"z0": [0.0, 0.3, 0.15], "z1": [0.0, 0.3, 0.15]}).startswith("unclear")
    with pytest.raises(ValueError, match="above_chance"):
        identification_verdict({})


def test_the_baselines_claim_stands_behind_some_recovery():
    from explorables.crl.claims import behind_identification

    own = "yes: paired MCC gain ≥ 0.05"
    assert behind_identification("partly: z0", own, ("yes", "partly")) == own
    assert behind_identification("no: averaged", own, ("yes", "partly")).startswith("unclear")
    assert behind_identification("partly: z0", own).startswith("unclear")
