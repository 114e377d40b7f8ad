"""Shared test configuration and the session-wide book build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

# Determinism and speed on the 2-core CI machine: one intra-op thread per test process.
torch.set_num_threads(int(os.environ.get("EXPLORABLES_TEST_THREADS", "1")))

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]-*.md"))


@pytest.fixture(scope="session")
def built_book() -> Path:
    """Build the book once per session (as ``make book`` does) and return ``_build/html``.

    Chapters execute through jupyter-cache, so an unchanged chapter is not executed again.
    """
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--warningiserror", "--keep-going"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if proc.returncode != 0:
        log = f"{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
        pytest.fail(f"jupyter-book build failed (exit {proc.returncode}):\n{log}")
    return HTML


#: filled by the browser tests, printed at the end of the session (``pytest_terminal_summary``)
PAGE_WEIGHTS: list[str] = []


def pytest_terminal_summary(terminalreporter):
    if PAGE_WEIGHTS:
        terminalreporter.section("page weights")
        for line in PAGE_WEIGHTS:
            terminalreporter.write_line(line)
