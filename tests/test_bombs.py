"""Issue 53, item 4: settings that would run away (processes, steps, memory) are capped or refused in one
line before any work, and Ctrl-C ends a run in one line with a resumable checkpoint."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from explorables import cli
from explorables.chapters import CHAPTERS
from explorables.cli import main
from explorables.core.checkpoint import Checkpointer, read_checkpoint
from explorables.core.config import SCALES, usable_cpus

RUN = ["run", "--scale", "smoke", "--quiet", "--no-figures"]


@pytest.mark.parametrize("workers", [500, 4294967295])
@pytest.mark.parametrize("slug", ["trac", "tomato_mp", "topoprune"])
def test_workers_never_exceed_the_cpus(slug, workers):
    config = CHAPTERS[slug].module().Config.preset("smoke", workers=workers)
    assert 1 <= config.workers <= usable_cpus()


@pytest.mark.parametrize(
    ("slug", "setting"),
    [("muon", "n_lm_steps=4294967295"), ("tomato_mp", "n_points=100000000"), ("dcdm", "n_image_steps=4000000000")],
)
def test_outsized_work_is_refused_in_one_line_unless_told(tmp_path, capsys, slug, setting):
    out = tmp_path / "out"
    assert main([*RUN[:1], slug, *RUN[1:], "--out", str(out), "--set", setting]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and setting.split("=")[0] in err and "--yes" in err
    assert not out.exists()  # nothing was started


def test_no_preset_is_outsized_against_itself():
    for chapter in CHAPTERS.values():
        config_cls = chapter.module().Config
        for scale in SCALES:
            assert config_cls.preset(scale).outsized() == [], (chapter.slug, scale)


@pytest.mark.parametrize(
    "error",
    [
        MemoryError("Unable to allocate 1.49 GiB for an array with shape (100000000, 2)"),
        RuntimeError("[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory: 12000000000000"),
    ],
    ids=["numpy", "torch"],
)
def test_an_allocation_bigger_than_the_machine_is_one_line(monkeypatch, capsys, error):
    """What muon's lm_d_model=1000000 raised deep inside torch (a 12 TB tensor), as the runner reports it."""

    def run(args):
        raise error

    monkeypatch.setattr(cli, "cmd_run", run)
    assert main([*RUN[:1], "muon", *RUN[1:]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "out of memory" in err


@pytest.mark.parametrize("value", ["10,10,10", "100,100"])
def test_a_grid_with_repeated_points_is_refused(capsys, value):
    assert main(["run", "omwu", "--scale", "smoke", "--set", f"horizon_grid={value}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "horizon_grid" in err and "repeated" in err


def test_ctrl_c_ends_in_one_line_and_the_run_can_resume(tmp_path):
    args = [sys.executable, "-m", "explorables", *RUN[:1], "omwu", *RUN[1:], "--out", str(tmp_path),
            "--checkpoint-every", "0"]  # fmt: skip
    # SIGINT back to its default in the child: a shell that starts a job in the background ignores it
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    while proc.poll() is None and not (tmp_path / Checkpointer.FILENAME).exists():
        time.sleep(0.02)  # bounded by the run itself: it ends on its own if never signalled
    if proc.poll() is not None:
        pytest.fail("the smoke run ended before its first checkpoint")
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=300)[1].strip()
    assert proc.returncode == 130, err
    assert err.splitlines() == ["explorables: interrupted; continue with the same command and --resume"]
    read_checkpoint(tmp_path / Checkpointer.FILENAME)
    assert main([*RUN[:1], "omwu", *RUN[1:], "--out", str(tmp_path), "--resume"]) == 0
