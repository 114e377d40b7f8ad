"""Plan of trust_region_cl's ``paper`` preset: the continual sequence that trains every member (methods x seeds)
task after task. Its training step sits inside :func:`train_sequence`, which also computes the Fisher and samples
after each task, so the plan has three parts: one training step (the difference of two short ``train_sequence``
calls), the Fisher after a task, and one sampling pass of one task."""

from __future__ import annotations

import dataclasses

import torch

from ..core.plan import Part, dry_note
from ..trust_region_cl.continual import diagonal_fisher, train_sequence
from ..trust_region_cl.diffusion import init_params, sample
from ..trust_region_cl.experiment import _Setup
from ..trust_region_cl.tasks import sample_task

#: samples of the Fisher, the sampling and the evaluation inside the measured training calls (their own parts
#: measure them at the preset's counts)
INNER = 8


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    small = dataclasses.replace(cfg, n_eval=INNER, n_samples=INNER, n_replay=INNER, n_fisher=INNER)
    if dry:  # the same networks and counts, a 10-step diffusion schedule (sampling is a loop over its steps)
        small = dataclasses.replace(small, n_diffusion_steps=10)
    setup = _Setup(small)
    net, schedule, members = setup.net, setup.schedule, setup.members
    m = len(members)
    seeds = [setup.member_seeds[mem.seed_index] for mem in members]
    params = init_params(net, seeds)
    n_params = sum(v[0].numel() for v in params.values())
    n_tasks = len(cfg.tasks)
    batch = 8 if dry else cfg.batch_size

    def train_at(n_steps):
        def step():
            p = {k: v.clone() for k, v in params.items()}
            return train_sequence(p, net, schedule, cfg.tasks[:1], members, setup.strengths(), n_seeds=setup.n_seeds,
                                  n_steps_per_task=n_steps, batch_size=batch, lr=cfg.lr, n_fisher=INNER,
                                  n_samples=INNER, eval_set=setup.eval_set, seed=cfg.seed, n_replay=INNER)
        return step

    g = torch.Generator().manual_seed(0)
    real = sample_task(cfg.tasks[0], 256, g)

    def fisher_at(n):
        x0 = real[torch.randint(len(real), (m, n), generator=g)]
        task = torch.zeros(m, n, dtype=torch.long)
        t = torch.randint(schedule.n_steps, (m, n), generator=g)
        noise = torch.randn(m, n, net.d_data, generator=g)
        return lambda: diagonal_fisher(params, net, schedule, x0, task, t, noise)

    def sample_at(n):
        task = torch.zeros(m, n, dtype=torch.long)
        return lambda: sample(params, net, schedule, task, torch.Generator().manual_seed(1))

    # alive in train_sequence while the Fisher runs, seven copies of the weights' size: the gradients, Adam's two
    # moments (the task's optimiser), the accumulated Fisher, the anchor, the metric and the task's start point
    state = 7 * sum(v.numel() * v.element_size() for v in params.values())
    samplings = n_tasks * (n_tasks + 1) // 2  # after task k, n_samples of each of the k tasks seen so far
    methods = len(setup.trained)
    # two and three chunks of 64: the peak (two chunks' per-sample gradients alive at once) no longer grows with N
    fisher_small = (4, 8) if dry else (128, 192)
    found = [
        Part("training", f"one Adam step of {m} members ({methods} methods x {setup.n_seeds} seeds) on "
             f"{cfg.batch_size} samples each", None, step_loop=train_at, loop_steps=(1, 2),
             steps=n_tasks * cfg.n_steps_per_task, parameters=m * n_params,
             note="the difference of train_sequence on the first task with 1 and 2 steps per task (its set-up, "
             f"Fisher, sampling and evaluation on {INNER} samples cancel; they are measured below at full size); "
             "the first task has no replay batch, so later tasks cost up to twice as much for the replay members"
             + (f"; dry: batches of {batch}" if dry else "")),
        Part("Fisher", f"the diagonal Fisher of every member on {cfg.n_fisher:,} per-sample gradients", None,
             step_at=fisher_at, batch=cfg.n_fisher, small_batches=fisher_small, steps=n_tasks,
             parameters=m * n_params, resident_bytes=state,
             note=f"after each task, chunks of 64 samples (torch.func); measured at {fisher_small[0]} and "
             f"{fisher_small[1]} samples; resident: train_sequence's state beside the weights ({state / 1e9:.3g} GB: "
             "their gradients, Adam's two moments, the Fisher, the anchor, the metric and the task's start)"),
        Part("sampling", f"{cfg.n_diffusion_steps}-step DDPM sampling of {cfg.n_samples:,} samples of one task for "
             f"every member", None, step_at=sample_at, batch=cfg.n_samples, small_batches=(2, 4) if dry else (8, 16),
             steps=samplings, parameters=m * n_params,
             note=f"after task k, every task seen so far: {samplings} passes over {n_tasks} tasks; the replay buffer "
             "is the first n_replay of them"),
    ]
    paper_scale = ("partly: task-incremental diffusion generation of ten 8x8 digit classes with a 4x512 MLP denoiser "
                   "(200 diffusion steps); the abstract names no data set or model size, and its continual "
                   "diffusion-policy control is not reproduced")
    dry_note(found, dry, "a 10-step diffusion schedule")
    notes = ("the reconvergence and MAML readings after the sequence are not in the plan; "
             f"digit data of the preset's shape ({net.d_data} coordinates)")
    return found, paper_scale, notes
