"""Where a ``make test`` spends its CPU, every process counted, reaped or not (issue 38, ch/maketest9).

The conftest's CPU report counts a process only when some process of the session waits for it (``os.wait4``,
``RUSAGE_CHILDREN``): a process that nobody reaps (an orphan, a pool worker still alive at the report) is
missing from it, though ``/proc/stat`` shows the machine busy. This sampler reads ``/proc`` every ``--every``
seconds and keeps, for every process whose environment holds ``TAG=VALUE`` (set it on the ``make`` command:
every process it starts inherits it), its latest user + system CPU. A process that lives less than one
interval is missed here (its parent's count has it, once reaped). It stops when the process ``--pid``
ends and writes a JSON summary: CPU-s per pytest process (``first``/``second``: ``EXPLORABLES_TEST_PART``)
and kind of process (from its command line), and when each pytest process was last seen.

    MAKETEST9_TAG=1 make -o .venv/.installed test > log 2>&1 & \
    python benchmarks/maketest9_cpu_sampler.py --pid $! --out cpu.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

HZ = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> tuple[int, float, int] | None:
    """(starttime ticks, user + system CPU-s, ppid) of ``pid``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return int(fields[19]), (int(fields[11]) + int(fields[12])) / HZ, int(fields[1])


def _environ(pid: str) -> dict[str, str] | None:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def kind(cmd: str) -> str:
    """A coarse name for a process from its command line."""
    rules = [
        ("-m pytest", "pytest"),
        ("jupyter-book", "jupyter-book"),
        ("ipykernel", "kernel"),
        ("book_jobs", "book_jobs helper"),
        ("multiprocessing.spawn", "spawned worker"),
        ("multiprocessing.resource_tracker", "resource tracker"),
        ("loky", "loky worker"),
        ("chrom", "chromium"),
        ("headless_shell", "chromium"),
        ("node", "node (playwright)"),
        ("jupyter-lab", "jupyter lab"),
        ("jupyter lab", "jupyter lab"),
        ("-m explorables", "explorables CLI"),
        ("ruff", "ruff"),
        ("torchrun", "torch.distributed"),
    ]
    for needle, name in rules:
        if needle in cmd:
            return name
    return cmd.split(" ")[0].rsplit("/", 1)[-1][:30] or "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pid", type=int, required=True, help="stop when this process ends")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tag", default="MAKETEST9_TAG=1")
    parser.add_argument("--every", type=float, default=1.0)
    parser.add_argument("--snapshot-every", type=float, default=60.0, help="write the summary so far this often")
    args = parser.parse_args()
    key, value = args.tag.split("=", 1)
    t0 = time.monotonic()
    procs: dict[tuple[str, int], dict] = {}  # (pid, starttime) -> record
    untagged: set[tuple[str, int]] = set()
    loads, machine0, written = [], _machine(), time.monotonic()
    while Path(f"/proc/{args.pid}").exists():
        if time.monotonic() - written > args.snapshot_every:  # a summary so far, in case the run is stopped
            _write(args.out, procs, loads, machine0, t0)
            written = time.monotonic()
        now = time.monotonic() - t0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            st = _stat(pid)
            if st is None:
                continue
            ident = (pid, st[0])
            if ident in untagged:
                continue
            record = procs.get(ident)
            if record is None:
                env = _environ(pid)
                if env is None or env.get(key) != value:
                    untagged.add(ident)
                    continue
                cmd = _cmdline(pid)
                record = procs[ident] = {
                    "pid": pid,
                    "cmd": cmd[:300],
                    "kind": kind(cmd),
                    "part": "second" if env.get("EXPLORABLES_TEST_PART") == "site" else "first",
                    "first_seen": now,
                    "cpu": 0.0,
                    "ppid": st[2],
                }
            record["cpu"], record["last_seen"] = st[1], now
        loads.append((round(now), Path("/proc/loadavg").read_text().split()[0]))
        time.sleep(args.every)
    _write(args.out, procs, loads, machine0, t0)


def _write(out: Path, procs: dict, loads: list, machine0: tuple[float, float], t0: float) -> None:
    machine1 = _machine()
    by: dict[str, float] = {}
    for record in procs.values():
        name = f"{record['part']}: {record['kind']}"
        by[name] = by.get(name, 0.0) + record["cpu"]
    pytests = sorted((r for r in procs.values() if r["kind"] == "pytest"), key=lambda r: r["first_seen"])
    summary = {
        "wall_s": time.monotonic() - t0,
        "machine_busy_core_s": machine1[0] - machine0[0],
        "machine_total_core_s": machine1[1] - machine0[1],
        "tagged_cpu_s": sum(r["cpu"] for r in procs.values()),
        "by_part_and_kind": dict(sorted(by.items(), key=lambda kv: -kv[1])),
        "pytest_processes": [
            {k: r[k] for k in ("pid", "part", "first_seen", "last_seen", "cpu", "cmd")} for r in pytests
        ],
        "largest": sorted(
            ({k: r[k] for k in ("part", "kind", "cpu", "first_seen", "last_seen", "cmd")} for r in procs.values()),
            key=lambda r: -r["cpu"],
        )[:40],
        "load_average_1min": loads[:: max(1, len(loads) // 120)],
    }
    out.write_text(json.dumps(summary, indent=1))


def _machine() -> tuple[float, float]:
    ticks = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    total = sum(ticks[:8])
    return (total - ticks[3] - ticks[4]) / HZ, total / HZ


if __name__ == "__main__":
    main()
