"""Paper scale, measured without a GPU: what each ``paper`` preset costs, from a few real steps.

A chapter's plan (``explorables.plans.<slug>``) builds the ``paper`` preset's models and loops at full
size with the chapter's own code and hands back one :class:`Part` per training or search loop: a
callable that runs *one step* of that loop, and how many steps the preset runs. :func:`measure_part`
runs the step one to three times and records

* **FLOPs per step** with :class:`torch.utils.flop_counter.FlopCounterMode` (matrix products and
  convolutions: the operations that dominate a network's cost; elementwise work is not counted), or,
  for code torch does not run (graph searches, solvers, numpy), the part's own operation-count
  estimate, labelled as such;
* **peak memory**: the largest total size of the tensors alive at once during the step (a
  :class:`~torch.utils._python_dispatch.TorchDispatchMode` that follows every storage an operation
  reads or writes, so parameters, optimiser state, activations and gradients count; on the ``meta``
  device this is the only measure there is, and it is exact for the tensors torch creates), plus
  :mod:`tracemalloc`'s peak for numpy and Python allocations;
* **the measured step time** on the CPU (not on ``meta``: a meta step computes nothing);
* **memory traffic**: the bytes every operation reads and writes (each tensor argument and result
  once, an expanded or sliced view by what it covers, views themselves free), a lower bound of
  what a GPU moves, since a kernel may read its input more than once;
* **the projected GPU time**: ``steps x max(FLOPs / (utilisation x peak rate), traffic / (utilisation x
  memory bandwidth), kernels x launch cost)``. The peak rate is the named GPU's for the precision the
  chapter trains in: the chapters compute in float32 (a few in float64) and never ask for bf16, so the
  fp32 rate applies. Matrix products run in true fp32 by torch's default; convolutions may run in TF32,
  cuDNN's default in torch, so a convolution-heavy part's projection is an upper bound (up to the
  TF32/fp32 ratio); the launch term is there because small networks are bound by kernel launches, not
  arithmetic, and the traffic term because elementwise loops (a Sinkhorn iteration, an optimiser's
  update of large tensors) are bound by memory bandwidth, which FLOP counts do not see. "Kernels" are
  dispatched torch operations, views included (an upper bound of the launches). Plans written before the
  traffic term existed have no ``bytes_per_step``; their projections leave it out (the table says so).
  Parts that run on the CPU even on a GPU machine (numpy, gudhi, solvers) are projected from the
  measured CPU step time.

Nothing here judges a claim; the numbers are planning numbers, and timings taken on a shared
machine are noisy. A :class:`ChapterPlan` renders as a markdown table (:meth:`ChapterPlan.markdown`)
and as JSON (:meth:`ChapterPlan.to_json`); the committed ``data/plans/<slug>.json`` is what the
hardware line shown by ``explorables list`` and the pages is generated from (:func:`hardware_line`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
import tracemalloc
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode, conv_flop_count

PLAN_DIR = Path(__file__).resolve().parents[3] / "data" / "plans"
PLAN_FORMAT = 1
#: the version of how :func:`measure_part` measures, part of a written plan's source hash (:func:`plan_source_hash`):
#: a change to what a measurement counts makes every plan measured before it stale. 0: plans written before the version
#: existed (they lack the field; some predate the memory-traffic term or the step_loop difference). 1: the
#: memory-traffic term, step_loop's marginal step, one forward per gradient of a convolution's backward, and the
#: counters warmed up once per process before the first measured step (their first use allocated ~70 MB of Python
#: objects that tracemalloc counted in the first part's peak)
MEASUREMENT_VERSION = 1
#: a part's field that plans measured before the memory-traffic term lack (their projection has no traffic term)
OPTIONAL_PART_FIELDS = frozenset({"bytes_per_step"})
#: a plan's field that plans written before :data:`MEASUREMENT_VERSION` existed lack (version 0)
OPTIONAL_PLAN_FIELDS = frozenset({"measurement"})

#: the GPU the projections name, its memory and its dense peak rates in FLOP/s (NVIDIA H100 SXM datasheet)
GPU = {
    "name": "NVIDIA H100 SXM (80 GB)",
    "memory_bytes": 80e9,
    "peak_flops": {"bf16": 989e12, "tf32": 494e12, "fp32": 67e12, "fp64": 34e12},
    "memory_bandwidth": 3.35e12,  # bytes/s, HBM3
}
#: the largest single GPU the hardware lines name for a plan whose peak is more than the H100 above holds
LARGE_GPU = {"name": "NVIDIA H200", "memory_bytes": 141e9}
#: the share of the peak rate a projection assumes the chapter's code reaches
UTILISATION = 0.40
#: seconds one small kernel costs on a GPU (launch and synchronisation), the floor of a launch-bound step
LAUNCH_S = 10e-6
#: memory headroom: a part "fits one GPU" when its peak is below this share of the GPU's memory
FIT_SHARE = 0.9
PRECISIONS = tuple(GPU["peak_flops"])


def _conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed,
                        _output_padding, _groups, output_mask, out_shape=None, **kwargs) -> int:
    """FLOPs of a convolution's backward: each gradient asked for (input, weight) costs one forward.

    torch's own formula (torch 2.13) counts the weight gradient with every input channel, ignoring
    ``groups``, so a grouped convolution's backward (the chapters' ensembles of networks) came out
    ``groups`` times too large. The forward's count from the weight's shape, ``(c_out, c_in / groups,
    ...)``, is right for any ``groups``; each gradient is one convolution of that size.
    """
    forward = conv_flop_count(list(x_shape), list(w_shape), list(grad_out_shape), transposed=transposed)
    return forward * (int(bool(output_mask[0])) + int(bool(output_mask[1])))


@dataclasses.dataclass
class Part:
    """One loop of a chapter's ``paper`` preset, as a chapter's plan module hands it over.

    ``step`` runs one step of the loop (one optimiser step on one batch, one solver call, one search);
    ``steps`` is how many such steps the preset runs in all (every seed, arm and grid point);
    ``device`` is where ``step`` runs here (``"cpu"``, or ``"meta"`` when a real step would take far
    too long on a CPU); ``runs_on`` is where the code runs on a GPU machine (``"gpu"`` for torch code
    on the config's device, ``"cpu"`` for numpy, gudhi or solvers); ``operations`` is an
    operation-count estimate per step for code torch does not run (``None``: count with torch).
    """

    name: str
    what: str
    step: Callable[[], Any] | None
    steps: int
    parameters: int = 0
    device: str = "cpu"
    precision: str = "fp32"
    runs_on: str = "gpu"
    operations: float | None = None
    repeat: int = 2
    note: str = ""
    resident_bytes: int = 0  # data the loop keeps in memory that the measured step does not touch (added to the peak)
    #: for steps too slow on a CPU at the preset's batch: ``step_at(b)`` builds the step at batch ``b``; the
    #: part is measured at two small batches and FLOPs, memory and time are extrapolated linearly to ``batch``
    step_at: Callable[[int], Callable[[], Any]] | None = None
    batch: int = 0
    small_batches: tuple[int, int] = (2, 4)
    #: for loops whose call also builds things once (models, optimisers, a k-NN graph): ``step_loop(k)`` runs the
    #: loop for ``k`` steps; the part is measured at ``loop_steps`` and one step costs their difference per step
    step_loop: Callable[[int], Callable[[], Any]] | None = None
    loop_steps: tuple[int, int] = (1, 2)
    #: CPU code measured on a smaller problem: the measured time (and operation count) is multiplied by this
    #: factor, from the code's stated complexity (the note says which); so is a GPU part's FLOPs and memory traffic
    #: (its kernel count is not: the loop's length does not depend on the problem's size)
    scale: float = 1.0
    #: the measured peak memory is multiplied by this factor (1: memory stays as measured)
    memory_scale: float = 1.0

    def __post_init__(self) -> None:
        if (self.step, self.step_at, self.step_loop).count(None) != 2:
            raise ValueError(f"part {self.name!r} needs one of step (one step), step_at (one step at a given batch) "
                             "or step_loop (k steps of the loop)")
        if not (0 < self.loop_steps[0] < self.loop_steps[1]):
            raise ValueError(f"loop_steps must be 0 < k1 < k2, got {self.loop_steps}")
        if self.device not in ("cpu", "meta", "cuda"):
            raise ValueError(f"device must be 'cpu', 'meta' or 'cuda', got {self.device!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.runs_on not in ("gpu", "cpu"):
            raise ValueError(f"runs_on must be 'gpu' or 'cpu', got {self.runs_on!r}")
        if not (isinstance(self.steps, int) and self.steps >= 1):
            raise ValueError(f"steps must be an integer >= 1, got {self.steps!r}")
        if not (1 <= self.repeat <= 3):
            raise ValueError(f"repeat must be 1, 2 or 3 (a plan runs a few steps), got {self.repeat!r}")


@dataclasses.dataclass
class PartPlan:
    """One row of a chapter's plan table (every number measured by :func:`measure_part`)."""

    name: str
    what: str
    parameters: int
    flops_per_step: float
    flops_source: str  # "FlopCounterMode" or "operation estimate"
    peak_bytes: int
    memory_source: str
    steps: int
    measured_on: str  # cpu / meta / cuda
    measured_steps: int
    step_s: float | None  # measured seconds per step on measured_on (None on meta)
    kernels_per_step: int
    precision: str
    runs_on: str
    projected_s: float
    bound: str  # "FLOPs", "memory traffic", "kernel launches" or "CPU (measured)"
    note: str = ""
    bytes_per_step: float | None = None  # memory traffic (None: measured before the traffic term)

    @property
    def fits(self) -> bool:
        return self.peak_bytes <= FIT_SHARE * GPU["memory_bytes"]


@dataclasses.dataclass
class ChapterPlan:
    """A chapter's plan: its parts, and how the preset compares with the paper's stated scale."""

    slug: str
    scale: str
    parts: list[PartPlan]
    paper_scale: str  # "yes" / "partly" / "no", then why
    notes: str = ""

    @property
    def fits_one_gpu(self) -> bool:
        return all(p.fits for p in self.parts)

    @property
    def peak_bytes(self) -> int:
        return max((p.peak_bytes for p in self.parts), default=0)

    @property
    def projected_s(self) -> float:
        return sum(p.projected_s for p in self.parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": PLAN_FORMAT,
            "slug": self.slug,
            "scale": self.scale,
            "gpu": GPU["name"],
            "utilisation": UTILISATION,
            "launch_s": LAUNCH_S,
            "paper_scale": self.paper_scale,
            "notes": self.notes,
            "fits_one_gpu": self.fits_one_gpu,
            "peak_bytes": self.peak_bytes,
            "projected_s": self.projected_s,
            "parts": [{**dataclasses.asdict(p), "fits": p.fits} for p in self.parts],
            "measurement": MEASUREMENT_VERSION,
            "source_hash": self._source_hash(),
        }

    def markdown(self) -> str:
        return render_markdown(self.to_json())

    def _source_hash(self) -> str:
        """:func:`plan_source_hash` of a chapter's ``paper`` plan; empty for other scales and non-chapters."""
        from ..chapters import CHAPTERS

        return plan_source_hash(self.slug) if self.scale == "paper" and self.slug in CHAPTERS else ""


def _rate(precision: str) -> float:
    return UTILISATION * GPU["peak_flops"][precision]


def _bandwidth() -> float:
    return UTILISATION * GPU["memory_bandwidth"]


class LiveTensorBytes(TorchDispatchMode):
    """The peak total size of the tensor storages alive during a block, following every storage an
    operation reads or writes (a storage counts from the first operation that touches it until it is freed)."""

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self.kernels = 0
        self.traffic = 0
        self._seen: dict[int, tuple[weakref.ref, int]] = {}

    def _track(self, tensor: torch.Tensor) -> None:
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError):  # sparse or other storage-less tensors
            return
        key = storage._cdata
        if key in self._seen:
            return
        size = storage.nbytes()

        def freed(_ref: weakref.ref, key: int = key, size: int = size) -> None:
            if self._seen.pop(key, None) is not None:
                self.live -= size

        self._seen[key] = (weakref.ref(storage, freed), size)
        self.live += size
        self.peak = max(self.peak, self.live)

    @staticmethod
    def _covered_bytes(tensor: torch.Tensor) -> int:
        """Bytes a kernel reads or writes for ``tensor``: its elements, but no more than its storage holds (an
        expanded view reads its storage once)."""
        size = tensor.numel() * tensor.element_size()
        try:
            return min(size, tensor.untyped_storage().nbytes())
        except (RuntimeError, NotImplementedError):
            return size

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        moved = 0
        for leaf in tree_leaves((args, kwargs)):
            if isinstance(leaf, torch.Tensor):
                self._track(leaf)
                moved += self._covered_bytes(leaf)
        out = func(*args, **kwargs)
        self.kernels += 1
        for leaf in tree_leaves(out):
            if isinstance(leaf, torch.Tensor):
                self._track(leaf)
                moved += self._covered_bytes(leaf)
        if not getattr(func, "is_view", False):  # a view moves no data
            self.traffic += moved
        return out


_WARMED = False


def _warm_up() -> None:
    """Enter the FLOP counter and the memory tracker once, unmeasured: their first use in a process imports and builds
    tens of MB of Python objects that tracemalloc would otherwise count in the first measured step's peak (and bend
    the line of a part measured at two batches)."""
    global _WARMED
    if not _WARMED:
        with FlopCounterMode(display=False), LiveTensorBytes():
            (torch.ones(2, 2) @ torch.ones(2, 2)).sum()
        _WARMED = True


def measure_part(part: Part) -> PartPlan:
    """Run ``part.step`` ``part.repeat`` times: the first under the FLOP counter, the memory tracker
    and tracemalloc; the others plainly, for the step time (the first step's time when ``repeat`` is 1).

    With ``part.step_at``, the step runs at the two ``small_batches`` instead and every count is
    extrapolated linearly to ``part.batch`` (FLOPs and activations grow linearly with the batch;
    parameters and optimiser state do not: the line through two batches separates the two).

    With ``part.step_loop``, the loop runs for ``k1`` and ``k2`` steps and one step counts the difference
    divided by ``k2 - k1`` (what is built once per call, models, optimisers, graphs, cancels); the peak
    memory is the longer run's."""
    if part.step_loop is not None:
        k1, k2 = part.loop_steps
        rows = [measure_part(dataclasses.replace(part, step=part.step_loop(k), step_loop=None, scale=1.0))
                for k in (k1, k2)]  # fmt: skip
        r1, r2 = rows

        def per_step(a: float, b: float) -> float:
            return max(0.0, (b - a) / (k2 - k1))

        step_s = None
        if r1.step_s is not None:  # a noisy difference below zero falls back to the longer run's mean step
            step_s = per_step(r1.step_s, r2.step_s) or r2.step_s / k2
        note = (part.note + "; " if part.note else "") + (
            f"one step is the difference of loops of {k1} and {k2} steps (what a call builds once cancels)")
        marginal = dataclasses.replace(part, step=lambda: None, step_loop=None)
        return _row(marginal, per_step(r1.flops_per_step, r2.flops_per_step), r2.flops_source, r2.peak_bytes,
                    r2.memory_source, step_s, round(per_step(r1.kernels_per_step, r2.kernels_per_step)), note,
                    per_step(r1.bytes_per_step, r2.bytes_per_step))
    if part.step_at is not None:
        b1, b2 = part.small_batches
        if not (0 < b1 < b2 <= part.batch):
            raise ValueError(f"small_batches must be 0 < b1 < b2 <= batch ({part.batch}), got {part.small_batches}")
        rows = [measure_part(dataclasses.replace(part, step=part.step_at(b), step_at=None, repeat=1, scale=1.0))
                for b in (b1, b2)]
        x = (part.batch - b1) / (b2 - b1)

        def line(a: float, b: float) -> float:
            return max(a, a + x * (b - a))

        r1, r2 = rows
        flops = line(r1.flops_per_step, r2.flops_per_step)
        step_s = None if r1.step_s is None else line(r1.step_s, r2.step_s)
        kernels = max(r1.kernels_per_step, r2.kernels_per_step)
        traffic = line(r1.bytes_per_step, r2.bytes_per_step)
        note = (part.note + "; " if part.note else "") + f"extrapolated from batches {b1} and {b2}"
        return _row(part, flops, r1.flops_source, int(line(r1.peak_bytes, r2.peak_bytes)),
                    r1.memory_source + ", extrapolated", step_s, kernels, note, traffic)
    _warm_up()
    counter = FlopCounterMode(display=False, custom_mapping={torch.ops.aten.convolution_backward: _conv_backward_flop})
    tracker = LiveTensorBytes()
    tracemalloc.start()
    try:
        if part.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        with counter, tracker:
            part.step()
        first_s = time.perf_counter() - start
        _, host_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    peak = (tracker.peak + host_peak) * part.memory_scale + part.resident_bytes
    memory_source = "tensors alive at once (dispatch tracker) + tracemalloc"
    if part.resident_bytes:
        memory_source += " + resident data"
    if part.memory_scale != 1.0:
        memory_source += f", scaled by {part.memory_scale:.3g}"
    if part.device == "cuda":
        peak = max(peak, torch.cuda.max_memory_allocated() * part.memory_scale)
        memory_source = "torch.cuda.max_memory_allocated"
    elif part.device == "meta":
        memory_source = "tensor sizes on meta + tracemalloc"
    times = []
    for _ in range(part.repeat - 1):
        start = time.perf_counter()
        part.step()
        if part.device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    step_s = None if part.device == "meta" else (min(times) if times else first_s)
    counted = float(counter.get_total_flops())
    if part.operations is not None:
        flops, flops_source = float(part.operations), "operation estimate"
    else:
        flops, flops_source = counted, "FlopCounterMode"
    return _row(part, flops, flops_source, int(peak), memory_source, step_s, tracker.kernels, part.note,
                float(tracker.traffic))


def _row(part: Part, flops: float, flops_source: str, peak: int, memory_source: str, step_s: float | None,
         kernels: int, note: str, traffic: float) -> PartPlan:
    if part.scale != 1.0:
        flops, step_s = flops * part.scale, None if step_s is None else step_s * part.scale
        traffic *= part.scale
        note = (note + "; " if note else "") + f"time and operations scaled by {part.scale:.3g} from a smaller problem"
    if part.runs_on == "cpu":
        if step_s is None:
            raise ValueError(f"part {part.name!r} runs on the CPU: measure it on the CPU, not on meta")
        projected, bound = part.steps * step_s, "CPU (measured)"
    else:
        terms = {"FLOPs": flops / _rate(part.precision), "memory traffic": traffic / _bandwidth(),
                 "kernel launches": kernels * LAUNCH_S}
        bound = max(terms, key=terms.get)
        projected = part.steps * terms[bound]
    return PartPlan(
        name=part.name, what=part.what, parameters=int(part.parameters), flops_per_step=flops,
        flops_source=flops_source, peak_bytes=int(peak), memory_source=memory_source, steps=part.steps,
        measured_on=part.device, measured_steps=part.repeat, step_s=step_s, kernels_per_step=kernels,
        precision=part.precision, runs_on=part.runs_on, projected_s=float(projected), bound=bound, note=note,
        bytes_per_step=float(traffic),
    )  # fmt: skip


def dry_note(parts: list[Part], dry: bool, what: str) -> list[Part]:
    """In a dry plan (the suite's: smaller problems, one step each), say on every part of ``parts`` what was made
    smaller (``"; dry: <what>"`` after its note); a full plan's parts are handed back unchanged."""
    if dry:
        for part in parts:
            part.note = (part.note + "; " if part.note else "") + f"dry: {what}"
    return parts


def parameter_count(*modules: torch.nn.Module) -> int:
    return sum(p.numel() for m in modules for p in m.parameters())


def make_plan(slug: str, parts: list[Part], paper_scale: str, scale: str = "paper", notes: str = "") -> ChapterPlan:
    if paper_scale.split(":")[0].split(" ")[0] not in ("yes", "partly", "no"):
        raise ValueError(f"paper_scale must start with yes / partly / no, got {paper_scale!r}")
    rows: list[PartPlan] = []
    for i, part in enumerate(parts):
        twin = next((j for j in range(i) if part.step is not None and parts[j].step is part.step), None)
        if twin is None or part.scale != 1.0 or parts[twin].scale != 1.0 or part.device != parts[twin].device:
            rows.append(measure_part(part))
            continue
        # the same step as an earlier part (another loop that runs the same call): one measurement, not two
        # noisy ones of the same thing
        r = rows[twin]
        flops = float(part.operations) if part.operations is not None else r.flops_per_step
        note = (part.note + "; " if part.note else "") + f"the step of '{r.name}', measured once"
        rows.append(_row(part, flops, r.flops_source, r.peak_bytes, r.memory_source, r.step_s, r.kernels_per_step,
                         note, r.bytes_per_step or 0.0))
    return ChapterPlan(slug, scale, rows, paper_scale, notes)


# ---- rendering -------------------------------------------------------------------------------


def human_count(x: float) -> str:
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= size:
            return f"{x / size:.3g} {unit}"
    return f"{x:.3g}"


def human_bytes(x: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if x >= size:
            return f"{x / size:.3g} {unit}"
    return f"{x:.0f} B"


def human_seconds(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.3g} h"
    if s >= 60:
        return f"{s / 60:.3g} min"
    if s >= 1:
        return f"{s:.3g} s"
    return f"{s * 1e3:.3g} ms"


def render_markdown(plan: dict[str, Any]) -> str:
    """The plan (as :meth:`ChapterPlan.to_json` writes it) as a markdown table and two lines of totals."""
    rate = {k: human_count(UTILISATION * v) for k, v in GPU["peak_flops"].items()}
    traffic = all("bytes_per_step" in p for p in plan["parts"] if p["runs_on"] == "gpu")
    lines = [
        f"Plan of `{plan['slug']}` at scale `{plan['scale']}`; projections for one {plan['gpu']} at "
        f"{plan['utilisation']:.0%} of its peak rate (fp32 {rate['fp32']}FLOP/s, fp64 {rate['fp64']}FLOP/s at that "
        f"share), {'its memory bandwidth at that share, ' if traffic else ''}or {plan['launch_s'] * 1e6:g} µs per "
        "kernel (dispatched torch operations, views included), whichever is slower; CPU times measured under load."
        + ("" if traffic else " Measured before the memory-traffic term: a part bound by memory bandwidth "
           "(elementwise loops over large tensors) may take longer than projected."),
        "",
        "| part | one step | parameters | FLOPs / step | memory traffic / step | peak memory | steps | "
        "measured s / step | projected time | bound |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in plan["parts"]:
        flops = human_count(p["flops_per_step"]) + ("" if p["flops_source"] == "FlopCounterMode" else " (estimate)")
        if p["runs_on"] == "cpu" and not p["flops_per_step"]:
            flops = "— (not torch)"
        measured = "— (meta)" if p["step_s"] is None else f"{human_seconds(p['step_s'])} ({p['measured_on']})"
        where = "GPU" if p["runs_on"] == "gpu" else "CPU"
        precision = f" ({p['precision']})" if p["runs_on"] == "gpu" else ""
        moved = "—" if p.get("bytes_per_step") is None or p["runs_on"] == "cpu" else human_bytes(p["bytes_per_step"])
        lines.append(
            f"| {p['name']} | {p['what']}{precision} | {human_count(p['parameters'])} | {flops} | {moved} | "
            f"{human_bytes(p['peak_bytes'])} | {p['steps']:,} | {measured} | {human_seconds(p['projected_s'])} on "
            f"{where} | {p['bound']} |"
        )
    fits = "yes" if plan["fits_one_gpu"] else (
        f"no: {_beyond_h100(quoted_peak(plan)[0])}; the parts' notes say where the memory goes (data kept on the "
        "device needs a host-side loader; a batch too large for one GPU needs several)")
    if all(p["runs_on"] == "cpu" for p in plan["parts"]):
        fits = "no GPU needed (CPU code)"
    lines += [
        "",
        f"Total projected: {human_seconds(plan['projected_s'])}; peak memory {human_bytes(plan['peak_bytes'])}; "
        f"fits one 80 GB GPU: {fits}. Matches the paper's stated scale: {plan['paper_scale']}",
    ]
    if plan.get("notes"):
        lines.append(f"Notes: {plan['notes']}")
    _, record = quoted_peak(plan)
    if record is not None:
        lines.append(_floor_sentence(plan, record))
    return "\n".join(lines)


#: the peak GPU memory recorded per chapter by a capped ``paper`` pass on a real GPU (benchmarks/gpu.md; the file
#: says which run, which GPU and which caps): a floor under what a plan may quote
MEASURED_FILE = "gpu_measured.json"


def recorded_peak(slug: str, folder: Path | None = None) -> dict[str, Any] | None:
    """The GPU run record's entry for ``slug`` with ``peak_bytes`` added (``None``: no record, or no file)."""
    path = (folder or PLAN_DIR) / MEASURED_FILE
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    row = record["chapters"].get(slug)
    if row is None:
        return None
    return {**row, "peak_bytes": int(row["peak_mb"] * 2**20), "gpu": record["gpu"], "caps": record["caps"]}


def quoted_peak(plan: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
    """The peak memory a plan's hardware line and tables quote: the larger of the plan's peak and the peak recorded
    for the chapter on a real GPU; the record is handed back when it is the larger (the plan leaves out a loop, or
    the GPU's allocator and libraries hold more than the tensors the plan counts)."""
    gpu_parts = [p for p in plan["parts"] if p["runs_on"] == "gpu"]
    peak = max((p["peak_bytes"] for p in gpu_parts), default=0)
    record = recorded_peak(plan["slug"])
    if record is not None and record["peak_bytes"] > peak:
        return record["peak_bytes"], record
    return peak, None


def _floor_sentence(plan: dict[str, Any], record: dict[str, Any]) -> str:
    planned = max((p["peak_bytes"] for p in plan["parts"] if p["runs_on"] == "gpu"), default=0)
    return (f"The peak quoted is the {human_bytes(record['peak_bytes'])} recorded on {record['gpu'].split(',')[0]} "
            f"(benchmarks/gpu.md, run {record['run']}, loops capped at 20 steps), above the plan's "
            f"{human_bytes(planned)}: the plan's parts leave out what held that memory (a loop the plan does not "
            "measure, or what the GPU's allocator and libraries hold beyond the tensors).")


def _beyond_h100(peak: float) -> str:
    """What a peak above one 80 GB GPU's share needs: one larger GPU (an H200) when it holds it, else several or a
    host-side loader."""
    if peak <= FIT_SHARE * LARGE_GPU["memory_bytes"]:
        return (f"more than an 80 GB GPU holds, within one {LARGE_GPU['memory_bytes'] / 1e9:.0f} GB "
                f"{LARGE_GPU['name']}")
    return (f"more than one GPU holds (above {FIT_SHARE:.0%} of a {LARGE_GPU['memory_bytes'] / 1e9:.0f} GB "
            f"{LARGE_GPU['name']})")


def hardware_line(plan: dict[str, Any]) -> str:
    """The hardware line generated from a plan: device, memory and projected time. The memory is the larger of the
    plan's peak and the chapter's recorded GPU peak (:func:`quoted_peak`), and says which."""
    gpu_parts = [p for p in plan["parts"] if p["runs_on"] == "gpu"]
    cpu_s = sum(p["projected_s"] for p in plan["parts"] if p["runs_on"] == "cpu")
    gpu_s = sum(p["projected_s"] for p in gpu_parts)
    bits = []
    if gpu_parts:
        peak, record = quoted_peak(plan)
        need = max(1, math.ceil(peak * 1.25 / 1e9))
        fits = plan["fits_one_gpu"] and peak <= FIT_SHARE * GPU["memory_bytes"]
        memory = (f"one GPU with >= {need} GB" if fits else
                  f"{need} GB of GPU memory: {_beyond_h100(peak)} (see `explorables plan`)")
        if record is not None:
            planned = max(p["peak_bytes"] for p in gpu_parts)
            memory += f" (the peak recorded on a GPU with capped loops, above the plan's {human_bytes(planned)})"
        bits.append(f"{memory}, projected {human_seconds(gpu_s)} on an H100 at {plan['utilisation']:.0%} of peak")
    if cpu_s:
        bits.append(f"CPU parts {human_seconds(cpu_s)} (from measured step times, one process)")
    return "; ".join(bits) + " (from `explorables plan`)"


def plan_path(slug: str, folder: Path | None = None) -> Path:
    return (folder or PLAN_DIR) / f"{slug}.json"


def read_plan(slug: str, folder: Path | None = None) -> dict[str, Any] | None:
    """The committed plan of ``slug`` (``None`` when there is none)."""
    path = plan_path(slug, folder)
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def write_plan(plan: ChapterPlan, folder: Path | None = None) -> Path:
    path = plan_path(plan.slug, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan.to_json(), indent=1, allow_nan=False) + "\n")
    return path


def paper_hardware(slug: str) -> str:
    """What the ``paper`` preset needs, generated from the committed plan; where the repository's ``data/plans`` is
    not on disk (a package installed without it, as on Colab), where the plan is and how to measure it, never a
    typed estimate."""
    plan = read_plan(slug)
    if plan is None:
        return (f"see the plan committed in the repository as data/plans/{slug}.json (not in this installation), "
                f"or measure it here with `python -m explorables plan {slug}`")
    return hardware_line(plan)


def plan_source_hash(slug: str, measurement: int = MEASUREMENT_VERSION) -> str:
    """What a committed plan was measured from: the chapter's plan module, its ``paper`` preset (every field) and the
    measurement's version (:data:`MEASUREMENT_VERSION`; a plan's own ``measurement`` field says which it was written
    with, 0 for plans written before the field existed, whose hash leaves it out).

    Not the chapter's package: its code changes for many reasons that leave the costs alone, and hashing it
    would stale the plan with every comment. A plan whose hash differs was measured from another module
    or preset: ``python -m explorables plan <slug> --write`` measures it again."""
    from ..chapters import get_chapter

    module = Path(__file__).resolve().parents[1] / "plans" / f"{slug}.py"
    config = get_chapter(slug).module().Config.preset("paper")
    digest = hashlib.sha256(module.read_bytes() if module.is_file() else b"")
    digest.update(json.dumps(dataclasses.asdict(config), sort_keys=True, default=repr).encode())
    if measurement:
        digest.update(f"measurement {measurement}".encode())
    return digest.hexdigest()[:16]


class PlanTable:
    """A chapter page's plan table: the committed plan's parts in a small markdown table, with its totals.

    Shown by a page's one plan cell (``plan_table("<slug>")``); every number comes from
    ``data/plans/<slug>.json``, none is typed on the page."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan

    def markdown(self) -> str:
        plan = self.plan
        rows = [f"What the `paper` preset costs, from `python -m explorables plan {plan['slug']}`: a few steps of each "
                "loop run at full size (or on torch's `meta` device), counted and timed; the committed plan is "
                f"`data/plans/{plan['slug']}.json`.", "",
                "| part | parameters | FLOPs / step | peak memory | steps | projected time |",
                "|---|---|---|---|---|---|"]
        for p in plan["parts"]:
            estimate = "" if p["flops_source"] == "FlopCounterMode" else " (estimate)"
            flops = "— (not torch)" if p["runs_on"] == "cpu" and not p["flops_per_step"] else (
                human_count(p["flops_per_step"]) + estimate)
            where = "GPU" if p["runs_on"] == "gpu" else "CPU"
            rows.append(f"| {p['name']} | {human_count(p['parameters'])} | {flops} | {human_bytes(p['peak_bytes'])} "
                        f"| {p['steps']:,} | {human_seconds(p['projected_s'])} on {where} |")
        gpu = any(p["runs_on"] == "gpu" for p in plan["parts"])
        untimed = gpu and not all("bytes_per_step" in p for p in plan["parts"] if p["runs_on"] == "gpu")
        fits = ("yes" if plan["fits_one_gpu"] else f"no ({_beyond_h100(quoted_peak(plan)[0])}; see "
                 "`python -m explorables plan`)") if gpu else (
            "no GPU needed (CPU code)")
        verdict, _, why = plan["paper_scale"].partition(":")
        return "\n".join([
            *rows, "",
            f"**Projected in all:** {human_seconds(plan['projected_s'])}, on one {plan['gpu']} at "
            f"{plan['utilisation']:.0%} of its peak rate{'' if untimed else ' or memory bandwidth'}; CPU parts from "
            "step times measured on a shared CPU"
            + ("; memory bandwidth is not counted in this plan, so a bandwidth-bound part may take longer" if untimed
               else "") + ". "
            f"**Peak memory:** {human_bytes(quoted_peak(plan)[0] if gpu else plan['peak_bytes'])}. "
            f"**Fits one GPU:** {fits}. "
            f"**Matches the paper's stated scale:** {verdict.strip()}" + (f": {why.strip()}" if why else "") + "."
            + (f" {_floor_sentence(plan, record)}" if (record := quoted_peak(plan)[1]) is not None else ""),
        ])

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __str__(self) -> str:
        return self.markdown()


def plan_table(slug: str) -> PlanTable:
    """The committed plan of ``slug``'s ``paper`` preset as a chapter page shows it (a markdown table); a sentence
    saying where it is when the repository's ``data/plans`` is not on disk."""
    plan = read_plan(slug)
    return PlanTable(plan) if plan is not None else _NoPlan(slug)


class _NoPlan(PlanTable):
    """Where the committed plans are not on disk (a package installed without the repository, as on Colab)."""

    def __init__(self, slug: str) -> None:
        super().__init__({"slug": slug})

    def markdown(self) -> str:
        slug = self.plan["slug"]
        return (f"The plan of the `paper` preset is committed in the repository as `data/plans/{slug}.json`, which "
                f"this installation does not hold; `python -m explorables plan {slug}` measures it here.")


def check_plan_structure(plan: dict[str, Any]) -> list[str]:
    """What is wrong with a plan's JSON structure (empty: nothing); values are not judged, timings never."""
    problems = []
    for key in ("format", "slug", "scale", "gpu", "utilisation", "paper_scale", "fits_one_gpu", "peak_bytes",
                "projected_s", "parts", "source_hash"):  # fmt: skip
        if key not in plan:
            problems.append(f"missing key {key!r}")
    if problems:
        return problems
    if plan["format"] != PLAN_FORMAT:
        problems.append(f"format {plan['format']} is not {PLAN_FORMAT}")
    if not plan["parts"]:
        problems.append("no parts")
    if plan["paper_scale"].split(":")[0].split(" ")[0] not in ("yes", "partly", "no"):
        problems.append("paper_scale does not start with yes / partly / no")
    fields = {f.name for f in dataclasses.fields(PartPlan)} | {"fits"}
    for p in plan["parts"]:
        missing = fields - set(p) - OPTIONAL_PART_FIELDS
        if missing:
            problems.append(f"part {p.get('name')!r} lacks {sorted(missing)}")
            continue
        if not (p["steps"] >= 1 and p["flops_per_step"] >= 0 and p["peak_bytes"] >= 0 and p["projected_s"] >= 0):
            problems.append(f"part {p['name']!r} has a negative or zero count")
        if p["fits"] != (p["peak_bytes"] <= FIT_SHARE * GPU["memory_bytes"]):
            problems.append(f"part {p['name']!r}: 'fits' disagrees with its peak memory")
    if plan["fits_one_gpu"] != all(p.get("fits") for p in plan["parts"]):
        problems.append("fits_one_gpu disagrees with the parts")
    return problems
