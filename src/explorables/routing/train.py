"""Training and evaluating :class:`~.model.RouteReader` on the RRT; resumable from a checkpoint."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from ..core.arguments import checked
from ..core.checkpoint import Checkpointer, LoopState
from ..core.params import Float, Int, Text
from ..core.validation import check_int
from .model import N_STATS, RouteReader, routing_statistics
from .rrt import MAX_SEED, RRTBatch

#: the most AdamW steps one training run takes (the paper preset takes 3e4)
MAX_STEPS = 10**7


def check_model_data(model: RouteReader, data: RRTBatch, name: str = "data") -> None:
    """A ``ValueError`` naming ``name`` unless ``data`` is a non-empty batch that ``model`` reads: its
    sequence length, its hops (one given weighting per layer) and its device."""
    if len(data) == 0:
        raise ValueError(f"{name} must hold at least one example, got an empty batch")
    if data.keys.shape[1] != model.length:
        raise ValueError(f"{name} must have sequences of length {model.length} (the model's), got {data.keys.shape[1]}")
    if model.routing == "given":
        if len(data.alphas) != model.layers or any(a.shape[1] != model.heads for a in data.alphas):
            raise ValueError(
                f"{name} must give one weighting of {model.heads} head(s) per layer ({model.layers}) for "
                f"routing='given', got {len(data.alphas)} of shape {[tuple(a.shape) for a in data.alphas]}"
            )
    device = model.head.weight.device
    if data.keys.device != device:
        raise ValueError(f"{name} is on {data.keys.device} but the model is on {device}")


@dataclass
class TrainedModel:
    kind: str
    model: RouteReader
    accuracy: float
    parameters: int
    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)


@checked(skip_nested=True, batch=Int(1, 2**31))  # the model's routing_statistics in the loop runs bare
@torch.no_grad()
def accuracy(model: RouteReader, data: RRTBatch, batch: int = 4096) -> float:
    """Fraction of ``data`` whose predicted source position equals the label."""
    check_model_data(model, data)
    model.eval()
    hits = 0
    for start in range(0, len(data), batch):
        b = data[start : start + batch]
        hits += int((model(b.keys, b.pointers, b.query, b.alphas).argmax(1) == b.label).sum())
    model.train()
    return hits / len(data)


@checked(statistic=Int(0, N_STATS - 1))
@torch.no_grad()
def rounding_accuracy(data: RRTBatch, statistic: int = 3) -> float:
    """A baseline without training: round one routing statistic of the last hop to a position.

    The centroids lie in ``[0, 1]`` (positions ``p_j = j / (m - 1)``), so ``round((m - 1) c)`` is a
    position; this is the fraction of ``data`` where it equals the label. For the squared-weight
    centroid ``c_2`` (``statistic=3``) it is high for sharp weights, where ``c_2`` is close to a soft argmax, and
    low for soft ones, where the runners-up pull it away.
    """
    if len(data) == 0:
        raise ValueError("data must hold at least one example, got an empty batch")
    alpha = data.alphas[-1][:, 0].double()
    m = alpha.shape[-1]
    guess = (routing_statistics(alpha)[:, statistic] * (m - 1)).round().long()
    return float((guess == data.label).double().mean())


@checked(
    skip_nested=True,  # the model's routing_statistics in the training loop runs bare
    steps=Int(1, MAX_STEPS),
    batch=Int(1),
    lr=Float(0, 1, low_inclusive=False),
    seed=Int(0, MAX_SEED),
    record_every=Int(1),
    name=Text(nonempty=True),
)
def train_model(
    model: RouteReader,
    train: RRTBatch,
    test: RRTBatch,
    *,
    steps: int,
    batch: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    record_every: int = 50,
    checkpoint: Checkpointer | None = None,
    name: str = "rrt/model",
) -> TrainedModel:
    """AdamW on cross-entropy over ``steps`` minibatches drawn (seeded) from ``train``.

    The loop state (weights, optimiser, sampler and the loss record) is stored under ``name`` with
    ``checkpoint.maybe_save``; a resumed run continues from it and ends with the same weights.
    ``model``, ``train`` and ``test`` must be on the same device.
    """
    check_model_data(model, train, "train")
    check_model_data(model, test, "test")
    batch = check_int("batch", batch, maximum=len(train))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    loop = LoopState(checkpoint, name, modules={"model": model}, optimizers={"optimizer": opt},
                     generators={"generator": gen})  # fmt: skip
    start, saved = loop.restore()
    rec_steps, rec_loss = list(saved.get("steps", [])), list(saved.get("loss", []))
    running = 0.0
    for step in range(start, steps):
        idx = torch.randint(len(train), (batch,), generator=gen).to(train.label.device)
        b = train[idx]
        loss = nn.functional.cross_entropy(model(b.keys, b.pointers, b.query, b.alphas), b.label)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss.item()
        if (step + 1) % record_every == 0 or step + 1 == steps:
            rec_steps.append(step + 1)
            rec_loss.append(running / (record_every if (step + 1) % record_every == 0 else (step + 1) % record_every))
            running = 0.0
            loop.save(step + 1, {"steps": rec_steps, "loss": rec_loss})
    n_params = sum(p.numel() for p in model.parameters())
    return TrainedModel(model.kind, model, accuracy(model, test), n_params, rec_steps, rec_loss)
