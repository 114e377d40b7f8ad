"""The chapter's experiments, one code path for every scale.

1. **mixture**: a 2-D mixture of Gaussians on a circle (concepts should find the modes).
2. **images**: scikit-learn's 8x8 digits in PCA coordinates (concepts should find digit styles), or
   CIFAR-10 from ``--data-root`` at paper scale (a CNN encoder and a U-Net).

Each trains every arm of :data:`~explorables.dcdm.training.ARMS` from every seed of ``seeds`` as
one batched model, then measures, with labels used only here, in the evaluation:

* NMI / ARI of each member's concept assignment (argmax of the Dirichlet mean) against the labels,
  against k-means on the same inputs and against an untrained encoder (the control); k-means against
  permuted labels gives the clusters gate's chance level;
* purity of concept-conditioned samples under a separately trained classifier (the mixture's
  Bayes classifier; a logistic regression on the training split for images);
* sample quality: squared MMD of generated samples to held-out data, against the plain DDPM arm
  and against the floor of training data itself (one draw of training inputs per seed, paired); the
  claim is judged on input-free generation, DCDM's concept weights drawn from its own prior
  ``Dir(alpha_0)``; weights inferred from random training inputs (nearly a reconstruction in 2-D) are
  kept only as a labelled measure;
* interventions: held-out inputs re-generated after swapping their top concept weight with
  each other used concept's (at most :data:`INTERVENTION_TARGETS` per input), scored by how often the
  classifier then gives the new concept's label.

The two experiments share nothing (each seeds torch's global generator and its own generators from the
config), so with two or more CPUs (``processes``) a spawned worker process runs the mixture while this
process runs the images; the numbers are those of running them one after the other (``processes=1``).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression

from ..core.arguments import ArgumentError, checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Choice, Float, Int, Positive, Probability, Seeds, param
from ..core.threads import one_cpu_thread, worker_count
from . import data as Dt
from . import dcdm as M
from .metrics import (
    VARIANCE_COMPONENTS,
    cluster_scores,
    kernel_bandwidths,
    kmeans_assign,
    majority_labels,
    mean_sd,
    mmd2,
    principal_axes,
    usage_weighted_purity,
    variance_ratios,
)
from .networks import ConvEncoder, Ensemble, MLPDenoiser, MLPEncoder, UNet
from .training import (
    CONCEPT_ARMS,
    ConceptModels,
    TrainSettings,
    generator_noise,
    member_seed,
    train_concept_models,
)


@dataclass(frozen=True)
class DCDMConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    seeds: tuple[int, ...] = param((0, 1, 2), Seeds(), "seeds of the trained models (each arm is trained from each)")
    n_diffusion_steps: int = param(50, Int(2), "diffusion steps T (training and ancestral sampling)")
    prior: float = param(0.3, Positive(), "symmetric Dirichlet prior alpha_0 of the KL term, eq. (dcdm-elbo)")
    beta: float = param(0.003, Float(0.0, 10.0), "weight beta of the Dirichlet KL in eq. (dcdm-elbo)")
    lr: float = param(3e-3, Positive(), "Adam learning rate (cosine decay)")
    batch_size: int = param(128, Int(2), "inputs per training step and member")
    n_samples_per_concept: int = param(40, Int(2), "samples generated per concept and member (purity, quality)")
    n_intervene: int = param(120, Int(2), "held-out inputs edited per member (interventions)")
    edit_fraction: float = param(
        0.6, Probability(open_low=True, open_high=True), "edit step t_edit / T of an intervention, eq. (dcdm-intervene)"
    )
    n_snapshots: int = param(6, Int(2, 20), "training steps shown by the explorable's slider (first seed)")
    # the 2-D mixture
    n_modes: int = param(6, Int(2, 20), "modes of the 2-D Gaussian mixture (its labels)")
    mixture_std: float = param(0.25, Positive(), "standard deviation of each mode of the mixture")
    n_mixture_train: int = param(3000, Int(20), "training points of the mixture")
    n_mixture_concepts: int = param(6, Int(1, 50), "concepts K on the mixture")
    n_mixture_steps: int = param(1000, Int(1), "training steps on the mixture")
    mixture_d_hidden: int = param(64, Int(4), "width of the mixture's encoder and denoiser")
    # images
    dataset: str = param(
        "digits", Choice(("digits", "cifar10")), "image data: sklearn digits, or CIFAR-10 from --data-root"
    )
    n_concepts: int = param(10, Int(1, 200), "concepts K on the images")
    d_pca: int = param(20, Int(2, 64), "principal components the digits are reduced to (model space)")
    n_test: int = param(300, Int(20), "held-out images (sample-quality floor, interventions)")
    n_image_train: int = param(0, Int(0), "training images kept (0: all)")
    n_image_steps: int = param(1200, Int(1), "training steps on the images")
    encoder_d_hidden: int = param(128, Int(4), "width of the concept encoder (MLP) / base channels (CNN)")
    denoiser_d_hidden: int = param(64, Int(4), "width of the image denoiser (MLP) / base channels (U-Net)")
    denoiser_n_layers: int = param(2, Int(1, 8), "hidden layers of the MLP denoiser")
    network: str = param("mlp", Choice(("mlp", "unet")), "image networks: MLPs, or a CNN encoder with a U-Net")
    processes: int = param(
        0,
        Int(0, 64),
        "processes on a CPU: with 2 or more, a spawned worker runs the mixture while this one runs the images "
        "(0: every CPU this process may use; the numbers do not depend on it)",
    )

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            seeds=(0, 1),
            n_diffusion_steps=10,
            n_mixture_train=600,
            n_mixture_steps=100,
            mixture_d_hidden=32,
            n_image_train=500,
            n_image_steps=100,
            n_test=60,
            n_samples_per_concept=10,
            n_intervene=30,
            n_snapshots=3,
            batch_size=64,
        ),
        "book": {},
        "paper": dict(
            device="auto",
            dataset="cifar10",
            network="unet",
            n_concepts=20,
            n_diffusion_steps=1000,
            n_image_steps=100_000,
            batch_size=64,
            lr=2e-4,
            encoder_d_hidden=64,
            denoiser_d_hidden=64,
            n_test=1000,
            n_samples_per_concept=20,
            n_intervene=200,
            n_mixture_train=20_000,
            n_mixture_steps=5_000,
            mixture_d_hidden=128,
        ),
    }
    PAPER_HARDWARE: ClassVar[str] = (
        "one GPU with >= 40 GB (15 small U-Nets on CIFAR-10 trained side by side: 5 arms x 3 seeds, "
        "100k steps of batch 64, T = 1000); several hours on an H100 (our estimate from the FLOP count, "
        "not measured)"
    )
    DATA_ROOT_SCALES: ClassVar[tuple[str, ...]] = ("paper",)
    DATA_DESCRIPTION: ClassVar[str] = "torchvision's cifar-10-batches-py/ folder (dataset=cifar10)"

    def cross_checks(self) -> None:
        if self.network == "unet" and self.dataset != "cifar10":
            raise ValueError("network='unet' needs dataset='cifar10' (the MLPs serve the digits)")


class DCDMResults(Results[DCDMConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the arrays the figures and the lab use."""


def _networks(cfg: DCDMConfig, data: Dt.Dataset, n_concepts: int, d_hidden: int, denoiser_d_hidden: int, n_layers: int):
    d = data.d_data
    if cfg.network == "unet" and data.image_shape is not None and len(data.image_shape) == 3:
        size, channels = data.image_shape[0], data.image_shape[2]
        return (
            lambda: ConvEncoder(channels, size, n_concepts, d_hidden),
            lambda: UNet(channels, size, cfg.n_diffusion_steps, denoiser_d_hidden),
        )
    return (
        lambda: MLPEncoder(d, n_concepts, d_hidden, 2),
        lambda: MLPDenoiser(d, cfg.n_diffusion_steps, denoiser_d_hidden, n_layers),
    )


def snapshot_steps(n_steps: int, n_snapshots: int) -> list[int]:
    """The training steps the explorable shows: ``n_snapshots`` steps from 0 to ``n_steps``, spaced evenly."""
    return sorted({round(float(v)) for v in np.linspace(0, n_steps, n_snapshots)})


def evaluate(
    cfg: DCDMConfig,
    models: ConceptModels,
    data: Dt.Dataset,
    classify,
    untrained_assign: np.ndarray,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every score of one dataset (labels are read here and only here)."""
    x_np = data.x_train.cpu().numpy()
    n_concepts = models.centres.shape[1]
    assign = models.assign(data.x_train)  # (E, n)
    weights_test = models.concept_weights(data.x_test)
    samples = models.sample_concepts(cfg.n_samples_per_concept).cpu().numpy()  # (E, K, n, D)
    x_test = data.x_test.cpu().numpy()
    bandwidth = kernel_bandwidths(x_test)
    # the data floor, one per seed (paired with that seed's generators): training inputs against the same held-out
    # data, as many as the input-free samples, so the floor's own estimation noise shows in the seed interval
    floors = data_floors(x_np, x_test, bandwidth, len(models.seeds), 4 * len(x_test), cfg.seed)
    # the quality gate's reference: a Gaussian with the training data's mean and covariance (the crudest generator)
    gaussian_samples = gaussian_fit_samples(x_np, 4 * len(x_test), cfg.seed + 13)
    gaussian = mmd2(gaussian_samples, x_test, bandwidth)
    # why a generator loses to that fit: its spread along the held-out data's leading principal components,
    # relative to the data's (the fit copies the training covariance; min and max over the components)
    test_axes = principal_axes(x_test, VARIANCE_COMPONENTS)  # once: an SVD of the held-out data
    gaussian_ratios = variance_ratios(gaussian_samples, x_test, axes=test_axes)
    # a measure only (not the quality claim's evidence): concept weights inferred from random training inputs;
    # in low dimensions m nearly encodes the input, so these samples are close to reconstructions
    generated = models.sample_like(data.x_train[torch.randperm(len(data.x_train))[: len(x_test)]]).cpu().numpy()
    # the quality claim's evidence: the model's own prior, pi ~ Dir(alpha_0), generation that looks at no input;
    # 4x as many samples, so the estimator's own noise does not decide the verdict
    from_prior = models.sample_prior(4 * len(x_test), cfg.prior, seed=cfg.seed + 11).cpu().numpy()
    # the mechanism: the denoising error per noise level on held-out inputs, every member on the same draws
    levels = noise_levels(cfg.n_diffusion_steps)
    denoise = models.denoising_loss(data.x_test, levels, cfg.seed + 17).cpu().numpy()
    rng = np.random.default_rng(cfg.seed)
    per_member: list[dict[str, float]] = []
    t_edit = round(cfg.edit_fraction * (cfg.n_diffusion_steps - 1))
    n_edit = min(cfg.n_intervene, len(data.x_test))
    for e in range(models.n_members):
        arm = models.arms[e // len(models.seeds)]
        scores = cluster_scores(data.y_train, assign[e])
        usage = np.bincount(assign[e], minlength=n_concepts) / assign.shape[1]
        predicted = np.stack([classify(samples[e, k]) for k in range(n_concepts)])
        scores["purity"], _ = usage_weighted_purity(predicted, usage)
        scores["n_used"] = int((usage >= 0.01).sum())
        scores["mmd2"] = mmd2(generated[e], x_test, bandwidth)
        scores["mmd2_prior"] = mmd2(from_prior[e], x_test, bandwidth)
        for key, sample in (("var_ratio", generated[e]), ("var_ratio_prior", from_prior[e])):
            ratios = variance_ratios(sample, x_test, axes=test_axes)
            scores[f"{key}_min"], scores[f"{key}_max"] = float(ratios.min()), float(ratios.max())
        for j in range(len(levels)):
            scores[f"denoise_{j}"] = float(denoise[e, j])
        scores["denoise_mean"] = float(denoise[e].mean())
        if arm in CONCEPT_ARMS and scores["n_used"] >= 2:
            scores.update(
                _intervention_scores(models, e, data, weights_test[e, :n_edit], usage, assign[e], classify, t_edit, rng)
            )
        per_member.append(scores)
    summary: dict[str, Any] = {
        "arms": {},
        "mmd2_floor": float(np.mean(floors)),
        "mmd2_floor_per_seed": [float(f) for f in floors],
        "mmd2_gaussian": gaussian,
        "var_ratio_gaussian": {"min": float(gaussian_ratios.min()), "max": float(gaussian_ratios.max())},
        "var_ratio_components": len(gaussian_ratios),
        "noise_levels": [int(t) for t in levels],
        "noise_fractions": [float(1 - models.schedule.alpha_bars[t]) for t in levels],
    }
    for a, arm in enumerate(models.arms):
        rows = per_member[a * len(models.seeds) : (a + 1) * len(models.seeds)]
        keys = [key for key in rows[0] if all(key in r for r in rows)]
        summary["arms"][arm] = {key: mean_sd([r[key] for r in rows]) for key in keys}
        for key in keys:  # the verdicts are decided on intervals over these (paired by seed)
            summary["arms"][arm][f"{key}_per_seed"] = [float(r[key]) for r in rows]
    km_assign = [kmeans_assign(x_np, n_concepts, s + 7919 * cfg.seed)[0] for s in models.seeds]
    km = [cluster_scores(data.y_train, a) for a in km_assign]
    summary["kmeans"] = {
        "nmi": mean_sd([r["nmi"] for r in km]),
        "ari": mean_sd([r["ari"] for r in km]),
        "nmi_per_seed": [r["nmi"] for r in km],
        # the clusters gate's chance level: the same k-means assignments against permuted labels
        "nmi_chance_per_seed": [chance_nmi(data.y_train, a, cfg.seed + i) for i, a in enumerate(km_assign)],
    }
    untrained = [cluster_scores(data.y_train, untrained_assign[i]) for i in range(len(untrained_assign))]
    summary["untrained"] = {
        "nmi": mean_sd([r["nmi"] for r in untrained]),
        "ari": mean_sd([r["ari"] for r in untrained]),
        "nmi_per_seed": [r["nmi"] for r in untrained],
    }
    first = models.index("dcdm", 0) if "dcdm" in models.arms else 0
    curves = {
        "centres": models.centres[first].cpu().numpy(),
        "samples": samples[first],
        "usage": np.bincount(assign[first], minlength=n_concepts) / assign.shape[1],
        "concept_labels": majority_labels(assign[first], data.y_train, n_concepts),
        "losses": np.asarray(models.losses),
    }
    return summary, curves


def chance_nmi(labels: np.ndarray, assign: np.ndarray, seed: int, n_permutations: int = 5) -> float:
    """NMI of ``assign`` against randomly permuted ``labels``, averaged over ``n_permutations`` draws (own
    generator): the score a clustering gets when the inputs carry no label structure it could find."""
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    return float(np.mean([cluster_scores(rng.permutation(labels), assign)["nmi"] for _ in range(n_permutations)]))


def data_floors(
    x_train: np.ndarray, x_test: np.ndarray, bandwidth, n_seeds: int, n_points: int, seed: int
) -> list[float]:
    """The sample-quality floor of each seed index: squared MMD between ``min(n_points, len(x_train))`` training
    inputs drawn at random without replacement (own generator, seeded by ``seed``; one draw per index) and
    ``x_test``. What data itself scores, with as many points as the generators it is compared with; each seed's
    generators are judged against their own draw, so the floor is paired by seed. (The draws overlap when the
    training set is not much larger than ``n_points``; all of it, in another order, when it is smaller.)"""
    n = min(int(n_points), len(x_train))
    rng = np.random.default_rng([int(seed), 4099])
    return [mmd2(x_train[rng.choice(len(x_train), n, replace=False)], x_test, bandwidth) for _ in range(n_seeds)]


def noise_levels(n_diffusion_steps: int, n_levels: int = 6) -> list[int]:
    """The steps at which the denoising error is measured: ``n_levels`` steps spread evenly over ``[0, T)``."""
    return sorted({round(float(v)) for v in np.linspace(0, n_diffusion_steps - 1, n_levels)})


def gaussian_fit_samples(x: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` draws from the Gaussian with the mean and covariance of ``x`` (rows are points)."""
    x = np.asarray(x, dtype=np.float64)
    w, v = np.linalg.eigh(np.cov(x, rowvar=False).reshape(x.shape[1], x.shape[1]))
    z = np.random.default_rng(seed).standard_normal((n, x.shape[1]))
    return x.mean(0) + (z * np.sqrt(np.clip(w, 0.0, None))) @ v.T


#: interventions: each edited input is swapped towards at most this many other used concepts (all when fewer)
INTERVENTION_TARGETS = 9


def intervention_pairs(
    top: np.ndarray, used: np.ndarray, rng: np.random.Generator, max_targets: int = INTERVENTION_TARGETS
) -> tuple[np.ndarray, np.ndarray]:
    """The (input, target concept) pairs of the intervention score: input ``i`` (top concept ``top[i]``) towards
    every used concept other than its top one, or towards ``max_targets`` of them drawn without replacement from
    ``rng`` when there are more; towards its own top concept when no other is used. The estimand is that of one
    uniformly random other used concept per input, averaged over the targets instead of drawn once: up to
    ``max_targets`` times the trials, on the same models (benchmarks/dcdm_rows_power_rule.md).
    Returns ``(rows, targets)``, the input index and the target of each pair, inputs in order."""
    top, used = np.asarray(top, dtype=int), np.asarray(used, dtype=int)
    if max_targets < 1:
        raise ValueError(f"max_targets must be at least 1, got {max_targets}")
    rows, targets = [], []
    for i, k in enumerate(top):
        others = used[used != k]
        if len(others) > max_targets:
            others = np.sort(rng.choice(others, max_targets, replace=False))
        elif not len(others):
            others = np.array([k])
        rows += [i] * len(others)
        targets += others.tolist()
    return np.asarray(rows, dtype=int), np.asarray(targets, dtype=int)


def _intervention_scores(models, e, data, weights, usage, assign, classify, t_edit, rng) -> dict[str, float]:
    """Swap each held-out input's top concept weight with each other used concept's (:func:`intervention_pairs`);
    regenerate."""
    n_concepts = len(usage)
    labels_of = majority_labels(assign, data.y_train, n_concepts)
    used = np.flatnonzero(usage >= 0.01)
    top = weights.argmax(-1).cpu().numpy()
    rows, target = intervention_pairs(top, used, rng)
    index = torch.as_tensor(rows, device=weights.device)
    weights = weights[index]
    member = models.denoiser.member(e)
    pi_new = M.swap_weights(weights, torch.as_tensor(target, device=weights.device))
    x0 = data.x_test[index.to(data.x_test.device)]
    edited = M.intervene(x0, weights, pi_new, models.centres[e], member, models.schedule, t_edit).cpu().numpy()
    kept = M.intervene(x0, weights, weights, models.centres[e], member, models.schedule, t_edit).cpu().numpy()
    want = labels_of[target]
    return {
        "intervention_hit": float((classify(edited) == want).mean()),  # edited output shows the new concept
        "intervention_base": float((classify(kept) == want).mean()),  # the same, without the swap (control)
        "intervention_keep": float((classify(kept) == classify(x0.cpu().numpy())).mean()),  # unedited fidelity
    }


def _train_and_evaluate(
    cfg: DCDMConfig, data: Dt.Dataset, settings: TrainSettings, nets, classify, checkpoint, progress, name, decode
) -> tuple[dict, dict]:
    device = data.x_train.device
    steps = snapshot_steps(settings.n_steps, cfg.n_snapshots)
    n_show = 24 if data.image_shape is None else 4

    def on_snapshot(step: int, models: ConceptModels) -> dict[str, Any]:
        e = models.index("dcdm", 0)
        centres = models.centres[e].detach()
        n_concepts, d = centres.shape
        m = centres[:, None, :].expand(-1, n_show, -1).reshape(-1, d)
        x = M.reverse_process(
            models.denoiser.member(e), models.schedule, m, noise=generator_noise(cfg.seed + 1, device)
        )
        return {  # kept by the training loop (and its checkpoint: a resumed run has every frame)
            "step": step,
            # a copy: on the CPU .numpy() shares the parameter's memory, and training would move this frame's centres
            "centres": decode(centres.cpu().numpy().copy()),
            "samples": decode(x.cpu().numpy()).reshape(n_concepts, n_show, *decode(x[:1].cpu().numpy()).shape[1:]),
        }

    models = train_concept_models(
        data.x_train,
        settings,
        *nets,
        seeds=cfg.seeds,
        base_seed=cfg.seed,
        checkpoint=checkpoint,
        name=name,
        snapshot_steps=steps,
        on_snapshot=on_snapshot,
        progress=progress,
    )
    summary, curves = evaluate(cfg, models, data, classify, untrained_assignment(cfg, nets[0], data.x_train))
    curves["frames"] = list(models.snapshots)
    curves["mixing"] = _mixing(cfg, models, curves["usage"], decode, device)
    curves["centres_decoded"] = decode(curves["centres"])
    curves["samples_decoded"] = np.stack([decode(s) for s in curves["samples"]])
    curves["interventions"] = _intervention_examples(cfg, models, data, curves, decode)
    summary["n_train"] = len(data.x_train)
    return summary, curves


def untrained_assignment(cfg: DCDMConfig, make_encoder, x: torch.Tensor) -> np.ndarray:
    """The control: each seed's concept encoder as initialised (before any training step), ``(n_seeds, n)``.

    Built from the same member seeds as the trained models, so it is exactly where they started; torch's
    global generator is left as it was (and a resumed run gets the same control)."""
    with torch.random.fork_rng(devices=[]):
        encoder = Ensemble(make_encoder, [member_seed(cfg.seed, s) for s in cfg.seeds], x.device)
        with torch.no_grad():
            h = encoder(x.expand(len(cfg.seeds), -1, -1))
    return M.concentrations(h).argmax(-1).cpu().numpy()


def _intervention_examples(cfg: DCDMConfig, models: ConceptModels, data: Dt.Dataset, curves: dict, decode, n: int = 8):
    """Pictures of interventions (first seed of DCDM): ``n`` held-out inputs, each regenerated as is and
    with its top concept weight swapped for the next used concept's (fixed noise)."""
    e = models.index("dcdm", 0)
    usage = curves["usage"]
    used = np.flatnonzero(usage >= 0.01)
    weights = models.concept_weights(data.x_test[:n])[e]
    top = weights.argmax(-1).cpu().numpy()
    target = np.array([used[(np.searchsorted(used, k) + 1) % len(used)] if len(used) > 1 else k for k in top])
    member = models.denoiser.member(e)
    t_edit = round(cfg.edit_fraction * (cfg.n_diffusion_steps - 1))
    x0 = data.x_test[:n]
    state = torch.get_rng_state()
    torch.manual_seed(cfg.seed + 3)
    kept = M.intervene(x0, weights, weights, models.centres[e], member, models.schedule, t_edit)
    torch.manual_seed(cfg.seed + 3)
    edited = M.intervene(
        x0,
        weights,
        M.swap_weights(weights, torch.as_tensor(target)),
        models.centres[e],
        member,
        models.schedule,
        t_edit,
    )
    torch.set_rng_state(state)
    labels = curves["concept_labels"]
    return {
        "originals": decode(x0.cpu().numpy()),
        "kept": decode(kept.cpu().numpy()),
        "edited": decode(edited.cpu().numpy()),
        "from_labels": labels[top],
        "to_labels": labels[target],
    }


def _mixing(cfg: DCDMConfig, models: ConceptModels, usage: np.ndarray, decode, device) -> dict[str, Any]:
    """Samples of ``pi = (1 - lam) e_a + lam e_b`` between the two most used concepts (first seed, fixed noise)."""
    e = models.index("dcdm", 0)
    n_concepts = models.centres.shape[1]
    a, b = [*np.argsort(-usage)[:2].tolist(), 0, 0][:2] if n_concepts > 1 else (0, 0)
    lams = np.linspace(0, 1, 6)
    pis = torch.zeros(len(lams), n_concepts, device=device)
    pis[:, a] += torch.tensor(1 - lams, dtype=torch.float32, device=device)
    pis[:, b] += torch.tensor(lams, dtype=torch.float32, device=device)
    n_each = 24 if models.centres.shape[-1] == 2 else 4
    m = (pis @ models.centres[e]).repeat_interleave(n_each, 0)
    x = M.reverse_process(models.denoiser.member(e), models.schedule, m, noise=generator_noise(cfg.seed + 2, device))
    out = decode(x.cpu().numpy())
    return {"lambdas": lams, "concepts": [int(a), int(b)], "samples": out.reshape(len(lams), n_each, *out.shape[1:])}


def _identity(z: np.ndarray) -> np.ndarray:
    return np.asarray(z)


def _mixture(cfg: DCDMConfig, checkpoint: Checkpointer, progress: bool) -> tuple[dict, dict]:
    device = resolve_device(cfg.device)
    torch.manual_seed(cfg.seed)
    data = Dt.mixture_data(cfg.n_mixture_train, 500, cfg.n_modes, cfg.mixture_std, cfg.seed)
    data.x_train, data.x_test = data.x_train.to(device), data.x_test.to(device)
    settings = TrainSettings(
        cfg.n_mixture_concepts, cfg.n_mixture_steps, cfg.n_diffusion_steps, cfg.batch_size, cfg.lr, cfg.beta, cfg.prior
    )
    nets = (
        lambda: MLPEncoder(2, cfg.n_mixture_concepts, cfg.mixture_d_hidden, 2),
        lambda: MLPDenoiser(2, cfg.n_diffusion_steps, cfg.mixture_d_hidden, 3),
    )

    def classify(points: np.ndarray) -> np.ndarray:
        return Dt.mixture_classifier(np.asarray(points), cfg.n_modes)

    with one_cpu_thread(device):
        summary, curves = _train_and_evaluate(
            cfg, data, settings, nets, classify, checkpoint, progress, "mixture/train", _identity
        )
    summary["classifier_test_accuracy"] = float((classify(data.x_test.cpu().numpy()) == data.y_test).mean())
    curves["data"] = data.x_train.cpu().numpy()[:1000]
    curves["data_labels"] = data.y_train[:1000]
    return summary, curves


def _images(cfg: DCDMConfig, checkpoint: Checkpointer, progress: bool) -> tuple[dict, dict]:
    device = resolve_device(cfg.device)
    torch.manual_seed(cfg.seed + 1)
    if cfg.dataset == "digits":
        data = Dt.digits_data(cfg.d_pca, cfg.n_test, cfg.seed)
        if cfg.n_image_train:
            data.x_train, data.y_train = data.x_train[: cfg.n_image_train], data.y_train[: cfg.n_image_train]
    else:
        data = Dt.cifar_data(cfg.data_root, cfg.n_image_train, cfg.n_test, cfg.seed)
    data.x_train, data.x_test = data.x_train.to(device), data.x_test.to(device)
    # the purity / intervention classifier: trained separately, on the training split with its labels
    clf_n = min(len(data.x_train), 10_000)
    clf = LogisticRegression(max_iter=500).fit(data.x_train[:clf_n].cpu().numpy(), data.y_train[:clf_n])

    def classify(x: np.ndarray) -> np.ndarray:
        return clf.predict(np.asarray(x).reshape(len(x), -1))

    settings = TrainSettings(
        cfg.n_concepts, cfg.n_image_steps, cfg.n_diffusion_steps, cfg.batch_size, cfg.lr, cfg.beta, cfg.prior
    )
    nets = _networks(cfg, data, cfg.n_concepts, cfg.encoder_d_hidden, cfg.denoiser_d_hidden, cfg.denoiser_n_layers)
    with one_cpu_thread(device):
        summary, curves = _train_and_evaluate(
            cfg, data, settings, nets, classify, checkpoint, progress, "images/train", data.decode
        )
    summary["dataset"] = data.name
    summary["classifier_test_accuracy"] = float((classify(data.x_test.cpu().numpy()) == data.y_test).mean())
    curves["image_shape"] = list(data.image_shape or ())
    return summary, curves


PHASES = {"mixture": _mixture, "images": _images}
#: the phase a worker process runs beside the others when ``processes`` allows (it reads nothing they write)
WORKER_PHASE = "mixture"


def _phase_alone(cfg: DCDMConfig, name: str) -> tuple[dict, dict]:
    """Phase ``name`` in a worker process: an in-memory checkpoint (a stopped run redoes it), no progress bars.
    The phase seeds torch's global generator and its own generators from the config and runs on one torch thread
    (as in this process), so its numbers equal the in-process run's."""
    return PHASES[name](cfg, Checkpointer(None), False)


@checked()
def run(
    config: DCDMConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> DCDMResults:
    """Run the chapter's experiments (see the module docstring); ``progress`` shows tqdm bars.

    On a CPU with ``cfg.processes`` resolving to more than one and both phases pending, a spawned worker runs
    the mixture (:data:`WORKER_PHASE`) while this process runs the images; the images are then stored first, and
    the mixture's part time is the time this process waited for it after them. The summary and the curves keep
    the serial order."""
    cfg, checkpoint = start_run(DCDMConfig, config, checkpoint)
    parts: dict[str, Any] = {
        name: (lambda phase=phase: phase(cfg, checkpoint, progress)) for name, phase in PHASES.items()
    }
    pending = [name for name in PHASES if checkpoint.get(f"part/{name}") is None]
    parallel = (
        resolve_device(cfg.device).type == "cpu" and WORKER_PHASE in pending and len(pending) > 1
        and worker_count(cfg.processes, len(pending)) > 1
    )  # fmt: skip
    with ExitStack() as stack:
        if parallel:
            pool = stack.enter_context(ProcessPoolExecutor(1, mp_context=get_context("spawn")))
            future = pool.submit(_phase_alone, cfg, WORKER_PHASE)
            # this process's phases first, then the worker's result
            parts = {**{n: f for n, f in parts.items() if n != WORKER_PHASE}, WORKER_PHASE: future.result}
        summary, curves = run_parts_timed(checkpoint, parts, progress)
    summary = {**{name: summary[name] for name in PHASES}, "timings": summary["timings"]}
    summary["timings"] = {f"{name}_s": summary["timings"][f"{name}_s"] for name in PHASES}
    curves = {name: curves[name] for name in PHASES}
    return DCDMResults(cfg, summary, curves)


@checked()
def headline(results: DCDMResults) -> list[str]:
    """The key numbers for the end-of-run summary of the command line (``results`` of :func:`run`)."""
    missing = [part for part in ("mixture", "images") if part not in results.summary]
    if missing:
        raise ArgumentError(f"results must be the results of run (with parts mixture and images), missing {missing}")
    lines = []
    for part in ("mixture", "images"):
        s = results.summary[part]
        d = s["arms"]["dcdm"]
        lines.append(
            f"{part}: DCDM NMI {d['nmi']['mean']:.3f} ± {d['nmi']['sd']:.3f}, "
            f"k-means {s['kmeans']['nmi']['mean']:.3f}, "
            f"purity {d['purity']['mean']:.3f}"
        )
    return lines
