"""The chapter's reduced-scale reproduction, one code path for every scale.

For every seed in ``seeds`` and every method (fine-tuning, EWC, generative replay, Reptile with
replay, the trust-region method, and the control: the trust region with a masked isotropic
metric, the Fisher's mean entry where the Fisher is > 0 and 0 elsewhere, the same trace and zero
set), one task-conditioned diffusion model learns ``tasks`` in order. All methods and seeds train
side by side as members of one ensemble (:mod:`.diffusion`); members with the same seed start
from the same weights, see the same batches of the current task and share every other
random draw (common random numbers).

Parts:

1. ``sequence``: the continual run; after each task, samples of every task seen so far, their
   sliced Wasserstein distance to fresh real samples, and every task's denoising loss on a fixed
   evaluation batch.
2. ``reconvergence``: from the final weights, perturbed by ``reconverge_perturb`` relative noise,
   plain fine-tuning on real data of each earlier task for ``reconverge_max_steps`` steps, against a common
   target: the lowest loss any method of that seed had right after the task was learned (so a method that learned
   less gets no lower bar). Per member: the area under the re-learning curve above the target (the mean relative
   excess loss over the window, the row's measure: benchmarks/trust_region_cl_relearn_rule.md) and the steps until
   the loss is back within ``reconverge_tol`` of the target.
3. ``maml``: the MAML reading, at the last task switch: the trust-region update from the anchor
   at growing strengths, against the one-step inner update (cosines).

With ``processes`` of 2 or more (0: every CPU available) on the CPU, parts 1 and 2 train the members in two groups
of methods (:data:`GROUPS`), the second in a spawned worker process while this one trains the first. Every draw is
made per seed, not per member, and the split is used only where it gives the single ensemble's numbers to the bit
(:func:`split_is_exact`: the book's eight seeds, the control trained; a test compares the two ways); at other seed
counts the groups would differ in the last digits, so the run stays in one process.
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, ClassVar

import numpy as np
import torch

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Choice, Float, Int, Positive, Probability, Seeds, Tuple, param
from ..core.threads import one_cpu_thread, worker_count
from .continual import (
    CONTROL,
    METHODS,
    Member,
    Radius,
    SequenceRecord,
    Strengths,
    crossing_steps,
    eval_batch,
    maml_reading,
    relearning_area,
    relearning_curve,
    train_sequence,
    trained_step_cosines,
)
from .diffusion import Net, init_params, make_schedule
from .metrics import random_directions, sliced_wasserstein_to, sorted_reference
from .tasks import TASKS, TOY_TASKS, check_tasks, sample_task, task_dim

TRAINED: tuple[str, ...] = tuple(METHODS)


@dataclass(frozen=True)
class TrustRegionCLConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    tasks: tuple[str, ...] = param(
        TOY_TASKS,
        Tuple(Choice(TASKS), distinct=True),
        "the task sequence, in order: 2-D tasks ('gaussians', 'moons', 'circles', 'spiral', 'checkerboard') "
        "or digit classes ('digit0' ... 'digit9'), not mixed",
    )
    seeds: tuple[int, ...] = param(
        (0, 1, 2, 3, 4, 5, 6, 7), Seeds(), "seeds (initial weights, data) the verdicts are taken over"
    )
    width: int = param(
        32,
        Int(4, 4096),
        "hidden units per layer of the noise predictor (32, less capacity so that a new task overwrites more, with "
        "reference_factor 8: the highest chance of the forgetting gate passing of three candidates on tuning base "
        "seeds 100-104, benchmarks/trust_region_cl_forgetting_rule2.md; lambda and TR-CL's radius re-tuned at this "
        "width: benchmarks/trust_region_cl_width32_rule.md)",
    )
    depth: int = param(3, Int(1, 16), "hidden layers of the noise predictor")
    n_diffusion_steps: int = param(40, Int(2, 1000), "DDPM steps T of the linear noise schedule")
    n_steps_per_task: int = param(400, Int(1), "Adam steps on each task")
    batch_size: int = param(128, Int(1), "real samples of the current task per step (and replayed samples)")
    lr: float = param(
        1e-2, Float(0.0, 1.0, low_inclusive=False), "Adam learning rate (every method, and re-convergence fine-tuning)"
    )
    replay_weight: float = param(1.0, Float(0.0, 100.0), "weight beta of the replay loss, eq. (trcl-objective)")
    trust_radius: float = param(
        0.003,
        Radius(optional=False),
        "radius r of TR-CL's trust region in the Fisher metric, eq. (trcl-constraint) (re-tuned at width 32 on tuning "
        "base seeds 125-129 over 0.0003-0.1, the binding radius with the lowest mean final SWD: "
        "benchmarks/trust_region_cl_width32_rule.md; was 0.01, tuned at width 64: data/trust_region_cl_tuning.json)",
    )
    iso_radius: float = param(
        0.001,
        Radius(optional=False),
        "radius of the control's trust region in the masked isotropic metric (the mean Fisher entry where the Fisher "
        "is > 0, 0 elsewhere), tuned like TR-CL's: on TR-CL's grid 0.0003-0.1, tuning base seeds 130-134, the radius "
        "with the lowest mean final SWD among those where the control binds (distance / radius at a task's end >= "
        "0.9), ties to the looser (benchmarks/trust_region_cl_masked_rule.md; was 0.1 for the unmasked metric, "
        "control rule 2); inf (no constraint) makes the control generative replay itself, its runs are replay's, and "
        "its gate then fails",
    )
    dual_lr: float = param(
        0.1, Float(0.0, 1.0, low_inclusive=False), "relative step eta of the multiplier's dual ascent, eq. (trcl-dual)"
    )
    ewc_lambda: float = param(
        10000.0,
        Float(0.0, 1e9),
        "strength lambda of EWC's Fisher penalty (re-tuned at width 32 on tuning base seeds 125-129 over 300-100000, "
        "the lowest mean final SWD, inside the grid: benchmarks/trust_region_cl_width32_rule.md; was 3000, the edge "
        "of the width-64 grid 100-3000: data/trust_region_cl_lambda_tuning.json)",
    )
    penalty_lambda: float = param(
        10000.0, Float(0.0, 1e9), "strength lambda of the penalty form (EWC's penalty + replay), tuned like ewc_lambda"
    )
    reptile_every: int = param(10, Int(1), "Reptile + replay: inner Adam steps between two interpolations")
    reptile_step: float = param(
        0.5, Probability(open_low=True), "Reptile + replay: fraction of the inner displacement kept"
    )
    fisher_decay: float = param(1.0, Probability(), "online Fisher: F <- decay * F + F(new task)")
    n_fisher: int = param(128, Int(1), "real samples per task for the diagonal Fisher")
    n_samples: int = param(
        384,
        Int(2),
        "generated samples per task and member (evaluation), and real reference samples per task (chosen over 256, "
        "384, 512, 768 on tuning base seeds 100-104 for a less noisy forgetting measure within the page's time: "
        "benchmarks/trust_region_cl_forgetting_rule.md, benchmarks/trust_region_cl_forgetting.json)",
    )
    reference_factor: int = param(
        8,
        Int(1, 64),
        "real reference samples per task and seed for the sliced Wasserstein distance, as a multiple of n_samples "
        "(real samples cost nothing to draw; a larger reference lowers the measure's floor and noise; the distance "
        "between n_samples generated and this many real points is the exact one between the two empirical measures; "
        "8 with width 32: benchmarks/trust_region_cl_forgetting_rule2.md)",
    )
    n_replay: int = param(
        48,
        Int(1),
        "of those, the replay buffer's samples per earlier task (imperfect replay; the largest of 64, 48, 32, 16 at "
        "which the forgetting gate passed on both tuning base seeds, 100 and 101)",
    )
    n_projections: int = param(64, Int(1), "random directions of the sliced Wasserstein distance")
    n_eval: int = param(256, Int(1), "real samples per task in the fixed evaluation batch (losses)")
    reconverge_tol: float = param(
        0.02, Float(0.0, 1.0, low_inclusive=False), "re-convergence: relative tolerance on the task's evaluation loss"
    )
    reconverge_max_steps: int = param(100, Int(1), "re-convergence: at most this many fine-tuning steps")
    reconverge_perturb: float = param(
        0.2,
        Float(0.0, 10.0),
        "re-convergence: before fine-tuning, every weight tensor gets Gaussian noise of this size relative to its "
        "RMS (the same draw for every method of a seed), so that coming back is measured, not retention",
    )
    reconverge_eval_every: int = param(2, Int(1), "re-convergence: fine-tuning steps between two loss checks")
    reconverge_repeats: int = param(
        1,
        Int(1, 64),
        "re-convergence: independent repeats of the measurement (a new perturbation and new batches each, the same "
        "trained weights); a member's steps are the mean over repeats and tasks; repeat 0 is the single draw of "
        "earlier rounds (benchmarks/trust_region_cl_reconv_rule.md)",
    )
    maml_lambda_grid: tuple[float, ...] = param(
        (10.0, 100.0, 1000.0, 10000.0),
        Tuple(Positive(), increasing=True),
        "MAML reading: trust-region strengths lambda, from loose to tight",
    )
    maml_steps: int = param(100, Int(1), "MAML reading: preconditioned gradient steps on the trust-region objective")
    maml_lr: float = param(
        0.05, Float(0.0, 1.0, low_inclusive=False), "MAML reading: step size 1/c of the preconditioner lambda D + c"
    )
    fisher_damping: float = param(
        0.1, Float(0.0, 100.0, low_inclusive=False), "MAML reading: D = F + damping * mean(F) (keeps D invertible)"
    )
    n_maml: int = param(256, Int(1), "MAML reading: samples in the fixed new-task and replay batches")
    processes: int = param(
        0,
        Int(0, 64),
        "processes (0: every CPU available; at most two are used, one per method group of GROUPS): with 2 the "
        "continual sequence and the re-learning curves of the second group run in a spawned worker while this "
        "process runs the first (CPU only, and only where the numbers are the same to the bit: seeds a multiple of "
        "eight, control trained; otherwise one process)",
    )

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            tasks=("gaussians", "moons", "circles"),
            seeds=(0, 1, 2),
            width=32,
            depth=2,
            n_diffusion_steps=20,
            n_steps_per_task=60,
            batch_size=64,
            n_fisher=32,
            n_samples=64,
            n_replay=32,
            n_projections=16,
            n_eval=64,
            reconverge_max_steps=20,
            maml_lambda_grid=(10.0, 10000.0),
            maml_steps=20,
            n_maml=64,
            processes=1,
        ),
        "book": {},
        "paper": dict(
            device="auto",
            tasks=tuple(f"digit{k}" for k in range(10)),
            seeds=(0, 1, 2, 3, 4),
            width=512,
            depth=4,
            n_diffusion_steps=200,
            n_steps_per_task=5000,
            batch_size=256,
            lr=1e-3,
            n_fisher=1024,
            n_samples=1024,
            reference_factor=1,
            n_replay=1024,
            n_projections=256,
            n_eval=1024,
            reconverge_max_steps=2000,
            reconverge_eval_every=10,
            maml_steps=500,
            n_maml=1024,
        ),
    }
    def cross_checks(self) -> None:
        check_tasks(self.tasks)
        if len(self.tasks) < 2:
            raise ValueError(f"tasks must hold at least two tasks for continual learning, got {self.tasks!r}")
        if self.reconverge_eval_every > self.reconverge_max_steps:
            raise ValueError(f"reconverge_eval_every must be <= reconverge_max_steps = {self.reconverge_max_steps} "
                             f"(the re-learning curve needs a check after step 0), got {self.reconverge_eval_every}")
        if self.n_replay > self.n_samples:
            raise ValueError(f"n_replay must be <= n_samples = {self.n_samples} (the buffer is taken from the "
                             f"samples), got {self.n_replay}")  # fmt: skip


class TrustRegionCLResults(Results[TrustRegionCLConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the arrays the figures draw."""


def _stats(per_seed: list[float] | np.ndarray) -> dict[str, Any]:
    arr = np.asarray(per_seed, dtype=float)
    return {"per_seed": arr.tolist(), "mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0}


#: the method groups of a pooled run (``processes`` >= 2), one per process: TR-CL and its control together (the
#: projection's Newton iterations run over their rows at once), the two methods without replay beside them, four
#: methods each, so that at the book's eight seeds each group's tensors are whole multiples of the vector width and a
#: member's numbers are those of the single ensemble to the bit
GROUPS: tuple[tuple[str, ...], ...] = (
    ("finetune", "ewc", "trcl", "trcl_iso"),
    ("replay", "reptile", "trcl_penalty", "freeze"),
)


def split_is_exact(cfg: TrustRegionCLConfig) -> bool:
    """Whether the two method groups give the single ensemble's numbers to the bit: the control is trained (each
    group holds four methods) and the seed count is a multiple of eight (each group's tensors are then whole
    multiples of the vector width). Elsewhere they differ in the last digits, so :func:`run` trains in one process:
    a chapter's numbers never depend on how many CPUs the machine has."""
    return len(cfg.seeds) % 8 == 0 and not math.isinf(cfg.iso_radius)


def _merge(parts: list[torch.Tensor], groups: list[list[int]], dim: int = 0) -> torch.Tensor:
    """The groups' tensors (members along ``dim``, in the order of ``groups``) as one, in the members' order."""
    if len(parts) == 1:
        return parts[0]
    order = torch.tensor([i for idx in groups for i in idx])
    return torch.cat(parts, dim).index_select(dim, torch.argsort(order).to(parts[0].device))


def _merge_records(records: list[SequenceRecord], groups: list[list[int]]) -> SequenceRecord:
    """One :class:`SequenceRecord` of every member from the groups' records (the same numbers, members in order)."""
    if len(records) == 1:
        return records[0]
    cat = lambda get, dim=0: _merge([get(r) for r in records], groups, dim)  # noqa: E731
    tensors = lambda get: {n: cat(lambda r, n=n: get(r)[n]) for n in get(records[0])}  # noqa: E731
    first = records[0]
    switch = {}
    if first.switch:
        switch = {"anchor": tensors(lambda r: r.switch["anchor"]), "fisher": tensors(lambda r: r.switch["fisher"]),
                  "buffer_x": cat(lambda r: r.switch["buffer_x"]), "buffer_c": cat(lambda r: r.switch["buffer_c"])}
    return SequenceRecord(
        [cat(lambda r, k=k: r.samples[k]) for k in range(len(first.samples))],
        [cat(lambda r, k=k: r.eval_losses[k]) for k in range(len(first.eval_losses))],
        tensors(lambda r: r.params), switch, cat(lambda r: r.train_losses, 2), cat(lambda r: r.multipliers, 1),
        cat(lambda r: r.distances, 1), cat(lambda r: r.radii), cat(lambda r: r.multiplier_max, 1),
        cat(lambda r: r.cap_hits, 1),
    )  # fmt: skip


def _train_group(setup: _Setup | TrustRegionCLConfig, idx: list[int], progress: bool = False,
                 checkpoint: Checkpointer | None = None) -> SequenceRecord:  # fmt: skip
    """The continual sequence of the members ``idx`` of a setup (a config: in a worker process, which makes its own
    setup without the references), on one CPU thread."""
    if not isinstance(setup, _Setup):
        setup = _Setup(setup, swd=False)
    cfg = setup.cfg
    with one_cpu_thread(setup.device):
        members = [setup.members[i] for i in idx]
        params = init_params(setup.net, [setup.member_seeds[mem.seed_index] for mem in members], setup.device)
        return train_sequence(
            params,
            setup.net,
            setup.schedule,
            cfg.tasks,
            members,
            setup.strengths(),
            n_seeds=setup.n_seeds,
            n_steps_per_task=cfg.n_steps_per_task,
            batch_size=cfg.batch_size,
            lr=cfg.lr,
            n_fisher=cfg.n_fisher,
            n_samples=cfg.n_samples,
            eval_set=setup.eval_set,
            seed=cfg.seed,
            n_replay=cfg.n_replay,
            progress=progress,
            checkpoint=checkpoint,
            checkpoint_name="sequence/train",  # the state at each task switch (dropped once the part is done)
        )


def _relearning_group(setup: _Setup | TrustRegionCLConfig, idx: list[int], start: dict, tasks: list[int],
                      seed: int) -> list[torch.Tensor]:  # fmt: skip
    """The re-learning curves (:func:`relearning_curve`) of the earlier tasks ``tasks`` for the members ``idx``, from
    their perturbed weights ``start`` (those members' rows only); a config: in a worker process, as
    :func:`_train_group`."""
    if not isinstance(setup, _Setup):
        setup = _Setup(setup, swd=False)
    cfg = setup.cfg
    seed_of = setup.seed_of[torch.tensor(idx, device=setup.device)]
    with one_cpu_thread(setup.device):
        return [
            relearning_curve(
                start,
                setup.net,
                setup.schedule,
                j,
                cfg.tasks[j],
                setup.eval_set,
                seed_of,
                n_seeds=setup.n_seeds,
                n_steps=cfg.reconverge_max_steps,
                eval_every=cfg.reconverge_eval_every,
                batch_size=cfg.batch_size,
                lr=cfg.lr,
                seed=seed,
            )
            for j in tasks
        ]


class _Setup:
    """Everything the parts share: the net, schedule, members, evaluation batches and real references."""

    def __init__(self, cfg: TrustRegionCLConfig, swd: bool = True, pool: ProcessPoolExecutor | None = None):
        """``swd=False``: without the real references of the sliced Wasserstein distance (a worker that only
        trains); ``pool``: the worker process that trains the second method group (:data:`GROUPS`), if any."""
        self.cfg, self.pool = cfg, pool
        self.early: Future | None = None  # the second group's sequence, submitted before this setup was made
        self.device = resolve_device(cfg.device)
        self.n_seeds = len(cfg.seeds)
        # an isotropic trust region of infinite radius never binds: it IS generative replay, so the control then
        # trains no members of its own and reads replay's runs (the same numbers, not a second noisy copy)
        self.control_is_replay = math.isinf(cfg.iso_radius)
        self.trained = tuple(m for m in TRAINED if not (m == CONTROL and self.control_is_replay))
        self.members = [Member(m, s) for m in self.trained for s in range(self.n_seeds)]
        self.seed_of = torch.tensor([mem.seed_index for mem in self.members], device=self.device)
        self.net = Net(task_dim(cfg.tasks[0]), len(cfg.tasks), cfg.width, cfg.depth)
        self.schedule = make_schedule(cfg.n_diffusion_steps, device=self.device)
        self.member_seeds = [1_000_003 * cfg.seed + 7_919 * s + 1 for s in cfg.seeds]
        self.eval_set = eval_batch(
            cfg.tasks, self.n_seeds, cfg.n_eval, cfg.n_diffusion_steps, cfg.seed + 12_345, self.device
        )
        if not swd:
            return
        g = torch.Generator().manual_seed(cfg.seed + 54_321)
        self.directions = random_directions(cfg.n_projections, self.net.d_data, g).to(self.device)
        draw = lambda n: torch.stack(  # noqa: E731 - (S, K, n, d) fresh real samples
            [torch.stack([sample_task(t, n, g) for t in cfg.tasks]) for _ in cfg.seeds]
        ).to(self.device)
        self.reference = draw(cfg.reference_factor * cfg.n_samples)
        # the reference's sorted projections, once per seed: (S, K, n, P) block means and (S, K, P) spread
        self.ref_means, self.ref_spread = sorted_reference(self.reference, self.directions, cfg.n_samples)
        self.floor = self.swd(draw(cfg.n_samples), slice(None))  # (S, K): n_samples real points vs the reference

    def swd(self, x: torch.Tensor, rows: slice | torch.Tensor) -> torch.Tensor:
        """Sliced Wasserstein distance of point sets ``x`` ``(R, k, n_samples, d)`` to the reference of the first
        ``k`` tasks of the seeds ``rows`` (one per row of ``x``)."""
        k = x.shape[1]
        return sliced_wasserstein_to(x, self.ref_means[rows, :k], self.ref_spread[rows, :k], self.directions)

    def method_slice(self, method: str) -> slice:
        """The members of ``method``, one per seed (the control's are replay's when its radius is infinite)."""
        if method == CONTROL and self.control_is_replay:
            method = "replay"
        i = self.trained.index(method)
        return slice(i * self.n_seeds, (i + 1) * self.n_seeds)

    def groups(self) -> list[list[int]]:
        """The members (indices into ``members``) of each method group of :data:`GROUPS` that trains any: one group
        when there is no pool (every member, in order)."""
        if self.pool is None:
            return [list(range(len(self.members)))]
        out = [[i for i, mem in enumerate(self.members) if mem.method in group] for group in GROUPS]
        return [idx for idx in out if idx]

    def strengths(self) -> Strengths:
        c = self.cfg
        return Strengths(c.replay_weight, c.trust_radius, c.iso_radius, c.ewc_lambda, c.reptile_every, c.reptile_step,
                         c.fisher_decay, c.dual_lr, c.penalty_lambda)  # fmt: skip


def _sequence_part(setup: _Setup, checkpoint: Checkpointer, progress: bool) -> tuple[dict, dict]:
    cfg, n_tasks = setup.cfg, len(setup.cfg.tasks)
    groups = setup.groups()
    if len(groups) == 1:  # in this process, resumable at every task switch
        record = _train_group(setup, groups[0], progress, checkpoint)
    else:  # the second group in the worker (submitted early by run), the first here; no resume inside the part
        later = setup.early or setup.pool.submit(_train_group, cfg, groups[1])
        setup.early = None
        record = _merge_records([_train_group(setup, groups[0], progress), later.result()], groups)
    checkpoint.save("trained/record", _record_state(record))
    # swd[k][m, j]: after task k, task j <= k
    swd = [setup.swd(record.samples[k], setup.seed_of) for k in range(n_tasks)]
    final = swd[-1]  # (M, K)
    just_after = torch.stack([swd[k][:, k] for k in range(n_tasks)], 1)  # (M, K)
    forgetting = (final - just_after)[:, :-1].mean(1)
    post_loss = torch.stack([record.eval_losses[k][:, k] for k in range(n_tasks)], 1)
    loss_increase = (record.eval_losses[-1] - post_loss)[:, :-1].mean(1)
    summary: dict[str, Any] = {"methods": {}, "floor": _stats(setup.floor.mean(1).cpu().numpy()),
                               "control_is_replay": setup.control_is_replay}
    for method in TRAINED:
        sl = setup.method_slice(method)
        summary["methods"][method] = {
            "final_swd": _stats(final[sl].mean(1).cpu().numpy()),
            "final_swd_per_task": final[sl].mean(0).cpu().numpy().tolist(),
            "forgetting": _stats(forgetting[sl].cpu().numpy()),
            "first_task_forgetting": _stats((final - just_after)[sl, 0].cpu().numpy()),
            "last_task_swd": _stats(final[sl, -1].cpu().numpy()),
            "loss_increase": _stats(loss_increase[sl].cpu().numpy()),
            "first_task_loss_increase": _stats((record.eval_losses[-1] - post_loss)[sl, 0].cpu().numpy()),
            "final_loss": _stats(record.eval_losses[-1][sl].mean(1).cpu().numpy()),
            # the multiplier and the distance to the anchor at the end of tasks 2..K (the trust region acts from task 2)
            "multiplier": _stats(record.multipliers[1:, sl].mean(0).cpu().numpy()),
            "multiplier_per_task": record.multipliers[1:, sl].mean(1).cpu().numpy().tolist(),  # tasks 2..K, seed mean
            "distance_ratio": _stats((record.distances[1:, sl] / record.radii[sl]).mean(0).cpu().numpy()),
            # the dual cap (continual.DUAL_MAX): the largest multiplier reached during tasks 2..K, per seed, and the
            # number of steps on which the cap bounded the dual step (all seeds and tasks), of n_steps_per_task x
            # (K - 1) x seeds
            "multiplier_max": _stats(record.multiplier_max[1:, sl].amax(0).cpu().numpy()),
            "cap_hits": int(record.cap_hits[1:, sl].sum()),
            "cap_hit_tasks": int((record.cap_hits[1:, sl] > 0).sum()),
            "dual_steps": int(cfg.n_steps_per_task * (n_tasks - 1) * setup.n_seeds),
        }
    curves = {
        # first seed of every method (in TRAINED's order; the control's are replay's when its radius is infinite)
        "samples": [s[[setup.method_slice(m).start for m in TRAINED]].cpu().numpy() for s in record.samples],
        "swd_matrix": np.stack(  # (methods, after task, task): mean over seeds, NaN for unseen tasks
            [
                np.stack(
                    [
                        np.pad(
                            swd[k][setup.method_slice(m)].mean(0).cpu().numpy(),
                            (0, n_tasks - k - 1),
                            constant_values=np.nan,
                        )
                        for k in range(n_tasks)
                    ]
                )
                for m in TRAINED
            ]
        ),
        "reference": setup.reference[0, :, : cfg.n_samples].cpu().numpy(),
        "train_losses": record.train_losses.cpu().numpy(),  # (K, steps, M), members of setup.trained
    }
    return summary, curves


def _record_state(record: SequenceRecord) -> dict:
    return {
        "params": record.params,
        "switch": record.switch,
        "post_loss": torch.stack([record.eval_losses[k][:, k] for k in range(len(record.eval_losses))], 1),
    }


def _reconvergence_part(setup: _Setup, checkpoint: Checkpointer) -> tuple[dict, dict]:
    cfg = setup.cfg
    state = checkpoint.get("trained/record")
    target = common_target(state["post_loss"], setup.seed_of, setup.n_seeds)  # (M, K): the same bar for every method
    window = relearn_window(cfg)
    repeats, areas, starts = [], [], []
    for r in range(cfg.reconverge_repeats):
        # repeat 0 is the single draw of earlier rounds; repeat r > 0 a new perturbation and new batches
        offset = REPEAT_SEED_STRIDE * r
        start = perturbed(state["params"], setup.seed_of, setup.n_seeds, cfg.reconverge_perturb,
                          cfg.seed + 4_242 + offset)  # fmt: skip
        steps, area, start_excess = [], [], []
        keys = [f"relearning/{j}" if r == 0 else f"relearning/{r}/{j}" for j in range(len(cfg.tasks) - 1)]
        pending = [j for j, key in enumerate(keys) if checkpoint.get(key) is None]
        curves: dict[int, torch.Tensor] = {}
        if pending:
            # the whole re-learning curves (benchmarks/trust_region_cl_relearn_rule.md): a curve's first check within
            # tolerance is the count of reconvergence_steps to the bit, its area above the target the row's measure;
            # with a pool, the second method group's in the worker
            groups = setup.groups()
            part = lambda idx, p=start: {k: v[torch.tensor(idx, device=v.device)] for k, v in p.items()}  # noqa: E731
            later = [setup.pool.submit(_relearning_group, cfg, idx, part(idx), pending, cfg.seed + offset)
                     for idx in groups[1:]]  # fmt: skip
            here = _relearning_group(setup, groups[0], part(groups[0]) if len(groups) > 1 else start, pending,
                                     cfg.seed + offset)  # fmt: skip
            per_group = [here] + [future.result() for future in later]
            curves = {j: _merge([c[i] for c in per_group], groups, 1) for i, j in enumerate(pending)}
        for j, key in enumerate(keys):
            found = checkpoint.get(key)
            if found is None:
                curve = curves[j]
                bound = (1 + cfg.reconverge_tol) * target[:, j]
                found = {
                    "steps": crossing_steps(curve, bound, eval_every=cfg.reconverge_eval_every, interpolate=False),
                    "area": relearning_area(curve, target[:, j], eval_every=cfg.reconverge_eval_every, window=window),
                    # how far the perturbation knocks a member: its relative excess over the target at step 0
                    "start": (curve[0] / target[:, j] - 1).clamp_min(0),
                }
                checkpoint.save(key, found)
            steps.append(found["steps"])
            area.append(found["area"])
            start_excess.append(found.get("start"))  # None from a checkpoint written before it was recorded
        repeats.append(torch.stack(steps, 1))  # (M, K - 1)
        areas.append(torch.stack(area, 1))
        starts.append(None if any(v is None for v in start_excess) else torch.stack(start_excess, 1))
    runs, area_runs = torch.stack(repeats, 0), torch.stack(areas, 0)  # (R, M, K - 1)
    steps_t, area_t = runs.mean(0), area_runs.mean(0)  # (M, K - 1): the mean over repeats
    start_t = None if any(v is None for v in starts) else torch.stack(starts, 0).mean(0)
    censored = runs > cfg.reconverge_max_steps
    summary: dict[str, Any] = {"methods": {}, "repeats": cfg.reconverge_repeats, "window": window}
    for method in TRAINED:
        sl = setup.method_slice(method)
        summary["methods"][method] = {
            "steps": _stats(steps_t[sl].mean(1).cpu().numpy()),
            "first_task_steps": _stats(steps_t[sl, 0].cpu().numpy()),
            "steps_per_task": steps_t[sl].mean(0).cpu().numpy().tolist(),
            "area": _stats(area_t[sl].mean(1).cpu().numpy()),
            "first_task_area": _stats(area_t[sl, 0].cpu().numpy()),
            "area_per_task": area_t[sl].mean(0).cpu().numpy().tolist(),
            "n_censored": int(censored[:, sl].sum()),
            "fraction_at_start": float((runs[:, sl] == 0).float().mean()),
            "fraction_at_start_per_seed": (runs[:, sl] == 0).float().mean((0, 2)).cpu().numpy().tolist(),
        }
        if start_t is not None:  # the relative excess at step 0 of re-learning, mean over tasks (shown, not judged)
            summary["methods"][method]["start_excess"] = _stats(start_t[sl].mean(1).cpu().numpy())
    curves = {"steps": steps_t.cpu().numpy(), "steps_per_repeat": runs.cpu().numpy(), "area": area_t.cpu().numpy()}
    return summary, curves


#: the re-convergence row's measure is the area under the re-learning curve above the common target over the first
#: ``reconverge_max_steps * RELEARN_WINDOW`` fine-tuning steps (benchmarks/trust_region_cl_relearn_rule.md: candidates
#: the whole window (1.0) and its first half (0.5), chosen on tuning base seeds 141-145)
RELEARN_WINDOW = 1.0


def relearn_window(cfg: TrustRegionCLConfig) -> int:
    """Fine-tuning steps the re-learning area averages over: ``RELEARN_WINDOW`` of ``reconverge_max_steps``, rounded
    down to a multiple of ``reconverge_eval_every`` (at least one check)."""
    e = cfg.reconverge_eval_every
    return max(e, int(cfg.reconverge_max_steps * RELEARN_WINDOW) // e * e)  # cross_checks: e <= max_steps


#: seed offset between two repeats of the re-convergence measurement (repeat 0 keeps the earlier rounds' seeds)
REPEAT_SEED_STRIDE = 7_919


def common_target(post_loss: torch.Tensor, seed_of: torch.Tensor, n_seeds: int) -> torch.Tensor:
    """Re-convergence's target per (seed, task): the lowest post-learning loss of that task over every member of the
    seed (every method), given back per member, so a method that learned a task less well gets no lower bar.
    ``post_loss`` is (members, tasks); the result has its shape and is never above it."""
    out = torch.empty_like(post_loss)
    for s in range(n_seeds):
        mine = seed_of == s
        if bool(mine.any()):
            out[mine] = post_loss[mine].min(0).values
    return out


def perturbed(params: dict, seed_of: torch.Tensor, n_seeds: int, size: float, seed: int) -> dict:
    """``theta + size * rms(theta) * eps`` per weight tensor and member, ``eps ~ N(0, 1)`` drawn once per seed
    (members with the same seed get the same draw, so methods stay paired); ``size = 0`` returns ``params``."""
    if size == 0:
        return params
    g = torch.Generator().manual_seed(seed)
    out = {}
    for k, v in params.items():
        eps = torch.randn((n_seeds, *v.shape[1:]), generator=g).to(v.device)[seed_of]
        rms = v.pow(2).flatten(1).mean(1).sqrt().view(-1, *([1] * (v.dim() - 1)))
        out[k] = v + size * rms * eps
    return out


def _maml_part(setup: _Setup, checkpoint: Checkpointer) -> tuple[dict, dict]:
    cfg = setup.cfg
    state = checkpoint.get("trained/record")
    switch = state["switch"]
    sl = setup.method_slice("trcl")
    grid = torch.tensor(cfg.maml_lambda_grid, device=setup.device)
    n_grid, n_seeds = len(grid), setup.n_seeds
    # members: (lambda, seed) pairs, seed fastest; each a copy of that seed's TR-CL anchor
    rep = lambda v: v[sl].repeat(n_grid, *([1] * (v.dim() - 1)))  # noqa: E731
    anchor = {k: rep(v) for k, v in switch["anchor"].items()}
    fisher = {k: rep(v) for k, v in switch["fisher"].items()}
    g = torch.Generator().manual_seed(cfg.seed + 777)
    last = len(cfg.tasks) - 1
    x_new = torch.stack([sample_task(cfg.tasks[last], cfg.n_maml, g) for _ in range(n_seeds)]).to(setup.device)
    idx = torch.randint(0, switch["buffer_x"].shape[1], (n_seeds, cfg.n_maml), generator=g).to(setup.device)
    bx = switch["buffer_x"][sl]
    x_rep = torch.gather(bx, 1, idx.unsqueeze(-1).expand(-1, -1, bx.shape[-1]))
    c_rep = torch.gather(switch["buffer_c"][sl], 1, idx)

    def batch(x0: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, ...]:
        t = torch.randint(0, cfg.n_diffusion_steps, c.shape, generator=g).to(setup.device)
        noise = torch.randn(x0.shape, generator=g).to(setup.device)
        return tuple(v.repeat(n_grid, *([1] * (v.dim() - 1))) for v in (x0, c, t, noise))

    new_batch = batch(x_new, torch.full((n_seeds, cfg.n_maml), last, dtype=torch.long, device=setup.device))
    replay_batch = batch(x_rep, c_rep)
    out = maml_reading(
        anchor,
        fisher,
        setup.net,
        setup.schedule,
        new_batch,
        replay_batch,
        grid.repeat_interleave(n_seeds),
        replay_weight=cfg.replay_weight,
        damping=cfg.fisher_damping,
        n_steps=cfg.maml_steps,
        lr=cfg.maml_lr,
    )
    summary: dict[str, Any] = {"lambdas": list(cfg.maml_lambda_grid)}
    for key, value in out.items():
        per = value.view(n_grid, n_seeds).cpu().numpy()
        summary[key] = [_stats(row) for row in per]
    # the steps training actually took on the last task (Adam, stochastic batches), on the same fixed
    # batches: TR-CL (its radius), and generative replay as the reference without a penalty
    first = lambda b: tuple(v[:n_seeds] for v in b)  # noqa: E731 - the grid's first block: one copy per seed
    new_first, (_, c_first, t_first, noise_first) = first(new_batch), first(replay_batch)
    for method in ("trcl", "replay"):
        ms = setup.method_slice(method)
        bx_m = switch["buffer_x"][ms]
        x_rep_m = torch.gather(bx_m, 1, idx.unsqueeze(-1).expand(-1, -1, bx_m.shape[-1]))
        trained = trained_step_cosines(
            {k: v[ms] for k, v in switch["anchor"].items()},
            {k: v[ms] for k, v in state["params"].items()},
            {k: v[ms] for k, v in switch["fisher"].items()},
            setup.net,
            setup.schedule,
            new_first,
            (x_rep_m, c_first, t_first, noise_first),
            replay_weight=cfg.replay_weight,
            damping=cfg.fisher_damping,
        )
        summary[f"trained_{method}"] = {key: _stats(value.cpu().numpy()) for key, value in trained.items()}
    summary["trust_lambda"] = cfg.penalty_lambda  # the penalty form's fixed strength
    return summary, {}


@checked()
def run(
    config: TrustRegionCLConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> TrustRegionCLResults:
    """The continual sequence, re-convergence and the MAML reading (see the module docstring).

    Each part is checkpointed; the trained weights and the state at the last switch are stored,
    so ``--resume`` skips the finished parts.
    """
    cfg, checkpoint = start_run(TrustRegionCLConfig, config, checkpoint)
    device = resolve_device(cfg.device)
    pooled = device.type == "cpu" and worker_count(cfg.processes, len(GROUPS)) > 1 and split_is_exact(cfg)
    with ExitStack() as stack, one_cpu_thread(device):
        pool = early = None
        if pooled and checkpoint.get("part/reconvergence") is None:  # work left for a worker
            pool = stack.enter_context(ProcessPoolExecutor(1, mp_context=get_context("spawn")))
            if checkpoint.get("part/sequence") is None:  # start it now: the worker imports while this process sets up
                early = pool.submit(_train_group, cfg, _Setup(cfg, swd=False, pool=pool).groups()[1])
        setup = _Setup(cfg, pool=pool)
        setup.early = early
        parts = {
            "sequence": lambda: _sequence_part(setup, checkpoint, progress),
            "reconvergence": lambda: _reconvergence_part(setup, checkpoint),
            "maml": lambda: _maml_part(setup, checkpoint),
        }
        summary, curves = run_parts_timed(checkpoint, parts, progress)
    return TrustRegionCLResults(cfg, summary, curves)


@checked()
def headline(results: TrustRegionCLResults) -> list[str]:
    """Key numbers for the end-of-run summary of the command line."""
    s = results.summary
    lines = []
    for m in TRAINED:
        q, f, r = (
            s["sequence"]["methods"][m]["final_swd"],
            s["sequence"]["methods"][m]["forgetting"],
            s["reconvergence"]["methods"][m]["steps"],
        )
        lines.append(
            f"{METHODS[m].label}: final SWD {q['mean']:.3f} ± {q['sd']:.3f}, forgetting "
            f"{f['mean']:+.3f}, re-convergence {r['mean']:.1f} steps"
        )
    cos = s["maml"]["cos_maml"]
    lines.append(f"MAML reading: cosine {cos[0]['mean']:.2f} (loosest) -> {cos[-1]['mean']:.2f} (tightest)")
    return lines


def _tuning_ensemble(cfg: TrustRegionCLConfig, member_kinds: list) -> tuple[Any, torch.Tensor, torch.Tensor, int]:
    """Train one ensemble on the tuning seeds: every member kind of ``member_kinds`` (a function of the seed index
    that makes the :class:`Member`) on every seed, kind-major. Returns the training record, each member's final SWD
    and forgetting (its SWD after the last task minus just after learning, averaged over the earlier tasks), and the
    number of seeds."""
    with one_cpu_thread(resolve_device(cfg.device)):
        setup = _Setup(cfg)
        members = [make(s) for make in member_kinds for s in range(setup.n_seeds)]
        seed_of = torch.tensor([mem.seed_index for mem in members], device=setup.device)
        params = init_params(setup.net, [setup.member_seeds[mem.seed_index] for mem in members], setup.device)
        record = train_sequence(
            params, setup.net, setup.schedule, cfg.tasks, members, setup.strengths(), n_seeds=setup.n_seeds,
            n_steps_per_task=cfg.n_steps_per_task, batch_size=cfg.batch_size, lr=cfg.lr, n_fisher=cfg.n_fisher,
            n_samples=cfg.n_samples, eval_set=setup.eval_set, seed=cfg.seed, n_replay=cfg.n_replay,
        )  # fmt: skip
        n_tasks = len(cfg.tasks)
        swd = [setup.swd(record.samples[k], seed_of) for k in range(n_tasks)]
        just_after = torch.stack([swd[k][:, k] for k in range(n_tasks)], 1)
        final, forgetting = swd[-1].mean(1), (swd[-1] - just_after)[:, :-1].mean(1)
    return record, final, forgetting, setup.n_seeds


@checked(radii=Tuple(Radius(optional=False), increasing=True))
def tune_radii(config: TrustRegionCLConfig, radii: tuple[float, ...]) -> dict[str, Any]:
    """Choose the trust-region radii on tuning seeds, the same budget for both metrics.

    One ensemble: fine-tuning, generative replay, and TR-CL with the Fisher metric and with the
    isotropic metric at every radius of ``radii`` (the same grid, so the same number of trained
    models for each metric), on ``config.seeds`` (use seeds disjoint from the book's). A grid that
    ends at ``inf`` includes no constraint at all (generative replay) for both metrics, so a tuned
    radius cannot lose to replay on the tuning draws. Returns per member kind the final SWD and
    forgetting per seed, and per metric the radius with the lowest mean final SWD.
    """
    cfg = start_run(TrustRegionCLConfig, config, None)[0]
    kinds = [("finetune", None), ("replay", None)] + [(m, r) for m in ("trcl", "trcl_iso") for r in radii]
    record, final, forgetting, n = _tuning_ensemble(cfg, [lambda s, m=m, r=r: Member(m, s, r) for m, r in kinds])
    out: dict[str, Any] = {"radii": list(radii), "kinds": {}}
    for i, (m, r) in enumerate(kinds):
        sl = slice(i * n, (i + 1) * n)
        out["kinds"][f"{m}" if r is None else f"{m}@{r:g}"] = {
            "final_swd": _stats(final[sl].cpu().numpy()), "forgetting": _stats(forgetting[sl].cpu().numpy()),
            "distance_ratio": _stats((record.distances[1:, sl] / record.radii[sl]).mean(0).cpu().numpy()),
        }
    for m in ("trcl", "trcl_iso"):
        scores = [out["kinds"][f"{m}@{r:g}"]["final_swd"]["mean"] for r in radii]
        out[f"best_{m}"] = radii[int(np.argmin(scores))]
    return out


@checked(lambdas=Tuple(Float(0.0, 1e9), increasing=True))
def tune_lambdas(config: TrustRegionCLConfig, lambdas: tuple[float, ...]) -> dict[str, Any]:
    """Choose EWC's and the penalty form's lambda on tuning seeds, with the radius's budget and criterion.

    One ensemble: fine-tuning and generative replay (references), and EWC and the penalty form (EWC's penalty plus
    replay) at every lambda of ``lambdas``, on ``config.seeds`` (use seeds disjoint from the book's). Returns per
    member kind the final SWD and forgetting per seed, and per arm the lambda with the lowest mean final SWD.
    """
    cfg = start_run(TrustRegionCLConfig, config, None)[0]
    kinds = [("finetune", None), ("replay", None)] + [(m, v) for m in ("ewc", "trcl_penalty") for v in lambdas]
    _, final, forgetting, n = _tuning_ensemble(cfg, [lambda s, m=m, v=v: Member(m, s, strength=v) for m, v in kinds])
    out: dict[str, Any] = {"lambdas": list(lambdas), "kinds": {}}
    for i, (m, v) in enumerate(kinds):
        sl = slice(i * n, (i + 1) * n)
        out["kinds"][f"{m}" if v is None else f"{m}@{v:g}"] = {
            "final_swd": _stats(final[sl].cpu().numpy()), "forgetting": _stats(forgetting[sl].cpu().numpy()),
        }
    for m in ("ewc", "trcl_penalty"):
        scores = [out["kinds"][f"{m}@{v:g}"]["final_swd"]["mean"] for v in lambdas]
        out[f"best_{m}"] = lambdas[int(np.argmin(scores))]
    return out
