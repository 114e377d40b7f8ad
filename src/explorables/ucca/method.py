"""UCCA: CCA from two *unpaired* sets, through the quadratic assignment problem.

The pipeline (our reconstruction from the abstract; see the chapter):

1. whiten each view to ``d`` principal directions, separately (eq. ``ucca-whiten``): no pairing needed;
2. find a pairing ``P`` that maximises ``Σ ρ_i²(P) = tr(A P B Pᵀ) / n²`` (eq. ``ucca-qap``), a
   Koopmans–Beckmann QAP, approximately: scipy's FAQ from several starts, each a random rotation
   of the reduced space, then the sign flips of the best pairing's canonical directions
   (:func:`faq_pairing`, :func:`reflected_pairings`), or, for large ``n``, an entropic relaxation in
   torch (:func:`entropic_pairing`);
3. alternate CCA on the matched pairs and a linear assignment (:func:`refine_pairing`,
   eq. ``ucca-alternate``), which never decreases the sum of the top-``k`` correlations;
4. the projections are those of the last CCA, mapped back to the raw views.

The chapter's ablations of step 2 run through the same :func:`ucca`: ``solver="none"`` (FAQ off: the
best-ranked start and its reflections, by assignment alone, go to step 3) and ``starts="scipy"`` (FAQ from
scipy's own random starts, reflections kept).

Nothing here ever sees the true pairing: the functions receive two sets of rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment, quadratic_assignment
from scipy.stats import ortho_group
from threadpoolctl import threadpool_limits

from ..core.arguments import Array, checked
from ..core.device import resolve_device
from ..core.params import Bool, Choice, Device, Int, Positive
from ..core.validation import check_int
from .cca import MAX_SIZE, CCAFit, check_permutation, fit_whitening

SOLVERS: tuple[str, ...] = ("faq", "entropic", "none")
#: where FAQ starts: the screened rotation starts (the pipeline), or scipy's own random doubly stochastic starts
STARTS: tuple[str, ...] = ("rotation", "scipy")
#: the most restarts, iterations or alternations a solver here takes
MAX_ITERATIONS = 100_000


@checked(pairing=Array("n", integer=True))
@dataclass
class UCCAFit:
    """What :func:`ucca` returns: the projections, the final pairing and the path that led to it."""

    fit: CCAFit  # projections acting on the raw views
    pairing: np.ndarray  # row i of X matched with row pairing[i] of the Y it was given
    qap_objective: float  # Σρ² (all d directions) of the pairing after step 2, eq. (ucca-qap)
    pairings: list[np.ndarray] = field(default_factory=list)  # after step 2, then after each alternation
    objectives: list[float] = field(default_factory=list)  # Σ of the top-k correlations along the way
    restart_objectives: list[float] = field(default_factory=list)  # Σρ² of each FAQ restart
    top_start: np.ndarray | None = None  # the best-ranked screened start (FAQ solver, rotation starts), else None


@checked(Xw=Array("n d"), Yw=Array("m d"))
def rotation_start(Xw: np.ndarray, Yw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A starting pairing: a random orthogonal map ``Q`` of the reduced space, then ``max_P tr(P ỸQᵀX̃ᵀ)``.

    For whitened views of one latent, ``X̃ ≈ Ỹ Q`` for some orthogonal ``Q`` (d × d), so random
    ``Q`` (Haar, from scipy) explore the few-dimensional space where the good pairings live; the
    pairing of each is a linear assignment (scipy's ``linear_sum_assignment``).
    """
    _, pairing = linear_sum_assignment(Xw @ _random_rotation(Xw.shape[1], rng) @ Yw.T, maximize=True)
    return pairing


def _random_rotation(d: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-random orthogonal ``d × d`` matrix (scipy's ``ortho_group``; ``±1`` for ``d = 1``)."""
    return ortho_group.rvs(d, random_state=rng) if d > 1 else np.array([[rng.choice([-1.0, 1.0])]])


def _procrustes(Xw: np.ndarray, Yw: np.ndarray, pairing: np.ndarray, n_steps: int) -> np.ndarray:
    """At most ``n_steps`` rounds of orthogonal map (Procrustes) + assignment from ``pairing``; stops when stable."""
    for _ in range(n_steps):
        u, _, vt = np.linalg.svd(Xw.T @ Yw[pairing])
        _, new = linear_sum_assignment(Xw @ (u @ vt) @ Yw.T, maximize=True)
        if np.array_equal(new, pairing):
            break
        pairing = new
    return pairing


def screened_start(
    Xw: np.ndarray, Yw: np.ndarray, rng: np.random.Generator, n_steps: int = 5, rotation: np.ndarray | None = None
) -> np.ndarray:
    """A :func:`rotation_start` improved by a few cheap rounds of orthogonal map + assignment (Procrustes).

    ``rotation`` (d × d orthogonal) replaces the random rotation of the start (then nothing is drawn)."""
    if rotation is None:
        pairing = rotation_start(Xw, Yw, rng)
    else:
        _, pairing = linear_sum_assignment(Xw @ rotation @ Yw.T, maximize=True)
    return _procrustes(Xw, Yw, pairing, n_steps)


def batch_screened_rotations(
    Xw: np.ndarray, Yw: np.ndarray, n_candidates: int, rng: np.random.Generator, *, batch: int = 64, n_steps: int = 5
) -> list[np.ndarray]:
    """``n_candidates`` random rotations, each screened on one random batch of rows (no pairing information).

    One batch of ``batch`` rows is drawn from each view (different rows: the views are unpaired); each random
    rotation ``Q`` gets the Procrustes rounds of :func:`screened_start` on the batch only (``batch × batch``
    assignments, ~100× cheaper than ``n × n``). Returns the rotations those rounds end at, best first by the
    batch's ``Σρ²`` (eq. ``ucca-qap``): many cheap candidates, of which :func:`ranked_starts` screens the best on
    the full views.
    """
    n, m = Xw.shape[0], min(batch, Xw.shape[0], Yw.shape[0])
    xs, ys = Xw[rng.choice(n, m, replace=False)], Yw[rng.choice(Yw.shape[0], m, replace=False)]
    scored = []
    for _ in range(n_candidates):
        _, pairing = linear_sum_assignment(xs @ _random_rotation(Xw.shape[1], rng) @ ys.T, maximize=True)
        pairing = _procrustes(xs, ys, pairing, n_steps)
        u, _, vt = np.linalg.svd(xs.T @ ys[pairing])
        scored.append((_sum_rho2(xs, ys, pairing), u @ vt))
    return [q for _, q in sorted(scored, key=lambda c: c[0], reverse=True)]


def reflected_pairings(Xw: np.ndarray, Yw: np.ndarray, pairing: np.ndarray) -> list[np.ndarray]:
    """The pairings of ``pairing``'s canonical directions with some of their signs flipped (eq. ``ucca-reflect``).

    CCA on the matched pairs gives ``X̃ᵀPỸ/n = U diag(ρ) Vᵀ``; each direction is defined only up to
    sign, so for every sign vector ``σ ∈ {±1}^d`` other than all ``+1`` the pairing
    ``max_P tr(P Ỹ V diag(σ) Uᵀ X̃ᵀ)`` (scipy's ``linear_sum_assignment``) matches ``x̃_i`` with the ``ỹ_j``
    whose ``c``-th canonical coordinate is *reflected* where ``σ_c = −1``. Returns the ``2^d − 1`` pairings;
    the QAP objective decides between them and ``pairing`` (no pairing information is used).
    """
    u, _, vt = np.linalg.svd(Xw.T @ Yw[pairing])
    out = []
    for signs in product((1.0, -1.0), repeat=Xw.shape[1]):
        if min(signs) < 0:
            _, reflected = linear_sum_assignment(Xw @ (u * np.array(signs)) @ vt @ Yw.T, maximize=True)
            out.append(reflected)
    return out


def _sum_rho2(Xw: np.ndarray, Yw: np.ndarray, p: np.ndarray) -> float:
    """``Σρ²`` of a pairing, eq. (ucca-qap), in ``O(n d²)``."""
    return float(np.sum((Xw.T @ Yw[p] / Xw.shape[0]) ** 2))


@checked(Xw=Array("n d"), Yw=Array("n d"), n_restarts=Int(1, MAX_ITERATIONS), n_candidates=Int(0, MAX_ITERATIONS))
def ranked_starts(
    Xw: np.ndarray, Yw: np.ndarray, n_restarts: int, rng: np.random.Generator, n_candidates: int = 0
) -> list[np.ndarray]:
    """``n_restarts`` :func:`screened_start` pairings, best first by eq. (ucca-qap) (no pairing information).

    With ``n_candidates`` (0: off; else at least ``n_restarts``), the starts' rotations are not random: they are the
    best ``n_restarts`` of ``n_candidates`` rotations screened on a batch of rows (:func:`batch_screened_rotations`).
    """
    if 0 < n_candidates < n_restarts:
        raise ValueError(f"n_candidates must be 0 or >= n_restarts ({n_restarts}), got {n_candidates}")
    if n_candidates:
        rotations = batch_screened_rotations(Xw, Yw, n_candidates, rng)[:n_restarts]
        starts = [screened_start(Xw, Yw, rng, rotation=q) for q in rotations]
    else:
        starts = [screened_start(Xw, Yw, rng) for _ in range(n_restarts)]
    return sorted(starts, key=lambda p: _sum_rho2(Xw, Yw, p), reverse=True)


@checked(
    Xw=Array("n d"),
    Yw=Array("n d"),
    n_restarts=Int(1, MAX_ITERATIONS),
    n_faq=Int(1, MAX_ITERATIONS),
    maxiter=Int(1, MAX_ITERATIONS),
    reflect=Bool(),
    starts=Choice(STARTS),
    n_candidates=Int(0, MAX_ITERATIONS),
)
def faq_pairing(
    Xw: np.ndarray,
    Yw: np.ndarray,
    *,
    n_restarts: int = 48,
    n_candidates: int = 0,
    n_faq: int = 5,
    maxiter: int = 30,
    reflect: bool = True,
    starts: str = "rotation",
    rng: np.random.Generator,
    ranked: list[np.ndarray] | None = None,
) -> tuple[np.ndarray, list[float]]:
    """Approximately maximise ``tr(A P B Pᵀ)`` (eq. ``ucca-qap``) with scipy's FAQ from the best starts.

    ``A = X̃X̃ᵀ`` and ``B = ỸỸᵀ`` are the Gram matrices of the whitened views. ``n_restarts`` cheap
    starts (:func:`screened_start`: a random rotation of the reduced space, then a few Procrustes
    rounds) are ranked by the QAP objective; FAQ runs from the ``n_faq`` best. (The barycentre
    ``11ᵀ/n``, scipy's default, is a stationary point here: the views are centred, so ``A 1 = 0``
    and the gradient ``A J B`` vanishes.) With ``reflect``, FAQ then also runs from each sign flip of the
    best pairing's canonical directions (:func:`reflected_pairings`, eq. ``ucca-reflect``), repeated while
    that improves the objective. Everything is chosen by the objective alone: no pairing information is
    used. Returns the best permutation and the ``Σρ² = tr(A P B Pᵀ)/n²`` of each FAQ run (of its start where
    FAQ ended lower).

    ``starts="scipy"`` (the ablation of the starts) replaces the screened starts by ``n_faq`` of scipy's own
    random starts (``P0="randomized"``: the barycentre averaged with a random doubly stochastic matrix);
    ``n_restarts`` is then unused. A list passed as ``ranked`` receives the ranked screened starts (best first).
    ``n_candidates`` goes to :func:`ranked_starts` (the starts' rotations pre-screened on a batch of rows).
    """
    Xw, Yw = np.asarray(Xw, dtype=np.float64), np.asarray(Yw, dtype=np.float64)
    n = Xw.shape[0]
    A, B = Xw @ Xw.T, Yw @ Yw.T

    def objective(p: np.ndarray) -> float:
        return _sum_rho2(Xw, Yw, p)

    best, scores = None, []

    def search(start: np.ndarray | None) -> bool:  # one FAQ run; True if it (or its start) improves on the best
        nonlocal best
        P0 = "randomized" if start is None else np.eye(n)[start]
        options = dict(maximize=True, P0=P0, maxiter=maxiter, rng=rng)
        res = quadratic_assignment(A, B, method="faq", options=options)  # scipy's FAQ
        found = res.col_ind if start is None or float(res.fun) / n**2 >= objective(start) else start
        scores.append(objective(found))
        if best is None or scores[-1] > max(scores[:-1]) + 1e-12:
            best = found
            return True
        return False

    if starts == "rotation":
        screened = ranked_starts(Xw, Yw, n_restarts, rng, n_candidates)
        if ranked is not None:
            ranked.extend(screened)
        for start in screened[:n_faq]:
            search(start)
    else:
        for _ in range(n_faq):
            search(None)
    improved = reflect
    while improved:  # FAQ from the sign flips of the best pairing's canonical directions, eq. (ucca-reflect)
        improved = any([search(p) for p in reflected_pairings(Xw, Yw, best)])
    return np.asarray(best), scores


@checked(
    Xw=Array("n d"),
    Yw=Array("n d"),
    n_restarts=Int(1, MAX_ITERATIONS),
    epsilon=Positive(),
    n_outer=Int(1, MAX_ITERATIONS),
    n_sinkhorn=Int(1, MAX_ITERATIONS),
    device=Device(),
    reflect=Bool(),
)
def entropic_pairing(
    Xw: np.ndarray,
    Yw: np.ndarray,
    *,
    n_restarts: int = 8,
    epsilon: float = 0.5,
    n_outer: int = 30,
    n_sinkhorn: int = 50,
    device: str = "cpu",
    reflect: bool = True,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[float]]:
    """An entropic relaxation of eq. ``ucca-qap`` for large ``n`` (torch, any device), rounded to permutations.

    Mirror ascent on couplings ``T`` with uniform marginals, the entropic Gromov–Wasserstein
    iteration of Peyré et al. (2016) for the inner-product loss: ``T ← Sinkhorn(exp(A T B / ε))``.
    ``A T B = X̃ (X̃ᵀ T Ỹ) Ỹᵀ`` costs ``O(n² d)``, never ``O(n³)``. Each restart starts from a
    :func:`rotation_start` pairing; each result is rounded with ``linear_sum_assignment`` on ``T``
    and the best by ``Σρ²`` is kept. With ``reflect``, the sign flips of its canonical directions
    (:func:`reflected_pairings`, eq. ``ucca-reflect``) replace it while one scores higher (assignments
    only: no FAQ at this ``n``). Returns it and every restart's ``Σρ²``.
    """
    Xw, Yw = np.asarray(Xw, dtype=np.float64), np.asarray(Yw, dtype=np.float64)
    dev = resolve_device(device)
    n = Xw.shape[0]
    x = torch.as_tensor(Xw, dtype=torch.float64, device=dev)
    y = torch.as_tensor(Yw, dtype=torch.float64, device=dev)
    log_marg = torch.full((n,), -float(np.log(n)), dtype=torch.float64, device=dev)
    best, scores = None, []
    for _ in range(n_restarts):
        start = torch.as_tensor(rotation_start(Xw, Yw, rng), device=dev)
        T = torch.zeros((n, n), dtype=torch.float64, device=dev)
        T[torch.arange(n, device=dev), start] = 1.0 / n
        for _ in range(n_outer):
            logits = (x @ (x.T @ T @ y) @ y.T) / epsilon  # the gradient A T B of tr(A T B Tᵀ)/2, over ε
            f = torch.zeros(n, dtype=torch.float64, device=dev)
            for _ in range(n_sinkhorn):  # log-domain Sinkhorn to uniform marginals
                g = log_marg - torch.logsumexp(logits + f[:, None], dim=0)
                f = log_marg - torch.logsumexp(logits + g[None, :], dim=1)
            T = torch.exp(logits + f[:, None] + g[None, :])
        _, pairing = linear_sum_assignment(T.cpu().numpy(), maximize=True)
        scores.append(float(np.sum((Xw.T @ Yw[pairing] / n) ** 2)))
        if best is None or scores[-1] > max(scores[:-1]):
            best = pairing
    if reflect:
        best = reflect_by_assignment(Xw, Yw, best, scores)
    return np.asarray(best), scores


def reflect_by_assignment(Xw: np.ndarray, Yw: np.ndarray, best: np.ndarray, scores: list[float]) -> np.ndarray:
    """Eq. ``ucca-reflect`` without FAQ: the best sign flip of ``best``'s canonical directions
    (:func:`reflected_pairings`, assignments only) replaces it while it scores higher on ``Σρ²``; each
    replacement's ``Σρ²`` is appended to ``scores`` (which must hold ``best``'s). Draws nothing at random."""
    while True:
        candidates = [(_sum_rho2(Xw, Yw, p), p) for p in reflected_pairings(Xw, Yw, best)]
        value, reflection = max(candidates, key=lambda c: c[0])
        if value <= max(scores) + 1e-12:
            return best
        best = reflection
        scores.append(value)


@checked(
    Xw=Array("n d"),
    Yw=Array("n e"),
    pairing=Array("_"),
    n_components=Int(1, MAX_SIZE),
    n_alternations=Int(0, MAX_ITERATIONS),
)
def refine_pairing(
    Xw: np.ndarray, Yw: np.ndarray, pairing: np.ndarray, n_components: int, n_alternations: int
) -> tuple[list[np.ndarray], list[float]]:
    """Alternate CCA on the matched pairs and a linear assignment (eq. ``ucca-alternate``).

    Both steps maximise the same objective, the sum of the top-``k`` correlations
    ``Σ_c u_cᵀ X̃ᵀ P Ỹ v_c / n``: CCA over the directions for a fixed pairing, the assignment
    over pairings for fixed directions. So it never decreases; it stops when the pairing is stable.
    Returns the pairings (the start, then one per alternation) and the objective after each CCA.
    """
    Xw, Yw = np.asarray(Xw, dtype=np.float64), np.asarray(Yw, dtype=np.float64)
    n = Xw.shape[0]
    pairing = check_permutation(pairing, n, "pairing")
    n_components = check_int("n_components", n_components, 1, min(Xw.shape[1], Yw.shape[1]))
    pairings, objectives = [np.asarray(pairing)], []
    for _ in range(n_alternations + 1):
        u, s, vt = np.linalg.svd(Xw.T @ Yw[pairings[-1]] / n)  # CCA on the matched pairs, eq. (ucca-cca)
        objectives.append(float(s[:n_components].sum()))
        if len(pairings) > n_alternations:
            break
        score = (Xw @ u[:, :n_components]) @ (Yw @ vt[:n_components].T).T  # ⟨x̃_i U, ỹ_j V⟩ for all i, j
        _, new = linear_sum_assignment(score, maximize=True)  # the best pairing for these directions
        pairings.append(new)
        if np.array_equal(new, pairings[-2]):  # a fixed point: further rounds change nothing
            break
    return pairings, objectives


@checked(
    X=Array("n p", min_size=(("n", 2),)),
    Y=Array("n q"),
    n_components=Int(1, MAX_SIZE),
    d=Int(1, MAX_SIZE),
    n_restarts=Int(1, MAX_ITERATIONS),
    n_candidates=Int(0, MAX_ITERATIONS),
    n_faq=Int(1, MAX_ITERATIONS),
    n_alternations=Int(0, MAX_ITERATIONS),
    solver=Choice(SOLVERS),
    reflect=Bool(),
    starts=Choice(STARTS),
    device=Device(),
)
def ucca(
    X: np.ndarray,
    Y: np.ndarray,
    *,
    n_components: int = 2,
    d: int = 5,
    n_restarts: int = 48,
    n_candidates: int = 0,
    n_faq: int = 5,
    n_alternations: int = 10,
    solver: str = "faq",
    reflect: bool = True,
    starts: str = "rotation",
    device: str = "cpu",
    top_start: np.ndarray | None = None,
    rng: np.random.Generator,
) -> UCCAFit:
    """Unpaired CCA: projections of ``X`` (n × p) and ``Y`` (m × q, rows in any order) without pairs.

    ``X`` and ``Y`` must hold the same number of samples (a pairing is a permutation) and the
    order of ``Y``'s rows carries no information. Steps 1–4 of the module docstring.

    Ablations of step 2 (the chapter's "does the QAP step do the work?"): ``solver="none"`` runs no FAQ: the
    best of the ``n_restarts`` screened starts by eq. ``ucca-qap`` (drawn as ``solver="faq"`` draws them, so a
    generator in the same state gives the same starts), then, with ``reflect``, its sign flips by assignment
    alone (:func:`reflect_by_assignment`), goes to the alternation; ``starts="scipy"`` runs FAQ from scipy's
    own random starts instead (:func:`faq_pairing`), reflections kept. ``top_start`` (``solver="none"`` only) is
    the best-ranked screened start of an earlier fit on the same views (its ``top_start``), used instead of
    drawing the starts again: the same pairing as redrawing them from a generator in the same state, at no cost.
    ``n_candidates`` (FAQ and ``"none"`` solvers, rotation starts; 0: off) pre-screens the starts' rotations on a
    batch of rows (:func:`ranked_starts`).
    """
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    n = X.shape[0]
    d = check_int("d", d, 1, min(X.shape[1], Y.shape[1], n - 1))
    n_components = check_int("n_components", n_components, 1, d)
    wx, wy = fit_whitening(X, d, name="X"), fit_whitening(Y, d, name="Y")  # step 1, eq. (ucca-whiten)
    Xw, Yw = wx(X), wy(Y)
    # n × n products of small matrices: one BLAS thread is faster, and on a shared machine far faster
    if top_start is not None and solver != "none":
        raise ValueError(f"top_start is for solver='none' (the FAQ-off ablation), got solver={solver!r}")
    ranked: list[np.ndarray] = []
    with threadpool_limits(1, user_api="blas"):
        if solver == "faq":  # step 2, eq. (ucca-qap)
            start, restarts = faq_pairing(
                Xw, Yw, n_restarts=n_restarts, n_candidates=n_candidates, n_faq=n_faq, reflect=reflect,
                starts=starts, rng=rng, ranked=ranked,
            )  # fmt: skip
        elif solver == "none":  # the ablation: no FAQ; the best-ranked start, its reflections by assignment
            start = (
                check_permutation(top_start, n, "top_start") if top_start is not None
                else ranked_starts(Xw, Yw, n_restarts, rng, n_candidates)[0]
            )  # fmt: skip
            restarts = [_sum_rho2(Xw, Yw, start)]
            if reflect:
                start = reflect_by_assignment(Xw, Yw, start, restarts)
        else:
            start, restarts = entropic_pairing(Xw, Yw, n_restarts=n_restarts, device=device, reflect=reflect, rng=rng)
        qap = float(np.sum((Xw.T @ Yw[start] / n) ** 2))
        pairings, objectives = refine_pairing(Xw, Yw, start, n_components, n_alternations)  # step 3
    u, s, vt = np.linalg.svd(Xw.T @ Yw[pairings[-1]] / n)  # step 4: the last CCA, on raw coordinates
    fit = CCAFit(wx.matrix @ u[:, :n_components], wy.matrix @ vt[:n_components].T, s[:n_components], wx.mean, wy.mean)
    top = np.asarray(ranked[0]) if ranked else None
    return UCCAFit(fit, pairings[-1], qap, pairings, objectives, restarts, top)
