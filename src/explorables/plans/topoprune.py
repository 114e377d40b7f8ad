"""Plan of topoprune's ``paper`` preset: the feature networks, the persistence scores (gudhi, CPU) and the MLPs
trained on the kept subsets."""

from __future__ import annotations

import math

import numpy as np

from ..core.plan import Part, parameter_count
from ..topoprune.experiment import END_MODES, END_SCORED, METHODS, VIEWS
from ..topoprune.models import ARCHITECTURES, Split, make_network, train_feature_network, train_on_subsets
from ..topoprune.persistence import persistence_scores

CIFAR_SHAPE = (3, 32, 32)
FEATURE_BATCH = 128  # train_feature_network's default batch
#: points per measured persistence step (the scores are per neighbourhood: the cost grows with the points)
SCORE_CHUNK = 1000
D_FEATURES = 64  # the MLP's penultimate width


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    rng = np.random.default_rng(0)
    seeds = len(cfg.seeds)
    n_pool = cfg.n_pool
    n_here = 2 * FEATURE_BATCH

    def split_of(n: int) -> Split:  # synthetic images of CIFAR-10's shape
        x = rng.random((n, *CIFAR_SHAPE), dtype=np.float32)
        y = np.arange(n) % 10
        return Split(x, y, x[:20], y[:20])

    small = split_of(n_here)
    found = []
    for arch in ARCHITECTURES:
        one_batch = Split(small.x_train[:FEATURE_BATCH], small.y_train[:FEATURE_BATCH], small.x_test, small.y_test)
        found.append(Part(
            f"feature network ({arch})", f"one Adam step of the {arch} on {FEATURE_BATCH} images",
            lambda one_batch=one_batch, arch=arch: train_feature_network(arch, one_batch, n_epochs=1),
            steps=cfg.n_feature_epochs * math.ceil(n_pool / FEATURE_BATCH) * seeds,
            parameters=parameter_count(make_network(arch, small)), resident_bytes=n_pool * 4 * math.prod(CIFAR_SHAPE),
            note="the step includes scoring 20 test images"))
    chunk = 200 if dry else SCORE_CHUNK
    feats = rng.normal(size=(chunk, D_FEATURES))
    found.append(Part(
        "persistence scores", f"TopoPrune's scores of {SCORE_CHUNK} samples (gudhi Rips, H0{'+H1' * cfg.use_h1})",
        lambda: persistence_scores(feats, cfg.n_neighbours, int(cfg.use_h1), 1), runs_on="cpu", precision="fp64",
        steps=math.ceil(n_pool / SCORE_CHUNK) * len(VIEWS) * seeds,
        operations=float(SCORE_CHUNK * (cfg.n_neighbours + 1) ** 3),  # a Rips complex's triangles per neighbourhood
        note=f"{len(VIEWS)} views x {seeds} seeds, one process (workers spread it over cores); synthetic "
        f"{D_FEATURES}-wide features" + (f"; dry: {chunk} samples" if dry else "")))
    top = max(cfg.prune_grid)
    kept = round((1 - top) * n_pool)
    members = (len(VIEWS) * (len(METHODS) - 1 + cfg.n_random_draws) + len(END_MODES) * len(END_SCORED)) * cfg.n_inits
    big = split_of(64 if dry else kept)

    def subsets_at(b: int):
        subs = [np.arange(len(big.y_train))] * b
        return lambda: train_on_subsets(big, subs, n_steps=1, seed=0)

    found.append(Part(
        "subset training", f"one full-batch Adam step of {members} MLPs on {kept:,} kept images each (rate {top})",
        None, step_at=subsets_at, batch=members, small_batches=(1, 2), steps=cfg.n_train_steps * seeds,
        parameters=members * parameter_count(make_network("mlp", small)),
        note="the highest rate's batched training (the lower rates train fewer members), extrapolated in the "
        "number of members" + (f"; dry: {len(big.y_train)} images per member" if dry else "")))
    paper_scale = ("partly: CIFAR-10's 50,000 training images with small MLP / CNN feature networks; the paper prunes "
                   "with ResNet features and trains ResNets on the kept subsets")
    return found, paper_scale, "UMAP layouts (the diagnosis) are not in the plan"
