"""How much memory this machine gives the process, and the check that refuses a run that cannot fit.

A chapter's config estimates the bytes its largest arrays need
(:meth:`~explorables.core.config.ExperimentConfig.memory_estimate`); ``validated()`` compares the
total with :func:`available_memory_bytes` *before any work starts*, so ``--set n_points=1e8``
gets one clear line with the estimate instead of a memory traceback an hour later.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path

from .threads import CGROUP, _own_cgroups

GIB = 2**30


def cgroup_memory_limit(root: Path = CGROUP, proc_cgroup: Path = Path("/proc/self/cgroup")) -> int | None:
    """The memory limit of this process's cgroup in bytes (v2 ``memory.max``, v1
    ``memory.limit_in_bytes``), or ``None`` if unlimited or unreadable."""
    for own in _own_cgroups(proc_cgroup):
        for folder in (root / own.lstrip("/"), root):
            for name in ("memory.max", "memory/memory.limit_in_bytes", "memory.limit_in_bytes"):
                try:
                    text = (folder / name).read_text().strip()
                except OSError:
                    continue
                if text and text != "max" and text.isdigit() and int(text) < 2**60:
                    return int(text)
    return None


def available_memory_bytes() -> int:
    """Physical memory, capped by the cgroup limit; ``EXPLORABLES_MEMORY_GB`` overrides both."""
    override = os.environ.get("EXPLORABLES_MEMORY_GB", "").strip()
    if override:
        try:
            value = float(override)
        except ValueError:
            value = -1.0
        if not value > 0:
            raise ValueError(f"EXPLORABLES_MEMORY_GB must be a positive number of GiB, got {override!r}")
        return int(value * GIB)
    return _machine_memory_bytes()


@functools.lru_cache(maxsize=1)
def _machine_memory_bytes() -> int:
    """Read once per process: the cgroup files take a millisecond, and every checked call may ask."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limit = cgroup_memory_limit()
    return min(physical, limit) if limit else physical


def check_memory(estimate: Mapping[str, float], budget: int | None = None) -> None:
    """Raise ``ValueError`` when the estimated bytes exceed the machine's memory.

    ``estimate`` maps what needs the memory (named by the config fields that set its size, e.g.
    ``"random games (n_random_games x random_game_size^2)"``) to bytes; the message lists them,
    largest first.
    """
    total = float(sum(estimate.values()))
    budget = available_memory_bytes() if budget is None else budget
    if total <= budget:
        return
    parts = sorted(estimate.items(), key=lambda item: -item[1])
    listed = "; ".join(f"{name}: {size / GIB:,.1f} GiB" for name, size in parts if size >= 0.01 * total)
    raise ValueError(
        f"this configuration needs about {total / GIB:,.1f} GiB of memory, more than the {budget / GIB:,.1f} GiB "
        f"this machine has ({listed}); make the fields named there smaller"
    )
