"""Shared test configuration and the session-wide book build."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from . import api_fuzz

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
    if api_fuzz.REPORT:
        terminalreporter.section("API fuzz")
        for line in api_fuzz.report_lines():
            terminalreporter.write_line(line)
    if api_fuzz.CLI_REPORT:
        terminalreporter.section("command-line fuzz")
        for line in api_fuzz.cli_report_lines():
            terminalreporter.write_line(line)
    if PAGE_WEIGHTS:
        terminalreporter.section("page weights")
        for line in PAGE_WEIGHTS:
            terminalreporter.write_line(line)


# The API fuzz (tests/test_api_fuzz.py) replays the valid calls the other tests make: record them
# from the start of the session, and run the fuzz after every other test.
def pytest_configure(config):
    if os.environ.get("EXPLORABLES_API_FUZZ", "1") != "0":
        api_fuzz.RECORDER = api_fuzz.Recorder()
        api_fuzz.RECORDER.install()


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.nodeid.startswith("tests/test_api_fuzz.py"))


def pytest_sessionfinish(session, exitstatus):
    dump = os.environ.get("EXPLORABLES_API_FUZZ_DUMP")
    if dump and api_fuzz.RECORDER is not None:
        api_fuzz.RECORDER.dump(Path(dump))
    if api_fuzz.RECORDER is not None:
        api_fuzz.RECORDER.uninstall()
        # release the kept calls now: they hold gudhi/multipers objects (nanobind), which would
        # otherwise still be alive at interpreter exit and be reported as leaks after the summary
        api_fuzz.RECORDER.records.clear()
        api_fuzz.RECORDER = None
        gc.collect()
