"""A tiny character-level language model, trained with AdamW, Muon, Muon then AdamW, or Muon with a decaying step.

The corpus is built offline from the docstrings of Python standard-library modules (whatever
Python runs the code: no download). The model is a small pre-norm Transformer decoder. Muon
updates the hidden weight matrices (attention and MLP projections); embeddings, the output head,
norms and biases use AdamW, as is usual for Muon. The two-stage schedule hands the hidden
matrices to AdamW for the last part of training. The decayed schedules (``muon_cosine``, ``muon_linear``,
``muon_wsd``) keep Muon on the hidden matrices to the end and multiply its step by a schedule's factor
(:func:`~explorables.muon.optimizers.lr_factors`, the valley's): the baseline the switch is argued against.
Everything else (AdamW at a constant step on the other weights, the initial weights, the batches) is the same
in every schedule.
"""

from __future__ import annotations

import importlib
import inspect
import math
from dataclasses import dataclass, field

import torch
from torch import nn

from ..core.checkpoint import Checkpointer, LoopState
from ..core.validation import check_choice, check_in_range, check_int, check_positive
from .optim import Muon
from .optimizers import lr_factors

STDLIB_MODULES = (
    "json",
    "collections",
    "itertools",
    "functools",
    "textwrap",
    "string",
    "re",
    "math",
    "statistics",
    "fractions",
    "decimal",
    "heapq",
    "bisect",
    "random",
    "pathlib",
    "shutil",
    "argparse",
    "logging",
    "datetime",
    "calendar",
    "difflib",
    "csv",
    "zipfile",
    "tarfile",
    "pickle",
    "copy",
    "enum",
    "typing",
    "dataclasses",
    "contextlib",
    "abc",
    "operator",
    "inspect",
    "unittest",
    "doctest",
    "pprint",
    "tempfile",
)
#: Muon with a decaying step on the hidden matrices: schedule -> the factor's name in :func:`lr_factors`
DECAYED = {"muon_cosine": "cosine", "muon_linear": "linear", "muon_wsd": "wsd"}
SCHEDULES = ("adamw", "muon", "muon_then_adamw", *DECAYED)
#: the schedules :func:`train_schedules` runs unless told otherwise (the book's: one decayed baseline)
BOOK_SCHEDULES = ("adamw", "muon", "muon_then_adamw", "muon_wsd")
#: held-out windows per forward pass when the validation loss is computed (the book's split is one such batch)
EVAL_WINDOWS = 512


def stdlib_corpus(max_chars: int = 400_000) -> str:
    """Docstrings of standard-library modules and of the functions and classes they define (ASCII only).

    Only members *defined* in each module count (``obj.__module__``), so the text does not depend
    on which other modules happen to be imported already (a submodule appears in ``dir()`` once
    anything imports it): same Python, same corpus.
    """
    check_int("max_chars", max_chars, minimum=1_000)
    parts: list[str] = []
    for name in STDLIB_MODULES:
        module = importlib.import_module(name)
        docs = [inspect.getdoc(module) or ""]
        for attr in sorted(vars(module)):
            obj = vars(module)[attr]
            defined_here = (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", "") == name
            if not attr.startswith("_") and defined_here:
                doc = inspect.getdoc(obj)
                if doc and doc not in docs:
                    docs.append(doc)
        parts.extend(d for d in docs if d)
    text = "\n\n".join(parts)
    return "".join(ch for ch in text if ch.isascii())[:max_chars]


class CharTransformer(nn.Module):
    """A pre-norm decoder-only Transformer over characters."""

    def __init__(self, vocab: int, d_model: int = 48, layers: int = 2, heads: int = 4, context: int = 48):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(context, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(context), persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        T = tokens.shape[1]
        x = self.embed(tokens) + self.position(torch.arange(T, device=tokens.device))
        x = self.blocks(x, mask=self.mask[:T, :T], is_causal=True)
        return self.head(self.norm(x))


def hidden_matrices(model: CharTransformer) -> list[nn.Parameter]:
    """The 2-D weights Muon updates: every matrix inside the Transformer blocks."""
    return [p for p in model.blocks.parameters() if p.ndim == 2]


@dataclass
class LMRun:
    schedule: str
    steps: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)


def _optimizers(model: CharTransformer, schedule: str, adamw_lr: float, muon_lr: float, muon_stage: bool):
    if schedule == "adamw" or not muon_stage:
        return [torch.optim.AdamW(model.parameters(), lr=adamw_lr, weight_decay=0.0)]
    matrices = hidden_matrices(model)
    ids = {id(p) for p in matrices}
    return [
        Muon(matrices, lr=muon_lr),
        torch.optim.AdamW([p for p in model.parameters() if id(p) not in ids], lr=adamw_lr, weight_decay=0.0),
    ]


def held_out_windows(n: int, context: int) -> torch.Tensor:
    """Starts of the consecutive windows that cover a held-out split of ``n`` characters: window ``i`` reads
    ``context`` characters from ``starts[i]`` and predicts each next one, so every character after the first is
    predicted once, except fewer than ``context`` at the end."""
    check_int("n", n, minimum=1)
    check_int("context", context, minimum=1)
    return torch.arange(0, n - context, context)


def train(
    text: str,
    schedule: str,
    steps: int = 120,
    switch_fraction: float = 0.6,
    batch: int = 24,
    context: int = 48,
    d_model: int = 48,
    layers: int = 2,
    adamw_lr: float = 3e-3,
    muon_lr: float = 0.02,
    eval_every: int = 20,
    seed: int = 0,
    device: str | torch.device = "cpu",
    checkpoint: Checkpointer | None = None,
    curve: bool = True,
    decayed_lr: float | None = None,
) -> LMRun:
    """Train with one optimiser schedule; deterministic for a seed; resumable from ``checkpoint``.

    The validation loss is over the whole held-out split (the last tenth of ``text``), every ``eval_every``
    steps when ``curve`` is true, else at the last step only (the training is the same either way). A decayed
    schedule (:data:`DECAYED`) starts Muon's step at ``decayed_lr`` (default ``muon_lr``) and multiplies it by
    the schedule's factor at each step (:func:`muon_step_sizes`).
    """
    return _train(
        text, schedule, steps, switch_fraction, batch, context, d_model, layers, adamw_lr, muon_lr, eval_every, seed,
        device, checkpoint, curve, decayed_lr=decayed_lr,
    )[0]  # fmt: skip


def muon_step_sizes(schedule: str, steps: int, muon_lr: float, decayed_lr: float | None = None) -> list[float] | None:
    """Muon's step at each of ``steps`` steps of a decayed ``schedule``: ``decayed_lr`` (default ``muon_lr``) times
    the factor of :func:`~explorables.muon.optimizers.lr_factors` (the valley's schedules); ``None`` for a schedule
    whose Muon step is constant (``muon``, and ``muon_then_adamw`` before its hand-over)."""
    check_choice("schedule", schedule, SCHEDULES)
    if schedule not in DECAYED:
        return None
    peak = check_positive("decayed_lr", muon_lr if decayed_lr is None else decayed_lr)
    return [float(peak * f) for f in lr_factors(DECAYED[schedule], steps)]


def train_schedules(
    text: str,
    steps: int = 120,
    switch_fraction: float = 0.6,
    batch: int = 24,
    context: int = 48,
    d_model: int = 48,
    layers: int = 2,
    adamw_lr: float = 3e-3,
    muon_lr: float = 0.02,
    eval_every: int = 20,
    seed: int = 0,
    device: str | torch.device = "cpu",
    checkpoint: Checkpointer | None = None,
    curve: bool = True,
    decayed_lr: float | None = None,
    schedules: tuple[str, ...] = BOOK_SCHEDULES,
) -> dict[str, LMRun]:
    """:func:`train` with each of ``schedules`` (default :data:`BOOK_SCHEDULES`; ``muon`` and ``muon_then_adamw``
    always) on one seed, ``{schedule: run}``.

    "Muon, then AdamW" is Muon until its hand-over step, so it continues the Muon run from there (its
    weights, random batches and records at that step) instead of training that stretch again: the same
    numbers as ``train(text, "muon_then_adamw", ...)``, to the bit (tested), at 1 - ``switch_fraction`` of
    its cost. With a ``checkpoint``, the hand-over state is saved as the switch run's entry, so a resumed
    run continues it too.
    """
    for s in schedules:
        check_choice("schedules", s, SCHEDULES)
    if not {"muon", "muon_then_adamw"} <= set(schedules):
        raise ValueError(f"schedules must include 'muon' and 'muon_then_adamw', got {schedules}")
    args = (steps, switch_fraction, batch, context, d_model, layers, adamw_lr, muon_lr, eval_every, seed, device,
            checkpoint, curve)  # fmt: skip
    runs = {}
    for schedule in schedules:
        if schedule == "muon":
            handover = math.floor(switch_fraction * steps)
            runs["muon"], kept = _train(text, "muon", *args, keep={handover: f"lm/muon_then_adamw/{seed}"})
            runs["muon_then_adamw"] = _train(text, "muon_then_adamw", *args, start_state=kept.get(handover))[0]
        elif schedule != "muon_then_adamw":
            runs[schedule] = _train(text, schedule, *args, decayed_lr=decayed_lr)[0]
    return {s: runs[s] for s in schedules}


def _train(
    text: str,
    schedule: str,
    steps: int,
    switch_fraction: float,
    batch: int,
    context: int,
    d_model: int,
    layers: int,
    adamw_lr: float,
    muon_lr: float,
    eval_every: int,
    seed: int,
    device: str | torch.device,
    checkpoint: Checkpointer | None,
    curve: bool = True,
    keep: dict[int, str | None] | None = None,
    start_state: dict | None = None,
    decayed_lr: float | None = None,
) -> tuple[LMRun, dict[int, dict]]:
    """:func:`train`; also returns ``{step: state}``, the run's state at the top of each step of ``keep`` it
    passed (each saved in ``checkpoint`` under its name in ``keep``, unless ``None`` or that entry exists), and
    starts from ``start_state`` (a state it returned) when the checkpoint has none."""
    check_choice("schedule", schedule, SCHEDULES)
    steps = check_int("steps", steps, minimum=1)
    check_in_range("switch_fraction", switch_fraction, 0.0, 1.0)
    check_positive("adamw_lr", adamw_lr)
    check_positive("muon_lr", muon_lr)
    step_sizes = muon_step_sizes(schedule, steps, muon_lr, decayed_lr)
    check_int("batch", batch, minimum=1)
    check_int("eval_every", eval_every, minimum=1)
    vocab = sorted(set(text))
    code = {c: i for i, c in enumerate(vocab)}
    data = torch.tensor([code[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]
    if len(val_data) <= context + 1:
        raise ValueError(f"text is too short for context={context}: {len(text)} characters")
    torch.manual_seed(seed)
    model = CharTransformer(len(vocab), d_model, layers, context=context).to(device)
    switch_at = math.floor(switch_fraction * steps) if schedule == "muon_then_adamw" else steps
    gen = torch.Generator().manual_seed(seed)
    record = LMRun(schedule)
    name = f"lm/{schedule}/{seed}"  # inside the experiment's "lm" part: dropped once the part is done
    first_lr = muon_lr if step_sizes is None else step_sizes[0]

    def optimizers_at(step: int) -> dict[str, torch.optim.Optimizer]:
        # the set a run continuing at ``step`` uses: the switch happens at the top of step switch_at, so a state
        # stored at that step still holds the first stage's optimisers; the switch builds the second stage's here too
        opts = _optimizers(model, schedule, adamw_lr, first_lr, muon_stage=step <= switch_at)
        return dict(zip(("muon", "adamw") if len(opts) == 2 else ("adamw",), opts, strict=True))

    loop = LoopState(checkpoint, name, modules={"model": model}, optimizers=optimizers_at, generators={"batches": gen})
    start, saved = loop.restore(start_state)
    if saved:
        record = LMRun(schedule, list(saved["steps"]), list(saved["train"]), list(saved["val"]))
    optimizers = list(loop.optimizers.values())
    offsets = torch.arange(context)
    val_starts = held_out_windows(len(val_data), context)

    def batch_of(source: torch.Tensor, idx: torch.Tensor):
        rows = idx[:, None] + offsets  # the windows source[i : i + context], as one gather
        return source[rows].to(device), source[rows + 1].to(device)

    def loss_on(x, y):
        return nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())

    @torch.no_grad()
    def held_out_loss() -> float:
        total = 0.0
        for chunk in val_starts.split(EVAL_WINDOWS):
            x, y = batch_of(val_data, chunk)
            total += nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="sum").item()
        return total / (len(val_starts) * context)

    def records() -> dict:  # copies: training goes on adding to the records
        return {"steps": list(record.steps), "train": list(record.train_loss), "val": list(record.val_loss)}

    kept: dict[int, dict] = {}
    keep = keep or {}
    for step in range(start, steps):
        if step in keep:  # a copy of every state (LoopState.state copies): training goes on changing them
            kept[step] = loop.state(step, records())
            keep_as = keep[step]
            if checkpoint is not None and keep_as is not None and checkpoint.get(keep_as) is None:
                checkpoint.save(keep_as, kept[step])  # a resumed run continues the hand-over from here
        if step == switch_at:  # the second stage: AdamW on every parameter, the set a run continuing after it uses
            loop.optimizers = optimizers_at(step + 1)
            optimizers = list(loop.optimizers.values())
        if step_sizes is not None:  # the decayed schedule's Muon step (optimizers[0] is Muon)
            optimizers[0].param_groups[0]["lr"] = step_sizes[step]
        x, y = batch_of(train_data, torch.randint(len(train_data) - context - 1, (batch,), generator=gen))
        loss = loss_on(x, y)
        for opt in optimizers:
            opt.zero_grad()
        loss.backward()
        for opt in optimizers:
            opt.step()
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            if curve or step + 1 == steps:
                record.steps.append(step + 1)
                record.train_loss.append(loss.item())
                record.val_loss.append(held_out_loss())
            loop.save(step + 1, records)
    return record, kept
