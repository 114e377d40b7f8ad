"""Sample quality: the sliced Wasserstein distance between generated and real samples."""

from __future__ import annotations

import torch

from ..core.validation import check_int


def random_directions(n_projections: int, d: int, generator: torch.Generator) -> torch.Tensor:
    """``n_projections`` unit vectors in ``R^d`` (rows), drawn uniformly on the sphere."""
    n_projections = check_int("n_projections", n_projections, 1)
    v = torch.randn(n_projections, d, generator=generator)
    return v / v.norm(dim=-1, keepdim=True)


def sliced_wasserstein(x: torch.Tensor, y: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """Sliced 2-Wasserstein distance between point sets ``x`` and ``y`` of equal size.

    ``x`` and ``y`` are ``(..., n, d)``; ``directions`` is ``(P, d)``. Each set is projected on every
    direction, the projections are sorted (the 1-D optimal transport plan pairs order statistics),
    and the squared gaps are averaged over points and directions. Returns ``(...)``.
    """
    if x.shape[-2:] != y.shape[-2:]:
        raise ValueError(
            f"x and y must hold the same number of points of the same dimension, got {x.shape} and {y.shape}"
        )
    px = torch.sort(x @ directions.T, dim=-2).values
    py = torch.sort(y @ directions.T, dim=-2).values
    return (px - py).pow(2).mean((-2, -1)).sqrt()
