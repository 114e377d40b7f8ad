"""Shared test configuration and the session-wide book build."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch

from . import api_fuzz

# Determinism and speed on the 2-core CI machine: one intra-op thread per test process.
torch.set_num_threads(int(os.environ.get("EXPLORABLES_TEST_THREADS", "1")))

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]-*.md"))


#: the background ``jupyter-book build`` (started once collection shows a test that needs the site)
_BOOK_BUILD: dict = {}


def _start_book_build() -> None:
    """Start the session's book build in the background, as ``make book`` does.

    The build executes the chapters one after another, mostly on one core; the tests that do not
    need the site run meanwhile on the other, so ``make test`` takes about the longer of the two
    instead of their sum. Chapters execute through jupyter-cache, so an unchanged chapter is not
    executed again.
    """
    if _BOOK_BUILD:
        return
    jb = Path(sys.executable).with_name("jupyter-book")
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [str(jb), "build", str(ROOT), "--warningiserror", "--keep-going"],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, so that stopping it also stops its kernels
    )
    _BOOK_BUILD.update(proc=proc, log=log, started=time.monotonic())


@pytest.fixture(scope="session")
def built_book(request, tmp_path_factory) -> Path:
    """Wait for the session's book build (started in the background) and return ``_build/html``.

    If the session also asks for the student edition (:func:`student_site`), that build starts now,
    in the background too: it reuses this build's execution cache, and runs while the browser tests load
    the pages of this one.
    """
    _start_book_build()
    proc, log = _BOOK_BUILD["proc"], _BOOK_BUILD["log"]
    waited = time.monotonic()
    try:
        returncode = proc.wait(timeout=3600)
        _BOOK_BUILD.setdefault("timing", (waited - _BOOK_BUILD["started"], time.monotonic() - waited))
    except subprocess.TimeoutExpired:
        _stop_book_build()
        pytest.fail("jupyter-book build did not finish within an hour")
    if returncode != 0:
        log.seek(0)
        pytest.fail(f"jupyter-book build failed (exit {returncode}):\n{log.read()[-12000:]}")
    if any("student_site" in getattr(item, "fixturenames", ()) for item in request.session.items):
        _start_student_build(tmp_path_factory.mktemp("student"))
    return HTML


#: the background ``make student`` build (started when :func:`built_book` has finished)
_STUDENT_BUILD: dict = {}


def _start_student_build(out: Path) -> None:
    if _STUDENT_BUILD:
        return
    jb = Path(sys.executable).with_name("jupyter-book")
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [str(jb), "build", str(ROOT), "--path-output", str(out), "--warningiserror", "--keep-going"],
        cwd=ROOT,
        env={**os.environ, "EXPLORABLES_EDITION": "student"},
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    _STUDENT_BUILD.update(proc=proc, log=log, out=out)


@pytest.fixture(scope="session")
def student_site(built_book, tmp_path_factory) -> Path:
    """``make student`` (EXPLORABLES_EDITION=student) after ``built_book`` (the website, the
    instructor edition); it reuses that build's execution cache. Returns its ``_build/html``."""
    if not _STUDENT_BUILD:  # built_book started it, unless the session collected no test that asks for it
        _start_student_build(tmp_path_factory.mktemp("student"))
    proc, log = _STUDENT_BUILD["proc"], _STUDENT_BUILD["log"]
    try:
        returncode = proc.wait(timeout=1800)
    except subprocess.TimeoutExpired:
        _stop_book_build()
        pytest.fail("the student edition did not finish within 30 minutes")
    if returncode != 0:
        log.seek(0)
        pytest.fail(f"student edition failed (exit {returncode}):\n{log.read()[-8000:]}")
    return _STUDENT_BUILD["out"] / "_build" / "html"


def _stop_book_build() -> None:
    """Kill an unfinished build with the chapter kernels it started (its whole process group)."""
    for build in (_BOOK_BUILD, _STUDENT_BUILD):
        proc = build.get("proc")
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _needs_the_site(item) -> bool:
    return "built_book" in getattr(item, "fixturenames", ())


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
    if "timing" in _BOOK_BUILD:  # where make test's time goes: the build beside the other tests, then the wait
        before, wait = _BOOK_BUILD["timing"]
        terminalreporter.section("book build")
        terminalreporter.write_line(f"the other tests ran for {before:.0f} s beside the background build, "
                                    f"then waited {wait:.0f} s for it to finish")
    if PAGE_WEIGHTS:
        terminalreporter.section("page weights")
        for line in PAGE_WEIGHTS:
            terminalreporter.write_line(line)


# The API fuzz (tests/test_api_fuzz.py) replays the valid calls the other tests make: record them
# from the start of the session, and run the fuzz after every other test but those that only read the
# built site (they call no chapter code).
def pytest_configure(config):
    if os.environ.get("EXPLORABLES_API_FUZZ", "1") != "0":
        api_fuzz.RECORDER = api_fuzz.Recorder()
        api_fuzz.RECORDER.install()


# The tests that need the built site run last, so that the background build overlaps the rest.
def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: (_needs_the_site(item), item.nodeid.startswith("tests/test_api_fuzz.py")))


def pytest_collection_finish(session):
    if not session.config.option.collectonly and any(_needs_the_site(item) for item in session.items):
        _start_book_build()


def pytest_sessionfinish(session, exitstatus):
    _stop_book_build()  # if the session ended before a test waited for the site
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
