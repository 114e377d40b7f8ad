"""Issue 53, item 1: a run killed inside a checkpointed loop resumes to exactly the uninterrupted run.

Each chapter's smoke run is interrupted twice, right after a loop-state save a third and two thirds of
the way through its loop saves (a save is where a kill leaves the checkpoint: whatever the process did
after its last save is lost, so stopping right after a save is every kill in that stretch), resumed
each time from the checkpoint with torch's global random state disturbed in between, and its summary
and curves (the figures' arrays) are compared with an uninterrupted run's, bit for bit.

Four chapters run here (fast smoke runs that checkpoint inside loops: loops of training, of game
dynamics and of seeds); ``EXPLORABLES_RESUME_ALL=1`` runs all nineteen (about 10 minutes on 2 cores).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
import torch

from explorables.chapters import CHAPTERS
from explorables.core.checkpoint import Checkpointer

FAST = ("omwu", "virtualflow", "uggrh", "dcdm")
SLUGS = sorted(CHAPTERS) if os.environ.get("EXPLORABLES_RESUME_ALL") else FAST


class Killed(Exception):
    """Stands for SIGKILL: raised right after the checkpoint file is written."""


class KillingCheckpointer(Checkpointer):
    """A checkpointer that records every save's name and raises :class:`Killed` after its ``kill_after``-th."""

    def __init__(self, folder, kill_after: int | None = None, resume: bool = False):
        super().__init__(folder, every_s=0.0, resume=resume)
        self.kill_after = kill_after
        self.names: list[str] = []

    def save(self, name, value, *, drop=()):
        super().save(name, value, drop=drop)
        self.names.append(name)
        if self.kill_after is not None and len(self.names) >= self.kill_after:
            raise Killed(name)


def _differences(a, b, path=""):
    """Where ``a`` and ``b`` (nested dicts, lists, arrays, numbers) differ; NaN equals NaN."""
    if isinstance(a, dict):
        if not isinstance(b, dict) or set(a) != set(b):
            return [f"{path} (keys)"]
        return [d for k in a for d in _differences(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, (list, tuple)):
        if not isinstance(b, (list, tuple)) or len(a) != len(b):
            return [f"{path} (length)"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{path}[{i}]")]
    if isinstance(a, (np.ndarray, torch.Tensor)) or isinstance(b, (np.ndarray, torch.Tensor)):
        x, y = np.asarray(a), np.asarray(b)
        same = x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc" and y.dtype.kind in "fc")
        return [] if same else [path]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return []
    return [] if a == b else [path]


def _without_timings(value):
    """``value`` without its wall-clock entries (``timings``, ``*_s``, ``*seconds*``), which may differ."""
    if isinstance(value, dict):
        kept = {k: v for k, v in value.items() if not (k == "timings" or k.endswith("_s") or "seconds" in k)}
        return {k: _without_timings(v) for k, v in kept.items()}
    if isinstance(value, (list, tuple)):
        return [_without_timings(v) for v in value]
    return value


@pytest.mark.parametrize("slug", SLUGS)
def test_a_run_killed_inside_its_loops_resumes_bit_for_bit(tmp_path, slug):
    module = CHAPTERS[slug].module()
    config = module.Config.preset("smoke")
    recorder = KillingCheckpointer(tmp_path / "whole")
    whole = module.run(config, checkpoint=recorder)
    loop_saves = [i + 1 for i, name in enumerate(recorder.names) if not name.startswith("part/")]
    saves = loop_saves or list(range(1, len(recorder.names) + 1))  # a chapter without loops: kill between parts
    kills = sorted({saves[len(saves) // 3], saves[(2 * len(saves)) // 3]} - {len(recorder.names)})
    assert kills, f"{slug}: no save to kill after"
    folder, done = tmp_path / "killed", 0
    for kill in kills:
        with pytest.raises(Killed):
            module.run(config, checkpoint=KillingCheckpointer(folder, kill_after=kill - done, resume=done > 0))
        done = kill
        torch.manual_seed(12345)  # whatever the process did before it died
        np.random.seed(54321)  # noqa: NPY002 - disturbing the legacy global state on purpose
    resumed = module.run(config, checkpoint=KillingCheckpointer(folder, resume=True))
    assert _differences(_without_timings(whole.summary), _without_timings(resumed.summary)) == []
    assert _differences(_without_timings(whole.curves), _without_timings(resumed.curves)) == []
