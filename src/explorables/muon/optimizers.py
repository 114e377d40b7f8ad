r"""Gradient descent and Muon on the sensing model, and the two-stage schedule.

One update per step on the single matrix parameter :math:`W`:

* **GD**: :math:`W \leftarrow W - \eta_{GD}\, \nabla L(W)`;
* **Muon** (as ``torch.optim.Muon``, without weight decay): momentum
  :math:`B \leftarrow \beta B + (1-\beta) G`, Nesterov direction :math:`D = (1-\beta) G + \beta B`
  (:math:`D = G` when :math:`\beta = 0`), then
  :math:`W \leftarrow W - \eta_{Muon}\,\mathrm{NS}_5(D)`;
* **switch**: Muon until ``switch_step``, then GD;
* **Muon with a decaying learning rate**: Muon (``method="muon"``) whose step at step :math:`t` is
  ``muon_lr`` times the factor of ``schedule`` (:func:`lr_factors`: cosine, linear to zero, or
  warmup-stable-decay, from ``torch.optim.lr_scheduler``), the baseline the switch is argued against;
* for comparison, **GD with (heavy-ball) momentum**, :math:`B \leftarrow \beta B + G`,
  :math:`W \leftarrow W - \eta_{GD}(1-\beta) B`, and **Adam** (element-wise, step ``adam_lr``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from ..core.arguments import Array, checked
from ..core.params import Choice, Float, Int, Positive, Tuple
from ..core.resources import check_memory
from ..core.threads import one_cpu_thread
from ..core.validation import check_choice, check_in_range, check_int, check_positive
from .orthogonalize import newton_schulz
from .sensing import SensingProblem

METHODS = ("gd", "muon", "switch", "gd_momentum", "adam")
#: Muon's learning-rate schedules: constant, cosine to zero, linear to zero, warmup-stable-decay
SCHEDULES = ("constant", "cosine", "linear", "wsd")
#: warmup-stable-decay: share of the steps spent warming up, and share spent decaying linearly to zero
WSD_WARMUP, WSD_DECAY = 0.05, 0.2
#: the most steps one run takes
MAX_STEPS = 10**7


@checked(method=Choice(METHODS), loss=Array("t"), river=Array("t"), spike=Array("t"))
@dataclass
class SensingRun:
    """Per-step records of one optimiser on a :class:`SensingProblem` (``steps + 1`` entries)."""

    method: str
    loss: np.ndarray
    river: np.ndarray
    spike: np.ndarray


@checked(schedule=Choice(SCHEDULES), steps=Int(1, MAX_STEPS))
def lr_factors(schedule: str, steps: int) -> np.ndarray:
    """The factor multiplying the peak learning rate at each of ``steps`` steps (``steps`` entries).

    From ``torch.optim.lr_scheduler`` stepped once per optimiser step: ``"constant"`` (1),
    ``"cosine"`` (``CosineAnnealingLR`` to 0 over the run: (1 + cos(pi t / steps)) / 2), ``"linear"``
    (``LinearLR`` from 1 to 0: 1 - t / steps) and ``"wsd"`` (warmup-stable-decay, ``SequentialLR``:
    ``LinearLR`` up over the first :data:`WSD_WARMUP` of the steps, constant, then ``LinearLR`` down to 0
    over the last :data:`WSD_DECAY`).
    """
    check_choice("schedule", schedule, SCHEDULES)
    steps = check_int("steps", steps, minimum=1)
    return _lr_factors(schedule, steps).copy()


@functools.lru_cache(maxsize=16)
def _lr_factors(schedule: str, steps: int) -> np.ndarray:
    """:func:`lr_factors`, computed once per (schedule, steps): stepping a scheduler 3,000 times costs more than
    the optimiser's own step on our valley (the copy :func:`lr_factors` returns keeps the cache unwritten)."""
    from torch.optim import lr_scheduler as sched

    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    if schedule == "constant":
        return np.ones(steps)
    if schedule == "cosine":
        scheduler = sched.CosineAnnealingLR(opt, T_max=steps, eta_min=0.0)
    elif schedule == "linear":
        scheduler = sched.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=steps)
    else:
        if steps < 3:
            raise ValueError(f"steps must be >= 3 for schedule='wsd' (warmup, stable, decay), got {steps}")
        n_warm = max(1, round(WSD_WARMUP * steps))
        n_decay = max(1, round(WSD_DECAY * steps))
        n_stable = steps - n_warm - n_decay
        scheduler = sched.SequentialLR(
            opt,
            [
                sched.LinearLR(opt, start_factor=1.0 / (n_warm + 1), end_factor=1.0, total_iters=n_warm),
                sched.ConstantLR(opt, factor=1.0, total_iters=n_stable),
                sched.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=n_decay),
            ],
            milestones=[n_warm, n_warm + n_stable],
        )
    factors = []
    for _ in range(steps):
        factors.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return np.asarray(factors, dtype=float)


@checked(
    skip_nested=True,  # the problem's methods in the loop skip their checks
    method=Choice(METHODS),
    steps=Int(1, MAX_STEPS),
    muon_lr=Positive(),
    gd_lr=Positive(),
    momentum=Float(0.0, 1.0, high_inclusive=False),
    switch_step=Int(0, MAX_STEPS),
    ns_steps=Int(0, 99),
    adam_lr=Positive(),
    schedule=Choice(SCHEDULES),
)
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
    schedule: str = "constant",
) -> SensingRun:
    """Run ``method`` (``"gd"``, ``"muon"`` or ``"switch"``) for ``steps`` steps from ``problem.W0``.

    ``schedule`` (only with ``method="muon"``) multiplies Muon's step ``muon_lr`` by :func:`lr_factors`.

    A step size so large that the run overflows (its loss reaches inf or NaN) is refused with a
    ``ValueError`` naming it, rather than returned as a record of infinities.
    """
    check_choice("method", method, METHODS)
    steps = check_int("steps", steps, minimum=1)
    muon_lr, gd_lr = check_positive("muon_lr", muon_lr), check_positive("gd_lr", gd_lr)
    momentum = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    if method == "switch":
        if switch_step is None:
            raise ValueError("switch_step is required for method='switch'")
        switch_step = check_int("switch_step", switch_step, minimum=0, maximum=steps)
    adam_lr = check_positive("adam_lr", adam_lr)
    check_choice("schedule", schedule, SCHEDULES)
    if schedule != "constant" and method != "muon":
        raise ValueError(f"schedule={schedule!r} applies to method='muon' only, got method={method!r}")
    lrs = muon_lr * lr_factors(schedule, steps)
    check_memory({"the run's iterates (steps x m x n, float64)": 2.0 * (steps + 1) * problem.W0.numel() * 8})
    with one_cpu_thread():
        records = _optimize(problem, method, steps, lrs, gd_lr, momentum, switch_step, ns_steps, adam_lr)
    if not all(np.all(np.isfinite(r)) for r in records):
        lr = {"muon": "muon_lr", "adam": "adam_lr"}.get(method, "gd_lr" if method != "switch" else "muon_lr or gd_lr")
        step = int(np.argmin(np.isfinite(records[0]))) if not np.all(np.isfinite(records[0])) else steps
        raise ValueError(
            f"{lr} is too large for this problem: the {method} run overflowed (loss inf or NaN by step {step}); "
            f"GD is stable for gd_lr < 2 / max curvature = {2 / float(problem.curvature.max()):.3g}"
        )
    return SensingRun(method, *records)


def _optimize(
    problem: SensingProblem, method: str, steps: int, muon_lrs: np.ndarray, gd_lr: float, momentum: float,
    switch_step: int | None, ns_steps: int, adam_lr: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    Ws = _iterate(problem, method, problem.W0.clone(), 0, steps, muon_lrs, gd_lr, momentum, switch_step, ns_steps,
                  adam_lr)  # fmt: skip
    return _records(problem, Ws)


def _iterate(
    problem: SensingProblem, method: str, W: torch.Tensor, start: int, stop: int, muon_lrs: np.ndarray,
    gd_lr: float, momentum: float, switch_step: int | None, ns_steps: int, adam_lr: float,
) -> list[torch.Tensor]:  # fmt: skip
    """The iterates from ``W`` at step ``start`` to step ``stop`` (``stop - start + 1`` of them, ``W`` first).

    Momentum and Adam's moments start at zero, so only GD and momentum-free Muon continue a run
    from ``start > 0`` (what :func:`switch_sweep` does) exactly as one run would.
    """
    buf = torch.zeros_like(W)
    second = torch.zeros_like(W)
    Ws = [W]
    for t in range(start, stop):
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
            if momentum:
                buf = momentum * buf + (1 - momentum) * G
                direction = (1 - momentum) * G + momentum * buf
            else:  # the same numbers: 0 * buf + 1 * G is G exactly
                direction = G
            step = newton_schulz(direction, steps=ns_steps)  # checks skipped: every caller is skip_nested
            W = W - float(muon_lrs[t]) * step
        else:
            W = W - gd_lr * G
        Ws.append(W)
    return Ws


def _records(problem: SensingProblem, Ws: list[torch.Tensor]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    stack = torch.stack(Ws)
    return problem.loss(stack).numpy(), problem.river_distance(stack).numpy(), problem.spike_coordinate(stack).numpy()


@checked(
    skip_nested=True,  # the problem's methods in the loop skip their checks
    steps=Int(1, MAX_STEPS),
    muon_lr=Positive(),
    gd_lr=Positive(),
    switch_steps=Tuple(Int(0, MAX_STEPS), increasing=True),
    ns_steps=Int(0, 99),
)
def switch_sweep(
    problem: SensingProblem,
    steps: int,
    switch_steps: tuple[int, ...],
    muon_lr: float = 0.02,
    gd_lr: float = 0.019,
    ns_steps: int = 5,
) -> np.ndarray:
    """Final loss of the two-stage schedule (momentum-free Muon, then GD) for each hand-over step in ``switch_steps``.

    The same numbers as ``optimize(problem, "switch", steps, muon_lr, gd_lr, switch_step=s).loss[-1]`` for each
    ``s``, to the bit (tested), but the Muon phase runs once: every hand-over continues with GD from Muon's
    iterate at that step, so a sweep of ``k`` hand-overs costs one Muon run and ``k`` GD tails.
    """
    steps = check_int("steps", steps, minimum=1)
    muon_lr, gd_lr = check_positive("muon_lr", muon_lr), check_positive("gd_lr", gd_lr)
    switch_steps = tuple(int(s) for s in switch_steps)
    if not switch_steps or any(not (0 <= s <= steps) for s in switch_steps):
        raise ValueError(f"switch_steps must be a non-empty tuple of steps in [0, steps = {steps}], got {switch_steps}")
    lrs = muon_lr * lr_factors("constant", steps)
    check_memory({"the run's iterates (steps x m x n, float64)": 2.0 * (steps + 1) * problem.W0.numel() * 8})
    finals = []
    with one_cpu_thread():
        muon = _iterate(problem, "muon", problem.W0.clone(), 0, max(switch_steps), lrs, gd_lr, 0.0, None, ns_steps,
                        0.01)  # fmt: skip
        for s in switch_steps:
            tail = _iterate(problem, "gd", muon[s], s, steps, lrs, gd_lr, 0.0, None, ns_steps, 0.01)
            # the loss of the whole run's stack, as optimize computes it (the same batched call: the same bits)
            finals.append(float(problem.loss(torch.stack(muon[: s + 1] + tail[1:]))[-1]))
    finals = np.asarray(finals)
    if not np.all(np.isfinite(finals)):
        raise ValueError(
            f"muon_lr or gd_lr is too large for this problem: a switch run overflowed (loss inf or NaN); "
            f"GD is stable for gd_lr < 2 / max curvature = {2 / float(problem.curvature.max()):.3g}"
        )
    return finals


@checked(
    skip_nested=True,  # the problem's methods in the loop skip their checks
    steps=Int(1, MAX_STEPS),
    muon_lr=Positive(),
    gd_lr=Positive(),
    momentum=Float(0.0, 1.0, high_inclusive=False),
    switch_step=Int(0, MAX_STEPS),
)
def muon_and_switch(
    problem: SensingProblem, steps: int, switch_step: int, muon_lr: float = 0.02, gd_lr: float = 0.019,
    momentum: float = 0.0,
) -> tuple[SensingRun, SensingRun]:  # fmt: skip
    """``optimize(problem, "muon", ...)`` and ``optimize(problem, "switch", ...)`` with the same settings, to the bit
    (tested), for the cost of the Muon run and the switch's GD tail: the switch is that Muon run up to
    ``switch_step``, continued with GD (which keeps no state) from its iterate there."""
    steps = check_int("steps", steps, minimum=1)
    muon_lr, gd_lr = check_positive("muon_lr", muon_lr), check_positive("gd_lr", gd_lr)
    momentum = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    switch_step = check_int("switch_step", switch_step, minimum=0, maximum=steps)
    lrs = muon_lr * lr_factors("constant", steps)
    check_memory({"the runs' iterates (steps x m x n, float64)": 4.0 * (steps + 1) * problem.W0.numel() * 8})
    with one_cpu_thread():
        muon = _iterate(problem, "muon", problem.W0.clone(), 0, steps, lrs, gd_lr, momentum, None, 5, 0.01)
        tail = _iterate(problem, "gd", muon[switch_step], switch_step, steps, lrs, gd_lr, 0.0, None, 5, 0.01)
        runs = _records(problem, muon), _records(problem, muon[: switch_step + 1] + tail[1:])
    if not all(np.all(np.isfinite(r)) for rec in runs for r in rec):
        raise ValueError(
            "muon_lr or gd_lr is too large for this problem: a run overflowed (loss inf or NaN); "
            f"GD is stable for gd_lr < 2 / max curvature = {2 / float(problem.curvature.max()):.3g}"
        )
    return SensingRun("muon", *runs[0]), SensingRun("switch", *runs[1])


@checked(values=Array("t"), tail=Float(0.0, 1.0, low_inclusive=False))
def oscillation(values: np.ndarray, tail: float = 0.25) -> float:
    """Fraction of sign changes of the step-to-step differences over the last ``tail`` of a run.

    Near 0 for a monotone approach; near 1 for a sequence that zig-zags every step.
    """
    v = np.asarray(values)[int(len(values) * (1 - tail)) :]
    d = np.sign(np.diff(v))
    d = d[d != 0]
    return float(np.mean(d[1:] != d[:-1])) if d.size > 1 else 0.0
