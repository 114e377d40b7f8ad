"""A minimal training experiment, kept in the tests to exercise the runner's machinery.

Linear regression trained by full-batch gradient descent. Under torchrun each process takes its
share of every batch and DistributedDataParallel averages the gradients, which for equal shares
is exactly the full-batch gradient: the final loss must match the single-process run.
It checkpoints the model, optimiser and step, so a killed run can resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch.nn.parallel import DistributedDataParallel

from explorables.core.checkpoint import Checkpointer, LoopState
from explorables.core.config import ExperimentConfig
from explorables.core.distributed import all_reduce_mean, init_distributed, shard


@dataclass(frozen=True)
class ToyConfig(ExperimentConfig):
    samples: int = 512
    features: int = 8
    steps: int = 200
    lr: float = 0.05
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"smoke": {}, "book": {}, "paper": {"steps": 2_000}}
    DATA_ROOT_SCALES: ClassVar[tuple[str, ...]] = ("paper",)
    DATA_DESCRIPTION: ClassVar[str] = "a folder of training data (the toy only checks that it is given)"


Config = ToyConfig


@dataclass
class ToyResults:
    summary: dict


def run(config: ToyConfig, *, checkpoint: Checkpointer | None = None, progress: bool = False) -> ToyResults:
    info = init_distributed(config.device)
    if config.samples % info.world_size:
        raise ValueError(f"samples ({config.samples}) must be divisible by the number of processes ({info.world_size})")
    gen = torch.Generator().manual_seed(config.seed)  # the same data on every process
    X = torch.randn(config.samples, config.features, generator=gen, dtype=torch.float64)
    w_true = torch.randn(config.features, 1, generator=gen, dtype=torch.float64)
    y = X @ w_true + 0.1 * torch.randn(config.samples, 1, generator=gen, dtype=torch.float64)
    X, y = X.to(info.device), y.to(info.device)

    torch.manual_seed(config.seed)
    model = torch.nn.Linear(config.features, 1, dtype=torch.float64).to(info.device)
    optimiser = torch.optim.SGD(model.parameters(), lr=config.lr)
    loop = LoopState(checkpoint, "train", modules={"model": model}, optimizers={"optimiser": optimiser})
    start, _ = loop.restore()
    # equal shares, so DDP's average of the shares' gradients is the full-batch gradient
    device_ids = [info.device.index] if info.device.type == "cuda" else None
    net = DistributedDataParallel(model, device_ids=device_ids) if info.distributed else model
    mine = shard(config.samples, info)
    for step in range(start, config.steps):
        optimiser.zero_grad()
        loss = torch.nn.functional.mse_loss(net(X[mine]), y[mine])
        loss.backward()
        optimiser.step()
        loop.save(step + 1)
    with torch.no_grad():
        final = all_reduce_mean(torch.nn.functional.mse_loss(model(X[mine]), y[mine]).detach(), info)
    return ToyResults(summary={"final_loss": float(final), "world_size": info.world_size, "rank": info.rank})
