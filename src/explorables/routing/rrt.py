"""The Routing Reconstruction Task (RRT), our reconstruction: name the source a head attends to.

A sequence holds ``length`` context tokens, each a pair ``(key k_j, pointer p_j)`` of symbols from
a small vocabulary (so contents repeat), and a query symbol ``q``. Fixed random *reference heads*
route it, with a sharpness ``beta``:

* hop 1: ``alpha_1 = softmax(beta * z(u_1, r))`` with ``u_1 = e_key(q)`` and token representations
  ``r_j = e_key(k_j) + e_ptr(p_j) + e_pos(j)``, where ``z(u, r)_j = u^T W r_j`` standardised over the
  sequence (zero mean, unit variance);
* hop 2 (pointer chasing): the first hop hands over the pointer content it retrieved,
  ``u_2 = sum_j alpha_1j e_ptr(p_j)``, and ``alpha_2 = softmax(beta * z(u_2, r))`` with its own ``W``.

The **label** is the dominant source of the last hop, ``argmax_j alpha_hops,j``: a position. The
random tables and matrices are drawn from ``head_seed`` and are the same for every example.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..core.validation import check_int, check_positive


@dataclass
class RRTBatch:
    keys: torch.Tensor  # (B, length) int64
    pointers: torch.Tensor  # (B, length) int64
    query: torch.Tensor  # (B,) int64
    alphas: list[torch.Tensor]  # per hop, (B, 1, length): the reference heads' weights
    label: torch.Tensor  # (B,) int64: the dominant source of the last hop

    def to(self, device: str | torch.device) -> RRTBatch:
        return RRTBatch(
            self.keys.to(device),
            self.pointers.to(device),
            self.query.to(device),
            [a.to(device) for a in self.alphas],
            self.label.to(device),
        )

    def __getitem__(self, index) -> RRTBatch:
        return RRTBatch(
            self.keys[index],
            self.pointers[index],
            self.query[index],
            [a[index] for a in self.alphas],
            self.label[index],
        )

    def __len__(self) -> int:
        return len(self.label)


class ReferenceHeads:
    """The task's fixed random routing: ``hops`` heads of width ``width`` (see the module docstring)."""

    def __init__(self, vocab: int, length: int, hops: int = 1, width: int = 16, head_seed: int = 0):
        self.vocab = check_int("vocab", vocab, minimum=2)
        self.length = check_int("length", length, minimum=2)
        self.hops = check_int("hops", hops, minimum=1, maximum=2)
        self.width = check_int("width", width)
        g = torch.Generator().manual_seed(head_seed)
        scale = width**-0.5
        self.e_key = torch.randn(vocab, width, generator=g, dtype=torch.float64) * scale
        self.e_ptr = torch.randn(vocab, width, generator=g, dtype=torch.float64) * scale
        self.e_pos = torch.randn(length, width, generator=g, dtype=torch.float64) * scale
        self.W = [torch.randn(width, width, generator=g, dtype=torch.float64) for _ in range(hops)]

    def scores(self, query_vec: torch.Tensor, keys: torch.Tensor, pointers: torch.Tensor, hop: int) -> torch.Tensor:
        """Standardised scores ``z(u, r)`` of hop ``hop`` (0-based), shape ``(B, length)``."""
        r = self.e_key[keys] + self.e_ptr[pointers] + self.e_pos
        z = torch.einsum("bd,de,bje->bj", query_vec, self.W[hop], r)
        return (z - z.mean(1, keepdim=True)) / z.std(1, keepdim=True).clamp_min(1e-12)

    def route(self, keys: torch.Tensor, pointers: torch.Tensor, query: torch.Tensor, beta: float) -> list[torch.Tensor]:
        """The weights of every hop, each of shape ``(B, length)`` (float64)."""
        beta = check_positive("beta", beta)
        u = self.e_key[query]
        alphas = []
        for hop in range(self.hops):
            alpha = torch.softmax(beta * self.scores(u, keys, pointers, hop), dim=1)
            alphas.append(alpha)
            u = torch.einsum("bj,bjd->bd", alpha, self.e_ptr[pointers])  # what the hop retrieved
        return alphas


def make_rrt(
    size: int,
    length: int = 16,
    vocab: int = 8,
    hops: int = 1,
    beta: float = 4.0,
    *,
    head_seed: int = 0,
    generator: torch.Generator | None = None,
) -> RRTBatch:
    """``size`` RRT examples on the CPU (move them with ``.to(device)``); deterministic for a generator.

    Weights are returned in float32 with shape ``(size, 1, length)`` per hop (one head per layer).
    """
    size = check_int("size", size)
    heads = ReferenceHeads(vocab, length, hops, head_seed=head_seed)
    generator = generator or torch.Generator().manual_seed(0)
    keys = torch.randint(vocab, (size, length), generator=generator)
    pointers = torch.randint(vocab, (size, length), generator=generator)
    query = torch.randint(vocab, (size,), generator=generator)
    alphas = heads.route(keys, pointers, query, beta)
    label = alphas[-1].argmax(1)
    return RRTBatch(keys, pointers, query, [a.float()[:, None] for a in alphas], label)
