"""The chapter's reduced-scale reproduction, one code path for every scale.

For every seed in ``seeds`` one latent causal model is drawn (graph :func:`~.scm.default_graph`,
``n_envs`` environments, an injective MLP mixing), and for every *edge pattern* (which influences
change: all, all but one edge, none) data are sampled from it with the same noise draws and mixing,
so that two patterns differ only in what changes. Then, in one ensemble trained side by side:

* the **causal-prior VAE** on every pattern's data;
* the baselines on the all-change data: a **factorised environment prior** (iVAE), a **plain VAE** and
  the causal prior with **influences shared** across environments (not identifiable by the theory);
* a check in iVAE's own setting (the gate): the factorised prior on latents without edges,
  independent given the environment with variances that change across environments, hence
  identifiable by iVAE's theorem;
* the causal prior's own gate: the causal-prior VAE on the same edge-free latents (its influences'
  truth is zero, inside its class), so it should recover them as the factorised prior does;
* the causal-prior VAE on **post-nonlinear** all-change data (scored with rank correlations);
* the **motion-like case**: the kinematic chain hip -> knee -> ankle under six gaits, observed as
  stick-figure coordinates, fitted by the causal-prior and the plain VAE.

The ``book`` preset trains three patterns (all, fix 1→2, none), the baselines and the gate, and leaves
the post-nonlinear arm, the motion case and the two other patterns to the ``paper`` preset (the
page's minute); ``smoke`` keeps the motion case so that the tests cover it.

Apart from the VAEs, the **exact lens** (:mod:`.lens`, no learning): per pattern, seed and edge, the
held-out likelihood gap of removing the edge when a known flow absorbs one environment-independent
reparametrisation, and its positive control with nothing to absorb it.

Every setting and seed trains ``n_restarts`` members from different initial weights; the one with the
highest ELBO on its training data (which needs no true latents) is kept, for every arm alike.
Every kept member is scored by the per-component correlation after the optimal matching (MCC) of its
posterior means with the true latents, which only this evaluation reads. Each arm's chance level is
the median MCC of random rotations of its *whitened* targets (:func:`chance_level`). The motion case's
positive control is a supervised probe from the stick-figure coordinates to the angles
(:func:`probe_mcc`): it reads the true angles to fit, and no VAE sees it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import networkx as nx
import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from scipy.stats import rankdata, special_ortho_group

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Bool, Choice, Float, Int, Positive, Seeds, Tuple, param
from ..core.threads import one_cpu_thread
from .lens import edge_gap, flow_check, flow_data, unflow
from .metrics import correlation_matrix, matched_correlations, mcc
from .model import encode_means, fit
from .scm import (
    MOTION_GAITS,
    NOISE_FAMILIES,
    LatentData,
    default_graph,
    g,
    make_data,
    make_motion_data,
    make_scm,
    motion_scm,
)

#: which influences change: every edge, all but one edge, or none (the noise still changes)
PATTERNS: tuple[str, ...] = ("all", "fix 0→1", "fix 1→2", "fix 0→2", "none")


@checked(pattern=Choice(PATTERNS))
def changing_edges(pattern: str, edges: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The edges whose influence changes under ``pattern`` (one of :data:`PATTERNS`)."""
    if pattern == "all":
        return set(edges)
    if pattern == "none":
        return set()
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {PATTERNS}, got {pattern!r}")
    j, i = (int(c) for c in pattern.split()[1].split("→"))
    return set(edges) - {(j, i)}


#: the rotation lens: the quantile of the rotations' MCC that a learner identifying nothing beyond a linear
#: map reaches in its luckiest draws (fixed before the lens was first computed)
ROTATION_QUANTILE = 0.95

#: a latent is *active* when the variance of its posterior mean over the data exceeds this (Burda et al.)
ACTIVE_VAR = 0.01

#: the gate in iVAE's own setting: latents without edges (independent given u), the factorised prior
IVAE_CHECK = "factorised / independent latents"
#: the causal prior's own positive control: the same edge-free data (truth lambda = 0, inside the causal
#: prior's class), so the causal-prior learner should recover them as the factorised one does
CAUSAL_CHECK = "causal / independent latents"


@dataclass(frozen=True)
class Arm:
    """One trained setting: a prior on one kind of data (``pattern`` for the synthetic model)."""

    name: str
    prior: str
    data: str  # "synthetic", "independent" (no edges), "pnl" or "motion"
    pattern: str = "all"
    target: str = "latents"  # what the MCC is scored against: the latents, or the exogenous noise


@dataclass(frozen=True)
class CRLConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    seeds: tuple[int, ...] = param(
        (0, 1, 2, 3, 4, 5), Seeds(), "seeds (model draw, data, initial weights) of the verdicts"
    )
    d_latent: int = param(6, Int(3, 16), "number of latents (chain 0→1→…→d-1 plus the edge 0→2)")
    n_envs: int = param(
        40, Int(3, 100), "number of environments u (iVAE's theorem needs 2·d_latent + 1: location and scale change)"
    )
    n_per_env: int = param(75, Int(20), "samples per environment")
    noise_scales: tuple[float, float] = param(
        (0.25, 4.0),
        Tuple(Positive(), min_len=2, max_len=2),
        "range of the exogenous noise's scale per environment and latent (drawn log-uniform)",
    )
    d_obs: int = param(10, Int(6, 4096), "observed dimensions (the injective mixing's output; >= d_latent)")
    mixing_layers: int = param(2, Int(1, 6), "layers of the leaky-ReLU mixing MLP, eq. (crl-mixing) (1: linear)")
    noise: str = param("gaussian", Choice(NOISE_FAMILIES), "family of the exogenous noise n_i")
    edge_patterns: tuple[str, ...] = param(
        ("all", "fix 1→2", "none"),
        Tuple(Choice(PATTERNS), distinct=True),
        "which influences change, per trained pattern",
    )
    use_baselines: bool = param(
        True, Bool(), "train the factorised (iVAE), plain and shared-influence baselines on all-change data"
    )
    use_ivae_check: bool = param(
        True, Bool(), "the gate: train the factorised prior on latents without edges (iVAE's own setting)"
    )
    use_causal_check: bool = param(
        True,
        Bool(),
        "the causal prior's gate: train the causal prior on the same edge-free latents (inside its class)",
    )
    use_post_nonlinear: bool = param(False, Bool(), "train the causal prior on post-nonlinear data, eq. (crl-pnl)")
    use_motion: bool = param(False, Bool(), "run the kinematic-chain (stick-figure) case")
    n_steps: int = param(2000, Int(100), "Adam steps of every VAE (all trained side by side)")
    n_restarts: int = param(
        1, Int(1, 20), "initialisations per setting and seed; the one with the highest training ELBO is kept"
    )
    batch_size: int = param(64, Int(2), "samples per step and member")
    lr: float = param(1e-2, Positive(), "Adam learning rate")
    width: int = param(32, Int(4, 4096), "hidden units of the encoder and decoder MLPs")
    sparsity: float = param(
        0.1,
        Positive(),
        "weight of the L1 penalty on the learned influences (per sample); chosen on tuning draws (crl.tuning)",
    )
    obs_std: float = param(0.1, Positive(), "decoder standard deviation (standardised observations) after the warm-up")
    obs_std_start: float = param(0.5, Positive(), "decoder standard deviation at step 0, annealed to obs_std")
    warmup: float = param(
        0.6, Float(0.0, 1.0), "fraction of the steps over which the networks bend from linear and obs_std anneals"
    )
    cosine: bool = param(True, Bool(), "cosine learning-rate schedule (lr to 0 over n_steps)")
    encoder_env: bool = param(
        False, Bool(), "the environment priors' encoders read u too, q(z | x, u) as in iVAE (else q(z | x))"
    )
    use_lens: bool = param(
        True, Bool(), "the exact lens: likelihood gaps of removed edges under a known flow (no learning)"
    )
    n_rotations: int = param(500, Int(1), "random rotations behind each chance level of MCC")
    record_every: int = param(400, Int(100), "steps between MCC snapshots of the training-curve figure")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            seeds=(0, 1, 2),
            d_latent=3,
            n_envs=10,
            n_per_env=80,
            n_steps=200,
            n_restarts=2,
            edge_patterns=("all", "fix 1→2"),
            use_motion=True,
            record_every=100,
        ),
        "book": {},
        "paper": dict(
            device="auto",
            seeds=(0, 1, 2, 3, 4),
            d_latent=10,
            n_envs=40,
            n_per_env=2000,
            d_obs=64,
            mixing_layers=3,
            edge_patterns=PATTERNS,
            use_post_nonlinear=True,
            use_motion=True,
            n_steps=50_000,
            batch_size=512,
            lr=1e-3,
            width=256,
            record_every=1000,
        ),
    }
    PAPER_HARDWARE: ClassVar[str] = "one GPU (any with >= 8 GB); about an hour (estimate, not timed)"

    def cross_checks(self) -> None:
        if self.d_obs < self.d_latent:
            raise ValueError(f"d_obs must be >= d_latent ({self.d_latent}), got {self.d_obs}")
        if self.record_every % 100:
            raise ValueError(f"record_every must be a multiple of 100, got {self.record_every}")
        low, high = self.noise_scales
        if not low <= high:
            raise ValueError(f"noise_scales must be (low, high) with low <= high, got {self.noise_scales}")


class CRLResults(Results[CRLConfig]):
    """What :func:`run` returns: per-arm MCC summaries and the arrays the figures draw."""


@checked()
def arms(cfg: CRLConfig) -> list[Arm]:
    """The trained settings of ``cfg``, in a fixed order."""
    out = [Arm(f"causal / {p}", "causal", "synthetic", p) for p in cfg.edge_patterns]
    if cfg.use_baselines:
        out += [
            Arm("factorised / all", "factorised", "synthetic"),
            Arm("plain / all", "plain", "synthetic"),
            Arm("shared / all", "shared", "synthetic"),
        ]
    if cfg.use_ivae_check:
        out.append(Arm(IVAE_CHECK, "factorised", "independent", "none"))
    if cfg.use_causal_check:
        out.append(Arm(CAUSAL_CHECK, "causal", "independent", "none"))
    if cfg.use_post_nonlinear:
        out.append(Arm("causal / post-nonlinear", "causal", "pnl"))
    if cfg.use_motion:
        out += [Arm("motion / causal", "causal", "motion"), Arm("motion / plain", "plain", "motion")]
    return out


def data_seed(cfg: CRLConfig, s: int) -> int:
    """The seed of seed-entry ``s``'s model draw and data (derived from the base seed)."""
    return 1_000_003 * cfg.seed + 7_919 * s + 11


@checked()
def make_arm_data(cfg: CRLConfig, arm: Arm, s: int) -> LatentData:
    """The data set of ``arm`` under seed entry ``s``: same draws for every pattern of one seed."""
    if s >= len(cfg.seeds):
        raise ValueError(f"s must index cfg.seeds (0..{len(cfg.seeds) - 1}), got {s}")
    rng = np.random.default_rng(data_seed(cfg, s))
    if arm.data == "motion":
        n_per_gait = -(-cfg.n_envs * cfg.n_per_env // len(MOTION_GAITS))  # rounded up; trimmed to n later
        return make_motion_data(motion_scm(rng), n_per_gait, rng)
    graph = default_graph(cfg.d_latent)
    changing = changing_edges(arm.pattern, sorted(graph.edges))
    if arm.data == "independent":  # iVAE's setting: the same nodes without edges
        graph, changing = nx.empty_graph(cfg.d_latent, create_using=nx.DiGraph), set()
    scm = make_scm(
        graph,
        changing,
        cfg.n_envs,
        rng,
        noise=cfg.noise,
        post_nonlinear=arm.data == "pnl",
        scale_range=cfg.noise_scales,
    )
    return make_data(scm, cfg.n_per_env, cfg.d_obs, rng, n_layers=cfg.mixing_layers)


def exogenous_noise(data: LatentData) -> np.ndarray:
    """The exogenous noise ``n_i = z_i - f_i(pa_i; u)`` of every sample (additive-noise data only)."""
    if data.scm.post_nonlinear:
        raise ValueError("exogenous_noise needs additive-noise data (post_nonlinear=False)")
    return np.column_stack([data.z[:, i] - data.scm.mechanism(i, data.z, data.env) for i in range(data.scm.d_latent)])


def _pad(data: LatentData, n: int, d_obs: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations padded with zero columns to ``d_obs`` and trimmed to ``n`` rows (motion data)."""
    x = np.zeros((n, d_obs))
    x[:, : data.x.shape[1]] = data.x[:n]
    return x, data.env[:n]


def _stats(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {
        "per_seed": [float(v) for v in arr],
        "mean": float(arr.mean()),
        "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
        "median": float(np.median(arr)),
        "min": float(arr.min()),
        "max": float(arr.max()),
    }


def whiten(z: np.ndarray) -> np.ndarray:
    """Centred latents times the inverse square root of their covariance: uncorrelated, unit variance."""
    zc = z - z.mean(0)
    values, vectors = np.linalg.eigh(zc.T @ zc / len(zc))
    if values.min() <= 1e-12 * max(values.max(), 1e-300):
        raise ValueError("z must have a full-rank covariance to be whitened")
    return zc @ (vectors / np.sqrt(values)) @ vectors.T


def padded_white(z: np.ndarray, n_latent: int, seed: int) -> np.ndarray:
    """The whitened latents followed by ``n_latent - d`` independent white columns, exactly uncorrelated
    with them and with each other in the sample (the extra latents of a model with more latents than
    targets)."""
    w = whiten(np.asarray(z, dtype=float))
    extra = n_latent - w.shape[1]
    if extra < 0:
        raise ValueError(f"n_latent must be >= the number of targets ({w.shape[1]}), got {n_latent}")
    if extra == 0:
        return w
    e = np.random.default_rng(seed).standard_normal((len(w), extra))
    e -= w @ (w.T @ e) / len(w)  # remove the part along the (white, centred) targets
    return np.column_stack([w, whiten(e)])


def rotation_mccs(
    z: np.ndarray, n_rotations: int, seed: int, kind: str = "pearson", n_latent: int | None = None
) -> np.ndarray:
    """MCC of ``n_rotations`` random rotations (scipy's Haar measure) of the **whitened** latents against
    the latents. A learner that finds the latents only up to an invertible linear map, such as a plain
    VAE with an N(0, I) prior (uncorrelated, unit-variance codes: a rotation of the whitened latents),
    scores this by chance. Whitening matters: rotating merely standardised, correlated latents keeps
    their correlations and scores higher. With ``n_latent`` above the number of targets ``d`` (a model
    with more latents than targets, as the motion case), ``n_latent - d`` independent white dimensions
    join the rotation and the matching picks the best ``d`` of the ``n_latent`` rotated coordinates, as
    it does for the learned codes. Pearson uses ``corr(z, w R) = corr(z, w) R`` for white ``w``
    (exact); Spearman ranks each rotated copy."""
    w = padded_white(z, z.shape[1] if n_latent is None else n_latent, seed)
    d = w.shape[1]
    rotations = special_ortho_group.rvs(d, size=n_rotations, random_state=seed).reshape(n_rotations, d, d)
    out = np.empty(n_rotations)
    if kind == "pearson":
        zs = (z - z.mean(0)) / z.std(0)
        base = zs.T @ w / len(z)  # signed corr(z, w); w is white, so w @ r has unit variance for every r
        for k, corr in enumerate(np.abs(base @ rotations)):
            rows, cols = linear_sum_assignment(-corr)
            out[k] = corr[rows, cols].mean()
        return out
    zr = rankdata(z, axis=0)
    zr = (zr - zr.mean(0)) / zr.std(0)
    scaled_ranks = np.arange(len(z), dtype=float)
    scaled_ranks = (scaled_ranks - scaled_ranks.mean()) / scaled_ranks.std()
    for start in range(0, n_rotations, 50):  # rank 50 rotated copies at a time
        block = rotations[start : start + 50]
        # ranks from one argsort (continuous data: ties have probability zero), already centred and scaled
        order = np.argsort(np.einsum("nd,kde->kne", w, block), axis=1)
        rotated = np.empty(order.shape)
        np.put_along_axis(rotated, order, scaled_ranks[None, :, None], axis=1)
        for k, corr in enumerate(np.abs(np.einsum("nd,kne->kde", zr, rotated) / len(z))):
            rows, cols = linear_sum_assignment(-corr)
            out[start + k] = corr[rows, cols].mean()
    return out


def chance_stats(
    z: np.ndarray, n_rotations: int, seed: int, kind: str = "pearson", n_latent: int | None = None
) -> tuple[float, float, float]:
    """The chance level of MCC for targets ``z`` scored against ``n_latent`` codes (default: as many as
    targets): the median of :func:`rotation_mccs`, its own standard error (bootstrap over the rotations,
    200 resamples), and the :data:`ROTATION_QUANTILE` quantile of the rotations' MCC (the rotation lens:
    how high a learner that identifies nothing beyond a linear map scores in its luckiest draws)."""
    values = rotation_mccs(z, n_rotations, seed, kind, n_latent)
    boot = np.random.default_rng(seed).choice(values, (200, len(values)))
    return (
        float(np.median(values)),
        float(np.median(boot, axis=1).std(ddof=1)),
        float(np.quantile(values, ROTATION_QUANTILE)),
    )


def chance_level(
    z: np.ndarray, n_rotations: int, seed: int, kind: str = "pearson", n_latent: int | None = None
) -> tuple[float, float]:
    """The chance level of MCC for targets ``z`` scored against ``n_latent`` codes (default: as many as
    targets): the median of :func:`rotation_mccs`, and its own standard error (bootstrap over the
    rotations, 200 resamples); :func:`chance_stats` without the quantile."""
    median, se, _ = chance_stats(z, n_rotations, seed, kind, n_latent)
    return median, se


def chance_mcc(z: np.ndarray, n_rotations: int, seed: int, kind: str = "pearson") -> float:
    """The chance level of :func:`chance_level` alone (the median MCC of rotations of the whitened latents)."""
    return chance_level(z, n_rotations, seed, kind)[0]


def probe_features(x: np.ndarray) -> np.ndarray:
    """Monomials of degree up to 3 of the standardised observations (the probe's features)."""
    xs = (x - x.mean(0)) / np.maximum(x.std(0), 1e-12)
    d = xs.shape[1]
    cols = [np.ones(len(xs))] + [xs[:, i] for i in range(d)]
    cols += [xs[:, i] * xs[:, j] for i in range(d) for j in range(i, d)]
    cols += [xs[:, i] * xs[:, j] * xs[:, k] for i in range(d) for j in range(i, d) for k in range(j, d)]
    return np.column_stack(cols)


def probe_mcc(x: np.ndarray, z: np.ndarray, seed: int, ridge: float = 1e-3) -> float:
    """A supervised positive control: ridge regression on cubic features from observations ``x`` to
    targets ``z``, fitted on a random half and scored (MCC) on the other half. It reads the targets,
    so it shows what the observations hold at this sample size, not what an unsupervised learner finds."""
    n = len(x)
    order = np.random.default_rng(seed).permutation(n)
    train, test = order[: n // 2], order[n // 2 :]
    feats = probe_features(x)
    a = feats[train]
    coef = np.linalg.solve(a.T @ a + ridge * len(train) * np.eye(a.shape[1]), a.T @ z[train])
    return mcc(z[test], feats[test] @ coef)


def _r2(y: np.ndarray, features: np.ndarray) -> float:
    """R² of the least-squares fit of ``y`` on ``features`` with an intercept."""
    a = np.column_stack([np.ones(len(y)), features])
    resid = y - a @ np.linalg.lstsq(a, y, rcond=None)[0]
    return float(1.0 - resid.var() / max(y.var(), 1e-300))


def parent_gains(z: np.ndarray, learned: np.ndarray, parents: Sequence[Sequence[int]]) -> list[float]:
    """Per true latent ``i``: the learned latent matched to it (the MCC's matching), regressed on
    ``z_i`` and then on ``(z_i, g(z_j) for every parent j)``; the gain in R² from the parents (0 for a
    root). The theory leaves a child with a fixed influence undetermined within ``z_i - c g(z_j)``: a
    learner that lands on ``z_i`` itself gains nothing from the parents, one that lands elsewhere in that
    class does, whatever its MCC."""
    corr = correlation_matrix(z, learned)
    rows, cols = linear_sum_assignment(-corr)
    match = dict(zip(rows.tolist(), cols.tolist(), strict=True))
    out = []
    for i, pa in enumerate(parents):
        if not pa:
            out.append(0.0)
            continue
        y = learned[:, match[i]]
        base = _r2(y, z[:, [i]])
        out.append(_r2(y, np.column_stack([z[:, [i]], g(z[:, list(pa)])])) - base)
    return out


def lens_rng(cfg: CRLConfig, s: int) -> np.random.Generator:
    """The generator of the lens's model draws for seed entry ``s`` (every pattern starts from the same state)."""
    return np.random.default_rng(data_seed(cfg, s) + 3)


def _lens_part(cfg: CRLConfig) -> tuple[dict, dict]:
    """Per pattern, seed and edge, the held-out likelihood gap of removing the edge (absorbed by one
    environment-independent phi; :func:`~.lens.edge_gap`); the positive control (phi = 0, every
    influence fixed, drawn whether or not ``none`` is a trained pattern); and the flow's Jacobian check."""
    graph = default_graph(cfg.d_latent)
    edges = sorted(graph.edges)
    out: dict[str, Any] = {"edges": [f"{j}→{i}" for j, i in edges], "patterns": {}}
    control = [[0.0] * len(cfg.seeds) for _ in edges]
    per_env: dict[str, list[list[float]]] = {}
    worst = 0.0
    patterns = list(cfg.edge_patterns) + ([] if "none" in cfg.edge_patterns else ["none"])
    for pattern in patterns:
        changing = changing_edges(pattern, edges)
        gaps = [[0.0] * len(cfg.seeds) for _ in edges]
        for s in range(len(cfg.seeds)):
            rng = lens_rng(cfg, s)
            scm = make_scm(graph, changing, cfg.n_envs, rng, noise=cfg.noise, scale_range=cfg.noise_scales)
            x, env, mats = flow_data(scm, cfg.n_per_env, rng, cfg.mixing_layers)
            z, _ = unflow(x, mats)  # the latents, through the known flow
            for k, e in enumerate(edges):
                if pattern in cfg.edge_patterns:
                    gap_env = edge_gap(z, env, graph, e, seed=data_seed(cfg, s))
                    gaps[k][s] = float(gap_env.mean())
                    if s == 0:
                        per_env.setdefault(pattern, []).append([float(v) for v in gap_env])
                if pattern == "none":
                    control[k][s] = float(edge_gap(z, env, graph, e, absorb=False, seed=data_seed(cfg, s)).mean())
            if s == 0 and pattern == patterns[0]:  # the flow check, once
                j, i = edges[0]
                worst = flow_check(mats, x[:8], (j, i, np.array([0.7, 0.3, -0.1, 0.02])))
        if pattern in cfg.edge_patterns:
            out["patterns"][pattern] = {"changes": [e in changing for e in edges], "gap": gaps}
    out["control"] = control
    out["flow_check"] = worst
    return out, {"lens_per_env": per_env}


def _training_part(cfg: CRLConfig, checkpoint: Checkpointer, progress: bool) -> tuple[dict, dict]:
    device = resolve_device(cfg.device)
    arm_list = arms(cfg)
    settings = [(a, s) for a in arm_list for s in range(len(cfg.seeds))]
    # every setting trains n_restarts members (initial weights differ); the best ELBO is kept below
    members = [(a, s, r) for a, s in settings for r in range(cfg.n_restarts)]
    datasets = {(a, s): make_arm_data(cfg, a, s) for a, s in settings}
    n = cfg.n_envs * cfg.n_per_env
    n_model_envs = max(cfg.n_envs, len(MOTION_GAITS))
    xs, envs = zip(*(_pad(datasets[(a, s)], n, cfg.d_obs) for a, s, _ in members), strict=True)
    x = torch.tensor(np.stack(xs), dtype=torch.float32, device=device)
    env = torch.tensor(np.stack(envs), dtype=torch.long, device=device)
    d_latents = {a.data: (3 if a.data == "motion" else cfg.d_latent) for a in arm_list}
    d_latent = max(d_latents.values())
    kinds = ["spearman" if a.data == "pnl" else "pearson" for a, _, _ in members]
    truths = [
        (exogenous_noise(datasets[(a, s)]) if a.target == "noise" else datasets[(a, s)].z)[:n] for a, s, _ in members
    ]

    def score(model) -> list[list[float]]:
        means = encode_means(model, x, env)
        return [matched_correlations(truths[k], means[k], kinds[k]).tolist() for k in range(len(members))]

    curve_steps: list[int] = []
    curve_mcc: list[list[float]] = []

    def record(step: int, model) -> None:
        if step % cfg.record_every == 0:
            curve_steps.append(step)
            curve_mcc.append([float(np.mean(c)) for c in score(model)])

    done = checkpoint.get("training/fit")
    loop = checkpoint.get("training/loop")
    if done is None and loop is not None and loop["extra"] is not None:  # resuming an interrupted training
        curve_steps.extend(loop["extra"]["curve_steps"])
        curve_mcc.extend(loop["extra"]["curve_mcc"])
    if done is None:
        model = fit(
            x,
            env,
            [a.prior for a, _, _ in members],
            n_model_envs,
            d_latent,
            seeds=[10_007 * cfg.seed + 101 * s + 1 + 7_919 * r for _, s, r in members],
            n_steps=cfg.n_steps,
            batch_size=cfg.batch_size,
            lr=cfg.lr,
            width=cfg.width,
            sparsity=cfg.sparsity,
            obs_std=cfg.obs_std,
            obs_std_start=cfg.obs_std_start,
            warmup=cfg.warmup,
            cosine=cfg.cosine,
            encoder_env=cfg.encoder_env,
            callback=record,
            progress=progress,
            checkpoint=checkpoint,
            name="training/loop",
            extra_state=lambda: {"curve_steps": list(curve_steps), "curve_mcc": [list(r) for r in curve_mcc]},
        )
        with torch.no_grad():  # the ELBO on all of each member's data, averaged over 4 noise draws
            gen = torch.Generator().manual_seed(data_seed(cfg, 0))
            elbo = torch.stack([model.elbo(x, env, gen) for _ in range(4)]).mean(0)
        with torch.no_grad():  # active units: per member and latent, the spread of the posterior means
            onehot = torch.nn.functional.one_hot(env, n_model_envs).to(x.dtype)
            mu, log_var = model.encode(x, onehot)
        means = encode_means(model, x, env)
        gains = [  # additive-noise synthetic data: the R² gain from the true parents (else zeros)
            parent_gains(
                truths[k],
                means[k],
                [sorted(datasets[(a, s)].scm.graph.predecessors(i)) for i in range(truths[k].shape[1])],
            )
            if a.data in ("synthetic", "independent") and a.target == "latents"
            else [0.0] * truths[k].shape[1]
            for k, (a, s, _) in enumerate(members)
        ]
        done = {
            "parent_gain": gains,
            "per_component": score(model),
            "mean_var": mu.var(1).cpu().numpy(),  # (M, d): Var over samples of the posterior mean
            "post_var": log_var.exp().mean(1).cpu().numpy(),  # (M, d): mean posterior variance
            "elbo": elbo.cpu().numpy(),
            "curve_steps": curve_steps,
            "curve_mcc": curve_mcc,
            "influences": model.influences().detach().cpu().numpy(),
        }
        checkpoint.save("training/fit", done, drop=("training/loop",))

    # per setting, the restart with the highest ELBO (no true latents involved)
    restarts = np.asarray(done["elbo"]).reshape(len(settings), cfg.n_restarts)
    kept = {m: i * cfg.n_restarts + int(np.argmax(restarts[i])) for i, m in enumerate(settings)}
    summary: dict[str, Any] = {"arms": {}, "members": len(members), "settings": len(settings)}
    all_change = next((a for a in arm_list if a.data == "synthetic" and a.pattern == "all"), None)
    per_component = done["per_component"]
    for a in arm_list:
        rows = [per_component[kept[(a, s)]] for s in range(len(cfg.seeds))]
        data = datasets[(a, 0)]
        comps = np.asarray(rows)  # (seeds, d)
        levels = [
            chance_stats(truths[k], cfg.n_rotations, data_seed(cfg, s), kinds[k], d_latent)
            for s, k in ((s, kept[(a, s)]) for s in range(len(cfg.seeds)))
        ]
        summary["arms"][a.name] = {
            "prior": a.prior,
            "data": a.data,
            "pattern": a.pattern,
            "identifiable": [True] * data.scm.d_latent if a.target == "noise" else data.scm.identifiable(),
            # MCC of every restart per seed (the kept one has the highest ELBO)
            "restart_elbo": [[float(v) for v in restarts[settings.index((a, s))]] for s in range(len(cfg.seeds))],
            "restart_mcc": [
                [
                    float(np.mean(per_component[settings.index((a, s)) * cfg.n_restarts + r]))
                    for r in range(cfg.n_restarts)
                ]
                for s in range(len(cfg.seeds))
            ],
            "target": a.target,
            "mcc": _stats(comps.mean(1).tolist()),
            "elbo": _stats([float(done["elbo"][kept[(a, s)]]) for s in range(len(cfg.seeds))]),
            # the chance level: median MCC of random rotations of this arm's own whitened targets
            "chance": _stats([c for c, _, _ in levels]),
            "chance_se": _stats([e for _, e, _ in levels]),
            # the rotation lens: the ROTATION_QUANTILE quantile of the same rotations' MCC, per seed
            "chance_q": _stats([q for _, _, q in levels]),
            "components": [_stats(comps[:, i].tolist()) for i in range(comps.shape[1])],
            # per seed and latent: R² gain from the true parents of the matched learned latent (parent_gains)
            "parent_gain": [[float(v) for v in done["parent_gain"][kept[(a, s)]]] for s in range(len(cfg.seeds))],
            "correlation": "spearman" if a.data == "pnl" else "pearson",
            # per seed and latent: Var of the posterior mean over samples (active when > ACTIVE_VAR) and
            # the mean posterior variance (near 1, the prior's scale, for a collapsed latent)
            "mean_var": [[float(v) for v in done["mean_var"][kept[(a, s)]]] for s in range(len(cfg.seeds))],
            "post_var": [[float(v) for v in done["post_var"][kept[(a, s)]]] for s in range(len(cfg.seeds))],
            "active": [int((done["mean_var"][kept[(a, s)]] > ACTIVE_VAR).sum()) for s in range(len(cfg.seeds))],
        }
    if all_change is not None:
        summary["chance_mcc"] = summary["arms"][all_change.name]["chance"]
    motion_arm = next((a for a in arm_list if a.data == "motion"), None)
    if motion_arm is not None:  # the motion gate's positive control: a supervised probe, no VAE involved
        summary["motion_probe"] = _stats(
            [
                probe_mcc(datasets[(motion_arm, s)].x[:n], datasets[(motion_arm, s)].z[:n], data_seed(cfg, s))
                for s in range(len(cfg.seeds))
            ]
        )
        # the probe predicts exactly the three angles: its chance level rotates them alone (no extra latents)
        summary["motion_probe_chance"] = _stats(
            [
                chance_level(datasets[(motion_arm, s)].z[:n], cfg.n_rotations, data_seed(cfg, s))[0]
                for s in range(len(cfg.seeds))
            ]
        )
    curves: dict[str, Any] = {
        "curve_steps": np.asarray(done["curve_steps"]),
        "curve_mcc": {
            a.name: np.asarray([[row[kept[(a, s)]] for s in range(len(cfg.seeds))] for row in done["curve_mcc"]])
            for a in arm_list
        },
    }
    if cfg.use_motion:
        motion = datasets[(next(a for a in arm_list if a.data == "motion"), 0)]
        curves["motion_angles"] = motion.z
        curves["motion_env"] = motion.env
    return summary, curves


@checked()
def run(
    config: CRLConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> CRLResults:
    """Draw the latent models, train every arm's VAEs side by side and score them (module docstring)."""
    cfg, checkpoint = start_run(CRLConfig, config, checkpoint)
    todo: dict[str, Any] = {"training": lambda: _training_part(cfg, checkpoint, progress)}
    if cfg.use_lens:
        todo["lens"] = lambda: _lens_part(cfg)
    with one_cpu_thread(resolve_device(cfg.device)):
        parts, curves = run_parts_timed(checkpoint, todo, progress)
    summary = {**parts["training"], "timings": parts["timings"]}
    if cfg.use_lens:
        summary["lens"] = parts["lens"]
    return CRLResults(cfg, summary, {**curves["training"], **curves.get("lens", {})})


@checked()
def headline(results: CRLResults) -> list[str]:
    """Key numbers for the end-of-run summary of the command line."""
    return [
        f"{name}: MCC {a['mcc']['mean']:.2f} ± {a['mcc']['sd']:.2f}; per component (median) "
        + ", ".join(f"{c['median']:.2f}" for c in a["components"])
        for name, a in results.summary["arms"].items()
    ]
