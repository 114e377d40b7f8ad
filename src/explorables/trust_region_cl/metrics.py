"""Sample quality: the sliced Wasserstein distance between generated and real samples."""

from __future__ import annotations

import torch

from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Int
from ..core.resources import check_memory
from ..core.validation import check_int


@checked(n_projections=Int(1, 10**7), d=Int(1, 10**7))
def random_directions(n_projections: int, d: int, generator: torch.Generator) -> torch.Tensor:
    """``n_projections`` unit vectors in ``R^d`` (rows), drawn uniformly on the sphere."""
    n_projections = check_int("n_projections", n_projections, 1)
    check_memory({"the directions (n_projections x d)": 8.0 * n_projections * d})
    v = torch.randn(n_projections, d, generator=generator)
    return v / v.norm(dim=-1, keepdim=True)


@checked(x=Array("... n d"), y=Array("... n d"), directions=Array("p d"))
def sliced_wasserstein(x: torch.Tensor, y: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """Sliced 2-Wasserstein distance between point sets ``x`` and ``y`` of equal size.

    ``x`` and ``y`` are ``(..., n, d)``; ``directions`` is ``(P, d)``. Each set is projected on every
    direction, the projections are sorted (the 1-D optimal transport plan pairs order statistics),
    and the squared gaps are averaged over points and directions. Returns ``(...)``.
    """
    for name, value in (("x", x), ("y", y), ("directions", directions)):
        if not isinstance(value, torch.Tensor) or not value.is_floating_point():
            raise ArgumentError(f"{name} must be a floating-point torch.Tensor, got {type(value).__name__}")
    if not x.dtype == y.dtype == directions.dtype:
        raise ArgumentError(f"x, y and directions must have one dtype, got {x.dtype}, {y.dtype}, {directions.dtype}")
    for a, b in zip(reversed(x.shape[:-2]), reversed(y.shape[:-2]), strict=False):
        if a != b and 1 not in (a, b):
            raise ArgumentError(f"x and y must have broadcastable leading axes, got {tuple(x.shape)}, {tuple(y.shape)}")
    if x.shape[-2:] != y.shape[-2:]:
        raise ValueError(
            f"x and y must hold the same number of points of the same dimension, got {x.shape} and {y.shape}"
        )
    px = torch.sort(x @ directions.T, dim=-2).values
    py = torch.sort(y @ directions.T, dim=-2).values
    return (px - py).pow(2).mean((-2, -1)).sqrt()
