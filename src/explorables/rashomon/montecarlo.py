r"""The exact Rashomon set's volume by Monte-Carlo, batched in torch on any device.

Samples are drawn uniformly in the Laplace ellipsoid enlarged by a factor ``s``,
:math:`E_s = \{\Delta^T H \Delta \le 2 s^2 \theta\}`, and each is kept if its *exact* loss is
within :math:`\theta` of the minimum. Then
:math:`\mathrm{Vol}(R_\theta) \approx \mathrm{Vol}(E_s)\cdot\hat f`, with :math:`\hat f` the
fraction kept. This is valid when :math:`R_\theta \subset E_s`; the largest accepted sample's
radius (``max_radius``, in units of the sampling ellipsoid) shows how close the set comes to
the edge. When accepted samples reach more than halfway from the Laplace ellipsoid's edge
(radius :math:`1/s`) to the sampling edge, the set may be cut off, so the estimate is redone with
the margin :math:`s - 1` doubled (up to three times; ``possibly_truncated`` reports if that was
not enough).
Unlike box sampling, it still finds the set in 30 dimensions: with the default
:math:`s = 1 + 3/p` the acceptance fraction for a near-ellipsoidal set is
:math:`(1 + 3/p)^{-p}`, i.e. 1/8 for :math:`p = 3` and about :math:`e^{-3}` for large :math:`p`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..core.arguments import Array, checked
from ..core.device import resolve_device
from ..core.params import Device, Float, Int, Positive
from .models import Fit, log_volume

#: the most Monte-Carlo draws one estimate takes (the paper preset draws 2e7)
MAX_SAMPLES = 10**9


@checked(
    std_error=Float(0.0),
    accepted=Int(1, MAX_SAMPLES),
    samples=Int(1, MAX_SAMPLES),
    max_radius=Float(0.0, 1.0),
    enlarge=Float(1.0),
)
@dataclass(frozen=True)
class MonteCarloVolume:
    """A Monte-Carlo estimate of a Rashomon log-volume: ``accepted`` of ``samples`` draws in the
    ellipsoid enlarged by ``enlarge`` fell inside the set, the farthest at ``max_radius`` (in units
    of the sampling ellipsoid)."""

    log_volume: float
    std_error: float  # of the log-volume
    accepted: int
    samples: int
    max_radius: float
    enlarge: float
    possibly_truncated: bool

    def __post_init__(self) -> None:
        if self.accepted > self.samples:
            raise ValueError(f"accepted must be at most samples = {self.samples}, got {self.accepted}")


@checked(
    X=Array("n d"),
    y=Array("n"),
    level=Positive(),
    samples=Int(100, MAX_SAMPLES),
    enlarge=Float(1.0),
    device=Device(),
    batch=Int(1, MAX_SAMPLES),
)
def exact_log_volume(
    X: np.ndarray,
    y: np.ndarray,
    fitted: Fit,
    level: float,
    samples: int = 200_000,
    enlarge: float | None = None,
    seed: int = 0,
    device: str = "cpu",
    batch: int = 65_536,
) -> MonteCarloVolume:
    """Monte-Carlo log-volume of ``{beta : L(beta) <= L(beta_hat) + level}`` (exact loss)."""
    p = fitted.n_params
    enlarge = 1 + 3 / p if enlarge is None else enlarge
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.shape[1] != p - 1:
        raise ValueError(f"X must have {p - 1} columns (the weights of fitted), got shape {X.shape}")
    if fitted.loss == "logistic" and not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("y must hold labels 0 and 1 for the logistic loss")
    dev = resolve_device(device)
    for _attempt in range(4):
        result = _estimate(X, y, fitted, level, samples, enlarge, seed, dev, batch)
        if not result.possibly_truncated:
            return result
        enlarge = 1 + 2 * (enlarge - 1)  # double the margin and sample again
    return result


def _estimate(X, y, fitted: Fit, level: float, samples: int, enlarge: float, seed: int, dev, batch: int):
    gen = torch.Generator(device="cpu").manual_seed(seed)
    p = fitted.n_params
    X1 = torch.as_tensor(np.c_[np.ones(len(X)), X], dtype=torch.float64, device=dev)
    y_t = torch.as_tensor(y, dtype=torch.float64, device=dev)
    beta = torch.as_tensor(fitted.beta, dtype=torch.float64, device=dev)
    # Delta = scale * L^{-T} u with H = L L^T and u uniform in the unit ball
    chol = torch.linalg.cholesky(torch.as_tensor(fitted.hessian, dtype=torch.float64, device=dev))
    scale = enlarge * np.sqrt(2 * level)
    penalty = fitted.ridge * torch.ones(p, dtype=torch.float64, device=dev)
    penalty[0] = 0.0
    accepted, max_radius, done = 0, 0.0, 0
    while done < samples:
        m = min(batch, samples - done)
        u = torch.randn(m, p, generator=gen, dtype=torch.float64).to(dev)
        radius = torch.rand(m, generator=gen, dtype=torch.float64).to(dev) ** (1 / p)
        u = u / u.norm(dim=1, keepdim=True) * radius[:, None]
        delta = scale * torch.linalg.solve_triangular(chol.T, u.T, upper=True).T
        params = beta + delta
        margin = params @ X1.T
        if fitted.loss == "squared":
            loss = ((y_t - margin) ** 2).mean(1)
        else:
            loss = -torch.nn.functional.logsigmoid((2 * y_t - 1) * margin).mean(1)
        loss = loss + 0.5 * (penalty * params**2).sum(1)
        keep = loss <= fitted.loss_value + level
        accepted += int(keep.sum())
        if keep.any():
            max_radius = max(max_radius, float(radius[keep].max()))
        done += m
    if accepted == 0:
        raise ValueError("no sample fell inside the Rashomon set; increase samples")
    fraction = accepted / samples
    log_vol = log_volume(fitted, level) + p * np.log(enlarge) + np.log(fraction)
    return MonteCarloVolume(
        log_volume=float(log_vol),
        std_error=float(np.sqrt((1 - fraction) / (fraction * samples))),
        accepted=accepted,
        samples=samples,
        max_radius=max_radius,
        enlarge=enlarge,
        # the Laplace ellipsoid's edge sits at radius 1/enlarge; accepted samples far beyond it, more
        # than halfway to the sampling edge, suggest the exact set reaches (and may cross) that edge
        possibly_truncated=max_radius > (1 + 1 / enlarge) / 2,
    )
