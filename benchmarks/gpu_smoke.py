"""GPU smoke run of every chapter: does the package's code run on a CUDA device, and how big is a paper step?

Two passes per chapter, each in its own process (a crash, a hang or an out-of-memory in one chapter
cannot take the others down):

1. ``smoke``: the chapter's ``smoke`` preset, every part of ``run`` and its claims table, on the device.
   On a GPU this is the first check that nothing in the chapter assumes the CPU (a tensor created
   without ``device=``, a numpy call on a CUDA tensor).
2. ``paper-capped``: the ``paper`` preset (its model sizes, data sizes and batch sizes) with every
   training-loop length capped at ``--steps`` (the fields named ``*_steps`` / ``*_epochs`` that count
   iterations; ``CAP_EXEMPT`` lists the ones that are not loop lengths) and a wall-clock limit per chapter.
   Where the paper preset reads a dataset from ``--data-root`` and none is given, a fixture folder in the
   standard layout is written first (:func:`write_fixtures`: random CIFAR-10/100 batches in torchvision's
   pickled format, one image short of the official count so the MD5 check does not apply; a MIRFlickr-shaped
   ``.npz``; harmonic "speech" WAVs), so the real loading code runs on paper-sized inputs.

For each pass the table gives the outcome (``ok`` / ``error`` with the exception / ``stopped at limit``),
the wall time, the peak device memory (``torch.cuda.max_memory_allocated``; on a CPU the process's peak
resident memory), whether every number in the run's summary is finite, and whether the run's training losses
went down (:func:`loss_trends`: every loss curve the run returns, its last quarter's mean against its first
quarter's; a capped run is short and noisy, so a curve that does not go down is listed, not judged); a ``paper``
row also quotes the committed plan's projection for the full preset (``explorables plan``, ``data/plans/<slug>.json``).
It does not judge a claim: a capped run is far too short for that. Wall times include data generation and
the claims table.

Usage::

    python benchmarks/gpu_smoke.py --device cuda                      # all chapters; writes benchmarks/gpu.md
    python benchmarks/gpu_smoke.py --device cpu --steps 2 --chapters omwu muon --out /tmp/gpu.md  # dry run

The suite runs the dry mode on one chapter, omwu (``tests/test_gpu_smoke.py``: a smoke pass, and a paper pass
stopped at its limit).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STEP_FIELD = re.compile(r"(^|_)(steps|epochs)(_|$)")
# Fields named like loop lengths that are not: the diffusion chain's length and the trajectory grids are
# part of the model or the data, and muon's switch and early steps are positions inside the run.
CAP_EXEMPT = {
    "n_diffusion_steps",
    "trajectory_steps",
    "switch_step",
    "early_step",
    "reflow_teacher_steps",
}
# Positions that must stay inside a capped loop: field -> the loop-length field it lies in.
INSIDE = {"switch_step": "n_sensing_steps", "early_step": "n_sensing_steps"}


def capped_overrides(config: Any, steps: int) -> dict[str, int]:
    """The ``paper`` preset's loop lengths capped at ``steps`` (and positions inside them kept inside)."""
    changes: dict[str, int] = {}
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        if field.name in CAP_EXEMPT or isinstance(value, bool) or not isinstance(value, int):
            continue
        if STEP_FIELD.search(field.name):
            rule = field.metadata.get("rule")
            cap = max(steps, getattr(rule, "minimum", 0) or 0)  # a field's rule may ask for more steps
            if value > cap:
                changes[field.name] = cap
    for name, loop in INSIDE.items():
        if hasattr(config, name) and loop in changes:
            changes[name] = max(1, min(getattr(config, name), changes[loop] // 2))
    for name in ("record_every", "random_record_every"):
        if hasattr(config, name):
            rule = next(f for f in dataclasses.fields(config) if f.name == name).metadata.get("rule")
            changes[name] = max(1, getattr(rule, "minimum", 1) or 1)
    return changes


#: per-chapter changes a capped run needs beyond the caps (the fixture CIFAR holds 49,995 training images)
EXTRA: dict[str, dict[str, Any]] = {"topoprune": {"n_pool": 49_995}}


def _scaled_grid(config: Any, name: str, loop: str, new_length: int) -> tuple[int, ...]:
    """An increasing grid of positions inside a loop, rescaled to the loop's new length."""
    old = getattr(config, loop)
    return tuple(sorted({min(new_length, max(0, round(v * new_length / old))) for v in getattr(config, name)}))


def grid_overrides(config: Any, changes: dict[str, Any]) -> dict[str, Any]:
    """Grids of positions inside a capped loop, rescaled with it (muon's switch steps, stable_nde's alignment steps)."""
    out = {}
    for name, loop in (("switch_grid", "n_sensing_steps"), ("alignment_steps", "n_train_steps")):
        if hasattr(config, name) and loop in changes:
            out[name] = _scaled_grid(config, name, loop, changes[loop])
    return out


def write_fixtures(root: Path, seed: int = 0) -> Path:
    """Paper-layout stand-ins for the datasets the ``paper`` presets read (random contents, real formats)."""
    import wave

    import numpy as np

    from explorables.core.datasets import write_cifar

    rng = np.random.default_rng(seed)
    # one image short of the official counts: the loader checks official-size batches against their MD5
    if not (root / "cifar-10-batches-py").exists():
        write_cifar(root, "cifar10", n_train=5 * 9_999, n_test=9_999, seed=seed)
    if not (root / "cifar-100-python").exists():
        write_cifar(root, "cifar100", n_train=49_999, n_test=9_999, seed=seed)
    npz = root / "mirflickr.npz"
    if not npz.exists():
        n = 20_015  # MIRFlickr-25K after dropping unlabelled pairs
        labels = (rng.random((n, 24)) < 0.15).astype(np.float32)
        labels[np.arange(n), rng.integers(0, 24, n)] = 1.0
        np.savez(npz, image=rng.normal(size=(n, 4096)).astype(np.float32),
                 text=(rng.random((n, 1386)) < 0.01).astype(np.float32), labels=labels)  # fmt: skip
    speech = root / "speech"
    if not speech.exists():
        speech.mkdir(parents=True)
        fs = 16_000
        t = np.arange(int(4.5 * fs)) / fs
        for k in range(8):
            f0 = 100 + 20 * k + 10 * np.sin(2 * np.pi * 3 * t)
            phase = 2 * np.pi * np.cumsum(f0) / fs
            voice = sum(np.sin(h * phase) / h for h in range(1, 12)) * (0.6 + 0.4 * np.sin(2 * np.pi * 2 * t) ** 2)
            pcm = (0.3 * voice / np.abs(voice).max() * 32767).astype(np.int16)
            with wave.open(str(speech / f"talker{k}.wav"), "wb") as fh:
                fh.setnchannels(1)
                fh.setsampwidth(2)
                fh.setframerate(fs)
                fh.writeframes(pcm.tobytes())
    return root


def non_finite(value: Any, path: str = "") -> list[str]:
    """The paths of the NaNs and infinities in a JSON-able summary (some are legitimate: an
    unbounded ratio, a bound that is infinite by definition; the table lists them for a reader to judge)."""
    if isinstance(value, float) and not math.isfinite(value):
        return [path or "."]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in non_finite(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in non_finite(v, f"{path}[{i}]")]
    return []


def loss_curves(value: Any, path: str = "") -> dict[str, list[float]]:
    """Every loss curve in a run's summary or curves: a sequence of at least 4 numbers under a key that names a
    loss (``loss``, ``losses``, ``train_loss``, ...), one curve per path (an array of curves per member or seed is
    averaged over the members whose curve is finite, the first axis being the steps; all NaN where none is)."""
    import numpy as np

    found: dict[str, list[float]] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{path}.{k}" if path else str(k)
            if "loss" in str(k).lower() and not isinstance(v, dict):
                try:
                    arr = np.asarray(v, dtype=float)
                except (TypeError, ValueError):
                    arr = None
                if arr is not None and arr.ndim >= 1 and arr.shape[0] >= 4:
                    curve = arr.reshape(arr.shape[0], -1)
                    finite = curve[:, np.isfinite(curve).all(0)]  # members whose curve is finite throughout
                    # none: the curve is reported as not decreasing (NaN compares false)
                    found[here] = finite.mean(1).tolist() if finite.shape[1] else [math.nan] * len(curve)
                    continue
            found.update(loss_curves(v, here))
    return found


def loss_trends(results: Any) -> tuple[int, list[str]]:
    """How many loss curves the run returned, and the paths of those whose last quarter's mean is not below their
    first quarter's (a capped run's curve may be too short or too noisy to go down: listed for a reader)."""
    import numpy as np

    curves = {**loss_curves(getattr(results, "summary", {}) or {}, "summary"),
              **loss_curves(getattr(results, "curves", {}) or {}, "curves")}
    flat = []
    for path, curve in curves.items():
        quarter = max(1, len(curve) // 4)
        if not np.mean(curve[-quarter:]) < np.mean(curve[:quarter]):
            flat.append(path)
    return len(curves), flat


def _peak_memory_mb(device: str) -> float:
    import torch

    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**20
    import psutil

    info = psutil.Process().memory_info()
    return getattr(info, "peak_wset", info.rss) / 2**20


def child(slug: str, scale: str, device: str, steps: int, report: Path, data_root: str | None) -> None:
    """Run one pass in this process and keep ``report`` (JSON) up to date, so a killed run leaves its peak."""
    import torch

    from explorables.chapters import get_chapter

    state: dict[str, Any] = {"slug": slug, "scale": scale, "outcome": "started", "notes": []}

    def write() -> None:
        state["peak_mb"] = round(_peak_memory_mb(device), 1)
        report.write_text(json.dumps(state))

    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(2.0):
            write()

    threading.Thread(target=heartbeat, daemon=True).start()
    import explorables.core.experiment as core_experiment

    original_run_parts = core_experiment.run_parts

    def traced_run_parts(checkpoint: Any, parts: dict[str, Any], progress: bool = False) -> Any:
        """The chapter's parts, each noting when it starts and how long it took (a stopped run shows where)."""

        def traced(name: str, part: Any) -> Any:
            def call() -> Any:
                state["part"], begin = name, time.perf_counter()
                out = part()
                state.setdefault("parts_s", {})[name] = round(time.perf_counter() - begin, 1)
                return out

            return call

        return original_run_parts(checkpoint, {k: traced(k, v) for k, v in parts.items()}, progress)

    core_experiment.run_parts = traced_run_parts
    chapter = get_chapter(slug)
    module = chapter.module()
    config_cls = module.Config
    start = time.perf_counter()
    try:
        if scale == "smoke":
            config = config_cls.preset("smoke", device=device)
        else:
            paper = config_cls.preset("paper")
            changes: dict[str, Any] = {"device": device}
            if "paper" in getattr(config_cls, "DATA_ROOT_SCALES", ()):
                if data_root is None:
                    data_root = str(write_fixtures(report.parent / "fixtures"))
                    state["notes"].append("fixture data (random contents, standard layout)")
                changes["data_root"] = data_root
            changes.update(capped_overrides(paper, steps))
            changes.update(grid_overrides(paper, changes))
            changes.update(EXTRA.get(slug, {}))
            state["capped"] = {k: v for k, v in changes.items() if k not in ("device", "data_root")}
            if "speech" not in str(data_root or "") and slug == "virtualflow" and "data_root" in changes:
                changes["data_root"] = str(Path(changes["data_root"]) / "speech")
            config = paper.replace(**changes)
        results = module.run(config)
        state["seconds"] = round(time.perf_counter() - start, 1)
        bad = non_finite(results.summary)
        state["finite"] = not bad
        if bad:
            state["notes"].append(f"{len(bad)} non-finite in summary, e.g. {', '.join(bad[:3])}")
        n_curves, flat = loss_trends(results)
        state["loss_curves"], state["loss_decreasing"] = n_curves, (not flat) if n_curves else None
        if flat:
            state["notes"].append(f"{len(flat)} of {n_curves} loss curves not decreasing, e.g. {', '.join(flat[:3])}")
        claims = chapter.submodule("claims")
        state["claim_rows"] = len(claims.claims(results))
        state["outcome"] = "ok"
    except Exception as exc:  # recorded, not raised: the table shows which chapter failed and why
        state["seconds"] = round(time.perf_counter() - start, 1)
        state["outcome"] = "error"
        state["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    finally:
        stop.set()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        write()


def run_pass(slug: str, scale: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    report = workdir / f"{slug}-{scale}.json"
    report.unlink(missing_ok=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--child", slug, "--scale", scale,
               "--device", args.device, "--steps", str(args.steps), "--report", str(report)]  # fmt: skip
    if args.data_root:
        command += ["--data-root", args.data_root]
    threads = max(1, (os.cpu_count() or 1) // args.jobs)  # side-by-side passes share the CPUs
    env = {
        **os.environ,
        "EXPLORABLES_THREADS": os.environ.get("EXPLORABLES_THREADS", str(threads)),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    start = time.perf_counter()
    try:
        completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.limit_s)
        tail = (completed.stderr or "").strip().splitlines()[-1:] if completed.returncode else []
    except subprocess.TimeoutExpired:
        completed, tail = None, []
    wall = time.perf_counter() - start
    state = json.loads(report.read_text()) if report.exists() else {"slug": slug, "scale": scale, "notes": []}
    if completed is None:
        state["outcome"] = "stopped at limit"
        state["seconds"] = round(wall, 1)
    elif state.get("outcome") not in ("ok", "error"):
        state["outcome"] = "error"
        state["error"] = f"process exited with {completed.returncode}: {tail[0][:200] if tail else ''}"
    state["wall"] = round(wall, 1)
    return state


def plan_notes(slug: str, peak_mb: float | None = None) -> list[str]:
    """The committed plan's projection of the full ``paper`` preset (peak memory and time on one H100), if any,
    and the capped run's measured peak memory as a share of the planned peak (the capped run keeps the preset's
    model, data and batch sizes, so its peak should be near the plan's; far below or above says the plan or the
    run is off)."""
    from explorables.core.plan import human_bytes, human_seconds, read_plan

    plan = read_plan(slug)
    if plan is None:
        return []
    note = f"plan: peak {human_bytes(plan['peak_bytes'])}, full preset projected {human_seconds(plan['projected_s'])}"
    if peak_mb and plan["peak_bytes"]:
        note += f"; measured peak / planned peak {peak_mb * 1e6 / plan['peak_bytes']:.2g}"
    return [note]


def table(rows: list[dict[str, Any]], args: argparse.Namespace, header: str) -> str:
    lines = [header, "",
             "| chapter | pass | outcome | seconds (process wall) | peak memory (MB) | summary finite | "
             "losses decreasing | notes |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for row in rows:
        notes = list(row.get("notes", []))
        if row.get("capped"):
            notes.append("capped: " + ", ".join(f"{k}={v}" for k, v in row["capped"].items()))
        if row["outcome"] == "stopped at limit" and row.get("part"):
            done = ", ".join(f"{k} {v} s" for k, v in row.get("parts_s", {}).items())
            notes.append(f"stopped in part '{row['part']}'" + (f" (finished: {done})" if done else ""))
        elif row.get("parts_s") and row["scale"] == "paper":
            notes.append("parts: " + ", ".join(f"{k} {v} s" for k, v in row["parts_s"].items()))
        if row.get("error"):
            notes.append(row["error"].replace("|", "/"))
        if row["scale"] == "paper":  # against the committed plan (``explorables plan``), where there is one
            notes += plan_notes(row["slug"], row.get("peak_mb") if str(args.device).startswith("cuda") else None)
        finite = {True: "yes", False: "**no**"}.get(row.get("finite"), "")
        falling = {True: "yes", False: "**no**", None: "— (no loss curve)"}.get(row.get("loss_decreasing"), "")
        if "loss_decreasing" not in row:
            falling = ""
        timing = f"{row.get('seconds', '')} ({row['wall']})"
        lines.append(f"| {row['slug']} | {row['scale']} | {row['outcome']} | {timing} | "
                     f"{row.get('peak_mb', '')} | {finite} | {falling} | {'; '.join(notes)} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument("--steps", type=int, default=20, help="cap on every training-loop length of the paper preset")
    parser.add_argument("--limit-s", type=float, default=40.0, help="wall-clock limit per chapter and pass")
    parser.add_argument("--chapters", nargs="*", help="slugs (default: all)")
    parser.add_argument("--passes", nargs="*", default=["smoke", "paper"], choices=["smoke", "paper"])
    parser.add_argument("--jobs", type=int, default=1, help="passes run at the same time (each its own process)")
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "gpu.md")
    parser.add_argument("--workdir", type=Path, default=None, help="per-pass reports and fixture data (a temp folder)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--scale", help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be >= 1, got {args.steps}")
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    if args.limit_s <= 0:
        parser.error(f"--limit-s must be > 0, got {args.limit_s}")
    if args.child:
        child(args.child, args.scale, args.device, args.steps, args.report, args.data_root)
        return 0

    sys.path.insert(0, str(ROOT / "src"))
    from explorables.chapters import CHAPTERS, get_chapter

    slugs = args.chapters or list(CHAPTERS)
    for slug in slugs:
        get_chapter(slug)  # an unknown slug fails here, naming the known ones
    workdir = args.workdir or Path(tempfile.gettempdir()) / "explorables-gpu-smoke"
    workdir.mkdir(parents=True, exist_ok=True)
    if "paper" in args.passes and args.data_root is None:
        needs_data = [s for s in slugs if "paper" in getattr(get_chapter(s).module().Config, "DATA_ROOT_SCALES", ())]
        if needs_data:  # written once, before the passes run side by side
            write_fixtures(workdir / "fixtures")

    def one(task: tuple[str, str]) -> dict[str, Any]:
        row = run_pass(*task, args, workdir)
        print(f"{row['slug']:16s} {row['scale']:6s} {row['outcome']:17s} {row.get('seconds', '')!s:>7} s "
              f"{row.get('peak_mb', '')!s:>9} MB  {row.get('error', '')}", flush=True)  # fmt: skip
        return row

    from concurrent.futures import ThreadPoolExecutor

    tasks = [(slug, scale) for slug in slugs for scale in args.passes]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(one, tasks))
    import torch

    device_name = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "CPU"
    header = (f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {device_name}, torch {torch.__version__}, "
              f"steps capped at {args.steps}, limit {args.limit_s:g} s per pass, {args.jobs} at a time")  # fmt: skip
    args.out.write_text(table(rows, args, header))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    failed = [r for r in rows if r["outcome"] == "error"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
