"""The chapter's reduced-scale reproduction, one code path for every scale.

The images (book scale): scikit-learn's digits, each moved once by a fixed random offset of up to
``shift`` pixels, the same offsets in every run. The teacher's convolutions and pooling are built for
shifts and the mixer student's fixed 2x2 tokens are not, so that even with every label a CE student
stays well below the teacher: room for distillation (on the plain digits it did not, see
``benchmarks/rpkd_headroom_rule.md``). The mixer student has width 12 (``benchmarks/rpkd_width_rule.md``:
at width 8 some few-label arm came within 0.05 of chance on two of the five base seeds). Every run has five
student seeds (``benchmarks/rpkd_seeds_rule.md``: with three, four claim rows read different words on
different base seeds). Under the standard protocol the students may see fresh shifted views shared with the
teacher (``standard_augment``, with ``standard_steps``); the book leaves them off: on tuning seeds the views
weakened every arm, CE included, and no known distiller then beat CE on every seed
(``benchmarks/rpkd_consistent_aug_rule.md``, ``rpkd_consistent_aug2_rule.md``).

For every class count ``C`` in ``class_grid`` (super-classes ``fine mod C``):

1. **Teacher.** A CNN trained with cross-entropy on the ``C``-class labels of the training split, with a batch
   normalisation before its last ReLU (``teacher_norm``; without it some of its last channels died on every base
   seed: ``benchmarks/rpkd_teacher_transfer_rule.md``).
2. **Probe** (the mechanism, apart from student training): linear probes read the teacher's
   targets on the transfer set (``C``-way soft logits; RPKD's ``K``-way prototype distribution and
   activation maps; their rivals without prototypes, the pooled projection and the control's target;
   and, as the reference, the teacher's own feature map) and predict the fine digit; held-out probe
   accuracy per target, on one probe split per student seed. Also counted: the teacher's dead channels
   (last convolution, zero at every location of every training image).
3. **Distillation.** A heterogeneous student (an MLP-mixer over 2x2-pixel tokens, or a narrow
   CNN) sees the teacher's outputs on every training image (the transfer set) and the labels of
   only ``n_labelled`` of them (``protocol="few_label"``) or of all of them (``"standard"``). Arms:
   CE alone, Hinton KD, OFA, RPKD, RPKD + KD, and the control (CE plus feature matching through
   RPKD's own frozen random projection, without prototypes).
   Every arm and seed trains side by side as one member of an ensemble, on the same batches.

Seeds change the student's labelled subset, its initial weights and its batches; the teacher
and the test split are drawn once from the base seed (one teacher per class count).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Bool, Choice, Float, Int, Seeds, Tuple, param
from ..core.threads import one_cpu_thread, worker_count
from ..core.validation import check_int
from .data import (
    ImageTask,
    load_cifar_task,
    load_digits_task,
    make_split,
    shifted_task,
    student_labels,
    super_labels,
)
from .losses import GRID, OFA_EPS, TAU, TEMPERATURE, RandomPrototypes
from .models import STUDENTS
from .probe import TARGETS, distillation_targets, probe_accuracy
from .training import ARMS, CONTROL, LR, WEIGHT, LossWeights, accuracy, teacher_targets, train_students, train_teachers

DATASETS: tuple[str, ...] = ("digits", "cifar10", "cifar100")
#: the probe's reference input: the teacher's feature map itself, the source of every RPKD target
TEACHER_FEATURES = "teacher_features"
#: a rival of the prototype distribution: the normalised pooled projection ``normalize(mean_l z_l)``, the input of
#: RPKD's global branch without the prototypes (log p_k = P_k·ẑ/τ − logsumexp_j P_j·ẑ/τ is affine in it, up to
#: one scalar shared by every k)
POOLED = "pooled_projection"
#: a rival of the activation maps: the control's target, the normalised projected map ``normalize(z_l)`` (L x d)
CONTROL_TARGET = "control_target"
#: what the probe reads: each distillation target, the same projection without prototypes (pooled, and the
#: control's map), and the teacher's feature map (the most any target can carry)
PROBED: tuple[str, ...] = (*TARGETS, POOLED, CONTROL_TARGET, TEACHER_FEATURES)
#: "few_label": the student sees ``n_labelled`` labels; "standard": every training label (CE on all of them)
PROTOCOLS: tuple[str, ...] = ("few_label", "standard")
#: "shared": the students' transfer set is the teacher's training set; "disjoint": the training split is cut in two
#: halves, the teacher trains on the first, the students' transfer set (their images and labels) is the second
TRANSFERS: tuple[str, ...] = ("shared", "disjoint")


@dataclass(frozen=True)
class RPKDConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    dataset: str = param("digits", Choice(DATASETS), "'digits' (scikit-learn, bundled) or CIFAR from --data-root")
    image_size: int = param(8, Int(4, 64), "image side (CIFAR is grey-scaled and resized to it; digits are 8)")
    shift: int = param(1, Int(0, 8), "each image moved once by a fixed random offset in [-shift, shift]^2 pixels "
                       "(zero fill; the same offsets in every run); 0: the images as they are")
    class_grid: tuple[int, ...] = param(
        (10, 5, 2), Tuple(Int(2, 10), distinct=True), "super-class counts C (labels: fine digit mod C)"
    )
    seeds: tuple[int, ...] = param((0, 1, 2, 3, 4), Seeds(), "student seeds (labelled subset, weights, batches)")
    student: str = param("mixer", Choice(STUDENTS), "student: 'mixer' (2x2-pixel tokens) or 'cnn' (narrow CNN)")
    arms: tuple[str, ...] = param(ARMS, Tuple(Choice(ARMS), distinct=True), "methods trained (and the control)")
    n_test: int = param(497, Int(10), "test images (the rest is the training / transfer split)")
    n_labelled: int = param(50, Int(2), "training images whose label the student sees (protocol 'few_label')")
    protocol: str = param("few_label", Choice(PROTOCOLS),
                          "'few_label' (n_labelled labels) or 'standard' (every training label; n_labelled unused)")
    teacher_width: int = param(8, Int(1, 512), "teacher channels (then twice as many)")
    teacher_norm: bool = param(True, Bool(), "a batch normalisation before the ReLU of the teacher's last convolution")
    transfer: str = param("shared", Choice(TRANSFERS),
                          "'shared': the students' transfer set is the teacher's training set; 'disjoint': the "
                          "training split is halved, the teacher trains on the first half, the students (images, "
                          "labels, targets) and the probe use the second")
    student_width: int = param(12, Int(2, 512), "student width (mixer d_model; CNN channels of the last map)")
    n_teacher_steps: int = param(1500, Int(1), "Adam steps of the teacher")
    n_student_steps: int = param(150, Int(1), "Adam steps of every student arm")
    standard_augment: int = param(0, Int(0, 8), "standard protocol: every student step sees fresh views, each image "
                                  "moved by a random offset in [-a, a]^2 pixels, the same view for every arm and the "
                                  "teacher (whose outputs are computed on it); 0: the transfer set as it is")
    standard_steps: int = param(0, Int(0, 10**7), "Adam steps of every student arm in the standard-protocol run the "
                                "page derives from this config (standard_protocol); 0: n_student_steps")
    standard_temperature: float = param(0.0, Float(0.0, 100.0), "T of Hinton KD in the standard-protocol run the "
                                        "page derives from this config (standard_protocol); 0: temperature")
    batch_size: int = param(64, Int(1), "transfer images per step (the labelled images are added to every batch)")
    lr: float = param(1e-2, LR, "Adam learning rate (teacher and students)")
    n_prototypes: int = param(64, Int(2, 65536), "K, the frozen random prototypes")
    d_prototype: int = param(32, Int(1, 4096), "d, the dimension of the prototype space")
    tau: float = param(0.2, TAU, "tau, temperature of the prototype scores")
    temperature: float = param(4.0, TEMPERATURE, "T, Hinton KD temperature")
    ofa_eps: float = param(1.5, OFA_EPS, "epsilon, OFA's target exponent")
    n_probe: int = param(800, Int(20), "transfer images the probe uses (half to fit, half to score)")
    grid: int = param(4, GRID, "side of the common grid of the feature branch")
    kd_weight: float = param(1.0, WEIGHT, "alpha, weight of the KD term")
    ofa_weight: float = param(1.0, WEIGHT, "weight of the OFA terms (final and intermediate exit)")
    glob_weight: float = param(1.0, WEIGHT, "beta, weight of RPKD's global (logit) branch")
    map_weight: float = param(1.0, WEIGHT, "gamma, weight of RPKD's feature (map) branch")
    feature_weight: float = param(1.0, WEIGHT, "weight of the control's feature-matching term")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(class_grid=(2,), seeds=(0, 1, 2), n_teacher_steps=100, n_student_steps=25, n_test=200,
                      batch_size=24, n_labelled=20, student_width=8, n_probe=300),
        "book": {},
        "paper": dict(
            device="auto", dataset="cifar100", protocol="standard", image_size=16, shift=0, n_test=2000,
            n_labelled=2000, teacher_width=64,
            student_width=64, n_teacher_steps=5000, n_student_steps=5000, batch_size=256, n_prototypes=1024,
            d_prototype=256, seeds=(0, 1, 2, 3, 4),
        ),
    }
    DATA_ROOT_SCALES: ClassVar[tuple[str, ...]] = ("paper",)
    DATA_DESCRIPTION: ClassVar[str] = "torchvision's cifar-100-python/ (or cifar-10-batches-py/) folder"

    def cross_checks(self) -> None:
        if self.dataset == "digits" and self.image_size != 8:
            raise ValueError(f"image_size must be 8 for dataset 'digits', got {self.image_size}")
        if self.image_size % 2:
            raise ValueError(f"image_size must be even, got {self.image_size}")

    def weights(self) -> LossWeights:
        return LossWeights(kd=self.kd_weight, ofa=self.ofa_weight, glob=self.glob_weight, map=self.map_weight,
                           feature=self.feature_weight)


class RPKDResults(Results[RPKDConfig]):
    """What :func:`run` returns: per class count, accuracy per arm and seed, and probe accuracy per target."""


def load_task(cfg: RPKDConfig) -> ImageTask:
    """The image task of the config: digits (bundled) or CIFAR (read from ``data_root``)."""
    if cfg.dataset == "digits":
        return shifted_task(load_digits_task(), cfg.shift)
    if not cfg.data_root:
        raise ValueError(f"data_root must name a folder with {RPKDConfig.DATA_DESCRIPTION} for dataset {cfg.dataset!r}")
    return shifted_task(load_cifar_task(cfg.data_root, cfg.dataset, size=cfg.image_size), cfg.shift)


#: the arms of the standard-protocol run (every label known): the methods, without the control, to fit the budget
STANDARD_ARMS: tuple[str, ...] = ("ce", "kd", "ofa", "rpkd")


def standard_protocol(cfg: RPKDConfig) -> RPKDConfig:
    """The usual distillation protocol (and the paper's, as far as its abstract says): the student sees the
    label of *every* training image, CE on all of them plus each distillation loss. Same data, teacher and
    seeds as ``cfg``; the arms are :data:`STANDARD_ARMS`; the students' steps ``standard_steps`` and KD's
    temperature ``standard_temperature`` (each if not 0)."""
    return dataclasses.replace(cfg, protocol="standard", n_labelled=transfer_size(cfg),
                               arms=tuple(a for a in STANDARD_ARMS if a in ARMS),
                               n_student_steps=cfg.standard_steps or cfg.n_student_steps,
                               temperature=cfg.standard_temperature or cfg.temperature)


def augment_of(cfg: RPKDConfig) -> int:
    """The largest offset of the students' fresh views: ``standard_augment`` under the standard protocol, else 0."""
    return cfg.standard_augment if cfg.protocol == "standard" else 0


def transfer_size(cfg: RPKDConfig) -> int:
    """The students' transfer set: the training split (every image but the test split), or its second half
    when ``transfer == "disjoint"``."""
    n_train = len(load_task(cfg).fine) - cfg.n_test
    return n_train - n_train // 2 if cfg.transfer == "disjoint" else n_train


def labelled_count(cfg: RPKDConfig, n_train: int) -> int:
    """How many training images' labels the student sees: all of them under the standard protocol."""
    return n_train if cfg.protocol == "standard" else cfg.n_labelled


def _stats(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {"per_seed": arr.tolist(), "mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0}


def _split(cfg: RPKDConfig, task: ImageTask, n_classes: int, device: torch.device) -> tuple:
    """The base seed's split: ``(n_labelled, x_transfer, fine_transfer, x_test, y_test, x_teacher, fine_teacher)``.
    The teacher's images (and so the teacher) do not depend on the protocol: ``n_labelled`` only cuts the first
    images of the transfer set, which is the teacher's training set (``transfer == "shared"``) or the second half
    of the training split, the teacher's being the first (``"disjoint"``)."""
    n_train = len(task.fine) - cfg.n_test
    base = make_split(len(task.fine), cfg.n_test, 1, cfg.seed)
    teach, trans = ((base.train[: n_train // 2], base.train[n_train // 2:]) if cfg.transfer == "disjoint"
                    else (base.train, base.train))
    n_labelled = labelled_count(cfg, len(trans))
    x_test, y_test = task.images[base.test].to(device), super_labels(task.fine[base.test], n_classes).to(device)
    return (n_labelled, task.images[trans].to(device), task.fine[trans], x_test, y_test,
            task.images[teach].to(device), task.fine[teach])


def teacher_part(cfg: RPKDConfig, n_classes: int, progress: bool = False,
                 checkpoint: Checkpointer | None = None, probe: bool = True) -> dict[str, Any]:
    """Steps 1 and 2 at ``C = n_classes``: the teacher, its targets and the probe. Nothing here depends on
    the protocol or the arms, so both protocols' students share it (:func:`run_protocols`). The teacher's
    training loop saves its state in ``checkpoint`` (entry ``C=<n>/teacher``). ``probe=False`` leaves the
    probe out and returns what it reads instead (``"probe_inputs"``, for :func:`probe_part`)."""
    device = resolve_device(cfg.device)
    _, x_train, fine_train, x_test, y_test, x_teach, fine_teach = _split(cfg, load_task(cfg), n_classes, device)

    # 1. the teacher: the C-class labels of every image of its training set
    y_teach = super_labels(fine_teach, n_classes)[None].to(device)
    teacher = train_teachers(
        x_teach[None], y_teach, n_classes, width=cfg.teacher_width,
        n_steps=cfg.n_teacher_steps, batch_size=cfg.batch_size, lr=cfg.lr, seed=cfg.seed + 31 * n_classes,
        device=device, progress=progress, checkpoint=checkpoint, name=f"C={n_classes}/teacher", norm=cfg.teacher_norm,
    )
    teacher_acc = float(accuracy(teacher, x_test[None], y_test[None])[0])
    y_train = super_labels(fine_train, n_classes)[None].to(device)
    # on the transfer set (the teacher's own training set when transfer == "shared")
    train_acc = float(accuracy(teacher, x_train[None], y_train)[0])
    t_logits, t_tokens = teacher_targets(teacher, x_train[None], cfg.grid)
    # how close the KD target (softmax at T) on the transfer set is to a one-hot label: its mean largest probability
    soft_max = float(torch.softmax(t_logits[0].detach() / cfg.temperature, dim=-1).max(dim=-1).values.mean())
    with torch.no_grad():  # a last-layer channel (after its ReLU) that is 0 everywhere on its training set is dead
        dead = int((teacher(x_teach[None])[1][0] <= 0).all(dim=0).flatten(start_dim=1).all(dim=1).sum())
    prototypes = RandomPrototypes(cfg.n_prototypes, cfg.d_prototype, t_tokens.shape[-1], cfg.seed + 7).to(device)

    # 2. the probe: fine-label information in each target (fine labels reach the probe only)
    z_teacher = prototypes.project_teacher(t_tokens[0])
    targets = distillation_targets(t_logits[0], z_teacher, prototypes.prototypes,
                                   temperature=cfg.temperature, tau=cfg.tau)
    # the same projection without prototypes: the global branch's pooled input, and the control's target
    with torch.no_grad():
        targets[POOLED] = torch.nn.functional.normalize(z_teacher.mean(dim=1), dim=-1).cpu().numpy()
        targets[CONTROL_TARGET] = torch.nn.functional.normalize(z_teacher, dim=-1).flatten(start_dim=1).cpu().numpy()
    # the teacher's own feature map (flattened): what any target computed from it could carry at most
    targets[TEACHER_FEATURES] = t_tokens[0].flatten(start_dim=1).cpu().numpy()
    inputs = {"targets": targets, "fine": fine_train.numpy()}
    return {"teacher_accuracy": teacher_acc, **(probe_part(cfg, inputs) if probe else {}),
            "dead_channels": dead, "teacher_channels": int(t_tokens.shape[-1]),
            "teacher_train_accuracy": train_acc, "teacher_soft_max": soft_max,
            "t_logits": t_logits.cpu(), "t_tokens": t_tokens.cpu(), "prototypes": prototypes.cpu(),
            "teacher": teacher.cpu(), **({} if probe else {"probe_inputs": inputs})}


def probe_part(cfg: RPKDConfig, inputs: dict[str, Any]) -> dict[str, Any]:
    """Step 2's probes on the targets of :func:`teacher_part` (its ``"probe_inputs"``): ``probe`` (the mean
    accuracy per target) and ``probe_per_seed``."""
    # one probe split per student seed: the interval over seeds reads the probe's split-to-split spread
    probe_seeds = {name: [probe_accuracy(inputs["targets"][name], inputs["fine"], cfg.seed * 1000 + 17 + s,
                                         cfg.n_probe) for s in cfg.seeds] for name in PROBED}
    return {"probe": {name: float(np.mean(values)) for name, values in probe_seeds.items()},
            "probe_per_seed": probe_seeds}


def student_part(cfg: RPKDConfig, n_classes: int, shared: dict[str, Any], progress: bool = False,
                 checkpoint: Checkpointer | None = None) -> tuple[dict, dict]:
    """Step 3 at ``C = n_classes``, every arm of ``cfg`` on the teacher of ``shared`` (:func:`teacher_part`
    of a config with the same data, seeds and teacher): ``(summary, curves)``. The students' training loop
    saves its state in ``checkpoint`` (entry ``C=<n>/students``)."""
    accuracy_stats, curves = students(cfg, n_classes, shared, progress, checkpoint)
    return _part_summary(n_classes, shared, accuracy_stats), curves


def _part_summary(n_classes: int, shared: dict[str, Any], accuracy_stats: dict[str, Any]) -> dict[str, Any]:
    """A class count's summary: the teacher's and probe's numbers of ``shared``, and the students' accuracy."""
    return {
        "n_classes": n_classes,
        "teacher_accuracy": shared["teacher_accuracy"],
        "probe": shared["probe"],
        "probe_per_seed": shared["probe_per_seed"],
        "dead_channels": shared["dead_channels"],
        "teacher_channels": shared["teacher_channels"],
        "teacher_train_accuracy": shared["teacher_train_accuracy"],
        "teacher_soft_max": shared["teacher_soft_max"],
        "accuracy": accuracy_stats,
    }


def students(cfg: RPKDConfig, n_classes: int, shared: dict[str, Any], progress: bool = False,
             checkpoint: Checkpointer | None = None) -> tuple[dict, dict]:
    """The training of :func:`student_part` (the teacher's targets of ``shared`` suffice, no probe):
    ``(accuracy per arm, curves)``."""
    device = resolve_device(cfg.device)
    n_labelled, x_train, fine_train, x_test, y_test, _, _ = _split(cfg, load_task(cfg), n_classes, device)
    t_logits, t_tokens = shared["t_logits"].to(device), shared["t_tokens"].to(device)
    prototypes = shared["prototypes"].to(device)
    n_seeds = len(cfg.seeds)

    # 3. the students: seed s sees its own labelled subset (a seeded reordering of the training split)
    orders = [torch.randperm(len(fine_train), generator=torch.Generator().manual_seed(cfg.seed * 1000 + s))
              for s in cfg.seeds]
    order = torch.stack(orders).to(device)
    images = x_train[order]
    labels = torch.stack([student_labels(fine_train[o], n_labelled, n_classes) for o in orders]).to(device)
    model, curve = train_students(
        cfg.student, cfg.arms, images, labels, t_logits[0][order], t_tokens[0][order], prototypes, cfg.weights(),
        width=cfg.student_width, grid=cfg.grid, n_steps=cfg.n_student_steps, batch_size=cfg.batch_size, lr=cfg.lr,
        temperature=cfg.temperature, tau=cfg.tau, ofa_eps=cfg.ofa_eps, seed=cfg.seed + n_classes, device=device,
        progress=progress, checkpoint=checkpoint, name=f"C={n_classes}/students", augment=augment_of(cfg),
        teacher=shared["teacher"].to(device) if augment_of(cfg) else None,
    )
    acc = accuracy(model, x_test[None].expand(n_seeds, *x_test.shape), y_test[None].expand(n_seeds, -1),
                   len(cfg.arms)).reshape(len(cfg.arms), n_seeds)
    return {arm: _stats(acc[a].tolist()) for a, arm in enumerate(cfg.arms)}, {"loss": np.asarray(curve)}


def class_count_part(cfg: RPKDConfig, n_classes: int, progress: bool = False,
                     checkpoint: Checkpointer | None = None) -> tuple[dict, dict]:
    """Teacher, probe and every student arm at ``C = n_classes``: ``(summary, curves)``. Both training loops
    save their state in ``checkpoint``, so a killed run resumes inside them (``run`` passes its own)."""
    return student_part(cfg, n_classes, teacher_part(cfg, n_classes, progress, checkpoint), progress, checkpoint)


@checked()
def run(config: RPKDConfig | None = None, *, checkpoint: Checkpointer | None = None,
        progress: bool = False) -> RPKDResults:
    """Every class count of ``class_grid``, each a checkpointed part named ``C=<n>``."""
    cfg, checkpoint = start_run(RPKDConfig, config, checkpoint)
    parts = {f"C={c}": (lambda c=c: class_count_part(cfg, c, progress, checkpoint)) for c in cfg.class_grid}
    with one_cpu_thread(resolve_device(cfg.device)):  # tiny networks: a second thread only waits (core.threads)
        summary, curves = run_parts_timed(checkpoint, parts, progress)
    return _results(cfg, summary, curves)


def _results(cfg: RPKDConfig, summary: dict[str, Any], curves: dict[str, Any]) -> RPKDResults:
    """The run's results from its parts' summaries and curves (keyed ``C=<n>``)."""
    summary["class_grid"] = list(cfg.class_grid)
    summary["arms"] = list(cfg.arms)
    summary["control"] = CONTROL
    summary["protocol"] = cfg.protocol
    summary["n_labelled"] = labelled_count(cfg, transfer_size(cfg))
    summary["transfer"] = cfg.transfer
    summary["n_transfer"] = transfer_size(cfg)
    n_train = len(load_task(cfg).fine) - cfg.n_test
    summary["n_teacher"] = n_train - summary["n_transfer"] if cfg.transfer == "disjoint" else n_train
    return RPKDResults(cfg, summary, curves)


def run_protocols(config: RPKDConfig | None = None, *, workers: int = 0) -> tuple[RPKDResults, RPKDResults]:
    """The page's two runs: ``run(config)`` (its protocol) and ``run(standard_protocol(config))``.

    The two protocols share the data, the seeds and so the teacher: each class count's teacher
    (:func:`teacher_part`) is trained once, its probe (:func:`probe_part`) run once, and both protocols'
    students (:func:`students`) reuse them. Every job runs on one CPU thread (as in :func:`run`) and the jobs
    go to ``workers`` processes side by side (this one and ``workers - 1`` of joblib's; 0: one per CPU; 1: one
    after the other in this process): a job starts as soon as its teacher is trained and a process is free, the
    teachers first, then the longest jobs, so that no process waits for another's phase to end. The numbers do
    not depend on ``workers`` and equal :func:`run`'s: each job runs the same code on the same seeds (tested). No
    checkpoint: for a resumable run, call :func:`run` (the CLI does).
    """
    workers = check_int("workers", workers, 0)  # 0: one process per CPU
    cfg = (config or RPKDConfig.preset("book")).validated()
    configs = (cfg, standard_protocol(cfg))
    grid = cfg.class_grid

    def taught(n: int) -> dict[str, Any]:  # what a student job needs of its teacher (no probe inputs)
        return {k: v for k, v in done["teacher", n][0].items() if k != "probe_inputs"}

    # name: (function, the names it needs, its arguments); in the order of preference (the few-label students,
    # the longest jobs, before the standard protocol's; the probes, the shortest, last)
    jobs: dict[tuple, tuple] = {("teacher", n): (teacher_part, (), lambda n=n: (cfg, n, False, None, False))
                                for n in grid}
    jobs |= {("students", i, n): (students, (("teacher", n),), lambda c=c, n=n: (c, n, taught(n)))
             for i, c in enumerate(configs) for n in grid}
    jobs |= {("probe", n): (probe_part, (("teacher", n),), lambda n=n: (cfg, done["teacher", n][0]["probe_inputs"]))
             for n in grid}
    done: dict[tuple, tuple[Any, float]] = {}
    _run_jobs(jobs, done, worker_count(workers, len(jobs)))
    results = []
    for i, c in enumerate(configs):
        summary: dict[str, Any] = {}
        for n in grid:
            shared = done["teacher", n][0] | done["probe", n][0]
            summary[f"C={n}"] = _part_summary(n, shared, done["students", i, n][0][0])
        # a part's time: its students plus the shared teacher's and probe's (counted in both protocols)
        summary["timings"] = {f"C={n}_s": sum(done[key][1] for key in (("students", i, n), ("teacher", n),
                                                                      ("probe", n))) for n in grid}
        results.append(_results(c, summary, {f"C={n}": done["students", i, n][0][1] for n in grid}))
    return results[0], results[1]


def _run_jobs(jobs: dict[tuple, tuple], done: dict[tuple, tuple[Any, float]], workers: int) -> None:
    """Run every job ``name: (fn, needs, args)`` once the jobs it ``needs`` are in ``done``, each as
    ``_timed(fn)(*args())``, its output stored in ``done[name]``: in ``workers`` processes side by side (1: here,
    one after the other), each free process taking the first ready job in the order of ``jobs``. This process is
    one of them (its jobs run on a thread while it hands out the others): it has everything imported already,
    so only ``workers - 1`` processes start (joblib's), each importing torch and the chapter first."""
    pending = dict(jobs)

    def ready() -> list[tuple]:
        return [name for name, (_, needs, _) in pending.items() if all(d in done for d in needs)]

    if workers <= 1:
        while pending:
            name = ready()[0]
            fn, _, args = pending.pop(name)
            done[name] = _timed(fn)(*args())
        return
    from joblib.executor import get_memmapping_executor

    # joblib's reusable workers, through joblib's own entry point: loky's get_reusable_executor would replace the
    # executor joblib.Parallel shares without the state joblib keeps on it (tomato_mp's Parallel then fails);
    # max_nbytes=None: arguments are pickled whole, no memory-mapped temporary files to leave behind
    pool = get_memmapping_executor(workers - 1, max_nbytes=None)
    running: dict[Future, tuple[tuple, bool]] = {}
    while pending or running:
        free_here = not any(local for _, local in running.values())
        free = [True] * free_here + [False] * (workers - 1 - sum(not local for _, local in running.values()))
        for name, local in zip(ready(), free, strict=False):  # this process first: it starts at once
            fn, _, args = pending.pop(name)
            running[(_start_here if local else pool.submit)(_timed(fn), *args())] = (name, local)
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in finished:
            done[running.pop(future)[0]] = future.result()


def _start_here(fn: Callable[..., Any], *args: Any) -> Future:
    """``fn(*args)`` on a daemon thread of this process, as a future: a worker's error or an interrupt reaches the
    caller at once instead of waiting for the job running here (which finishes in the background), and the
    interpreter does not wait for it at exit."""
    future: Future = Future()

    def target() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn(*args))
            except BaseException as exc:
                future.set_exception(exc)

    threading.Thread(target=target, name="rpkd-job", daemon=True).start()
    return future


class _timed:
    """``fn`` on one CPU thread, returning ``(fn's output, seconds)`` (a class: workers receive it pickled)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, cfg: RPKDConfig, *args: Any) -> tuple[Any, float]:
        start = time.perf_counter()
        with one_cpu_thread(resolve_device(cfg.device)):
            out = self.fn(cfg, *args)
        return out, time.perf_counter() - start
