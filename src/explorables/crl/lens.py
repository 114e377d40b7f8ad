"""The exact lens: what removing an edge costs in likelihood when the mixing is a known flow.

Observations ``x = F(z)`` with ``F`` the square leaky-ReLU MLP of eq. (crl-mixing) (``d_obs = d_latent``,
full-rank layers): an invertible map with a known Jacobian, a small normalising flow, so that

    log p(x | u) = log p(F^{-1}(x) | u) + log |det J_{F^{-1}}(x)|.

The theory's argument names the alternative to the true model: delete the edge ``j -> i`` and replace
``z_i`` by ``z~_i = z_i - phi(z_j)``, with ``phi`` **one** function for every environment, and let the
flow ``F o S`` (``S: z~_i -> z~_i + phi(z_j)``, a shear with unit Jacobian determinant) absorb the
change of variables. The Jacobian term is then the same for both models (:func:`flow_check` verifies
it with autograd), and the two models differ only in ``z_i``'s factor: the children of ``z_i`` keep
their densities, since they read ``z_i = z~_i + phi(z_j)``, a mechanism of ``(z~_i, z_j)`` plus the same
noise. That holds in the class of **general additive-noise models** ``z_k = f_k(pa_k; u) + n_k`` with any
``f_k``, the class within which the lens's prediction is made. The children's new mechanism is not a
sum of one function per parent, so the alternative leaves the narrower form of eq. (crl-anm); within
that narrower form a fixed edge into a non-leaf could cost likelihood through the children, which the
lens does not score. With one environment-independent ``phi`` and Gaussian noise the gap has a closed form: per
environment ``0.5 log(1 + (lambda_u - c)^2 Var_u g / sigma_u^2)`` at the best constant ``c`` (a test
checks it), zero when ``lambda_u`` does not depend on ``u``. The
**gap** is the held-out log-likelihood of the true model minus that of the best alternative, per
sample, both fitted by maximum likelihood with Gaussian noise whose location and scale depend on the
environment (:func:`edge_gap`). If the influence ``lambda_ji`` is the same in every environment,
``phi = lambda_ji g`` removes the edge exactly and the gap is zero up to sampling: nothing in the data
tells ``z_i`` from ``z~_i``. If it changes, no single ``phi`` can, and the gap is positive.

This evaluates the one family of alternatives the argument names, with the mixing known; it learns no
mixing, so it rules out that family, it does not test a learner or the paper's full statement.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import torch
from scipy.optimize import minimize

from ..core.arguments import Array, checked
from ..core.params import Bool, Positive
from ..core.validation import check_positive
from .scm import LatentSCM, g, make_mixing, mix


def phi_basis(v: np.ndarray) -> np.ndarray:
    """The environment-independent ``phi(z_j)`` is a combination of ``tanh z_j, z_j, z_j^2, z_j^3`` (it
    spans the generator's ``g``, so a fixed edge can be removed exactly)."""
    return np.column_stack([np.tanh(v), v, v**2, v**3])


@checked(z=Array("n d"), slope=Positive())
def flow(z: np.ndarray, mats: list[np.ndarray], slope: float = 0.2) -> np.ndarray:
    """``x = F(z)``: the mixing of eq. (crl-mixing) with square layers (``d_obs = d_latent``)."""
    for k, w in enumerate(mats):
        if np.shape(w) != (z.shape[1], z.shape[1]):
            raise ValueError(f"mats[{k}] must be square ({z.shape[1]} x {z.shape[1]}) for a flow, got {np.shape(w)}")
    return mix(z, mats, slope)


@checked(x=Array("n d"), slope=Positive())
def unflow(x: np.ndarray, mats: list[np.ndarray], slope: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """``F^{-1}(x)`` and ``log |det J_{F^{-1}}(x)|`` per sample (undo the layers in reverse order)."""
    check_positive("slope", slope)
    z = np.asarray(x, dtype=float)
    log_det = np.zeros(len(z))
    for k in reversed(range(len(mats))):
        w = np.asarray(mats[k], dtype=float)
        if w.shape != (z.shape[1], z.shape[1]):
            raise ValueError(f"mats[{k}] must be square ({z.shape[1]} x {z.shape[1]}), got {w.shape}")
        if k < len(mats) - 1:  # undo the leaky ReLU that followed layer k
            neg = z < 0
            z = np.where(neg, z / slope, z)
            log_det -= np.log(slope) * neg.sum(1)
        z = np.linalg.solve(w, z.T).T
        log_det -= np.linalg.slogdet(w)[1]
    return z, log_det


def _torch_unflow(x: torch.Tensor, mats: list[np.ndarray], slope: float) -> torch.Tensor:
    for k in reversed(range(len(mats))):
        if k < len(mats) - 1:
            x = torch.where(x < 0, x / slope, x)
        x = torch.linalg.solve(torch.as_tensor(mats[k], dtype=torch.float64), x)
    return x


@checked(slope=Positive())
def flow_check(mats: list[np.ndarray], x: np.ndarray, shear: tuple[int, int, np.ndarray], slope: float = 0.2) -> float:
    """The largest disagreement, over the rows of ``x``, between :func:`unflow`'s log-determinant and
    autograd's for ``F^{-1}`` and for the alternative's ``S^{-1} o F^{-1}`` (``shear = (j, i, c)``:
    ``z~_i = z_i - phi_basis(z_j) @ c``). Zero up to rounding: the alternative keeps the Jacobian term."""
    j, i, c = shear
    _, analytic = unflow(x, mats, slope)
    worst = 0.0
    for row, value in zip(np.asarray(x, dtype=float), analytic, strict=True):
        xt = torch.tensor(row, dtype=torch.float64)

        def inverse(v: torch.Tensor) -> torch.Tensor:
            return _torch_unflow(v, mats, slope)

        def alternative(v: torch.Tensor) -> torch.Tensor:
            z = _torch_unflow(v, mats, slope)
            zj = z[j]
            phi = (torch.stack([torch.tanh(zj), zj, zj**2, zj**3]) * torch.as_tensor(c, dtype=torch.float64)).sum()
            return torch.cat([z[:i], (z[i] - phi).reshape(1), z[i + 1 :]])

        for fn in (inverse, alternative):
            jac = torch.autograd.functional.jacobian(fn, xt)
            worst = max(worst, abs(float(torch.linalg.slogdet(jac)[1]) - float(value)))
    return worst


def _ols_residual_maker(a: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the columns of ``a`` (for residuals ``y - Q Q^T y``)."""
    q, _ = np.linalg.qr(a)
    return q


def _fit_gaussian(y: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, float]:
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return coef, float(np.mean((y - a @ coef) ** 2))


def _loglik(y: np.ndarray, a: np.ndarray, coef: np.ndarray, var: float) -> np.ndarray:
    return -0.5 * (np.log(2 * np.pi * var) + (y - a @ coef) ** 2 / var)


@checked(z=Array("n d"), env=Array("n", integer=True), absorb=Bool())
def edge_gap(
    z: np.ndarray,
    env: np.ndarray,
    graph: nx.DiGraph,
    edge: tuple[int, int],
    *,
    absorb: bool = True,
    test_fraction: float = 0.5,
    seed: int = 0,
) -> np.ndarray:
    """Per environment, the held-out log-likelihood per sample of the true model family minus that of the
    model with ``edge = (j, i)`` removed (nats; module docstring).

    Both models give ``z_i`` Gaussian noise with a location and scale of its own in every environment and
    influences ``lambda_ki(u) g(z_k)`` from its parents, fitted by maximum likelihood on a random part of
    the samples; the alternative drops the parent ``j`` and, with ``absorb``, subtracts one
    environment-independent ``phi(z_j)`` (:func:`phi_basis`, its coefficients fitted by BFGS on the summed
    per-environment log-likelihood). ``absorb=False`` (``phi = 0``: nothing absorbs the removal) is the
    lens's positive control. Returns ``(n_envs,)``, environments in label order.
    """
    j, i = edge
    if not graph.has_edge(j, i):
        raise ValueError(f"edge must be an edge of the graph {sorted(graph.edges)}, got {edge}")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction}")
    z, env = np.asarray(z, dtype=float), np.asarray(env, dtype=int)
    labels = np.unique(env)
    rng = np.random.default_rng(seed)
    test = rng.random(len(z)) < test_fraction
    others = [k for k in sorted(graph.predecessors(i)) if k != j]
    y = z[:, i]
    base = np.column_stack([np.ones(len(z)), *(g(z[:, k]) for k in others)])
    full = np.column_stack([base, g(z[:, j])])
    basis = phi_basis(z[:, j])
    parts = []
    for u in labels:
        tr, te = (env == u) & ~test, (env == u) & test
        if tr.sum() < full.shape[1] + 2 or te.sum() < 1:
            raise ValueError(f"environment {u} has too few samples to fit and test both models")
        parts.append((tr, te))
    # the alternative's phi: one coefficient vector c for every environment, minimising
    # sum_u n_u / 2 log(RSS_u(c) / n_u), RSS_u the residual after the per-environment regression on `base`
    c = np.zeros(basis.shape[1])
    if absorb:
        proj = []
        for tr, _ in parts:
            q = _ols_residual_maker(base[tr])
            ry = y[tr] - q @ (q.T @ y[tr])
            rb = basis[tr] - q @ (q.T @ basis[tr])
            proj.append((ry, rb, tr.sum()))

        def objective(coef: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = 0.0, np.zeros_like(coef)
            for ry, rb, n_u in proj:
                r = ry - rb @ coef
                rss = float(r @ r)
                value += 0.5 * n_u * np.log(rss / n_u)
                grad -= n_u * (rb.T @ r) / rss
            return value, grad

        start, *_ = np.linalg.lstsq(
            np.vstack([rb for _, rb, _ in proj]), np.concatenate([ry for ry, _, _ in proj]), rcond=None
        )
        c = minimize(objective, start, jac=True, method="BFGS").x
    gaps = np.empty(len(labels))
    for k, (tr, te) in enumerate(parts):
        coef_full, var_full = _fit_gaussian(y[tr], full[tr])
        y_alt = y - basis @ c
        coef_alt, var_alt = _fit_gaussian(y_alt[tr], base[tr])
        gaps[k] = float(
            np.mean(_loglik(y[te], full[te], coef_full, var_full) - _loglik(y_alt[te], base[te], coef_alt, var_alt))
        )
    return gaps


def flow_data(
    scm: LatentSCM, n_per_env: int, rng: np.random.Generator, n_layers: int = 2
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Observations of ``scm`` through a random square flow: ``(x, env, mats)``. The latents are not
    standardised, so that ``F^{-1}(x)`` returns them exactly and the generator's ``g`` stays in the models' family."""
    from .scm import sample_latents

    env = np.repeat(np.arange(scm.n_envs), n_per_env)
    z = sample_latents(scm, env, rng)
    mats = make_mixing(scm.d_latent, scm.d_latent, rng, n_layers)
    return flow(z, mats), env, mats
