r"""Distances to equilibrium, the energy, and its predicted dissipation.

All functions are batched and take torch tensors (numpy arrays are converted). Strategies enter
as *log*-probabilities wherever a logarithm is needed, so nothing underflows near the boundary.

The **energy** is the Fenchel coupling between the dual iterate and the equilibrium,

.. math:: E_t = \mathrm{KL}(x^* \,\|\, x_t) + \mathrm{KL}(y^* \,\|\, y_t),

whose gradient in the dual variables is ``(x_t - x*, y_t - y*)``. For a game with an interior
equilibrium, OMWU is an optimistic *skew*-gradient step on ``E``, and a second-order expansion
of one step gives the **predicted dissipation**

.. math::

    E_{t+1} - E_t \approx -\frac{\eta^2}{2}\Big[\mathrm{Var}_{i\sim x_t}\big(A(y_t-y^*)\big)_i
    + \mathrm{Var}_{j\sim y_t}\big(A^T(x_t-x^*)\big)_j\Big].

Both variances vanish when ``x_t`` or ``y_t`` sits near a vertex of the simplex: this is the
geometric bottleneck.
"""

from __future__ import annotations

import numpy as np
import torch

from ..core.arguments import Array, checked
from ..core.params import Float


def _t(a) -> torch.Tensor:
    return torch.as_tensor(a, dtype=torch.float64)


@checked(p=Array("... n"), log_q=Array("... n", finite=False, at_most=0.0))
def kl_from_log(p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """``KL(p || q) = sum_i p_i (log p_i - log q_i)`` over the last axis, with ``0 log 0 = 0``."""
    p, log_q = _t(p).to(_t(log_q).device), _t(log_q)
    log_p = torch.where(p > 0, p.clamp_min(1e-300).log(), torch.zeros_like(p))
    return (p * (log_p - log_q)).sum(-1)


@checked(p=Array("... n"), q=Array("... n"))
def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """``TV(p, q) = (1/2) sum_i |p_i - q_i|`` over the last axis."""
    p, q = _t(p), _t(q)
    return 0.5 * (p.to(q.device) - q).abs().sum(-1)


def _check_strategy(name: str, p: torch.Tensor, tol: float = 1e-6) -> torch.Tensor:
    """``p`` must be a finite probability vector (or a batch of them) on the last axis."""
    p = _t(p)
    if p.ndim == 0 or not bool(torch.isfinite(p).all()):
        raise ValueError(f"{name} must be a finite probability vector, got {p}")
    if bool((p < -tol).any()) or not bool(torch.allclose(p.sum(-1), torch.ones((), dtype=p.dtype), atol=tol)):
        raise ValueError(f"{name} must lie on the simplex (entries >= 0, summing to 1), got sums {p.sum(-1)}")
    return p


@checked(
    skip_nested=True,  # kl_from_log runs bare: energy checks what it would (log_x, log_y here; the strategies below)
    log_x=Array("... n", finite=False, at_most=0.0),
    log_y=Array("... m", finite=False, at_most=0.0),
    x_star=Array("... n"),
    y_star=Array("... m"),
)
def energy(log_x: torch.Tensor, log_y: torch.Tensor, x_star: torch.Tensor, y_star: torch.Tensor) -> torch.Tensor:
    """The energy ``E = KL(x*||x) + KL(y*||y)`` (the paper's Lyapunov function), batched.

    ``x_star``/``y_star`` must lie on the simplex and ``log_x``/``log_y`` must be log-probabilities
    (``<= 0``, no NaN; ``ValueError`` naming the argument otherwise)."""
    x_star, y_star = _check_strategy("x_star", x_star), _check_strategy("y_star", y_star)
    return kl_from_log(x_star, log_x) + kl_from_log(y_star, log_y)


@checked(x=Array("... n"), y=Array("... m"), x_star=Array("... n"), y_star=Array("... m"))
def distance_tv(x: torch.Tensor, y: torch.Tensor, x_star: torch.Tensor, y_star: torch.Tensor) -> torch.Tensor:
    """Total-variation distance to equilibrium, ``TV(x, x*) + TV(y, y*)``."""
    return total_variation(x_star, x) + total_variation(y_star, y)


@checked(A=Array("b n m"), x=Array("... b n"), y=Array("... b m"))
def duality_gap(A: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    r"""``max_j (A^T x)_j - min_i (A y)_i >= 0``; zero exactly at an equilibrium.

    ``A`` is ``(B, n, m)``; ``x`` and ``y`` are ``(..., B, n)`` and ``(..., B, m)``.
    """
    A, x, y = _t(A), _t(x), _t(y)
    best_y = torch.einsum("bnm,...bn->...bm", A, x).amax(-1)
    best_x = torch.einsum("bnm,...bm->...bn", A, y).amin(-1)
    return best_y - best_x


def _weighted_variance(w: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    mean = (p * w).sum(-1, keepdim=True)
    return (p * (w - mean) ** 2).sum(-1)


@checked(A=Array("b n m"), x=Array("... b n"), y=Array("... b m"), x_star=Array("... n"), y_star=Array("... m"))
def predicted_dissipation(
    A: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
    x_star: torch.Tensor,
    y_star: torch.Tensor,
    eta: float | torch.Tensor,
) -> torch.Tensor:
    """Second-order prediction of ``E_{t+1} - E_t`` (module docstring); always ``<= 0``.

    ``x``, ``y`` are strategies at step ``t`` with shapes ``(..., B, n)``/``(..., B, m)``;
    ``x_star``, ``y_star`` broadcast against them; ``eta`` is a scalar or ``(B,)``.
    """
    A, x, y = _t(A), _t(x), _t(y)
    x_star, y_star = _check_strategy("x_star", x_star).to(x.device), _check_strategy("y_star", y_star).to(y.device)
    eta = _t(eta).to(x.device)
    if not bool(torch.isfinite(eta).all()) or bool((eta <= 0).any()):
        raise ValueError(f"eta must be a positive finite step size, got {eta}")
    row = torch.einsum("bnm,...bm->...bn", A, y - y_star)
    col = torch.einsum("bnm,...bn->...bm", A, x - x_star)
    return -0.5 * eta**2 * (_weighted_variance(row, x) + _weighted_variance(col, y))


@checked(values=Array("t"), steps=Array("t"), tail=Float(0, 1, low_inclusive=False), floor=Float(0))
def fit_linear_rate(values: np.ndarray, steps: np.ndarray, tail: float = 0.5, floor: float = 1e-11) -> float:
    """Rate ``r`` of a linear (geometric) decay ``values ~ C exp(-r t)``.

    Least-squares slope of ``log(values)`` against ``t``, negated (positive means decay), over
    the last ``tail`` fraction of the records that lie above ``floor``. The floor keeps float64
    round-off (values near ``1e-16``) out of the fit.
    """
    values, steps = np.asarray(values, dtype=np.float64), np.asarray(steps, dtype=np.float64)
    above = np.nonzero(values > floor)[0]
    if above.size < 4:
        raise ValueError(f"need at least four values above floor={floor:g} to fit a rate")
    end = above[-1] + 1
    start = int(end * (1 - tail))
    v, s = values[start:end], steps[start:end]
    keep = v > floor
    slope = np.polyfit(s[keep], np.log(v[keep]), 1)[0]
    return float(-slope)


def rate_windows(values: np.ndarray, steps: np.ndarray, floor: float = 1e-11) -> tuple[float, float]:
    """Rates of :func:`fit_linear_rate` over the 3rd and the 4th quarter of the records above ``floor``.

    A linear (geometric) decay ``values ~ C exp(-r t)`` has the same rate in both windows; a run still
    in its transient does not. ``(nan, nan)`` when a window holds fewer than four records.
    """
    values, steps = np.asarray(values, dtype=np.float64), np.asarray(steps, dtype=np.float64)
    if values.ndim != 1 or values.shape != steps.shape:
        raise ValueError(f"values and steps must be 1-D of equal length, got {values.shape} and {steps.shape}")
    if not np.isfinite(values).all() or not np.isfinite(steps).all():
        raise ValueError("values and steps must be finite (a NaN or inf would silently drop out of the fit)")
    above = np.nonzero(values > floor)[0]
    end = above[-1] + 1 if above.size else 0
    half, three_quarters = end // 2, (3 * end) // 4
    if three_quarters - half < 4 or end - three_quarters < 4:
        return float("nan"), float("nan")
    early = fit_linear_rate(values[half:three_quarters], steps[half:three_quarters], tail=1.0, floor=floor)
    late = fit_linear_rate(values[three_quarters:end], steps[three_quarters:end], tail=1.0, floor=floor)
    return early, late


def rates_agree(early: float, late: float, tolerance: float) -> bool:
    """Both rates positive and ``|early - late| <= tolerance * max(early, late)`` (False on NaN)."""
    if not (np.isfinite(early) and np.isfinite(late)) or early <= 0 or late <= 0:
        return False
    return bool(abs(early - late) <= tolerance * max(early, late))


def first_hitting_time(values: np.ndarray, steps: np.ndarray, target: float) -> float:
    """First recorded step at which ``values <= target``; ``inf`` if never."""
    values = np.asarray(values)
    hit = np.nonzero(values <= target)[0]
    return float(np.asarray(steps)[hit[0]]) if hit.size else float("inf")
