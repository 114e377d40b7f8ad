"""Plan of tomato_mp's ``paper`` preset (the outlier sweep on 100,000 points): the blobs and their density,
ToMATo over its graph parameter, and ToMAToMP (the multi-parameter module on a subsample)."""

from __future__ import annotations

import dataclasses

from ..core.plan import Part
from ..tomato_mp.data import corrupt, dtm, log_kde, make_dataset
from ..tomato_mp.experiment import BANDWIDTH, _blobs, run_tomato_mp, seeds_of
from ..tomato_mp.persistence import tomato

#: points of the measured problem (the KDE is quadratic in the points: the preset's 100,000 take minutes on a CPU)
MEASURED_POINTS = 10_000


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    n0 = min(cfg.n_points, MEASURED_POINTS)
    here = dataclasses.replace(cfg, n_points=n0)
    if dry:
        here = dataclasses.replace(here, n_points=2_000, mp_subsample_size=200, n_lines=10)
    ratio = cfg.n_points / here.n_points
    ds, f = _blobs(here)
    g, _ = corrupt(f, max(cfg.outlier_fraction_grid), seed=0)
    g_points = ds.X
    runs = len(seeds_of(cfg)) * len(cfg.outlier_fraction_grid)
    k = max(cfg.k_grid)
    d = ds.X.shape[1]
    block = 4096  # log_kde's and dtm's rows per block: memory holds a few (block x points) distance blocks
    found = [
        Part("blobs", f"{cfg.n_points:,} points sampled", lambda: make_dataset("blobs", here.n_points, 0),
             steps=len(seeds_of(cfg)), runs_on="cpu", repeat=1, scale=ratio,
             note=f"measured on {here.n_points:,} points, scaled linearly"),
        Part("density (log-KDE)", f"the log-KDE of {cfg.n_points:,} points (all pairs, blocks of {block} rows)",
             lambda: log_kde(ds.X, BANDWIDTH["blobs"], device="cpu"), steps=len(seeds_of(cfg)), precision="fp64",
             scale=ratio**2, memory_scale=ratio, operations=(3 * d + 4) * here.n_points**2,
             note=f"torch on the config's device (the GPU on a GPU machine); measured on {here.n_points:,} points: "
             "time, operations and traffic scaled by (points ratio)^2 (all pairs), memory by the points ratio (the "
             f"{block} x points distance blocks); operations estimated as (3d + 4) per pair (cdist, square, exp)"),
        Part("DTM control", f"the distance to measure of {cfg.n_points:,} points (mass {cfg.dtm_mass_fraction})",
             lambda: dtm(g_points, cfg.dtm_mass_fraction, device="cpu"), steps=runs, precision="fp64",
             scale=ratio**2, memory_scale=ratio, operations=(3 * d + 1) * here.n_points**2,
             note=f"torch on the config's device; one per outlier run ({runs}); measured on {here.n_points:,} "
             "points, scaled as the KDE (all pairs in blocks, top-k per row; the top-k's k grows with the points, "
             "its log factor is left out)"),
        Part("ToMATo", f"ToMATo on {cfg.n_points:,} points, k = {k} (the largest k)", lambda: tomato(ds.X, g, k=k),
             steps=runs * (len(cfg.k_grid) + 2), runs_on="cpu", repeat=1, scale=ratio,
             note=f"measured on {here.n_points:,} points, scaled linearly (a k-NN graph and union-find); "
             f"{runs} outlier runs (seeds x fractions) x ({len(cfg.k_grid)} k + reference + DTM control); "
             "measured at the largest k, an upper bound"),
        Part("ToMAToMP", f"ToMAToMP on a {cfg.mp_subsample_size:,}-point subsample with {cfg.n_lines} lines, labels "
             f"for all {cfg.n_points:,} points", lambda: run_tomato_mp(here, ds.X, g, robust=True),
             steps=runs * 3, runs_on="cpu", repeat=1,
             note=f"measured with {here.n_points:,} points (the module is on the subsample; labelling the rest is "
             "small); plain, robust and wide-radius runs per outlier run; the MMA runs on the CPU (multipers)"),
    ]
    if dry:
        for part in found:
            part.note += "; dry: 2,000 points, a 200-point subsample and 10 lines"
    paper_scale = ("partly: 100,000 points with up to 10% outliers; ToMAToMP subsamples 1,500 points for the "
                   "multi-parameter module, and HDBSCAN is skipped above 20,000 points")
    return found, paper_scale, ("the KDE and DTM are torch on the config's device (GPU parts here); ToMATo and "
                                "ToMAToMP's module are CPU code (its nearest-label step follows the device); "
                                "k_sweep, datasets and two_functions parts are small and not in the plan")
