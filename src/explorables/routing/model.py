"""A small Transformer whose FFN can see the attention weights: standard, Route-Aware and oracle.

Every attention head computes weights ``alpha`` over the ``m`` positions of the sequence and
passes on only ``V alpha`` (values carry content, plus position with ``value_positions=True``).
The FFN that follows therefore sees

* ``standard``: the residual stream only (the usual Transformer block);
* ``route_aware`` (RA-FFN): the residual stream plus four routing statistics of each head's
  ``alpha`` (:func:`routing_statistics`), through one extra bias-free ``4 H x d_ff`` matrix;
* ``oracle``: the residual stream plus the whole ``alpha`` of every head (``m H`` extra inputs), scaled
  as ``m alpha`` so that uniform attention reads 1 (see :meth:`RouteAwareFFN.side_input`).

The statistics are our design (the paper's exact four are not public), see
:func:`routing_statistics`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..core.arguments import Array, checked
from ..core.params import Choice, Int, Positive
from ..core.resources import check_memory
from ..core.validation import check_choice, check_int

#: the largest width, vocabulary or length a model is built with (bigger is a typo; memory is checked too)
MAX_SIZE = 10**6
#: bytes per parameter (float32), for the memory estimate of a model before it is built
_BYTES = 4

FFN_KINDS = ("standard", "route_aware", "oracle")
N_STATS = 4
STAT_NAMES = ("max weight", "top-2 margin", "attention centroid", "squared-weight centroid")


def _check_alpha(alpha: torch.Tensor) -> torch.Tensor:
    if not torch.is_tensor(alpha):
        raise ValueError(f"alpha must be a torch tensor, got {type(alpha).__name__}")
    if not alpha.is_floating_point():
        raise ValueError(f"alpha must have a floating dtype, got {alpha.dtype}")
    if alpha.ndim < 1 or alpha.shape[-1] < 2:
        raise ValueError(f"alpha must have shape (..., m) with m >= 2 positions, got {tuple(alpha.shape)}")
    return alpha


@checked(alpha=Array("... m"), positions=Array("m"))
def routing_statistics(alpha: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
    """Four routing statistics of attention weights ``alpha`` (shape ``(..., m)``, rows on the simplex).

    1. ``max_j alpha_j``: how concentrated the head is;
    2. ``alpha_(1) - alpha_(2)``: the margin between the two largest weights (is there one winner?);
    3. ``c_1 = sum_j alpha_j p_j``: the attention centroid;
    4. ``c_2 = sum_j alpha_j^2 p_j / sum_j alpha_j^2``: the centroid under the squared weights, which
       leans toward the heavy positions;

    with positions ``p_j = j / (m - 1)`` unless ``positions`` is given (shape ``(m,)``). The first two
    are symmetric functions of ``alpha`` (invariant to any reordering); the centroids are invariant
    when weights and positions are permuted together. None of them is the argmax position, but
    ``c_2`` is close to a soft argmax: the centroid under ``alpha^p`` tends to the argmax as
    ``p -> infinity``; at ``p = 2`` rounding ``(m - 1) c_2`` names the argmax often when the weights are sharp
    and rarely when they are soft (:func:`~.train.rounding_accuracy` measures how often). The four were
    chosen in scratch runs.
    Returns shape ``(..., 4)``, in the order of :data:`STAT_NAMES`.
    """
    _check_alpha(alpha)
    m = alpha.shape[-1]
    if positions is None:  # p_j = j / (m - 1)
        positions = torch.arange(m, device=alpha.device, dtype=alpha.dtype) / (m - 1)
    elif tuple(positions.shape) != (m,):
        raise ValueError(f"positions must have shape ({m},) (the last dim of alpha), got {tuple(positions.shape)}")
    positions = torch.as_tensor(positions).to(alpha)
    top2 = alpha.topk(2, dim=-1).values  # alpha_(1) >= alpha_(2), the two largest weights
    centroid = (alpha * positions).sum(-1)  # c_1 = sum_j alpha_j p_j
    squared = alpha * alpha
    squared_centroid = (squared * positions).sum(-1) / squared.sum(-1).clamp_min(1e-30)  # c_2
    # r(alpha) = (alpha_(1), alpha_(1) - alpha_(2), c_1, c_2), eq. (routing-stats)
    return torch.stack([top2[..., 0], top2[..., 0] - top2[..., 1], centroid, squared_centroid], dim=-1)


@checked(
    d_model=Int(1, MAX_SIZE),
    d_ff=Int(1, MAX_SIZE),
    heads=Int(1, 10_000),
    kind=Choice(FFN_KINDS),
    positions=Int(2, MAX_SIZE),
)
class RouteAwareFFN(nn.Module):
    """``FFN(x, r) = W_2 GELU(W_1 x + U r + b_1) + b_2``: a standard FFN plus a side input ``r``.

    ``kind="standard"`` has no ``U``; ``"route_aware"`` has ``U`` of shape ``(d_ff, 4 H)`` (four
    statistics per head); ``"oracle"`` has ``U`` of shape ``(d_ff, m H)`` (every weight of every
    head). The extra parameter count is :meth:`extra_parameters`: ``4 H d_ff`` for RA-FFN.
    """

    def __init__(self, d_model: int, d_ff: int, heads: int, kind: str = "route_aware", positions: int | None = None):
        super().__init__()
        self.kind = check_choice("kind", kind, FFN_KINDS)
        check_int("d_model", d_model)
        check_int("d_ff", d_ff)
        self.heads = check_int("heads", heads)
        if kind == "oracle":
            if positions is None:
                raise ValueError("positions (the sequence length m) is required for kind='oracle'")
            self.positions = check_int("positions", positions, minimum=2)
        else:
            self.positions = positions
        side = {"standard": 0, "route_aware": N_STATS * heads, "oracle": (positions or 0) * heads}[kind]
        check_memory({"FFN weights (d_model x d_ff x 2 + side inputs x d_ff)": _BYTES * d_ff * (2 * d_model + side)})
        self.up = nn.Linear(d_model, d_ff)
        self.down = nn.Linear(d_ff, d_model)
        self.side_dim = {"standard": 0, "route_aware": N_STATS * heads, "oracle": (positions or 0) * heads}[kind]
        self.route = nn.Linear(self.side_dim, d_ff, bias=False) if self.side_dim else None

    @staticmethod
    def extra_parameters(d_ff: int, heads: int, kind: str = "route_aware", positions: int = 0) -> int:
        """Parameters added to a standard FFN: ``4 H d_ff`` (RA-FFN) or ``m H d_ff`` (oracle)."""
        check_choice("kind", kind, FFN_KINDS)
        per_head = {"standard": 0, "route_aware": N_STATS, "oracle": positions}[kind]
        return per_head * heads * d_ff

    @checked(skip_nested=True, alpha=Array("... h m", tensor=True, min_size=(("m", 2),)))
    def side_input(self, alpha: torch.Tensor) -> torch.Tensor | None:
        """What the FFN sees of ``alpha`` (shape ``(..., H, m)``, finite): shape ``(..., side_dim)``, or ``None``: the
        four statistics per head (RA-FFN) or ``m alpha`` (the oracle, so that uniform attention reads 1)."""
        if self.kind == "standard":
            return None
        # the rule checked that alpha is a finite tensor of shape (..., h, m >= 2); the dtype and the sizes this FFN
        # was built for are checked here. Inside a skip_nested boundary (train_model, accuracy) the rule is skipped:
        # alpha then comes from a softmax or a checked batch. Either way routing_statistics below runs bare (this is
        # a skip_nested body), so a forward pass a reader calls directly scans alpha once per layer, in the rule.
        if not alpha.is_floating_point():
            raise ValueError(f"alpha must have a floating dtype, got {alpha.dtype}")
        if alpha.shape[-2] != self.heads:
            raise ValueError(f"alpha must have shape (..., heads={self.heads}, m), got {tuple(alpha.shape)}")
        if self.kind == "oracle" and alpha.shape[-1] != self.positions:
            raise ValueError(f"alpha must have m={self.positions} positions for this oracle FFN, got {alpha.shape[-1]}")
        if self.kind == "route_aware":
            side = routing_statistics(alpha)
        else:
            # the oracle reads m alpha: the same information, at the scale (about 1 per input) that U's default
            # initialisation expects. Unscaled, soft weights over many positions (about 1/m each) reach the FFN
            # so faintly that the oracle trained worse than the no-collision control in scratch runs (tuning
            # seeds 100+). RA-FFN's statistics are left as they are (scaling its two weight-valued ones by m
            # did not help it there).
            side = alpha * alpha.shape[-1]
        return side.flatten(-2)

    def forward(self, x: torch.Tensor, alpha: torch.Tensor | None = None) -> torch.Tensor:
        """``W_2 GELU(W_1 x + U r(alpha) + b_1) + b_2``, eq. (ra-ffn); ``alpha`` has shape ``(..., H, m)``."""
        hidden = self.up(x)  # W_1 x + b_1
        if self.route is not None:
            if alpha is None:
                raise ValueError(f"alpha is required by a {self.kind!r} FFN")
            hidden = hidden + self.route(self.side_input(alpha))  # + U r(alpha): 4 statistics per head
        return self.down(nn.functional.gelu(hidden))  # W_2 GELU(.) + b_2


ROUTINGS = ("given", "learned")


@checked(
    vocab=Int(2, MAX_SIZE),
    length=Int(2, MAX_SIZE),
    d_model=Int(1, MAX_SIZE),
    heads=Int(1, 10_000),
    d_head=Int(1, MAX_SIZE),
    d_ff=Int(1, MAX_SIZE),
    layers=Int(1, 10_000),
    kind=Choice(FFN_KINDS),
    routing=Choice(ROUTINGS),
    sharpness=Positive(),
)
class RouteReader(nn.Module):
    """A pre-norm Transformer read-out: a query token attends over ``length`` context tokens, layer by layer.

    Layer ``l`` computes attention weights ``alpha_l`` (shape ``(B, H, m)``, ``m = length``), mixes
    values ``v_j = W_V x_j`` (``d_head`` each; content only, as with rotary embeddings) or, with
    ``value_positions=True``, ``v_j = W_V [x_j ; e_j] = W_V x_j + P_j`` with one-hot positions
    ``e_j`` and a learned ``P`` (``layers x heads x length x d_head``), adds ``W_O concat_h(V_h alpha_h)``
    to the query's residual stream ``h``,
    then applies its FFN (:class:`RouteAwareFFN`, which sees ``alpha_l`` if its kind says so):

        h <- h + W_O (V alpha_l),   h <- h + FFN_l(LN(h), alpha_l),   logits = W_out LN(h).

    ``routing="given"``: ``alpha_l`` is supplied by the task (the reference heads of
    :mod:`.rrt`), so the experiment isolates what the FFN can recover from its input.
    ``routing="learned"``: ``alpha_l = softmax(beta (W_Q LN h) . (W_K LN x_j + P_j) / sqrt(d_head))``
    with learned positional keys ``P_j`` (the full-scale setting). Context tokens are ``(key,
    pointer)`` pairs embedded as ``E_key[k] + E_ptr[p]``; the query symbol uses ``E_key``.
    """

    def __init__(
        self,
        vocab: int,
        length: int,
        d_model: int = 32,
        heads: int = 1,
        d_head: int = 4,
        d_ff: int = 64,
        layers: int = 1,
        kind: str = "standard",
        routing: str = "given",
        sharpness: float = 1.0,
        value_positions: bool = False,
    ):
        super().__init__()
        check_int("vocab", vocab, minimum=2)
        self.length = check_int("length", length, minimum=2)
        self.layers = check_int("layers", layers)
        self.heads = check_int("heads", heads)
        self.d_head = check_int("d_head", d_head)
        self.kind = check_choice("kind", kind, FFN_KINDS)
        self.routing = check_choice("routing", routing, ROUTINGS)
        side = {"standard": 0, "route_aware": N_STATS * heads, "oracle": length * heads}[kind]
        hd = heads * d_head
        check_memory(
            {
                "embeddings (vocab x d_model x 2)": _BYTES * 2 * vocab * d_model,
                "attention (layers x d_model x heads x d_head x 2)": _BYTES * layers * 2 * d_model * hd,
                "positions (layers x heads x length x d_head x 2)": _BYTES * layers * 2 * length * hd,
                "FFNs (layers x d_ff x (2 d_model + side inputs))": _BYTES * layers * d_ff * (2 * d_model + side),
                "read-out (d_model x length)": _BYTES * d_model * length,
            }
        )
        self.sharpness = sharpness
        self.value_positions = bool(value_positions)
        self.key_embed = nn.Embedding(vocab, d_model)
        self.pointer_embed = nn.Embedding(vocab, d_model)
        self.context_norm = nn.LayerNorm(d_model)
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(2 * layers))
        self.values = nn.ModuleList(nn.Linear(d_model, heads * d_head, bias=False) for _ in range(layers))
        self.outs = nn.ModuleList(nn.Linear(heads * d_head, d_model) for _ in range(layers))
        if self.value_positions:  # v_j = W_V [x_j ; e_j] = W_x x_j + P_j with a learned P (one-hot positions e_j)
            self.position_values = nn.Parameter(torch.randn(layers, heads, length, d_head) * 0.5)
        self.ffns = nn.ModuleList(RouteAwareFFN(d_model, d_ff, heads, kind, length) for _ in range(layers))
        if routing == "learned":
            self.queries = nn.ModuleList(nn.Linear(d_model, heads * d_head) for _ in range(layers))
            self.keys = nn.ModuleList(nn.Linear(d_model, heads * d_head) for _ in range(layers))
            self.position_keys = nn.Parameter(torch.randn(layers, heads, length, d_head) * 0.5)
        self.final_norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, length)

    def _check_inputs(
        self, keys: torch.Tensor, pointers: torch.Tensor, query: torch.Tensor, alphas: list[torch.Tensor] | None
    ) -> None:
        for name, t in (("keys", keys), ("pointers", pointers), ("query", query)):
            if not torch.is_tensor(t) or t.dtype != torch.long:
                raise ValueError(f"{name} must be an int64 tensor of symbols, got {getattr(t, 'dtype', type(t))}")
        if keys.ndim != 2 or keys.shape[1] != self.length or pointers.shape != keys.shape:
            raise ValueError(f"keys and pointers must have shape (batch, {self.length}), got {tuple(keys.shape)}")
        if query.shape != keys.shape[:1]:
            raise ValueError(f"query must have shape (batch,) = ({keys.shape[0]},), got {tuple(query.shape)}")
        if keys.device != self.head.weight.device:
            raise ValueError(f"inputs are on {keys.device} but the model is on {self.head.weight.device}")
        if self.routing == "given":
            want = (keys.shape[0], self.heads, self.length)
            if alphas is None or len(alphas) != self.layers:
                raise ValueError(f"routing='given' needs alphas: a list of {self.layers} tensors of shape {want}")
            for a in alphas:
                if tuple(a.shape) != want or not a.is_floating_point():
                    raise ValueError(f"each given alpha must be a float tensor of shape {want}, got {tuple(a.shape)}")

    def forward(
        self,
        keys: torch.Tensor,
        pointers: torch.Tensor,
        query: torch.Tensor,
        alphas: list[torch.Tensor] | None = None,
        *,
        return_attention: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """Logits ``(B, length)`` over the source positions.

        ``keys``, ``pointers``: int64 ``(B, length)``; ``query``: int64 ``(B,)``; ``alphas``: one float
        ``(B, heads, length)`` tensor per layer (required for ``routing="given"``). With
        ``return_attention=True`` also the weights ``(B, H, m)`` and values ``(B, H, m, d_head)`` per layer.
        """
        self._check_inputs(keys, pointers, query, alphas)
        x = self.context_norm(self.key_embed(keys) + self.pointer_embed(pointers))  # (B, m, d)
        h = self.key_embed(query)  # (B, d)
        B, m, _ = x.shape
        used, values = [], []
        for layer in range(self.layers):
            v = self.values[layer](x).view(B, m, self.heads, self.d_head).transpose(1, 2)  # (B, H, m, dh)
            if self.value_positions:
                v = v + self.position_values[layer]
            if self.routing == "given":
                alpha = alphas[layer].to(x.dtype)
            else:
                q = self.queries[layer](self.norms[2 * layer](h)).view(B, self.heads, 1, self.d_head)
                k = self.keys[layer](x).view(B, m, self.heads, self.d_head).transpose(1, 2)
                k = k + self.position_keys[layer]
                scores = (q @ k.transpose(-1, -2))[:, :, 0] * self.sharpness / math.sqrt(self.d_head)
                alpha = torch.softmax(scores, dim=-1)  # (B, H, m)
            mixed = (alpha[:, :, None] @ v)[:, :, 0].flatten(1)  # V alpha per head, concatenated
            h = h + self.outs[layer](mixed)
            h = h + self.ffns[layer](self.norms[2 * layer + 1](h), alpha)
            used.append(alpha)
            values.append(v)
        logits = self.head(self.final_norm(h))
        return (logits, used, values) if return_attention else logits
