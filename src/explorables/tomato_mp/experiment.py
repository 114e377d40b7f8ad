"""The chapter's experiment, one code path for every scale.

``run(TomatoMPConfig.preset("book"))`` is what the chapter executes, ``"smoke"`` what the tests
execute, ``"paper"`` the full-scale run (``explorables run tomato_mp --scale paper``).

Four parts, each checkpointed (``--resume`` skips the finished ones):

1. **outliers**: touching blobs, ``f`` = log-KDE; for each outlier fraction, ToMATo over its
   graph parameter ``k``, ToMAToMP on (radius, f) and on (radius, f, DTM), HDBSCAN and k-means;
   adjusted Rand index (ARI) against the planted labels, on every point. At every fraction,
   ToMAToMP again with a wider radius cap ``r_max`` (the only graph-like knob left): does the
   clustering change? Repeated on ``n_seeds`` seeds (1000 × base seed + 0, 1, ...: new
   blobs, outlier draws and subsamples; two base seeds share no draw). Every method list includes a
   control, ToMATo on ``-DTM`` alone (it never sees ``f``): if it is as robust as ToMAToMP, the robustness is the DTM's.
2. **k_sweep**: ToMATo's chosen count over ``k`` on clean moons, circles, blobs and iris.
3. **datasets**: every method on clean moons, circles and iris, on the same ``n_seeds`` seeds.
4. **two_functions**: four clusters that only two functions together separate
   (:func:`~.data.make_quadrants`: one cloud of four overlapping groups, the planted label is the
   quadrant; ``f`` is high on the left and right, ``h`` at the bottom and top). ToMAToMP (no DTM
   parameter) with ``f`` alone, ``h`` alone, and both at once (radius, f, h), for each seed of
   ``two_function_seeds``; for reference, ToMATo on the bifiltration's diagonal (the smaller of the
   two ranks, one hand-made function) and on the density (the geometry alone).

Above ``mp_subsample_size`` points, ToMAToMP runs on a random subsample of that size (the MMA is
quadratic in the points through the edges) and the other points take the label of their
nearest subsample point; densities and ToMATo always use every point.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import torch
from joblib import Parallel, delayed
from sklearn.cluster import HDBSCAN, KMeans
from sklearn.metrics import adjusted_rand_score

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Choice, Float, Int, Positive, Seeds, Tuple, param
from ..core.threads import worker_count
from .data import DATASETS, QUADRANT_LAYOUTS, corrupt, dtm, log_kde, make_dataset, make_quadrants
from .multiparam import connecting_radius, ranks01, tomato_mp
from .persistence import tomato

#: KDE bandwidth per data set (in the data's units; iris is standardised)
BANDWIDTH = {"blobs": 0.4, "moons": 0.25, "circles": 0.25, "iris": 0.6}


@dataclass(frozen=True)
class TomatoMPConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset, except ``workers`` (the book runs the
    outlier sweep's MMAs on all cores; the numbers do not depend on it)."""

    n_points: int = param(200, Int(30), "points per generated data set (blobs, moons, circles; iris keeps its 150)")
    outlier_fraction_grid: tuple[float, ...] = param(
        (0.0, 0.05, 0.10),
        Tuple(Float(0.0, 0.5)),
        "fractions q of the blobs given outlier function values max f + U(0.3, 1.5)(max f - median f)",
    )
    k_grid: tuple[int, ...] = param(
        (5, 8, 10, 15, 20, 30, 40),
        Tuple(Int(1)),
        "ToMATo's k (neighbours in the k-NN graph of eq. tomato-elder) swept on clean and corrupted data",
    )
    reference_k: int = param(10, Int(1), "ToMATo's k in the method comparison (the ToMATo column of the tables)")
    n_lines: int = param(
        30, Int(4), "MMA resolution: lines along which multipers slices the module (summands: eq. tomatomp-prominence)"
    )
    dtm_mass_fraction: float = param(
        0.05,
        Float(0.0, 1.0, low_inclusive=False),
        "mass m of the DTM coordinate of eq. (tomatomp-grades): the fraction of points it averages over",
    )
    r_max_factor: float = param(
        1.25, Positive(), "r_max of eq. (tomatomp-grades) x this factor, against r_max alone, in the independence check"
    )
    datasets: tuple[str, ...] = param(
        ("moons", "circles", "iris"),
        Tuple(Choice(DATASETS), min_len=0, distinct=True),
        "clean data sets every method is run on (the blobs are always run)",
    )
    hdbscan_min_cluster_size: int = param(15, Int(2), "HDBSCAN's min_cluster_size (the baseline's only knob)")
    mp_subsample_size: int = param(400, Int(30), "ToMAToMP runs on a random subsample of at most this many points")
    quadrant_spread: float = param(
        1.0,
        Positive(),
        "sd of the four groups of the two-function part (centres (±1, ±1); at 1 or more no density valley on the "
        "quadrant boundaries, benchmarks/tomato_mp_rule8_rule.md; 0.6 until then)",
    )
    quadrant_layout: str = param(
        "groups", Choice(QUADRANT_LAYOUTS),
        "points of the two-function part: four Gaussian groups, one uniform square, or one Gaussian blob",
    )
    quadrant_noise: float = param(
        0.03, Float(0.0, 10.0), "sd of the noise added to each function of the two-function part (bumps of height 1)"
    )
    two_function_seeds: tuple[int, ...] = param(
        (0, 1, 2), Seeds(),
        "seeds (plus 1000 × the base seed) of the samples of the two-function part",
    )
    n_seeds: int = param(
        3, Int(1),
        "seeds (1000 × the base seed + 0, 1, ...) of the blobs, outlier draws and clean data sets of parts 1 and 3",
    )
    gate_draws: int = param(
        8, Int(1),
        "outlier draws per seed (the first is the comparison's) on which the gate outliers_hurt counts ToMATo's "
        "wrong counts over (fraction, k); ToMATo only, milliseconds each",
    )
    workers: int = param(1, Int(0), "processes for the outlier fractions' independent MMAs (joblib); 0 = all cores")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(n_points=150, outlier_fraction_grid=(0.0, 0.05), k_grid=(5, 10, 20), n_lines=30,
                      datasets=("moons",), two_function_seeds=(0,), n_seeds=1, gate_draws=2),
        # five seeds per part: with three, one seed whose outliers happen not to hurt ToMATo decided the gates
        # ten samples in the two-function part: at five, the pair's paired gain sat on its margin on one base seed
        # eight and sixteen (benchmarks/tomato_mp_draws_rule.md): one broken sample in five widened a 5-value
        # t-interval across its threshold, so base seeds read unclear where others read partly; 24 two-function
        # samples (benchmarks/tomato_mp_power_rule.md): at 16 the paired gain's interval reached below its margin
        # on about one base seed in ten (bootstrap of 144 tuning samples); the reduced MMAs make them cheap
        "book": dict(workers=0, n_seeds=8, two_function_seeds=tuple(range(24))),
        "paper": dict(device="auto", n_points=100_000, outlier_fraction_grid=(0.0, 0.01, 0.02, 0.05, 0.10),
                      k_grid=(5, 10, 20, 40, 80, 160), reference_k=20, n_lines=60, mp_subsample_size=1500,
                      workers=0),
    }
    PAPER_HARDWARE: ClassVar[str] = (
        "one GPU for the density estimates on 10^5 points, and many CPU cores (the independent MMAs run in parallel)"
    )

    def cross_checks(self) -> None:
        for name, ks in (("k_grid", self.k_grid), ("reference_k", (self.reference_k,))):
            for k in ks:
                if k > self.n_points - 1:
                    raise ValueError(f"{name} must be at most n_points - 1 = {self.n_points - 1}, got {k}")


class TomatoMPResults(Results[TomatoMPConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the arrays the figures draw."""


def ari(truth: np.ndarray, labels: np.ndarray) -> float:
    """Adjusted Rand index (scikit-learn), rounded to 4 digits for the tables."""
    return round(float(adjusted_rand_score(truth, labels)), 4)


def nearest_labels(X: np.ndarray, X_ref: np.ndarray, labels_ref: np.ndarray, device: str = "cpu") -> np.ndarray:
    """Label of the nearest reference point, for every row of ``X`` (torch, in blocks)."""
    dev = resolve_device(device)
    R = torch.as_tensor(X_ref, dtype=torch.float64, device=dev)
    out = []
    for start in range(0, len(X), 8192):
        P = torch.as_tensor(X[start : start + 8192], dtype=torch.float64, device=dev)
        out.append(torch.cdist(P, R).argmin(1).cpu().numpy())
    return np.asarray(labels_ref)[np.concatenate(out)] if out else np.zeros(0, dtype=np.int64)


def sweep_workers(workers: int, n_tasks: int, device: str) -> int:
    """Processes for the outlier sweep: ``workers`` (0: every CPU this process may use), never more than
    the tasks; one on a GPU, where each process would hold its own copy of the device's buffers (a GPU
    smoke run of the ``paper`` preset ran 16 processes of ~10 GB each out of an H200's memory)."""
    if resolve_device(device).type != "cpu":
        return 1
    return worker_count(workers, n_tasks)


def run_tomato_mp(cfg: TomatoMPConfig, X: np.ndarray, functions: np.ndarray, *, robust: bool, r_max_factor: float = 1.0,
                  seed: int = 0, reduce: bool = False) -> dict[str, Any]:
    """ToMAToMP on ``X`` (subsampled above ``mp_subsample_size``); labels for every point. ``reduce``: the
    MMA on the graph without its dominated edges (same H0 module; see :func:`~.multiparam.tomato_mp`)."""
    n = len(X)
    F = np.atleast_2d(functions)
    idx = np.arange(n)
    if n > cfg.mp_subsample_size:
        idx = np.sort(np.random.default_rng(seed + 7).choice(n, cfg.mp_subsample_size, replace=False))
    Xs = X[idx]
    res = tomato_mp(Xs, F[:, idx], robust=robust, n_lines=cfg.n_lines, dtm_mass=cfg.dtm_mass_fraction,
                    r_max=connecting_radius(Xs) * r_max_factor, device=cfg.device, reduce=reduce)
    labels = res.labels if len(idx) == n else nearest_labels(X, Xs, res.labels, cfg.device)
    top = res.summands[: min(8, len(res.summands))]
    return {
        "labels": labels,
        "n_clusters": res.n_clusters,
        "n_labels": res.n_labels,
        "prominences": res.prominences[:20],
        "parameters": list(res.filtration.parameters),
        "summands": [{"births": s.births, "deaths": s.deaths} for s in top],
    }


def cluster_all(cfg: TomatoMPConfig, X: np.ndarray, f: np.ndarray, truth: np.ndarray, *,
                with_mp: bool = True) -> tuple[dict, dict]:
    """Every method on one data set: ARIs and counts (summary), labels and diagrams (curves)."""
    summary: dict[str, Any] = {"tomato": {}}
    curves: dict[str, Any] = {"tomato": {}}
    for k in cfg.k_grid:
        t = tomato(X, f, k=k)
        summary["tomato"][str(k)] = {"n_clusters": t.n_clusters, "ari": ari(truth, t.labels)}
        curves["tomato"][str(k)] = {"labels": t.labels, "pairs": t.diagram.pairs, "essential": t.diagram.essential,
                                    "tau": t.threshold}
    ref = tomato(X, f, k=cfg.reference_k)
    summary["tomato_ref"] = {"k": cfg.reference_k, "n_clusters": ref.n_clusters, "ari": ari(truth, ref.labels)}
    # Control: ToMATo on -DTM alone (no f at all): how much of ToMAToMP's robustness the DTM brings by itself.
    control = tomato(X, -dtm(X, cfg.dtm_mass_fraction, device=cfg.device), k=cfg.reference_k)
    summary["tomato_dtm"] = {"n_clusters": control.n_clusters, "ari": ari(truth, control.labels)}
    curves["tomato_ref"] = {"labels": ref.labels, "pairs": ref.diagram.pairs, "essential": ref.diagram.essential,
                            "tau": ref.threshold}
    n_true = len(np.unique(truth))
    hd = HDBSCAN(min_cluster_size=cfg.hdbscan_min_cluster_size, copy=True).fit_predict(X) if len(X) <= 20_000 else None
    if hd is not None:
        summary["hdbscan"] = {"n_clusters": int(hd.max() + 1), "noise": float(np.mean(hd < 0)), "ari": ari(truth, hd)}
        curves["hdbscan"] = hd
    km = KMeans(n_true, n_init=4, random_state=cfg.seed).fit_predict(X)
    summary["kmeans"] = {"n_clusters": n_true, "ari": ari(truth, km)}
    if with_mp:
        for name, robust in (("mp_plain", False), ("mp_robust", True)):
            r = run_tomato_mp(cfg, X, f, robust=robust, seed=cfg.seed)
            summary[name] = {"n_clusters": r["n_clusters"], "n_labels": r["n_labels"], "ari": ari(truth, r["labels"]),
                             "prominences": [round(float(p), 4) for p in r["prominences"][:8]]}
            curves[name] = r
    return summary, curves


def _blobs(cfg: TomatoMPConfig):
    ds = make_dataset("blobs", cfg.n_points, cfg.seed)
    return ds, log_kde(ds.X, BANDWIDTH["blobs"], device=cfg.device)


def seeds_of(cfg: TomatoMPConfig) -> list[int]:
    """The seeds of parts 1 and 3: ``1000 × base seed + i`` for ``i < n_seeds``, as in the two-function
    part, so that two base seeds share no draw (``base seed + i`` made neighbouring base seeds share
    all but one sample)."""
    return [1000 * cfg.seed + i for i in range(cfg.n_seeds)]


def _outliers(cfg: TomatoMPConfig) -> tuple[dict, dict]:
    """Every method on blobs at each outlier fraction, and ToMAToMP again with the radius cap
    ``r_max`` widened by ``r_max_factor`` (graph independence). Repeated
    for every seed of :func:`seeds_of` (a new blobs sample and outlier draw): ``runs``,
    ``independence`` and the curves are the first seed's, ``seed_runs`` and ``seed_independence``
    hold every seed's (the first seed first)."""
    seeds = seeds_of(cfg)
    blobs = {seed: _blobs(replace(cfg, seed=seed)) for seed in seeds}
    ds = blobs[seeds[0]][0]
    summary: dict[str, Any] = {"fractions": list(cfg.outlier_fraction_grid), "true": len(np.unique(ds.labels)),
                               "seeds": seeds, "runs": [], "independence": [],
                               "seed_runs": [[] for _ in seeds], "seed_independence": [[] for _ in seeds]}
    curves: dict[str, Any] = {"X": ds.X, "truth": ds.labels, "runs": []}

    def one(seed: int, i: int, q: float) -> tuple[dict, dict, dict]:
        cfg_s = replace(cfg, seed=seed)
        ds, f = blobs[seed]
        g, idx = corrupt(f, q, seed=seed)
        s, c = cluster_all(cfg_s, ds.X, g, ds.labels)
        wide = run_tomato_mp(cfg_s, ds.X, g, robust=True, r_max_factor=cfg.r_max_factor, seed=seed)
        base = c["mp_robust"]
        independence = {
            "fraction": q,
            "r_max_factor": cfg.r_max_factor,
            "n_clusters": [base["n_clusters"], wide["n_clusters"]],
            "ari_truth": [ari(ds.labels, base["labels"]), ari(ds.labels, wide["labels"])],
            "ari_between": ari(base["labels"], wide["labels"]),
        }
        return {"fraction": q, "n_outliers": len(idx), **s}, {"f": g, "outliers": idx, **c}, independence

    # The fractions are independent MMAs: with workers != 1 they run in parallel processes (joblib);
    # the results do not depend on workers.
    tasks = [(j, seed, i, q) for j, seed in enumerate(seeds) for i, q in enumerate(cfg.outlier_fraction_grid)]
    jobs = Parallel(n_jobs=sweep_workers(cfg.workers, len(tasks), cfg.device))(
        delayed(one)(seed, i, q) for _, seed, i, q in tasks
    )
    for (j, _, _, _), (s, c, independence) in zip(tasks, jobs, strict=True):
        summary["seed_runs"][j].append(s)
        summary["seed_independence"][j].append(independence)
        if j == 0:
            summary["runs"].append(s)
            curves["runs"].append(c)
            summary["independence"].append(independence)
    summary["tomato_wrong"] = [tomato_wrong_shares(cfg, *blobs[seed], seed) for seed in seeds]
    return summary, curves


def tomato_wrong_shares(cfg: TomatoMPConfig, ds, f: np.ndarray, seed: int) -> list[float]:
    """``[wrong, clean]``: the share of (draw, fraction > 0, k) where ToMATo's count is wrong, over
    ``gate_draws`` outlier draws (draw 0 is the comparison's own, draw d > 0 uses seed
    ``seed + 10^6 d``), and the share of k where it is wrong on the clean values (NaN-free: 0 if no
    fraction above 0). For the gate ``outliers_hurt``: one outlier draw makes a noisy estimate of
    how often outliers break ToMATo, and ToMATo costs milliseconds."""
    true = len(np.unique(ds.labels))
    clean = float(np.mean([tomato(ds.X, f, k=k).n_clusters != true for k in cfg.k_grid]))
    bad = [q for q in cfg.outlier_fraction_grid if q > 0]
    wrong = [tomato(ds.X, corrupt(f, q, seed=seed + 10**6 * d)[0], k=k).n_clusters != true
             for d in range(cfg.gate_draws) for q in bad for k in cfg.k_grid]
    return [float(np.mean(wrong)) if wrong else clean, clean]


def _k_sweep(cfg: TomatoMPConfig) -> tuple[dict, dict]:
    summary, curves = {}, {}
    for name in ("blobs", "moons", "circles", "iris"):
        ds = make_dataset(name, cfg.n_points, cfg.seed)
        f = log_kde(ds.X, BANDWIDTH[name], device=cfg.device)
        counts = {str(k): tomato(ds.X, f, k=k).n_clusters for k in cfg.k_grid if k < len(ds.X)}
        true = len(np.unique(ds.labels))
        summary[name] = {"counts": counts, "distinct_counts": len(set(counts.values())), "true": true}
        if name == "moons":
            _, c = cluster_all(cfg, ds.X, f, ds.labels, with_mp=False)
            curves[name] = {"X": ds.X, "truth": ds.labels, "f": f, **c}
    return summary, curves


def _datasets(cfg: TomatoMPConfig) -> tuple[dict, dict]:
    """Every method on each clean data set, for every seed of :func:`seeds_of`: the entry is the
    first seed's, its ``seeds`` list holds every seed's ARIs and counts (iris is the same each time,
    only the subsampling and k-means seeds change: without a subsample, ToMAToMP's input is the same
    on every seed, so its MMAs are computed once and reused)."""
    summary, curves = {}, {}
    for name in cfg.datasets:
        per_seed = []
        seeds = seeds_of(cfg)
        first_mp: dict[str, Any] = {}
        for seed in seeds:
            cfg_s = replace(cfg, seed=seed)
            ds = make_dataset(name, cfg.n_points, seed)
            f = log_kde(ds.X, BANDWIDTH[name], device=cfg.device)
            reuse = bool(first_mp) and name == "iris" and len(ds.X) <= cfg.mp_subsample_size
            s, c = cluster_all(cfg_s, ds.X, f, ds.labels, with_mp=not reuse)
            if reuse:
                s.update(first_mp)
            elif name == "iris":
                first_mp = {key: s[key] for key in ("mp_plain", "mp_robust")}
            if seed == seeds[0]:
                summary[name] = {"n": len(ds.X), "true": len(np.unique(ds.labels)), **s}
                curves[name] = {"labels_mp": c["mp_robust"]["labels"]}
            per_seed.append({"seed": seed, **{k: v for k, v in s.items() if k != "tomato"}})
        summary[name]["seeds"] = per_seed
    return summary, curves


def _two_functions(cfg: TomatoMPConfig) -> tuple[dict, dict]:
    """ToMAToMP with f alone, h alone, and (f, h) at once on the four quadrants
    (:func:`~.data.make_quadrants`), one sample per seed of ``two_function_seeds``; for reference,
    ToMATo at ``reference_k`` on the diagonal of the bifiltration (``min(rank f, rank h)``, one
    function made by hand from the two) and on the log-KDE (the geometry alone, no function).

    The MMAs run on the graph without its dominated edges (``reduce``; the same H0 module, about a tenth of
    the edges): with one function the results were identical to the whole graph's on every tuning sample
    compared; for the pair it is another approximation of the same module (1 sample of 96 differed), adopted
    with the wider groups under benchmarks/tomato_mp_rule8_rule.md (benchmarks/tomato_mp_reduce.md)."""
    summary: dict[str, Any] = {"spread": cfg.quadrant_spread, "noise": cfg.quadrant_noise,
                               "layout": cfg.quadrant_layout, "seeds": []}
    curves: dict[str, Any] = {"seeds": []}
    for seed in (1000 * cfg.seed + t for t in cfg.two_function_seeds):  # a new base seed draws new samples
        ds, F = make_quadrants(cfg.n_points, seed, spread=cfg.quadrant_spread, noise=cfg.quadrant_noise,
                               layout=cfg.quadrant_layout)
        one: dict[str, Any] = {"seed": seed, "true": len(np.unique(ds.labels))}
        labels: dict[str, Any] = {"X": ds.X, "truth": ds.labels, "F": F}
        for name, G in (("f", F[:1]), ("h", F[1:]), ("f_and_h", F)):
            # every MMA of the part on the reduced graph (the same H0 module): identical results with one function
            # on every sample compared, another approximation for the pair (benchmarks/tomato_mp_rule8_rule.md)
            r = run_tomato_mp(cfg, ds.X, G, robust=False, seed=seed, reduce=True)
            one[name] = {"n_clusters": r["n_clusters"], "n_labels": r["n_labels"], "ari": ari(ds.labels, r["labels"]),
                         "parameters": r["parameters"]}
            labels[name] = r["labels"]
        for name, g in (("diagonal", np.minimum(ranks01(F[0]), ranks01(F[1]))),
                        ("density", log_kde(ds.X, BANDWIDTH["blobs"], device=cfg.device))):
            t = tomato(ds.X, g, k=cfg.reference_k)
            one[name] = {"n_clusters": t.n_clusters, "ari": ari(ds.labels, t.labels)}
        summary["seeds"].append(one)
        curves["seeds"].append(labels)
    return summary, curves


PARTS = {
    "outliers": _outliers,
    "k_sweep": _k_sweep,
    "datasets": _datasets,
    "two_functions": _two_functions,
}


@checked()
def run(config: TomatoMPConfig | None = None, *, checkpoint: Checkpointer | None = None,
        progress: bool = False) -> TomatoMPResults:
    """Run the four parts (see the module docstring); finished parts are checkpointed."""
    cfg, checkpoint = start_run(TomatoMPConfig, config, checkpoint)
    summary, curves = run_parts_timed(checkpoint, {name: (lambda part=part: part(cfg)) for name, part in PARTS.items()},
                                      progress)
    return TomatoMPResults(cfg, summary, curves)


@checked()
def headline(results: TomatoMPResults) -> list[str]:
    """Key numbers for the end of a command-line run."""
    lines = []
    for r in results.summary["outliers"]["runs"]:
        lines.append(
            f"outliers {r['fraction']:.0%}: ToMATo(k={r['tomato_ref']['k']}) K={r['tomato_ref']['n_clusters']} "
            f"ARI {r['tomato_ref']['ari']:.2f} | ToMAToMP robust K={r['mp_robust']['n_clusters']} "
            f"ARI {r['mp_robust']['ari']:.2f} | (radius, f) K={r['mp_plain']['n_clusters']} "
            f"ARI {r['mp_plain']['ari']:.2f}"
        )
    return lines
