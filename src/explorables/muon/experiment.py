"""The chapter's experiments: GD and Muon in the river valley, and a tiny language model.

1. **Sensing**: GD, Muon (no momentum), Muon with momentum and the two-stage schedule (Muon,
   then GD) on one mixed-spiked sensing problem: loss, distance along the river, the first spike
   coordinate, step by step.
2. **When to switch**: the final loss of the two-stage schedule over a grid of switch steps, for
   several spike curvatures (GD's step size follows the spike: ``gd_lr = 1.9 / lam_spike``).
3. **Language model**: a character-level Transformer on standard-library docstrings, trained with
   AdamW, with Muon (+ AdamW for non-matrix weights), and with Muon switching to AdamW.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..core.checkpoint import Checkpointer, run_parts
from ..core.config import ExperimentConfig
from ..core.validation import check_in_range, check_int, check_positive
from .lm import SCHEDULES, stdlib_corpus, train
from .optimizers import optimize, oscillation
from .sensing import make_problem


@dataclass(frozen=True)
class MuonConfig(ExperimentConfig):
    """Settings of :func:`run`; field defaults are the ``book`` preset."""

    size: int = 20
    rank: int = 3
    spikes: int = 2
    lam_river: float = 0.05
    lam_spike: float = 100.0
    lam_bulk: float = 0.005
    muon_lr: float = 0.02
    momentum: float = 0.9
    sensing_steps: int = 3_000
    switch_step: int = 300
    early_step: int = 100
    switch_grid: tuple[int, ...] = (50, 100, 200, 400, 800, 1200, 1600, 2000, 2400, 2800, 2950)
    spike_grid: tuple[float, ...] = (25.0, 100.0, 400.0)
    lm_steps: int = 120
    lm_batch: int = 24
    lm_context: int = 48
    lm_width: int = 48
    lm_layers: int = 2
    lm_chars: int = 200_000
    lm_switch_fraction: float = 0.6

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            size=10,
            sensing_steps=1_200,
            switch_step=200,
            switch_grid=(100, 300),
            spike_grid=(100.0,),
            lm_steps=20,
            lm_batch=8,
            lm_context=24,
            lm_width=24,
            lm_chars=20_000,
        ),
        "book": {},
        "paper": dict(
            device="auto",
            size=200,
            rank=10,
            spikes=10,
            sensing_steps=20_000,
            switch_grid=tuple(int(s) for s in np.geomspace(50, 10_000, 16)),
            spike_grid=(10.0, 25.0, 100.0, 400.0, 1600.0),
            lm_steps=20_000,
            lm_batch=64,
            lm_context=256,
            lm_width=512,
            lm_layers=8,
            lm_chars=20_000_000,
        ),
    }
    PAPER_HARDWARE: ClassVar[str] = "one GPU for the 8-layer, 512-wide language model (hours); the rest is small"

    @property
    def gd_lr(self) -> float:
        """GD's step size, just under the stability limit 2 / lam_spike."""
        return 1.9 / self.lam_spike

    def validated(self) -> MuonConfig:
        check_int("size", self.size, minimum=4)
        check_int("rank", self.rank, minimum=1, maximum=self.size - 2)
        check_int("spikes", self.spikes, minimum=1, maximum=self.size - self.rank)
        for name in ("lam_river", "lam_spike", "lam_bulk", "muon_lr"):
            check_positive(name, getattr(self, name))
        check_in_range("momentum", self.momentum, 0.0, 1.0, high_inclusive=False)
        check_int("sensing_steps", self.sensing_steps, minimum=10)
        check_int("switch_step", self.switch_step, minimum=0, maximum=self.sensing_steps)
        check_int("early_step", self.early_step, minimum=1, maximum=self.sensing_steps)
        for s in self.switch_grid:
            check_int("switch_grid", s, minimum=0, maximum=self.sensing_steps)
        for lam in self.spike_grid:
            check_positive("spike_grid", lam)
        check_int("lm_steps", self.lm_steps, minimum=1)
        check_in_range("lm_switch_fraction", self.lm_switch_fraction, 0.0, 1.0)
        return self


@dataclass
class MuonResults:
    config: MuonConfig
    summary: dict[str, Any]
    curves: dict[str, Any] = field(repr=False)


def _problem(cfg: MuonConfig, lam_spike: float | None = None):
    return make_problem(
        m=cfg.size,
        n=cfg.size,
        rank=cfg.rank,
        spikes=cfg.spikes,
        lam_river=cfg.lam_river,
        lam_spike=lam_spike or cfg.lam_spike,
        lam_bulk=cfg.lam_bulk,
        seed=cfg.seed,
    )


def _sensing(cfg: MuonConfig) -> tuple[dict, dict]:
    problem = _problem(cfg)
    common = dict(steps=cfg.sensing_steps, muon_lr=cfg.muon_lr, gd_lr=cfg.gd_lr)
    runs = {
        "GD": optimize(problem, "gd", **common),
        "Muon": optimize(problem, "muon", **common),
        "Muon + momentum": optimize(problem, "muon", momentum=cfg.momentum, **common),
        "Muon → GD": optimize(problem, "switch", switch_step=cfg.switch_step, **common),
        "GD + momentum": optimize(problem, "gd_momentum", momentum=cfg.momentum, **common),
        "Adam": optimize(problem, "adam", adam_lr=cfg.muon_lr, **common),
    }
    t = cfg.early_step
    summary = {
        "river_start": float(runs["GD"].river[0]),
        "river_early": {k: float(r.river[t]) for k, r in runs.items()},
        "early_ratio_muon_over_gd": float(runs["Muon"].river[t] / runs["GD"].river[t]),
        "final_loss": {k: float(r.loss[-1]) for k, r in runs.items()},
        "min_loss": {k: float(r.loss.min()) for k, r in runs.items()},
        "spike_oscillation": {k: oscillation(r.spike) for k, r in runs.items()},
        "gd_lr": cfg.gd_lr,
    }
    curves = {k: asdict(r) for k, r in runs.items()}
    return summary, curves


def _switch_grid(cfg: MuonConfig) -> tuple[dict, dict]:
    table = []
    for lam in cfg.spike_grid:
        problem = _problem(cfg, lam)
        finals = [
            float(optimize(problem, "switch", cfg.sensing_steps, cfg.muon_lr, 1.9 / lam, switch_step=s).loss[-1])
            for s in cfg.switch_grid
        ]
        table.append({"lam_spike": lam, "final_loss": finals, "best_switch": cfg.switch_grid[int(np.argmin(finals))]})
    return {"switch_steps": list(cfg.switch_grid), "rows": table}, {}


def _language_model(cfg: MuonConfig, checkpoint: Checkpointer) -> tuple[dict, dict]:
    text = stdlib_corpus(cfg.lm_chars)
    runs = {}
    for schedule in SCHEDULES:
        runs[schedule] = train(
            text,
            schedule,
            steps=cfg.lm_steps,
            switch_fraction=cfg.lm_switch_fraction,
            batch=cfg.lm_batch,
            context=cfg.lm_context,
            d_model=cfg.lm_width,
            layers=cfg.lm_layers,
            seed=cfg.seed,
            device=cfg.device,
            checkpoint=checkpoint,
        )
    summary = {
        "chars": len(text),
        "final_val_loss": {k: r.val_loss[-1] for k, r in runs.items()},
        "switch_step": int(cfg.lm_switch_fraction * cfg.lm_steps),
    }
    return summary, {k: asdict(r) for k, r in runs.items()}


def run(
    config: MuonConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> MuonResults:
    """Run the chapter's experiments; finished parts and the language model's training are checkpointed."""
    cfg = (config or MuonConfig.preset("book")).validated()
    checkpoint = checkpoint or Checkpointer(None)
    checkpoint.bind(cfg.identity())
    parts = {
        "sensing": lambda: _sensing(cfg),
        "switch": lambda: _switch_grid(cfg),
        "lm": lambda: _language_model(cfg, checkpoint),
    }
    summary, curves, timings = run_parts(checkpoint, parts, progress)
    summary["timings"] = timings
    return MuonResults(config=cfg, summary=summary, curves=curves)


def headline(results: MuonResults) -> list[str]:
    s = results.summary["sensing"]
    lm = results.summary["lm"]["final_val_loss"]
    return [
        f"river distance at t={results.config.early_step}: Muon/GD = {s['early_ratio_muon_over_gd']:.2f}",
        "final sensing loss: " + ", ".join(f"{k} {v:.1e}" for k, v in s["final_loss"].items()),
        "tiny LM validation loss: " + ", ".join(f"{k} {v:.3f}" for k, v in lm.items()),
    ]
