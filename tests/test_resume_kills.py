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

import os

import numpy as np
import pytest
import torch

from explorables.chapters import CHAPTERS
from explorables.core.checkpoint import Checkpointer

from .trees import differences as _differences
from .trees import without_timings as _without_timings

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
