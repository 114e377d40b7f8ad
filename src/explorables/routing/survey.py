"""Rank surveys: how many routing dimensions do value matrices suppress?

* :func:`survey_values` looks at the value matrices ``V = W_V X`` that a trained
  :class:`~.model.RouteReader` actually forms on sequences (one ``d_head x n`` matrix per head,
  layer and sequence) and reports ``rank V`` against ``n - 2`` and the suppressed dimensions
  ``n - rank [V; 1^T]`` (:func:`~.collisions.fibre_dimension`).
* :func:`survey_bert_checkpoint` reads a local Hugging Face BERT checkpoint (``pytorch_model.bin``
  or ``model.safetensors``, no ``transformers`` needed) and reports, per head, the rank of its value
  projection ``W_V^h`` (``d_head x hidden``). Any sequence's ``V = W_V^h X`` has rank at most that,
  so for sequences of ``n`` tokens the head suppresses at least ``n - 1 - rank W_V^h`` dimensions;
  this is a bound from the weights, not the paper's activation-based count.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import torch

from ..core.arguments import checked
from ..core.datasets import open_data_file, read_data_file
from ..core.params import Int
from ..core.validation import check_int
from .collisions import augmented, fibre_dimension
from .model import RouteReader
from .rrt import RRTBatch

#: the largest checkpoint file the BERT survey reads (bytes): BERT-large in float32 is ~1.3 GB
MAX_CHECKPOINT_BYTES = 8 * 1024**3
#: the largest ``config.json`` it reads (bytes)
MAX_CONFIG_BYTES = 1024**2
_VALUE_KEY = re.compile(r"(?:^|\.)encoder\.layer\.(\d+)\.attention\.self\.value\.weight$")


def numerical_rank(M: np.ndarray, eps: float) -> int:
    """Rank with numpy's default rule for data stored with machine epsilon ``eps``: ``s > s_max max(shape) eps``."""
    s = np.linalg.svd(M, compute_uv=False)
    return int((s > s.max(initial=0.0) * max(M.shape) * eps).sum()) if s.size and s.max() > 0 else 0


@checked(sequences=Int(1))
@torch.no_grad()
def survey_values(model: RouteReader, data: RRTBatch, sequences: int = 200) -> list[dict]:
    """Per layer and head: ranks of ``V`` over ``sequences`` sequences of ``data`` (float64 ranks)."""
    from .train import check_model_data

    check_model_data(model, data)
    sequences = check_int("sequences", sequences, maximum=len(data))
    b = data[:sequences]
    _, _, values = model(b.keys, b.pointers, b.query, b.alphas, return_attention=True)
    n = model.length
    rows = []
    for layer, v in enumerate(values):  # (B, H, n, d_head)
        for head in range(v.shape[1]):
            mats = v[:, head].double().transpose(1, 2).cpu().numpy()  # (B, d_head, n)
            eps = torch.finfo(v.dtype).eps
            ranks = np.array([numerical_rank(M, eps) for M in mats])
            fibres = np.array([fibre_dimension(M) for M in mats])
            rows.append(
                {
                    "layer": layer,
                    "head": head,
                    "n": n,
                    "d_head": int(v.shape[-1]),
                    "max_rank": int(ranks.max()),
                    "fraction_rank_le_n_minus_2": float((ranks <= n - 2).mean()),
                    "mean_suppressed": float(fibres.mean()),
                    "min_suppressed": int(fibres.min()),
                }
            )
    return rows


def read_safetensors(path: str | Path) -> dict[str, torch.Tensor]:
    """The tensors of a ``.safetensors`` file, read by the ``safetensors`` library (it checks the
    header, the dtypes and that every tensor's byte range lies inside the file and matches its shape).

    The file is first read through :func:`explorables.core.datasets.read_data_file`: a regular file
    (a FIFO would block safetensors' own open for ever, holding the GIL, so that not even SIGTERM ends the
    process), of at most :data:`MAX_CHECKPOINT_BYTES`. Any malformed file gives a ``ValueError`` naming
    it, never the library's own exception.
    """
    from safetensors import SafetensorError
    from safetensors.torch import load

    data = read_data_file(path, max_bytes=MAX_CHECKPOINT_BYTES, what="checkpoint file")
    try:
        return load(data)
    except (SafetensorError, OSError, ValueError, RuntimeError, TypeError, KeyError) as error:
        raise ValueError(f"path {path} is not a readable safetensors file ({type(error).__name__}: {error})") from None


@checked()
def load_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """A checkpoint's state dict: a folder holding ``model.safetensors`` or ``pytorch_model.bin``, or that file.

    ``.bin``/``.pt`` files are read with ``torch.load(weights_only=True)`` (tensors only, no code). Either
    file must be a regular file of at most :data:`MAX_CHECKPOINT_BYTES` (checked before it is opened:
    :func:`explorables.core.datasets.open_data_file`), else a one-line ``ValueError`` naming it.
    """
    path = Path(path)
    if path.is_dir():
        for candidate in ("model.safetensors", "pytorch_model.bin"):
            if (path / candidate).exists() or (path / candidate).is_symlink():
                path = path / candidate
                break
        else:
            raise ValueError(f"path {path} holds neither model.safetensors nor pytorch_model.bin")
    if not path.exists() and not path.is_symlink():
        raise ValueError(f"path must name an existing checkpoint (a folder or a file), got {str(path)!r}")
    if path.suffix == ".safetensors":
        return read_safetensors(path)
    with open_data_file(path, max_bytes=MAX_CHECKPOINT_BYTES, what="checkpoint file") as fh:
        try:
            state = torch.load(fh, map_location="cpu", weights_only=True)
        except Exception as error:  # EOFError, UnpicklingError, RuntimeError, ...: all mean "not a checkpoint"
            raise ValueError(f"path {path} is not a readable PyTorch checkpoint ({type(error).__name__})") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"path {path} does not hold a state dict of tensors")
    return state


def _config_heads(config: Path) -> int:
    """``num_attention_heads`` of a checkpoint's ``config.json`` (12 if it does not say); the file is read
    through :func:`explorables.core.datasets.read_data_file` (a regular file of at most 1 MiB)."""
    raw = read_data_file(config, max_bytes=MAX_CONFIG_BYTES, what="config file")
    try:
        data = json.loads(raw.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"path: {config} is not a readable JSON config ({type(error).__name__})") from None
    heads = data.get("num_attention_heads", 12) if isinstance(data, dict) else None
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
        raise ValueError(f"path: {config} must give num_attention_heads as an integer >= 1, got {heads!r}")
    return heads


@checked(heads=Int(1, 10_000), sequence_length=Int(3, 10**9))
def survey_bert_checkpoint(path: str | Path, heads: int | None = None, sequence_length: int = 128) -> dict:
    """Per-head ranks of the value projections of a BERT checkpoint, and the suppression bound at ``n``.

    ``heads`` defaults to ``num_attention_heads`` of a ``config.json`` next to the weights (else 12).
    Returns ``{"heads": [...per head...], "fraction_rank_le_n_minus_2": ..., "min_suppressed_bound": ...}``.
    """
    path = Path(path)
    n = check_int("sequence_length", sequence_length, minimum=3)
    if not path.exists() and not path.is_symlink():
        raise ValueError(f"path must name an existing checkpoint (a folder or a file), got {str(path)!r}")
    if heads is None:
        config = (path if path.is_dir() else path.parent) / "config.json"
        heads = _config_heads(config) if config.exists() or config.is_symlink() else 12
    heads = check_int("heads", heads)
    state = load_state_dict(path)
    layers = sorted((int(m.group(1)), k) for k in state if (m := _VALUE_KEY.search(k)))
    if not layers:
        raise ValueError(f"path {path}: no '...encoder.layer.<i>.attention.self.value.weight' tensors found")
    rows = []
    for layer, key in layers:
        eps = torch.finfo(state[key].dtype).eps if state[key].is_floating_point() else 0.0
        W = state[key].double().numpy()
        if W.shape[0] % heads:
            raise ValueError(f"{key} has {W.shape[0]} rows, not divisible by heads={heads}")
        d_head = W.shape[0] // heads
        for h in range(heads):
            block = W[h * d_head : (h + 1) * d_head]
            rank = numerical_rank(block, eps)  # the tolerance of the dtype the checkpoint was stored in
            rows.append(
                {"layer": layer, "head": h, "d_head": d_head, "rank_W_V": rank, "suppressed_bound": n - 1 - rank}
            )
    return {
        "sequence_length": n,
        "heads": rows,
        "fraction_rank_le_n_minus_2": float(np.mean([r["rank_W_V"] <= n - 2 for r in rows])),
        "min_suppressed_bound": int(min(r["suppressed_bound"] for r in rows)),
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m explorables.routing.survey PATH [--heads H] [--length N]``: the BERT survey, as JSON."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("path", help="a local Hugging Face BERT folder, pytorch_model.bin or model.safetensors")
    parser.add_argument("--heads", type=int, default=None)
    parser.add_argument("--length", type=int, default=128, help="sequence length n for the bound (default 128)")
    args = parser.parse_args(argv)
    out = survey_bert_checkpoint(args.path, args.heads, args.length)
    print(json.dumps({k: v for k, v in out.items() if k != "heads"}, indent=2))


if __name__ == "__main__":
    main()

__all__ = ["augmented", "load_state_dict", "read_safetensors", "survey_bert_checkpoint", "survey_values"]
