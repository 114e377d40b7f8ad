"""The chapter's experiments, one code path for every scale.

1. **rule**: Jeffrey's rule on a small table (his cloth-by-candlelight example): conditionals kept,
   target marginal hit, and KL-minimal among tables with that marginal (checked against random ones).
2. **toy_model**: a DDPM on the 2-D toy (the "pretrained" model; trained once from the base seed).
3. **toy**: for each seed of ``seeds``: a time-dependent classifier ``c_t(s | x_t)`` over the four
   cells, the model's own cell marginal from unguided samples, the fairness target
   ``q = p(a) p(b)``, and samples from the unguided model, Jeffrey guidance and plain classifier
   guidance (label ``y ~ q``, then ``grad log c_t(y | x_t)``), against exact samples of the
   Jeffrey-updated distribution. A control guides toward another target (reversed coupling).
   On the first seed, both guidances over ``scale_grid`` for the explorable.
4. **image_model**: on digits (or CIFAR-10 / an image folder at paper scale): the embedding classifier
   (the metric/target embedding, trained on the labels), the pixel PCA (the independent embedding of the
   Fréchet control: no labels) and a DDPM denoiser.
5. **images**: for each seed: Jeffrey guidance toward the real-embedding distribution
   (density ratio + ``log h_t`` network); classifier guidance on the class with its own 10-class
   time-dependent classifier (trained on the model's samples, as ``p_t(y | x_t)`` under the model); and fairness
   (class independent of "thick stroke") by Jeffrey guidance and, as the capability control, by
   classifier guidance with ``y ~ q`` over the 20 cells, both with the 20-cell classifier trained on
   model samples (whose accuracy is also recorded at several noise levels).

The pretrained diffusion models are fixed within a run (as in the paper, guidance is applied to a
given model); the seeds cover everything guidance does: its networks, its density ratio, its samples.

On the CPU with two or more CPUs, the toy's parts (2, 3) run in a spawned worker process beside the image parts
(4, 5); they share no random state, so the numbers are the same as one after the other (``run(workers=1)``).
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, ClassVar

import numpy as np
import torch
from tqdm.auto import tqdm

from ..core.arguments import ArgumentError, checked, package_callable
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Bool, Choice, Float, Int, Positive, Seeds, Tuple, param
from ..core.seeding import seed_everything
from ..core.threads import one_cpu_thread, worker_count
from ..core.validation import check_int
from . import diffusion as D
from . import images as I
from . import toy as Y
from .metrics import cell_frequencies, conditional_mmd2, frechet_distance, mmd2
from .rule import (
    classifier_guidance_marginal_with,
    flip_confusion,
    independent_target,
    jeffrey_marginal_with,
    jeffrey_update,
    jeffrey_weights,
    kl_divergence,
    tv_distance,
)

#: Jeffrey's cloth-by-candlelight example: p(x, s), x = sold (no, yes), s = colour (green, blue, violet)
CLOTH_JOINT = ((0.12, 0.18, 0.32), (0.18, 0.12, 0.08))
CLOTH_TARGET = (0.7, 0.25, 0.05)


@dataclass(frozen=True)
class JeffreyConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    seeds: tuple[int, ...] = param(
        (0, 1, 2, 3, 4), Seeds(), "seeds of the guidance runs (classifiers, ratios, samples)"
    )
    n_diffusion_steps: int = param(50, Int(2), "DDPM steps T (training and ancestral sampling)")
    guidance_scale: float = param(1.0, Positive(), "guidance scale gamma of the claims, eq. (guided-eps); 1 is exact")
    scale_grid: tuple[float, ...] = param(
        (0.5, 1.0, 2.0, 4.0), Tuple(Positive(), increasing=True), "guidance scales of the explorable (first seed)"
    )
    lr: float = param(2e-3, Positive(), "Adam learning rate of every network (cosine decay)")
    # the 2-D toy
    n_toy_train: int = param(8192, Int(64), "training points of the 2-D toy")
    toy_d_hidden: int = param(128, Int(4), "width of the toy's networks")
    n_toy_denoiser_steps: int = param(1200, Int(1), "training steps of the toy's noise predictor")
    n_toy_classifier_steps: int = param(400, Int(1), "training steps of the toy's time-dependent classifier")
    toy_batch_size: int = param(512, Int(2), "batch size of the toy's networks")
    n_toy_samples: int = param(800, Int(20), "samples per method and seed on the toy (and exact target samples)")
    control_coupling: float = param(
        -0.5, Float(-1.0, 1.0), "coupling of the control target (0 is the fairness target; -1 the most anti-correlated)"
    )
    toy_label_noise: float = param(
        0.3, Float(0.0, 0.7), "share of the toy's cell labels flipped for the noisy-classifier experiment"
    )
    # images
    use_images: bool = param(True, Bool(), "run the image experiments (embedding target, fairness)")
    dataset: str = param(
        "digits", Choice(I.DATASETS), "image data: sklearn digits, or CIFAR-10 / image folder from --data-root"
    )
    image_size: int = param(32, Int(8), "side of image_folder images after resizing (pixels)")
    n_test: int = param(500, Int(10), "held-out real images the Fréchet distances are measured against")
    image_limit: int = param(0, Int(0), "keep at most this many training images (0: all)")
    denoiser: str = param(
        "mlp", Choice(("mlp", "unet")), "noise predictor for images: an MLP on pixels, or a small U-Net"
    )
    image_d_hidden: int = param(256, Int(4), "width of the image noise predictor (MLP) / base channels (U-Net)")
    n_image_denoiser_steps: int = param(1200, Int(1), "training steps of the image noise predictor")
    image_batch_size: int = param(128, Int(2), "batch size of the image networks")
    n_embedder_steps: int = param(200, Int(1), "training steps of each embedding classifier")
    d_embed: int = param(32, Int(2), "embedding dimension of the metric/target embedding classifier")
    n_image_classifier_steps: int = param(
        500, Int(1), "training steps of the time-dependent class x thickness classifier"
    )
    n_class_classifier_steps: int = param(
        1000, Int(1), "training steps of the baseline's own 10-class time-dependent classifier (on model samples)"
    )
    n_h_steps: int = param(500, Int(1), "training steps of the log h_t network, eq. (h-logistic)")
    n_ratio_samples: int = param(1000, Int(20), "unguided samples for the density ratio, the h_t fit and the marginals")
    n_image_samples: int = param(1500, Int(20), "samples per method and seed for the Fréchet distances")
    n_fair_samples: int = param(1500, Int(20), "samples per method and seed for digits fairness (20 cells)")
    weight_clip: float = param(20.0, Float(1.0, 1e6), "cap of the density-ratio weights, in multiples of their median")
    ratio_c: float = param(0.1, Positive(), "inverse L2 strength of the density-ratio logistic regression")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            seeds=(0, 1, 2),
            n_diffusion_steps=10,
            scale_grid=(1.0, 2.0),
            n_toy_train=1024,
            toy_d_hidden=32,
            n_toy_denoiser_steps=200,
            n_toy_classifier_steps=100,
            toy_batch_size=256,
            n_toy_samples=200,
            image_d_hidden=32,
            n_image_denoiser_steps=100,
            n_embedder_steps=50,
            n_image_classifier_steps=50,
            n_class_classifier_steps=50,
            n_h_steps=50,
            n_ratio_samples=200,
            n_image_samples=100,
            n_fair_samples=200,
            n_test=200,
        ),
        "book": {},
        "paper": dict(
            device="auto",
            dataset="cifar10",
            denoiser="unet",
            seeds=(0, 1, 2, 3, 4),
            n_diffusion_steps=250,
            scale_grid=(0.5, 1.0, 1.5, 2.0, 3.0, 4.0),
            n_toy_train=100_000,
            toy_d_hidden=256,
            n_toy_denoiser_steps=20_000,
            n_toy_classifier_steps=5_000,
            n_toy_samples=10_000,
            n_test=10_000,
            image_d_hidden=64,
            n_image_denoiser_steps=200_000,
            image_batch_size=128,
            n_embedder_steps=5_000,
            d_embed=128,
            n_image_classifier_steps=50_000,
            n_class_classifier_steps=50_000,
            n_h_steps=50_000,
            n_ratio_samples=20_000,
            n_image_samples=10_000,
            n_fair_samples=10_000,
        ),
    }
    PAPER_HARDWARE: ClassVar[str] = (
        "one GPU with >= 16 GB (CIFAR-10 from --data-root, a 2-level U-Net, 200k steps); "
        "roughly 10-14 h on an A100 (our estimate, not measured)"
    )
    DATA_ROOT_SCALES: ClassVar[tuple[str, ...]] = ("paper",)
    DATA_DESCRIPTION: ClassVar[str] = (
        "torchvision's cifar-10-batches-py/ (dataset=cifar10) or <class>/<image> folders (dataset=image_folder)"
    )


class JeffreyResults(Results[JeffreyConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the arrays (and trained models) the figures and lab use."""


def mean_sd(values: list[float]) -> dict[str, float]:
    """Mean and sample standard deviation (0 for one value) of a list of numbers."""
    arr = np.asarray(values, dtype=np.float64)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0}


def mutual_information(joint: np.ndarray) -> float:
    """``I(a; b)`` in nats of a 2-D table (0 iff independent)."""
    p = np.asarray(joint, dtype=np.float64)
    p = p / p.sum()
    ind = np.outer(p.sum(1), p.sum(0))
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / ind[mask])))


def supported_target(target: np.ndarray, marginal: np.ndarray) -> np.ndarray:
    """``target`` with its mass on cells the model never produced removed, renormalised (Jeffrey can only reweight)."""
    q = np.where(marginal > 0, target, 0.0)
    return q / q.sum()


# ---------------------------------------------------------------------------------------------- 1
def _rule() -> tuple[dict, dict]:
    p = np.asarray(CLOTH_JOINT)
    q = np.asarray(CLOTH_TARGET)
    updated = jeffrey_update(p, q)
    cond_before, cond_after = p / p.sum(0), updated / updated.sum(0)
    # KL(r || p) of random tables r with the same s-marginal q: Jeffrey's update should beat them all
    rng = np.random.default_rng(0)
    others = []
    for _ in range(2000):
        cond = rng.dirichlet(np.ones(p.shape[0]), size=p.shape[1]).T  # r(x | s)
        others.append(kl_divergence(cond * q[None, :], p))
    summary = {
        "joint": p.tolist(),
        "target": q.tolist(),
        "updated": updated.tolist(),
        "weights": jeffrey_weights(q, p.sum(0)).tolist(),
        "conditional_change": float(np.abs(cond_before - cond_after).max()),
        "marginal_error": float(np.abs(updated.sum(0) - q).max()),
        "kl_jeffrey": kl_divergence(updated, p),
        "kl_random_min": float(min(others)),
    }
    return summary, {}


# ---------------------------------------------------------------------------------------------- 2, 3
def _toy_model(cfg: JeffreyConfig, checkpoint: Checkpointer, progress: bool) -> tuple[dict, dict]:
    device = resolve_device(cfg.device)
    with one_cpu_thread(device):
        gen = torch.Generator().manual_seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        data = Y.sample_toy(cfg.n_toy_train, gen).to(device)
        schedule = D.NoiseSchedule.cosine(cfg.n_diffusion_steps, device)
        model, losses = train_toy_denoiser(cfg, data, schedule, gen, device, checkpoint)
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    return {"final_loss": losses[-1]}, {"denoiser": state}


def train_toy_denoiser(
    cfg: JeffreyConfig,
    data: torch.Tensor,
    schedule: D.NoiseSchedule,
    gen: torch.Generator,
    device: torch.device,
    checkpoint: Checkpointer | None = None,
) -> tuple[D.TimeMLP, list[float]]:
    """The toy's noise predictor trained on ``data`` with the DDPM noise-prediction loss; also its loss per step."""
    model = D.TimeMLP(2, 2, cfg.n_diffusion_steps, cfg.toy_d_hidden).to(device)
    losses = D.fit(
        model,
        D.denoiser_loss(data, schedule, cfg.toy_batch_size),
        n_steps=cfg.n_toy_denoiser_steps,
        lr=cfg.lr,
        generator=gen,
        checkpoint=checkpoint,
        name="toy_model/denoiser",
    )
    return model, losses


def train_toy_classifier(
    cfg: JeffreyConfig,
    data: torch.Tensor,
    schedule: D.NoiseSchedule,
    gen: torch.Generator,
    device: torch.device,
    labels: torch.Tensor | None = None,
) -> D.TimeMLP:
    """The toy's time-dependent classifier c_t(s | x_t) over the four cells, trained on noised ``data``
    (with the true cells as labels, or with ``labels`` if given: the noisy-classifier experiment)."""
    clf = toy_classifier(cfg, None, device)
    D.fit(
        clf,
        D.classifier_loss(data, Y.toy_cells(data) if labels is None else labels, schedule, cfg.toy_batch_size),
        n_steps=cfg.n_toy_classifier_steps,
        lr=cfg.lr,
        generator=gen,
    )
    return clf


def flip_labels(labels: torch.Tensor, rate: float, n_cells: int, gen: torch.Generator) -> torch.Tensor:
    """``labels`` with each one moved, with probability ``rate``, to one of the other ``n_cells - 1`` cells uniformly
    (the label noise of :func:`~explorables.jeffrey.rule.flip_confusion`)."""
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must lie in [0, 1] (a probability of flipping a label), got {rate}")
    flip = torch.rand(labels.shape, generator=gen) < rate
    shift = torch.randint(1, n_cells, labels.shape, generator=gen)
    return torch.where(flip, (labels.cpu() + shift) % n_cells, labels.cpu()).to(labels.device)


@torch.no_grad()
def soft_confusion(classifier: torch.nn.Module, x: torch.Tensor, cells: torch.Tensor, n_cells: int) -> np.ndarray:
    """``M[s, s'] = mean of c_0(s' | x)`` over the points ``x`` of cell ``s`` (the classifier at ``t = 0``).

    A cell without points gets the row of a perfect classifier (it carries no mass in the prediction anyway).
    """
    tt = torch.zeros(len(x), dtype=torch.long, device=x.device)
    probs = torch.softmax(classifier(x, tt), dim=-1).double().cpu().numpy()
    c = np.asarray(cells.cpu())
    m = np.eye(n_cells)
    for s in range(n_cells):
        if np.any(c == s):
            m[s] = probs[c == s].mean(0)
    return m / m.sum(1, keepdims=True)


def seeded_generator(cfg: JeffreyConfig, seed: int) -> tuple[int, torch.Generator]:
    """``(run_seed, generator)`` for one of ``cfg.seeds``; torch's global state is seeded with it too."""
    run_seed = 10_000 * cfg.seed + seed
    torch.manual_seed(run_seed)
    return run_seed, torch.Generator().manual_seed(run_seed)


def toy_denoiser(cfg: JeffreyConfig, state: dict, device: torch.device) -> D.TimeMLP:
    """The toy's trained noise predictor from its saved state."""
    model = D.TimeMLP(2, 2, cfg.n_diffusion_steps, cfg.toy_d_hidden).to(device)
    model.load_state_dict(state)
    return model.eval()


def toy_classifier(cfg: JeffreyConfig, state: dict | None, device: torch.device) -> D.TimeMLP:
    """The toy's time-dependent classifier over the four cells (from its saved state if given)."""
    model = D.TimeMLP(2, Y.N_CELLS, cfg.n_diffusion_steps, cfg.toy_d_hidden // 2, n_layers=2).to(device)
    if state is not None:
        model.load_state_dict(state)
    return model.eval()


def jeffrey_potential(classifier: torch.nn.Module, log_w: torch.Tensor) -> D.Potential:
    """``log h_t`` of eq. (jeffrey-discrete) from a time-dependent classifier and ``log w``."""
    # the package's own potential: the sampler runs it (and jeffrey_log_h in it) bare, once per step
    return package_callable(D.time_potential(classifier, lambda logits: D.jeffrey_log_h(logits, log_w)))


def classifier_potential(classifier: torch.nn.Module, labels: torch.Tensor) -> D.Potential:
    """``log c_t(y | x_t)`` with one label per sample: plain classifier guidance, eq. (cg-eps)."""
    return package_callable(D.time_potential(classifier, lambda logits: D.classifier_log_prob(logits, labels)))


def _log_w(target: np.ndarray, marginal: np.ndarray, device: torch.device) -> torch.Tensor:
    w = jeffrey_weights(target, marginal)
    with np.errstate(divide="ignore"):
        return torch.as_tensor(np.log(w), dtype=torch.float32, device=device)


def _toy_metrics(x: torch.Tensor, q: np.ndarray, exact: torch.Tensor) -> dict[str, Any]:
    x = x.cpu()
    cells = Y.toy_cells(x)
    joint = cell_frequencies(cells, Y.N_CELLS)
    return {
        "joint": joint.tolist(),
        "tv": tv_distance(joint, q),
        "mmd2": mmd2(x, exact),
        "cond_mmd2": conditional_mmd2(x, cells, exact, Y.toy_cells(exact), q),
        "mutual_information": mutual_information(joint.reshape(2, 2)),
    }


def _noisy_row(p_model: np.ndarray, q: np.ndarray, m: np.ndarray, jeff: torch.Tensor, cg: torch.Tensor) -> dict:
    """The toy's noisy-classifier numbers: measured cell marginals, and those predicted from the confusion ``m``."""
    joint_j = cell_frequencies(Y.toy_cells(jeff.cpu()), Y.N_CELLS)
    joint_c = cell_frequencies(Y.toy_cells(cg.cpu()), Y.N_CELLS)
    pred_j = jeffrey_marginal_with(p_model, q, m)
    pred_c = classifier_guidance_marginal_with(p_model, q, m)
    return {
        "confusion": m.tolist(),
        "accuracy": float(np.dot(p_model, np.diag(m))),
        "jeffrey_joint": joint_j.tolist(),
        "classifier_joint": joint_c.tolist(),
        "jeffrey_tv": tv_distance(joint_j, q),
        "classifier_tv": tv_distance(joint_c, q),
        "jeffrey_predicted_tv": tv_distance(pred_j, q),
        "classifier_predicted_tv": tv_distance(pred_c, q),
        "jeffrey_tv_to_predicted": tv_distance(joint_j, pred_j),
        "classifier_tv_to_predicted": tv_distance(joint_c, pred_c),
        # the unguided model's distance to each prediction: a sampler that did nothing must not pass the check
        "unguided_tv_to_jeffrey_predicted": tv_distance(p_model, pred_j),
        "unguided_tv_to_classifier_predicted": tv_distance(p_model, pred_c),
    }


def _toy_exact(cfg: JeffreyConfig, schedule: D.NoiseSchedule, gen: torch.Generator, noise: Any) -> dict[str, Any]:
    """The toy's noisy-classifier check on its exact networks (what eq. (jeffrey-confusion) assumes), and Jeffrey
    guidance against classifier guidance on them (the theory's equivalence, measured): the analytic score of the
    mixture and the Bayes classifiers of its cells, clean and of labels flipped at ``cfg.toy_label_noise``.

    The same samplers, sample count and starting noise (``noise()``) as the learned networks. Runs after the learned
    part of a seed, so the learned numbers keep their random streams.
    """
    n, scale, device = cfg.n_toy_samples, cfg.guidance_scale, schedule.betas.device
    score = Y.ExactNoisePredictor(schedule.alpha_bars)
    bayes = Y.ExactCellClassifier(schedule.alpha_bars)
    bayes_noisy = Y.ExactCellClassifier(schedule.alpha_bars, confusion=flip_confusion(Y.N_CELLS, cfg.toy_label_noise))

    def draw(potential: D.Potential | None = None) -> torch.Tensor:
        return D.sample(score, schedule, n, (2,), generator=noise(), potential=potential, scale=scale).cpu()

    unguided = draw()
    p_model = cell_frequencies(Y.toy_cells(unguided), Y.N_CELLS)
    q = supported_target(independent_target(p_model.reshape(2, 2)).ravel(), p_model)
    exact = Y.sample_jeffrey_target(n, supported_target(q, Y.cell_marginal()), gen)
    log_w = _log_w(q, p_model, device)
    labels = torch.multinomial(torch.as_tensor(q), n, replacement=True, generator=gen).to(device)
    m = soft_confusion(bayes_noisy, unguided.to(device), Y.toy_cells(unguided), Y.N_CELLS)

    def metrics(x: torch.Tensor) -> dict[str, float]:
        return {"tv": tv_distance(cell_frequencies(Y.toy_cells(x), Y.N_CELLS), q), "mmd2": mmd2(x, exact)}

    return {
        "model_joint": p_model.tolist(),
        "target": q.tolist(),
        "unguided": metrics(unguided),
        "jeffrey": metrics(draw(jeffrey_potential(bayes, log_w))),
        "classifier": metrics(draw(classifier_potential(bayes, labels))),
        "noisy": _noisy_row(
            p_model, q, m, draw(jeffrey_potential(bayes_noisy, log_w)), draw(classifier_potential(bayes_noisy, labels))
        ),
    }


def _toy(cfg: JeffreyConfig, models: dict, checkpoint: Checkpointer, progress: bool) -> tuple[dict, dict]:
    device = resolve_device(cfg.device)
    schedule = D.NoiseSchedule.cosine(cfg.n_diffusion_steps, device)
    n, scale = cfg.n_toy_samples, cfg.guidance_scale
    true_marginal = Y.cell_marginal()
    rows, curves = [], {}
    with one_cpu_thread(device):
        denoiser = toy_denoiser(cfg, models["denoiser"], device)
        for k, seed in enumerate(tqdm(cfg.seeds, desc="toy seeds", disable=not progress)):
            name = f"toy/seed{seed}"
            done = checkpoint.get(name)
            if done is not None:
                rows.append(done["row"])
                curves = done["curves"] or curves
                continue
            run_seed, gen = seeded_generator(cfg, seed)
            data = Y.sample_toy(cfg.n_toy_train, gen).to(device)
            clf = train_toy_classifier(cfg, data, schedule, gen, device)

            def noise(run_seed: int = run_seed) -> torch.Generator:
                """Common random numbers: every method's sampler starts from the same noise (paired comparisons)."""
                return torch.Generator().manual_seed(run_seed + 5000)

            unguided = D.sample(denoiser, schedule, n, (2,), generator=noise()).cpu()
            p_model = cell_frequencies(Y.toy_cells(unguided), Y.N_CELLS)
            q = supported_target(independent_target(p_model.reshape(2, 2)).ravel(), p_model)
            exact = Y.sample_jeffrey_target(n, supported_target(q, true_marginal), gen)
            log_w = _log_w(q, p_model, device)
            jeff = D.sample(
                denoiser, schedule, n, (2,), generator=noise(), potential=jeffrey_potential(clf, log_w), scale=scale
            )
            labels = torch.multinomial(torch.as_tensor(q), n, replacement=True, generator=gen).to(device)
            cg = D.sample(
                denoiser, schedule, n, (2,), generator=noise(), potential=classifier_potential(clf, labels), scale=scale
            )
            # control: the same machinery toward another target (reversed coupling) must land there, not at q
            p_a, p_b = q.reshape(2, 2).sum(1)[1], q.reshape(2, 2).sum(0)[1]
            q_control = supported_target(Y.joint_target(p_a, p_b, cfg.control_coupling), p_model)
            control = D.sample(
                denoiser,
                schedule,
                n,
                (2,),
                generator=noise(),
                potential=jeffrey_potential(clf, _log_w(q_control, p_model, device)),
                scale=scale,
            )
            control_joint = cell_frequencies(Y.toy_cells(control.cpu()), Y.N_CELLS)
            # noisy classifier: the same classifier trained on labels flipped at rate toy_label_noise
            rate = cfg.toy_label_noise
            noisy = train_toy_classifier(
                cfg, data, schedule, gen, device, flip_labels(Y.toy_cells(data), rate, Y.N_CELLS, gen)
            )
            jeff_n = D.sample(
                denoiser, schedule, n, (2,), generator=noise(), potential=jeffrey_potential(noisy, log_w), scale=scale
            )
            cg_n = D.sample(
                denoiser,
                schedule,
                n,
                (2,),
                generator=noise(),
                potential=classifier_potential(noisy, labels),
                scale=scale,
            )
            x_u, cells_u = unguided.to(device), Y.toy_cells(unguided)
            m_clean = soft_confusion(clf, x_u, cells_u, Y.N_CELLS)
            m_noisy = soft_confusion(noisy, x_u, cells_u, Y.N_CELLS)
            noisy_row = _noisy_row(p_model, q, m_noisy, jeff_n, cg_n)
            noisy_row["flip_predicted_jeffrey_tv"] = tv_distance(
                jeffrey_marginal_with(p_model, q, flip_confusion(Y.N_CELLS, rate)), q
            )
            row = {
                "seed": run_seed,
                "model_joint": p_model.tolist(),
                "target": q.tolist(),
                "unguided": _toy_metrics(unguided, q, exact),
                "jeffrey": _toy_metrics(jeff, q, exact),
                "classifier": _toy_metrics(cg, q, exact),
                "jeffrey_predicted_tv": tv_distance(jeffrey_marginal_with(p_model, q, m_clean), q),
                "noisy": noisy_row,
                "control": {
                    "target": q_control.tolist(),
                    "joint": control_joint.tolist(),
                    "tv_to_control": tv_distance(control_joint, q_control),
                    "tv_to_fair": tv_distance(control_joint, q),
                    "tv_unguided_to_control": tv_distance(p_model, q_control),
                },
                "model_mmd2_to_data": mmd2(unguided, Y.sample_toy(n, gen)),
            }
            seed_curves: dict[str, Any] = {}
            if k == 0:  # the explorable: both guidances over the scale grid, and the lab's classifier
                sweep = {"jeffrey": [], "classifier": []}
                points = {"jeffrey": [], "classifier": []}
                for s in cfg.scale_grid:
                    if s == scale:  # the same draws as above (common random numbers): reuse them
                        xj, xc = jeff, cg
                    else:
                        xj = D.sample(
                            denoiser, schedule, n, (2,), generator=noise(), potential=jeffrey_potential(clf, log_w),
                            scale=s,
                        )  # fmt: skip
                        xc = D.sample(
                            denoiser, schedule, n, (2,), generator=noise(), potential=classifier_potential(clf, labels),
                            scale=s,
                        )  # fmt: skip
                    for key, x in (("jeffrey", xj), ("classifier", xc)):
                        sweep[key].append(_toy_metrics(x, q, exact))
                        points[key].append(x.cpu().numpy())
                row["sweep"] = {"scales": list(cfg.scale_grid), **sweep}
                seed_curves = {
                    "scales": np.array(cfg.scale_grid),
                    "jeffrey": np.stack(points["jeffrey"]),
                    "classifier": np.stack(points["classifier"]),
                    "unguided": unguided.numpy(),
                    "exact": exact.numpy(),
                    "target": q,
                    "classifier_state": {k2: v.detach().cpu() for k2, v in clf.state_dict().items()},
                }
                curves = seed_curves
            row["exact"] = _toy_exact(cfg, schedule, gen, noise)
            checkpoint.save(name, {"row": row, "curves": seed_curves})
            rows.append(row)

    def agg(method: str, key: str) -> dict[str, float]:
        return mean_sd([r[method][key] for r in rows])

    summary = {
        "seeds": rows,
        "sweep": rows[0]["sweep"],
        **{
            f"{m}_{key}": agg(m, key)
            for m in ("unguided", "jeffrey", "classifier")
            for key in ("tv", "mmd2", "cond_mmd2", "mutual_information")
        },
        **{
            f"noisy_{key}": mean_sd([r["noisy"][key] for r in rows])
            for key in (
                "accuracy",
                "jeffrey_tv",
                "classifier_tv",
                "jeffrey_predicted_tv",
                "classifier_predicted_tv",
                "flip_predicted_jeffrey_tv",
            )
        },
        "jeffrey_predicted_tv": mean_sd([r["jeffrey_predicted_tv"] for r in rows]),
        "control_tv_to_control": mean_sd([r["control"]["tv_to_control"] for r in rows]),
        "control_tv_to_fair": mean_sd([r["control"]["tv_to_fair"] for r in rows]),
        "control_tv_unguided": mean_sd([r["control"]["tv_unguided_to_control"] for r in rows]),
        "model_mmd2_to_data": mean_sd([r["model_mmd2_to_data"] for r in rows]),
    }
    return summary, curves


# ---------------------------------------------------------------------------------------------- 4, 5
def image_denoiser(cfg: JeffreyConfig, shape: tuple[int, ...], device: torch.device) -> torch.nn.Module:
    """The image noise predictor: an MLP on pixels, or a small U-Net."""
    if cfg.denoiser == "unet":
        return I.UNet(shape[0], cfg.n_diffusion_steps, width=cfg.image_d_hidden).to(device)
    d = math.prod(shape)
    return D.TimeMLP(d, d, cfg.n_diffusion_steps, cfg.image_d_hidden).to(device)


def _image_model(cfg: JeffreyConfig, checkpoint: Checkpointer, progress: bool) -> tuple[dict, dict]:
    device = resolve_device(cfg.device)
    data = I.load_images(
        cfg.dataset, cfg.data_root, seed=cfg.seed, n_test=cfg.n_test, image_size=cfg.image_size, limit=cfg.image_limit
    )
    with one_cpu_thread(device):
        train = data.train.to(device)
        labels = data.train_labels.to(device)
        # the metric/target embedding (a classifier on the labels), and an independent one for the control:
        # principal components of the pixels (no labels, another objective: reconstruction)
        emb = I.train_embedder(
            train, labels, data.n_classes, d_embed=cfg.d_embed, n_steps=cfg.n_embedder_steps, seed=cfg.seed
        )
        pca = I.PixelPCA.fit(data.train, cfg.d_embed, seed=cfg.seed)
        test = data.test.to(device)
        with torch.no_grad():
            acc = float((emb(test).argmax(1).cpu() == data.test_labels).float().mean())
        gen = torch.Generator().manual_seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        schedule = D.NoiseSchedule.cosine(cfg.n_diffusion_steps, device)
        model = image_denoiser(cfg, tuple(train.shape[1:]), device)
        losses = D.fit(
            model,
            D.denoiser_loss(train, schedule, cfg.image_batch_size),
            n_steps=cfg.n_image_denoiser_steps,
            lr=cfg.lr,
            generator=gen,
            checkpoint=checkpoint,
            name="image_model/denoiser",
        )

    def cpu(m: torch.nn.Module) -> dict:
        return {k: v.detach().cpu() for k, v in m.state_dict().items()}

    summary = {
        "n_train": len(data.train),
        "n_test": len(data.test),
        "embedder_accuracy": acc,
        "pca_explained_variance": pca.explained,
        "final_loss": losses[-1],
        "train_vs_test_frechet": frechet_distance(I.embed(emb, train), I.embed(emb, test)),
    }
    curves = {
        "denoiser": cpu(model),
        "embedder": cpu(emb),
        "pca": pca.state(),
        "n_classes": data.n_classes,
        "shape": list(train.shape[1:]),
    }
    return summary, curves


def _restore_embedders(
    cfg: JeffreyConfig, models: dict, d_in: int, device: torch.device
) -> tuple[I.Embedder, I.PixelPCA]:
    emb = I.Embedder(d_in, models["n_classes"], 128, cfg.d_embed).to(device)
    emb.load_state_dict(models["embedder"])
    emb.eval().requires_grad_(False)
    return emb, I.PixelPCA.from_state(models["pca"])


def _fair_metrics(cells: torch.Tensor, q: np.ndarray, n_classes: int) -> dict[str, Any]:
    joint = cell_frequencies(cells, 2 * n_classes)
    return {
        "joint": joint.tolist(),
        "tv": tv_distance(joint, q),
        "mutual_information": mutual_information(joint.reshape(n_classes, 2)),
    }


#: noise levels (fractions of T) at which the 20-cell classifier's accuracy is reported
ACCURACY_LEVELS = (0.0, 0.25, 0.5, 0.75)


@torch.no_grad()
def noisy_accuracy(
    classifier: torch.nn.Module,
    x0: torch.Tensor,
    cells: torch.Tensor,
    schedule: D.NoiseSchedule,
    gen: torch.Generator,
    levels: tuple[float, ...] = ACCURACY_LEVELS,
) -> dict[str, float]:
    """Accuracy of ``c_t(s | x_t)`` on ``x_t`` noised from ``x0`` (whose cells are ``cells``) at ``t = level · T``.

    The keys are the step numbers ``t`` (as strings, for JSON); ``t = 0`` is the clean classifier.
    """
    out = {}
    for level in levels:
        t = min(round(level * schedule.n_steps), schedule.n_steps - 1)
        tt = torch.full((len(x0),), t, dtype=torch.long, device=x0.device)
        eps = torch.randn(x0.shape, generator=gen).to(x0.device)
        x_t = schedule.noise(x0, tt, eps) if t > 0 else x0
        pred = classifier(x_t, tt).argmax(1)
        out[str(t)] = float((pred == cells.to(pred.device)).float().mean())
    return out


def _images(cfg: JeffreyConfig, models: dict, checkpoint: Checkpointer, progress: bool) -> tuple[dict, dict]:
    device = resolve_device(cfg.device)
    data = I.load_images(
        cfg.dataset, cfg.data_root, seed=cfg.seed, n_test=cfg.n_test, image_size=cfg.image_size, limit=cfg.image_limit
    )
    shape = tuple(models["shape"])
    n_classes, n_cells = models["n_classes"], 2 * models["n_classes"]
    schedule = D.NoiseSchedule.cosine(cfg.n_diffusion_steps, device)
    rows, curves = [], {}
    with one_cpu_thread(device):
        train, test = data.train.to(device), data.test.to(device)
        emb, emb2 = _restore_embedders(cfg, models, math.prod(shape), device)
        denoiser = image_denoiser(cfg, shape, device)
        denoiser.load_state_dict(models["denoiser"])
        denoiser.eval()
        real_emb = I.embed(emb, train)  # the target q(e): embeddings of the *training* images
        test_emb, test_emb2 = I.embed(emb, test), emb2(test)  # only the metrics see the test images
        for k, seed in enumerate(tqdm(cfg.seeds, desc="image seeds", disable=not progress)):
            name = f"images/seed{seed}"
            done = checkpoint.get(name)
            if done is not None:
                rows.append(done["row"])
                curves = done["curves"] or curves
                continue
            run_seed, gen = seeded_generator(cfg, seed)

            def draw(n: int, potential: D.Potential | None = None, gen: torch.Generator = gen) -> torch.Tensor:
                return D.sample(
                    denoiser,
                    schedule,
                    n,
                    shape,
                    generator=gen,
                    potential=potential,
                    scale=cfg.guidance_scale if potential is not None else 0.0,
                    clip=1.0,
                )

            # unguided pool: the model's own distribution p (density ratio, h_t fit, classifier, marginals)
            pool = draw(cfg.n_ratio_samples)
            ratio = I.fit_density_ratio(real_emb, I.embed(emb, pool), c=cfg.ratio_c, seed=run_seed)
            w = I.normalised_weights(ratio.log_w(I.embed(emb, pool)), cfg.weight_clip)
            ess = float(w.sum() ** 2 / (w**2).sum() / len(w))
            h_net = D.TimeMLP(math.prod(shape), 1, cfg.n_diffusion_steps, 128, n_layers=2).to(device)
            D.fit(
                h_net,
                D.log_h_loss(
                    pool, torch.as_tensor(w, dtype=torch.float32, device=device), schedule, cfg.image_batch_size
                ),
                n_steps=cfg.n_h_steps,
                lr=cfg.lr,
                generator=gen,
            )
            # the statistic s(x) = (class, thick): "thick" is ink above the model's median, a threshold fixed here
            threshold = float(I.ink(pool).median())
            pool_cells = I.image_cells(emb, pool, threshold)
            # c_t(s | x_t) under the model p, as the definition of h_t asks: trained on the model's samples
            clf = D.TimeMLP(math.prod(shape), n_cells, cfg.n_diffusion_steps, 128, n_layers=2).to(device)
            D.fit(
                clf,
                D.classifier_loss(pool, pool_cells, schedule, cfg.image_batch_size),
                n_steps=cfg.n_image_classifier_steps,
                lr=cfg.lr,
                generator=gen,
            )
            clf.eval()
            # the baseline's own classifier c_t(y | x_t) over the 10 classes, trained for that job alone. Classifier
            # guidance needs p_t(y | x_t) under the model it guides, so it learns from the model's samples (labelled
            # by the embedding classifier); one trained on the real images and true labels, the usual choice for a
            # good model, barely moved this poor model's class marginal in a side test
            class_clf = D.TimeMLP(math.prod(shape), n_classes, cfg.n_diffusion_steps, 128, n_layers=2).to(device)
            D.fit(
                class_clf,
                D.classifier_loss(pool, pool_cells // 2, schedule, cfg.image_batch_size),
                n_steps=cfg.n_class_classifier_steps,
                lr=cfg.lr,
                generator=gen,
            )
            class_clf.eval()
            n, n_fair = cfg.n_image_samples, cfg.n_fair_samples
            unguided_all = draw(max(n, n_fair))  # the first n for the Fréchet distances, n_fair for fairness
            unguided, unguided_fair = unguided_all[:n], unguided_all[:n_fair]
            jeff = draw(n, D.time_potential(h_net, lambda f: f[:, 0]))
            class_marginal = np.bincount(data.train_labels.numpy(), minlength=n_classes) / len(data.train_labels)
            labels = torch.multinomial(torch.as_tensor(class_marginal), n, replacement=True, generator=gen).to(device)
            cg = draw(n, classifier_potential(class_clf, labels))
            # fairness: class independent of thickness
            p_model = cell_frequencies(pool_cells.cpu(), n_cells)
            q = supported_target(independent_target(p_model.reshape(n_classes, 2)).ravel(), p_model)
            fair_j = draw(n_fair, jeffrey_potential(clf, _log_w(q, p_model, device)))
            # capability control: can guidance with this classifier move the joint at all? Classifier guidance
            # with one cell label y ~ q per sample, the same classifier and scale
            fair_labels = torch.multinomial(torch.as_tensor(q), n_fair, replacement=True, generator=gen).to(device)
            fair_c = draw(n_fair, classifier_potential(clf, fair_labels))
            # what this classifier allows: its confusion at t = 0 on fresh unguided samples, and the marginals
            # Jeffrey guidance and classifier guidance reach with it (rule.jeffrey_marginal_with)
            fair_cells = I.image_cells(emb, unguided_fair, threshold)
            confusion = soft_confusion(clf, unguided_fair, fair_cells, n_cells)
            pred_j = jeffrey_marginal_with(p_model, q, confusion)
            pred_c = classifier_guidance_marginal_with(p_model, q, confusion)
            accuracy_by_t = noisy_accuracy(clf, unguided_fair, fair_cells, schedule, gen)

            def frechet(x: torch.Tensor) -> dict[str, float]:
                return {
                    "metric": frechet_distance(I.embed(emb, x), test_emb),
                    "control": frechet_distance(emb2(x), test_emb2),
                }

            floor = cell_frequencies(
                torch.multinomial(torch.as_tensor(q), n_fair, replacement=True, generator=gen), n_cells
            )

            def class_tv(x: torch.Tensor, threshold: float = threshold, target: np.ndarray = class_marginal) -> float:
                """TV of the predicted class marginal to the training one: the baseline's own target."""
                classes = I.image_cells(emb, x, threshold).cpu() // 2
                return tv_distance(cell_frequencies(classes, n_classes), target)

            row = {
                "seed": run_seed,
                "ess_fraction": ess,
                "class_tv": {"unguided": class_tv(unguided), "jeffrey": class_tv(jeff), "classifier": class_tv(cg)},
                "fair_tv_floor": tv_distance(floor, q),
                "frechet": {"unguided": frechet(unguided), "jeffrey": frechet(jeff), "classifier": frechet(cg)},
                "fairness": {
                    "target": q.tolist(),
                    "model_joint": p_model.tolist(),
                    "classifier_accuracy": float(np.dot(p_model, np.diag(confusion))),
                    "accuracy_by_t": accuracy_by_t,
                    "predicted_jeffrey": {
                        "joint": pred_j.tolist(),
                        "tv": tv_distance(pred_j, q),
                        "mutual_information": mutual_information(pred_j.reshape(n_classes, 2)),
                    },
                    "predicted_classifier_tv": tv_distance(pred_c, q),
                    "unguided": _fair_metrics(fair_cells.cpu(), q, n_classes),
                    "jeffrey": _fair_metrics(I.image_cells(emb, fair_j, threshold).cpu(), q, n_classes),
                    "classifier": _fair_metrics(I.image_cells(emb, fair_c, threshold).cpu(), q, n_classes),
                },
            }
            seed_curves: dict[str, Any] = {}
            if k == 0:
                seed_curves = {
                    key: x[:24].cpu().numpy()
                    for key, x in (
                        ("unguided", unguided),
                        ("jeffrey", jeff),
                        ("classifier", cg),
                        ("fair_jeffrey", fair_j),
                        ("fair_classifier", fair_c),
                        ("real", test),
                    )
                }
                curves = seed_curves
            checkpoint.save(name, {"row": row, "curves": seed_curves})
            rows.append(row)
    summary: dict[str, Any] = {
        "seeds": rows,
        "ess_fraction": mean_sd([r["ess_fraction"] for r in rows]),
        "fair_tv_floor": mean_sd([r["fair_tv_floor"] for r in rows]),
    }
    for m in ("unguided", "jeffrey", "classifier"):
        for which in ("metric", "control"):
            summary[f"frechet_{which}_{m}"] = mean_sd([r["frechet"][m][which] for r in rows])
        for key in ("tv", "mutual_information"):
            if m in rows[0]["fairness"]:
                summary[f"fair_{key}_{m}"] = mean_sd([r["fairness"][m][key] for r in rows])
    summary["fair_predicted_tv_jeffrey"] = mean_sd([r["fairness"]["predicted_jeffrey"]["tv"] for r in rows])
    summary["fair_predicted_tv_classifier"] = mean_sd([r["fairness"]["predicted_classifier_tv"] for r in rows])
    summary["fair_classifier_accuracy"] = mean_sd([r["fairness"]["classifier_accuracy"] for r in rows])
    summary["fair_accuracy_by_t"] = {
        t: mean_sd([r["fairness"]["accuracy_by_t"][t] for r in rows]) for t in rows[0]["fairness"]["accuracy_by_t"]
    }
    for m in ("unguided", "jeffrey", "classifier"):
        summary[f"class_tv_{m}"] = mean_sd([r["class_tv"][m] for r in rows])
    return summary, curves


@checked()
def run(
    config: JeffreyConfig | None = None,
    *,
    checkpoint: Checkpointer | None = None,
    progress: bool = False,
    workers: int = 0,
) -> JeffreyResults:
    """Run the chapter's experiments (see the module docstring); resumable part by part and seed by seed.

    ``workers``: processes (0: every CPU available, :func:`~explorables.core.threads.worker_count`). With 2 or
    more, the CPU as device, the image parts on and neither toy part in the checkpoint yet, a spawned worker runs
    the toy's two parts (``toy_model``, ``toy``) while this process runs the image parts. The numbers never
    depend on it: every part seeds its own random streams and models from ``config`` (the worker starts from the
    global seeding of a serial run and uses this process's torch thread count), and no part reads another's
    random state. The worker's parts are stored after the image parts; a worker part's time is the time this
    process waited for it."""
    workers = check_int("workers", workers, minimum=0)
    cfg, checkpoint = start_run(JeffreyConfig, config, checkpoint)
    models: dict[str, Any] = {}

    def toy_model() -> tuple[dict, dict]:
        return _toy_model(cfg, checkpoint, progress)

    def toy() -> tuple[dict, dict]:
        return _toy(cfg, models["toy_model"], checkpoint, progress)

    def image_model() -> tuple[dict, dict]:
        return _image_model(cfg, checkpoint, progress)

    def images() -> tuple[dict, dict]:
        return _images(cfg, models["image_model"], checkpoint, progress)

    parts: dict[str, Any] = {"rule": _rule}
    parts["toy_model"] = _keep(toy_model, models, "toy_model")
    parts["toy"] = toy
    if cfg.use_images:
        parts["image_model"] = _keep(image_model, models, "image_model")
        parts["images"] = images
    order = list(parts)
    parallel = (
        cfg.use_images
        and resolve_device(cfg.device).type == "cpu"
        and worker_count(workers, 2) > 1
        and checkpoint.get("part/images") is None
        and not any(e == f"part/{n}" or e.startswith(f"{n}/") for n in TOY_PARTS for e in checkpoint.entries)
    )
    with ExitStack() as stack:
        if parallel:
            pool = stack.enter_context(ProcessPoolExecutor(1, mp_context=get_context("spawn")))
            future = pool.submit(_toy_worker, cfg, torch.get_num_threads())

            def from_worker(name: str) -> Any:
                def part() -> tuple[dict, dict]:
                    return future.result()[name]

                return part

            # the image parts here first, the toy's from the worker after them
            parts = {
                "rule": parts["rule"],
                **{n: parts[n] for n in ("image_model", "images")},
                **{n: from_worker(n) for n in TOY_PARTS},
            }
        summary, curves = _run_parts_lazily(checkpoint, parts, models, progress)
    summary = {k: summary[k] for k in [*order, "timings"]}  # the serial order, whatever ran where
    summary["timings"] = {f"{k}_s": summary["timings"][f"{k}_s"] for k in order}
    return JeffreyResults(cfg, summary, {k: curves[k] for k in order})


#: the parts a worker process can run beside the image parts (they read nothing the image parts write)
TOY_PARTS = ("toy_model", "toy")


def _toy_worker(cfg: JeffreyConfig, threads: int) -> dict[str, tuple[dict, dict]]:
    """The toy's two parts in a worker process, on ``threads`` torch threads (the calling process's count), from
    the global seeding a serial run starts with, and without a checkpoint (the calling process stores the parts)."""
    torch.set_num_threads(threads)
    seed_everything(cfg.seed)
    checkpoint = Checkpointer(None)
    model = _toy_model(cfg, checkpoint, False)
    return {"toy_model": model, "toy": _toy(cfg, model[1], checkpoint, False)}


def _keep(part: Any, models: dict, name: str) -> Any:
    """Wrap a model-training part so that later parts find its curves (the trained weights) in ``models``."""

    def wrapped() -> tuple[dict, dict]:
        summary, curves = part()
        models[name], models[f"{name}_summary"] = curves, summary
        return summary, curves

    return wrapped


def _run_parts_lazily(checkpoint: Checkpointer, parts: dict, models: dict, progress: bool) -> tuple[dict, dict]:
    """:func:`run_parts_timed`, where a resumed model part (skipped) still hands its weights to the parts after it."""
    for name in ("toy_model", "image_model"):
        done = checkpoint.get(f"part/{name}")
        if done is not None:
            models[name], models[f"{name}_summary"] = done["curves"], done["summary"]
    return run_parts_timed(checkpoint, parts, progress)


@checked()
def headline(results: JeffreyResults) -> list[str]:
    """Key numbers for the end-of-run summary of the command line (``results`` of :func:`run`)."""
    if "toy" not in results.summary:
        raise ArgumentError("results must be the results of run (with a toy part), got no 'toy' in results.summary")
    t = results.summary["toy"]
    lines = [
        f"toy TV to p(a)p(b): unguided {t['unguided_tv']['mean']:.3f} -> Jeffrey {t['jeffrey_tv']['mean']:.3f} "
        f"(classifier guidance {t['classifier_tv']['mean']:.3f})",
        f"toy MMD^2 to the exact Jeffrey target: {t['unguided_mmd2']['mean']:.4f} -> {t['jeffrey_mmd2']['mean']:.4f} "
        f"(classifier guidance {t['classifier_mmd2']['mean']:.4f})",
    ]
    if "images" in results.summary:
        im = results.summary["images"]
        lines.append(
            f"Fréchet (embedding stand-in for FID): {im['frechet_metric_unguided']['mean']:.1f} -> "
            f"{im['frechet_metric_jeffrey']['mean']:.1f} "
            f"(classifier guidance {im['frechet_metric_classifier']['mean']:.1f})"
        )
    return lines
