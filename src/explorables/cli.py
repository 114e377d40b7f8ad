"""Command line: ``python -m explorables run <slug> --scale SCALE``; also ``list``, ``show``, ``seeds`` and ``plan``.

The command builds the chapter's config from a preset (plus ``--set key=value`` overrides),
calls the same ``run(config)`` as the notebook and the tests, and writes to ``--out``:
``config.json``, ``results.json`` (plain JSON), each figure as standalone HTML (plotly.js is
written once beside them, so the files open offline) and as PNG, and ``checkpoint.pt``. ``--resume``
continues an interrupted run from its checkpoint and ends with the same results.

Under ``torchrun --nproc-per-node N -m explorables run ...`` every process runs the experiment
(experiments that train networks split their work with DistributedDataParallel); only rank 0
writes files.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .chapters import CHAPTERS, get_chapter
from .core.checkpoint import (
    Checkpointer,
    FolderLock,
    atomic_write_text,
    is_own_temporary,
    remove_stale_temporaries,
)
from .core.config import SCALES
from .core.device import DEVICE_CHOICES
from .core.distributed import init_distributed, shutdown
from .png_export import write_pngs


def _jsonable(value: Any) -> Any:
    """Plain JSON: non-finite floats become strings ("inf", "nan") so any JSON reader accepts them."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def write_json(path: Path, payload: Any) -> None:
    atomic_write_text(path, json.dumps(_jsonable(payload), indent=2, allow_nan=False))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="explorables", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="list chapters; with a slug, every setting of its presets")
    listing.add_argument("slug", nargs="?", default=None, help="a chapter slug: show its settings")
    show = sub.add_parser("show", help="every setting of a chapter: value per preset, allowed range, meaning")
    show.add_argument("slug", help="chapter slug, e.g. omwu")
    run = sub.add_parser("run", help="run a chapter's experiment at a given scale")
    run.add_argument("slug", help="chapter slug, e.g. omwu (see 'explorables list')")
    run.add_argument("--scale", choices=SCALES, default="book")
    run.add_argument("--device", choices=DEVICE_CHOICES, default=None, help="default: the preset's")
    run.add_argument("--seed", type=int, default=None)
    run.add_argument("--out", type=Path, default=None, help="output folder (default runs/<slug>-<scale>)")
    run.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out")
    run.add_argument("--restart", action="store_true", help="delete the checkpoint in --out and start over")
    run.add_argument("--checkpoint-every", type=float, default=60.0, metavar="SECONDS",
                     help="minimum seconds between checkpoints of a running loop (default 60)")  # fmt: skip
    run.add_argument("--data-root", type=Path, default=None, help="folder with the external data the preset reads")
    run.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                     help="override one config field (repeatable)")  # fmt: skip
    run.add_argument("--no-figures", action="store_true", help="skip writing figure files")
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    run.add_argument("--yes", action="store_true", help="start a run whose settings far exceed every preset's")
    seeds = sub.add_parser("seeds", help="rerun a preset's claims over base seeds; write data/seed_studies/<slug>.json")
    seeds.add_argument("slug", help="chapter slug, e.g. omwu")
    seeds.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated base seeds (default 0,1,2,3,4)")
    seeds.add_argument("--scale", choices=SCALES, default="book")
    seeds.add_argument("--out", type=Path, default=None, help="folder for the study (default data/seed_studies)")
    plan = sub.add_parser("plan", help="measure what a preset costs: parameters, FLOPs, memory, projected GPU time")
    plan.add_argument("slug", help="chapter slug, e.g. rpkd")
    plan.add_argument("--scale", choices=SCALES, default="paper")
    plan.add_argument("--data-root", type=Path, default=None, help="read the preset's data from here (else synthetic)")
    plan.add_argument("--device", choices=("cpu",), default="cpu", help="where the measured steps run (cpu; "
                      "parts too slow for it run on torch's meta device)")  # fmt: skip
    plan.add_argument("--dry", action="store_true", help="one step per part, small batches (the test suite's mode)")
    plan.add_argument("--write", action="store_true", help="write data/plans/<slug>.json (the committed plan)")
    plan.add_argument("--json", action="store_true", help="print the plan as JSON instead of a table")
    return parser


def paper_needs(slug: str) -> str:
    """The ``paper`` preset's needs, generated from the committed plan (:func:`.core.plan.paper_hardware`)."""
    from .core.plan import paper_hardware

    return paper_hardware(slug)


def cmd_plan(args: argparse.Namespace) -> int:
    from .core.plan import write_plan
    from .plans import build_plan

    get_chapter(args.slug)
    if args.data_root is not None and not args.data_root.is_dir():
        raise ValueError(f"--data-root {args.data_root} is not a folder")
    if args.write and (args.dry or args.scale != "paper"):
        raise ValueError("--write records the full paper plan: drop --dry and --scale")
    data_root = str(args.data_root.resolve()) if args.data_root else ""
    plan = build_plan(args.slug, args.scale, data_root=data_root, dry=args.dry)
    print(json.dumps(plan.to_json(), indent=1) if args.json else plan.markdown())
    if args.write:
        print(f"wrote {write_plan(plan)}")
    return 0


def cmd_list() -> int:
    for chapter in CHAPTERS.values():
        config_cls = chapter.module().Config
        print(f"{chapter.number:02d}  {chapter.slug:<16} {chapter.title}")
        print(f"    presets: {', '.join(SCALES)}; paper preset needs: {paper_needs(chapter.slug)}")
        if config_cls.DATA_ROOT_SCALES:
            print(
                f"    --data-root needed at: {', '.join(config_cls.DATA_ROOT_SCALES)} ({config_cls.DATA_DESCRIPTION})"
            )
    return 0


def cmd_show(slug: str) -> int:
    """Each field of the chapter's config: its value in every preset, what it accepts, what it means."""
    chapter = get_chapter(slug)
    config_cls = chapter.module().Config
    presets = {scale: config_cls.preset(scale) for scale in SCALES}
    print(f"{chapter.number:02d}  {chapter.slug}: {chapter.title}")
    print(f"    paper preset needs: {paper_needs(chapter.slug)}")
    print("    change a setting with: --set NAME=VALUE (tuples: comma-separated)\n")
    for name, _value, allowed, doc in config_cls.describe_fields("book"):
        values = " · ".join(f"{scale} {_short(getattr(presets[scale], name))}" for scale in SCALES)
        print(f"  {name}: {doc}")
        print(f"      {values}")
        print(f"      accepts {allowed}")
    return 0


def _short(value: Any, width: int = 40) -> str:
    text = ",".join(map(str, value)) if isinstance(value, tuple) else repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def make_config(args: argparse.Namespace, chapter) -> Any:
    """The chapter's config for these arguments, or a ``ValueError`` with one clear line."""
    config_cls = chapter.module().Config
    config = config_cls.preset(args.scale).with_strings(args.assignments)
    overrides = {k: v for k, v in (("device", args.device), ("seed", args.seed)) if v is not None}
    if args.data_root is not None:
        if not args.data_root.is_dir():
            raise ValueError(f"--data-root {args.data_root} is not a folder")
        overrides["data_root"] = str(args.data_root.resolve())
    config = config.replace(**overrides)
    if args.scale in config_cls.DATA_ROOT_SCALES and not config.data_root:
        raise ValueError(
            f"--data-root is required for {chapter.slug} at scale {args.scale}: {config_cls.DATA_DESCRIPTION}"
        )
    return config


def check_run_arguments(args: argparse.Namespace, out: Path) -> None:
    """Refuse, before any work, the run options that cannot work (one clear line each)."""
    every = args.checkpoint_every
    if not (math.isfinite(every) and every >= 0):
        raise ValueError(f"--checkpoint-every must be a finite number of seconds >= 0, got {every}")
    if args.resume and args.restart:
        raise ValueError("--resume and --restart exclude each other: continue the run, or start it over")
    for parent in (out, *out.parents):
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"--out {out}: {parent} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {out} cannot be created ({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out} is not writable")
    links = sorted(p.name for p in out.iterdir() if p.is_symlink())
    if links:
        raise ValueError(f"--out {out} holds symbolic links ({', '.join(links[:3])}); the runner never writes "
                         "through links: remove them or choose another --out")  # fmt: skip
    marker = out / OUT_MARKER
    if not _is_regular(marker):
        ours = _runner_file(out / "config.json")  # results.json is ours only beside a config.json of ours
        foreign = sorted(p.name for p in out.iterdir() if not (_runner_file(p) or (ours and p.name == "results.json")))
        if foreign:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise ValueError(
                f"--out {out} is not marked as an explorables output folder and holds files explorables did not "
                f"write ({shown}); a run writes config.json, results.json, checkpoint.pt and figures there, "
                "overwriting files of those names: choose a new or empty folder, or, if it is an earlier "
                f"explorables run, mark it with 'touch {marker}'"
            )
        atomic_write_text(marker, MARKER_TEXT)


#: the file that marks a folder as an explorables output folder: written into every ``--out`` a run uses
#: (one it creates, or an empty one); a run refuses a folder without it that holds files it did not write
OUT_MARKER = ".explorables-run"
MARKER_TEXT = "an explorables output folder: runs write and overwrite their files here (python -m explorables run)\n"
#: what the runner writes before its results: an unmarked folder holding only these (and a config.json and
#: results.json of a run) is an earlier run's
_RUNNER_NAMES = frozenset({Checkpointer.FILENAME, FolderLock.NAME, FolderLock.OWNER})


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _runner_file(path: Path) -> bool:
    """Whether ``path`` (in an unmarked ``--out``) is a file a run of explorables writes: one of its own
    names, one of its temporaries, or a ``config.json`` that names a chapter (a config of someone else's
    is not ours to overwrite)."""
    if path.name in _RUNNER_NAMES or is_own_temporary(path.name):
        return True  # of any type: a damaged checkpoint.pt (a FIFO, a folder) is refused by its reader, naming it
    if path.name != "config.json" or not _is_regular(path) or os.lstat(path).st_size > 1024**2:
        return False
    try:
        config = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("chapter") in CHAPTERS


def cmd_run(args: argparse.Namespace) -> int:
    chapter = get_chapter(args.slug)
    config = make_config(args, chapter)
    outsized = config.outsized()
    if outsized and not args.yes:
        raise ValueError(
            f"{'; '.join(outsized)}: far more work than any preset plans for (it may run for years); "
            "pass --yes to start it anyway"
        )
    out = args.out or Path("runs") / f"{chapter.slug}-{args.scale}"
    info = init_distributed(config.device)
    if not info.is_main:
        return _run(args, chapter, config, out, info)
    check_run_arguments(args, out)
    with FolderLock(out):
        remove_stale_temporaries(out)
        if args.restart:
            (out / Checkpointer.FILENAME).unlink(missing_ok=True)
        return _run(args, chapter, config, out, info)


def _run(args: argparse.Namespace, chapter, config, out: Path, info) -> int:
    module = chapter.module()
    if info.distributed:
        config = config.replace(device=str(info.device))
    checkpoint = Checkpointer(out, every_s=args.checkpoint_every, resume=args.resume, enabled=info.is_main)
    checkpoint.bind(config.identity())  # before writing anything: a refused resume changes no file
    if info.is_main:
        out.mkdir(parents=True, exist_ok=True)
        if args.resume and not (out / Checkpointer.FILENAME).exists():
            print(f"explorables: no checkpoint in {out}; starting from the beginning", file=sys.stderr)
        if args.scale == "paper" and info.device.type == "cpu" and config.PAPER_WANTS_GPU:
            print("explorables: warning: the paper preset is running on the CPU (no GPU found)", file=sys.stderr)
        write_json(out / "config.json", {"chapter": chapter.slug, "scale": args.scale, **config.to_dict()})

    start = time.perf_counter()
    results = module.run(config, checkpoint=checkpoint, progress=info.is_main and not args.quiet)
    elapsed = time.perf_counter() - start
    if not info.is_main:
        shutdown()
        return 0

    write_json(out / "results.json", results.summary)
    written = ["config.json", "results.json"]
    figures = chapter.figures_module()
    if figures is not None and not args.no_figures:
        written += write_figures(figures.all_figures(results), out)
    if checkpoint.saves:
        written.append(Checkpointer.FILENAME)
    _print_summary(chapter, args, config, info, elapsed, checkpoint, out, written, module, results)
    shutdown()
    return 0


def write_figures(figures: dict[str, Any], out: Path) -> list[str]:
    """Each figure as standalone HTML (plotly.js written once beside them) and as PNG.

    PNG export (kaleido) drives a Chrome or Chromium installed on the machine, in a child process
    with a time limit (``explorables.png_export``); without a browser, or when the export fails or
    hangs, the PNGs are skipped with a warning and the HTML files remain.
    """
    names = []
    for name, fig in figures.items():
        fig.write_html(out / f"{name}.html", include_plotlyjs="directory", full_html=True)
        names.append(f"{name}.html")
    pngs, why_not = write_pngs(figures, out)
    if why_not is not None:
        print(f"explorables: PNG figures skipped ({why_not})", file=sys.stderr)
    return names + pngs


def _print_summary(chapter, args, config, info, elapsed, checkpoint, out, written, module, results) -> None:
    bar = "─" * 78
    lines = [
        bar,
        f"{chapter.slug} · scale {args.scale} · device {config.device}"
        + (f" × {info.world_size} processes" if info.distributed else "")
        + f" · seed {config.seed} · {elapsed:.1f} s"
        + (" (resumed)" if args.resume else ""),
        f"checkpoints: {checkpoint.saves} written, {checkpoint.seconds_saving:.2f} s in total",
    ]
    if hasattr(module, "headline"):
        lines += [f"  {line}" for line in module.headline(results)]
    lines += [f"wrote {out}/: {', '.join(written)}", bar]
    print("\n".join(lines))


def cmd_seeds(args: argparse.Namespace) -> int:
    """Run the seed study of one chapter and write it (see :mod:`explorables.core.seed_study`)."""
    from .core.seed_study import run_study, write_study

    get_chapter(args.slug)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"--seeds must be comma-separated integers, got {args.seeds!r}") from None
    if not seeds or any(s < 0 or s > 2**32 - 1 for s in seeds) or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds must be distinct integers in [0, 2**32 - 1], got {args.seeds!r}")
    study = run_study(args.slug, seeds, scale=args.scale, progress=True)
    path = write_study(study, args.out)
    split = [r["claim"] for r in study["rows"] if not r["agree"] and r["kind"] != "check"]
    print(f"wrote {path}; verdicts differ between base seeds on {len(split)} row(s)" + (": " if split else ""))
    for claim in split:
        print(f"  {claim}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = None
    if args.command in ("run", "seeds") and threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)  # a terminated run ends like Ctrl-C: one line
    try:
        return _dispatch(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _dispatch(args: argparse.Namespace) -> int:
    try:
        if args.command == "list":
            return cmd_show(args.slug) if args.slug else cmd_list()
        if args.command == "show":
            return cmd_show(args.slug)
        if args.command == "seeds":
            return cmd_seeds(args)
        if args.command == "plan":
            return cmd_plan(args)
        return cmd_run(args)
    except ValueError as exc:
        print(f"explorables: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # numpy's ArrayMemoryError too: a setting bigger than the machine, one line
        print(f"explorables: error: out of memory ({str(exc).splitlines()[0][:160]}); use smaller settings",
              file=sys.stderr)  # fmt: skip
        return 2
    except RuntimeError as exc:  # torch's allocator reports a failed allocation as a RuntimeError
        if "allocate" not in str(exc):
            raise
        reason = next((line for line in str(exc).splitlines() if "allocate" in line), "")[:200]
        print(f"explorables: error: out of memory ({reason.strip()}); use smaller settings", file=sys.stderr)
        return 2
    except OSError as exc:  # a disk full or a folder removed mid-run: one line, not a traceback
        print(f"explorables: error: {exc.strerror or exc} ({exc.filename or 'output'})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (see _terminate): the last checkpoint stays resumable
        print("explorables: interrupted; continue with the same command and --resume", file=sys.stderr)
        return 130


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
