"""Latent causal models whose causal influences change across environments, and their observations.

A latent DAG over ``d`` variables (a :class:`networkx.DiGraph`, nodes in causal order ``0..d-1``);
in environment ``u`` each latent follows the additive-noise model, eq. (crl-anm),

    z_i = f_i(pa_i; u) + n_i,   f_i(pa_i; u) = sum_{j in pa_i} lambda_ji(u) g(z_j),

with exogenous noise ``n_i`` whose location and scale depend on ``u``, or its post-nonlinear
version ``z_i = h(f_i(pa_i; u) + n_i)`` (eq. crl-pnl). An edge whose influence *changes* gets a new
weight ``lambda_ji(u)`` in every environment; a *fixed* edge keeps one weight. The latents are then
mixed into observations by an injective leaky-ReLU MLP (eq. crl-mixing).

The kinematic chain (hip -> knee -> ankle angles, gait-dependent couplings) is the motion-like case;
:func:`stick_figure` renders its angles as 2-D joint coordinates, the observations of that case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from ..core.arguments import Array, OfInstance, checked
from ..core.params import Bool, Choice, Float, Int, Positive
from ..core.validation import check_choice, check_int, check_positive

NOISE_FAMILIES: tuple[str, ...] = ("gaussian", "laplace")
#: the most latents, observed dimensions, environments or layers a model here takes
MAX_SIZE = 10_000
#: the most numbers (samples x dimensions) one data set may hold
MAX_NUMBERS = 10**8
#: segment lengths of the stick figure: thigh, shin, foot
SEGMENTS: tuple[float, float, float] = (1.0, 1.0, 0.35)


@checked(d_latent=Int(2, MAX_SIZE))
def default_graph(d_latent: int = 3) -> nx.DiGraph:
    """A chain ``0 -> 1 -> ... -> d-1`` plus the edge ``0 -> 2`` (when ``d >= 3``): a DAG in causal order."""
    d_latent = check_int("d_latent", d_latent, minimum=2)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(d_latent))
    graph.add_edges_from((i, i + 1) for i in range(d_latent - 1))
    if d_latent >= 3:
        graph.add_edge(0, 2)
    return graph


def g(z: np.ndarray) -> np.ndarray:
    """The parents' nonlinearity in eq. (crl-anm): ``tanh(z) + 0.3 z`` (monotone, not saturating)."""
    return np.tanh(z) + 0.3 * z


def h(v: np.ndarray) -> np.ndarray:
    """The post-nonlinearity of eq. (crl-pnl): ``v / 2 + 2 tanh(2 v)`` (strictly increasing, so invertible).

    Slope 4.5 at 0 and 0.5 in the tails: strongly nonlinear, but it grows linearly, so a chain of
    post-nonlinear latents stays well scaled. (A cubic ``v + v^3 / 3`` compounds along the chain:
    with three latents the last one had kurtosis in the thousands, with ten it overflowed to inf.)
    """
    return 0.5 * v + 2.0 * np.tanh(2.0 * v)


#: :meth:`LatentSCM.mechanism`'s arguments, checked against the model (its latents and environments)
_LATENT_INPUT = OfInstance("_check_mechanism_input", "i in [0, d - 1], z finite (n, d), env labels in [0, n_envs - 1]")


@checked(
    weights=Array("u d d"),
    noise_loc=Array("u d"),
    noise_scale=Array("u d"),
    noise=Choice(NOISE_FAMILIES),
    post_nonlinear=Bool(),
)
@dataclass(frozen=True)
class LatentSCM:
    """A latent causal model with environment-dependent influences and noise.

    ``weights[u, j, i]`` is ``lambda_ji(u)`` (zero where ``j -> i`` is not an edge);
    ``noise_loc[u, i]`` and ``noise_scale[u, i]`` parametrise ``n_i`` in environment ``u``.
    ``changing`` lists the edges whose influence changes across environments.
    """

    graph: nx.DiGraph
    changing: frozenset[tuple[int, int]]
    weights: np.ndarray
    noise_loc: np.ndarray
    noise_scale: np.ndarray
    noise: str = "gaussian"
    post_nonlinear: bool = False

    def __post_init__(self) -> None:
        d = self.weights.shape[1]
        if sorted(self.graph.nodes) != list(range(d)):
            raise ValueError(f"graph must have the nodes 0..{d - 1} of weights (u, d, d), got {self.graph.nodes}")
        if not self.changing <= set(self.graph.edges):
            raise ValueError(f"changing must be a subset of the graph's edges, got {sorted(self.changing)}")
        if not np.all(np.asarray(self.noise_scale) > 0):
            raise ValueError("noise_scale must hold positive numbers")

    @property
    def d_latent(self) -> int:
        return self.graph.number_of_nodes()

    @property
    def n_envs(self) -> int:
        return self.weights.shape[0]

    def _check_mechanism_input(self, name: str, value: object) -> Any:
        """``mechanism``'s ``i`` (a latent index), ``z`` (finite, ``(n, d)``) or ``env`` (labels ``(n,)``)."""
        d = self.d_latent
        if name == "i":
            return check_int(name, value, minimum=0, maximum=d - 1)
        if name == "z":
            return Array("n d").check_dims(name, value, {"d": (d, "the model's latents")})
        env = Array("n", integer=True).check_dims(name, value, {})
        if np.min(env) < 0 or np.max(env) >= self.n_envs:
            raise ValueError(f"{name} must hold environment labels in [0, {self.n_envs - 1}]")
        return env

    @checked(i=_LATENT_INPUT, z=_LATENT_INPUT, env=_LATENT_INPUT)
    def mechanism(self, i: int, z: np.ndarray, env: np.ndarray) -> np.ndarray:
        """``f_i(pa_i; u)`` of eq. (crl-anm) for rows ``z`` (``(n, d)``) in environments ``env`` (``(n,)``).

        ``z`` and ``env`` must have the same number of rows ``n``."""
        if len(z) != len(env):
            raise ValueError(f"env must hold one label per row of z ({len(z)}), got {len(env)}")
        lam = self.weights[env][:, :, i]  # (n, d): lambda_ji(u) for every j (zero off the graph)
        return (lam * g(z)).sum(axis=1)

    def identifiable(self) -> list[bool]:
        """Our reading of the partial-identifiability result: ``z_i`` is identifiable (up to
        permutation and an invertible component-wise map) when every edge into it changes
        influence across environments; a fixed edge ``j -> i`` lets ``z_i - lambda_ji g(z_j)`` stand in
        for ``z_i``, with the fixed edge removed, and nothing in the data tells the two apart."""
        return [all(e in self.changing for e in self.graph.in_edges(i)) for i in range(self.d_latent)]


@checked(n_envs=Int(2, MAX_SIZE), noise=Choice(NOISE_FAMILIES), post_nonlinear=Bool())
def make_scm(
    graph: nx.DiGraph,
    changing: frozenset[tuple[int, int]] | set[tuple[int, int]] | None,
    n_envs: int,
    rng: np.random.Generator,
    *,
    noise: str = "gaussian",
    post_nonlinear: bool = False,
    scale_range: tuple[float, float] = (0.3, 1.2),
) -> LatentSCM:
    """Draw the environments' influences and noise parameters of a latent model on ``graph``.

    ``changing``: the edges whose weight is drawn anew per environment (``None``: all edges).
    Weights have magnitude in [0.6, 1.6] and a random sign (a fixed edge keeps environment 0's
    weight everywhere, so two calls with the same ``rng`` state differ only in what changes); noise
    scales are log-uniform in ``scale_range`` and locations uniform in [-0.8, 0.8], drawn per
    environment (the changes that make the exogenous noise identifiable, as in iVAE).
    """
    try:
        low, high = (float(v) for v in scale_range)
    except (TypeError, ValueError) as error:
        raise ValueError(f"scale_range must be two numbers (low, high), got {scale_range!r}") from error
    if not 0 < low <= high < np.inf:
        raise ValueError(f"scale_range must be (low, high) with 0 < low <= high < inf, got {scale_range}")
    if not nx.is_directed_acyclic_graph(graph):
        raise ValueError("graph must be a directed acyclic graph")
    d = graph.number_of_nodes()
    if sorted(graph.nodes) != list(range(d)) or any(j >= i for j, i in graph.edges):
        raise ValueError("graph must have nodes 0..d-1 in causal order (every edge j -> i with j < i)")
    n_envs = check_int("n_envs", n_envs, minimum=2)
    check_choice("noise", noise, NOISE_FAMILIES)
    edges = set(graph.edges)
    changing = frozenset(edges if changing is None else changing)
    if not changing <= edges:
        raise ValueError(f"changing must be a subset of the graph's edges {sorted(edges)}, got {sorted(changing)}")
    weights = np.zeros((n_envs, d, d))
    for j, i in sorted(edges):  # every edge draws per-environment weights, so that patterns share draws
        w = rng.uniform(0.6, 1.6, n_envs) * rng.choice([-1.0, 1.0], n_envs)
        weights[:, j, i] = w if (j, i) in changing else w[0]
    noise_scale = np.exp(rng.uniform(np.log(low), np.log(high), (n_envs, d)))
    noise_loc = rng.uniform(-0.8, 0.8, (n_envs, d))
    return LatentSCM(graph, changing, weights, noise_loc, noise_scale, noise, post_nonlinear)


@checked(skip_nested=True, env=Array("n", integer=True))  # scm.mechanism in the loop runs bare
def sample_latents(scm: LatentSCM, env: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Latents ``(n, d)`` for environment labels ``env`` (``(n,)``), by ancestral sampling, eq. (crl-anm)/(crl-pnl)."""
    env = np.asarray(env, dtype=int)
    if env.ndim != 1 or (env.size and (env.min() < 0 or env.max() >= scm.n_envs)):
        raise ValueError(f"env must be a 1-D array of labels in [0, {scm.n_envs - 1}]")
    n, d = env.size, scm.d_latent
    if scm.noise == "gaussian":
        base = rng.standard_normal((n, d))
    else:
        base = rng.laplace(0.0, 1.0 / np.sqrt(2.0), (n, d))  # unit variance
    exo = scm.noise_loc[env] + scm.noise_scale[env] * base
    z = np.zeros((n, d))
    for i in nx.topological_sort(scm.graph):
        pre = scm.mechanism(i, z, env) + exo[:, i]
        z[:, i] = h(pre) if scm.post_nonlinear else pre
    return z


@checked(d_latent=Int(1, MAX_SIZE), d_obs=Int(1, MAX_SIZE), n_layers=Int(1, 100))
def make_mixing(d_latent: int, d_obs: int, rng: np.random.Generator, n_layers: int = 2) -> list[np.ndarray]:
    """Weights of an injective mixing MLP, eq. (crl-mixing): ``d_latent -> d_obs`` of full column rank, then
    square layers kept well conditioned (singular values in [0.5, 1.5])."""
    d_obs = check_int("d_obs", d_obs, minimum=d_latent)
    mats = []
    for k in range(n_layers):
        a = d_latent if k == 0 else d_obs
        q1, _ = np.linalg.qr(rng.standard_normal((d_obs, d_obs)))
        q2, _ = np.linalg.qr(rng.standard_normal((a, a)))
        s = rng.uniform(0.5, 1.5, a)
        mats.append(q1[:, :a] @ np.diag(s) @ q2.T)  # (d_obs, a), rank a
    return mats


@checked(z=Array("... d"), slope=Positive())
def mix(z: np.ndarray, mats: list[np.ndarray], slope: float = 0.2) -> np.ndarray:
    """Observations ``x = W_L sigma(... sigma(W_1 z))`` with leaky ReLU ``sigma`` (slope ``slope``): injective."""
    if not mats:
        raise ValueError("mats must hold at least one weight matrix")
    width = np.shape(z)[-1]
    for k, w in enumerate(mats):
        Array("o a").check(f"mats[{k}]", w)
        if np.shape(w)[1] != width:
            raise ValueError(
                f"mats[{k}] must have {width} columns "
                f"({'the width of z' if k == 0 else f'the rows of mats[{k - 1}]'}), "
                f"got shape {np.shape(w)}"
            )
        width = np.shape(w)[0]
    check_positive("slope", slope)
    x = z
    for k, w in enumerate(mats):
        x = x @ w.T
        if k < len(mats) - 1:
            x = np.where(x > 0, x, slope * x)
    return x


# --- the motion-like case: a kinematic chain hip -> knee -> ankle ---------------------------------

MOTION_JOINTS: tuple[str, ...] = ("hip", "knee", "ankle")
MOTION_GAITS: tuple[str, ...] = ("slow walk", "walk", "brisk walk", "jog", "run", "limp")


@checked()
def motion_scm(rng: np.random.Generator, changing: set[tuple[int, int]] | None = None) -> LatentSCM:
    """The kinematic chain hip -> knee -> ankle, one environment per gait.

    Angles are in radians around a neutral pose: the knee's bend follows the hip's swing through a
    gait-dependent coupling, and the ankle follows the knee; each gait also has its own swing range
    (noise scale) and mean pose (noise location).
    """
    graph = nx.DiGraph([(0, 1), (1, 2)])
    n = len(MOTION_GAITS)
    changing = frozenset(graph.edges if changing is None else changing)
    if not changing <= set(graph.edges):
        raise ValueError(f"changing must be a subset of the chain's edges [(0, 1), (1, 2)], got {sorted(changing)}")
    weights = np.zeros((n, 3, 3))
    weights[:, 0, 1] = np.linspace(0.4, 1.4, n) if (0, 1) in changing else 0.9  # hip swing drives the knee
    weights[:, 1, 2] = np.linspace(-0.2, -0.9, n) if (1, 2) in changing else -0.5  # knee flexion, ankle reacts
    # gaits in the order of MOTION_GAITS: couplings, swing ranges and mean knee bend grow with speed
    noise_scale = np.column_stack([np.linspace(0.15, 0.45, n), np.linspace(0.1, 0.3, n), np.full(n, 0.12)])
    noise_scale = noise_scale * rng.uniform(0.8, 1.2, (n, 3))
    noise_loc = np.column_stack([np.zeros(n), np.linspace(0.1, 0.5, n), np.linspace(-0.05, 0.1, n)])
    return LatentSCM(graph, changing, weights, noise_loc, noise_scale, "gaussian", False)


@checked(angles=Array("n 3"))
def stick_figure(angles: np.ndarray) -> np.ndarray:
    """Joint coordinates of a leg from ``(n, 3)`` angles (hip swing, knee bend, ankle bend; radians).

    Returns ``(n, 4, 2)``: hip (at the origin), knee, ankle and toe positions. The thigh hangs at
    angle ``hip`` from the downward vertical, the shin bends back by ``knee`` and the foot points
    forward, rotated by ``ankle``.
    """
    angles = np.asarray(angles, dtype=float)
    if angles.ndim != 2 or angles.shape[1] != 3:
        raise ValueError(f"angles must have shape (n, 3), got {angles.shape}")
    thigh, shin, foot = SEGMENTS
    a1 = angles[:, 0]
    a2 = a1 - angles[:, 1]
    a3 = a2 + np.pi / 2 + angles[:, 2]
    hip = np.zeros((len(angles), 2))
    knee = hip + thigh * np.column_stack([np.sin(a1), -np.cos(a1)])
    ankle = knee + shin * np.column_stack([np.sin(a2), -np.cos(a2)])
    toe = ankle + foot * np.column_stack([np.sin(a3), -np.cos(a3)])
    return np.stack([hip, knee, ankle, toe], axis=1)


@checked(x=Array("n o"), env=Array("n", integer=True), z=Array("n d"))
@dataclass(frozen=True)
class LatentData:
    """A data set: observations ``x`` ``(n, d_obs)``, environment labels ``env`` ``(n,)`` and the true
    latents ``z`` ``(n, d)``, which only the evaluation reads."""

    x: np.ndarray
    env: np.ndarray
    z: np.ndarray
    scm: LatentSCM

    def __post_init__(self) -> None:
        if self.z.shape[1] != self.scm.d_latent:
            raise ValueError(f"z must have the scm's {self.scm.d_latent} latents as columns, got shape {self.z.shape}")
        if self.env.min() < 0 or self.env.max() >= self.scm.n_envs:
            raise ValueError(f"env must hold labels in [0, {self.scm.n_envs - 1}]")


@checked(n_per_env=Int(2, MAX_NUMBERS), d_obs=Int(1, MAX_SIZE), n_layers=Int(1, 100), obs_noise=Float(0.0, 100.0))
def make_data(
    scm: LatentSCM,
    n_per_env: int,
    d_obs: int,
    rng: np.random.Generator,
    *,
    n_layers: int = 2,
    obs_noise: float = 0.01,
) -> LatentData:
    """``n_per_env`` samples per environment, mixed by a random injective MLP into ``d_obs`` dimensions
    (latents standardised first, over all environments), plus Gaussian noise of std ``obs_noise``."""
    n_per_env = check_int("n_per_env", n_per_env, minimum=2)
    if scm.n_envs * n_per_env * (d_obs + scm.d_latent) > MAX_NUMBERS:
        raise ValueError(f"n_per_env x n_envs x (d_obs + d_latent) must be <= {MAX_NUMBERS:.0e}, got {n_per_env}")
    env = np.repeat(np.arange(scm.n_envs), n_per_env)
    z = sample_latents(scm, env, rng)
    zs = (z - z.mean(0)) / z.std(0)
    x = mix(zs, make_mixing(scm.d_latent, d_obs, rng, n_layers))
    x = x + obs_noise * rng.standard_normal(x.shape)
    return LatentData((x - x.mean(0)) / x.std(0), env, z, scm)


@checked(n_per_env=Int(2, MAX_NUMBERS), obs_noise=Float(0.0, 100.0))
def make_motion_data(
    scm: LatentSCM, n_per_env: int, rng: np.random.Generator, *, obs_noise: float = 0.01
) -> LatentData:
    """Stick-figure observations: the knee, ankle and toe coordinates (6 numbers) of each sampled pose."""
    n_per_env = check_int("n_per_env", n_per_env, minimum=2)
    if scm.d_latent != 3:
        raise ValueError(f"scm must be a kinematic chain of 3 joint angles (motion_scm), got {scm.d_latent} latents")
    if scm.n_envs * n_per_env * 12 > MAX_NUMBERS:
        raise ValueError(f"n_per_env x n_envs x 12 must be at most {MAX_NUMBERS:.0e}, got n_per_env={n_per_env}")
    env = np.repeat(np.arange(scm.n_envs), n_per_env)
    z = sample_latents(scm, env, rng)
    x = stick_figure(z)[:, 1:].reshape(len(z), -1)
    x = x + obs_noise * rng.standard_normal(x.shape)
    return LatentData((x - x.mean(0)) / x.std(0), env, z, scm)
