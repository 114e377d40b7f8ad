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
    return sliced_wasserstein_to(x, *sorted_reference(y, directions, x.shape[-2]), directions)


@checked(y=Array("... m d"), directions=Array("p d"), n=Int(1, 10**9))
def sorted_reference(y: torch.Tensor, directions: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A reference point set ``y`` of ``m = c * n`` points, ready to be compared with sets of ``n`` points.

    Each set of ``n`` points has mass ``1 / n`` per point and ``y`` ``1 / m``, so on each direction the 1-D optimal
    transport plan pairs the ``i``-th smallest projection of a set with the ``i``-th block of ``c`` consecutive sorted
    projections of ``y``. Returns those blocks' means ``(..., n, P)`` and the mean over blocks of their variance
    ``(..., P)``: the squared 2-Wasserstein distance on a direction is then ``mean_i (x_i - mean_i)^2 + spread``
    (exact; ``c = 1`` gives ``y``'s sorted projections and zero spread).
    """
    if not isinstance(y, torch.Tensor) or not y.is_floating_point():
        raise ArgumentError(f"y must be a floating-point torch.Tensor, got {type(y).__name__}")
    if not isinstance(directions, torch.Tensor) or directions.dtype != y.dtype:
        raise ArgumentError(f"directions must be a torch.Tensor of y's dtype {y.dtype}, got {directions!r:.60}")
    n = check_int("n", n, 1)
    m = y.shape[-2]
    if m % n:
        raise ValueError(f"y must hold a multiple of n = {n} points (each point of a set of n is paired with a "
                         f"block of m / n reference points), got m = {m}")  # fmt: skip
    check_memory({"the reference's sorted projections (y's points x directions)": 8.0 * y[..., 0].numel()
                  * directions.shape[0]})  # fmt: skip
    py = torch.sort(y @ directions.T, dim=-2).values
    if m == n:
        return py, torch.zeros(py.shape[:-2] + py.shape[-1:], dtype=py.dtype, device=py.device)
    blocks = py.unflatten(-2, (n, m // n))  # (..., n, c, P)
    means = blocks.mean(-2)
    return means, (blocks - means.unsqueeze(-2)).pow(2).mean(-2).mean(-2)


@checked(x=Array("... n d"), block_means=Array("... n p"), spread=Array("... p"), directions=Array("p d"))
def sliced_wasserstein_to(
    x: torch.Tensor, block_means: torch.Tensor, spread: torch.Tensor, directions: torch.Tensor
) -> torch.Tensor:
    """Sliced 2-Wasserstein distance between point sets ``x`` ``(..., n, d)`` and a reference prepared by
    :func:`sorted_reference` (the same ``directions``); leading axes broadcast. Returns ``(...)``."""
    for name, value in (("x", x), ("block_means", block_means), ("spread", spread), ("directions", directions)):
        if not isinstance(value, torch.Tensor) or not value.is_floating_point():
            raise ArgumentError(f"{name} must be a floating-point torch.Tensor, got {type(value).__name__}")
    if not x.dtype == block_means.dtype == spread.dtype == directions.dtype:
        raise ArgumentError(f"x, block_means, spread and directions must have one dtype, got {x.dtype}, "
                            f"{block_means.dtype}, {spread.dtype}, {directions.dtype}")  # fmt: skip
    px = torch.sort(x @ directions.T, dim=-2).values
    return ((px - block_means).pow(2).mean((-2, -1)) + spread.mean(-1)).sqrt()
