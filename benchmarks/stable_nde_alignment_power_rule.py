"""Chapter 08 (stable_nde), issue 46, thirteenth pass: power of the alignment row
(``stable_nde_alignment_power_rule.md``).

Per tuning base seed and system: the package's warm start and one-step run (``_train_group``; the snapshots equal
the full run's), then the complete regulariser's alignment row with B = 1, 2, 3 independent window draws (the
first is the package's draw), read with the package's ``alignment_verdict``. One JSON line per base seed; base
seeds below 135 are refused.
Usage: ``PYTHONPATH=src python benchmarks/stable_nde_alignment_power_rule.py --base-seeds 135 136 137``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from explorables.core.checkpoint import Checkpointer
from explorables.core.threads import one_cpu_thread
from explorables.stable_nde import StableNDEConfig
from explorables.stable_nde.claims import alignment_verdict
from explorables.stable_nde.experiment import (
    _stacked_state,
    _train_group,
    build_system,
    ensemble_groups,
    make_data,
    member_seeds,
)
from explorables.stable_nde.models import make_model
from explorables.stable_nde.training import gradient_cosines, sample_windows

DRAWS = (1, 2, 3)
#: offset between window draws (draw 0 is the package's: seeds[0] + 11 windows, seeds[0] + 13 perturbations)
DRAW_OFFSET = 100_000


def system_cosines(cfg: StableNDEConfig, index: int, name: str) -> tuple[np.ndarray, float]:
    """Cosine gain (complete minus one-step) per draw, checkpoint and member: ``(max(DRAWS), C, S)``; CPU s/draw."""
    device = torch.device("cpu")
    system = build_system(cfg, name)
    seeds = member_seeds(cfg, index)
    data = make_data(system, cfg, seeds, device)
    groups = ensemble_groups(cfg)
    ck = Checkpointer(None)
    parts = [_train_group(cfg, system, name, data, seeds, gr, g, "one_step", ck, False) for g, gr in enumerate(groups)]
    snaps = {k: _stacked_state(system, cfg, [p[3][k] for p in parts], [len(gr) for gr in groups], device)
             for k in cfg.alignment_steps}  # fmt: skip
    probe = make_model(system, len(seeds), width=cfg.width, depth=cfg.depth, seeds=seeds, solver=cfg.solver,
                       device=device)  # fmt: skip
    gains = []
    cpu = []
    for d in range(max(DRAWS)):
        t0 = time.process_time()
        windows = sample_windows(data, cfg.n_alignment_windows, cfg.horizon,
                                 torch.Generator().manual_seed(seeds[0] + 11 + DRAW_OFFSET * d))  # fmt: skip
        per_k = []
        for k in cfg.alignment_steps:
            probe.load_state_dict(snaps[k])
            gen = torch.Generator().manual_seed(seeds[0] + 13 + DRAW_OFFSET * d)
            cos = gradient_cosines(probe, windows, noise_std=cfg.noise_std, weight=cfg.jacobian_weight,
                                   jvp_mode=cfg.jvp_mode, generator=gen)  # fmt: skip
            per_k.append((cos["complete"] - cos["one_step"]).double().numpy())
        gains.append(per_k)
        cpu.append(time.process_time() - t0)
    return np.asarray(gains), float(np.mean(cpu))


def one(base_seed: int) -> dict:
    if base_seed < 135:
        raise ValueError(f"base_seed must be >= 135 (fresh tuning seeds), got {base_seed}")
    cfg = StableNDEConfig.preset("book", seed=base_seed)
    start = time.perf_counter()
    out: dict = {"base_seed": base_seed, "per_member": {}, "verdict": {}, "draw_cpu_s": 0.0}
    per_system = {}
    with one_cpu_thread(torch.device("cpu")):
        for i, name in enumerate(cfg.systems):
            g, cpu = system_cosines(cfg, i, name)
            per_system[name] = g
            out["draw_cpu_s"] += cpu
    for b in DRAWS:
        member = {n: g[:b].mean(0).mean(0).tolist() for n, g in per_system.items()}  # draws, then checkpoints
        out["per_member"][f"A{b}"] = member
        out["verdict"][f"A{b}"] = alignment_verdict(member)
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--base-seeds", type=int, nargs="+", default=[135, 136, 137])
    a = p.parse_args()
    for b in a.base_seeds:
        row = one(b)
        print(json.dumps(row), flush=True)
        for c, v in row["verdict"].items():
            print(f"# seed {b} {c}: {v}", flush=True)
        print(f"# seed {b}: one draw {row['draw_cpu_s']:.1f} CPU s (both systems); {row['seconds']} s wall", flush=True)


if __name__ == "__main__":
    main()
