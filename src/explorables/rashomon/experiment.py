"""The chapter's experiments: how label noise moves Rashomon sets and reducibility costs.

``run(RashomonConfig.preset("book"))`` is what the chapter executes; ``"smoke"`` is for tests,
``"paper"`` for the full-scale Monte-Carlo check in 30 dimensions (``explorables run rashomon``).

1. **Noise sweeps** for four model classes (linear regression with Gaussian noise ``sigma``;
   logistic regression with label-flip rate ``rho``; a regression GAM; a logistic GAM): the
   Rashomon log-volume under an absolute level ``theta`` and a relative one ``eps * L(beta_hat)``,
   the reducibility cost of each simplification, the number of simplifications reachable, and
   the size of the fitted model (``|w|`` or the shape functions' spread), and the diversity of the
   predictions of models drawn from the Rashomon set (:mod:`.diversity`). Averaged over seeds.
2. **Real data** (scikit-learn's bundled sets) with added noise: how many single features can be
   dropped inside the Rashomon set.
3. **Exactness checks**: Monte-Carlo volumes of the exact sets against the closed forms.
4. **Two-feature views** for the explorable: the profile loss over ``(w1, w2)`` on a grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit

from ..core.arguments import Array, checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Choice, Float, Int, Positive, Seeds, Tuple, param
from . import data as D
from .diversity import rashomon_diversity
from .gam import AdditiveBasis
from .models import drop_feature, fit, log_volume, reducibility_cost, tie_features
from .montecarlo import exact_log_volume

KINDS = ("linear", "logistic", "gam", "gam_logistic")


@dataclass(frozen=True)
class RashomonConfig(ExperimentConfig):
    """Settings of :func:`run`; field defaults are the ``book`` preset."""

    n_samples: int = param(2_000, Int(50), "samples per synthetic data set of the noise sweeps")
    w_star: tuple[float, ...] = param(
        (2.0, 1.0, 0.5, 0.25, 0.0),
        Tuple(Float(), min_len=4),
        "true weights w* of the linear and logistic data (>= 4: the sweeps tie w1 = w2 and w3 = w4)",
    )
    sigma_grid: tuple[float, ...] = param(
        (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
        Tuple(Float(0.0, 100.0, low_inclusive=False)),
        "std sigma of the Gaussian noise on the targets in the regression sweeps (linear and GAM)",
    )
    flip_rate_grid: tuple[float, ...] = param(
        (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4),
        Tuple(Float(0.0, 0.5, high_inclusive=False)),
        "label-flip rates rho of the classification sweeps (logistic and logistic GAM)",
    )
    theta: float = param(0.01, Positive(), "absolute Rashomon level theta: loss above the best, eq. (rashomon-set)")
    relative_eps: float = param(
        0.05, Positive(), "relative Rashomon level: theta = relative_eps * L(beta_hat), a fraction of the best loss"
    )
    seeds: tuple[int, ...] = param(
        (0, 1, 2, 3, 4), Seeds(), "seeds each noise level is averaged over (each drawn together with the base seed)"
    )
    feature_noise_draws: int = param(
        20,
        Int(1, 10_000),
        "data draws of the feature-noise sweep (closed-form least squares, so cheap; more draws than seeds narrow "
        "its interval, whose count of reachable simplifications moves in whole steps)",
    )
    mechanism_draws: int = param(
        20,
        Int(2, 10_000),
        "data draws of the linear-mechanism comparison (the kept cost of dropping w1 under target noise; closed-form "
        "least squares, so cheap): at the most noise one draw's ratio varies by about ±0.07, so a few seeds leave "
        "its interval on the threshold",
    )
    n_diversity_models: int = param(
        200, Int(2, 100_000), "models drawn from each Rashomon set to measure how diverse its predictions are"
    )
    n_knots: int = param(6, Int(3), "spline knots per feature of the additive models (GAMs)")
    gam_ridge: float = param(1e-6, Float(0.0, 1.0), "ridge penalty of the GAM fits (keeps the spline basis solvable)")
    logistic_ridge: float = param(
        1e-6, Float(0.0, 1.0), "ridge penalty of the logistic fits (keeps separable data finite)"
    )
    n_mc_draws: int = param(100_000, Int(1_000), "Monte-Carlo draws per exact Rashomon volume")
    d_mc: int = param(2, Int(1), "weights (dimension) of the Monte-Carlo volume check")
    n_mc_samples: int = param(500, Int(50), "samples of the data set of the Monte-Carlo volume check")
    n_view_levels: int = param(8, Int(2), "noise levels of the two-feature explorable (slider positions)")
    n_view_points: int = param(41, Int(5), "grid points per axis of the explorable's loss landscape")
    n_view_samples: int = param(500, Int(50), "samples per data set of the two-feature explorable")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            n_samples=600,
            sigma_grid=(0.1, 1.0, 3.0),
            flip_rate_grid=(0.0, 0.2, 0.4),
            seeds=(0,),
            feature_noise_draws=3,
            mechanism_draws=3,
            n_mc_draws=20_000,
            n_view_levels=3,
            n_view_points=21,
            n_view_samples=200,
        ),
        "book": {},
        "paper": dict(
            device="auto",
            n_samples=20_000,
            seeds=tuple(range(20)),
            feature_noise_draws=100,
            mechanism_draws=100,
            n_mc_draws=20_000_000,
            d_mc=30,
            n_mc_samples=5_000,
            n_view_points=61,
            sigma_grid=tuple(float(s) for s in np.geomspace(0.05, 4, 16)),
            flip_rate_grid=tuple(float(r) for r in np.linspace(0, 0.45, 16)),
        ),
    }
    PAPER_HARDWARE: ClassVar[str] = "a GPU for the 2e7-sample Monte-Carlo check in 30 dimensions (minutes); CPU works"


class RashomonResults(Results[RashomonConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the arrays the figures draw."""


# --- one noisy data set of each kind, its fit and its simplifications ---------------------------------


def _problem(kind: str, level: float, seed: int, cfg: RashomonConfig):
    """``(design, y, loss, ridge, {name: C}, basis or None)`` for one noise level and seed."""
    if kind in ("linear", "logistic"):
        d = len(cfg.w_star)
        if kind == "linear":
            X, y = D.linear_data(cfg.n_samples, cfg.w_star, level, seed)
            loss, ridge = "squared", 0.0
        else:
            X, y = D.logistic_data(cfg.n_samples, cfg.w_star, level, seed)
            loss, ridge = "logistic", cfg.logistic_ridge
        simplifications = {f"drop w{j + 1}": drop_feature(d, j) for j in range(d)}
        simplifications["w1 = w2"] = tie_features(d, 0, 1)
        simplifications["w3 = w4"] = tie_features(d, 2, 3)
        return X, y, loss, ridge, simplifications, None
    if kind == "gam":
        X, y = D.additive_data(cfg.n_samples, level, seed)
        loss = "squared"
    else:
        X, y = D.additive_logistic_data(cfg.n_samples, level, seed)
        loss = "logistic"
    basis = AdditiveBasis(X, n_knots=cfg.n_knots)
    names = list(D.SHAPES)
    simplifications = {f"f{j + 1} = {names[j]} → linear": basis.make_linear(j) for j in range(basis.d)}
    simplifications |= {f"drop f{j + 1} = {names[j]}": basis.drop(j) for j in range(basis.d)}
    return basis.transform(X), y, loss, cfg.gam_ridge, simplifications, basis


def _model_size(kind: str, fitted, basis: AdditiveBasis | None) -> float:
    if basis is None:
        return float(np.linalg.norm(fitted.w))
    grid = np.linspace(-1, 1, 101)
    return float(np.mean([np.std(basis.shape(fitted.w, j, grid)) for j in range(basis.d)]))


def _sweep(kind: str, cfg: RashomonConfig) -> tuple[dict, dict]:
    levels = cfg.sigma_grid if kind in ("linear", "gam") else cfg.flip_rate_grid
    rows, seed_rows = [], []
    shapes, draw_check = {}, {}
    for i, level in enumerate(levels):
        per_seed = []
        for seed in cfg.seeds:
            rng = np.random.default_rng([cfg.seed, seed])
            design, y, loss, ridge, simplifications, basis = _problem(kind, level, rng, cfg)
            fitted = fit(design, y, loss, ridge)
            rel = cfg.relative_eps * fitted.loss_value
            costs = {name: reducibility_cost(fitted, C) for name, C in simplifications.items()}
            # the same draws (seed) at every noise level, so the least-squares spread is an exact identity over σ
            draw_seed = int(np.random.SeedSequence([cfg.seed, seed, 13]).generate_state(1)[0])
            div_abs = rashomon_diversity(fitted, design, cfg.theta, cfg.n_diversity_models, draw_seed)
            div_rel = rashomon_diversity(fitted, design, rel, cfg.n_diversity_models, draw_seed)
            per_seed.append(
                {
                    "loss": fitted.loss_value,
                    "log_volume_abs": log_volume(fitted, cfg.theta),
                    "log_volume_rel": log_volume(fitted, rel),
                    "reachable_abs": sum(c <= cfg.theta for c in costs.values()),
                    "reachable_rel": sum(c <= rel for c in costs.values()),
                    "size": _model_size(kind, fitted, basis),
                    "spread_abs": div_abs.spread,
                    "spread_rel": div_rel.spread,
                    "ambiguity_abs": div_abs.ambiguity,
                    "ambiguity_sampled": div_abs.sampled_ambiguity,
                    "pattern_abs": div_abs.pattern_diversity,
                    "pattern_sampled": div_abs.sampled_pattern,
                    "costs": costs,
                }
            )
            if loss == "logistic" and seed == cfg.seeds[0] and i == 0:  # the draws converge to the set's ambiguity
                more = rashomon_diversity(fitted, design, cfg.theta, 20 * cfg.n_diversity_models, draw_seed)
                draw_check = {
                    "n_models": more.n_models,
                    "sampled": div_abs.sampled_ambiguity,
                    "sampled_more": more.sampled_ambiguity,
                    "closed": more.ambiguity,
                    "pattern_closed": more.pattern_diversity,
                    "pattern_sampled": div_abs.sampled_pattern,
                    "pattern_sampled_more": more.sampled_pattern,
                    "pattern_se_more": more.pattern_se,
                }
            if basis is not None and seed == cfg.seeds[0] and i in (0, len(levels) - 1):  # shapes of the first seed
                grid = np.linspace(-1, 1, 101)
                shapes[f"level_{i}"] = np.array([basis.shape(fitted.w, j, grid) for j in range(basis.d)])
        names = list(per_seed[0]["costs"])
        seed_rows.append(per_seed)
        rows.append(
            {
                "level": level,
                **{k: float(np.mean([r[k] for r in per_seed])) for k in per_seed[0] if k != "costs"},
                "costs": {n: float(np.mean([r["costs"][n] for r in per_seed])) for n in names},
            }
        )
    summary = {
        "noise": "sigma" if kind in ("linear", "gam") else "flip rate",
        "levels": list(levels),
        **{k: [r[k] for r in rows] for k in rows[0] if k not in ("level", "costs")},
        "costs": {n: [r["costs"][n] for r in rows] for n in rows[0]["costs"]},
        # per seed (outer) and level (inner): what the verdicts read, so they decide on the spread
        "by_seed": {
            k: [[float(seed_rows[i][j][k]) for i in range(len(levels))] for j in range(len(cfg.seeds))]
            for k in (
                "reachable_abs",
                "reachable_rel",
                "log_volume_abs",
                "size",
                "loss",
                "spread_abs",
                "ambiguity_abs",
                "ambiguity_sampled",
                "pattern_abs",
                "pattern_sampled",
            )
        },
    }
    if kind in ("logistic", "gam_logistic"):
        summary["draw_check"] = draw_check
    summary["by_seed"]["costs"] = {
        n: [[float(seed_rows[i][j]["costs"][n]) for i in range(len(levels))] for j in range(len(cfg.seeds))]
        for n in names
    }
    return summary, {"shapes": shapes, "grid": np.linspace(-1, 1, 101)} if shapes else {}


def _feature_noise(cfg: RashomonConfig) -> tuple[dict, dict]:
    """Linear regression with noise on the *features* (errors in variables) instead of the targets.

    Targets keep the smallest noise of ``sigma_grid``; the observed features are ``X + s * noise`` for each
    ``s`` of ``sigma_grid``. Unlike target noise this moves the least-squares Hessian ``X^T X / n`` (by about
    ``s^2``), so the fixed-theta volume can grow or shrink: a test of the first claim in the linear class
    that could fail, where the target-noise sweep's flat volume is an identity.
    """
    d = len(cfg.w_star)
    simplifications = {f"drop w{j + 1}": drop_feature(d, j) for j in range(d)}
    simplifications["w1 = w2"] = tie_features(d, 0, 1)
    simplifications["w3 = w4"] = tie_features(d, 2, 3)
    target_sigma = min(cfg.sigma_grid)
    keys = ("log_volume_abs", "reachable_abs", "reachable_rel", "size", "loss")
    by_seed: dict[str, list[list[float]]] = {k: [] for k in keys}
    for seed in range(cfg.feature_noise_draws):
        rows = {k: [] for k in keys}
        for level in cfg.sigma_grid:
            rng = np.random.default_rng([cfg.seed, seed, 7])  # the same clean data at every level
            X, y = D.linear_data(cfg.n_samples, cfg.w_star, target_sigma, rng)
            X_obs = X + level * rng.standard_normal(X.shape)
            fitted = fit(X_obs, y, "squared", 0.0)
            rel = cfg.relative_eps * fitted.loss_value
            costs = [reducibility_cost(fitted, C) for C in simplifications.values()]
            rows["log_volume_abs"].append(log_volume(fitted, cfg.theta))
            rows["reachable_abs"].append(float(sum(c <= cfg.theta for c in costs)))
            rows["reachable_rel"].append(float(sum(c <= rel for c in costs)))
            rows["size"].append(float(np.linalg.norm(fitted.w)))
            rows["loss"].append(float(fitted.loss_value))
        for k in keys:
            by_seed[k].append(rows[k])
    summary = {
        "levels": list(cfg.sigma_grid),
        "target_sigma": target_sigma,
        **{k: np.mean(by_seed[k], axis=0).tolist() for k in keys},
        "by_seed": by_seed,
    }
    return summary, {}


def _linear_mechanism(cfg: RashomonConfig) -> tuple[dict, dict]:
    """The linear sweep's mechanism test on more data draws than seeds: per draw, the cost of dropping w1 and
    ``|w_hat|`` at each target noise ``sigma`` (the same features and the same noise direction at every ``sigma``).

    One draw's cost at the most noise carries the sampling error of ``w_hat1`` there (its sd is about
    ``sigma / sqrt(n)``), so its ratio to the clean cost varies by several percent; averaging independent draws
    narrows the interval over draws as ``1 / sqrt(draws)``, as for the feature-noise sweep.
    """
    d = len(cfg.w_star)
    C = drop_feature(d, 0)
    by_draw: dict[str, list[list[float]]] = {"drop w1": [], "size": []}
    for draw in range(cfg.mechanism_draws):
        costs, sizes = [], []
        for level in cfg.sigma_grid:
            rng = np.random.default_rng([cfg.seed, draw, 11])  # the same data at every level, only sigma moves
            X, y = D.linear_data(cfg.n_samples, cfg.w_star, level, rng)
            fitted = fit(X, y, "squared", 0.0)
            costs.append(reducibility_cost(fitted, C))
            sizes.append(float(np.linalg.norm(fitted.w)))
        by_draw["drop w1"].append(costs)
        by_draw["size"].append(sizes)
    summary = {
        "levels": list(cfg.sigma_grid),
        "draws": cfg.mechanism_draws,
        **{k: np.mean(v, axis=0).tolist() for k, v in by_draw.items()},
        "by_draw": by_draw,
    }
    return summary, {}


def _real(cfg: RashomonConfig) -> dict:
    """Single-feature drops that stay inside the Rashomon set, with added noise."""
    out = {}
    for name in D.REAL_DATASETS:
        X, y, features, loss = D.real_data(name)
        levels = (0.0, 0.5, 1.0, 2.0) if loss == "squared" else (0.0, 0.1, 0.2, 0.3)
        rows = []
        for level in levels:
            per_seed = []
            for seed in cfg.seeds:
                rng = np.random.default_rng([cfg.seed, seed])
                yy = y + level * rng.standard_normal(len(y)) if loss == "squared" else D.flip_labels(y, level, rng)
                fitted = fit(X, yy, loss, ridge=1e-3 if loss == "logistic" else 0.0)
                costs = np.array([reducibility_cost(fitted, drop_feature(X.shape[1], j)) for j in range(X.shape[1])])
                per_seed.append(
                    {
                        "droppable_abs": (costs <= cfg.theta).sum(),
                        "droppable_abs_tenth": (costs <= cfg.theta / 10).sum(),
                        "droppable_rel": (costs <= cfg.relative_eps * fitted.loss_value).sum(),
                        "median_cost": np.median(costs),
                        "w_norm": np.linalg.norm(fitted.w),
                        "loss": fitted.loss_value,
                    }
                )
            rows.append(
                {
                    "noise": level,
                    **{k: float(np.mean([r[k] for r in per_seed])) for k in per_seed[0]},
                    "by_seed": {
                        k: [float(r[k]) for r in per_seed] for k in ("droppable_abs_tenth", "droppable_rel", "loss")
                    },
                }
            )
        out[name] = {
            "loss": loss,
            "features": len(features),
            "noise_kind": "sigma" if loss == "squared" else "flip rate",
            "rows": rows,
        }
    return out


def _exactness(cfg: RashomonConfig) -> dict:
    """Monte-Carlo volumes of exact sets against the closed form (linear) and Laplace (logistic)."""
    w = np.r_[1.0, 0.5, np.zeros(max(cfg.d_mc - 2, 0))][: cfg.d_mc]
    X, y = D.linear_data(cfg.n_mc_samples, w, 1.0, cfg.seed)
    lin = fit(X, y)
    mc_lin = exact_log_volume(X, y, lin, cfg.theta, cfg.n_mc_draws, seed=cfg.seed, device=cfg.device)
    X, y = D.logistic_data(cfg.n_mc_samples, w, 0.1, cfg.seed)
    logi = fit(X, y, "logistic", cfg.logistic_ridge)
    out = {
        "dim": cfg.d_mc,
        "linear": {
            "closed_form": log_volume(lin, cfg.theta),
            "monte_carlo": mc_lin.log_volume,
            "std_error": mc_lin.std_error,
            "max_radius": mc_lin.max_radius,
            "possibly_truncated": mc_lin.possibly_truncated,
        },
        "logistic": [],
    }
    for level in (cfg.theta / 10, cfg.theta, 5 * cfg.theta):
        mc = exact_log_volume(X, y, logi, level, cfg.n_mc_draws, seed=cfg.seed, device=cfg.device)
        out["logistic"].append(
            {
                "theta": level,
                "laplace": log_volume(logi, level),
                "monte_carlo": mc.log_volume,
                "std_error": mc.std_error,
                "max_radius": mc.max_radius,
                "possibly_truncated": mc.possibly_truncated,
            }
        )
    return out


@checked(
    X=Array("n 2"),
    y=Array("n"),
    loss=Choice(("squared", "logistic")),
    w1=Array("a"),
    w2=Array("b"),
    ridge=Float(0.0),
)
def profile_loss_grid(
    X: np.ndarray, y: np.ndarray, loss: str, w1: np.ndarray, w2: np.ndarray, ridge: float = 0.0
) -> np.ndarray:
    """``min_b L(b, w)`` on a grid of ``(w1, w2)``: the Rashomon set projected on the weights.

    A simplification (a line in this plane) is reachable iff the line meets the projected set,
    which is why we draw the profile and not a slice at the fitted intercept.
    """
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if loss == "logistic" and not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("y must hold labels 0 and 1 for the logistic loss")
    W1, W2 = np.meshgrid(w1, w2)
    margin0 = X @ np.stack([W1.ravel(), W2.ravel()])  # (n, grid)
    if loss == "squared":
        b = (y[:, None] - margin0).mean(0)
        value = ((y[:, None] - margin0 - b) ** 2).mean(0)
    else:
        b = np.zeros(margin0.shape[1])
        for _ in range(12):  # Newton steps on the intercept, all grid points at once (converges in < 10)
            p = expit(margin0 + b)
            b -= (p - y[:, None]).mean(0) / np.maximum((p * (1 - p)).mean(0), 1e-12)
        m = margin0 + b
        value = (np.logaddexp(0, m) - y[:, None] * m).mean(0)
    value = value + 0.5 * ridge * (W1.ravel() ** 2 + W2.ravel() ** 2)
    return value.reshape(W1.shape)


def _views(cfg: RashomonConfig) -> tuple[dict, dict]:
    """Two-feature problems at several noise levels: profile-loss grids, fits and costs."""
    sig = np.geomspace(0.2, 3.0, cfg.n_view_levels)
    rho = np.linspace(0.0, 0.4, cfg.n_view_levels)
    w1, w2 = np.linspace(-0.6, 2.0, cfg.n_view_points), np.linspace(-0.6, 1.6, cfg.n_view_points)
    curves = {"sigma": sig, "rho": rho, "w1": w1, "w2": w2}
    summary = {"sigma": sig.tolist(), "rho": rho.tolist()}
    for kind, levels, w_star in (("linear", sig, (1.2, 0.6)), ("logistic", rho, (1.5, 0.8))):
        grids, fits, costs = [], [], []
        for level in levels:
            if kind == "linear":
                X, y = D.linear_data(cfg.n_view_samples, w_star, float(level), cfg.seed, correlation=0.5)
                loss, ridge = "squared", 0.0
            else:
                X, y = D.logistic_data(cfg.n_view_samples, w_star, float(level), cfg.seed)
                loss, ridge = "logistic", cfg.logistic_ridge
            fitted = fit(X, y, loss, ridge)
            grids.append(profile_loss_grid(X, y, loss, w1, w2, ridge) - fitted.loss_value)
            fits.append([*fitted.w, fitted.loss_value])
            costs.append(
                [reducibility_cost(fitted, C) for C in (drop_feature(2, 0), drop_feature(2, 1), tie_features(2, 0, 1))]
            )
        curves[kind] = {"excess_loss": np.array(grids), "fits": np.array(fits), "costs": np.array(costs)}
        summary[kind] = {"costs": np.array(costs).tolist(), "fits": np.array(fits).tolist()}
    return summary, curves


@checked()
def run(
    config: RashomonConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> RashomonResults:
    """Run every experiment of the chapter; finished parts are checkpointed (see the runner)."""
    cfg, checkpoint = start_run(RashomonConfig, config, checkpoint)
    parts = {
        **{k: (lambda k=k: _sweep(k, cfg)) for k in KINDS},
        "feature_noise": lambda: _feature_noise(cfg),
        "linear_mechanism": lambda: _linear_mechanism(cfg),
        "real": lambda: (_real(cfg), {}),
        "exactness": lambda: (_exactness(cfg), {}),
        "views": lambda: _views(cfg),
    }
    summary, curves = run_parts_timed(checkpoint, parts, progress)
    return RashomonResults(config=cfg, summary=summary, curves=curves)


@checked()
def headline(results: RashomonResults) -> list[str]:
    """A few key numbers for the end-of-run summary of the command line."""
    s = results.summary
    lin, logi, ex = s["linear"], s["logistic"], s["exactness"]
    return [
        f"linear: absolute-theta log-volume spread over sigma {np.ptp(lin['log_volume_abs']):.1e}; "
        f"reachable (relative) {lin['reachable_rel'][0]:.1f} -> {lin['reachable_rel'][-1]:.1f}",
        f"logistic: |w| {logi['size'][0]:.2f} -> {logi['size'][-1]:.2f}; reachable (absolute) "
        f"{logi['reachable_abs'][0]:.1f} -> {logi['reachable_abs'][-1]:.1f}",
        f"Monte-Carlo check in {ex['dim']} dims: linear {ex['linear']['monte_carlo']:.3f} vs closed form "
        f"{ex['linear']['closed_form']:.3f}",
    ]
