"""The training losses: one-step, K-step unrolled, noise injection, Jacobian matching, and the complete regulariser.

All losses take an ensemble :class:`~explorables.stable_nde.models.HybridModel` and states of shape
``(S, B, d)`` (member, batch, dimension). Squared errors are measured in the system's normalised
units (divided by ``system.scale``), averaged over the batch and *summed over members*, so each
member's gradient is its own loss's gradient.

Equations (labels of the chapter):

* one-step, eq. (nde-onestep): ``|Phi_theta(x_k) - x_{k+1}|^2``;
* K-step unrolled, eq. (nde-unrolled): ``1/K sum_j |Phi_theta^j(x_k) - x_{k+j}|^2`` (backpropagation
  through all K steps: the expensive reference);
* noise injection, eq. (nde-noise): ``|Phi_theta(x_k + delta) - x_{k+1}|^2`` with a clean target and
  ``delta`` either isotropic Gaussian or the model's own rollout error (rollout-shaped);
* Jacobian matching, eq. (nde-jacobian): one-step ``+ lambda |(J_theta(x) - J(x)) v|^2`` with
  forward-mode JVPs (:func:`torch.func.jvp`) of the model and of the true one-step map;
* the complete regulariser, eq. (nde-complete): ``|Phi_theta(x_k + delta) - x_{k+1} - J(x_k) delta|^2``
  with rollout-shaped ``delta``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.func import jvp

from ..core.arguments import Array, checked
from ..core.params import Choice, Float
from ..core.validation import check_choice, check_in_range, check_int
from .models import HybridModel
from .systems import System

METHODS: tuple[str, ...] = ("one_step", "unrolled", "noise_iso", "noise_rollout", "jacobian", "complete")
#: the cheap losses whose gradients are compared with the unrolled one
CHEAP_METHODS: tuple[str, ...] = ("one_step", "noise_iso", "noise_rollout", "jacobian", "complete")
#: methods that use the true system's directional derivatives J(x) v (from the known dynamics)
USES_TRUE_JACOBIAN: tuple[str, ...] = ("jacobian", "complete")
METHOD_LABELS: dict[str, str] = {
    "one_step": "one-step",
    "unrolled": "unrolled (K steps)",
    "noise_iso": "isotropic noise",
    "noise_rollout": "rollout-shaped noise",
    "jacobian": "Jacobian matching",
    "complete": "complete regulariser",
}


def _check_states(name: str, x: torch.Tensor, model: HybridModel) -> None:
    _check_tensor(name, x, model)
    if x.ndim != 3 or x.shape[0] != model.n_members or x.shape[-1] != model.system.dim:
        raise ValueError(
            f"{name} must have shape (n_members={model.n_members}, batch, dim={model.system.dim}), got {tuple(x.shape)}"
        )


def _check_tensor(name: str, x: torch.Tensor, model: HybridModel) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch tensor, got {type(x).__name__}")
    dtype = model.scale.dtype
    if x.dtype != dtype:
        raise ValueError(f"{name} must have the model's dtype {dtype}, got {x.dtype}")


def _check_windows(windows: torch.Tensor, model: HybridModel) -> None:
    _check_tensor("windows", windows, model)
    if windows.ndim != 4 or windows.shape[0] != model.n_members or windows.shape[-1] != model.system.dim:
        raise ValueError(
            f"windows must have shape (n_members={model.n_members}, batch, K + 1, dim={model.system.dim}), "
            f"got {tuple(windows.shape)}"
        )
    if windows.shape[2] < 2:
        raise ValueError(f"windows must hold K + 1 >= 2 states per window (horizon K >= 1), got {windows.shape[2]}")


def squared_error(model: HybridModel, residual: torch.Tensor) -> torch.Tensor:
    """``sum_s mean_b |residual / scale|^2``: the members' mean squared errors, summed over members."""
    return ((residual / model.scale) ** 2).sum(-1).mean(-1).sum()


JVP_MODES: tuple[str, ...] = ("forward", "difference")
#: step of the central differences, along the unit direction (float64: error ~1e-10)
DIFFERENCE_STEP = 1e-5


def directional_derivative(
    fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, v: torch.Tensor, mode: str = "forward"
) -> tuple[torch.Tensor | None, torch.Tensor]:
    """``(fn(x), J_fn(x) v)`` by forward-mode AD (:func:`torch.func.jvp`), or ``(None, J v)`` by central differences.

    ``"difference"``: ``|v| (fn(x + h u) - fn(x - h u)) / 2h`` with ``u = v/|v|`` per state and
    ``h = 1e-5``; differentiable in ``fn``'s parameters like the forward mode, and on a CPU far
    cheaper for tiny networks. The tests check that the two agree.
    """
    check_choice("jvp mode", mode, JVP_MODES)
    if mode == "forward":
        return jvp(fn, (x,), (v,))
    norm = v.norm(dim=-1, keepdim=True)
    unit = v / torch.where(norm > 0, norm, 1.0)
    h = DIFFERENCE_STEP
    return None, norm * (fn(x + h * unit) - fn(x - h * unit)) / (2 * h)


@checked(skip_nested=True, x=Array("... d"), v=Array("... d"), mode=Choice(JVP_MODES))
def true_jvp(system: System, x: torch.Tensor, v: torch.Tensor, mode: str = "difference") -> torch.Tensor:
    """``J(x) v``: the true one-step map's directional derivative, no gradient kept.

    By default a central difference of the exact simulator's one-step map (step
    ``DIFFERENCE_STEP``, queried at states off the data: a measured data set would not provide it);
    ``mode="forward"`` differentiates the true solver instead. ``x`` and ``v``: tensors of one
    shape ``(..., system.dim)``.
    """
    for name, t in (("x", x), ("v", v)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise TypeError(f"{name} must be a floating-point torch tensor, got {type(t).__name__}")
        if t.shape[-1] != system.dim:
            raise ValueError(f"{name} must have shape (..., dim={system.dim}), got {tuple(t.shape)}")
    if x.shape != v.shape or x.dtype != v.dtype:
        raise ValueError(f"v must have the shape and dtype of x {tuple(x.shape)}, got {tuple(v.shape)} ({v.dtype})")
    return _true_jvp(system, x, v, mode)


def _true_jvp(system: System, x: torch.Tensor, v: torch.Tensor, mode: str = "difference") -> torch.Tensor:
    with torch.no_grad():
        return directional_derivative(system.true_step, x, v, mode)[1]


@checked(skip_nested=True, x=Array("s b d"), y=Array("s b d"))
def one_step_loss(model: HybridModel, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Eq. (nde-onestep): ``|Phi_theta(x) - y|^2`` for data pairs ``y = Phi(x)``."""
    _check_states("x", x, model)
    _check_states("y", y, model)
    return squared_error(model, model.step(x) - y)


@checked(skip_nested=True, windows=Array("s b k d"))
def unrolled_loss(model: HybridModel, windows: torch.Tensor) -> torch.Tensor:
    """Eq. (nde-unrolled): roll ``K = windows.shape[2] - 1`` steps from ``windows[:, :, 0]`` and average
    the squared errors against ``windows[:, :, 1:]``, backpropagating through the whole rollout.

    With ``K = 1`` this is :func:`one_step_loss` on the pairs ``(windows[:, :, 0], windows[:, :, 1])``.
    """
    _check_windows(windows, model)
    horizon = windows.shape[2] - 1
    x = windows[:, :, 0]
    total = windows.new_zeros(())
    for j in range(1, horizon + 1):
        x = model.step(x)
        total = total + squared_error(model, x - windows[:, :, j])
    return total / horizon


@checked(skip_nested=True, windows=Array("s b k d"))
def heldout_unrolled_error(model: HybridModel, windows: torch.Tensor) -> torch.Tensor:
    """Eq. (nde-unrolled) per member, without gradient: ``(S,)``, the K-step loss each member reaches on ``windows``.

    Used on held-out trajectories as the validation criterion of the chapter (it is none of the
    long-rollout test metrics); the sum over members equals :func:`unrolled_loss` up to rounding.
    """
    if windows.ndim != 4 or windows.shape[0] != model.n_members or windows.shape[2] < 2:
        raise ValueError(
            f"windows must have shape (n_members={model.n_members}, batch, K + 1 >= 2, dim), got {tuple(windows.shape)}"
        )
    horizon = windows.shape[2] - 1
    total = windows.new_zeros(windows.shape[0])
    with torch.no_grad():
        x = windows[:, :, 0]
        for j in range(1, horizon + 1):
            x = model.step(x)
            total = total + (((x - windows[:, :, j]) / model.scale) ** 2).sum(-1).mean(-1)
    return total / horizon


@checked(skip_nested=True, windows=Array("s b k d"))
def rollout_errors(model: HybridModel, windows: torch.Tensor) -> torch.Tensor:
    """The model's own rollout errors ``e_j = Phi_theta^j(x_0) - x_j`` at the inputs of steps ``j = 0 .. K-1``.

    Shape ``(S, B, K, d)``, ``e_0 = 0``; computed without gradient (the stop-gradient of eq. (nde-pushforward)).
    """
    _check_windows(windows, model)
    horizon = windows.shape[2] - 1
    errors = torch.zeros_like(windows[:, :, :horizon])
    with torch.no_grad():
        x = windows[:, :, 0]
        for j in range(1, horizon):
            x = model.step(x)
            errors[:, :, j] = x - windows[:, :, j]
    return errors


@checked(skip_nested=True, x=Array("s b d"), y=Array("s b d"), delta=Array("s b d"))
def noise_loss(model: HybridModel, x: torch.Tensor, y: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """Eq. (nde-noise): ``|Phi_theta(x + delta) - y|^2``, a perturbed input with the *clean* target."""
    _check_states("x", x, model)
    _check_states("delta", delta, model)
    return one_step_loss(model, x + delta, y)  # runs bare: this body skips nested checks


@checked(
    skip_nested=True, x=Array("s b d"), y=Array("s b d"), v=Array("s b d"), weight=Float(0.0),
    jvp_mode=Choice(JVP_MODES),
)
def jacobian_loss(
    model: HybridModel,
    x: torch.Tensor,
    y: torch.Tensor,
    v: torch.Tensor,
    weight: float = 1.0,
    jvp_mode: str = "forward",
) -> torch.Tensor:
    """Eq. (nde-jacobian): ``|Phi_theta(x) - y|^2 + weight |J_theta(x) v - J(x) v|^2``.

    One forward-mode pass (:func:`torch.func.jvp`) gives both ``Phi_theta(x)`` and ``J_theta(x) v``
    (``jvp_mode="difference"``: central differences instead, see :func:`directional_derivative`);
    ``J(x) v`` comes from :func:`true_jvp` (from the simulator: a central difference of the exact one-step map).
    """
    _check_states("x", x, model)
    _check_states("y", y, model)
    _check_states("v", v, model)
    weight = check_in_range("weight", weight, 0.0, float("inf"))
    prediction, model_jv = directional_derivative(model.step, x, v, jvp_mode)
    if prediction is None:
        prediction = model.step(x)
    mismatch = model_jv - _true_jvp(model.system, x, v)
    return squared_error(model, prediction - y) + weight * squared_error(model, mismatch)


@checked(skip_nested=True, x=Array("s b d"), y=Array("s b d"), delta=Array("s b d"))
def complete_loss(model: HybridModel, x: torch.Tensor, y: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """The complete regulariser, eq. (nde-complete): ``|Phi_theta(x + delta) - y - J(x) delta|^2``.

    ``delta`` is the model's own rollout error arriving at the true state ``x`` (drawn from
    :func:`rollout_errors`, no gradient). By eq. (nde-taylor) the residual is
    ``r_theta(x) + (J_theta - J) delta + O(|delta|^2)``: the one-step residual *and* the Jacobian
    mismatch along the directions rollouts take, without the true system's own error growth
    ``J delta``, which no model can (or should) remove.
    """
    _check_states("x", x, model)
    _check_states("y", y, model)
    _check_states("delta", delta, model)
    delta = delta.detach()  # stop-gradient: delta is data, eq. (nde-pushforward)
    perturbed = model.step(x + delta)  # Phi_theta(x_k + delta)
    linearised_target = y + _true_jvp(model.system, x, delta)  # Phi(x_k + delta) ~ x_{k+1} + J(x_k) delta
    return squared_error(model, perturbed - linearised_target)  # |r_theta + (J_theta - J) delta|^2, eq. (nde-complete)


@dataclass
class Batch:
    """What one loss evaluation sees: pairs ``(x, y)``, perturbations ``delta`` and, for the unrolled loss, windows."""

    x: torch.Tensor
    y: torch.Tensor
    delta: torch.Tensor
    windows: torch.Tensor | None = None


def pairs_from_windows(windows: torch.Tensor, errors: torch.Tensor | None = None) -> Batch:
    """Every step of every window as a pair ``(x_j, x_{j+1})`` with its rollout error ``e_j``: ``(S, B K, d)``."""
    s, b, k1, d = windows.shape
    x = windows[:, :, :-1].reshape(s, b * (k1 - 1), d)
    y = windows[:, :, 1:].reshape(s, b * (k1 - 1), d)
    delta = torch.zeros_like(x) if errors is None else errors.reshape(s, b * (k1 - 1), d)
    return Batch(x, y, delta, windows)


# the losses in the body run bare (skip_nested): a training loop's batches are made by the package, and a
# diverging model's rollout errors may be non-finite, which the loss then reports rather than refuses
@checked(skip_nested=True, method=Choice(METHODS), noise_std=Float(0.0), weight=Float(0.0), jvp_mode=Choice(JVP_MODES))
def method_loss(
    method: str,
    model: HybridModel,
    batch: Batch,
    *,
    noise_std: float = 0.05,
    weight: float = 1.0,
    jvp_mode: str = "forward",
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The training loss of ``method`` on ``batch``.

    ``noise_std`` (in normalised units, times ``system.scale``) sets the isotropic noise;
    ``weight`` is the Jacobian term's weight ``lambda``. The Jacobian-matching probes ``v`` are
    standard Gaussian in normalised units (``system.scale * N(0, I)``), whatever ``noise_std``: the
    term of eq. (nde-jacobian) is quadratic in ``v``, so probes of size ``sigma`` would only rescale
    ``lambda`` by ``sigma^2`` (with ``sigma = 0.05`` the term vanished next to the one-step loss).
    Unit probes make it an unbiased estimate of ``lambda |J_theta - J|_F^2`` in normalised units.
    """
    if method == "unrolled":
        if batch.windows is None:
            raise ValueError("the unrolled loss needs batch.windows")
        return unrolled_loss(model, batch.windows)
    if method == "one_step":
        return one_step_loss(model, batch.x, batch.y)
    if method == "noise_rollout":
        return noise_loss(model, batch.x, batch.y, batch.delta)
    if method == "complete":
        return complete_loss(model, batch.x, batch.y, batch.delta)
    gaussian = torch.randn(batch.x.shape, generator=generator, dtype=batch.x.dtype).to(batch.x.device)
    if method == "noise_iso":
        return noise_loss(model, batch.x, batch.y, noise_std * model.scale * gaussian)
    return jacobian_loss(model, batch.x, batch.y, model.scale * gaussian, weight, jvp_mode)


def check_horizon(horizon: int, n_steps: int) -> int:
    """A horizon ``K`` in ``[1, n_steps]`` (trajectories of ``n_steps`` steps hold windows of ``K + 1`` states)."""
    return check_int("horizon", horizon, minimum=1, maximum=n_steps)
