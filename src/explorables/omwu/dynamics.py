r"""OMWU and MWU in dual (logit) space.

The dual iterates are the logits ``u`` (row player) and ``v`` (column player); the strategies are
``x = softmax(u)`` and ``y = softmax(v)``. Optimistic multiplicative weights (OMWU) takes the
"optimistic" gradient ``2 g_t - g_{t-1}``:

.. math::

    u_{t+1} = u_t - \eta\,(2 A y_t - A y_{t-1}), \qquad
    v_{t+1} = v_t + \eta\,(2 A^T x_t - A^T x_{t-1}),

with ``g_{-1} = g_0`` so the first step is a plain MWU step. MWU drops the optimism:
``u_{t+1} = u_t - \eta A y_t``, ``v_{t+1} = v_t + \eta A^T x_t``.

The logits are stored *normalised*, ``u = log x`` (we subtract ``logsumexp(u)`` after each step,
which softmax ignores), so a coordinate that shrinks to ``1e-300`` is still represented exactly
by its log and never underflows to zero.

Two implementations share these equations:

* :func:`omwu_numpy`: one game, a plain numpy loop, written to be read. Tests and benchmarks
  use it as the oracle, and the live lab uses it because it is fastest for one small game.
* :func:`simulate`: a batch of games and starting points at once, in float64 torch on any device;
  its loop calls :func:`omwu_step`, the update written once (the chapter shows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from tqdm.auto import tqdm

from ..core.arguments import Array, checked
from ..core.checkpoint import Checkpointer, LoopState
from ..core.device import resolve_device
from ..core.params import Int
from ..core.resources import check_memory
from ..core.threads import threads_for
from ..core.validation import check_choice, check_distribution, check_int, check_matrix, check_positive

Method = Literal["omwu", "mwu"]
METHODS: tuple[str, ...] = ("omwu", "mwu")


@checked(steps=Int(1, 10**7))
def omwu_numpy(
    A: np.ndarray,
    eta: float,
    steps: int,
    x0: np.ndarray | None = None,
    y0: np.ndarray | None = None,
    method: Method = "omwu",
) -> tuple[np.ndarray, np.ndarray]:
    """Run OMWU (or MWU) on one game with a plain numpy loop (the module's equations, line by line).

    Returns ``(log_x, log_y)`` of shapes ``(steps + 1, n)`` and ``(steps + 1, m)``: the
    log-strategies at ``t = 0, ..., steps``. For a single small game this is the fastest path
    (about 15 microseconds a step); for many games use :func:`simulate`.
    """
    A = check_matrix("A", A)
    eta = check_positive("eta", eta)
    check_choice("method", method, METHODS)
    n, m = A.shape
    x0 = np.full(n, 1.0 / n) if x0 is None else check_distribution("x0", x0, n)
    y0 = np.full(m, 1.0 / m) if y0 is None else check_distribution("y0", y0, m)
    At = np.ascontiguousarray(A.T)
    optimism = 1.0 if method == "omwu" else 0.0

    log_x, log_y = np.empty((steps + 1, n)), np.empty((steps + 1, m))
    u, v = np.log(x0), np.log(y0)
    log_x[0], log_y[0] = u, v
    grad_x_prev, grad_y_prev = A @ y0, At @ x0  # g_{-1} = g_0
    for t in range(1, steps + 1):
        grad_x, grad_y = A @ np.exp(v), At @ np.exp(u)
        u = u - eta * ((1 + optimism) * grad_x - optimism * grad_x_prev)
        v = v + eta * ((1 + optimism) * grad_y - optimism * grad_y_prev)
        u -= u.max()  # normalise: u <- u - logsumexp(u), done stably
        u -= np.log(np.exp(u).sum())
        v -= v.max()
        v -= np.log(np.exp(v).sum())
        grad_x_prev, grad_y_prev = grad_x, grad_y
        log_x[t], log_y[t] = u, v
    return log_x, log_y


@checked(
    A=Array("b n m"),
    At=Array("b m n"),
    u=Array("b n", finite=False, at_most=0.0),  # log-probabilities: -inf is a zero probability
    v=Array("b m", finite=False, at_most=0.0),
    grad_x_prev=Array("b n"),
    grad_y_prev=Array("b m"),
    eta=Array("b 1"),
)
def omwu_step(
    A: torch.Tensor,
    At: torch.Tensor,
    u: torch.Tensor,
    v: torch.Tensor,
    grad_x_prev: torch.Tensor,
    grad_y_prev: torch.Tensor,
    eta: torch.Tensor,
    *,
    optimistic: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""One step of OMWU, eq. (omwu-step), on a batch of ``B`` games in normalised logits.

    ``A`` is ``(B, n, m)`` and ``At`` its transpose; ``u = log x_t`` ``(B, n)`` and ``v = log y_t``
    ``(B, m)``; ``grad_x_prev = A y_{t-1}``, ``grad_y_prev = A^T x_{t-1}``; ``eta`` is ``(B, 1)``.
    Returns ``(u_{t+1}, v_{t+1}, A y_t, A^T x_t)``: the new logits, and the gradients that the next
    step needs as its "previous" ones. ``optimistic=False`` is plain MWU, eq. (mwu-step).
    """
    grad_x = torch.bmm(A, v.exp().unsqueeze(-1)).squeeze(-1)  # g_t = A y_t, with y_t = softmax(v_t) = exp(v_t)
    grad_y = torch.bmm(At, u.exp().unsqueeze(-1)).squeeze(-1)  # A^T x_t, with x_t = exp(u_t)
    if optimistic:  # eq. (omwu-step): step along the extrapolated gradient 2 g_t - g_{t-1}
        u = u - eta * (2 * grad_x - grad_x_prev)  # the row player minimises x^T A y
        v = v + eta * (2 * grad_y - grad_y_prev)  # the column player maximises it
    else:  # eq. (mwu-step): plain multiplicative weights, no optimism
        u = u - eta * grad_x
        v = v + eta * grad_y
    # store u_{t+1} - logsumexp(u_{t+1}) = log softmax(u_{t+1}) = log x_{t+1}: softmax ignores the
    # shift, and a probability of 1e-300 stays exact as a logarithm
    u = torch.log_softmax(u, dim=-1)
    v = torch.log_softmax(v, dim=-1)
    return u, v, grad_x, grad_y


@checked()
@dataclass
class Trajectory:
    """Recorded log-strategies of a batch of runs.

    Attributes
    ----------
    log_x, log_y:
        Tensors of shape ``(K, B, n)`` and ``(K, B, m)``: log-strategies at the recorded steps.
    steps:
        Integer tensor of shape ``(K,)``: which iteration ``t`` each record is.
    A:
        The games, shape ``(B, n, m)``.
    eta:
        Step sizes, shape ``(B,)``.
    """

    log_x: torch.Tensor
    log_y: torch.Tensor
    steps: torch.Tensor
    A: torch.Tensor
    eta: torch.Tensor

    @property
    def x(self) -> torch.Tensor:
        """Row-player strategies, ``exp(log_x)``."""
        return self.log_x.exp()

    @property
    def y(self) -> torch.Tensor:
        """Column-player strategies, ``exp(log_y)``."""
        return self.log_y.exp()


def _as_batch(name: str, value: np.ndarray | torch.Tensor, ndim: int, device: torch.device) -> torch.Tensor:
    t = torch.as_tensor(value, dtype=torch.float64, device=device)
    if t.ndim == ndim - 1:
        t = t.unsqueeze(0)
    if t.ndim != ndim:
        raise ValueError(f"{name} must have {ndim - 1} or {ndim} dimensions, got shape {tuple(t.shape)}")
    return t


@checked(skip_nested=True, record_every=Int(1))  # omwu_step in the loop runs bare: its inputs are checked here
def simulate(
    A: np.ndarray | torch.Tensor,
    eta: float | np.ndarray | torch.Tensor,
    steps: int,
    x0: np.ndarray | torch.Tensor | None = None,
    y0: np.ndarray | torch.Tensor | None = None,
    *,
    method: Method = "omwu",
    record_every: int = 1,
    device: str | torch.device = "cpu",
    progress: bool = False,
    checkpoint: Checkpointer | None = None,
    checkpoint_name: str = "simulate",
) -> Trajectory:
    """Run OMWU or MWU on a batch of ``B`` games at once (float64, any torch device).

    Parameters
    ----------
    A:
        One game ``(n, m)`` or a batch ``(B, n, m)``; all games in a batch share ``n`` and ``m``.
    eta:
        Step size: a scalar, or one per game ``(B,)``.
    steps:
        Number of iterations ``T >= 1``.
    x0, y0:
        Starting strategies ``(n,)``/``(B, n)`` and ``(m,)``/``(B, m)`` in the interior of the
        simplex; default uniform.
    method:
        ``"omwu"`` or ``"mwu"``.
    record_every:
        Keep every ``record_every``-th iterate (the first and the last are always kept).
    device:
        ``"cpu"``, ``"cuda"``, ``"mps"`` or ``"auto"``.
    progress:
        Show a tqdm progress bar.
    checkpoint, checkpoint_name:
        Save the loop's state under ``checkpoint_name`` as the run goes (throttled by the
        checkpointer), and continue from a saved state if the checkpointer holds one. A resumed
        run gives bit-identical results to an uninterrupted one.
    """
    dev = resolve_device(device)
    check_choice("method", method, METHODS)
    steps = check_int("steps", steps, minimum=1)
    A_t = _as_batch("A", A, 3, dev)
    if A_t.numel() == 0 or not torch.isfinite(A_t).all():
        raise ValueError(f"A must be non-empty and finite, got shape {tuple(A_t.shape)}")
    B, n, m = A_t.shape

    eta_t = torch.as_tensor(eta, dtype=torch.float64, device=dev).reshape(-1)
    if eta_t.numel() == 1:
        eta_t = eta_t.expand(B).clone()
    if eta_t.shape != (B,):
        raise ValueError(f"eta must be a scalar or have shape ({B},), got {tuple(eta_t.shape)}")
    if not (torch.isfinite(eta_t).all() and (eta_t > 0).all()):
        raise ValueError("eta must be finite and > 0")

    def start(name: str, p, size: int) -> torch.Tensor:
        if p is None:
            return torch.full((B, size), -np.log(size), dtype=torch.float64, device=dev)
        p_t = _as_batch(name, p, 2, dev)
        if p_t.shape[-1] != size or p_t.shape[0] not in (1, B):
            raise ValueError(f"{name} must have shape ({size},) or ({B}, {size}), got {tuple(p_t.shape)}")
        if not (torch.isfinite(p_t).all() and (p_t > 0).all()):
            raise ValueError(f"{name} must have strictly positive entries (interior of the simplex)")
        if (p_t.sum(-1) - 1).abs().max() > 1e-9:
            raise ValueError(f"{name} must sum to 1 (a point on the simplex)")
        return torch.log(p_t / p_t.sum(-1, keepdim=True)).expand(B, size).clone()

    u, v = start("x0", x0, n), start("y0", y0, m)
    At = A_t.transpose(1, 2)
    step_size = eta_t[:, None]
    optimistic = method == "omwu"

    n_records = steps // record_every + 1 + (steps % record_every != 0)
    check_memory(
        {f"recorded log-strategies, steps={steps} / record_every={record_every}": 8.0 * n_records * B * (n + m)}
    )
    log_x = torch.empty((n_records, B, n), dtype=torch.float64, device=dev)
    log_y = torch.empty((n_records, B, m), dtype=torch.float64, device=dev)
    recorded = torch.empty(n_records, dtype=torch.int64)
    log_x[0], log_y[0], recorded[0] = u, v, 0
    k, first = 1, 1

    grad_x_prev = torch.bmm(A_t, v.exp().unsqueeze(-1)).squeeze(-1)  # g_{-1} = g_0
    grad_y_prev = torch.bmm(At, u.exp().unsqueeze(-1)).squeeze(-1)

    # the loop's state is its iterates, the previous gradients and the records so far (the loop's own values)
    loop = LoopState(checkpoint, checkpoint_name)
    done, saved = loop.restore()
    if saved:
        if (saved["steps"], saved["shape"], saved["record_every"]) != (steps, [B, n, m], record_every):
            raise ValueError(f"checkpoint entry {checkpoint_name!r} belongs to a different run; start without --resume")
        k, first = saved["k"], done + 1
        u, v = saved["u"].to(dev), saved["v"].to(dev)
        grad_x_prev, grad_y_prev = saved["grad_x_prev"].to(dev), saved["grad_y_prev"].to(dev)
        log_x[:k], log_y[:k], recorded[:k] = saved["log_x"].to(dev), saved["log_y"].to(dev), saved["recorded"]

    def state() -> dict:
        return {
            "k": k, "steps": steps, "shape": [B, n, m], "record_every": record_every,
            "u": u, "v": v, "grad_x_prev": grad_x_prev, "grad_y_prev": grad_y_prev,
            "log_x": log_x[:k].clone(), "log_y": log_y[:k].clone(), "recorded": recorded[:k].clone(),
        }  # fmt: skip

    bar = tqdm(total=steps, initial=first - 1, disable=not progress, desc=checkpoint_name, mininterval=1.0)
    with threads_for(A_t.numel(), dev):  # tiny games: one thread, no sleeping thread to wake each step
        for t in range(first, steps + 1):
            u, v, grad_x_prev, grad_y_prev = omwu_step(
                A_t, At, u, v, grad_x_prev, grad_y_prev, step_size, optimistic=optimistic
            )
            if t % record_every == 0 or t == steps:
                log_x[k], log_y[k], recorded[k] = u, v, t
                k += 1
            if t % 256 == 0:
                loop.save(t, state)
            bar.update()
    bar.close()
    return Trajectory(log_x=log_x, log_y=log_y, steps=recorded, A=A_t, eta=eta_t)
