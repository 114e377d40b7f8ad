"""Same numbers, cheaper step (session 84, issue 41): one book-preset run of unirap on a tuning base seed with the
code on ``PYTHONPATH`` (main's, or this branch's), saved whole (summary and curves, tensors included) with its CPU
seconds; ``--compare A B`` then checks two saved runs for exact equality, value by value.

    PYTHONPATH=/tmp/unirap_main/src python benchmarks/unirap_sameness.py run --out /tmp/main_310.pt
    PYTHONPATH=src python benchmarks/unirap_sameness.py run --out /tmp/branch_310.pt
    python benchmarks/unirap_sameness.py compare /tmp/main_310.pt /tmp/branch_310.pt
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np
import torch


def cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def do_run(args: argparse.Namespace) -> None:
    from explorables.unirap import experiment

    cfg = experiment.UniRAPConfig.preset("book", seed=args.base_seed, processes=args.processes)
    c0, w0 = cpu_seconds(), time.perf_counter()
    res = experiment.run(cfg)
    cpu, wall = cpu_seconds() - c0, time.perf_counter() - w0
    torch.save({"summary": res.summary, "curves": res.curves, "cpu": cpu, "wall": wall,
                "source": experiment.__file__}, args.out)
    print(f"{experiment.__file__}: base seed {args.base_seed}, processes {args.processes}: "
          f"CPU {cpu:.1f} s, wall {wall:.1f} s", flush=True)


def walk(a, b, path: str, out: list) -> None:
    """Every leaf of ``a`` against ``b``: appends (path, equal, largest absolute difference)."""
    if isinstance(a, dict):
        if set(a) != set(b):
            out.append((path + " keys", False, float("nan")))
        for k in a:
            if k in b:
                walk(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, (list, tuple)) and not (a and isinstance(a[0], (int, float))):
        if len(a) != len(b):
            out.append((path + " len", False, float("nan")))
        for i, (x, y) in enumerate(zip(a, b, strict=False)):  # a length mismatch is reported above
            walk(x, y, f"{path}[{i}]", out)
    elif isinstance(a, torch.Tensor):
        eq = a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b))
        diff = float((a.double() - b.double()).abs().max()) if a.shape == b.shape and a.numel() else 0.0
        out.append((path, eq, diff))
    elif isinstance(a, np.ndarray) or isinstance(a, (list, tuple)):
        x, y = np.asarray(a), np.asarray(b)
        eq = x.shape == y.shape and x.dtype == y.dtype and bool(np.array_equal(x, y))
        diff = float(np.abs(x.astype(float) - y.astype(float)).max()) if x.shape == y.shape and x.size \
            and x.dtype.kind in "fiub" else 0.0
        out.append((path, eq, diff))
    elif isinstance(a, float) and isinstance(b, float):
        out.append((path, a == b or (a != a and b != b), abs(a - b)))
    else:
        out.append((path, a == b, float("nan") if a != b else 0.0))


def do_compare(args: argparse.Namespace) -> None:
    a, b = torch.load(args.a, weights_only=False), torch.load(args.b, weights_only=False)
    out: list = []
    # the parts' wall seconds are the only values that may differ (timings, not numbers): shown, not compared
    timings = [a["summary"].pop("timings", None), b["summary"].pop("timings", None)]
    print(f"part timings (wall s, not compared): {timings[0]} vs {timings[1]}")
    walk(a["summary"], b["summary"], "summary", out)
    walk(a["curves"], b["curves"], "curves", out)
    bad = [o for o in out if not o[1]]
    print(f"{args.a} ({a['cpu']:.1f} CPU s) vs {args.b} ({b['cpu']:.1f} CPU s): {len(out)} leaves compared, "
          f"{len(bad)} differ")
    largest = max((o[2] for o in out if o[2] == o[2]), default=0.0)
    print(f"largest absolute difference: {largest:.3g}")
    kinds: dict[str, int] = {}
    for path, _, _ in out:
        top = "/".join(path.split("/")[:3])
        kinds[top] = kinds.get(top, 0) + 1
    print("leaves per part: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    for path, _, diff in bad[:40]:
        print(f"  differs: {path} (max |diff| {diff:.3g})")
    sys.exit(1 if bad else 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--base-seed", type=int, default=310)
    r.add_argument("--processes", type=int, default=0)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = parser.parse_args()
    if args.cmd == "run" and args.base_seed < 100:
        raise ValueError("base seeds 0-4 are the evaluation seeds: use a tuning base seed (>= 100)")
    do_run(args) if args.cmd == "run" else do_compare(args)


if __name__ == "__main__":
    main()
