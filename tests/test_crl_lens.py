"""Chapter 17 (crl), the exact lens: the flow's likelihood term, and likelihood gaps of removed edges."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from explorables.crl import default_graph, make_mixing, make_scm, sample_latents
from explorables.crl.claims import LENS_GAP, LENS_TOL, flow_verdict, lens_check, lens_gate, lens_word
from explorables.crl.lens import edge_gap, flow, flow_check, flow_data, unflow
from explorables.crl.scm import g


def test_the_flow_inverts_and_its_log_determinant_is_autograds():
    rng = np.random.default_rng(0)
    mats = make_mixing(4, 4, rng, 3)
    z = rng.standard_normal((200, 4)) * 2.0
    x = flow(z, mats)
    back, log_det = unflow(x, mats)
    assert np.allclose(back, z, atol=1e-10)
    # a log-det that ignored the leaky units would disagree with autograd on the negative side
    assert np.ptp(log_det) > 0.1
    assert flow_check(mats, x[:6], (0, 2, np.array([0.5, -0.2, 0.1, 0.03]))) < 1e-10


def test_the_flow_refuses_non_square_layers():
    mats = make_mixing(3, 5, np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="mats"):
        flow(np.zeros((4, 3)), mats)
    with pytest.raises(ValueError, match="mats"):
        unflow(np.zeros((4, 5)), mats)


def _chain(changing, n_envs=8, n=600, seed=0):
    graph = default_graph(3)
    rng = np.random.default_rng(seed)
    scm = make_scm(graph, changing, n_envs, rng)
    env = np.repeat(np.arange(n_envs), n)
    return graph, sample_latents(scm, env, rng), env


def test_a_fixed_influence_is_removed_for_free_and_a_changing_one_is_not():
    """The theory's direction, on a large sample: fixing 1 -> 2 lets one phi remove that edge (gap near
    zero), while the changing 0 -> 1 costs likelihood; with phi = 0 the fixed edge costs too."""
    graph, z, env = _chain({(0, 1), (0, 2)})
    fixed = edge_gap(z, env, graph, (1, 2))
    assert abs(fixed.mean()) < LENS_TOL
    assert edge_gap(z, env, graph, (0, 1)).mean() > 2 * LENS_GAP
    assert edge_gap(z, env, graph, (1, 2), absorb=False).mean() > 2 * LENS_GAP
    # held out: the fixed edge's gap scatters around zero per environment, it is not fitted to be >= 0
    assert fixed.min() < 0 < fixed.max()


def test_the_gap_of_a_changing_edge_matches_its_closed_form():
    """One parent, linear g-weights: the best phi = c g(z_0) leaves per environment the residual
    variance (lambda_u - c)^2 Var_u g(z_0) + sigma_u^2, so the gap is 0.5 log of its ratio to sigma_u^2
    (at the optimal c), up to sampling."""
    graph = nx.DiGraph([(0, 1)])
    rng = np.random.default_rng(3)
    scm = make_scm(graph, None, 6, rng)
    env = np.repeat(np.arange(6), 20_000)
    z = sample_latents(scm, env, rng)
    gaps = edge_gap(z, env, graph, (0, 1))
    lam, sd = scm.weights[:, 0, 1], scm.noise_scale[:, 1]
    var_g = np.array([g(z[env == u, 0]).var() for u in range(6)])

    def predicted(c: float) -> np.ndarray:
        return 0.5 * np.log1p((lam - c) ** 2 * var_g / sd**2)

    cs = np.linspace(-2.0, 2.0, 4001)
    best = cs[np.argmin([predicted(c).sum() for c in cs])]  # the alternative minimises the summed gap
    assert np.allclose(gaps, predicted(best), atol=0.03)


def test_the_lens_reads_the_true_latents_back_through_the_flow():
    graph = default_graph(4)
    rng = np.random.default_rng(5)
    scm = make_scm(graph, None, 5, rng)
    x, env, mats = flow_data(scm, 50, rng)
    assert x.shape == (250, 4) and np.array_equal(env, np.repeat(np.arange(5), 50))
    z, _ = unflow(x, mats)
    assert np.allclose(flow(z, mats), x)


def test_edge_gap_refuses_bad_input():
    graph, z, env = _chain(None, n=40)
    with pytest.raises(ValueError, match="edge"):
        edge_gap(z, env, graph, (2, 0))
    with pytest.raises(ValueError, match="test_fraction"):
        edge_gap(z, env, graph, (0, 1), test_fraction=1.5)
    with pytest.raises(ValueError, match="environment"):
        edge_gap(z[:283], env[:283], graph, (0, 1))  # the last environment keeps 3 samples


def test_lens_verdicts_on_constructed_numbers():
    up, zero, mid = [0.3, 0.31, 0.29], [0.0, 0.005, -0.005], [0.0, 0.1, 0.05]
    assert flow_verdict(1e-15).startswith("pass") and flow_verdict(1e-4).startswith("fail")
    assert lens_gate({"0→1": up, "1→2": up}).startswith("pass")
    assert lens_gate({"0→1": up, "1→2": [0.3, 0.3, 0.01]}).startswith("fail")  # one seed short
    assert lens_word([up], [zero]) == "yes"
    assert lens_word([zero], [zero]) == "no"  # a changing edge that costs nothing
    assert lens_word([up], [up]) == "no"  # a fixed edge that cannot be removed
    assert lens_word([mid], [zero]) == "unclear"
    assert lens_check({"all": ([up], []), "fix": ([up], [up])}) == (
        f"fail: gap ≥ {LENS_GAP} nats where the influence changes, below {LENS_TOL} where it is fixed, not for fix"
    )
    assert lens_check({"all": ([up], []), "fix": ([up], [zero])}).startswith("pass")
    assert lens_check({"fix": ([mid], [zero])}).startswith("fail")  # unclear is not a pass
    with pytest.raises(ValueError, match="patterns"):
        lens_check({})
