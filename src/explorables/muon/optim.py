"""A Muon optimiser for weight matrices, identical to ``torch.optim.Muon`` but with a choice of precision.

``torch.optim.Muon`` runs its Newton–Schulz iteration in bfloat16, which is fast on GPUs and very
slow on CPUs. This class does the same update (momentum ``B <- mu B + (1 - mu) G``, Nesterov
direction, orthogonalisation, learning rate scaled by ``sqrt(max(1, rows / cols))``) with the
iteration in ``ns_dtype``: float32 by default, ``torch.bfloat16`` to reproduce torch's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch

from ..core.arguments import checked
from ..core.params import Bool, Float, Int, Positive
from ..core.validation import check_in_range, check_positive
from .orthogonalize import NS_COEFFICIENTS, newton_schulz


@checked(lr=Positive(), momentum=Float(0.0, 1.0, high_inclusive=False), nesterov=Bool(), ns_steps=Int(0, 99))
class Muon(torch.optim.Optimizer):
    """Muon for 2-D parameters (no weight decay)."""

    def __init__(
        self,
        params: Iterable[torch.Tensor | dict],
        lr: float = 0.02,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_steps: int = 5,
        ns_dtype: torch.dtype = torch.float32,
    ):
        if isinstance(params, (torch.Tensor, str, bytes)) or not hasattr(params, "__iter__"):
            raise TypeError(f"params must be an iterable of parameters (or groups), got {type(params).__name__}")
        params = list(params)
        if not params:
            raise ValueError("params must hold at least one parameter, got an empty list")
        check_positive("lr", lr)
        check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
        self.ns_dtype = ns_dtype
        super().__init__(params, dict(lr=lr, momentum=momentum, nesterov=nesterov, ns_steps=ns_steps))

    def add_param_group(self, param_group: dict) -> None:
        """torch's, with the group checked: a group may set its own ``lr`` and ``momentum`` (checked like the
        constructor's), and every parameter must be a matrix. Runs for the constructor's groups too."""
        if not isinstance(param_group, dict) or "params" not in param_group:
            what = sorted(param_group) if isinstance(param_group, dict) else type(param_group).__name__
            raise ValueError(f"param_group must be a dict with a 'params' entry, got {what}")
        if "lr" in param_group:
            check_positive("lr", param_group["lr"])
        if "momentum" in param_group:
            check_in_range("momentum", param_group["momentum"], 0.0, 1.0, high_inclusive=False)
        steps = param_group.get("ns_steps", 5)
        if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= 99:
            raise ValueError(f"ns_steps must be an integer in [0, 99], got {steps!r}")
        if not isinstance(param_group.get("nesterov", True), bool):
            raise ValueError(f"nesterov must be True or False, got {param_group['nesterov']!r}")
        super().add_param_group(param_group)
        for p in self.param_groups[-1]["params"]:
            if p.ndim != 2:
                self.param_groups.pop()
                raise ValueError(
                    f"Muon only updates matrices (2-D parameters), got a parameter of shape "
                    f"{tuple(p.shape)}; give it to AdamW instead"
                )

    @torch.no_grad()
    @checked(skip_nested=True)  # newton_schulz runs bare: its arguments were checked at construction
    def step(self, closure: Callable[[], torch.Tensor] | None = None):
        """One Muon update of every matrix with a gradient; ``closure`` (optional) recomputes the loss."""
        loss = None if closure is None else closure()
        for group in self.param_groups:
            mu = group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                buf = state.setdefault("momentum_buffer", torch.zeros_like(p))
                buf.lerp_(p.grad, 1 - mu)
                direction = p.grad.lerp(buf, mu) if group["nesterov"] else buf
                update = newton_schulz(
                    direction, steps=group["ns_steps"], coefficients=NS_COEFFICIENTS, dtype=self.ns_dtype
                )
                scale = math.sqrt(max(1.0, p.shape[0] / p.shape[1]))
                p.add_(update.to(p.dtype), alpha=-group["lr"] * scale)
        return loss
