"""The chapter's experiments: collisions, the RRT with three FFNs, rank survey, parameter overhead.

1. **Collisions**: for random heads (``V`` Gaussian, ``d_head x n``) and weightings
   ``alpha = softmax(beta z)``, how often an LP finds a colliding ``alpha'`` with another dominant
   source, as a function of the sharpness ``beta`` and of ``d_head``.
2. **RRT, single hop and two hops**: the same :class:`~.model.RouteReader` with a standard FFN,
   the Route-Aware FFN (four routing statistics) and the oracle FFN (all of ``alpha``), trained
   from the same seed on the same data; test accuracy of naming the dominant source.
3. **Rank survey** of the trained standard models' value matrices.
4. **Parameter overhead** of RA-FFN, counted on the modules (ours, and a BERT-Base-shaped FFN).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch

from ..core.checkpoint import Checkpointer, run_parts
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.validation import check_choice, check_int, check_positive
from .collisions import fibre_dimension, find_collision
from .model import FFN_KINDS, ROUTINGS, RouteAwareFFN, RouteReader
from .rrt import make_rrt
from .survey import survey_bert_checkpoint, survey_values
from .train import train_model

BERT_BASE = dict(d_model=768, d_ff=3072, heads=12, layers=12)


@dataclass(frozen=True)
class RoutingConfig(ExperimentConfig):
    """Settings of :func:`run`; field defaults are the ``book`` preset."""

    length: int = 16
    vocab: int = 8
    beta: float = 4.0
    d_model: int = 32
    heads: int = 1
    d_head: int = 4
    d_ff: int = 64
    extra_layers: int = 0
    routing: str = "given"
    train_size: int = 20_000
    test_size: int = 2_000
    steps: int = 150
    batch: int = 256
    lr: float = 1e-2
    collision_trials: int = 12
    collision_betas: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)
    collision_d_heads: tuple[int, ...] = (2, 4, 8)
    survey_sequences: int = 100
    bert_checkpoint: str = ""  # a local Hugging Face BERT folder or weights file: adds the "bert" rank survey
    bert_sequence_length: int = 128

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(steps=100, train_size=8_000, test_size=1_000, collision_trials=3, survey_sequences=20),
        "book": {},
        "paper": dict(
            device="auto",
            length=32,
            vocab=16,
            d_model=256,
            heads=4,
            d_head=16,
            d_ff=1024,
            extra_layers=4,
            routing="learned",
            train_size=1_000_000,
            test_size=20_000,
            steps=30_000,
            batch=512,
            lr=5e-4,
            collision_trials=200,
            collision_d_heads=(4, 8, 16, 30),
            survey_sequences=1_000,
        ),
    }
    PAPER_HARDWARE: ClassVar[str] = "one GPU (6 models of 6 layers, 30k steps each: about an hour)"

    def validated(self) -> RoutingConfig:
        check_int("length", self.length, minimum=4)
        check_int("vocab", self.vocab, minimum=2)
        check_positive("beta", self.beta)
        check_int("d_model", self.d_model)
        check_int("heads", self.heads)
        check_int("d_head", self.d_head)
        check_int("d_ff", self.d_ff)
        check_int("extra_layers", self.extra_layers, minimum=0)
        check_choice("routing", self.routing, ROUTINGS)
        if self.routing == "given" and (self.heads != 1 or self.extra_layers):
            raise ValueError("routing='given' supplies one head per hop: it needs heads=1 and extra_layers=0")
        check_int("train_size", self.train_size, minimum=self.batch)
        check_int("test_size", self.test_size, minimum=10)
        check_int("steps", self.steps)
        check_int("batch", self.batch)
        check_positive("lr", self.lr)
        check_int("collision_trials", self.collision_trials)
        for b in self.collision_betas:
            check_positive("collision_betas", b)
        for d in self.collision_d_heads:
            check_int("collision_d_heads", d, maximum=self.length)
        check_int("survey_sequences", self.survey_sequences, maximum=self.test_size)
        check_int("bert_sequence_length", self.bert_sequence_length, minimum=3)
        return self


@dataclass
class RoutingResults:
    config: RoutingConfig
    summary: dict[str, Any]
    curves: dict[str, Any] = field(repr=False)
    models: dict[str, dict[str, RouteReader]] = field(default_factory=dict, repr=False)


def _collision_rate(n: int, d: int, beta: float, trials: int, seed: int) -> dict:
    """Share of ``trials`` random heads ``(V, z)`` whose ``alpha = softmax(beta z)`` has a harmful collision.

    The heads depend on ``(seed, d)`` only, so every ``beta`` sees the same ``V`` and ``z`` (common
    random numbers): the curve against ``beta`` shows the effect of sharpening, not of new draws.
    """
    rng = np.random.default_rng([seed, d])
    found, residual = 0, 0.0
    for _ in range(trials):
        V = rng.standard_normal((d, n))
        z = rng.standard_normal(n)
        alpha = np.exp(beta * (z - z.max()))
        alpha /= alpha.sum()
        c = find_collision(V, alpha)
        if c is not None:
            found += 1
            residual = max(residual, c.residual)
    return {"fraction": found / trials, "max_residual": residual, "fibre_dimension": n - min(d, n - 1) - 1}


def _collisions(cfg: RoutingConfig) -> tuple[dict, dict]:
    rng = np.random.default_rng(cfg.seed)
    n = cfg.length
    by_beta = [
        {"beta": b, **_collision_rate(n, cfg.d_head, b, cfg.collision_trials, cfg.seed)} for b in cfg.collision_betas
    ]
    by_d = [
        {"d_head": d, **_collision_rate(n, d, cfg.beta, cfg.collision_trials, cfg.seed)} for d in cfg.collision_d_heads
    ]
    # one worked example at the chapter's (n, d_head, beta)
    while True:
        V = rng.standard_normal((cfg.d_head, n))
        z = rng.standard_normal(n)
        alpha = np.exp(cfg.beta * (z - z.max()))
        alpha /= alpha.sum()
        example = find_collision(V, alpha)
        if example is not None:
            break
    summary = {
        "n": n,
        "d_head": cfg.d_head,
        "by_beta": by_beta,
        "by_d_head": by_d,
        "example": {
            "fibre_dimension": fibre_dimension(V),
            "source": example.original_source,
            "new_source": example.source,
            "margin": example.margin,
            "residual": example.residual,
            "lp_calls": example.lp_calls,
        },
    }
    return summary, {"example_alpha": alpha, "example_alpha_prime": example.alpha_prime}


@contextmanager
def _one_cpu_thread(device: torch.device):
    """Train tiny CPU models on one thread: faster under load, and the numbers do not depend on the core count."""
    if device.type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _rrt(cfg: RoutingConfig, hops: int, checkpoint: Checkpointer, models: dict) -> tuple[dict, dict]:
    device = resolve_device(cfg.device)
    with _one_cpu_thread(device):
        return _rrt_on(cfg, hops, checkpoint, models, device)


def _rrt_on(cfg: RoutingConfig, hops: int, checkpoint: Checkpointer, models: dict, device) -> tuple[dict, dict]:
    data_seed = cfg.seed * 1_000 + hops
    common = dict(length=cfg.length, vocab=cfg.vocab, hops=hops, beta=cfg.beta, head_seed=cfg.seed)
    train = make_rrt(cfg.train_size, generator=torch.Generator().manual_seed(data_seed), **common).to(device)
    test = make_rrt(cfg.test_size, generator=torch.Generator().manual_seed(data_seed + 500), **common).to(device)
    summary: dict[str, Any] = {"accuracy": {}, "parameters": {}}
    curves: dict[str, Any] = {}
    models[hops] = {}
    for kind in FFN_KINDS:
        torch.manual_seed(cfg.seed)  # same initial weights for the shared parts
        model = RouteReader(
            cfg.vocab,
            cfg.length,
            d_model=cfg.d_model,
            heads=cfg.heads,
            d_head=cfg.d_head,
            d_ff=cfg.d_ff,
            layers=hops + cfg.extra_layers,
            kind=kind,
            routing=cfg.routing,
        ).to(device)
        name = f"{'single' if hops == 1 else 'multi'}/{kind}"
        trained = train_model(
            model,
            train,
            test,
            steps=cfg.steps,
            batch=cfg.batch,
            lr=cfg.lr,
            seed=cfg.seed,
            checkpoint=checkpoint,
            name=name,
        )
        models[hops][kind] = trained.model
        summary["accuracy"][kind] = trained.accuracy
        summary["parameters"][kind] = trained.parameters
        curves[kind] = {"steps": trained.steps, "loss": trained.loss}
    acc = summary["accuracy"]
    gap = acc["oracle"] - acc["standard"]
    summary["gap"] = gap
    summary["ra_gain"] = acc["route_aware"] - acc["standard"]
    summary["gap_closed"] = summary["ra_gain"] / gap if gap > 0 else float("nan")
    summary["chance"] = 1.0 / cfg.length
    summary["reference_max_weight"] = float(test.alphas[-1].max(-1).values.mean())
    summary["survey"] = survey_values(models[hops]["standard"], test, cfg.survey_sequences)
    return summary, curves


def _overhead(cfg: RoutingConfig) -> tuple[dict, dict]:
    def count(module: torch.nn.Module) -> int:
        return sum(p.numel() for p in module.parameters())

    ours = {
        kind: count(
            RouteReader(cfg.vocab, cfg.length, cfg.d_model, cfg.heads, cfg.d_head, cfg.d_ff, 1, kind, cfg.routing)
        )
        for kind in FFN_KINDS
    }
    with torch.device("meta"):  # shapes only: no memory for BERT-Base-sized weights
        d, f, h = BERT_BASE["d_model"], BERT_BASE["d_ff"], BERT_BASE["heads"]
        ffn = {kind: count(RouteAwareFFN(d, f, h, kind, positions=128)) for kind in FFN_KINDS}
    attention = 4 * d * d + 4 * d  # Q, K, V, O projections with biases
    layer = attention + ffn["standard"] + 4 * d  # + two LayerNorms
    bert_extra = ffn["route_aware"] - ffn["standard"]
    summary = {
        "ours": ours,
        "ours_extra": ours["route_aware"] - ours["standard"],
        "ours_fraction": (ours["route_aware"] - ours["standard"]) / ours["standard"],
        "formula_extra": RouteAwareFFN.extra_parameters(cfg.d_ff, cfg.heads),
        "bert_ffn": ffn,
        "bert_extra_per_layer": bert_extra,
        "bert_fraction_of_ffn": bert_extra / ffn["standard"],
        "bert_fraction_of_encoder_layer": bert_extra / layer,
        "bert_fraction_of_model": BERT_BASE["layers"] * bert_extra / 110e6,
    }
    return summary, {}


def run(
    config: RoutingConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> RoutingResults:
    """Run the chapter's experiments; finished parts and each model's training are checkpointed."""
    cfg = (config or RoutingConfig.preset("book")).validated()
    checkpoint = checkpoint or Checkpointer(None)
    checkpoint.bind(cfg.identity())
    models: dict = {}
    parts = {
        "collisions": lambda: _collisions(cfg),
        "single": lambda: _rrt(cfg, 1, checkpoint, models),
        "multi": lambda: _rrt(cfg, 2, checkpoint, models),
        "overhead": lambda: _overhead(cfg),
    }
    if cfg.bert_checkpoint:
        parts["bert"] = lambda: (survey_bert_checkpoint(cfg.bert_checkpoint, None, cfg.bert_sequence_length), {})
    summary, curves, timings = run_parts(checkpoint, parts, progress)
    s, m = summary["single"], summary["multi"]
    summary["multi_over_single_gain"] = m["ra_gain"] / s["ra_gain"] if s["ra_gain"] > 0 else float("nan")
    summary["timings"] = timings
    return RoutingResults(config=cfg, summary=summary, curves=curves, models=models)


def headline(results: RoutingResults) -> list[str]:
    s = results.summary
    lines = []
    for part in ("single", "multi"):
        a = s[part]["accuracy"]
        lines.append(
            f"RRT {part}-hop accuracy: standard {a['standard']:.3f}, RA-FFN {a['route_aware']:.3f}, "
            f"oracle {a['oracle']:.3f} (gap closed {s[part]['gap_closed']:.0%})"
        )
    lines.append(f"multi-hop / single-hop RA gain: {s['multi_over_single_gain']:.2f}")
    lines.append(f"RA-FFN extra parameters: {s['overhead']['ours_fraction']:.1%} of our model")
    if "bert" in s:
        lines.append(
            f"BERT checkpoint: rank(W_V^h) <= n - 2 for {s['bert']['fraction_rank_le_n_minus_2']:.0%} of heads "
            f"at n = {s['bert']['sequence_length']}; at least {s['bert']['min_suppressed_bound']} suppressed dimensions"
        )
    return lines
