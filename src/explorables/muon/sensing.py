r"""The mixed-spiked matrix sensing model, seen as a river valley.

Our reconstruction of the paper's model (only its abstract is public). The loss of a matrix
:math:`W \in \mathbb R^{m\times n}` is a quadratic whose curvature is diagonal in fixed singular
bases :math:`U, V` (random orthogonal matrices):

.. math:: L(W) = \tfrac12 \sum_{jk} \Lambda_{jk}\, Z_{jk}^2, \qquad Z = U^\top (W - W^\star) V,

with three kinds of coordinate:

* **river** (signal): the first ``rank`` diagonal entries, curvature ``lam_river`` (small); the
  solution :math:`W^\star` lives here, and the run starts far from it;
* **spike** (hills): the next ``spikes`` diagonal entries, curvature ``lam_spike`` (large); the
  start is displaced along them;
* **bulk**: every other entry, curvature ``lam_bulk`` (tiny), with a small random start.

The gradient is :math:`U(\Lambda \circ Z)V^\top`. Gradient descent's step size is capped by the
spike curvature (:math:`\eta < 2/\lambda_{spike}`), so it crawls along the flat river; Muon's
orthogonalised step moves every direction by the same amount, so it runs down the river but
cannot settle at its bottom.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..core.arguments import Array, OfInstance, checked
from ..core.params import Float, Int, Positive
from ..core.validation import check_in_range, check_int, check_positive

#: the largest matrix side a problem takes
MAX_SIDE = 4_096
#: a method's matrix argument: a finite float tensor of the problem's shape (m, n), or a batch (..., m, n)
MATRIX = OfInstance("_check_matrix", "a finite float tensor of shape (..., m, n)")


@checked(
    U=Array("m m"),
    V=Array("n n"),
    curvature=Array("m n"),
    W_star=Array("m n"),
    W0=Array("m n"),
    rank=Int(1, MAX_SIDE),
    spikes=Int(1, MAX_SIDE),
)
@dataclass(frozen=True)
class SensingProblem:
    """A river-valley quadratic: bases, curvatures, solution and start (all float64 tensors)."""

    U: torch.Tensor
    V: torch.Tensor
    curvature: torch.Tensor  # Lambda, (m, n)
    W_star: torch.Tensor
    W0: torch.Tensor
    rank: int
    spikes: int

    def __post_init__(self) -> None:
        for name in ("U", "V", "curvature", "W_star", "W0"):
            if not torch.is_tensor(getattr(self, name)):
                raise TypeError(f"{name} must be a torch tensor, got {type(getattr(self, name)).__name__}")
        side = min(self.curvature.shape)
        if self.rank + self.spikes > side:
            raise ValueError(f"rank + spikes must be at most min(m, n) = {side}, got {self.rank} + {self.spikes}")

    def _check_matrix(self, name: str, W: object) -> torch.Tensor:
        shape = tuple(self.curvature.shape)
        if not (isinstance(W, torch.Tensor) and W.is_floating_point()) or tuple(W.shape[-2:]) != shape:
            what = f"{type(W).__name__} of shape {tuple(W.shape)}" if isinstance(W, torch.Tensor) else type(W).__name__
            raise ValueError(f"{name} must be a float tensor of shape (..., {shape[0]}, {shape[1]}), got a {what}")
        if not bool(torch.isfinite(W).all()):
            raise ValueError(f"{name} must hold only finite numbers (no NaN or inf)")
        return W

    @checked(skip_nested=True, W=MATRIX)
    def coordinates(self, W: torch.Tensor) -> torch.Tensor:
        """``Z = U^T (W - W*) V``; works on a batch ``(..., m, n)``."""
        return self.U.T @ (W - self.W_star) @ self.V

    @checked(skip_nested=True, W=MATRIX)
    def loss(self, W: torch.Tensor) -> torch.Tensor:
        Z = self.coordinates(W)
        return 0.5 * (self.curvature * Z**2).sum((-2, -1))

    @checked(skip_nested=True, W=MATRIX)
    def gradient(self, W: torch.Tensor) -> torch.Tensor:
        return self.U @ (self.curvature * self.coordinates(W)) @ self.V.T

    @checked(skip_nested=True, W=MATRIX)
    def river_distance(self, W: torch.Tensor) -> torch.Tensor:
        """Distance to the solution along the river (signal) coordinates."""
        Z = self.coordinates(W)
        idx = torch.arange(self.rank)
        return Z[..., idx, idx].norm(dim=-1)

    @checked(skip_nested=True, W=MATRIX)
    def spike_coordinate(self, W: torch.Tensor) -> torch.Tensor:
        """The first spike (hill) coordinate, signed: its oscillation is what the figures show."""
        return self.coordinates(W)[..., self.rank, self.rank]


@checked(
    m=Int(2, MAX_SIDE),
    n=Int(2, MAX_SIDE),
    rank=Int(1, MAX_SIDE),
    spikes=Int(1, MAX_SIDE),
    lam_river=Positive(),
    lam_spike=Positive(),
    lam_bulk=Positive(),
    signal=Positive(),
    hill=Positive(),
    bulk_noise=Float(0.0, 10.0),
    seed=Int(0),
)
def make_problem(
    m: int = 20,
    n: int = 20,
    rank: int = 3,
    spikes: int = 2,
    lam_river: float = 0.05,
    lam_spike: float = 100.0,
    lam_bulk: float = 0.005,
    signal: float = 3.0,
    hill: float = 0.3,
    bulk_noise: float = 0.05,
    seed: int = 0,
) -> SensingProblem:
    """A seeded :class:`SensingProblem` (module docstring); the start is ``W = 0`` plus hills and bulk."""
    m, n = check_int("m", m, minimum=2), check_int("n", n, minimum=2)
    rank = check_int("rank", rank, minimum=1, maximum=min(m, n) - 1)
    spikes = check_int("spikes", spikes, minimum=1, maximum=min(m, n) - rank)
    for name, value in (
        ("lam_river", lam_river),
        ("lam_spike", lam_spike),
        ("lam_bulk", lam_bulk),
        ("signal", signal),
        ("hill", hill),
    ):
        check_positive(name, value)
    check_in_range("bulk_noise", bulk_noise, 0.0, 10.0)
    gen = np.random.default_rng(seed)
    U = torch.from_numpy(np.linalg.qr(gen.standard_normal((m, m)))[0])
    V = torch.from_numpy(np.linalg.qr(gen.standard_normal((n, n)))[0])
    curvature = torch.full((m, n), float(lam_bulk), dtype=torch.float64)
    river, spike = torch.arange(rank), torch.arange(rank, rank + spikes)
    curvature[river, river] = lam_river
    curvature[spike, spike] = lam_spike
    Z_star = torch.zeros(m, n, dtype=torch.float64)
    Z_star[river, river] = signal * torch.linspace(1.0, 0.5, rank, dtype=torch.float64)
    Z0 = bulk_noise * torch.from_numpy(gen.standard_normal((m, n)))
    Z0[river, river] = 0.0
    Z0[spike, spike] = hill
    W_star = U @ Z_star @ V.T
    # start: W0 - W* has coordinates Z0 - Z_star (far along the river, displaced on the hills)
    W0 = U @ (Z0 - Z_star) @ V.T + W_star
    return SensingProblem(U=U, V=V, curvature=curvature, W_star=W_star, W0=W0, rank=rank, spikes=spikes)
