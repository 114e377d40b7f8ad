"""Command line: ``python -m explorables run <slug> --scale {smoke,book,paper}`` and ``list``.

The command builds the chapter's config from a preset (plus ``--set key=value`` overrides),
calls the same ``run(config)`` as the notebook and the tests, and writes to ``--out``:
``config.json``, ``results.json`` (plain JSON) and one standalone HTML file per figure
(plotly.js is written once beside them, so the files open offline).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from .chapters import CHAPTERS, get_chapter
from .core.config import SCALES
from .core.device import DEVICE_CHOICES


def _jsonable(value: Any) -> Any:
    """Plain JSON: non-finite floats become strings ("inf", "nan") so any JSON reader accepts them."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _write_json(path: Path, payload: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(_jsonable(payload), indent=2, allow_nan=False))
    tmp.replace(path)  # atomic on POSIX: readers see the old file or the new one


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="explorables", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list chapters, their presets and what the paper preset needs")
    run = sub.add_parser("run", help="run a chapter's experiment at a given scale")
    run.add_argument("slug", help="chapter slug, e.g. omwu")
    run.add_argument("--scale", choices=SCALES, default="book")
    run.add_argument("--device", choices=DEVICE_CHOICES, default=None, help="default: the preset's")
    run.add_argument("--seed", type=int, default=None)
    run.add_argument("--out", type=Path, default=None, help="output folder (default runs/<slug>-<scale>)")
    run.add_argument(
        "--set",
        dest="assignments",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config field (repeatable)",
    )
    run.add_argument("--no-figures", action="store_true", help="skip writing figure files")
    return parser


def cmd_list() -> int:
    for chapter in CHAPTERS.values():
        config_cls = chapter.module().Config
        print(f"{chapter.number:02d}  {chapter.slug:<16} {chapter.title}")
        print(f"    presets: {', '.join(SCALES)}; paper preset needs: {config_cls.PAPER_HARDWARE}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    chapter = get_chapter(args.slug)
    module = chapter.module()
    config = module.Config.preset(args.scale)
    overrides = {k: v for k, v in (("device", args.device), ("seed", args.seed)) if v is not None}
    config = config.replace(**overrides).with_strings(args.assignments)
    out = args.out or Path("runs") / f"{chapter.slug}-{args.scale}"
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / "config.json", {"chapter": chapter.slug, "scale": args.scale, **config.to_dict()})

    start = time.perf_counter()
    results = module.run(config)
    elapsed = time.perf_counter() - start
    _write_json(out / "results.json", results.summary)

    written = []
    figures = chapter.figures_module()
    if figures is not None and not args.no_figures:
        for name, fig in figures.all_figures(results).items():
            path = out / f"{name}.html"
            fig.write_html(path, include_plotlyjs="directory", full_html=True)
            written.append(path.name)
    print(f"{chapter.slug} · scale={args.scale} · device={config.device} · seed={config.seed} · {elapsed:.1f} s")
    print(f"wrote {out}/: config.json, results.json" + (f", {', '.join(written)}" if written else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            return cmd_list()
        return cmd_run(args)
    except ValueError as exc:
        print(f"explorables: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
