"""Plan of rashomon's ``paper`` preset: the noise sweeps (numpy fits, one cell per kind) and the Monte-Carlo
check of the volumes in 30 dimensions (torch, float64, on the config's device)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..core.plan import Part
from ..rashomon import data as D
from ..rashomon.experiment import KINDS, _sweep
from ..rashomon.models import fit
from ..rashomon.montecarlo import exact_log_volume

MC_BATCH = 65_536  # exact_log_volume's default batch: one measured step


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    found = []
    for kind in KINDS:
        levels = cfg.sigma_grid if kind in ("linear", "gam") else cfg.flip_rate_grid
        cell = dataclasses.replace(cfg, seeds=cfg.seeds[:1], sigma_grid=cfg.sigma_grid[:1],
                                   flip_rate_grid=cfg.flip_rate_grid[:1])
        if dry:
            cell = dataclasses.replace(cell, n_samples=500)
        found.append(Part(f"sweep, {kind}", f"one noise level x seed of the {kind} sweep ({cfg.n_samples:,} samples)",
                          lambda cell=cell, kind=kind: _sweep(kind, cell), steps=len(levels) * len(cfg.seeds),
                          runs_on="cpu", repeat=1, precision="fp64",
                          note="a cell: the fit, the reducibility costs and the diversity draws"
                          + ("; dry: 500 samples" if dry else "")))
    w = np.r_[1.0, 0.5, np.zeros(max(cfg.d_mc - 2, 0))][: cfg.d_mc]
    n = 500 if dry else cfg.n_mc_samples
    X, y = D.linear_data(n, w, 1.0, cfg.seed)
    lin = fit(X, y)
    batch = 2_048 if dry else MC_BATCH
    found.append(Part(
        "Monte Carlo", f"one batch of {MC_BATCH:,} draws in {cfg.d_mc + 1} dimensions against {cfg.n_mc_samples:,} "
        "samples", lambda: exact_log_volume(X, y, lin, cfg.theta, batch, seed=0, device="cpu", batch=batch),
        steps=4 * math.ceil(cfg.n_mc_draws / MC_BATCH), precision="fp64",
        note="the linear set and three logistic levels; a truncated estimate is redrawn with a wider margin "
        "(not counted)" + (f"; dry: {batch} draws, {n} samples" if dry else "")))
    paper_scale = ("partly: the paper's noise sweeps for linear, logistic and GAM models with 20 seeds, and the "
                   "Monte-Carlo volume check in 30 dimensions with 2e7 draws; the real data sets are small stand-ins")
    return found, paper_scale, ("the sweeps are numpy on the CPU at every scale; the feature-noise, mechanism and "
                                "view parts are not in the plan")
