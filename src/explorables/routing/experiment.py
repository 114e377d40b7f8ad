"""The chapter's experiments: collisions, the RRT with three FFNs, rank survey, parameter overhead.

1. **Collisions**: for random heads (``V`` Gaussian, ``d_head x n``) and weightings
   ``alpha = softmax(beta z)``, how often an LP finds a colliding ``alpha'`` with another dominant
   source, as a function of the sharpness ``beta`` and of ``d_head``.
2. **RRT, single hop and two hops** (paired: the one-hop task is the first hop of the two-hop task, the same
   sequences and the same first reference head): the same :class:`~.model.RouteReader` with a standard FFN,
   the Route-Aware FFN (four routing statistics) and the oracle FFN (all of ``alpha``), trained
   from the same seed on the same data; test accuracy of naming the dominant source. Values carry
   their position (``v_j = W_V [x_j ; e_j]``, ``use_value_positions=True``). Three controls train the
   standard model again: with ``d_head = n_tokens`` (``[V; 1^T]`` can have full column rank, so no
   collision is possible: the **no-collision control**), with the narrow head in a model as large as
   the no-collision control (its FFN widened until the parameter counts match, :func:`matched_d_ff`:
   the **width-matched control**, which separates the head's rank from the model's size) and, at one
   hop only, with content-only values (no position in ``V`` at all). A baseline without training rounds one
   statistic, ``(m - 1) c_2``, to a position.
   A validation split (never used for training) is reported next to the test split. All of this
   is repeated on every seed of ``seeds`` (new data, reference heads and weights): accuracies are
   means over seeds, and ``by_seed`` keeps each seed's numbers for the verdicts. Every (hops, seed) run is
   independent: with ``processes`` of 2 or more on a CPU, spawned worker processes take some of them
   (:class:`RRTRuns`), and every number is that of the serial run.
3. **Rank survey** of the trained standard models' value matrices.
4. **Parameter overhead** of RA-FFN, counted on the modules (ours, and a BERT-Base-shaped FFN),
   against BERT-Base's parameter count computed from its shapes (:func:`bert_base_parameters`).
"""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any, ClassVar

import numpy as np
import torch

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Bool, Choice, Int, Positive, Seeds, Text, Tuple, param
from ..core.threads import one_cpu_thread, worker_count
from .collisions import fibre_dimension, find_collision
from .model import FFN_KINDS, ROUTINGS, RouteAwareFFN, RouteReader
from .rrt import make_rrt
from .survey import survey_bert_checkpoint, survey_values
from .train import accuracy, rounding_accuracy, train_model

BERT_BASE = dict(d_model=768, d_ff=3072, heads=12, layers=12, vocab=30522, max_positions=512, token_types=2)
EXAMPLE_TRIES = 200  # random heads tried for the worked collision before reporting that none was found


def bert_base_parameters(
    d_model: int = 768, d_ff: int = 3072, layers: int = 12, vocab: int = 30522, max_positions: int = 512,
    token_types: int = 2,
) -> int:  # fmt: skip
    """Parameters of a BERT encoder with a pooler, counted from its shapes (Devlin et al., 2019).

    Embeddings (word, position, token type, one LayerNorm), then per layer the Q, K, V, O
    projections with biases, two LayerNorms and the FFN ``d -> d_ff -> d`` with biases, then the
    pooler ``d -> d``. BERT-Base's shapes give 109,482,240 (the "110M" of the paper).
    """
    d, f = d_model, d_ff
    embeddings = (vocab + max_positions + token_types) * d + 2 * d
    layer = 4 * (d * d + d) + 2 * (2 * d) + (d * f + f) + (f * d + d)
    pooler = d * d + d
    return embeddings + layers * layer + pooler


@dataclass(frozen=True)
class RoutingConfig(ExperimentConfig):
    """Settings of :func:`run`; field defaults are the ``book`` preset."""

    n_tokens: int = param(32, Int(4), "source tokens n of a sequence (the length the heads attend over)")
    vocab_size: int = param(8, Int(2), "symbols a key or pointer is drawn from (small: contents repeat)")
    beta: float = param(1.0, Positive(), "sharpness of the reference heads, alpha = softmax(beta z)")
    d_model: int = param(32, Int(1), "width of the read-out Transformer's residual stream")
    n_heads: int = param(1, Int(1), "attention heads per layer")
    d_head: int = param(4, Int(1), "width of a head's values (rank V <= d_head <= n_tokens - 2: collisions exist)")
    d_ff: int = param(64, Int(1), "hidden width of every FFN, eq. (ra-ffn)")
    n_extra_layers: int = param(0, Int(0), "layers beyond one per hop (learned routing only)")
    routing: str = param(
        "given", Choice(ROUTINGS), "'given': layers use the task's reference heads; 'learned': own attention"
    )
    use_value_positions: bool = param(
        True, Bool(), "values carry their position, v_j = W_V [x_j ; e_j] (else content only)"
    )
    use_controls: bool = param(
        True, Bool(), "also train the no-collision (d_head = n), width-matched and (one hop) content-only controls"
    )
    n_train: int = param(20_000, Int(1), "RRT training sequences (at least one batch)")
    n_validation: int = param(2_000, Int(10), "RRT validation sequences (never trained on)")
    n_test: int = param(2_000, Int(10), "RRT test sequences")
    seeds: tuple[int, ...] = param(
        (0, 1, 2), Seeds(), "seeds of the RRT runs (data, reference heads, weights, batches): the verdicts' seeds"
    )
    n_steps: int = param(150, Int(1), "AdamW steps per model")
    batch_size: int = param(256, Int(1), "sequences per training batch")
    lr: float = param(1e-2, Positive(), "AdamW learning rate")
    n_collision_trials: int = param(12, Int(1), "random heads per point of the collision-rate curves")
    beta_grid: tuple[float, ...] = param(
        (1.0, 2.0, 4.0, 8.0), Tuple(Positive(), increasing=True), "sharpnesses beta of the collision-rate curve"
    )
    d_head_grid: tuple[int, ...] = param(
        (2, 4, 8), Tuple(Int(1), increasing=True), "head widths of the collision-rate bars (each <= n_tokens)"
    )
    n_survey_sequences: int = param(100, Int(1), "test sequences whose value matrices the rank survey inspects")
    bert_checkpoint: str = param(
        "", Text(), "a local Hugging Face BERT folder or weights file: adds the 'bert' rank survey (empty: none)"
    )
    bert_n_tokens: int = param(128, Int(3), "sequence length n at which the BERT survey bounds suppressed dimensions")
    processes: int = param(
        0,
        Int(0, 64),
        "processes for the RRT runs (one per hop and seed) on a CPU: with 2 or more, spawned workers take runs "
        "from the end of the list while this process works from its start (0: every CPU this process may use, "
        "1: all in this process; the numbers do not depend on it)",
    )

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            seeds=(0,),
            n_steps=100,
            n_train=8_000,
            n_validation=500,
            n_test=1_000,
            n_collision_trials=3,
            n_survey_sequences=20,
            processes=1,
        ),
        "book": {},
        "paper": dict(
            device="auto",
            n_tokens=32,
            vocab_size=16,
            d_model=256,
            n_heads=4,
            d_head=16,
            d_ff=1024,
            n_extra_layers=4,
            routing="learned",
            n_train=1_000_000,
            n_validation=20_000,
            n_test=20_000,
            n_steps=30_000,
            batch_size=512,
            lr=5e-4,
            n_collision_trials=200,
            d_head_grid=(4, 8, 16, 30),
            n_survey_sequences=1_000,
        ),
    }
    PAPER_HARDWARE: ClassVar[str] = (
        "one GPU (10 models of 5-6 layers on each of 3 seeds: three FFNs and two controls at one and two hops, "
        "30k steps each; an estimate of three to six hours, not measured)"
    )

    def cross_checks(self) -> None:
        n = self.n_tokens
        if self.d_head > n - 2:  # rank V <= n - 2: the collision regime
            raise ValueError(f"d_head must be <= n_tokens - 2 = {n - 2} (the collision regime), got {self.d_head}")
        if self.routing == "given" and (self.n_heads != 1 or self.n_extra_layers):
            raise ValueError("routing='given' supplies one head per hop: it needs n_heads=1 and n_extra_layers=0")
        if self.n_train < self.batch_size:
            raise ValueError(f"n_train must be >= batch_size ({self.batch_size}), got {self.n_train}")
        if self.d_head_grid[-1] > n:
            raise ValueError(f"d_head_grid must lie in [1, n_tokens = {n}], got {self.d_head_grid}")
        if self.n_survey_sequences > self.n_test:
            raise ValueError(f"n_survey_sequences must be <= n_test ({self.n_test}), got {self.n_survey_sequences}")


@checked()
@dataclass
class RoutingResults(Results[RoutingConfig]):
    """What :func:`run` returns; ``models`` holds the trained read-outs by hop and FFN kind (not checkpointed)."""

    models: dict[int, dict[str, RouteReader]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.config, RoutingConfig):
            raise ValueError(f"config must be a RoutingConfig, got {type(self.config).__name__}")


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
    n = cfg.n_tokens
    by_beta = [
        {"beta": b, **_collision_rate(n, cfg.d_head, b, cfg.n_collision_trials, cfg.seed)} for b in cfg.beta_grid
    ]
    by_d = [{"d_head": d, **_collision_rate(n, d, cfg.beta, cfg.n_collision_trials, cfg.seed)} for d in cfg.d_head_grid]
    # one worked example at the chapter's (n, d_head, beta): the first of EXAMPLE_TRIES random heads with a
    # harmful collision (there may be none, e.g. for very sharp attention)
    tries = 0
    while tries < EXAMPLE_TRIES:
        tries += 1
        V = rng.standard_normal((cfg.d_head, n))
        z = rng.standard_normal(n)
        alpha = np.exp(cfg.beta * (z - z.max()))
        alpha /= alpha.sum()
        example = find_collision(V, alpha)
        if example is not None:
            break
    found = example is not None
    summary = {
        "n": n,
        "d_head": cfg.d_head,
        "by_beta": by_beta,
        "by_d_head": by_d,
        "example": {
            "found": found,
            "tries": tries,
            "fibre_dimension": fibre_dimension(V),
            "source": int(np.argmax(alpha)),
            "new_source": example.source if found else None,
            "margin": example.margin if found else None,
            "residual": example.residual if found else None,
            "lp_calls": example.lp_calls if found else None,
        },
    }
    return summary, {"example_alpha": alpha, "example_alpha_prime": example.alpha_prime if found else None}


def run_seed(cfg: RoutingConfig, seed: int) -> int:
    """The seed of one RRT run: ``seed`` of ``cfg.seeds``, drawn together with the base seed ``cfg.seed``."""
    return 1_000 * cfg.seed + seed


def _rrt_seed(cfg: RoutingConfig, hops: int, index: int, checkpoint: Checkpointer, device) -> tuple[dict, dict, dict]:
    """The RRT at ``hops`` on seed ``cfg.seeds[index]``: its summary, curves and trained models (by FFN kind)."""
    seed = cfg.seeds[index]
    sub = dataclasses.replace(cfg, seed=run_seed(cfg, seed))  # not re-validated: the seed may exceed 2**32
    kept: dict = {}
    summary, curves = _rrt_on(sub, hops, checkpoint, kept, device, tag=f"seed{seed}")
    return summary, curves, kept[hops]


def _rrt_seed_alone(cfg: RoutingConfig, hops: int, index: int) -> tuple[dict, dict, dict]:
    """:func:`_rrt_seed` in a worker process: one CPU thread (as in this process), an in-memory checkpoint (a
    stopped run redoes this run); the models come back for the first seed only (the only ones kept)."""
    device = resolve_device(cfg.device)
    with one_cpu_thread(device):
        summary, curves, models = _rrt_seed(cfg, hops, index, Checkpointer(None), device)
    return summary, curves, models if index == 0 else {}


class RRTRuns:
    """The pending (hops, seed) runs of the RRT parts, shared between this process and worker processes.

    The list is in the order the parts read it (one hop, then two; seeds in order). This process takes runs
    from its start (:meth:`result`, with the run's checkpoint); each :meth:`feed` thread sends the last pending
    run to a worker, waits for it (without using a CPU) and takes the next, until none is left. Every draw of a
    run comes from generators seeded by the config and every run trains on one CPU thread, so a run's numbers
    do not depend on where it ran.
    """

    def __init__(self, cfg: RoutingConfig, checkpoint: Checkpointer, device) -> None:
        self.cfg, self.checkpoint, self.device = cfg, checkpoint, device
        self.pending = [(hops, i) for hops, part in ((1, "single"), (2, "multi"))
                        if checkpoint.get(f"part/{part}") is None for i in range(len(cfg.seeds))]  # fmt: skip
        self.running: set[tuple[int, int]] = set()
        self.away: dict[tuple[int, int], Any] = {}  # a worker's value (or its exception), until this process reads it
        self.stopped = False
        self.lock = threading.Condition()

    def result(self, hops: int, index: int) -> tuple[dict, dict, dict]:
        key = (hops, index)
        with self.lock:
            while key in self.running:
                self.lock.wait()
            outcome = self.away.pop(key, None)
            if key in self.pending:
                self.pending.remove(key)
        if outcome is None:
            return _rrt_seed(self.cfg, hops, index, self.checkpoint, self.device)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def feed(self, pool: ProcessPoolExecutor) -> None:
        while True:
            with self.lock:
                if self.stopped or not self.pending:
                    return
                key = self.pending.pop()
                self.running.add(key)
            try:
                outcome = pool.submit(_rrt_seed_alone, self.cfg, *key).result()
            except BaseException as err:  # handed to this process, which raises it where the part reads the run
                outcome = err
            with self.lock:
                self.running.discard(key)
                self.away[key] = outcome
                self.lock.notify_all()

    def stop(self) -> None:
        with self.lock:
            self.stopped = True


def _rrt(cfg: RoutingConfig, hops: int, checkpoint: Checkpointer, models: dict, runs: RRTRuns | None = None
         ) -> tuple[dict, dict]:  # fmt: skip
    """The RRT at ``hops`` on every seed of ``cfg.seeds``: numbers pooled (:func:`pool_seeds`); the curves,
    models and rank survey are the first seed's. ``runs``: where the runs come from (``None``: all here)."""
    device = resolve_device(cfg.device)
    per_seed, first_curves = [], {}
    with one_cpu_thread(device):
        for i in range(len(cfg.seeds)):
            if runs is None:
                summary, curves, kept = _rrt_seed(cfg, hops, i, checkpoint, device)
            else:
                summary, curves, kept = runs.result(hops, i)
            per_seed.append(summary)
            if i == 0:
                models[hops], first_curves = kept, curves
    return pool_seeds(per_seed, cfg.seeds), first_curves


def _mean(values: list[float]) -> float:
    return float(np.mean(values))


def pool_seeds(per_seed: list[dict], seeds: tuple[int, ...]) -> dict:
    """One RRT summary from the per-seed ones: accuracies (and rounding, reference weight) are means over
    seeds, the gaps and shares closed are computed from those means, ``by_seed`` keeps every seed's own
    numbers (what the verdicts decide on), and the rank survey is the first seed's."""
    first = per_seed[0]
    out = dict(first)
    out["seeds"] = list(seeds)
    for key in ("accuracy", "validation_accuracy", "rounding"):
        out[key] = {k: _mean([p[key][k] for p in per_seed]) for k in first[key]}
    out["controls"] = {
        name: {**c, "accuracy": _mean([p["controls"][name]["accuracy"] for p in per_seed])}
        for name, c in first["controls"].items()
    }
    out["reference_max_weight"] = _mean([p["reference_max_weight"] for p in per_seed])
    out.update(_gaps(out["accuracy"], out["validation_accuracy"], out["controls"]))
    keys = ["gap", "ra_gain", "gap_closed", "validation_gap_closed"]
    keys += [k for k in ("no_collision_gap_closed", "width_matched_gap_closed") if k in first]
    out["by_seed"] = {key: [p[key] for p in per_seed] for key in keys}
    out["by_seed"]["accuracy"] = {k: [p["accuracy"][k] for p in per_seed] for k in first["accuracy"]}
    out["by_seed"]["controls"] = {
        name: [p["controls"][name]["accuracy"] for p in per_seed] for name in first["controls"]
    }
    return out


def _gaps(acc: dict, val: dict, controls: dict) -> dict:
    """Standard-to-oracle gap, RA-FFN's gain and the shares of the gap closed, from accuracies."""
    gap = acc["oracle"] - acc["standard"]
    out = {"gap": gap, "ra_gain": acc["route_aware"] - acc["standard"]}
    out["gap_closed"] = out["ra_gain"] / gap if gap > 0 else float("nan")
    val_gap = val["oracle"] - val["standard"]
    out["validation_gap_closed"] = (val["route_aware"] - val["standard"]) / val_gap if val_gap > 0 else float("nan")
    for name in ("no_collision", "width_matched"):
        if name in controls:
            gain = controls[name]["accuracy"] - acc["standard"]
            out[f"{name}_gap_closed"] = gain / gap if gap > 0 else float("nan")
    return out


def _reader(cfg: RoutingConfig, hops: int, kind: str = "standard", d_head: int | None = None,
            d_ff: int | None = None, value_positions: bool | None = None) -> RouteReader:  # fmt: skip
    """The read-out of ``cfg`` at ``hops`` with a few settings replaced (``None``: the config's)."""
    return RouteReader(
        cfg.vocab_size,
        cfg.n_tokens,
        d_model=cfg.d_model,
        heads=cfg.n_heads,
        d_head=cfg.d_head if d_head is None else d_head,
        d_ff=cfg.d_ff if d_ff is None else d_ff,
        layers=hops + cfg.n_extra_layers,
        kind=kind,
        routing=cfg.routing,
        value_positions=cfg.use_value_positions if value_positions is None else value_positions,
    )


def _count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def matched_d_ff(cfg: RoutingConfig, hops: int) -> int:
    """The smallest FFN width at which the standard model with the narrow head (``cfg.d_head``) has at least as
    many parameters as the no-collision control (``d_head = n_tokens``, FFN width ``cfg.d_ff``): the width-matched
    control's ``d_ff``. Counted on the modules (built on the meta device: shapes only)."""
    with torch.device("meta"):
        target = _count(_reader(cfg, hops, d_head=cfg.n_tokens))
        narrow = _count(_reader(cfg, hops))
    per_unit = (2 * cfg.d_model + 1) * (hops + cfg.n_extra_layers)  # one more hidden unit in every layer's FFN
    return cfg.d_ff + max(0, -(-(target - narrow) // per_unit))


def _rrt_on(
    cfg: RoutingConfig, hops: int, checkpoint: Checkpointer, models: dict, device, tag: str = ""
) -> tuple[dict, dict]:
    # one data seed for both hops: the one-hop task is the first hop of the two-hop task (same sequences, the
    # same first reference head), so the two tasks are paired and per-seed differences between them compare like
    # with like
    data_seed = cfg.seed * 1_000
    common = dict(length=cfg.n_tokens, vocab=cfg.vocab_size, hops=hops, beta=cfg.beta, head_seed=cfg.seed)
    train = make_rrt(cfg.n_train, generator=torch.Generator().manual_seed(data_seed), **common).to(device)
    validation = make_rrt(cfg.n_validation, generator=torch.Generator().manual_seed(data_seed + 250), **common)
    validation = validation.to(device)
    test = make_rrt(cfg.n_test, generator=torch.Generator().manual_seed(data_seed + 500), **common).to(device)
    summary: dict[str, Any] = {"accuracy": {}, "validation_accuracy": {}, "parameters": {}, "controls": {}}
    curves: dict[str, Any] = {}
    models[hops] = {}
    # (name, FFN kind, d_head, values carry position, d_ff): the three models, then the three controls
    variants = [(kind, kind, cfg.d_head, cfg.use_value_positions, cfg.d_ff) for kind in FFN_KINDS]
    if cfg.use_controls:
        variants += [
            ("no_collision", "standard", cfg.n_tokens, cfg.use_value_positions, cfg.d_ff),
            ("width_matched", "standard", cfg.d_head, cfg.use_value_positions, matched_d_ff(cfg, hops)),
        ]
        if hops == 1:  # values without position: one hop shows it (the CPU minute goes to the other controls)
            variants.append(("content_only", "standard", cfg.d_head, False, cfg.d_ff))
    for variant, kind, d_head, value_positions, d_ff in variants:
        torch.manual_seed(cfg.seed)  # same initial weights for the shared parts
        model = _reader(cfg, hops, kind, d_head, d_ff, value_positions).to(device)
        name = f"{'single' if hops == 1 else 'multi'}/{tag + '/' if tag else ''}{variant}"
        trained = train_model(
            model,
            train,
            test,
            steps=cfg.n_steps,
            batch=cfg.batch_size,
            lr=cfg.lr,
            seed=cfg.seed,
            checkpoint=checkpoint,
            name=name,
        )
        curves[variant] = {"steps": trained.steps, "loss": trained.loss}
        if variant not in FFN_KINDS:
            summary["controls"][variant] = {"d_head": d_head, "value_positions": value_positions, "d_ff": d_ff,
                                            "parameters": trained.parameters, "accuracy": trained.accuracy}  # fmt: skip
            continue
        models[hops][kind] = trained.model
        summary["accuracy"][kind] = trained.accuracy
        summary["validation_accuracy"][kind] = accuracy(trained.model, validation)
        summary["parameters"][kind] = trained.parameters
    summary["rounding"] = {"centroid": rounding_accuracy(test, 2), "squared_centroid": rounding_accuracy(test, 3)}
    summary.update(_gaps(summary["accuracy"], summary["validation_accuracy"], summary["controls"]))
    summary["chance"] = 1.0 / cfg.n_tokens
    summary["reference_max_weight"] = float(test.alphas[-1].max(-1).values.mean())
    summary["survey"] = survey_values(models[hops]["standard"], test, cfg.n_survey_sequences)
    return summary, curves


def _overhead(cfg: RoutingConfig) -> tuple[dict, dict]:
    count = _count
    ours = {
        kind: count(
            RouteReader(
                cfg.vocab_size,
                cfg.n_tokens,
                cfg.d_model,
                cfg.n_heads,
                cfg.d_head,
                cfg.d_ff,
                1,
                kind,
                cfg.routing,
                value_positions=cfg.use_value_positions,
            )
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
        "formula_extra": RouteAwareFFN.extra_parameters(cfg.d_ff, cfg.n_heads),
        "bert_ffn": ffn,
        "bert_extra_per_layer": bert_extra,
        "bert_fraction_of_ffn": bert_extra / ffn["standard"],
        "bert_fraction_of_encoder_layer": bert_extra / layer,
        "bert_parameters": bert_base_parameters(),
        "bert_fraction_of_model": BERT_BASE["layers"] * bert_extra / bert_base_parameters(),
        # the same four statistics pooled over the heads of a layer: one set per layer instead of one per head
        "bert_fraction_of_model_pooled": BERT_BASE["layers"] * bert_extra / h / bert_base_parameters(),
    }
    return summary, {}


@checked()
def run(
    config: RoutingConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> RoutingResults:
    """Run the chapter's experiments; finished parts and each model's training are checkpointed.

    With ``cfg.processes`` (0: every CPU available) of 2 or more and the CPU as device, spawned worker processes
    take RRT runs (one hop count, one seed) from the end of the list while this process works from its start
    (:class:`RRTRuns`); every number is that of the serial run. A part's time includes what this process waited
    for a worker, and a stopped worker's run is redone on resume (this process's runs resume mid-training).
    """
    cfg, checkpoint = start_run(RoutingConfig, config, checkpoint)
    device = resolve_device(cfg.device)
    runs = RRTRuns(cfg, checkpoint, device)
    models: dict = {}
    parts = {
        "collisions": lambda: _collisions(cfg),
        "single": lambda: _rrt(cfg, 1, checkpoint, models, runs),
        "multi": lambda: _rrt(cfg, 2, checkpoint, models, runs),
        "overhead": lambda: _overhead(cfg),
    }
    if cfg.bert_checkpoint:
        parts["bert"] = lambda: (survey_bert_checkpoint(cfg.bert_checkpoint, None, cfg.bert_n_tokens), {})
    workers = worker_count(cfg.processes, len(runs.pending)) - 1 if device.type == "cpu" else 0
    with ExitStack() as stack:
        if workers > 0:
            pool = stack.enter_context(ProcessPoolExecutor(workers, mp_context=get_context("spawn")))
            feeders = [threading.Thread(target=runs.feed, args=(pool,), daemon=True) for _ in range(workers)]
            stack.callback(lambda: [thread.join() for thread in feeders])
            stack.callback(runs.stop)  # first on the way out: no new run; the running ones finish
            for thread in feeders:
                thread.start()
        summary, curves = run_parts_timed(checkpoint, parts, progress)
    s, m = summary["single"], summary["multi"]
    summary["multi_over_single_gain"] = m["ra_gain"] / s["ra_gain"] if s["ra_gain"] > 0 else float("nan")
    summary["multi_over_single_gain_by_seed"] = [
        mg / sg if sg > 0 else float("nan")
        for sg, mg in zip(s["by_seed"]["ra_gain"], m["by_seed"]["ra_gain"], strict=True)
    ]
    return RoutingResults(cfg, summary, curves, models=models)


@checked()
def headline(results: RoutingResults) -> list[str]:
    """A few key numbers for the end-of-run summary of the command line."""
    s = results.summary
    lines = []
    for part in ("single", "multi"):
        a = s[part]["accuracy"]
        lines.append(
            f"RRT {part}-hop accuracy: standard {a['standard']:.3f}, RA-FFN {a['route_aware']:.3f}, "
            f"oracle {a['oracle']:.3f} (gap closed {s[part]['gap_closed']:.0%})"
        )
    for part in ("single", "multi"):
        controls = s[part].get("controls", {})
        if controls:
            lines.append(
                f"RRT {part}-hop controls (standard FFN): "
                + ", ".join(f"{name} (d_head = {c['d_head']}) {c['accuracy']:.3f}" for name, c in controls.items())
            )
    lines.append(f"multi-hop / single-hop RA gain: {s['multi_over_single_gain']:.2f}")
    lines.append(f"RA-FFN extra parameters: {s['overhead']['ours_fraction']:.1%} of our model")
    if "bert" in s:
        lines.append(
            f"BERT checkpoint: rank(W_V^h) <= n - 2 for {s['bert']['fraction_rank_le_n_minus_2']:.0%} of heads "
            f"at n = {s['bert']['sequence_length']}; at least {s['bert']['min_suppressed_bound']} suppressed dimensions"
        )
    return lines
