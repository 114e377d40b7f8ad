"""The chapter's experiments: GD and Muon in the river valley, and a tiny language model.

1. **Sensing**: GD, Muon (no momentum), Muon with momentum and the two-stage schedule (Muon,
   then GD) on one mixed-spiked sensing problem: loss, distance along the river, the first spike
   coordinate, step by step; and the baseline the switch is argued against, Muon with a decaying
   learning rate (cosine, linear to zero, warmup-stable-decay) at the same number of steps, each
   arm's peak step chosen by :func:`tune_lrs` on tuning seeds disjoint from the evaluation seeds; the switch
   and the one decayed baseline it is compared against also run on further valley draws (``switch_seeds``).
2. **When to switch**: the final loss of the two-stage schedule over a grid of switch steps, for
   several spike curvatures (GD's step size follows the spike: ``gd_lr = 1.9 / lam_spike``).
3. **Language model**: a character-level Transformer on standard-library docstrings, trained with
   AdamW, with Muon (+ AdamW for non-matrix weights), with Muon switching to AdamW, and with Muon whose
   step decays (:data:`LM_BASELINE`): the switch's Muon step and hand-over and the decayed schedule's peak
   step chosen by :func:`tune_lm_lrs` on the same grid and tuning seeds.

With two or more CPUs (``processes``), the valley's parts (1 and 2) run in a spawned worker process while
this one trains the language model: each part is the same deterministic function of the config wherever
it runs (one torch thread each), so the numbers are those of the serial run (tested).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from typing import Any, ClassVar

import numpy as np

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Float, Int, Positive, Probability, Seeds, Tuple, param
from ..core.threads import one_cpu_thread, worker_count
from .lm import DECAYED as LM_DECAYED
from .lm import _train, stdlib_corpus, train_schedules
from .optimizers import optimize, oscillation, switch_sweep
from .sensing import make_problem

LM_HEADS = 4  # attention heads of the character model (lm.CharTransformer's default)
#: the decayed-learning-rate Muon arms: run name -> schedule of :func:`~explorables.muon.optimizers.lr_factors`
DECAYED = {"Muon, cosine": "cosine", "Muon, linear → 0": "linear", "Muon, WSD": "wsd"}
#: the tuned arms: the switch and the decayed schedules (the config field holding each one's Muon step)
TUNED = {"Muon → GD": "switch_lr", "Muon, cosine": "cosine_lr", "Muon, linear → 0": "linear_lr", "Muon, WSD": "wsd_lr"}
#: the grid of Muon (peak) steps every tuned arm is chosen from: the same budget for each
LR_GRID = (0.00125, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32)
#: the hand-over steps the switch's second knob is chosen from (jointly with its Muon step; book preset's 3,000 steps)
SWITCH_STEP_GRID = (300, 1_000, 2_000, 2_800)
#: the committed tuning table :func:`tune_lrs` wrote (``python -m explorables.muon.experiment``), relative to the repo
TUNING_TABLE = "data/muon_tuning.json"
#: the one decayed schedule the switch is compared against: the lowest tuning loss of :data:`DECAYED` at its pick
#: (chosen on the tuning draws, never on the evaluation seeds; tests check it against the table)
BASELINE = "Muon, cosine"
#: the base seed of the tuning draws (its run seeds 1000 * 100 + s are disjoint from base seeds 0-4's)
TUNING_BASE_SEED = 100
#: the language model's grid of Muon (peak) steps, for the switch and every decayed schedule alike (every other
#: point of :data:`LR_GRID`, around torch's and Keller Jordan's default 0.02)
LM_LR_GRID = (0.005, 0.01, 0.02, 0.04, 0.08)
#: the hand-over points (share of the steps) the switch's second knob is chosen from on the language model
#: (jointly with its Muon step, as on the valley: roughly SWITCH_STEP_GRID's shares, and the earlier default 0.6)
LM_SWITCH_FRACTIONS = (0.1, 0.33, 0.6, 0.9)
#: the committed language-model tuning table :func:`tune_lm_lrs` wrote (``benchmarks/tune_muon_lm_lr.py``)
LM_TUNING_TABLE = "data/muon_lm_lr_tuning.json"
#: the decayed schedule the book's language model runs against the switch: the lowest tuning loss of
#: :data:`~explorables.muon.lm.DECAYED` at its pick on the language model's tuning draws (tests check the table)
LM_BASELINE = "muon_wsd"


@dataclass(frozen=True)
class MuonConfig(ExperimentConfig):
    """Settings of :func:`run`; field defaults are the ``book`` preset."""

    matrix_size: int = param(20, Int(4), "rows = columns of the sensed matrix W (m = n)")
    n_river: int = param(3, Int(1), "river (signal) directions: the rank of the solution W*, curvature lam_river")
    n_spikes: int = param(2, Int(1), "spike (hill) directions, curvature lam_spike")
    lam_river: float = param(0.05, Positive(), "curvature of the river coordinates (small), eq. (muon-valley)")
    lam_spike: float = param(
        100.0, Positive(), "curvature of the spike coordinates (large); GD's step is 1.9 / lam_spike"
    )
    lam_bulk: float = param(0.005, Positive(), "curvature of every other coordinate (the tiny bulk)")
    muon_lr: float = param(0.02, Positive(), "Muon's step size eta (also Adam's, for comparison), eq. (muon-step)")
    momentum: float = param(
        0.9, Float(0.0, 1.0, high_inclusive=False), "momentum beta of 'Muon + momentum' and 'GD + momentum'"
    )
    n_sensing_steps: int = param(3_000, Int(10), "optimiser steps of every run on the sensing problem")
    n_tail_steps: int = param(
        300, Int(1), "last steps whose median loss is a run's 'tail loss' (Muon's end is a chaotic orbit, not a point)"
    )
    seeds: tuple[int, ...] = param(
        (0, 1, 2), Seeds(), "seeds the verdicts are taken over (valley bases and start; LM weights and batches)"
    )
    switch_seeds: int = param(
        14,
        Int(1, 999),
        "valley draws the switch comparison (the switch against BASELINE) is taken over, at least: those of seeds, "
        "then the next seeds after the largest (run seeds 1000 * seed + s; only these two arms run on the extra "
        "draws); set by the cost rule on the page: the valley worker still ends before the language model",
    )
    switch_step: int = param(
        2_800,
        Int(0),
        "step at which the two-stage schedule hands over from Muon to GD (chosen from SWITCH_STEP_GRID jointly "
        "with switch_lr on tuning seeds, tune_lrs; table in data/muon_tuning.json)",
    )
    switch_lr: float = param(
        0.04, Positive(), "Muon's step in the two-stage schedule (chosen from LR_GRID on tuning seeds, tune_lrs)"
    )
    cosine_lr: float = param(0.01, Positive(), "peak step of Muon with a cosine schedule to 0 (tuned like switch_lr)")
    linear_lr: float = param(0.01, Positive(), "peak step of Muon with a linear-to-0 schedule (tuned like switch_lr)")
    wsd_lr: float = param(0.005, Positive(), "peak step of Muon with warmup-stable-decay (tuned like switch_lr)")
    early_step: int = param(100, Int(1), "step t at which the river distances of Muon and GD are compared")
    switch_grid: tuple[int, ...] = param(
        (100, 1000, 2000, 2800, 2950),
        Tuple(Int(0), increasing=True),
        "switch steps tried by the when-to-switch sweep",
    )
    lam_spike_grid: tuple[float, ...] = param(
        (25.0, 100.0, 400.0),
        Tuple(Positive()),
        "spike curvatures of the when-to-switch sweep (GD step 1.9 / lam_spike each)",
    )
    n_lm_steps: int = param(120, Int(1), "training steps of the character language model, per schedule")
    lm_batch_size: int = param(24, Int(1), "sequences per training batch of the language model")
    lm_context_size: int = param(48, Int(2), "characters per training sequence (the model's context)")
    lm_d_model: int = param(48, Int(LM_HEADS), f"width of the language model (a multiple of its {LM_HEADS} heads)")
    n_lm_layers: int = param(2, Int(1), "Transformer layers of the language model")
    n_lm_chars: int = param(200_000, Int(1_000), "characters of standard-library docstrings in the corpus (at most)")
    lm_seeds: int = param(
        4,
        Int(3, 100),
        "language-model runs per schedule (run seeds 1000 * seed + 0, 1, ...): its verdicts are over these "
        "(chosen on tuning base seed 100 by benchmarks/tune_muon_lm.py; table in data/muon_lm_tuning.json)",
    )
    lm_switch_fraction: float = param(
        0.9,
        Probability(),
        "share of the language model's steps before 'Muon, then AdamW' switches to AdamW (chosen from "
        "LM_SWITCH_FRACTIONS jointly with lm_muon_lr on tuning base seed 100, tune_lm_lrs)",
    )
    lm_muon_lr: float = param(
        0.04,
        Positive(),
        "Muon's step on the language model, constant Muon and the switch's first stage (chosen from LM_LR_GRID "
        "on tuning base seed 100, tune_lm_lrs; table in data/muon_lm_lr_tuning.json)",
    )
    lm_decayed_lr: float = param(
        0.04, Positive(), "peak Muon step of the language model's decayed schedule LM_BASELINE (tuned like lm_muon_lr)"
    )
    lm_adamw_lr: float = param(
        3e-3, Positive(), "AdamW's step on the language model (every arm's non-matrix weights; not tuned)"
    )
    processes: int = param(
        0,
        Int(0, 64),
        "processes: with 2 or more the valley's parts run in a spawned worker while this one trains the language "
        "model (0: every CPU available); the numbers are the same for any count",
    )

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            matrix_size=10,
            n_sensing_steps=1_200,
            switch_step=200,
            switch_grid=(100, 300),
            lam_spike_grid=(100.0,),
            n_lm_steps=20,
            lm_batch_size=8,
            lm_context_size=24,
            lm_d_model=24,
            n_lm_chars=20_000,
            lm_seeds=3,
            switch_seeds=3,
            processes=1,
        ),
        "book": {},
        "paper": dict(
            device="auto",
            matrix_size=200,
            n_river=10,
            n_spikes=10,
            n_sensing_steps=20_000,
            switch_grid=tuple(int(s) for s in np.geomspace(50, 10_000, 16)),
            lam_spike_grid=(10.0, 25.0, 100.0, 400.0, 1600.0),
            n_lm_steps=20_000,
            lm_batch_size=64,
            lm_context_size=256,
            lm_d_model=512,
            n_lm_layers=8,
            n_lm_chars=20_000_000,
            lm_seeds=3,
        ),
    }
    PAPER_HARDWARE: ClassVar[str] = "one GPU for the 8-layer, 512-wide language model (hours); the rest is small"

    @property
    def gd_lr(self) -> float:
        """GD's step size, just under the stability limit 2 / lam_spike."""
        return 1.9 / self.lam_spike

    def cross_checks(self) -> None:
        if self.n_river > self.matrix_size - 2:
            raise ValueError(f"n_river must be <= matrix_size - 2 = {self.matrix_size - 2}, got {self.n_river}")
        if self.n_spikes > self.matrix_size - self.n_river:
            raise ValueError(
                f"n_spikes must be <= matrix_size - n_river = {self.matrix_size - self.n_river}, got {self.n_spikes}"
            )
        for name in ("switch_step", "early_step", "n_tail_steps"):
            if getattr(self, name) > self.n_sensing_steps:
                raise ValueError(
                    f"{name} must be <= n_sensing_steps ({self.n_sensing_steps}), got {getattr(self, name)}"
                )
        if self.switch_grid[-1] > self.n_sensing_steps:
            raise ValueError(
                f"switch_grid must lie in [0, n_sensing_steps = {self.n_sensing_steps}], got {self.switch_grid}"
            )
        if self.lm_d_model % LM_HEADS:
            raise ValueError(f"lm_d_model must be a multiple of {LM_HEADS} (the heads), got {self.lm_d_model}")


class MuonResults(Results[MuonConfig]):
    """What :func:`run` returns: a JSON-able ``summary`` and the curves the figures draw."""


def run_seed(cfg: MuonConfig, seed: int) -> int:
    """The seed of one run: ``seed`` of ``cfg.seeds``, drawn together with the base seed ``cfg.seed``."""
    return 1_000 * cfg.seed + seed


def switch_draws(cfg: MuonConfig) -> list[int]:
    """The valley draws (seeds, before :func:`run_seed`) the switch comparison is taken over: ``cfg.seeds``, then
    the integers after the largest of them, until there are ``cfg.switch_seeds`` (never fewer than ``cfg.seeds``)."""
    extra = max(0, cfg.switch_seeds - len(cfg.seeds))
    return [*cfg.seeds, *range(max(cfg.seeds) + 1, max(cfg.seeds) + 1 + extra)]


def tail_loss(loss: np.ndarray, n_tail_steps: int) -> float:
    """Median loss over the last ``n_tail_steps`` steps: a run's end level, robust to where an orbit stops."""
    return float(np.median(np.asarray(loss)[-n_tail_steps:]))


def _problem(cfg: MuonConfig, lam_spike: float | None = None, seed: int | None = None):
    return make_problem(
        m=cfg.matrix_size,
        n=cfg.matrix_size,
        rank=cfg.n_river,
        spikes=cfg.n_spikes,
        lam_river=cfg.lam_river,
        lam_spike=lam_spike or cfg.lam_spike,
        lam_bulk=cfg.lam_bulk,
        seed=run_seed(cfg, cfg.seeds[0]) if seed is None else seed,
    )


def _tuned_run(cfg: MuonConfig, problem, name: str, lr: float, switch_step: int | None = None):
    """One tuned arm (the switch or a decayed-LR Muon) at Muon (peak) step ``lr``, ``cfg.n_sensing_steps`` steps;
    the switch hands over at ``switch_step`` (default ``cfg.switch_step``)."""
    if name == "Muon → GD":
        step = cfg.switch_step if switch_step is None else switch_step
        return optimize(problem, "switch", cfg.n_sensing_steps, lr, cfg.gd_lr, switch_step=step)
    return optimize(problem, "muon", cfg.n_sensing_steps, lr, cfg.gd_lr, schedule=DECAYED[name])


def _sensing_runs(cfg: MuonConfig, seed: int) -> dict:
    problem = _problem(cfg, seed=seed)
    common = dict(steps=cfg.n_sensing_steps, muon_lr=cfg.muon_lr, gd_lr=cfg.gd_lr)
    runs = {
        "GD": optimize(problem, "gd", **common),
        "Muon": optimize(problem, "muon", **common),
        "Muon + momentum": optimize(problem, "muon", momentum=cfg.momentum, **common),
        "GD + momentum": optimize(problem, "gd_momentum", momentum=cfg.momentum, **common),
        "Adam": optimize(problem, "adam", adam_lr=cfg.muon_lr, **common),
    }
    return runs | {name: _tuned_run(cfg, problem, name, getattr(cfg, field)) for name, field in TUNED.items()}


def tune_lrs(
    cfg: MuonConfig,
    grid: tuple[float, ...] = LR_GRID,
    base_seed: int = TUNING_BASE_SEED,
    switch_steps: tuple[int, ...] = SWITCH_STEP_GRID,
) -> dict:
    """Choose each tuned arm's knobs on tuning draws: the valleys of ``cfg.seeds`` drawn with base seed
    ``base_seed`` (disjoint from the evaluation draws of base seeds 0-4).

    Every arm gets the same Muon (peak) step grid ``grid`` and the same draws; the switch also gets its
    hand-over step, chosen jointly with its Muon step over ``grid`` × ``switch_steps``. A pick minimises
    the mean over the draws of log10(tail loss). The baseline is the decayed schedule whose pick has the
    lowest tuning loss. Returns ``picks`` ``{config field: value}``, ``baseline``, and the tables: ``table``
    ``{decayed arm: [mean log10 tail loss per grid step]}`` and ``switch_table`` ``{switch step: [... per grid step]}``.
    """
    if not grid or any(not (g > 0) for g in grid):
        raise ValueError(f"grid must be a non-empty tuple of positive steps, got {grid}")
    if not switch_steps or any(not (0 <= s <= cfg.n_sensing_steps) for s in switch_steps):
        raise ValueError(f"switch_steps must be a non-empty tuple in [0, {cfg.n_sensing_steps}], got {switch_steps}")
    seeds = [1_000 * base_seed + s for s in cfg.seeds]
    problems = [_problem(cfg, seed=s) for s in seeds]

    def score(name: str, lr: float, step: int | None = None) -> float:
        runs = [_tuned_run(cfg, p, name, lr, step).loss for p in problems]
        return float(np.mean([np.log10(tail_loss(r, cfg.n_tail_steps)) for r in runs]))

    table = {name: [score(name, lr) for lr in grid] for name in DECAYED}
    switch_table = {int(k): [score("Muon → GD", lr, k) for lr in grid] for k in switch_steps}
    picks = {TUNED[name]: float(grid[int(np.argmin(v))]) for name, v in table.items()}
    flat = [(v, k, lr) for k, row in switch_table.items() for lr, v in zip(grid, row, strict=True)]
    best, step, lr = min(flat)
    picks |= {"switch_lr": float(lr), "switch_step": int(step)}
    baseline = min(DECAYED, key=lambda name: min(table[name]))
    return {
        "picks": picks,
        "baseline": baseline,
        "tuning_loss": {name: float(min(v)) for name, v in table.items()} | {"Muon → GD": float(best)},
        "table": table,
        "switch_table": {str(k): v for k, v in switch_table.items()},
        "grid": list(grid),
        "switch_steps": list(switch_steps),
        "run_seeds": seeds,
    }


def torch_muon_difference(seed: int = 0) -> float:
    """Largest difference between one step of ``torch.optim.Muon`` and the same step from our Newton–Schulz
    (in bfloat16, as torch computes it), on a random 30×20 gradient: our Muon is torch's."""
    import torch

    from .orthogonalize import newton_schulz

    gen = torch.Generator().manual_seed(seed)
    G = torch.randn(30, 20, generator=gen)
    W = torch.nn.Parameter(torch.randn(30, 20, generator=gen))
    start = W.detach().clone()
    opt = torch.optim.Muon([W], lr=0.1, weight_decay=0.0, momentum=0.0)
    W.grad = G.clone()
    opt.step()
    ours = start - 0.1 * np.sqrt(30 / 20) * newton_schulz(G, dtype=torch.bfloat16).float()  # torch's lr scaling
    return float((W.detach() - ours).abs().max())


def _sensing(cfg: MuonConfig) -> tuple[dict, dict]:
    """Every run on each seed's valley, and the switch and its baseline on the further draws of :func:`switch_draws`;
    the curves (and the single-run numbers) are the first seed's."""
    per_seed = [_sensing_runs(cfg, run_seed(cfg, seed)) for seed in cfg.seeds]
    runs, t, n = per_seed[0], cfg.early_step, cfg.n_tail_steps
    summary = {
        "river_start": float(runs["GD"].river[0]),
        "river_early": {k: float(r.river[t]) for k, r in runs.items()},
        "early_ratio_muon_over_gd": float(runs["Muon"].river[t] / runs["GD"].river[t]),
        "final_loss": {k: float(r.loss[-1]) for k, r in runs.items()},
        "min_loss": {k: float(r.loss.min()) for k, r in runs.items()},
        "spike_oscillation": {k: oscillation(r.spike) for k, r in runs.items()},
        "gd_lr": cfg.gd_lr,
        "seeds": list(cfg.seeds),
        "torch_muon_max_difference": torch_muon_difference(run_seed(cfg, cfg.seeds[0])),
        "by_seed": {
            "start_loss": [float(r["GD"].loss[0]) for r in per_seed],
            "early_ratio_muon_over_gd": [float(r["Muon"].river[t] / r["GD"].river[t]) for r in per_seed],
            "tail_loss": {k: [tail_loss(r[k].loss, n) for r in per_seed] for k in runs},
            "min_loss": {k: [float(r[k].loss.min()) for r in per_seed] for k in runs},
        },
    }
    # the switch comparison over more draws: the switch and the baseline only, on the draws after cfg.seeds
    draws = switch_draws(cfg)
    compared = {name: list(summary["by_seed"]["tail_loss"][name]) for name in ("Muon → GD", BASELINE)}
    for seed in draws[len(cfg.seeds) :]:
        problem = _problem(cfg, seed=run_seed(cfg, seed))
        for name, tails in compared.items():
            tails.append(tail_loss(_tuned_run(cfg, problem, name, getattr(cfg, TUNED[name])).loss, n))
    summary["switch_draws"] = {"seeds": draws, "tail_loss": compared}
    curves = {k: asdict(r) for k, r in runs.items()}
    return summary, curves


def _switch_grid(cfg: MuonConfig) -> tuple[dict, dict]:
    table = []
    for lam in cfg.lam_spike_grid:
        problem = _problem(cfg, lam)
        # one Muon run, GD continued from each hand-over: the same final losses as a switch run per step (tested)
        finals = switch_sweep(problem, cfg.n_sensing_steps, cfg.switch_grid, cfg.muon_lr, 1.9 / lam).tolist()
        table.append({"lam_spike": lam, "final_loss": finals, "best_switch": cfg.switch_grid[int(np.argmin(finals))]})
    return {"switch_steps": list(cfg.switch_grid), "rows": table}, {}


def lm_run_seeds(cfg: MuonConfig) -> list[int]:
    """The language model's run seeds: ``cfg.lm_seeds`` of them, drawn with the base seed like :func:`run_seed`."""
    return [run_seed(cfg, i) for i in range(cfg.lm_seeds)]


#: the schedules the book's language model runs: AdamW, constant Muon, the switch, and the decayed baseline
LM_SCHEDULES = ("adamw", "muon", "muon_then_adamw", LM_BASELINE)


def _lm_settings(cfg: MuonConfig) -> dict:
    return dict(
        steps=cfg.n_lm_steps,
        batch=cfg.lm_batch_size,
        context=cfg.lm_context_size,
        d_model=cfg.lm_d_model,
        layers=cfg.n_lm_layers,
        adamw_lr=cfg.lm_adamw_lr,
        device=cfg.device,
    )


def _language_model(cfg: MuonConfig, checkpoint: Checkpointer | None) -> tuple[dict, dict]:
    text = stdlib_corpus(cfg.n_lm_chars)
    runs = {}
    by_seed: dict[str, list[float]] = {schedule: [] for schedule in LM_SCHEDULES}
    seeds = lm_run_seeds(cfg)
    # a small model (d_model 48, two layers): on a CPU a second torch thread only waits, and on a busy
    # machine that wait doubled this part's wall time (measured 24 s vs 48 s); on a GPU nothing changes
    with one_cpu_thread(resolve_device(cfg.device)):
        for seed in seeds:
            trained = train_schedules(
                text,
                switch_fraction=cfg.lm_switch_fraction,
                muon_lr=cfg.lm_muon_lr,
                decayed_lr=cfg.lm_decayed_lr,
                schedules=LM_SCHEDULES,
                seed=seed,
                checkpoint=checkpoint,
                curve=seed == seeds[0],  # the figure draws the first seed's curves; the others need the end only
                **_lm_settings(cfg),
            )
            for schedule, run_ in trained.items():
                by_seed[schedule].append(run_.val_loss[-1])
            if seed == seeds[0]:
                runs = trained
    summary = {
        "chars": len(text),
        "held_out_chars": len(text) - int(0.9 * len(text)),
        "run_seeds": seeds,
        "final_val_loss": {k: r.val_loss[-1] for k, r in runs.items()},
        "final_val_loss_by_seed": by_seed,
        "switch_step": math.floor(cfg.lm_switch_fraction * cfg.n_lm_steps),
        "baseline": LM_BASELINE,
    }
    return summary, {k: asdict(r) for k, r in runs.items()}


def tune_lm_lrs(
    cfg: MuonConfig,
    grid: tuple[float, ...] = LM_LR_GRID,
    fractions: tuple[float, ...] = LM_SWITCH_FRACTIONS,
    base_seed: int = TUNING_BASE_SEED,
    decayed: tuple[str, ...] = tuple(LM_DECAYED),
) -> dict:
    """Choose the language model's Muon steps on tuning draws: ``cfg.lm_seeds`` run seeds of base seed
    ``base_seed`` (disjoint from the evaluation draws of base seeds 0-4), the book's model and steps.

    Every arm gets the same Muon (peak) step grid ``grid`` and the same draws: the switch ("Muon, then AdamW")
    jointly with its hand-over share over ``grid`` × ``fractions`` (as on the valley; constant Muon runs at the
    switch's pick, being its first stage), each decayed schedule of ``decayed`` over ``grid``. A pick minimises
    the mean final validation loss over the draws (nats). The baseline is the decayed schedule whose pick has
    the lowest tuning loss. Returns ``picks`` ``{config field: value}``, ``baseline``, ``table`` ``{decayed
    schedule: [mean loss per grid step]}``, ``switch_table`` ``{share: [...]}``, ``muon`` (constant Muon's row),
    and the per-seed losses.
    """
    if not grid or any(not (g > 0) for g in grid):
        raise ValueError(f"grid must be a non-empty tuple of positive steps, got {grid}")
    if not fractions or any(not (0.0 <= f <= 1.0) for f in fractions):
        raise ValueError(f"fractions must be a non-empty tuple of shares in [0, 1], got {fractions}")
    if not decayed or any(d not in LM_DECAYED for d in decayed):
        raise ValueError(f"decayed must be a non-empty tuple of {sorted(LM_DECAYED)}, got {decayed}")
    t0 = time.time()
    text = stdlib_corpus(cfg.n_lm_chars)
    seeds = [1_000 * base_seed + i for i in range(cfg.lm_seeds)]
    kw = dict(_lm_settings(cfg), eval_every=cfg.n_lm_steps, checkpoint=None, curve=False)
    steps = cfg.n_lm_steps
    losses: dict[str, dict[str, list[float]]] = {}  # arm -> str(lr) -> per seed
    with one_cpu_thread(resolve_device(cfg.device)):
        for lr in grid:
            for seed in seeds:
                handovers = {math.floor(f * steps): None for f in fractions}
                args = dict(kw, muon_lr=lr, seed=seed)
                muon, kept = _train(text, "muon", switch_fraction=1.0, keep=handovers, **args)
                losses.setdefault("muon", {}).setdefault(str(lr), []).append(muon.val_loss[-1])
                for f in fractions:  # the switch continues the Muon run from its hand-over (to the bit, tested)
                    start = kept.get(math.floor(f * steps))
                    run_ = _train(text, "muon_then_adamw", switch_fraction=f, start_state=start, **args)[0]
                    losses.setdefault(f"switch {f:g}", {}).setdefault(str(lr), []).append(run_.val_loss[-1])
                for name in decayed:
                    run_ = _train(text, name, switch_fraction=1.0, decayed_lr=lr, **args)[0]
                    losses.setdefault(name, {}).setdefault(str(lr), []).append(run_.val_loss[-1])

    def row(arm: str) -> list[float]:
        return [float(np.mean(losses[arm][str(lr)])) for lr in grid]

    table = {name: row(name) for name in decayed}
    switch_table = {f"{f:g}": row(f"switch {f:g}") for f in fractions}
    flat = [(v, f, lr) for f in fractions for lr, v in zip(grid, switch_table[f"{f:g}"], strict=True)]
    best, frac, lr = min(flat)
    baseline = min(decayed, key=lambda name: min(table[name]))
    picks = {"lm_muon_lr": float(lr), "lm_switch_fraction": float(frac),
             "lm_decayed_lr": float(grid[int(np.argmin(table[baseline]))])}  # fmt: skip
    return {
        "picks": picks,
        "baseline": baseline,
        "decayed_picks": {name: float(grid[int(np.argmin(v))]) for name, v in table.items()},
        "tuning_loss": {name: float(min(v)) for name, v in table.items()} | {"muon_then_adamw": float(best)},
        "table": table,
        "switch_table": switch_table,
        "muon": row("muon"),
        "grid": list(grid),
        "fractions": list(fractions),
        "run_seeds": seeds,
        "n_lm_steps": steps,
        "final_val_loss_by_seed": losses,
        "seconds": round(time.time() - t0, 1),
    }


def _cpu_timed(part, *args) -> tuple[dict, dict, float]:
    """``part(*args)`` and the CPU seconds this process spent on it (where a worker runs it, its own)."""
    start = time.process_time()
    summary, curves = part(*args)
    return summary, curves, time.process_time() - start


@checked()
def run(
    config: MuonConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> MuonResults:
    """Run the chapter's experiments; finished parts and the language model's training are checkpointed.

    With ``cfg.processes`` (0: every CPU available) of 2 or more, the valley's parts not yet in the checkpoint
    run in spawned worker processes (each the same deterministic function of the config wherever it runs)
    while this process trains the language model; a worker's part time is then the time this process waited
    for it, and ``summary["cpu_s"]`` holds each part's own CPU seconds (parts run in this call).
    """
    cfg, checkpoint = start_run(MuonConfig, config, checkpoint)
    cpu: dict[str, float] = {}

    def here(name: str, part, *args):
        def go():
            summary, curves, cpu[name] = _cpu_timed(part, *args)
            return summary, curves

        return go

    def there(name: str, future):
        def go():
            summary, curves, cpu[name] = future.result()
            return summary, curves

        return go

    valley = {"sensing": _sensing, "switch": _switch_grid}
    parts: dict[str, Any] = {"lm": here("lm", _language_model, cfg, checkpoint)}  # first: the longest part
    parts |= {name: here(name, part, cfg) for name, part in valley.items()}
    pending = [name for name in valley if checkpoint.get(f"part/{name}") is None]
    workers = worker_count(cfg.processes, len(pending) + 1) - 1  # this process trains the language model
    with ExitStack() as stack:
        if workers and pending and checkpoint.get("part/lm") is None:
            pool = stack.enter_context(ProcessPoolExecutor(workers, mp_context=get_context("spawn")))
            for name in pending:
                parts[name] = there(name, pool.submit(_cpu_timed, valley[name], cfg))
        summary, curves = run_parts_timed(checkpoint, parts, progress)
    summary = {k: summary[k] for k in ("sensing", "switch", "lm", "timings")}  # the serial run's order
    curves = {k: curves[k] for k in ("sensing", "switch", "lm")}
    summary["cpu_s"] = cpu
    return MuonResults(cfg, summary, curves)


@checked()
def headline(results: MuonResults) -> list[str]:
    s = results.summary["sensing"]
    lm = results.summary["lm"]["final_val_loss"]
    return [
        f"river distance at t={results.config.early_step}: Muon/GD = {s['early_ratio_muon_over_gd']:.2f}",
        "final sensing loss: " + ", ".join(f"{k} {v:.1e}" for k, v in s["final_loss"].items()),
        "tiny LM validation loss: " + ", ".join(f"{k} {v:.3f}" for k, v in lm.items()),
    ]


if __name__ == "__main__":  # offline: write the tuning table the config's defaults are read from
    import json
    import sys

    out = tune_lrs(MuonConfig())
    text = json.dumps(out, indent=1, ensure_ascii=False)
    (open(sys.argv[1], "w", encoding="utf-8") if len(sys.argv) > 1 else sys.stdout).write(text + "\n")
