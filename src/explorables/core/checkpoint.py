"""Checkpoints for long runs: atomic, safe to load, and carrying the random-number state.

A checkpoint is one file: a header (:data:`MAGIC` and the SHA-256 of the payload) followed by the
payload written with ``torch.save`` and read back with ``torch.load(weights_only=True)``, which
only rebuilds tensors and plain containers (never arbitrary pickled objects). A file that is not a
regular file (a FIFO, a directory, a symbolic link), is too short, or whose payload does not match
its checksum (truncated, bit-flipped) is refused in one line before anything is unpickled.
Writes go to a temporary file (created exclusively, never through a link) that is then renamed
over the old one, so a process killed at any moment leaves either the previous checkpoint or the
new one, never a torn file.

The file holds named *entries*; an experiment stores, for example, the finished phases of a
run and the state of the loop in progress. Python values inside entries must be tensors,
numbers, strings, booleans, ``None``, lists/tuples or dicts of those; numpy arrays are stored
as tensors and come back as numpy arrays.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import math
import os
import random
import re
import socket
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from filelock import FileLock, Timeout

_NUMPY_TAG = "__numpy__"
#: the first bytes of every checkpoint file (format version 2: header + SHA-256 + torch payload)
MAGIC = b"EXPLORABLES-CKPT-2\n"
_DIGEST = 32
#: the temporaries :func:`atomic_write_bytes` creates: ``.<name>.<pid>.tmp``
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.tmp$")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (write a temporary file, fsync, rename).

    The temporary is created exclusively and never through a symbolic link (``O_EXCL |
    O_NOFOLLOW``), and the rename replaces a link at ``path`` rather than writing through it.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()  # our own name and pid: a leftover of this process, or a planted link
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def _pack(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        # a copy: torch refuses negative strides, which ascontiguousarray keeps on 0- and 1-element views
        return {_NUMPY_TAG: torch.from_numpy(value.copy(order="C"))}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _pack(v) for k, v in value.items()}  # keys as they are (optimizer states use ints)
    if isinstance(value, (list, tuple)):
        return [_pack(v) for v in value]
    if torch.is_tensor(value):
        # clone: a view (e.g. the recorded prefix of a buffer) would otherwise save its whole storage
        return value.detach().cpu().clone()
    return value


def _unpack(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {_NUMPY_TAG}:
            return value[_NUMPY_TAG].numpy()
        return {k: _unpack(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unpack(v) for v in value]
    return value


def rng_state() -> dict[str, Any]:
    """The global random states of torch (CPU, and every CUDA device when there is one), numpy and
    Python (to restore on resume)."""
    np_state = np.random.get_state()  # noqa: NPY002 - the legacy global state is what third-party code uses
    state = {
        "torch": torch.get_rng_state(),
        "numpy": json.dumps([np_state[0], np_state[1].tolist(), *np_state[2:]]),
        "python": json.dumps(random.getstate()),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore :func:`rng_state` (the CUDA states only where they were saved and a device is present)."""
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    kind, keys, pos, has_gauss, cached = json.loads(state["numpy"])
    legacy = (kind, np.array(keys, dtype=np.uint32), pos, has_gauss, cached)
    np.random.set_state(legacy)  # noqa: NPY002
    version, internal, gauss = json.loads(state["python"])
    random.setstate((version, tuple(internal), gauss))


def checkpoint_bytes(payload: dict[str, Any]) -> bytes:
    """The file's bytes for ``payload``: :data:`MAGIC`, the payload's SHA-256, the ``torch.save`` payload."""
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    body = buffer.getvalue()
    return MAGIC + hashlib.sha256(body).digest() + body


def _verified_body(path: Path) -> bytes:
    """The payload bytes of a checkpoint file, after checking what the file is and its checksum."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise ValueError("it is a symbolic link; a checkpoint is a regular file the run wrote itself")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("it is not a regular file (a folder, a FIFO or a device)")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        data = fh.read()
    head = len(MAGIC) + _DIGEST
    if len(data) < head or not data.startswith(MAGIC):
        raise ValueError("not a checkpoint written by this version of explorables (no header)")
    body = data[head:]
    if hashlib.sha256(body).digest() != data[len(MAGIC) : head]:
        raise ValueError("its checksum does not match: the file is truncated or altered")
    return body


def _is_int(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _check_rng(rng: Any) -> None:
    """``rng`` has the types and shapes :func:`rng_state` writes, so :func:`set_rng_state` cannot fail on it
    (``ValueError`` naming the field if not)."""
    if not isinstance(rng, dict):
        raise ValueError(f"its field rng must be a dict, got {type(rng).__name__}")
    extra = sorted(map(str, set(rng) - {"torch", "numpy", "python", "cuda"}))
    missing = sorted({"torch", "numpy", "python"} - set(rng))
    if extra or missing:
        raise ValueError(f"its field rng must hold torch, numpy and python (and cuda), got {sorted(map(str, rng))}")
    size = torch.get_rng_state().numel()
    states = {"rng['torch']": rng["torch"]}
    if "cuda" in rng:
        if not isinstance(rng["cuda"], (list, tuple)):
            raise ValueError(f"its field rng['cuda'] must be a list of byte tensors, got {type(rng['cuda']).__name__}")
        states.update({f"rng['cuda'][{i}]": state for i, state in enumerate(rng["cuda"])})
    for name, state in states.items():
        if not (torch.is_tensor(state) and state.dtype == torch.uint8 and state.dim() == 1):
            got = type(state).__name__
            if torch.is_tensor(state):
                got = f"a {state.dtype} tensor of shape {tuple(state.shape)}"
            raise ValueError(f"its field {name} must be a 1-d uint8 tensor, got {got}")
        if name == "rng['torch']" and state.numel() != size:
            raise ValueError(f"its field rng['torch'] must hold {size} bytes, got {state.numel()}")
    for name in ("numpy", "python"):
        if not isinstance(rng[name], str):
            raise ValueError(f"its field rng['{name}'] must be a JSON string, got {type(rng[name]).__name__}")
        try:
            state = json.loads(rng[name])
        except (json.JSONDecodeError, RecursionError):
            raise ValueError(f"its field rng['{name}'] is not valid JSON") from None
        if name == "numpy":
            ok = isinstance(state, list) and len(state) == 5 and state[0] == "MT19937"
            ok = ok and isinstance(state[1], list) and len(state[1]) == 624
            ok = ok and all(_is_int(k, 0, 2**32 - 1) for k in state[1]) and _is_int(state[2], 0, 624)
            ok = ok and _is_int(state[3], 0, 1) and isinstance(state[4], float) and math.isfinite(state[4])
            what = "the legacy MT19937 state [kind, 624 uint32 keys, pos in [0, 624], has_gauss 0/1, finite float]"
        else:
            ok = isinstance(state, list) and len(state) == 3 and state[0] == 3
            ok = ok and isinstance(state[1], list) and len(state[1]) == 625
            ok = ok and all(_is_int(k, 0, 2**32 - 1) for k in state[1][:624]) and _is_int(state[1][-1], 0, 624)
            ok = ok and (state[2] is None or (isinstance(state[2], float) and math.isfinite(state[2])))
            what = "random.getstate() [3, 624 uint32 words and an index in [0, 624], None or a finite float]"
        if not ok:
            raise ValueError(f"its field rng['{name}'] must be {what}")


def _check_tags(value: Any, where: str) -> None:
    """Every numpy tag (``{__numpy__: ...}``) inside ``value`` wraps a tensor (``_unpack`` calls ``.numpy()``)."""
    if isinstance(value, dict):
        if set(value) == {_NUMPY_TAG} and not torch.is_tensor(value[_NUMPY_TAG]):
            inside = type(value[_NUMPY_TAG]).__name__
            raise ValueError(f"its field {where} is a numpy array without a tensor (a {inside})")
        for key, item in value.items():
            _check_tags(item, f"{where}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_tags(item, f"{where}[{i}]")


def check_payload(payload: Any) -> None:
    """A loaded checkpoint payload has the fields and types this module wrote, else a ``ValueError`` naming
    the field: exactly ``entries`` (a dict with string keys) and ``rng`` (:func:`_check_rng`); the ``run``
    entry a dict of settings; each ``part/<name>`` entry a dict with ``summary``, ``curves`` and ``seconds``
    (a finite number >= 0); numpy arrays stored as tensors. The checksum proves a file is the one written,
    not that its writer was this code: a crafted file with a valid checksum stops here, not in a traceback.
    The entries of a chapter's loop state are the chapter's to check."""
    if not isinstance(payload, dict) or set(payload) != {"entries", "rng"}:
        got = sorted(map(str, payload)) if isinstance(payload, dict) else type(payload).__name__
        raise ValueError(f"not a checkpoint written by explorables (its top level must be entries and rng, got {got})")
    entries = payload["entries"]
    if not isinstance(entries, dict):
        raise ValueError(f"its field entries must be a dict, got {type(entries).__name__}")
    bad = [k for k in entries if not isinstance(k, str)]
    if bad:
        raise ValueError(f"its field entries must have string keys, got {bad[0]!r}")
    run = entries.get("run")
    if run is not None and not (isinstance(run, dict) and all(isinstance(k, str) for k in run)):
        raise ValueError(f"its field entries['run'] must be a dict of settings, got {type(run).__name__}")
    for key, value in entries.items():
        if not key.startswith("part/"):
            continue
        if not isinstance(value, dict) or not {"summary", "curves", "seconds"} <= set(value):
            got = sorted(map(str, value)) if isinstance(value, dict) else type(value).__name__
            raise ValueError(f"its field entries[{key!r}] must be a dict of summary, curves and seconds, got {got}")
        seconds = value["seconds"]
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (0 <= seconds < math.inf):
            raise ValueError(f"its field entries[{key!r}]['seconds'] must be a finite number >= 0, got {seconds!r}")
    _check_tags(entries, "entries")
    _check_rng(payload["rng"])


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint file's payload, or a ``ValueError`` saying it cannot be used and what to do.

    The file's type and checksum are checked first (:func:`_verified_body`); then
    ``torch.load(weights_only=True)`` rebuilds only tensors and plain containers, and
    :func:`check_payload` checks their fields and types. Whatever is wrong (empty, truncated,
    bit-flipped, foreign, a link, a FIFO, crafted contents behind a valid checksum) becomes one clear
    line naming the file (and the field), never a traceback or a wait.
    """
    try:
        body = _verified_body(Path(path))
        payload = torch.load(io.BytesIO(body), weights_only=True)
        check_payload(payload)
    except Exception as exc:  # any failure to read is the same one line for the user
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ValueError(
            f"the checkpoint {path} cannot be used ({type(exc).__name__}: {reason}); "
            "rerun with --restart to start over (it deletes the checkpoint), or without --resume"
        ) from None
    return payload


def is_own_temporary(name: str) -> bool:
    """Whether ``name`` is of the form of :func:`atomic_write_bytes`' temporaries, ``.<name>.<pid>.tmp``."""
    return _TEMPORARY.match(name) is not None


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete the ``.<name>.<pid>.tmp`` files that :func:`atomic_write_bytes` left in ``folder`` when killed.

    Only names of that exact form, and only regular files (never a link or what it points to).
    Call it only while holding the folder's :class:`FolderLock`, so no live writer owns them.
    """
    removed = []
    for tmp in Path(folder).iterdir():
        if _TEMPORARY.match(tmp.name) and not tmp.is_symlink() and tmp.is_file():
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


class FolderLock:
    """An exclusive lock on an output folder, held through ``<folder>/.lock`` (``filelock``).

    A second run into the same folder, from this process or another, is refused while the lock is
    held. It is an OS lock (``flock``), which the kernel drops when its holder exits in any way,
    SIGKILL included: a dead run never blocks the next one. The empty ``.lock`` file stays after
    release (deleting it would let two runs lock two different files). The holder writes its host
    and pid to ``.lock.owner`` for the refusal's message (information only: the lock is the flock).
    Use as a context manager.
    """

    NAME = ".lock"
    OWNER = ".lock.owner"

    def __init__(self, folder: Path):
        self.path = Path(folder) / self.NAME
        self._lock = FileLock(self.path, timeout=0)

    @property
    def held(self) -> bool:
        return self._lock.is_locked

    def acquire(self) -> None:
        try:
            self._lock.acquire()
        except Timeout:
            owner = ""
            try:
                owner = (self.path.parent / self.OWNER).read_text()[:120].strip()
            except (OSError, UnicodeDecodeError):
                pass
            by = f" (held by {owner})" if owner else ""
            raise ValueError(
                f"another run is writing to {self.path.parent}{by}; wait for it, or choose another --out"
            ) from None
        try:
            atomic_write_text(self.path.parent / self.OWNER, f"host {socket.gethostname()} pid {os.getpid()}\n")
        except OSError:
            pass  # the message loses a detail; the lock itself holds

    def release(self) -> None:
        if self._lock.is_locked:
            (self.path.parent / self.OWNER).unlink(missing_ok=True)
        self._lock.release()

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class Checkpointer:
    """Named entries saved together in ``<folder>/checkpoint.pt``.

    ``every_s`` throttles :meth:`maybe_save` (loop states) so a fast loop does not spend its
    time writing; :meth:`save` always writes. A ``Checkpointer`` with ``enabled=False`` keeps
    nothing and writes nothing (non-zero ranks, or runs without an output folder).
    """

    FILENAME = "checkpoint.pt"

    def __init__(self, folder: Path | None, every_s: float = 60.0, resume: bool = False, enabled: bool = True):
        self.path = None if folder is None else Path(folder) / self.FILENAME
        self.enabled = enabled and self.path is not None
        self.every_s = every_s
        self.entries: dict[str, Any] = {}
        self.saves = 0
        self.seconds_saving = 0.0
        self._last = time.monotonic()
        if resume and self.path is not None and self.path.exists():
            payload = read_checkpoint(self.path)  # checked: check_payload
            self.entries = _unpack(payload["entries"])
            set_rng_state(payload["rng"])

    def bind(self, identity: dict[str, Any]) -> None:
        """Tie the checkpoint to the settings of a run; resuming one written with others is refused.

        Experiments call this with their config (``run`` does it; the command line does it before
        writing anything), so stored results are never reused for a different configuration.
        """
        saved = self.entries.get("run")
        if saved is not None and saved != identity:
            changed = sorted(k for k in set(saved) | set(identity) if saved.get(k) != identity.get(k))
            where = f" in {self.path.parent}" if self.path is not None else ""
            raise ValueError(
                f"the checkpoint{where} was written with other settings ({', '.join(changed)}); "
                "rerun with the same settings, or without --resume"
            )
        self.entries["run"] = identity

    def get(self, name: str) -> Any | None:
        """The entry stored under ``name`` (from this run or the resumed one), or ``None``."""
        return self.entries.get(name)

    def save(self, name: str, value: Any, *, drop: tuple[str, ...] = ()) -> None:
        """Store ``value`` under ``name`` (dropping the entries in ``drop``) and write the file."""
        self.entries[name] = value
        for key in drop:
            self.entries.pop(key, None)
        self._write()

    def maybe_save(self, name: str, make_value) -> None:
        """Store ``make_value()`` under ``name`` if ``every_s`` seconds passed since the last write."""
        if self.enabled and time.monotonic() - self._last >= self.every_s:
            self.save(name, make_value())

    def _write(self) -> None:
        if not self.enabled:
            return
        start = time.perf_counter()
        data = checkpoint_bytes({"entries": _pack(self.entries), "rng": rng_state()})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self.path, data)
        self.saves += 1
        self.seconds_saving += time.perf_counter() - start
        self._last = time.monotonic()


def run_parts(
    checkpoint: Checkpointer, parts: dict[str, Any], progress: bool = False
) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    """Run an experiment's parts in order, reusing those a resumed checkpoint already holds.

    ``parts`` maps a name to a callable returning ``(summary, curves)``. Each finished part is
    stored under ``part/<name>`` with its run time, and the in-progress state it left under
    ``<name>/...`` (e.g. a loop's or a training run's checkpoints) is dropped. Returns the
    summaries, the curves and the timings (``<name>_s``), each keyed by part name.
    """
    summary: dict[str, Any] = {}
    curves: dict[str, Any] = {}
    timings: dict[str, float] = {}
    for name, part in parts.items():
        done = checkpoint.get(f"part/{name}")
        if done is None:
            start = time.perf_counter()
            part_summary, part_curves = part()
            done = {"summary": part_summary, "curves": part_curves, "seconds": time.perf_counter() - start}
            in_progress = tuple(k for k in checkpoint.entries if k.startswith(f"{name}/"))
            checkpoint.save(f"part/{name}", done, drop=in_progress)
            if progress:
                print(f"  {name}: {done['seconds']:.1f} s", flush=True)
        summary[name], curves[name], timings[f"{name}_s"] = done["summary"], done["curves"], done["seconds"]
    return summary, curves, timings


def _cpu_copy(value: Any, *, cpu: bool = True) -> Any:
    """A copy of ``value`` (tensors, containers of them, plain values) that shares no tensor or container with it, on
    the CPU (with ``cpu=False``: each tensor stays on its device)."""
    if torch.is_tensor(value):
        return value.detach().to("cpu", copy=True) if cpu else value.detach().clone()
    if isinstance(value, dict):
        return {k: _cpu_copy(v, cpu=cpu) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cpu_copy(v, cpu=cpu) for v in value)
    return copy.deepcopy(value)


class LoopState:
    """The resumable state of one training loop, kept under one checkpoint entry.

    A loop names what it changes as it runs: ``modules`` (their ``state_dict``), ``optimizers`` and learning-rate
    ``schedulers`` (theirs), ``tensors`` outside any module (e.g. learned centres, restored in place), its own
    ``generators`` (a mapping, or a sequence for one generator per ensemble member) and, with ``global_rng``, torch's,
    numpy's and Python's global random states (:func:`rng_state`). :meth:`restore` loads a stored state into all of
    them and returns the step to continue from and the loop's own ``extra`` values (losses so far, snapshots);
    :meth:`save` stores them, throttled by the checkpointer's ``every_s``, or at once with ``final``. A resumed loop
    then continues to the bit. Without a checkpointer or a name, :meth:`save` does nothing and :meth:`restore` loads
    only its ``default`` (``0, {}`` without one).

    A loop whose set of optimisers changes as it runs (one optimiser until a switch step, another after) gives
    ``optimizers`` as a function of the step: ``optimizers(step)`` builds the set a loop continuing at ``step`` uses.
    :meth:`restore` calls it with the stored step (0 when none) and keeps the result as ``loop.optimizers``, into
    which it loads the stored states; the loop replaces ``loop.optimizers`` when it switches, and :meth:`save` stores
    the set it holds then. Such a loop calls :meth:`restore` before :meth:`state` or :meth:`save`.
    """

    def __init__(
        self,
        checkpoint: Checkpointer | None,
        name: str | None,
        *,
        modules: dict[str, torch.nn.Module] | None = None,
        optimizers: dict[str, torch.optim.Optimizer] | Callable[[int], dict[str, torch.optim.Optimizer]] | None = None,
        schedulers: dict[str, Any] | None = None,
        tensors: dict[str, torch.Tensor] | None = None,
        generators: dict[str, torch.Generator] | list[torch.Generator] | tuple[torch.Generator, ...] | None = None,
        global_rng: bool = False,
    ) -> None:
        self.checkpoint = checkpoint if name else None
        self.name = name or ""
        self.build_optimizers = optimizers if callable(optimizers) else None
        self._built = False  # whether restore() has built the optimisers (when they are a function of the step)
        self.modules = modules or {}
        self.optimizers: dict[str, torch.optim.Optimizer] = {} if callable(optimizers) else optimizers or {}
        self.schedulers, self.tensors = schedulers or {}, tensors or {}
        gens = generators or {}
        self.generators = dict(gens) if isinstance(gens, dict) else {str(i): g for i, g in enumerate(gens)}
        self.global_rng = global_rng

    def restore(self, default: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        """Load the stored state (if any; else ``default``, a :meth:`state` of this loop's objects, e.g. the hand-over
        state of a loop that ran its first steps) into the loop's objects: ``(step to continue from, extra values)``.
        An entry that does not hold exactly this loop's objects (written by another version, or damaged) is refused
        with a ``ValueError`` before anything is loaded."""
        saved = self.checkpoint.get(self.name) if self.checkpoint is not None else None
        from_default = saved is None and default is not None
        if saved is None:
            saved = default
        if self.build_optimizers is not None:  # the set the loop uses from the stored step on
            step = saved.get("step") if isinstance(saved, dict) else None
            self.optimizers = self.build_optimizers(step if isinstance(step, int) and step >= 0 else 0)
            self._built = True  # state() and save() store this set (or the one the loop switches to)
        if saved is None:
            return 0, {}
        self._check(saved, from_default)
        for key, module in self.modules.items():
            module.load_state_dict(saved["modules"][key])
        for key, opt in self.optimizers.items():
            opt.load_state_dict(saved["optimizers"][key])
        for key, sched in self.schedulers.items():
            sched.load_state_dict(saved["schedulers"][key])
        with torch.no_grad():
            for key, tensor in self.tensors.items():
                tensor.copy_(saved["tensors"][key])
        for key, gen in self.generators.items():
            gen.set_state(saved["generators"][key])
        if self.global_rng:
            set_rng_state(saved["rng"])
        # a copy: a loop that appends to a restored list must not grow the stored entry (tensors keep their device)
        return int(saved["step"]), _cpu_copy(dict(saved["extra"] or {}), cpu=False)

    def _check(self, saved: Any, from_default: bool = False) -> None:
        expected = {"modules": self.modules, "optimizers": self.optimizers, "schedulers": self.schedulers,
                    "tensors": self.tensors, "generators": self.generators}  # fmt: skip
        problem = None
        if not isinstance(saved, dict) or set(saved) != {*expected, "rng", "step", "extra"}:
            keys = sorted(saved) if isinstance(saved, dict) else type(saved).__name__
            problem = f"it holds {keys}, not a loop state"
        else:
            for kind, objects in expected.items():
                if not isinstance(saved[kind], dict) or set(saved[kind]) != set(objects):
                    found = sorted(saved[kind]) if isinstance(saved[kind], dict) else saved[kind]
                    problem = f"its {kind} are {found}, this loop's {sorted(objects)}"
                    break
            if problem is None and (saved["rng"] is None) == self.global_rng:
                problem = "it was saved with" + ("out" if self.global_rng else "") + " the global random state"
            if problem is None and not (isinstance(saved["step"], int) and saved["step"] >= 0):
                problem = f"its step is {saved['step']!r}"
            if problem is None and not (saved["extra"] is None or isinstance(saved["extra"], dict)):
                problem = f"its extra values are a {type(saved['extra']).__name__}, not a dict"
        if problem is not None and from_default:  # the calling code's own hand-over state: a bug there, not a file's
            raise ValueError(f"the default state given to restore {self.name!r} does not fit this loop ({problem})")
        if problem is not None:
            raise ValueError(f"the checkpoint's loop state {self.name!r} does not fit this loop ({problem}): it was "
                             "written by another version of explorables or is damaged; rerun with --restart")

    def state(self, step: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The entry :meth:`save` stores: a copy of every object's state now, ``step`` and ``extra`` (a dict)."""
        if not (extra is None or isinstance(extra, dict)):
            raise TypeError(f"extra must be a dict of the loop's own values (or None), got {type(extra).__name__}")
        if self.build_optimizers is not None and not self._built:
            raise RuntimeError("LoopState.state: a loop whose optimisers are a function of the step calls restore() "
                               "first (it builds them)")
        # copies on the CPU: a stored entry must not follow the live objects (Adam's moments change in place), or a
        # later write of the file could pair this step's weights with another step's optimiser state; loading puts
        # each value back on its object's device
        return {
            "modules": {k: _cpu_copy(m.state_dict()) for k, m in self.modules.items()},
            "optimizers": {k: _cpu_copy(opt.state_dict()) for k, opt in self.optimizers.items()},
            "schedulers": {k: _cpu_copy(sched.state_dict()) for k, sched in self.schedulers.items()},
            "tensors": {k: _cpu_copy(t) for k, t in self.tensors.items()},
            "generators": {k: gen.get_state() for k, gen in self.generators.items()},
            "rng": rng_state() if self.global_rng else None,
            "step": int(step),
            # a copy too: a loop keeps appending to its lists after a save, and a later write of the file must not
            # pair this step with the longer lists (each tensor stays on its device: the loop gets it back as it was)
            "extra": None if extra is None else _cpu_copy(extra, cpu=False),
        }

    def save(self, step: int, extra: dict[str, Any] | Callable[[], dict[str, Any]] | None = None, *,
             final: bool = False) -> None:  # fmt: skip
        """Store the state after ``step`` steps (throttled; at once with ``final``). ``extra``: the loop's own values,
        or a function that makes them (called only when the state is stored)."""
        if self.checkpoint is None:
            return

        def make() -> dict[str, Any]:
            return self.state(step, extra() if callable(extra) else extra)

        if final:
            self.checkpoint.save(self.name, make())
        else:
            self.checkpoint.maybe_save(self.name, make)
