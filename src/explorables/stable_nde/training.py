"""Training loops (every method, the same data and batches) and the gradient-alignment measurement.

Data are true trajectories, one set per member: ``(S, n_trajectories, n_steps + 1, d)``. A
training step of every method sees the same number of (state, next state) pairs,
``batch_size``: the unrolled loss as ``batch_size / K`` windows of ``K`` steps, the others as
pairs. Methods with rollout-shaped perturbations draw them from a *bank* of the model's own
rollout errors, refreshed every ``refresh_every`` steps (a detached K-step forward rollout, its
cost counted in the method's time per step). A run can start from given weights (the experiment's
shared one-step warm start) and let its learning rate fall linearly to 0 (``decay``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from ..core.arguments import Array, checked
from ..core.checkpoint import Checkpointer, LoopState
from ..core.params import Bool, Choice, Float, Int, Positive, Text
from ..core.validation import check_choice, check_int
from .losses import (
    CHEAP_METHODS,
    JVP_MODES,
    METHODS,
    Batch,
    _check_windows,
    method_loss,
    pairs_from_windows,
    rollout_errors,
    unrolled_loss,
)
from .models import HybridModel
from .solvers import check_fits

ROLLOUT_SHAPED: tuple[str, ...] = ("noise_rollout", "complete")


@checked(data=Array("s n t d"), n_windows=Int(1, 10**9), horizon=Int(1))
def sample_windows(data: torch.Tensor, n_windows: int, horizon: int, generator: torch.Generator) -> torch.Tensor:
    """Random windows of ``horizon + 1`` consecutive true states per member: ``(S, n_windows, horizon + 1, d)``.

    ``data``: a tensor ``(n_members, n_trajectories, n_steps + 1, dim)``; ``horizon`` at most ``n_steps``.
    """
    if not isinstance(data, torch.Tensor):
        raise TypeError(f"data must be a torch tensor, got {type(data).__name__}")
    horizon = check_int("horizon", horizon, minimum=1, maximum=data.shape[2] - 1)
    windows = _window_bytes(data, n_windows, horizon)
    check_fits({"the windows (n_windows x (horizon + 1) x data members x dim)": windows})
    return _sample_windows(data, n_windows, horizon, generator)


def _window_bytes(data: torch.Tensor, n_windows: int, horizon: int) -> float:
    s, d = data.shape[0], data.shape[-1]
    return float(s) * n_windows * (horizon + 1) * (d * data.element_size() + 3 * 8)  # the states and their indices


def _sample_windows(data: torch.Tensor, n_windows: int, horizon: int, generator: torch.Generator) -> torch.Tensor:
    s, n_traj, length, _ = data.shape
    traj = torch.randint(n_traj, (s, n_windows), generator=generator)
    start = torch.randint(length - horizon, (s, n_windows), generator=generator)
    offsets = torch.arange(horizon + 1)
    member = torch.arange(s).view(s, 1, 1)
    idx_t = (start.unsqueeze(-1) + offsets).to(data.device)
    return data[member.to(data.device), traj.unsqueeze(-1).to(data.device), idx_t]


@dataclass
class TrainRecord:
    """What one training run leaves: the loss per recorded step, snapshots of the weights, and its cost."""

    method: str
    losses: list[float] = field(default_factory=list)
    snapshots: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)
    seconds_per_step: float = float("nan")


@checked(
    skip_nested=True,
    data=Array("s n t d"),
    method=Choice(METHODS),
    n_steps=Int(0, 10**8),
    batch_size=Int(1, 10**9),
    horizon=Int(1),
    lr=Positive(),
    noise_std=Float(0.0),
    weight=Float(0.0),
    jvp_mode=Choice(JVP_MODES),
    refresh_every=Int(1),
    data_seed=Int(0, 2**63 - 2),
    name=Text(nonempty=True),
    decay=Bool(),
    simulator_targets=Bool(),
)
def train(
    model: HybridModel,
    data: torch.Tensor,
    method: str,
    *,
    n_steps: int,
    batch_size: int,
    horizon: int,
    lr: float = 3e-3,
    noise_std: float = 0.05,
    weight: float = 1.0,
    jvp_mode: str = "forward",
    refresh_every: int = 10,
    data_seed: int = 0,
    decay: bool = False,
    simulator_targets: bool = False,
    snapshot_steps: tuple[int, ...] = (),
    checkpoint: Checkpointer | None = None,
    name: str = "train",
    progress: bool = False,
) -> TrainRecord:
    """Train ``model`` in place with ``method``'s loss (Adam, ``n_steps`` steps; with ``decay``, the learning
    rate falls linearly from ``lr`` to 0 over the run).

    Every method draws its windows from a generator seeded with ``data_seed``, so all methods see
    the same data in the same order. ``snapshot_steps`` lists the steps (0 = before training) at
    which the weights are kept (for the alignment measurement). With a ``checkpoint``, the loop
    state is stored under ``name`` (throttled) and a resumed run continues from it.
    """
    if not isinstance(data, torch.Tensor):
        raise TypeError(f"data must be a torch tensor, got {type(data).__name__}")
    if data.shape[0] != model.n_members or data.shape[-1] != model.system.dim or data.dtype != model.scale.dtype:
        raise ValueError(
            f"data must have shape (n_members={model.n_members}, n_trajectories, n_steps + 1, dim={model.system.dim}) "
            f"and dtype {model.scale.dtype}, got {tuple(data.shape)} ({data.dtype})"
        )
    horizon = check_int("horizon", horizon, minimum=1, maximum=data.shape[2] - 1)
    if simulator_targets and method != "one_step":
        raise ValueError(f"simulator_targets applies to method 'one_step' only, got method {method!r}")
    if batch_size < horizon:
        raise ValueError(f"batch_size must be >= horizon ({horizon}), got {batch_size}")
    for k in snapshot_steps:
        check_int("snapshot_steps item", k, minimum=0, maximum=n_steps)
    batch_bytes = _window_bytes(data, batch_size, horizon)
    check_fits({"a batch (batch_size x (horizon + 1) x data members x dim)": batch_bytes})

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(data_seed)
    noise_gen = torch.Generator().manual_seed(data_seed + 1)
    record = TrainRecord(method)
    start, seconds = 0, 0.0
    bank: Batch | None = None
    loop = LoopState(checkpoint, name, modules={"model": model}, optimizers={"optimizer": opt},
                     generators={"generator": gen, "noise_generator": noise_gen})  # fmt: skip
    start, saved = loop.restore()
    if start:
        seconds, record.losses = saved["seconds"], list(saved["losses"])
        record.snapshots = {int(k): v for k, v in saved["snapshots"].items()}
        bank = None if saved["bank"] is None else Batch(*saved["bank"])
    n_pairs_windows = max(1, batch_size // horizon)
    bar = tqdm(range(start, n_steps), desc=f"{name}", disable=not progress, leave=False)
    for step in bar:
        if step in snapshot_steps:
            record.snapshots[step] = {k: v.detach().clone() for k, v in model.state_dict().items()}
        tic = time.process_time()  # CPU seconds: a busy machine inflates wall time, not the work
        if decay:
            for group in opt.param_groups:
                group["lr"] = lr * (1.0 - step / n_steps)
        if method == "unrolled":
            batch = Batch(*(None,) * 3, windows=_sample_windows(data, n_pairs_windows, horizon, gen))
            loss = unrolled_loss(model, batch.windows)
        else:
            if method in ROLLOUT_SHAPED:
                if bank is None or step % refresh_every == 0:  # refresh the bank of rollout errors
                    windows = _sample_windows(data, n_pairs_windows, horizon, gen)
                    bank = pairs_from_windows(windows, rollout_errors(model, windows))
                pick = torch.randint(bank.x.shape[1], (batch_size,), generator=gen).to(data.device)
                batch = Batch(bank.x[:, pick], bank.y[:, pick], bank.delta[:, pick])
            else:
                pairs = pairs_from_windows(_sample_windows(data, batch_size, 1, gen))
                if simulator_targets:
                    with torch.no_grad():
                        pairs = Batch(pairs.x, model.system._true_step(pairs.x), pairs.delta)
                batch = pairs
            loss = method_loss(
                method, model, batch, noise_std=noise_std, weight=weight, jvp_mode=jvp_mode, generator=noise_gen
            )
        opt.zero_grad()
        loss.backward()
        opt.step()
        seconds += time.process_time() - tic
        record.losses.append(float(loss.detach()) / model.n_members)
        loop.save(step + 1, lambda seconds=seconds, bank=bank: {
            "seconds": seconds,
            "losses": record.losses,
            "snapshots": {str(k): v for k, v in record.snapshots.items()},
            "bank": None if bank is None else [bank.x, bank.y, bank.delta],
        })  # fmt: skip
    if n_steps in snapshot_steps:
        record.snapshots[n_steps] = {k: v.detach().clone() for k, v in model.state_dict().items()}
    record.seconds_per_step = seconds / max(n_steps, 1)
    return record


@checked(a=Array("s p"), b=Array("s p"))
def cosine_rows(a: torch.Tensor | np.ndarray, b: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Row-wise cosine similarity of ``(S, P)`` matrices, clipped to ``[-1, 1]`` (0 where a row is zero)."""
    a, b = torch.as_tensor(a), torch.as_tensor(b)
    a, b = (t if t.is_floating_point() else t.to(torch.float64) for t in (a, b))
    num = (a * b).sum(1)
    den = a.norm(dim=1) * b.norm(dim=1)
    return torch.where(den > 0, num / torch.where(den > 0, den, 1.0), torch.zeros_like(num)).clamp(-1.0, 1.0)


@checked(
    skip_nested=True, windows=Array("s b k d"), noise_std=Float(0.0), weight=Float(0.0), jvp_mode=Choice(JVP_MODES)
)
def gradient_cosines(
    model: HybridModel,
    windows: torch.Tensor,
    *,
    noise_std: float = 0.05,
    weight: float = 1.0,
    jvp_mode: str = "forward",
    generator: torch.Generator | None = None,
    methods: tuple[str, ...] = CHEAP_METHODS,
) -> dict[str, torch.Tensor]:
    """Cosine between each cheap loss's gradient and the K-step unrolled gradient, per member: ``{method: (S,)}``.

    All losses see the same windows: the unrolled loss rolls them out (eq. (nde-unrolled)); the cheap
    ones use every step of every window as a pair, with the model's *current* rollout errors as
    rollout-shaped perturbations (eq. (nde-pushforward)).
    """
    for i, method in enumerate(methods):
        check_choice(f"methods[{i}]", method, CHEAP_METHODS)
    _check_windows(windows, model)
    params = list(model.parameters())

    def grad_of(loss: torch.Tensor) -> torch.Tensor:
        return model._member_vectors(list(torch.autograd.grad(loss, params)))

    reference = grad_of(unrolled_loss(model, windows))
    batch = pairs_from_windows(windows, rollout_errors(model, windows))
    out = {}
    for method in methods:
        loss = method_loss(
            method, model, batch, noise_std=noise_std, weight=weight, jvp_mode=jvp_mode, generator=generator
        )
        out[method] = cosine_rows(grad_of(loss), reference)
    return out
