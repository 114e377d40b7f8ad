"""How many threads torch and BLAS use: the CPUs this process may actually run on.

torch and the BLAS libraries start one thread per CPU they *see*. Binder, Colab, containers and
shared machines often give a process fewer CPUs than it sees (a CPU affinity mask, or a cgroup
CPU quota), and then every parallel region waits for threads that are not running: a chapter
can take several times longer. :func:`configure` sets the thread count once, when
``explorables`` is imported, to

* ``EXPLORABLES_THREADS`` if that environment variable is set (a positive integer), else
* the CPUs available: ``len(os.sched_getaffinity(0))``, capped by the cgroup CPU quota rounded
  up (cgroup v2 ``cpu.max``, or v1 ``cpu.cfs_quota_us / cpu.cfs_period_us``), and by the
  number of physical cores (torch's own default: it does not use hyper-threads).

Where nothing limits the process this is the machine's physical core count, which is what torch
uses anyway, so results do not change. It never *raises* a thread count someone already lowered
(``torch.set_num_threads(1)`` in a test, ``OMP_NUM_THREADS=1`` in the environment), unless
``EXPLORABLES_THREADS`` asks for it.

It also sets ``OMP_WAIT_POLICY=PASSIVE`` (unless set): torch's OpenMP threads then sleep while
they wait for each other instead of spinning. On a CPU that other programs keep busy, spinning
threads steal the time the working ones need: on this book's loaded 2-core machine a torch
chapter ran 2-9x slower with spinning than with sleeping threads (``benchmarks/threads.md``).
The thread count, hence every number, stays the same. A loop of tiny ops pays for it: each
parallel region then wakes a sleeping thread, which costs more than the op; such a loop runs on one
thread (:func:`threads_for`). Like the
thread variables it takes effect only if torch has not started yet, which is the case when a
notebook's first import is ``explorables`` (the notebook copies' first cell does it) and for the
kernels the book build starts (they inherit the build's environment).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# psutil, not joblib.cpu_count: importing joblib imports numpy, whose BLAS would start its threads
# before configure() sets their count (psutil imports neither numpy nor torch)
import psutil

ENV = "EXPLORABLES_THREADS"
#: read by OpenMP (torch's intra-op pool), MKL, OpenBLAS and numexpr when they start
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")
#: OpenMP threads sleep, not spin, while waiting (read when torch's OpenMP runtime starts)
WAIT_POLICY = ("OMP_WAIT_POLICY", "PASSIVE")
CGROUP = Path("/sys/fs/cgroup")

_applied: int | None = None


def cgroup_cpu_limit(root: Path = CGROUP, proc_cgroup: Path = Path("/proc/self/cgroup")) -> float | None:
    """The CPU quota of this process's cgroup in CPUs (e.g. ``1.5``), or ``None`` if unlimited."""
    for own in _own_cgroups(proc_cgroup):
        for folder in (root / own.lstrip("/"), root):  # inside a container the cgroup is mounted at root
            limit = _read_limit(folder) or _read_limit(folder / "cpu") or _read_limit(root / "cpu" / own.lstrip("/"))
            if limit is not None:
                return limit
    return None


def _own_cgroups(proc_cgroup: Path) -> list[str]:
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return ["/"]
    paths = [line.split(":", 2)[2] for line in lines if line.count(":") >= 2]
    return [p for p in paths if p] or ["/"]


def _read_limit(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]  # cgroup v2: "max 100000" or "150000 100000"
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())  # cgroup v1: -1 when unlimited
        period = int((folder / "cpu.cfs_period_us").read_text())
        return None if quota <= 0 or period <= 0 else quota / period
    except (OSError, ValueError):
        return None


def physical_cores() -> int:
    """The machine's physical cores, hyper-threads not counted (``psutil``), or ``os.cpu_count()`` if unknown."""
    return psutil.cpu_count(logical=False) or os.cpu_count() or 1


def available_cpus() -> int:
    """CPUs this process can run on: its affinity mask, capped by its cgroup quota and by the
    physical core count (at least 1)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        cpus = os.cpu_count() or 1
    limit = cgroup_cpu_limit()
    if limit is not None:
        cpus = min(cpus, math.ceil(limit))
    return max(1, min(cpus, physical_cores()))


def worker_count(requested: int, n_tasks: int) -> int:
    """Processes for ``n_tasks`` independent tasks: ``requested`` (0: every CPU this process may use,
    :func:`available_cpus`), never more than the tasks, at least one. A chapter's numbers never depend
    on it; more processes than tasks or CPUs only fork and wait."""
    if n_tasks < 0 or requested < 0:
        raise ValueError(f"requested and n_tasks must be >= 0, got requested={requested}, n_tasks={n_tasks}")
    return max(1, min(n_tasks, requested or available_cpus()))


def thread_count() -> int:
    """``EXPLORABLES_THREADS`` if set, else :func:`available_cpus`."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return available_cpus()
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{ENV} must be a positive integer (a thread count), got {value!r}")
    return count


def configure() -> int:
    """Apply :func:`thread_count` once to torch and the BLAS libraries; returns the count.

    Libraries not loaded yet get it through their environment variables (only where unset);
    torch, if already imported, and BLAS pools that are already running (through
    ``threadpoolctl``) are lowered to it, never raised, unless ``EXPLORABLES_THREADS`` is set.
    """
    global _applied
    if _applied is not None:
        return _applied
    count = thread_count()
    os.environ.setdefault(*WAIT_POLICY)
    forced = bool(os.environ.get(ENV, "").strip())
    for name in THREAD_ENV:
        if forced:
            os.environ[name] = str(count)
        else:
            os.environ.setdefault(name, str(count))
    torch = sys.modules.get("torch")
    if torch is not None and (forced or torch.get_num_threads() > count):
        torch.set_num_threads(count)
    if any(m in sys.modules for m in ("numpy", "scipy", "sklearn")):
        _limit_blas(count, forced)
    _applied = count
    return count


def _limit_blas(count: int, forced: bool) -> None:
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return
    if forced:
        threadpool_limits(count)
        return
    for pool in threadpool_info():
        if pool.get("num_threads", 0) > count:
            threadpool_limits({pool["prefix"]: count})


#: torch's ``at::internal::GRAIN_SIZE``: below it torch runs an element-wise op on one thread anyway
TORCH_GRAIN_SIZE = 32_768


@contextmanager
def threads_for(elements: int, device: Any = "cpu") -> Iterator[None]:
    """One torch thread (:func:`one_cpu_thread`) for a loop over tensors of fewer than
    :data:`TORCH_GRAIN_SIZE` elements on the CPU; the thread count as it is otherwise.

    In a loop of ops that small the only parallel work is an op that splits a batch over the threads
    (``bmm``), and with ``OMP_WAIT_POLICY=PASSIVE`` every such region first wakes a sleeping thread:
    the OMWU kernel on 64 4x4 games ran at 0.15 CPU-s with two threads and 0.10 with one, and at 1.9
    CPU-s where threads spin (``benchmarks/hot_paths.md``). The ops of such a loop compute each batch
    entry and each element on one thread either way, so the numbers do not change.
    """
    if elements < TORCH_GRAIN_SIZE:
        with one_cpu_thread(device):
            yield
    else:
        yield


@contextmanager
def one_cpu_thread(device: Any = "cpu") -> Iterator[None]:
    """Run a block on one torch thread when ``device`` is the CPU, then restore the count.

    Tiny models and small matrices gain nothing from a second thread, and on a loaded machine
    waiting for it costs up to ~50x (measured: 300 Muon steps on 20x20, 22 s with two threads vs
    0.3 s with one). The numbers then also do not depend on the core count. Restored on errors too.
    ``device``: a ``torch.device`` or its name.
    """
    import torch  # here, not at the top: this module runs before torch is first imported

    if torch.device(device).type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
