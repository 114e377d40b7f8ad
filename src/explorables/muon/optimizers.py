r"""Gradient descent and Muon on the sensing model, and the two-stage schedule.

One update per step on the single matrix parameter :math:`W`:

* **GD**: :math:`W \leftarrow W - \eta_{GD}\, \nabla L(W)`;
* **Muon** (as ``torch.optim.Muon``, without weight decay): momentum
  :math:`B \leftarrow \beta B + (1-\beta) G`, Nesterov direction :math:`D = (1-\beta) G + \beta B`
  (:math:`D = G` when :math:`\beta = 0`), then
  :math:`W \leftarrow W - \eta_{Muon}\,\mathrm{NS}_5(D)`;
* **switch**: Muon until ``switch_step``, then GD;
* for comparison, **GD with (heavy-ball) momentum**, :math:`B \leftarrow \beta B + G`,
  :math:`W \leftarrow W - \eta_{GD}(1-\beta) B`, and **Adam** (element-wise, step ``adam_lr``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..core.threads import one_cpu_thread
from ..core.validation import check_choice, check_in_range, check_int, check_positive
from .orthogonalize import newton_schulz
from .sensing import SensingProblem

METHODS = ("gd", "muon", "switch", "gd_momentum", "adam")


@dataclass
class SensingRun:
    """Per-step records of one optimiser on a :class:`SensingProblem` (``steps + 1`` entries)."""

    method: str
    loss: np.ndarray
    river: np.ndarray
    spike: np.ndarray


def optimize(
    problem: SensingProblem,
    method: str,
    steps: int,
    muon_lr: float = 0.02,
    gd_lr: float = 0.019,
    momentum: float = 0.0,
    switch_step: int | None = None,
    ns_steps: int = 5,
    adam_lr: float = 0.01,
) -> SensingRun:
    """Run ``method`` (``"gd"``, ``"muon"`` or ``"switch"``) for ``steps`` steps from ``problem.W0``."""
    check_choice("method", method, METHODS)
    steps = check_int("steps", steps, minimum=1)
    muon_lr, gd_lr = check_positive("muon_lr", muon_lr), check_positive("gd_lr", gd_lr)
    momentum = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    if method == "switch":
        if switch_step is None:
            raise ValueError("switch_step is required for method='switch'")
        switch_step = check_int("switch_step", switch_step, minimum=0, maximum=steps)
    adam_lr = check_positive("adam_lr", adam_lr)
    with one_cpu_thread():
        return _optimize(problem, method, steps, muon_lr, gd_lr, momentum, switch_step, ns_steps, adam_lr)


def _optimize(
    problem: SensingProblem, method: str, steps: int, muon_lr: float, gd_lr: float, momentum: float,
    switch_step: int | None, ns_steps: int, adam_lr: float,
) -> SensingRun:  # fmt: skip
    W = problem.W0.clone()
    buf = torch.zeros_like(W)
    second = torch.zeros_like(W)
    Ws = [W]
    for t in range(steps):
        G = problem.gradient(W)
        use_muon = method == "muon" or (method == "switch" and t < switch_step)
        if method == "gd_momentum":
            buf = momentum * buf + G
            W = W - gd_lr * (1 - momentum) * buf  # (1 - beta) keeps the stable step size comparable
        elif method == "adam":
            buf = 0.9 * buf + 0.1 * G
            second = 0.999 * second + 0.001 * G**2
            m_hat, v_hat = buf / (1 - 0.9 ** (t + 1)), second / (1 - 0.999 ** (t + 1))
            W = W - adam_lr * m_hat / (v_hat.sqrt() + 1e-12)
        elif use_muon:
            buf = momentum * buf + (1 - momentum) * G
            direction = (1 - momentum) * G + momentum * buf
            W = W - muon_lr * newton_schulz(direction, steps=ns_steps)
        else:
            W = W - gd_lr * G
        Ws.append(W)
    stack = torch.stack(Ws)
    return SensingRun(
        method=method,
        loss=problem.loss(stack).numpy(),
        river=problem.river_distance(stack).numpy(),
        spike=problem.spike_coordinate(stack).numpy(),
    )


def oscillation(values: np.ndarray, tail: float = 0.25) -> float:
    """Fraction of sign changes of the step-to-step differences over the last ``tail`` of a run.

    Near 0 for a monotone approach; near 1 for a sequence that zig-zags every step.
    """
    v = np.asarray(values)[int(len(values) * (1 - tail)) :]
    d = np.sign(np.diff(v))
    d = d[d != 0]
    return float(np.mean(d[1:] != d[:-1])) if d.size > 1 else 0.0
