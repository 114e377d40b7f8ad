r"""Muon's orthogonalisation: the Newton–Schulz iteration toward the polar factor.

For a matrix :math:`G = U \Sigma V^\top`, Muon steps along (approximately) its polar factor
:math:`UV^\top`: every singular direction of the (momentum) gradient moves by the same amount,
whatever its singular value. The polar factor is approximated without an SVD by a few steps of a
quintic Newton–Schulz map applied to :math:`X_0 = G/\lVert G\rVert_F`,

.. math:: X_{k+1} = a X_k + (b\,A_k + c\,A_k^2) X_k, \qquad A_k = X_k X_k^\top,

with the coefficients :math:`(a, b, c) = (3.4445, -4.7750, 2.0315)` chosen for a steep slope at 0.
It maps each singular value :math:`\sigma` through :math:`p(\sigma) = a\sigma + b\sigma^3 + c\sigma^5`;
after five steps the singular values land near 1 (roughly in ``[0.7, 1.2]``, not exactly 1).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import torch

from ..core.arguments import Array, checked
from ..core.params import Float, Int, Positive, Rule, Tuple
from ..core.validation import check_int

NS_COEFFICIENTS = (3.4445, -4.775, 2.0315)


def _largest_abs(a: float, b: float, c: float, high: float) -> float:
    """``max |p(x)|`` over ``[0, high]`` for ``p(x) = a x + b x^3 + c x^5``: at an end or where ``p' = 0``
    (``a + 3b y + 5c y^2 = 0`` in ``y = x^2``)."""
    xs = [0.0, high]
    for y in np.roots([5 * c, 3 * b, a]):
        if abs(y.imag) < 1e-12 and 0.0 <= y.real <= high * high:
            xs.append(math.sqrt(y.real))
    return max(abs(a * x + b * x**3 + c * x**5) for x in xs)


@dataclasses.dataclass(frozen=True, repr=False)
class Coefficients(Rule):
    """Three finite numbers ``(a, b, c)`` whose iteration stays bounded: the singular values start in ``[0, 1]``
    and each step maps them through ``|p|``, so with ``B = max(1, max |p| on [0, 1])`` the iteration is
    bounded exactly when ``|p| <= B`` on ``[0, B]`` holds (then no step leaves ``[0, B]``; Muon's
    coefficients give ``B`` of about 1.2). Coefficients that grow without bound (``(3.4, 3.4, 2.0)``, a
    ``1e12``) would end in inf and NaN."""

    def check(self, name: str, value: Any) -> tuple:
        a, b, c = Tuple(Float(), min_len=3, max_len=3).check(name, value)
        bound = max(1.0, _largest_abs(a, b, c, 1.0))
        if not (math.isfinite(bound) and _largest_abs(a, b, c, bound) <= bound * (1 + 1e-9)):
            raise ValueError(f"{name} must be {self.describe()}, got {(a, b, c)!r}")
        return a, b, c

    def describe(self) -> str:
        return "three finite numbers (a, b, c) whose Newton-Schulz map a x + b x^3 + c x^5 stays bounded"

    def bad_values(self) -> list[Any]:
        return ["abc", (1.0, 2.0), (float("nan"), 0.0, 0.0), (3.4445, 3.4445, 2.0315), (1e12, 0.0, 0.0)]


@checked(
    G=Array("... m n"),
    steps=Int(0, 99),
    coefficients=Coefficients(),
    eps=Positive(),
)
def newton_schulz(
    G: torch.Tensor,
    steps: int = 5,
    coefficients: tuple[float, float, float] = NS_COEFFICIENTS,
    eps: float = 1e-7,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Approximate polar factor of ``G`` (a matrix, or a batch ``(..., m, n)``) by quintic Newton–Schulz.

    ``dtype`` sets the working precision (``torch.bfloat16`` reproduces ``torch.optim.Muon``);
    by default the input's own.
    """
    if not torch.is_tensor(G) or G.ndim < 2:
        raise ValueError(f"G must be a matrix (or a batch of them), got {getattr(G, 'shape', type(G))}")
    steps = check_int("steps", steps, minimum=0, maximum=99)
    if not bool(torch.isfinite(G).all()):
        raise ValueError("G must be finite: it holds NaN or inf (a diverged gradient?)")
    if len(coefficients) != 3:
        raise ValueError(f"coefficients must be three numbers (a, b, c), got {coefficients}")
    a, b, c = coefficients
    X = G.to(dtype) if dtype is not None else G  # never written to: the first division makes a new tensor
    tall = G.size(-2) > G.size(-1)
    if tall:  # work on the wide side: X X^T is then the smaller Gram matrix
        X = X.mT
    X = X / X.norm(dim=(-2, -1), keepdim=True).clamp(min=eps)  # X_0 = G / ||G||_F: singular values in [0, 1]
    for _ in range(steps):
        A = X @ X.mT  # A_k = X_k X_k^T
        if X.ndim == 2:  # fused, in the same order as torch.optim.Muon (identical bfloat16 results)
            B = torch.addmm(A, A, A, beta=b, alpha=c)  # B_k = b A_k + c A_k^2
            X = torch.addmm(X, B, X, beta=a)  # X_{k+1} = a X_k + B_k X_k, eq. (muon-ns)
        else:
            B = b * A + c * (A @ A)
            X = a * X + B @ X
    return X.mT if tall else X  # ~ U V^T: every singular value mapped near 1


@checked(G=Array("... m n"))
def polar_factor(G: torch.Tensor) -> torch.Tensor:
    """The exact polar factor ``U V^T`` of ``G = U S V^T`` (an SVD; the reference for tests)."""
    if not torch.is_tensor(G):
        raise TypeError(f"G must be a torch tensor (a matrix or a batch of them), got {type(G).__name__}")
    U, _, Vh = torch.linalg.svd(G, full_matrices=False)
    return U @ Vh
