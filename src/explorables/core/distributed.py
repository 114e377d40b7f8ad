"""Several processes, one code path: ``torchrun --nproc-per-node N -m explorables run ...``.

:func:`init_distributed` reads the variables torchrun sets (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``), joins the process group on NCCL for GPUs and gloo for CPUs, and returns who this
process is. Without torchrun it returns a single-process :class:`DistInfo`, so experiments call
it unconditionally. Only the main process (rank 0) writes outputs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from .device import resolve_device


@dataclass(frozen=True)
class DistInfo:
    rank: int
    world_size: int
    local_rank: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        """True on the process that writes outputs (rank 0)."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def init_distributed(device: str | torch.device = "auto") -> DistInfo:
    """Join the process group if launched by torchrun (NCCL on CUDA, gloo otherwise)."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return DistInfo(0, 1, 0, resolve_device(device))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    dev = resolve_device(device)
    if dev.type == "cuda":
        torch.cuda.set_device(local_rank)
        dev = torch.device("cuda", local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if dev.type == "cuda" else "gloo")
    return DistInfo(dist.get_rank(), dist.get_world_size(), local_rank, dev)


def shard(n: int, info: DistInfo) -> slice:
    """This process's contiguous share of ``n`` items (the last shares may be one shorter)."""
    per, extra = divmod(n, info.world_size)
    start = info.rank * per + min(info.rank, extra)
    return slice(start, start + per + (info.rank < extra))


def all_reduce_mean(value: torch.Tensor, info: DistInfo) -> torch.Tensor:
    """Average ``value`` over processes (identity in a single process)."""
    if info.distributed:
        value = value.clone()
        dist.all_reduce(value, op=dist.ReduceOp.SUM)
        value /= info.world_size
    return value


def shutdown() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
