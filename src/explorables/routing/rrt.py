"""The Routing Reconstruction Task (RRT), our reconstruction: name the source a head attends to.

A sequence holds ``length`` context tokens, each a pair ``(key k_j, pointer p_j)`` of symbols from
a small vocabulary (so contents repeat), and a query symbol ``q``. Fixed random *reference heads*
route it, with a sharpness ``beta``:

* hop 1: ``alpha_1 = softmax(beta * z(u_1, r))`` with ``u_1 = e_key(q)`` and token representations
  ``r_j = e_key(k_j) + e_ptr(p_j) + e_pos(j)``, where ``z(u, r)_j = u^T W r_j`` standardised over the
  sequence (zero mean, unit variance);
* hop 2 (pointer chasing): the first hop hands over the pointer content it retrieved, relative to the
  average pointer, ``u_2 = sum_j alpha_1j e_ptr(p_j) - mean_v e_ptr(v)``, and
  ``alpha_2 = softmax(beta * z(u_2, r))`` with its own ``W``.

The **label** is the dominant source of the last hop, ``argmax_j alpha_hops,j``: a position. The
random tables and matrices are drawn from ``head_seed`` and are the same for every example.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Int, Positive
from ..core.resources import check_memory
from ..core.validation import check_int

#: the largest vocabulary, length or width of the task (bigger is a typo; memory is checked too)
MAX_SIZE = 10**6
#: torch seeds take any integer in [0, 2**64)
MAX_SEED = 2**64 - 1
#: the width of the reference heads' tables
WIDTH = 16


@checked(
    keys=Array("b m", integer=True),
    pointers=Array("b m", integer=True),
    query=Array("b", integer=True),
    label=Array("b", integer=True),
)
@dataclass
class RRTBatch:
    """A batch of RRT examples: ``(B, length)`` int64 keys and pointers, ``(B,)`` int64 queries and labels,
    and per hop the reference heads' float weights ``(B, 1, length)`` (rows on the simplex)."""

    keys: torch.Tensor  # (B, length) int64
    pointers: torch.Tensor  # (B, length) int64
    query: torch.Tensor  # (B,) int64
    alphas: list[torch.Tensor]  # per hop, (B, 1, length): the reference heads' weights
    label: torch.Tensor  # (B,) int64: the dominant source of the last hop

    def __post_init__(self) -> None:
        for name in ("keys", "pointers", "query", "label"):
            t = getattr(self, name)
            if not torch.is_tensor(t) or t.dtype != torch.long:
                raise ValueError(f"{name} must be an int64 tensor, got {getattr(t, 'dtype', type(t).__name__)}")
            if t.device != self.keys.device:
                raise ValueError(f"{name} must be on the device of keys ({self.keys.device}), got {t.device}")
            if bool((t < 0).any()):
                raise ValueError(f"{name} must hold symbols or positions >= 0")
        B, m = self.keys.shape
        if not self.alphas:
            raise ValueError("alphas must hold one weight tensor per hop (at least one), got an empty list")
        if bool((self.label >= m).any()):
            raise ValueError(f"label must hold positions in [0, {m - 1}] (length = {m})")
        for i, a in enumerate(self.alphas):
            if not torch.is_tensor(a) or not a.is_floating_point() or a.ndim != 3 or a.shape[0] != B or a.shape[2] != m:
                raise ValueError(f"alphas[{i}] must be a float tensor of shape ({B}, heads, {m}), got {_describe(a)}")
            if a.device != self.keys.device:
                raise ValueError(f"alphas[{i}] must be on the device of keys ({self.keys.device}), got {a.device}")
            if not bool(torch.isfinite(a).all()) or bool((a < 0).any()):
                raise ValueError(f"alphas[{i}] must hold finite weights >= 0 (attention weights)")

    @checked()
    def to(self, device: str | torch.device) -> RRTBatch:
        """The batch on ``device`` (a torch device or its name)."""
        try:
            device = torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            raise ArgumentError(f"device must be a torch device or its name ('cpu', 'cuda'), got {device!r}") from None
        return _trusted(
            self.keys.to(device),
            self.pointers.to(device),
            self.query.to(device),
            [a.to(device) for a in self.alphas],
            self.label.to(device),
        )

    def __getitem__(self, index) -> RRTBatch:
        return _trusted(
            self.keys[index],
            self.pointers[index],
            self.query[index],
            [a[index] for a in self.alphas],
            self.label[index],
        )

    def __len__(self) -> int:
        return len(self.label)


def _describe(t: object) -> str:
    return f"{t.dtype} of shape {tuple(t.shape)}" if torch.is_tensor(t) else type(t).__name__


def _trusted(*values: object) -> RRTBatch:
    """An :class:`RRTBatch` of parts of a checked one (a slice, a move to a device): built without
    re-checking, as the training loop does it every step."""
    batch = object.__new__(RRTBatch)
    for f, value in zip(dataclasses.fields(RRTBatch), values, strict=True):
        object.__setattr__(batch, f.name, value)
    return batch


#: a :class:`ReferenceHeads` method's keys or pointers: an integer tensor ``(B, length)`` (its symbols are checked
#: against the heads' vocabulary in the method)
_SYMBOLS = Array("b m", integer=True, tensor=True)


@checked(
    vocab=Int(2, MAX_SIZE),
    length=Int(2, MAX_SIZE),
    hops=Int(1, 2),
    width=Int(1, 10_000),
    head_seed=Int(0, MAX_SEED),
)
class ReferenceHeads:
    """The task's fixed random routing: ``hops`` heads of width ``width`` (see the module docstring)."""

    def __init__(self, vocab: int, length: int, hops: int = 1, width: int = WIDTH, head_seed: int = 0):
        self.vocab = check_int("vocab", vocab, minimum=2)
        self.length = check_int("length", length, minimum=2)
        self.hops = check_int("hops", hops, minimum=1, maximum=2)
        self.width = check_int("width", width)
        check_memory(
            {
                "embeddings ((2 vocab + length) x width)": 8 * (2 * vocab + length) * width,
                "matrices (hops x width^2)": 8 * hops * width * width,
            }
        )
        g = torch.Generator().manual_seed(head_seed)
        scale = width**-0.5
        self.e_key = torch.randn(vocab, width, generator=g, dtype=torch.float64) * scale
        self.e_ptr = torch.randn(vocab, width, generator=g, dtype=torch.float64) * scale
        self.e_pos = torch.randn(length, width, generator=g, dtype=torch.float64) * scale
        self.W = [torch.randn(width, width, generator=g, dtype=torch.float64) for _ in range(hops)]

    def _check_symbols(self, **named: torch.Tensor) -> None:
        """Keys, pointers and queries (already checked as integer tensors) hold symbols in ``[0, vocab)``; keys and
        pointers have ``length`` positions."""
        for name, value in named.items():
            if name != "query" and value.shape[-1] != self.length:
                raise ArgumentError(f"{name} must have shape (B, length={self.length}), got {tuple(value.shape)}")
            if bool((value < 0).any()) or bool((value >= self.vocab).any()):
                raise ArgumentError(f"{name} must hold symbols in [0, {self.vocab - 1}] (vocab = {self.vocab})")

    def _keys_and_pointers(self, keys: torch.Tensor, pointers: torch.Tensor) -> None:
        """:meth:`tokens`' relation: symbols of this head's vocabulary, ``length`` positions."""
        self._check_symbols(keys=keys, pointers=pointers)

    def _score_inputs(
        self, query_vec: torch.Tensor, keys: torch.Tensor, pointers: torch.Tensor, hop: int,
        tokens: torch.Tensor | None,
    ) -> None:  # fmt: skip
        """:meth:`scores`' relation: this head's symbols, width, hops and token shape."""
        self._check_symbols(keys=keys, pointers=pointers)
        if query_vec.shape[1] != self.width:
            raise ArgumentError(f"query_vec must have shape (B, width={self.width}), got {tuple(query_vec.shape)}")
        if hop >= self.hops:
            raise ArgumentError(f"hop must be a hop index in [0, {self.hops - 1}], got {hop}")
        if tokens is not None and tuple(tokens.shape[1:]) != (self.length, self.width):
            raise ArgumentError(f"tokens must have shape (B, {self.length}, {self.width}), got {tuple(tokens.shape)}")

    def _route_inputs(self, keys: torch.Tensor, pointers: torch.Tensor, query: torch.Tensor) -> None:
        """:meth:`route`'s relation: this head's symbols and ``length`` positions."""
        self._check_symbols(keys=keys, pointers=pointers, query=query)

    @checked(keys=_SYMBOLS, pointers=_SYMBOLS, relation=_keys_and_pointers)
    def tokens(self, keys: torch.Tensor, pointers: torch.Tensor) -> torch.Tensor:
        """Token representations ``r_j = e_key(k_j) + e_ptr(p_j) + e_pos(j)``, shape ``(B, length, width)``."""
        return self.e_key[keys] + self.e_ptr[pointers] + self.e_pos

    @checked(
        skip_nested=True,
        query_vec=Array("b w", tensor=True),
        keys=_SYMBOLS,
        pointers=_SYMBOLS,
        hop=Int(0, 1),
        tokens=Array("b m w", tensor=True),
        relation=_score_inputs,
    )
    def scores(
        self, query_vec: torch.Tensor, keys: torch.Tensor, pointers: torch.Tensor, hop: int,
        tokens: torch.Tensor | None = None,
    ) -> torch.Tensor:  # fmt: skip
        """Standardised scores ``z(u, r)`` of hop ``hop`` (0-based), shape ``(B, length)``; ``tokens``: the
        representations of :meth:`tokens` when already at hand."""
        r = self.tokens(keys, pointers) if tokens is None else tokens
        z = torch.einsum("bd,de,bje->bj", query_vec, self.W[hop], r)
        return (z - z.mean(1, keepdim=True)) / z.std(1, keepdim=True).clamp_min(1e-12)

    @checked(
        skip_nested=True,
        keys=_SYMBOLS,
        pointers=_SYMBOLS,
        query=Array("b", integer=True, tensor=True),
        beta=Positive(),
        relation=_route_inputs,
    )
    def route(self, keys: torch.Tensor, pointers: torch.Tensor, query: torch.Tensor, beta: float) -> list[torch.Tensor]:
        """The weights of every hop, each of shape ``(B, length)`` (float64)."""
        u = self.e_key[query]
        r = self.tokens(keys, pointers)  # once for every hop
        alphas = []
        for hop in range(self.hops):
            alpha = torch.softmax(beta * self.scores(u, keys, pointers, hop, r), dim=1)
            alphas.append(alpha)
            # what the hop retrieved, relative to the average pointer: without the centring, soft weights
            # retrieve nearly the mean pointer every time, and a nearly constant query can make one position
            # the label of most sequences (a degenerate draw, seen on base seed 4 of the first seed study)
            u = torch.einsum("bj,bjd->bd", alpha, self.e_ptr[pointers]) - self.e_ptr.mean(0)
        return alphas


@checked(
    size=Int(1, 10**9),
    length=Int(2, MAX_SIZE),
    vocab=Int(2, MAX_SIZE),
    hops=Int(1, 2),
    beta=Positive(),
    head_seed=Int(0, MAX_SEED),
)
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
    width = WIDTH
    check_memory(
        {
            "token representations (size x length x width, float64)": 8 * size * length * width,
            "symbols and weights (size x length x (3 + 2 hops))": 8 * size * length * (3 + 2 * hops),
        }
    )
    heads = ReferenceHeads(vocab, length, hops, head_seed=head_seed)
    generator = generator or torch.Generator().manual_seed(0)
    keys = torch.randint(vocab, (size, length), generator=generator)
    pointers = torch.randint(vocab, (size, length), generator=generator)
    query = torch.randint(vocab, (size,), generator=generator)
    alphas = heads.route(keys, pointers, query, beta)
    label = alphas[-1].argmax(1)
    return RRTBatch(keys, pointers, query, [a.float()[:, None] for a in alphas], label)
