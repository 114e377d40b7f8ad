"""The chapter's reduced-scale reproduction, one code path for every scale.

Per seed: split the data into a training pool and a test set; train the two feature networks (an
MLP and a small CNN) on the whole pool; take their penultimate features; add Gaussian noise to a
copy of the MLP's features (the latent perturbation). For each of the three feature views
(MLP, CNN, noisy MLP) every method scores the pool and keeps a class-balanced subset at every
pruning rate; an MLP on the raw pixels is then trained from scratch on each subset and tested.
TopoPrune's score is the total persistence of each sample's neighbourhood in the features
(:func:`~explorables.topoprune.persistence.persistence_scores`). On the first seed, :func:`diagnose`
measures why the first version's score (displacement under the descent, on the UMAP layout) was
unstable.

* in-architecture accuracy: MLP features select, the MLP trains;
* transfer: CNN features select, the MLP trains ("select with one architecture, train the other");
* robustness: the noisy MLP features select; we compare accuracy, kept-set overlap (Jaccard) and
  the rank correlation of the scores with the clean run.

Parts: ``persistence_check`` (eq. topoprune-pers against gudhi) and one part per seed; the
summary per method, view and rate (mean ± sd over seeds) is assembled from the seeds' parts.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, ClassVar

import numpy as np
import torch
from scipy.stats import spearmanr

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Bool, Choice, Float, Int, Positive, Seeds, Tuple, param
from .embedding import knn_radius, pca_embedding, umap_embedding, warm_up_umap
from .models import (
    ARCHITECTURES,
    Split,
    add_feature_noise,
    cifar_split,
    digits_split,
    extract_features,
    train_feature_network,
    train_on_subsets,
)
from .persistence import (
    averaged_knn_radius,
    flag_pairs,
    neighbourhoods,
    one_thread,
    pair_changes,
    persistence_scores,
    persistence_values,
    topological_scores,
)
from .selection import (
    SELECTIONS,
    ccs_selection,
    centre_distance,
    coverage_offsets,
    d2_selection,
    random_selection,
    select_by_score,
)

METHODS: tuple[str, ...] = ("random", "centre", "d2", "ccs", "radius", "topoprune")
METHOD_NAMES: dict[str, str] = {
    "random": "random",
    "centre": "distance to class centre",
    "d2": "D2-style graph",
    "ccs": "coverage-centric (CCS)",
    "radius": "averaged kNN radius (control)",
    "topoprune": "TopoPrune",
}
BASELINES: tuple[str, ...] = ("random", "centre", "d2", "ccs")
SCORED: tuple[str, ...] = ("centre", "radius", "topoprune")  # methods with a per-sample score
#: kept sets measured (overlap clean vs noisy) but not trained: the centre distance by TopoPrune's rule;
#: TopoPrune and the control keeping their lowest scores (the centre distance's own rule)
KEPT_ONLY: tuple[str, ...] = ("centre_rule", "topoprune_low", "radius_low")
VIEWS: tuple[str, ...] = ("mlp", "cnn", "mlp_noisy")
LOWER_RATE_VIEWS: tuple[str, ...] = ("mlp",)  # views trained below the highest rate (no verdict reads them)
END_MODES: tuple[str, ...] = ("easy", "hard")  # the ends of a score: lowest / highest (top-k selection)
END_SCORED: tuple[str, ...] = ("radius", "topoprune")  # scored, with the ends also trained
#: the control row's pair: at the highest rate on the MLP features both are also trained on the other grid
#: offsets of the evenly spaced rule (``n_control_offsets``), and the control row reads their offset means
CONTROL_PAIR: tuple[str, ...] = ("radius", "topoprune")
#: the diagnosis of the first version's score: the scores compared, and the perturbations
#: one change at a time: each row differs from the one above in one thing (rescaling; displacement ->
#: value; the layout's k -> TopoPrune's k; layout -> latent features; then, after TopoPrune, without the
#: averaging over memberships: what the averaging adds to the stability)
VARIANTS: tuple[str, ...] = ("first", "unscaled", "layout_values", "layout_values_wide", "topoprune", "own")
VARIANT_NAMES: dict[str, str] = {
    "first": "first version: displacement, rescaled neighbourhoods, UMAP layout, layout's k",
    "unscaled": "displacement, neighbourhoods not rescaled, UMAP layout, layout's k",
    "layout_values": "total persistence (a value), UMAP layout, layout's k",
    "layout_values_wide": "total persistence (a value), UMAP layout, TopoPrune's k",
    "topoprune": "total persistence (a value), latent features, TopoPrune's k: TopoPrune now",
    "own": "the same, own neighbourhood only (not averaged over the neighbourhoods holding a sample)",
}
PERTURBATIONS: tuple[str, ...] = ("noise", "umap_seed", "extractor", "jitter", "jitter_large")
PERTURBATION_NAMES: dict[str, str] = {
    "noise": "feature noise", "umap_seed": "another UMAP seed", "extractor": "CNN instead of MLP features",
    "jitter": "small jitter of the points scored", "jitter_large": "larger jitter of the points scored",
}  # fmt: skip
DATASETS: tuple[str, ...] = ("digits", "cifar10", "cifar100")
EMBEDDERS: tuple[str, ...] = ("umap", "pca")


@dataclass(frozen=True)
class TopoPruneConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    dataset: str = param("digits", Choice(DATASETS), "data: scikit-learn's bundled digits, or CIFAR from data_root")
    seeds: tuple[int, ...] = param(tuple(range(12)), Seeds(), "seeds (split, networks, UMAP, noise, training)")
    test_fraction: float = param(0.5, Float(0.05, 0.5), "digits: fraction of each class held out for testing")
    n_pool: int = param(50_000, Int(30), "CIFAR: training images used as the pool (digits: all of the split)")
    prune_grid: tuple[float, ...] = param(
        (0.7, 0.9), Tuple(Float(0, 1, low_inclusive=False, high_inclusive=False), increasing=True),
        "pruning rates: the fraction of the pool removed",
    )
    noise: float = param(0.5, Float(0.0, 10.0), "feature noise, in units of each latent feature's standard deviation")
    n_feature_epochs: int = param(15, Int(1), "epochs of the feature networks on the whole pool")
    embedder: str = param("umap", Choice(EMBEDDERS), "global embedding: UMAP (the method), or PCA (tests only)")
    d_embed: int = param(2, Int(1, 64), "dimension of the UMAP embedding")
    n_umap_neighbours: int = param(15, Int(2), "UMAP's n_neighbors")
    n_umap_epochs: int = param(100, Int(10), "UMAP's optimisation epochs")
    n_neighbours: int = param(30, Int(3, 64), "k: size of each sample's neighbourhood in the latent features")
    use_h1: bool = param(False, Bool(), "include H1 (loops) in the total persistence, not only H0")
    diagnose: bool = param(True, Bool(), "first seed: measure why the first version's layout score was unstable")
    layout_neighbours: int = param(15, Int(3, 64), "diagnosis: k in the UMAP layout (the first version's score, "
                                   "and the total persistence on the layout at the same k)")
    n_topo_steps: int = param(2, Int(1, 50), "diagnosis: T, descent steps of eq. (topoprune-step)")
    topo_lr: float = param(0.05, Positive(), "diagnosis: eta, step size of eq. (topoprune-step)")
    jitter: float = param(0.01, Float(0.0, 1.0), "diagnosis: jitter, in units of the median nearest-neighbour distance")
    jitter_large: float = param(
        0.25, Float(0.0, 1.0), "diagnosis: larger jitter (flips many pairs, keeps most neighbours), same units"
    )
    topo_selection: str = param("coverage", Choice(SELECTIONS), "how TopoPrune keeps samples by score in a class")
    n_graph_neighbours: int = param(15, Int(1, 64), "D2: neighbours in each class's kNN graph")
    n_strata: int = param(10, Int(1), "CCS: strata of the score range")
    hard_cutoff: float = param(0.1, Float(0.0, 0.9), "CCS: fraction of hardest samples dropped first")
    n_train_steps: int = param(100, Int(1), "full-batch Adam steps of the MLP trained on each kept subset")
    n_random_draws: int = param(4, Int(1, 100), "random selection: class-balanced draws per view and rate (accuracy "
                                "averaged: the reference every method is compared with)")
    n_control_offsets: int = param(9, Int(1, 99), "control row only: TopoPrune and the control (MLP features, highest "
                                   "rate) each trained on this many offsets (j + 1/2)/K of the evenly spaced rule's "
                                   "rank grid, the row reading their mean accuracies (odd: the centre offset, every "
                                   "other row's kept set, is among them)")
    n_inits: int = param(2, Int(1, 100), "initialisations of the MLP trained on each subset at the highest pruning "
                         "rate (accuracy averaged; the other rates train once)")
    paired_inits: bool = param(True, Bool(), "every method's subset trains from the same initialisations (paired "
                               "differences free of initialisation noise); False: each subset its own")
    processes: int = param(2, Int(1, 64), "processes for the seeds: this one and a worker that takes its share "
                           "(1: all here); the numbers are the same for any count")
    n_check_clouds: int = param(20, Int(1), "neighbourhoods on which eq. (topoprune-pers) is compared with gudhi")
    workers: int = param(1, Int(0), "processes for gudhi's persistence pairs; 0: all cores (same numbers for any n)")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(seeds=(0,), embedder="pca", prune_grid=(0.9,), n_feature_epochs=4, n_umap_epochs=30,
                      n_topo_steps=1, n_train_steps=60, n_check_clouds=5, n_neighbours=15, n_random_draws=2,
                      processes=1),
        "book": {},
        "paper": dict(dataset="cifar10", device="auto", seeds=(0, 1, 2, 3, 4), n_feature_epochs=60, processes=1,
                      n_umap_epochs=200, n_train_steps=2000, d_embed=8, n_check_clouds=100, workers=0, use_h1=True),
    }  # fmt: skip
    DATA_ROOT_SCALES: ClassVar[tuple[str, ...]] = ("paper",)
    DATA_DESCRIPTION: ClassVar[str] = "torchvision's cifar-10-batches-py/ (or cifar-100-python/) folder"


class TopoPruneResults(Results[TopoPruneConfig]):
    """What :func:`run` returns: per-seed parts, the aggregated ``methods`` summary and the figures' arrays."""


def load_split(cfg: TopoPruneConfig, rng: np.random.Generator) -> Split:
    """The pool and test set of ``cfg.dataset``."""
    if cfg.dataset == "digits":
        return digits_split(cfg.test_fraction, rng)
    if not cfg.data_root:
        raise ValueError(f"dataset {cfg.dataset!r} needs data_root (a folder with torchvision's CIFAR layout)")
    return cifar_split(cfg.data_root, cfg.dataset, cfg.n_pool)


def embed(cfg: TopoPruneConfig, features: np.ndarray, seed: int) -> np.ndarray:
    """The global embedding of ``features`` (UMAP, or PCA in the ``smoke`` preset)."""
    if cfg.embedder == "pca":
        return pca_embedding(features, d_embed=cfg.d_embed)
    return umap_embedding(features, d_embed=cfg.d_embed, n_neighbours=cfg.n_umap_neighbours,
                          n_epochs=cfg.n_umap_epochs, seed=seed)  # fmt: skip


def select_all(
    cfg: TopoPruneConfig, features: np.ndarray, labels: np.ndarray, rng: np.random.Generator, ccs_seed: int = 0
) -> tuple[dict[str, np.ndarray], dict[str, dict[float, np.ndarray]], dict[float, list[np.ndarray]]]:
    """Every method's scores (where it has one) and kept indices at every rate, for one feature view.

    TopoPrune and the control see only the features (no labels) for their scores; labels enter only
    through the class-balanced budget. ``kept["centre_rule"]`` (not trained) keeps by the centre distance
    with TopoPrune's rule; ``kept["topoprune_low"]`` and ``kept["radius_low"]`` (not trained either) keep
    the lowest scores of each class, the rule of the centre distance itself: under it the kept set is
    decided by the ranking alone, so the score's stability can show in it (the robustness claim's
    primary part; under evenly spaced ranks the kept sets of the scores measured here sit near random's).
    The third value holds ``cfg.n_random_draws`` random draws per rate; ``kept["random"]`` is the first
    (the one whose overlap is measured), the accuracy of random selection their mean.
    CCS samples inside its strata from its own generator, seeded by ``ccs_seed`` and the rate, not from
    ``rng``: every view of a seed gets the same seed, so CCS's kept sets on clean and noisy features
    differ only where its scores do (random selection's draws come from ``rng``: two views' draws are
    independent, the floor of the kept-set overlap).
    """
    scores = {
        "centre": centre_distance(features, labels),
        "radius": averaged_knn_radius(features, cfg.n_neighbours),
        "topoprune": persistence_scores(features, cfg.n_neighbours, int(cfg.use_h1), cfg.workers),
    }
    kept: dict[str, dict[float, np.ndarray]] = {m: {} for m in (*METHODS, *KEPT_ONLY)}
    draws: dict[float, list[np.ndarray]] = {}
    for j, rate in enumerate(cfg.prune_grid):
        draws[rate] = [random_selection(labels, rate, rng) for _ in range(cfg.n_random_draws)]
        kept["random"][rate] = draws[rate][0]
        kept["centre"][rate] = select_by_score(scores["centre"], labels, rate, "easy")
        kept["centre_rule"][rate] = select_by_score(scores["centre"], labels, rate, cfg.topo_selection)
        kept["d2"][rate] = d2_selection(features, labels, rate, n_neighbours=cfg.n_graph_neighbours)
        kept["ccs"][rate] = ccs_selection(scores["centre"], labels, rate, np.random.default_rng([ccs_seed, j]),
                                          n_strata=cfg.n_strata, hard_cutoff=cfg.hard_cutoff)  # fmt: skip
        kept["radius"][rate] = select_by_score(scores["radius"], labels, rate, cfg.topo_selection)
        kept["topoprune_low"][rate] = select_by_score(scores["topoprune"], labels, rate, "easy")
        kept["radius_low"][rate] = select_by_score(scores["radius"], labels, rate, "easy")
        kept["topoprune"][rate] = select_by_score(scores["topoprune"], labels, rate, cfg.topo_selection)
    return scores, kept, draws


def within_class_spearman(a: np.ndarray, b: np.ndarray, labels: np.ndarray) -> float:
    """Mean over classes of the Spearman correlation of ``a`` and ``b`` within each class: the ranking that
    a class-balanced selection actually reads (the pooled Spearman also counts differences between the
    classes' score ranges, which no within-class selection sees). Classes with fewer than 3 samples, or
    a constant score, are left out; with one class it is the pooled Spearman."""
    a, b, labels = np.asarray(a, dtype=float), np.asarray(b, dtype=float), np.asarray(labels)
    if not a.shape == b.shape == labels.shape or a.ndim != 1:
        raise ValueError(f"a, b and labels must be 1-D of one length, got {a.shape}, {b.shape}, {labels.shape}")
    rhos = []
    for c in np.unique(labels):
        i = labels == c
        if i.sum() >= 3 and np.ptp(a[i]) > 0 and np.ptp(b[i]) > 0:
            rhos.append(float(spearmanr(a[i], b[i])[0]))
    if not rhos:
        raise ValueError("labels: no class has 3 or more samples with non-constant scores")
    return float(np.mean(rhos))


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Overlap of two kept sets, ``|a ∩ b| / |a ∪ b|``."""
    a, b = set(np.asarray(a).tolist()), set(np.asarray(b).tolist())
    return len(a & b) / max(len(a | b), 1)


def example_neighbourhoods(cfg: TopoPruneConfig, features: np.ndarray, scores: np.ndarray) -> list[dict[str, Any]]:
    """The samples of lowest, median and highest TopoPrune score: their neighbourhood in the latent features
    (drawn on its first two principal axes) and its persistence diagram (gudhi's pairs, torch distances)."""
    hoods = neighbourhoods(features, cfg.n_neighbours)
    order = np.argsort(scores)
    out = []
    for label, i in (("lowest score", order[0]), ("median score", order[len(order) // 2]),
                     ("highest score", order[-1])):  # fmt: skip
        cloud = np.asarray(features[hoods[i]] - features[i], dtype=np.float64)
        d0, h1 = persistence_values(torch.as_tensor(cloud), flag_pairs(cloud, 1))
        _, _, vt = np.linalg.svd(cloud - cloud.mean(0), full_matrices=False)
        out.append({"label": label, "index": int(i), "score": float(scores[i]), "cloud": cloud @ vt[:2].T,
                    "h0": d0.numpy(), "h1": h1.numpy()})  # fmt: skip
    return out


def diagnose(cfg: TopoPruneConfig, features: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, Any]:
    """Why the first version's score was unstable: each variant of :data:`VARIANTS` scored on the clean MLP
    features and under each perturbation of :data:`PERTURBATIONS`; its Spearman with the clean score.

    From the first version to TopoPrune now, one change at a time: no rescaling of the neighbourhoods; a
    value of the diagram (total persistence, still with the layout's ``k``, ``cfg.layout_neighbours``)
    instead of the displacement under the descent (a function of the pairs); TopoPrune's ``k``
    (``cfg.n_neighbours``) instead of the layout's; the latent features instead of the UMAP layout. The
    jitters move the scored points (layout or features) by ``cfg.jitter`` (and ``cfg.jitter_large``) × their
    median nearest-neighbour distance: at a fixed layout that keeps most neighbours, it measures how much
    the pairs flipping, together with the rotated edge directions the displacement is made of, move a
    score, and :func:`pair_changes` counts
    how many pairs (and neighbours) each perturbation actually changes. Every layout uses one UMAP
    seed except under ``umap_seed``; TopoPrune now reads no layout, so UMAP's seed cannot move it (1).
    """
    seeds = [int(rng.integers(2**31)) for _ in range(2)]
    inputs = {"clean": (features["mlp"], seeds[0]), "noise": (features["mlp_noisy"], seeds[0]),
              "umap_seed": (features["mlp"], seeds[1]), "extractor": (features["cnn"], seeds[0])}  # fmt: skip
    layouts = {k: embed(cfg, f, s) for k, (f, s) in inputs.items()}
    h = int(cfg.use_h1)

    def jittered(points: np.ndarray, size: float) -> np.ndarray:
        scale = float(np.median(knn_radius(points, 1)))
        return points + size * scale * rng.standard_normal(points.shape)

    layouts["jitter"] = jittered(layouts["clean"], cfg.jitter)
    feats = {"clean": features["mlp"], "noise": features["mlp_noisy"], "umap_seed": features["mlp"],
             "extractor": features["cnn"], "jitter": jittered(features["mlp"], cfg.jitter)}  # fmt: skip
    layouts["jitter_large"] = jittered(layouts["clean"], cfg.jitter_large)  # drawn after the others: they stay
    feats["jitter_large"] = jittered(features["mlp"], cfg.jitter_large)
    k, steps, lr, w = cfg.layout_neighbours, cfg.n_topo_steps, cfg.topo_lr, cfg.workers
    score = {
        "first": lambda Z: topological_scores(Z, k, steps, lr, h, w),
        "unscaled": lambda Z: topological_scores(Z, k, steps, lr, h, w, rescale=False),
        "layout_values": lambda Z: persistence_scores(Z, k, h, w),
        "layout_values_wide": lambda Z: persistence_scores(Z, cfg.n_neighbours, h, w),
    }
    rho: dict[str, dict[str, float]] = {}
    for v, f in score.items():
        clean = f(layouts["clean"])
        rho[v] = {p: float(spearmanr(clean, f(layouts[p]))[0]) for p in PERTURBATIONS}
    clean = persistence_scores(feats["clean"], cfg.n_neighbours, h, w)
    rho["topoprune"] = {p: 1.0 if p == "umap_seed" else float(spearmanr(
        clean, persistence_scores(feats[p], cfg.n_neighbours, h, w))[0]) for p in PERTURBATIONS}  # fmt: skip

    def own(points: np.ndarray) -> np.ndarray:  # not averaged over memberships; draws nothing
        return persistence_scores(points, cfg.n_neighbours, h, w, average=False)

    rho["own"] = {p: 1.0 if p == "umap_seed" else float(spearmanr(own(feats["clean"]), own(feats[p]))[0])
                  for p in PERTURBATIONS}  # fmt: skip
    # what each perturbation does to the neighbourhoods and their H0 pairs: in the layout with the first
    # version's k (uniform rescaling changes no pair), and in the features with TopoPrune's k
    pairs = {"layout": {p: pair_changes(layouts["clean"], layouts[p], k) for p in PERTURBATIONS},
             "features": {p: pair_changes(feats["clean"], feats[p], cfg.n_neighbours) for p in PERTURBATIONS}}
    return {"spearman": rho, "pairs": pairs, "layouts": {"mlp": layouts["clean"], "mlp_noisy": layouts["noise"]}}


def _seed(cfg: TopoPruneConfig, seed: int) -> tuple[dict, dict]:
    """One seed: features, every view's selections, one batched training per rate. With ``cfg.processes``
    > 1 every thread pool runs on one thread (:func:`~explorables.topoprune.persistence.one_thread`: the
    processes share the cores; the numbers are the same, tested)."""
    with one_thread() if cfg.processes > 1 else nullcontext():
        return _one_seed(cfg, seed)


def _one_seed(cfg: TopoPruneConfig, seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng([cfg.seed, seed])
    device = resolve_device(cfg.device)
    split = load_split(cfg, rng)
    y = split.y_train
    features, net_accuracy = {}, {}
    for j, arch in enumerate(ARCHITECTURES):
        net, acc = train_feature_network(arch, split, n_epochs=cfg.n_feature_epochs,
                                         seed=int(rng.integers(2**31)) + j, device=device)  # fmt: skip
        features[arch], net_accuracy[arch] = extract_features(net, split.x_train, device), acc
    features["mlp_noisy"] = add_feature_noise(features["mlp"], cfg.noise, rng)
    scores, kept, draws = {}, {}, {}
    ccs_seed = int(rng.integers(2**31))  # one for every view: CCS's kept sets differ only where its scores do
    for view in VIEWS:
        scores[view], kept[view], draws[view] = select_all(cfg, features[view], y, rng, ccs_seed)
    train_seed = int(rng.integers(2**31))
    accuracy: dict[str, dict[str, dict[str, float]]] = {v: {m: {} for m in METHODS} for v in VIEWS}
    # the same scores kept at either end instead of by cfg.topo_selection (MLP features): does the
    # selection rule, rather than the score, decide the accuracy?
    ends = {mode: {m: {} for m in END_SCORED} for mode in END_MODES}
    top = max(cfg.prune_grid)
    # the control row's extra grid offsets (every offset but the centre one, which is the method's own kept set)
    offsets = coverage_offsets(cfg.n_control_offsets) if cfg.topo_selection == "coverage" else (0.5,)
    extra = [u for u in offsets if u != 0.5]
    for rate in cfg.prune_grid:
        # one batched training per rate. Every verdict reads the highest rate: there every view's methods,
        # random selection's draws and the ends train; at the other rates only the MLP view's methods and
        # draws (the accuracy table and figure). Paired: the c-th initialisation of every member is the
        # same weights, so a difference between two methods at the same c is free of initialisation noise.
        views = VIEWS if rate == top else LOWER_RATE_VIEWS
        members = [(v, m, kept[v][m][rate]) for v in views for m in METHODS if m != "random"]
        members += [(v, "random", d) for v in views for d in draws[v][rate]]
        if rate == top:
            members += [(mode, m, select_by_score(scores["mlp"][m], y, rate, mode)) for mode in END_MODES
                        for m in END_SCORED]  # fmt: skip
            # appended last: every member trains independently, so the ones above keep their numbers
            members += [(f"offset_{u!r}", m, select_by_score(scores["mlp"][m], y, rate, cfg.topo_selection, u))
                        for u in extra for m in CONTROL_PAIR]  # fmt: skip
        inits = cfg.n_inits if rate == top else 1
        accs = train_on_subsets(split, [sub for _, _, sub in members] * inits, n_steps=cfg.n_train_steps,
                                seed=train_seed, device=device,
                                inits=np.repeat(np.arange(inits), len(members)) if cfg.paired_inits else None,
                                ).reshape(inits, -1).mean(0)  # fmt: skip
        found: dict[tuple[str, str], list[float]] = {}
        for (where, m, _), a in zip(members, accs, strict=True):
            found.setdefault((where, m), []).append(float(a))
        for (where, m), a in found.items():
            if where.startswith("offset_"):
                continue
            (accuracy[where] if where in VIEWS else ends[where])[m][str(rate)] = float(np.mean(a))
        if rate == top:  # per offset, in coverage_offsets order (the centre one is the MLP view's own member)
            control_by_offset = {m: [accuracy["mlp"][m][str(top)] if u == 0.5 else found[(f"offset_{u!r}", m)][0]
                                     for u in offsets] for m in CONTROL_PAIR}  # fmt: skip
    full = float(train_on_subsets(split, [np.arange(len(y))], n_steps=cfg.n_train_steps, seed=train_seed,
                                  device=device)[0])  # fmt: skip
    # how far the noise moves the features, next to the neighbourhoods' size (the stability theorem's bound
    # needs the first to be small next to the second), and how many neighbours a neighbourhood keeps
    hoods = {v: neighbourhoods(features[v], cfg.n_neighbours)[:, 1:] for v in ("mlp", "mlp_noisy")}
    noise_geometry = {
        "noise_norm": float(np.linalg.norm(features["mlp_noisy"] - features["mlp"], axis=1).mean()),
        "kth_distance": float(np.linalg.norm(features["mlp"][hoods["mlp"][:, -1]] - features["mlp"], axis=1).mean()),
        "hood_overlap": float(np.mean([len(set(a) & set(b)) / cfg.n_neighbours
                                       for a, b in zip(hoods["mlp"], hoods["mlp_noisy"], strict=True)])),
    }  # fmt: skip
    summary = {
        "n_pool": len(y), "n_test": len(split.y_test), "net_accuracy": net_accuracy,
        "full_accuracy": full, "accuracy": accuracy, "ends": ends, "control_by_offset": control_by_offset,
        "jaccard": {m: {str(r): jaccard(kept["mlp"][m][r], kept["mlp_noisy"][m][r]) for r in cfg.prune_grid}
                    for m in (*METHODS, *KEPT_ONLY)},
        "spearman_noise": {m: float(spearmanr(scores["mlp"][m], scores["mlp_noisy"][m])[0]) for m in SCORED},
        "spearman_transfer": {m: float(spearmanr(scores["mlp"][m], scores["cnn"][m])[0]) for m in SCORED},
        # the same within each class (mean over classes): the ranking a class-balanced selection reads
        "spearman_noise_within": {m: within_class_spearman(scores["mlp"][m], scores["mlp_noisy"][m], y)
                                  for m in SCORED},
        "spearman_transfer_within": {m: within_class_spearman(scores["mlp"][m], scores["cnn"][m], y)
                                     for m in SCORED},
        "spearman_control": float(spearmanr(scores["mlp"]["topoprune"], scores["mlp"]["radius"])[0]),
        # TopoPrune against the control within each class (mean over classes): how alike the two rank the samples
        # a class-balanced selection reads (the pooled figure above also counts the classes' score ranges)
        "spearman_control_within": within_class_spearman(scores["mlp"]["topoprune"], scores["mlp"]["radius"], y),
        "noise_geometry": noise_geometry,
    }  # fmt: skip
    curves: dict[str, Any] = {}
    if seed == cfg.seeds[0]:
        kept_shown = {v: {m: {str(r): kept[v][m][r] for r in cfg.prune_grid} for m in ("topoprune", "centre")}
                      for v in ("mlp", "mlp_noisy")}  # fmt: skip
        curves = {"labels": y, "scores": {v: scores[v]["topoprune"] for v in ("mlp", "mlp_noisy")},
                  "kept": kept_shown,
                  "examples": example_neighbourhoods(cfg, features["mlp"], scores["mlp"]["topoprune"])}  # fmt: skip
        if cfg.diagnose:  # its own generator: the seed's other draws stay as they are without it
            found = diagnose(cfg, features, np.random.default_rng([cfg.seed, seed, 1]))
            summary["diagnosis"] = found["spearman"]
            summary["diagnosis_pairs"] = found["pairs"]
            curves["embedding"] = found["layouts"]
        else:
            curves["embedding"] = {v: pca_embedding(features[v]) for v in ("mlp", "mlp_noisy")}
    return summary, curves


def _persistence_check(cfg: TopoPruneConfig) -> tuple[dict, dict]:
    """Eq. (topoprune-pers) against gudhi's own diagram on random neighbourhood-sized clouds: largest gap."""
    rng = np.random.default_rng([cfg.seed, 7])
    import gudhi

    gaps = []
    for _ in range(cfg.n_check_clouds):
        cloud = rng.standard_normal((cfg.n_neighbours + 1, 2))
        tree = gudhi.RipsComplex(points=cloud).create_simplex_tree(max_dimension=2)
        tree.compute_persistence()
        d0, h1 = persistence_values(torch.as_tensor(cloud), flag_pairs(cloud, 1))
        ref0 = np.sort(tree.persistence_intervals_in_dimension(0)[:, 1])
        ref0 = ref0[np.isfinite(ref0)]
        ref1 = tree.persistence_intervals_in_dimension(1).reshape(-1, 2)
        ours1, ref1 = h1.numpy()[np.lexsort(h1.numpy().T)], ref1[np.lexsort(ref1.T)]
        gaps.append(max(np.abs(np.sort(d0.numpy()) - ref0).max(initial=0.0),
                        np.abs(ours1 - ref1).max(initial=0.0)))  # fmt: skip
    return {"n_clouds": cfg.n_check_clouds, "max_gap": float(max(gaps))}, {}


def _mean_sd(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0, "values": arr.tolist()}


def aggregate(cfg: TopoPruneConfig, parts: list[dict]) -> dict[str, Any]:
    """Mean ± sd over seeds of every measured number (per view, method and rate)."""
    rates = [str(r) for r in cfg.prune_grid]
    out: dict[str, Any] = {"accuracy": {}, "noise_change": {}, "transfer_change": {}, "jaccard": {}}
    top = rates[-1]
    # trained rates: every rate for the MLP view, the highest only for the others and the ends (see _seed)
    trained = {v: rates if v in LOWER_RATE_VIEWS else [top] for v in VIEWS}
    for v in VIEWS:
        out["accuracy"][v] = {m: {r: _mean_sd([p["accuracy"][v][m][r] for p in parts]) for r in trained[v]}
                              for m in METHODS}  # fmt: skip
    for m in METHODS:
        out["noise_change"][m] = {top: _mean_sd([p["accuracy"]["mlp_noisy"][m][top] - p["accuracy"]["mlp"][m][top]
                                                 for p in parts])}  # fmt: skip
        out["transfer_change"][m] = {top: _mean_sd([p["accuracy"]["cnn"][m][top] - p["accuracy"]["mlp"][m][top]
                                                    for p in parts])}  # fmt: skip
        out["jaccard"][m] = {r: _mean_sd([p["jaccard"][m][r] for p in parts]) for r in rates}
    for k in KEPT_ONLY:
        out["jaccard"][k] = {r: _mean_sd([p["jaccard"][k][r] for p in parts]) for r in rates}
    out["ends"] = {mode: {m: {top: _mean_sd([p["ends"][mode][m][top] for p in parts])}
                          for m in END_SCORED} for mode in END_MODES}  # fmt: skip
    # the control row's accuracies: per seed the mean over the grid offsets (the centre one alone at K = 1)
    out["control_accuracy"] = {m: {top: _mean_sd([float(np.mean(p["control_by_offset"][m])) for p in parts])}
                               for m in CONTROL_PAIR}  # fmt: skip
    out["spearman_control"] = _mean_sd([p["spearman_control"] for p in parts])
    out["spearman_control_within"] = _mean_sd([p["spearman_control_within"] for p in parts])
    out["noise_geometry"] = {k: _mean_sd([p["noise_geometry"][k] for p in parts]) for k in parts[0]["noise_geometry"]}
    out["spearman_noise"] = {m: _mean_sd([p["spearman_noise"][m] for p in parts]) for m in SCORED}
    out["spearman_transfer"] = {m: _mean_sd([p["spearman_transfer"][m] for p in parts]) for m in SCORED}
    for key in ("spearman_noise_within", "spearman_transfer_within"):
        out[key] = {m: _mean_sd([p[key][m] for p in parts]) for m in SCORED}
    out["full_accuracy"] = _mean_sd([p["full_accuracy"] for p in parts])
    out["net_accuracy"] = {a: _mean_sd([p["net_accuracy"][a] for p in parts]) for a in ARCHITECTURES}
    out["n_pool"], out["n_test"] = parts[0]["n_pool"], parts[0]["n_test"]
    if "diagnosis" in parts[0]:  # first seed only
        out["diagnosis"] = parts[0]["diagnosis"]
        out["diagnosis_pairs"] = parts[0]["diagnosis_pairs"]
    return out


def _warm_up(cfg: TopoPruneConfig) -> float:
    with one_thread() if cfg.processes > 1 else nullcontext():  # beside the worker process, as the seeds
        return warm_up_umap()


class SeedShare:
    """The pending seeds shared between this process and ``n_workers`` worker processes as they go.

    This process runs its parts in order, from the front (:meth:`part`); each worker takes the last seed
    nobody has started, one at a time, until the two meet; ``keep`` (the first seed, with the diagnosis
    and the curves, after UMAP's warm-up here) is never given away. Whichever runs a seed, it is the
    same deterministic function of the config: the split changes no number, only who finishes when.
    """

    def __init__(self, cfg: TopoPruneConfig, pending: Sequence[int], pool: ProcessPoolExecutor | None,
                 n_workers: int, keep: int | None = None) -> None:  # fmt: skip
        self.cfg, self.pool, self.keep = cfg, pool, keep
        self.left = list(pending)  # seeds nobody has started
        self.futures: dict[int, Future] = {}
        self.lock = threading.Lock()
        self.feeders = [threading.Thread(target=self._feed, daemon=True) for _ in range(n_workers if pool else 0)]
        for feeder in self.feeders:
            feeder.start()

    def _feed(self) -> None:
        while True:
            with self.lock:
                given = [s for s in self.left if s != self.keep]
                if not given:
                    return
                seed = given[-1]
                self.left.remove(seed)
                try:
                    future = self.futures[seed] = self.pool.submit(_seed, self.cfg, seed)
                except RuntimeError:  # the pool was shut down: this process stopped early
                    return
            if future.exception() is not None:  # waits; the seed's part raises it
                return

    def part(self, seed: int) -> tuple[dict, dict]:
        """The seed's ``(summary, curves)``: run here if no worker took it, else the worker's, when it is done."""
        with self.lock:
            future = self.futures.get(seed)
            if future is None:
                self.left.remove(seed)
        return _seed(self.cfg, seed) if future is None else future.result()

    def stop(self) -> None:
        """Give out no more seeds."""
        with self.lock:
            self.left.clear()

    def given(self) -> list[int]:
        """The seeds given to the workers so far."""
        with self.lock:
            return sorted(self.futures)


@checked()
def run(
    config: TopoPruneConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> TopoPruneResults:
    """The persistence check, then one part per seed; the summary's ``methods`` aggregates the seeds.

    With ``cfg.processes`` > 1, worker processes (spawned) take the pending seeds from the back while this
    process runs UMAP's warm-up, the first seed (with the diagnosis) and the next seeds from the front
    (:class:`SeedShare`); a worker's part time is then the time this process waited for it.
    """
    cfg, checkpoint = start_run(TopoPruneConfig, config, checkpoint)
    parts: dict[str, Any] = {"persistence_check": lambda: _persistence_check(cfg)}
    if cfg.embedder == "umap" and cfg.diagnose:
        parts["umap_warm_up"] = lambda: ({"first_call_s": _warm_up(cfg)}, {})
    pending = [s for s in cfg.seeds if checkpoint.get(f"part/seed_{s}") is None]
    n_workers = min(cfg.processes - 1, len([s for s in pending if s != cfg.seeds[0]]))
    with ExitStack() as stack:
        pool = None
        if n_workers > 0:
            pool = stack.enter_context(ProcessPoolExecutor(n_workers, mp_context=get_context("spawn")))
        share = SeedShare(cfg, pending, pool, n_workers, keep=cfg.seeds[0])
        stack.callback(share.stop)  # runs before the pool's shutdown: a failed part stops the sharing
        parts |= {f"seed_{s}": (lambda s=s: share.part(s)) for s in cfg.seeds}
        summary, curves = run_parts_timed(checkpoint, parts, progress)
    summary["methods"] = aggregate(cfg, [summary[f"seed_{s}"] for s in cfg.seeds])
    curves["example"] = curves[f"seed_{cfg.seeds[0]}"]
    return TopoPruneResults(cfg, summary, curves)


@checked()
def headline(results: TopoPruneResults) -> list[str]:
    """Key numbers for the end-of-run summary of the command line."""
    m = results.summary["methods"]
    lines = [f"persistence vs gudhi: largest gap {results.summary['persistence_check']['max_gap']:.1e}"]
    for r in (str(x) for x in results.config.prune_grid):
        lines.append(f"prune {r}: " + ", ".join(
            f"{k} {m['accuracy']['mlp'][k][r]['mean']:.3f}±{m['accuracy']['mlp'][k][r]['sd']:.3f}" for k in METHODS))
    return lines
