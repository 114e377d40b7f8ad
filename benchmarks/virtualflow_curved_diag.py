"""Chapter 06 (virtualflow), issue 42, eighth pass: a diagnostic of the gate "curved" on base seed 1, run AFTER the
seed study was committed (nothing is tuned from it). The gate reads, per inner seed, the mean over the 6 test rooms
of the NMSE between the base flow's one-step and its 8-step sample (same noise); on base 1 one inner seed read far
below the others. Is that one room (room sampling: more rooms would steady it) or the whole seed (its trained flow:
more rooms would not)? Prints the per-room NMSE of the inner seeds given.

    PYTHONPATH=src python benchmarks/virtualflow_curved_diag.py --base 1 --inner 1 0
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from explorables.virtualflow.experiment import VirtualFlowConfig, build_example, estimate, train_models


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", type=int, default=1)
    p.add_argument("--inner", type=int, nargs="+", default=[1, 0])
    a = p.parse_args()
    torch.set_num_threads(1)
    device = torch.device("cpu")
    cfg = VirtualFlowConfig(seed=a.base)
    for seed in a.inner:
        train = [build_example(cfg, seed, "train", i) for i in range(cfg.n_train_scenes)]
        test = [build_example(cfg, seed, "test", i) for i in range(cfg.n_test_scenes)]
        models = train_models(cfg, train, seed, device)
        gen = torch.Generator().manual_seed(cfg.seed * 104_729 + seed)  # the noise evaluate_seed draws
        per_room = []
        for ex in test:
            x0 = torch.randn(ex.cond.shape[0], models.flow.d_frame, generator=gen).to(device)
            one, many = (
                estimate(models, ex, "flow", n_steps=k, solver=cfg.solver, x0=x0, device=device)
                for k in (1, cfg.reflow_teacher_steps)
            )
            gap = np.mean(np.abs(one - many) ** 2) / np.mean(np.abs(many) ** 2)
            per_room.append(float(10 * np.log10(gap + 1e-20)))
        print(
            f"base {a.base} inner seed {seed}: one-step vs {cfg.reflow_teacher_steps}-step NMSE per room "
            + " ".join(f"{v:+.2f}" for v in per_room)
            + f" dB; mean {np.mean(per_room):+.2f}; flow loss last quarter "
            f"{np.mean(models.losses['flow'][-len(models.losses['flow']) // 4 :]):.4f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
