"""Plan of virtualflow's ``paper`` preset: the room simulation, Virtual-Flow's training loop, reflow's couplings and
retraining, the two regressions (control and supervised reference), and the sampling on the test rooms."""

from __future__ import annotations

import torch

from ..core.plan import Part, parameter_count
from ..virtualflow.data import supervised_data, unsupervised_data
from ..virtualflow.experiment import build_example
from ..virtualflow.flow import Regressor, VelocityNet, reflow_pairs, sample, train_flow, train_regression


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    ex = build_example(cfg, cfg.seeds[0], "train", 0)  # one room at the preset's size
    target, cond = unsupervised_data([ex], "cpu")
    truth, cond_s = supervised_data([ex], "cpu")
    bins, d_cond = cond.shape
    n_seeds = len(cfg.seeds)
    # what train_models holds for one seed: pseudo-targets, conditions, true targets and the conditions again
    resident = 4 * cfg.n_train_scenes * bins * (2 * d_cond + 4)
    flow = VelocityNet(cfg.n_mics, d_cond, cfg.d_hidden, cfg.n_layers)
    regressor = Regressor(cfg.n_mics, d_cond, cfg.d_hidden, cfg.n_layers)
    small = (8, 16) if dry else (512, 1024)

    def flow_at(b, x0=None):
        gen = torch.Generator().manual_seed(0)
        return lambda: train_flow(flow, target, cond, x0=x0, n_steps=1, batch_size=b, lr=cfg.lr, generator=gen)

    def regression_at(b):
        gen = torch.Generator().manual_seed(0)
        return lambda: train_regression(regressor, truth, cond_s, n_steps=1, batch_size=b, lr=cfg.lr, generator=gen)

    def pairs_at(b):
        gen = torch.Generator().manual_seed(0)
        c = cond[:b]
        return lambda: reflow_pairs(flow, c, n_steps=cfg.reflow_teacher_steps, generator=gen, solver=cfg.solver)

    def sample_at(b):
        c, x0 = cond[:b], torch.randn(b, 2)
        return lambda: sample(flow, c, x0, 1, cfg.solver)

    # network evaluations per test room: the flow at every step count of the grid, the sampler's and the teacher's
    # solves (shared when equal), and reflow at every grid count (one step included)
    flow_counts = set(cfg.steps_grid) | {cfg.n_sample_steps, cfg.reflow_teacher_steps}
    evaluations = sum(flow_counts) + sum(set(cfg.steps_grid) | {1})
    rooms = n_seeds * (cfg.n_train_scenes + cfg.n_test_scenes + cfg.n_fixed_scenes + cfg.n_gate_scenes)
    batch_note = f"measured at batches {small[0]} and {small[1]}"
    found = [
        Part("rooms", f"one room simulated (image sources, order {cfg.max_order}, {cfg.clip_s:g} s at {cfg.fs} Hz, "
             f"{cfg.n_mics} mics) and its pseudo-target", lambda: build_example(cfg, cfg.seeds[0], "train", 1),
             steps=rooms, runs_on="cpu", repeat=1,
             note=f"pyroomacoustics and numpy on the CPU; training, test, fixed-layout and gate rooms of "
             f"{n_seeds} seeds; " + ("talkers from --data-root" if cfg.data_root else
                                      "synthetic talkers (espeak-ng or the harmonic fallback) without --data-root")),
        Part("Virtual-Flow", f"one Adam step of the velocity network on {cfg.batch_size:,} bins", None,
             step_at=flow_at, batch=cfg.batch_size, small_batches=small, steps=cfg.n_train_steps * n_seeds,
             parameters=parameter_count(flow), resident_bytes=resident,
             note=f"{bins:,} bins per room x {cfg.n_train_scenes:,} rooms held on the device ({d_cond} condition "
             f"features); {batch_note}"),
        Part("reflow pairs", f"the base model's {cfg.reflow_teacher_steps}-step ODE solve on {cfg.n_reflow_pairs:,} "
             "bins", None, step_at=pairs_at, batch=cfg.n_reflow_pairs, small_batches=small, steps=n_seeds,
             parameters=parameter_count(flow), resident_bytes=resident,
             note=f"{batch_note}; the solve runs in chunks of 4,096 bins, so the linearly extrapolated memory is an "
             "upper bound"),
        Part("reflow", f"one Adam step of reflow on {cfg.batch_size:,} of its couplings", None,
             step_at=lambda b: flow_at(b, torch.randn(bins, 2)), batch=cfg.batch_size, small_batches=small,
             steps=cfg.n_reflow_steps * n_seeds, parameters=parameter_count(flow), resident_bytes=resident,
             note=batch_note),
        Part("regressions", f"one Adam step of a regressor (control or supervised reference) on {cfg.batch_size:,} "
             "bins", None, step_at=regression_at, batch=cfg.batch_size, small_batches=small,
             steps=(cfg.n_regression_steps + cfg.n_supervised_steps) * n_seeds, parameters=parameter_count(regressor),
             resident_bytes=resident, note=f"control and supervised reference; {batch_note}"),
        Part("test sampling", f"one network evaluation on a test room's {bins:,} bins", None, step_at=sample_at,
             batch=bins, small_batches=small, steps=n_seeds * cfg.n_test_scenes * evaluations,
             parameters=parameter_count(flow),
             note=f"{evaluations} evaluations per room (flow and reflow over the step grid); the scoring, STFTs and "
             f"beamformers (numpy) are not in the plan; {batch_note}"),
    ]
    if dry:
        for part in found:
            part.note += "; dry: small batches"
    paper_scale = ("partly: 16 kHz, 4 s clips, 4 real microphones and 5,000 simulated rooms per seed with an MLP "
                   "over single time-frequency bins; the abstract names no data set or model size, and the paper's "
                   "neural-VME baselines and neural beamformer are not reproduced")
    notes = ("every training loop is called with n_steps=1 (its optimiser is built inside); the rooms' bins are held "
             "on the device for the whole seed, which dominates the memory")
    return found, paper_scale, notes
