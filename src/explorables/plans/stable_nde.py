"""Plan of stable_nde's ``paper`` preset, per system: the warm start, each method's training loop, the gradient
alignment at the one-step run's snapshots, the long rollout with the stability metrics over the kept trajectories, and
(chaotic systems) the Lyapunov estimates."""

from __future__ import annotations

import dataclasses

import torch

from ..core.plan import Part, parameter_count
from ..stable_nde.experiment import CONTROL, SIM_CONTROL, TRAINED, build_system, make_data, member_seeds
from ..stable_nde.metrics import blow_up_step, energy_drift, energy_half_life, lyapunov_exponent
from ..stable_nde.models import make_model, stack_models
from ..stable_nde.training import gradient_cosines, sample_windows, train

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
        # the rollout keeps every state: (rollout_steps + 1) x members x rollouts x dim, and the truth's, on the device;
        # the metrics read them at once. Measured over shorter rollouts (random states of the shape) and
        # extrapolated in the rollout's length: memory and traffic grow with it, the kernel count does not
        truth_bytes = (cfg.rollout_steps + 1) * cfg.n_rollouts * system.dim * data.element_size()
        rollouts = 8 if dry else cfg.n_rollouts

        def metrics_at(t, joint=joint, system=system, rollouts=rollouts, dtype=data.dtype):
            traj = torch.randn(t + 1, joint.n_members, rollouts, system.dim, dtype=dtype,
                               generator=torch.Generator().manual_seed(2))

            def metrics():
                bad = blow_up_step(traj, system.blow_up_radius)
                if system.energy is not None:  # the pendulum's energy drift and half-life, over every kept state
                    return bad, energy_drift(traj, system.energy, 1), energy_half_life(traj, system.energy, -1.0, 1.0)
                return bad
            metrics()  # once unmeasured: the first call's one-off host allocations would bend the line through two
            return metrics

        observed = (cfg.rollout_steps - cfg.rollout_steps // 5 + 1) * joint.n_members * cfg.n_rollouts * (
            1 if name == "lorenz" else system.dim) * data.element_size()
        host = "" if system.energy is not None else (
            f"; the chaotic systems also copy the observable after the burn-in to the host twice (.cpu(), then "
            f".numpy().copy()): {observed * 2 / 1e9:.3g} GB of host memory, not counted here")
        found.append(Part(f"{name}: stability metrics", f"the kept rollouts ({cfg.rollout_steps + 1:,} states x "
                          f"{joint.n_members} members x {cfg.n_rollouts}) and the blow-up"
                          + (" and energy" if system.energy is not None else "") + " metrics over them", None,
                          step_at=metrics_at, batch=cfg.rollout_steps, small_batches=(50, 100), steps=1,
                          parameters=0, precision=precision, resident_bytes=truth_bytes,
                          note=f"the models' rollouts measured at 50 and 100 steps and extrapolated to "
                          f"{cfg.rollout_steps:,}; the truth's rollout ({truth_bytes / 1e9:.3g} GB) is resident"
                          + host))
        # 2. gradient alignment: every cheap loss's gradient and the unrolled one on n_alignment_windows windows, at
        # each snapshot; measured on fewer windows and extrapolated (the cost and the activations grow with them)
        probe = make_model(system, n, width=cfg.width, depth=cfg.depth, seeds=seeds, solver=cfg.solver)

        def align_at(w, probe=probe, data=data, seeds=seeds):
            windows = sample_windows(data, w, cfg.horizon, torch.Generator().manual_seed(seeds[0] + 11))
            return lambda: gradient_cosines(probe, windows, noise_std=cfg.noise_std, weight=cfg.jacobian_weight,
                                            jvp_mode=cfg.jvp_mode, generator=torch.Generator().manual_seed(1))

        few = (2, 4) if dry else (4, 8)
        found.append(Part(f"{name}: alignment", f"the gradient cosines of the cheap losses with the unrolled one on "
                          f"{cfg.n_alignment_windows} windows (K = {cfg.horizon})", None, step_at=align_at,
                          batch=cfg.n_alignment_windows, small_batches=few, steps=len(cfg.alignment_steps),
                          parameters=n_params, precision=precision, resident_bytes=resident,
                          note=f"at each of the {len(cfg.alignment_steps)} snapshots of the one-step run; measured on "
                          f"{few[0]} and {few[1]} windows and extrapolated"))
        if system.energy is None:  # Lorenz and KS: the Benettin estimate, the models' and the truth's
            n_lyap = min(cfg.n_lyapunov, cfg.n_rollouts)
            burn = cfg.rollout_steps // 5

            def lyap_loop(k, joint=joint, states=states, system=system, x0=x0, n_lyap=n_lyap):
                def run():
                    lyapunov_exponent(joint, states[:, :n_lyap].contiguous(), k, system.dt,
                                      generator=torch.Generator().manual_seed(19))
                    return lyapunov_exponent(system, x0[:n_lyap], k, system.dt,
                                             generator=torch.Generator().manual_seed(19))
                return run

            found.append(Part(f"{name}: Lyapunov", f"one step of the two-trajectory estimate for all "
                              f"{joint.n_members} members and the truth on {n_lyap} states", None,
                              step_loop=lyap_loop, steps=burn + cfg.lyapunov_steps,
                              parameters=parameter_count(joint), precision=precision,
                              note=f"{burn:,} transient and {cfg.lyapunov_steps:,} averaged steps; the kept rollouts "
                              "are still on the device (see the stability metrics)"))
    paper_scale = ("partly: the paper's three systems (pendulum, Lorenz, Kuramoto-Sivashinsky) with hybrid models; "
                   "smaller networks and fewer trajectories than its experiments, which the abstract does not size")
    notes = (f"training steps measured on {STEP_TRAJECTORIES} simulated trajectories per seed (a step samples "
             "windows; the full data set is counted as resident memory)")
    if dry:
        notes += f"; dry: batches of {batch}, 8 rollout states"
    return found, paper_scale, notes
