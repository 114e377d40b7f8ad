"""A tiny character-level language model, trained with AdamW, Muon, or Muon then AdamW.

The corpus is built offline from the docstrings of Python standard-library modules (whatever
Python runs the code: no download). The model is a small pre-norm Transformer decoder. Muon
updates the hidden weight matrices (attention and MLP projections); embeddings, the output head,
norms and biases use AdamW, as is usual for Muon. The two-stage schedule hands the hidden
matrices to AdamW for the last part of training.
"""

from __future__ import annotations

import importlib
import inspect
import math
from dataclasses import dataclass, field

import torch
from torch import nn

from ..core.checkpoint import Checkpointer
from ..core.validation import check_choice, check_in_range, check_int, check_positive
from .optim import Muon

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
SCHEDULES = ("adamw", "muon", "muon_then_adamw")


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
) -> LMRun:
    """Train with one optimiser schedule; deterministic for a seed; resumable from ``checkpoint``."""
    check_choice("schedule", schedule, SCHEDULES)
    steps = check_int("steps", steps, minimum=1)
    check_in_range("switch_fraction", switch_fraction, 0.0, 1.0)
    check_positive("adamw_lr", adamw_lr)
    check_positive("muon_lr", muon_lr)
    check_int("batch", batch, minimum=1)
    check_int("eval_every", eval_every, minimum=1)
    vocab = sorted(set(text))
    data = torch.tensor([vocab.index(c) for c in text], dtype=torch.long)
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]
    if len(val_data) <= context + 1:
        raise ValueError(f"text is too short for context={context}: {len(text)} characters")
    torch.manual_seed(seed)
    model = CharTransformer(len(vocab), d_model, layers, context=context).to(device)
    switch_at = math.floor(switch_fraction * steps) if schedule == "muon_then_adamw" else steps
    gen = torch.Generator().manual_seed(seed)
    record, start = LMRun(schedule), 0
    name = f"lm/{schedule}/{seed}"  # inside the experiment's "lm" part: dropped once the part is done
    saved = checkpoint.get(name) if checkpoint is not None else None
    if saved is not None:
        model.load_state_dict(saved["model"])
        gen.set_state(saved["generator"])
        start = saved["step"]
        record = LMRun(schedule, list(saved["steps"]), list(saved["train"]), list(saved["val"]))
    # the stage the run was in when it was saved (a switch happens at the top of step switch_at)
    muon_stage = len(saved["optimizers"]) == 2 if saved is not None else start < switch_at
    optimizers = _optimizers(model, schedule, adamw_lr, muon_lr, muon_stage=muon_stage)
    if saved is not None:
        for opt, state in zip(optimizers, saved["optimizers"], strict=True):
            opt.load_state_dict(state)
    val_idx = torch.randint(len(val_data) - context - 1, (64,), generator=torch.Generator().manual_seed(seed + 1))

    def batch_of(source: torch.Tensor, idx: torch.Tensor):
        x = torch.stack([source[i : i + context] for i in idx]).to(device)
        y = torch.stack([source[i + 1 : i + 1 + context] for i in idx]).to(device)
        return x, y

    def loss_on(x, y):
        return nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())

    for step in range(start, steps):
        if step == switch_at:  # the second stage: AdamW on every parameter
            optimizers = _optimizers(model, schedule, adamw_lr, muon_lr, muon_stage=False)
        x, y = batch_of(train_data, torch.randint(len(train_data) - context - 1, (batch,), generator=gen))
        loss = loss_on(x, y)
        for opt in optimizers:
            opt.zero_grad()
        loss.backward()
        for opt in optimizers:
            opt.step()
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            with torch.no_grad():
                val = loss_on(*batch_of(val_data, val_idx))
            record.steps.append(step + 1)
            record.train_loss.append(loss.item())
            record.val_loss.append(val.item())
            if checkpoint is not None:
                checkpoint.maybe_save(
                    name,
                    lambda step=step, optimizers=optimizers: {
                        "model": model.state_dict(),
                        "generator": gen.get_state(),
                        "step": step + 1,
                        "optimizers": [o.state_dict() for o in optimizers],
                        "steps": record.steps,
                        "train": record.train_loss,
                        "val": record.val_loss,
                    },
                )
    return record
