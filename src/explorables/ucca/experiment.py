"""The chapter's reduced-scale reproduction, one code path for every scale.

For every dataset and seed: split into an unpaired training set and a paired test set, shuffle
the training set's ``Y`` (the methods see only ``X`` and the shuffled ``Y``), fit each method,
and score its projections by the correlation of its canonical variates on the **true** pairing
of the test set. Methods: the oracle (CCA on the true training pairs), UCCA, two unpaired
alignment baselines and random pairings (:mod:`.baselines`); on ``ablation_datasets`` also UCCA with
its step 2 ablated (FAQ off, on UCCA's own screened starts; FAQ from scipy's own starts, FAQ solver only).

Parts: ``identity`` (eq. ``ucca-qap`` on random permutations), one part per dataset, and
``non_gaussianity`` (UCCA as the latent moves from Gaussian to clustered).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import quadratic_assignment
from threadpoolctl import threadpool_limits

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Choice, Float, Int, Probability, Seeds, Tuple, param
from .baselines import cca_on_pairing, gromov_wasserstein_pairing, random_pairing, wasserstein_procrustes_pairing
from .cca import cca, qap_objective, sum_squared_correlations, variate_correlations, whiten
from .data import TwoViews, breast_cancer_views, digit_halves, synthetic_views, unpaired, wine_views
from .method import SOLVERS, ucca

DATASETS: tuple[str, ...] = ("clustered", "gaussian", "breast_cancer", "digits", "wine")
#: the book's datasets: digits (oracle ≈ 0.58 at d = 3) cannot carry the signal gate (benchmarks/ucca_gate_rule.md)
BOOK_DATASETS: tuple[str, ...] = ("clustered", "gaussian", "breast_cancer", "wine")
#: UCCA with step 2 ablated (issue 50): FAQ off, and FAQ from scipy's own starts (on the clustered, breast-cancer
#: and wine data by default: benchmarks/ucca_ablation_rule.md)
ABLATIONS: tuple[str, ...] = ("ucca_no_faq", "ucca_scipy_starts")
METHODS: tuple[str, ...] = (
    "oracle", "ucca", *ABLATIONS, "wasserstein_procrustes", "gromov_wasserstein", "random"
)  # fmt: skip
METHOD_NAMES: dict[str, str] = {
    "oracle": "oracle (CCA on true pairs)",
    "ucca": "UCCA",
    "ucca_no_faq": "UCCA, FAQ off",
    "ucca_scipy_starts": "UCCA, FAQ from scipy's starts",
    "wasserstein_procrustes": "Wasserstein–Procrustes",
    "gromov_wasserstein": "Gromov–Wasserstein",
    "random": "random pairing",
}
DATASET_NAMES: dict[str, str] = {
    "clustered": "synthetic, clustered latent",
    "gaussian": "synthetic, Gaussian latent (control)",
    "breast_cancer": "breast cancer: mean vs worst features",
    "digits": "digits: left vs right half",
    "wine": "wine: first 6 vs last 7 features",
}


@dataclass(frozen=True)
class UCCAConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    datasets: tuple[str, ...] = param(
        BOOK_DATASETS, Tuple(Choice(DATASETS), distinct=True), "datasets of the benchmark"
    )
    seeds: tuple[int, ...] = param(
        (0, 1, 2), Seeds(), "seeds each dataset is run with (data draw, split, shuffle, restarts)"
    )
    ablation_datasets: tuple[str, ...] = param(
        ("clustered", "breast_cancer", "wine"),
        Tuple(Choice(DATASETS), distinct=True),
        "datasets on which UCCA's step 2 is also run ablated (FAQ off; FAQ from scipy's starts)",
    )
    n_train: int = param(200, Int(10), "samples in each unpaired training view (real data: at most this many)")
    n_test: int = param(200, Int(10), "held-out paired samples scored on the true pairing (real data: at most half)")
    d_latent: int = param(3, Int(1, 50), "dimension of the synthetic shared latent z")
    d_x: int = param(10, Int(1), "features of synthetic view X")
    d_y: int = param(12, Int(1), "features of synthetic view Y")
    n_clusters: int = param(6, Int(2, 100), "clusters of the synthetic clustered latent (random unequal weights)")
    non_gaussianity: float = param(0.95, Probability(), "lambda: weight of the cluster centres in z (0: Gaussian)")
    noise: float = param(0.3, Float(0.0, 10.0), "standard deviation of the synthetic views' independent noise")
    d_reduced: int = param(3, Int(1), "d: principal directions kept per view before whitening, eq. (ucca-whiten)")
    n_components: int = param(2, Int(1), "k: canonical directions scored (and refined by the alternation)")
    n_restarts: int = param(32, Int(1), "cheap starts (random rotations + Procrustes) ranked by eq. (ucca-qap)")
    n_candidates: int = param(
        256, Int(0),
        "random rotations screened on a batch of 64 rows per view; the best n_restarts become the starts (0: random)",
    )  # fmt: skip
    n_faq: int = param(4, Int(1), "FAQ runs on eq. (ucca-qap), from the best-ranked starts")
    n_alternations: int = param(10, Int(0), "at most this many rounds of CCA + assignment, eq. (ucca-alternate)")
    solver: str = param(
        "faq", Choice(SOLVERS), "QAP solver: scipy's FAQ, or the entropic relaxation (torch) for large n"
    )
    n_random_pairings: int = param(200, Int(1), "random pairings averaged for the random baseline (its precision)")
    n_identity_checks: int = param(100, Int(1), "random permutations on which eq. (ucca-qap) is checked")
    non_gaussianity_grid: tuple[float, ...] = param(
        (0.0, 0.7, 0.95), Tuple(Probability(), increasing=True), "lambdas of the non-Gaussianity sweep"
    )

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            datasets=("clustered", "gaussian"), n_train=80, n_test=100, n_restarts=8, n_faq=2, n_alternations=3,
            n_random_pairings=20, n_identity_checks=10, non_gaussianity_grid=(0.0, 0.95),
        ),
        "book": {},
        "paper": dict(
            device="auto", seeds=(0, 1, 2, 3, 4), n_train=5000, n_test=2000, d_latent=5, d_reduced=5, n_components=3,
            n_restarts=64, n_faq=8, solver="entropic", non_gaussianity_grid=(0.0, 0.5, 0.7, 0.8, 0.9, 0.95),
        ),
    }  # fmt: skip

    def cross_checks(self) -> None:
        if self.n_faq > self.n_restarts:
            raise ValueError(f"n_faq must be <= n_restarts ({self.n_restarts}), got {self.n_faq}")
        if 0 < self.n_candidates < self.n_restarts:
            raise ValueError(f"n_candidates must be 0 or >= n_restarts ({self.n_restarts}), got {self.n_candidates}")
        if self.n_components > self.d_reduced:
            raise ValueError(f"n_components must be <= d_reduced ({self.d_reduced}), got {self.n_components}")
        if "clustered" in self.datasets or "gaussian" in self.datasets:
            if self.d_reduced > min(self.d_x, self.d_y):
                raise ValueError(
                    f"d_reduced must be <= min(d_x, d_y) = {min(self.d_x, self.d_y)}, got {self.d_reduced}"
                )
        if self.d_reduced >= self.n_train:
            raise ValueError(f"d_reduced must be < n_train ({self.n_train}), got {self.d_reduced}")


class UCCAResults(Results[UCCAConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the arrays the figures draw."""


def load_split(cfg: UCCAConfig, dataset: str, rng: np.random.Generator, *, non_gaussianity: float | None = None):
    """``(train, test)`` paired views of ``dataset``; real tables are subsampled without replacement."""
    if dataset in ("clustered", "gaussian"):
        views = synthetic_views(
            cfg.n_train + cfg.n_test, d_latent=cfg.d_latent, d_x=cfg.d_x, d_y=cfg.d_y, latent=dataset,
            non_gaussianity=cfg.non_gaussianity if non_gaussianity is None else non_gaussianity,
            n_clusters=cfg.n_clusters, noise=cfg.noise, rng=rng,
        )  # fmt: skip
        return views.subset(np.arange(cfg.n_train)), views.subset(np.arange(cfg.n_train, cfg.n_train + cfg.n_test))
    views = {"breast_cancer": breast_cancer_views, "digits": digit_halves, "wine": wine_views}[dataset]()
    n = views.X.shape[0]
    n_test = min(cfg.n_test, n // 2)
    n_train = min(cfg.n_train, n - n_test)
    order = rng.permutation(n)
    return views.subset(order[:n_train]), views.subset(order[n_train : n_train + n_test])


def _pairing_stats(pairing: np.ndarray, truth: np.ndarray, train: TwoViews, shuffle: np.ndarray) -> dict:
    """Exact matches, and matches within the same cluster/class (labels used here only, to score)."""
    same = float(np.mean(train.labels == train.labels[shuffle][pairing])) if train.labels is not None else None
    return {"exact": float(np.mean(pairing == truth)), "same_label": same}


def trial(
    cfg: UCCAConfig,
    dataset: str,
    seed: int,
    *,
    non_gaussianity: float | None = None,
    path: bool = False,
    baselines: bool = True,
    diagnose: bool = True,
) -> dict:
    """One dataset, one seed: every method fitted on the unpaired training set, scored on the true test pairs.

    ``baselines=False`` runs only the oracle, UCCA and random pairings; ``diagnose=False`` also skips the
    truth-started diagnosis and keeps UCCA's test variates instead (the non-Gaussianity sweep).
    """
    rng = np.random.default_rng([cfg.seed, seed, DATASETS.index(dataset)])
    train, test = load_split(cfg, dataset, rng, non_gaussianity=non_gaussianity)
    X, Y_shuffled, shuffle = unpaired(train, rng)  # the methods get X and Y_shuffled, nothing else
    truth = np.argsort(shuffle)  # X[i] truly pairs with Y_shuffled[truth[i]]: for scoring only
    d, k, n = cfg.d_reduced, cfg.n_components, X.shape[0]

    def score(fit) -> list[float]:
        return variate_correlations(fit, test.X, test.Y).tolist()

    out: dict[str, Any] = {"n_train": n, "n_test": test.X.shape[0]}
    out["oracle"] = score(cca(train.X, train.Y, k, d=d))
    settings = dict(
        n_components=k, d=d, n_restarts=cfg.n_restarts, n_candidates=cfg.n_candidates, n_faq=cfg.n_faq,
        n_alternations=cfg.n_alternations, device=cfg.device,
    )  # fmt: skip
    start_rng = copy.deepcopy(rng)  # the entropic solver's FAQ-off ablation draws its screened starts from this copy
    fit = ucca(X, Y_shuffled, solver=cfg.solver, rng=rng, **settings)
    out["ucca"] = score(fit.fit)
    out["ucca_pairing"] = _pairing_stats(fit.pairing, truth, train, shuffle)
    Xw, Yw = whiten(X, d, name="X"), whiten(Y_shuffled, d, name="Y")
    out["qap_found"] = fit.qap_objective
    out["n_rounds"] = len(fit.pairings) - 1
    randoms = [score(cca_on_pairing(X, Y_shuffled, random_pairing(n, rng), k, d)) for _ in range(cfg.n_random_pairings)]
    out["random"] = np.mean(randoms, axis=0).tolist()
    if not diagnose:
        u, v = fit.fit.transform(test.X, test.Y)
        out["scatter"] = {"ucca": np.c_[u[:, 0], v[:, 0]]}
        return out
    if baselines:
        wp = wasserstein_procrustes_pairing(X, Y_shuffled, d=d, n_restarts=cfg.n_restarts, rng=rng)
        out["wasserstein_procrustes"] = score(cca_on_pairing(X, Y_shuffled, wp, k, d))
        gw = gromov_wasserstein_pairing(X, Y_shuffled, entropic=cfg.solver == "entropic")
        out["gromov_wasserstein"] = score(cca_on_pairing(X, Y_shuffled, gw, k, d))
    if baselines and dataset in cfg.ablation_datasets:  # the ablations of step 2, each on its own
        # FAQ off: with the FAQ solver, UCCA's own best-ranked screened start (the one the ablation would draw
        # again from a copy of UCCA's generator), reflections by assignment, the same alternation; with the
        # entropic solver (unscreened starts) its own screened starts, drawn from the generator
        no_faq = ucca(X, Y_shuffled, solver="none", top_start=fit.top_start, rng=start_rng, **settings)
        out["ucca_no_faq"] = score(no_faq.fit)
        if cfg.solver == "faq":  # scipy's random starts are FAQ starts: not run with the entropic solver
            out["ucca_scipy_starts"] = score(ucca(X, Y_shuffled, starts="scipy", rng=rng, **settings).fit)
    if path:
        out["path"] = _path(fit, X, Y_shuffled, train, test, shuffle, truth, k, d)
    # diagnosis only, after every method has run, for the text (never a verdict): Σρ² of the truth, and of
    # the pairing FAQ reaches when started *at* the truth (FAQ draws nothing from rng when given P0)
    out["qap_truth"] = sum_squared_correlations(Xw, Yw, truth)
    out["qap_truth_basin"] = truth_basin_objective(Xw, Yw, truth)
    return out


def truth_basin_objective(Xw: np.ndarray, Yw: np.ndarray, truth: np.ndarray) -> float:
    """A diagnosis that uses the truth (never part of a method): ``Σρ²`` of the pairing FAQ reaches from the truth.

    If UCCA's pairing scores below this, its search stopped short; if above, eq. (ucca-qap) itself
    prefers pairings far from the truth. It has its own generator (FAQ draws nothing from it when
    given ``P0``), so it cannot shift any method's random draws.
    """
    n = Xw.shape[0]
    with threadpool_limits(1, user_api="blas"):
        options = dict(maximize=True, P0=np.eye(n)[truth], rng=np.random.default_rng(0))
        res = quadratic_assignment(Xw @ Xw.T, Yw @ Yw.T, options=options)
    return float(res.fun) / n**2


def _path(fit, X, Y_shuffled, train, test, shuffle, truth, k, d) -> dict:
    """What the explorable shows at each step: the matching (by cluster) and the true-pairing correlations."""
    labels_x, labels_y = train.labels, train.labels[shuffle]
    n_labels = int(max(labels_x.max(), labels_y.max())) + 1
    frames = []
    for pairing in fit.pairings:
        confusion = np.zeros((n_labels, n_labels))
        np.add.at(confusion, (labels_x, labels_y[pairing]), 1.0)
        frames.append({
            "confusion": confusion / confusion.sum(axis=1, keepdims=True),
            "test_corr": variate_correlations(cca_on_pairing(X, Y_shuffled, pairing, k, d), test.X, test.Y).tolist(),
            "exact": float(np.mean(pairing == truth)),
        })  # fmt: skip
    Xw, Yw = whiten(X, d, name="X"), whiten(Y_shuffled, d, name="Y")
    return {
        "frames": frames, "objectives": fit.objectives, "cluster_sizes": np.bincount(labels_x, minlength=n_labels),
        "x_cloud": Xw[:, :2], "y_cloud": Yw[:, :2], "labels_x": labels_x, "labels_y": labels_y,
    }  # fmt: skip


def _mean_sd(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0, "values": arr.tolist()}


def _dataset(cfg: UCCAConfig, dataset: str) -> tuple[dict, dict]:
    """A benchmark part: every seed of one dataset, summarised per method (mean ± sd of the mean correlation;
    None for a method the dataset does not run: the ablations off ``ablation_datasets``)."""
    trials = [trial(cfg, dataset, s, path=(dataset == "clustered" and i == 0)) for i, s in enumerate(cfg.seeds)]
    ran = [m for m in METHODS if m in trials[0]]
    summary: dict[str, Any] = {m: None for m in METHODS}
    summary |= {m: _mean_sd([float(np.mean(t[m])) for t in trials]) for m in ran}
    summary["per_component"] = {m: np.mean([t[m] for t in trials], axis=0).tolist() for m in ran}
    summary["ucca_over_oracle"] = _mean_sd([float(np.mean(t["ucca"]) / np.mean(t["oracle"])) for t in trials])
    summary["exact_matches"] = _mean_sd([t["ucca_pairing"]["exact"] for t in trials])
    same = [t["ucca_pairing"]["same_label"] for t in trials]
    summary["same_label_matches"] = _mean_sd(same) if same[0] is not None else None
    summary["qap_found"] = [t["qap_found"] for t in trials]
    summary["qap_truth"] = [t["qap_truth"] for t in trials]
    summary["qap_truth_basin"] = [t["qap_truth_basin"] for t in trials]
    summary["n_train"], summary["n_test"] = trials[0]["n_train"], trials[0]["n_test"]
    curves = {"path": trials[0]["path"]} if "path" in trials[0] else {}
    return summary, curves


def _identity(cfg: UCCAConfig) -> tuple[dict, dict]:
    """Eq. (ucca-qap) on random data and random permutations: Σρ² from the SVD vs tr(A P B Pᵀ)/n²."""
    rng = np.random.default_rng([cfg.seed, 99])
    n, d = 60, 3
    Xw = whiten(rng.standard_normal((n, 5)) @ rng.standard_normal((5, 7)), d)
    Yw = whiten(rng.standard_normal((n, 6)), d)
    A, B = Xw @ Xw.T, Yw @ Yw.T
    gaps, values = [], []
    for _ in range(cfg.n_identity_checks):
        perm = rng.permutation(n)
        rho = np.linalg.svd(Xw.T @ Yw[perm] / n, compute_uv=False)  # canonical correlations of the pairing
        values.append(float(np.sum(rho**2)))
        gaps.append(abs(values[-1] - qap_objective(A, B, perm) / n**2))
    return {"n": n, "d": d, "checks": cfg.n_identity_checks, "max_gap": float(max(gaps)),
            "sum_rho2_range": [min(values), max(values)]}, {}  # fmt: skip


def _non_gaussianity(cfg: UCCAConfig) -> tuple[dict, dict]:
    """UCCA and the oracle on the clustered latent as lambda goes from 0 (Gaussian) to clustered (first seed)."""
    rows, scatters = [], []
    for lam in cfg.non_gaussianity_grid:
        t = trial(cfg, "clustered", cfg.seeds[0], non_gaussianity=lam, baselines=False, diagnose=False)
        rows.append({"lambda": lam, **{m: float(np.mean(t[m])) for m in ("oracle", "ucca", "random")}})
        scatters.append(t["scatter"])
    return {"rows": rows}, {"scatter": scatters}


@checked()
def run(
    config: UCCAConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> UCCAResults:
    """Run the identity check, the benchmark (one part per dataset) and the non-Gaussianity sweep."""
    cfg, checkpoint = start_run(UCCAConfig, config, checkpoint)
    parts: dict[str, Any] = {"identity": lambda: _identity(cfg)}
    parts |= {name: (lambda name=name: _dataset(cfg, name)) for name in cfg.datasets}
    parts["non_gaussianity"] = lambda: _non_gaussianity(cfg)
    summary, curves = run_parts_timed(checkpoint, parts, progress)
    return UCCAResults(cfg, summary, curves)


@checked()
def headline(results: UCCAResults) -> list[str]:
    """Key numbers for the end-of-run summary of the command line."""
    s = results.summary
    lines = [f"identity eq. (ucca-qap): largest gap {s['identity']['max_gap']:.1e}"]
    for name in results.config.datasets:
        r = s[name]
        lines.append(f"{name}: " + ", ".join(f"{m} {r[m]['mean']:.2f}±{r[m]['sd']:.2f}" for m in METHODS if r[m]))
    return lines
