"""Plan of stable_nde's ``paper`` preset, per system: the warm start, each method's training loop, the rollout."""

from __future__ import annotations

import dataclasses

import torch

from ..core.plan import Part, parameter_count
from ..stable_nde.experiment import CONTROL, SIM_CONTROL, TRAINED, build_system, make_data, member_seeds
from ..stable_nde.models import make_model, stack_models
from ..stable_nde.training import train

#: trajectories simulated for the measured steps (a step samples windows; the full set counts as resident memory)
STEP_TRAJECTORIES = 8


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    found = []
    batch = cfg.horizon if dry else cfg.batch_size
    for index, name in enumerate(cfg.systems[:1] if dry else cfg.systems):  # dry: the first system's parts
        system = build_system(cfg, name)
        seeds = member_seeds(cfg, index)
        n = len(seeds)
        small = dataclasses.replace(cfg, n_trajectories=STEP_TRAJECTORIES)
        data = make_data(system, small, seeds, torch.device("cpu"))
        resident = data.element_size() * n * cfg.n_trajectories * (cfg.trajectory_steps + 1) * data.shape[-1]
        common = dict(batch_size=batch, horizon=cfg.horizon, noise_std=cfg.noise_std, weight=cfg.jacobian_weight,
                      jvp_mode=cfg.jvp_mode, refresh_every=cfg.refresh_every, data_seed=seeds[0] + 7)
        model = make_model(system, n, width=cfg.width, depth=cfg.depth, seeds=seeds, solver=cfg.solver)
        n_params = parameter_count(model)
        precision = "fp64" if data.dtype == torch.float64 else "fp32"

        def step(method, model=model, data=data, common=common):
            loss = "one_step" if method in (CONTROL, SIM_CONTROL, "pretrain") else method
            return lambda: train(model, data, loss, n_steps=1, lr=cfg.lr, simulator_targets=method == SIM_CONTROL,
                                 **common)

        found.append(Part(f"{name}: warm start", f"one Adam step, one-step loss, {n} members x {cfg.batch_size} "
                          "windows", step("pretrain"), steps=cfg.pretrain_steps, parameters=n_params,
                          precision=precision, resident_bytes=resident))
        for method in TRAINED:
            steps = cfg.n_train_steps * (cfg.control_step_factor if method == CONTROL else 1)
            found.append(Part(f"{name}: {method}", f"one Adam step of the {method} loss (K = {cfg.horizon})",
                              step(method), steps=steps, parameters=n_params, precision=precision,
                              resident_bytes=resident))
        joint = stack_models([make_model(system, n, width=cfg.width, depth=cfg.depth, seeds=seeds, solver=cfg.solver)
                              for _ in TRAINED])
        x0 = system.trajectories(8 if dry else cfg.n_rollouts, 1, torch.Generator().manual_seed(0))[:, 0]
        states = x0.expand(joint.n_members, -1, -1).contiguous()

        @torch.no_grad()
        def roll(joint=joint, states=states):
            return joint.step(states)

        found.append(Part(f"{name}: rollout", f"one solver step of all {joint.n_members} members on "
                          f"{cfg.n_rollouts} states", roll, steps=cfg.rollout_steps, parameters=parameter_count(joint),
                          precision=precision))
    paper_scale = ("partly: the paper's three systems (pendulum, Lorenz, Kuramoto-Sivashinsky) with hybrid models; "
                   "smaller networks and fewer trajectories than its experiments, which the abstract does not size")
    notes = (f"training steps measured on {STEP_TRAJECTORIES} simulated trajectories per seed (a step samples "
             "windows; the full data set is counted as resident memory); gradient alignment and the Lyapunov "
             "estimates are not in the plan")
    if dry:
        notes += f"; dry: batches of {batch}, 8 rollout states"
    return found, paper_scale, notes
