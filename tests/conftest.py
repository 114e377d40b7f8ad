"""Shared test configuration and the session-wide book build."""

from __future__ import annotations

import gc
import inspect
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
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


#: the background ``jupyter-book build``: started once collection shows a test that needs the site (``make test-site``,
#: CI's book step; ``make test`` selects none)
_BOOK_BUILD: dict = {}
#: the background ``make student`` build, started as soon as the book build has finished; a thread reaps
#: it when it ends (:func:`_watch_student_build`)
_STUDENT_BUILD: dict = {}
#: the student edition's output folder, set at the end of collection when a collected test asks for it
_STUDENT_OUT: list[Path] = []
_BUILD_LOCK = threading.Lock()
#: work on a built edition (``instructor``: the website, or ``student``) that a test module registers
#: (:func:`register_site_work`) and a collected test asks for through the fixture of the same name: started
#: in a thread of its own as soon as that edition's build ends, beside the tests still running (the site
#: phase mostly waits on page loads), and read by :func:`site_work`. name -> its record
_SITE_WORKS: dict[str, dict] = {}
BUILD_TIMEOUT_S = 3600  # a bound that only catches a hung build
#: the scale the session's website build executes every chapter at (``explorables.sphinx_ext.set_page_scale``):
#: ``smoke`` unless ``EXPLORABLES_BOOK_SCALE`` says otherwise. ``make test`` checks that every page executes
#: and builds at the smoke scale; CI (``.ci/run``) then runs the book-marked tests again with
#: ``EXPLORABLES_BOOK_SCALE=book``, the scale ``make book`` publishes.
BOOK_SCALE = os.environ.get("EXPLORABLES_BOOK_SCALE", "").strip() or "smoke"


def _build_env(**extra: str) -> dict[str, str]:
    """The environment of the session's builds: this one, at :data:`BOOK_SCALE`."""
    return {**os.environ, "EXPLORABLES_BOOK_SCALE": BOOK_SCALE, **extra}

# --- make test in two pytest processes ------------------------------------------------------------------
# ``make test`` is ``pytest -m "not book"`` (:data:`MAKE_TEST_MARKS`): every test but the website build, the student
# edition and the browser tests (marked ``book``; ``make test-site`` and CI's book step run them). Its tests are
# CPU-bound; on two cores it runs them in two pytest processes: this one starts the second at the session's start
# (:data:`SECOND_PROCESS_FILES`: every page executed from a cold kernel, the contract tests, the plans, the runs in
# subprocesses), deselects that one's tests, and ends with one item that waits for the second and fails with its
# output if it failed (its summary is printed in a section). A plain ``pytest`` (the whole suite, the site tests
# included) is split the same way, the site tests (``SITE_TEST_FILES``) in the second process: it starts the website
# build at once, and runs the site tests when it has finished. ``EXPLORABLES_TEST_SPLIT=0`` runs all in one process.

#: the test files that hold the tests needing the built site (the second process collects these and
#: :data:`SECOND_PROCESS_FILES`; the first checks that the tests it deselected are exactly those the second ran)
SITE_TEST_FILES = ("tests/test_book.py", "tests/test_site.py", "tests/test_teaching.py")
#: test files that run in the second process, so that the two processes end together (``benchmarks/
#: maketest10_pages.md``): CPU-heavy files that are no package's own tests (the API fuzz, in the first process,
#: replays the calls of those: ``test_api_fuzz._ran_here``). ``test_pages`` executes every page in a kernel of its
#: own (``tests/page_runs.py``); ``test_contract`` computes every chapter's smoke run (``tests/smoke_runs.py``) and
#: compares it with the page's; the nine chapters whose own tests read the smoke run compute it again in the first
#: process, the price of the balance. ``test_book_jobs`` (its Sphinx builds) and ``test_site``'s tests that need no
#: site call no package in process (``benchmarks/maketest9_balance.md``).
SECOND_PROCESS_FILES = ("tests/test_pages.py", "tests/test_book_jobs.py", "tests/test_contract.py",
                        "tests/test_hardening.py", "tests/test_plan.py", "tests/test_resume_kills.py",
                        "tests/test_runner.py", "tests/test_site.py")
#: ``site`` in the second process
_PART = os.environ.get("EXPLORABLES_TEST_PART", "")
#: the second process (started by the first): like a build record, plus the site tests the first deselected
_SITE_PROCESS: dict = {}


def _start_book_build() -> None:
    """Start the session's book build in the background, as ``make book`` does.

    The build executes two chapters at a time (:mod:`explorables.book_jobs`: a helper process takes
    them from the end of the reading order); the tests that do not need the site run meanwhile, so
    ``make test`` takes about the longer of the two instead of their sum. Chapters
    execute through jupyter-cache, so an unchanged chapter is not executed again. A thread reaps the
    build when it ends and starts the student edition at once (:func:`_watch_book_build`).
    """
    if _spawn_build(_BOOK_BUILD, [], env=_build_env(), name=f"the book build (website, {BOOK_SCALE} scale)",
                    done=threading.Event()):
        threading.Thread(target=_watch_book_build, daemon=True, name="book-build-watcher").start()


def _spawn_build(build: dict, extra_args: list[str], *, env: dict | None = None, **fields) -> bool:
    """Start ``jupyter-book build ROOT *extra_args --warningiserror --keep-going`` in the background, its
    output in a temporary file, and record it in ``build`` (with ``fields``), unless ``build`` already holds
    one. Returns whether it started one."""
    with _BUILD_LOCK:
        if build:
            return False
        jb = Path(sys.executable).with_name("jupyter-book")
        log = tempfile.TemporaryFile(mode="w+")
        proc = subprocess.Popen(
            [str(jb), "build", str(ROOT), *extra_args, "--warningiserror", "--keep-going"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group, so that stopping it also stops its kernels
        )
        build.update(proc=proc, log=log, started=time.monotonic(), **fields)
        return True


def _watch_book_build() -> None:
    """Reap the book build when it ends (the only thread that waits for it) and, if the session asks for
    the student edition, start that build at once: it reuses the book build's execution cache, and runs
    beside whatever tests are left, not after them."""
    build = _BOOK_BUILD
    try:
        try:
            _wait_for(build, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            build["timed_out"] = True
            _kill(build)
            _wait_for(build, timeout=120)
        build["machine"] = _machine_cpu()
        if build["proc"].returncode == 0 and not build.get("stopping"):
            _start_site_works("instructor", HTML)
            if _STUDENT_OUT:
                _start_student_build(_STUDENT_OUT[0])
    finally:
        build["done"].set()


def _machine_cpu() -> tuple[float, float, int] | None:
    """The whole machine's busy and total core-seconds since boot and its number of cores (``/proc/stat``;
    None elsewhere). The report's own CPU counts miss what no process of the session reaped (e.g.
    Chromium's renderers); on a quiet machine these tell whether a phase of ``make test`` was CPU-bound."""
    try:
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
        ticks = [int(x) for x in lines[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    hz = os.sysconf("SC_CLK_TCK")
    cores = sum(1 for line in lines if line[:3] == "cpu" and line[3:4].isdigit()) or 1
    total = sum(ticks[:8])  # user nice system idle iowait irq softirq steal (guest time is inside user)
    return (total - ticks[3] - ticks[4]) / hz, total / hz, cores


def _wait_for(build: dict, timeout: float) -> int | None:
    """Wait for a background build and return its exit code; record its wall time and its CPU seconds
    (user + system, its chapter kernels included: ``os.wait4`` reports a child with the descendants it
    waited for). Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds."""
    proc = build["proc"]
    deadline = time.monotonic() + timeout
    while proc.returncode is None:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            build["cpu"] = usage.ru_utime + usage.ru_stime
            build["wall"] = time.monotonic() - build["started"]
            break
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        time.sleep(0.2)
    return proc.returncode


def _kill(build: dict) -> None:
    """Kill a build with the chapter kernels it started (its whole process group)."""
    proc = build.get("proc")
    if proc is not None and proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="session")
def built_book(request, tmp_path_factory) -> Path:
    """Wait for the session's book build (started in the background) and return ``_build/html``."""
    _start_book_build()
    waited = time.monotonic()
    if not _BOOK_BUILD["done"].wait(timeout=BUILD_TIMEOUT_S + 300):
        pytest.fail("jupyter-book build did not end")
    _BOOK_BUILD.setdefault("timing", (waited - _BOOK_BUILD["started"], time.monotonic() - waited))
    if _BOOK_BUILD.get("timed_out"):
        pytest.fail(f"jupyter-book build did not finish within {BUILD_TIMEOUT_S} s")
    returncode = _BOOK_BUILD["proc"].returncode
    if returncode != 0:
        _BOOK_BUILD["log"].seek(0)
        pytest.fail(f"jupyter-book build failed (exit {returncode}):\n{_BOOK_BUILD['log'].read()[-12000:]}")
    if _STUDENT_OUT:  # the watcher started it, unless collection ended after the build
        _start_student_build(_STUDENT_OUT[0])
    return HTML


def _start_student_build(out: Path) -> None:
    if _spawn_build(_STUDENT_BUILD, ["--path-output", str(out)], env=_build_env(EXPLORABLES_EDITION="student"),
                    out=out, name="the student edition (chapters from the execution cache)", done=threading.Event()):
        threading.Thread(target=_watch_student_build, daemon=True, name="student-build-watcher").start()


def _watch_student_build() -> None:
    """Reap the student edition when it ends (the only thread that waits for it), so that its wall time
    in the CPU report is its own, not the time until the first test that needs it (the last of the
    session) asked for it."""
    build = _STUDENT_BUILD
    try:
        try:
            _wait_for(build, timeout=1800)
        except subprocess.TimeoutExpired:
            build["timed_out"] = True
            _kill(build)
            _wait_for(build, timeout=120)
        build["machine"] = _machine_cpu()
        if build["proc"].returncode == 0:
            _start_site_works("student", build["out"] / "_build" / "html")
    finally:
        build["done"].set()


def register_site_work(name: str, edition: str, work) -> None:
    """Register ``work(html_folder)`` on the built ``edition`` (``instructor`` or ``student``), to start as
    soon as that edition's build ends when a collected test uses the fixture ``name`` (:func:`site_work`
    returns its result). Called by test modules at import."""
    assert edition in ("instructor", "student"), edition
    _SITE_WORKS.setdefault(name, {"edition": edition, "work": work, "wanted": False, "started": False,
                                  "done": threading.Event(), "lock": threading.Lock()})


def _run_site_work(record: dict, html: Path) -> None:
    with record["lock"]:
        if record["started"]:
            return
        record["started"] = True
    try:
        record["result"] = (True, record["work"](html))
    except BaseException as error:  # raised in the test that asks for it
        record["result"] = (False, error)
    finally:
        record["done"].set()


def _start_site_works(edition: str, html: Path) -> None:
    for name, record in _SITE_WORKS.items():
        if record["edition"] == edition and record["wanted"]:
            threading.Thread(target=_run_site_work, args=(record, html), daemon=True, name=f"site-work-{name}").start()


def site_work(name: str, html: Path):
    """The result of the registered work ``name`` on the built site ``html`` (its edition's build has ended):
    waits for it if a thread runs it, or runs it here if none started it. Its exception is raised here."""
    record = _SITE_WORKS[name]
    _run_site_work(record, html)  # returns at once if a thread has started it
    if not record["done"].wait(timeout=3600):
        pytest.fail(f"the site work {name!r} did not finish within an hour")
    ok, value = record["result"]
    if not ok:
        raise value
    return value


@pytest.fixture(scope="session")
def student_site(built_book, tmp_path_factory) -> Path:
    """``make student`` (EXPLORABLES_EDITION=student) after ``built_book`` (the website, the
    instructor edition); it reuses that build's execution cache. Returns its ``_build/html``."""
    if not _STUDENT_BUILD:  # started when the book build ended, unless collection did not ask for it
        _start_student_build(tmp_path_factory.mktemp("student"))
    if not _STUDENT_BUILD["done"].wait(timeout=1800 + 300):  # its watcher reaps it
        pytest.fail("the student edition's build did not end")
    if _STUDENT_BUILD.get("timed_out"):
        pytest.fail("the student edition did not finish within 30 minutes")
    returncode = _STUDENT_BUILD["proc"].returncode
    if returncode != 0:
        _STUDENT_BUILD["log"].seek(0)
        pytest.fail(f"student edition failed (exit {returncode}):\n{_STUDENT_BUILD['log'].read()[-8000:]}")
    return _STUDENT_BUILD["out"] / "_build" / "html"


def _stop_book_build() -> None:
    """Kill the unfinished builds with the chapter kernels they started, and reap them."""
    if _BOOK_BUILD:
        _BOOK_BUILD["stopping"] = True  # the watcher starts no student edition now
        _kill(_BOOK_BUILD)
        _BOOK_BUILD["done"].wait(timeout=300)  # the watcher reaps it
    if _STUDENT_BUILD:
        _kill(_STUDENT_BUILD)
        _STUDENT_BUILD["done"].wait(timeout=300)  # its watcher reaps it
    for record in _SITE_WORKS.values():  # start no more site work; let one that runs end
        with record["lock"]:
            running, record["started"] = record["started"], True
        if running:
            record["done"].wait(timeout=600)


def _needs_the_site(item) -> bool:
    return "built_book" in getattr(item, "fixturenames", ())


def _in_the_second_process(item) -> bool:
    """Whether a split session runs ``item`` in its second pytest process: it needs the site (never selected by
    ``make test``, which deselects the ``book`` marker), or its file is one of :data:`SECOND_PROCESS_FILES`."""
    return _needs_the_site(item) or Path(str(item.path)).relative_to(ROOT).as_posix() in SECOND_PROCESS_FILES


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
        terminalreporter.write_line(f"every chapter executed at the {BOOK_SCALE} scale (EXPLORABLES_BOOK_SCALE)")
        if _PART == "site":
            terminalreporter.write_line(f"the site tests waited {before + wait:.0f} s for it (the other tests "
                                        "ran beside it in the first pytest process)")
        else:
            terminalreporter.write_line(f"the other tests ran for {before:.0f} s beside the background build, "
                                        f"then waited {wait:.0f} s for it to finish")
        for line in _machine_cpu_lines():
            terminalreporter.write_line(line)
    if _CPU["tests"]:
        terminalreporter.section("CPU seconds (user + system)")
        for line in cpu_report_lines():
            terminalreporter.write_line(line)
    if PAGE_WEIGHTS:
        terminalreporter.section("page weights")
        for line in PAGE_WEIGHTS:
            terminalreporter.write_line(line)
    if _SITE_PROCESS.get("proc") is not None and _SITE_PROCESS["proc"].returncode is not None:
        terminalreporter.section("the second pytest process (its report from its first section on)")
        lines = _site_process_output().splitlines()
        first = next((i for i, line in enumerate(lines) if line.startswith("=") and "session starts" not in line), 0)
        for line in lines[first:]:
            terminalreporter.write_line(line)


# --- where make test's CPU goes -----------------------------------------------------------------------
# Wall times on a shared machine say little; CPU seconds (user + system) add up. Each test's CPU is its
# own (this process, its threads included) plus that of the subprocesses it waited for (CLI runs,
# chromium, jupyter kernels); the background builds are counted apart (``_wait_for``).

#: per test: [own CPU, reaped subprocesses' CPU, wall]; and the session's start
_CPU: dict = {"tests": {}, "start": None}


def _cpu_now() -> tuple[float, float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime, time.monotonic()


def _machine_cpu_lines() -> list[str]:
    """How busy the machine's CPUs were while the website built, and after it (the site tests beside the
    student edition): busy core-seconds of those there were."""
    start, built, end = _CPU.get("machine"), _BOOK_BUILD.get("machine"), _machine_cpu()
    if not (start and built and end):
        return []
    cores = end[2]
    lines = [f"the machine's CPUs (every process, /proc/stat; {cores} cores):"]
    for phase, a, b in (("while the website built", start, built), ("after it", built, end)):
        busy, total = b[0] - a[0], b[1] - a[1]
        lines.append(f"  {phase}: {total / cores:.0f} s, {busy:.0f} of {total:.0f} core-seconds busy "
                     f"({100 * busy / max(total, 1e-9):.0f}%)")
    if "wall" in _STUDENT_BUILD:
        lines.append(f"  the student edition took {_STUDENT_BUILD['wall']:.0f} s of the "
                     f"{(end[1] - built[1]) / cores:.0f} s after the website")
    return lines


def _builds_cpu() -> float:
    return sum(build.get("cpu", 0.0) for build in (_BOOK_BUILD, _STUDENT_BUILD, _SITE_PROCESS))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before, builds = _cpu_now(), _builds_cpu()
    yield
    after = _cpu_now()
    # a build reaped during this test is not this test's CPU
    _CPU["tests"][item.nodeid] = (after[0] - before[0], after[1] - before[1] - (_builds_cpu() - builds),
                                  after[2] - before[2])


def pytest_sessionstart(session):
    _CPU["start"], _CPU["machine"] = _cpu_now(), _machine_cpu()
    if _split(session.config):
        _start_site_process(session.config)  # it starts the book build before its collection
    elif (_whole_suite(session.config) or _PART == "site") and _site_selected(session.config):
        _start_book_build()  # before collection: the build is the longest chain of a session that runs the site tests


def _split(config) -> bool:
    """Whether this is the first of make test's two pytest processes (the whole suite, not turned off)."""
    return _whole_suite(config) and not _PART and os.environ.get("EXPLORABLES_TEST_SPLIT", "1") != "0"


def _start_site_process(config) -> None:
    """Start the second pytest process (:data:`SECOND_PROCESS_FILES`, and :data:`SITE_TEST_FILES` where the session
    selects the site tests) in the background, its output in a temporary file. Its own session, so that stopping
    it stops Chromium with it (its builds are sessions of their own, which it stops itself when interrupted)."""
    basetemp = config._tmp_path_factory.getbasetemp() / "site-process"
    items = basetemp.parent / "site-process-items.txt"
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--basetemp={basetemp}",
         *(["-m", config.option.markexpr] if config.option.markexpr else []),
         *dict.fromkeys((*SITE_TEST_FILES, *SECOND_PROCESS_FILES))],
        cwd=ROOT,
        env={**os.environ, "EXPLORABLES_TEST_PART": "site", "EXPLORABLES_API_FUZZ": "0",
             "EXPLORABLES_SITE_ITEMS": str(items)},
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    _SITE_PROCESS.update(proc=proc, log=log, started=time.monotonic(), items=items, deselected=[],
                         done=threading.Event(),
                         name="the second pytest process (the pages, the contract tests, the plans and the runs in "
                              "subprocesses; the website build and the browser tests where selected)")
    threading.Thread(target=_watch_site_process, daemon=True, name="site-process-watcher").start()


def _watch_site_process() -> None:
    """Reap the second process when it ends (the only thread that waits for it), so that its wall time in the
    CPU report is its own, not the time until this process's last item asked for it (``benchmarks/maketest9_*``:
    the 920 s run reported 903 s for a process that had ended about 130 s earlier)."""
    try:
        try:
            _wait_for(_SITE_PROCESS, timeout=BUILD_TIMEOUT_S + 3600)
        except subprocess.TimeoutExpired:
            _SITE_PROCESS["timed_out"] = True
    finally:
        _SITE_PROCESS["done"].set()


def _stop_site_process() -> None:
    """Stop the second process if it still runs: SIGTERM (:func:`_on_sigterm` there kills its builds and
    interrupts its session), then SIGKILL to what is left of its process group (Chromium)."""
    proc = _SITE_PROCESS.get("proc")
    if proc is None or _SITE_PROCESS["done"].is_set():
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        _SITE_PROCESS["done"].wait(timeout=300)  # its watcher reaps it
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if _SITE_PROCESS.get("timed_out"):  # its watcher gave up waiting: reap it here
        _wait_for(_SITE_PROCESS, timeout=120)
    else:
        _SITE_PROCESS["done"].wait(timeout=120)


def _on_sigterm(signum, frame) -> None:
    """In the second process: the first one stops it. Kill the builds (sessions of their own, which the
    session's end would kill, but a session interrupted before it started does not end) and interrupt."""
    _kill(_BOOK_BUILD)
    _kill(_STUDENT_BUILD)
    raise KeyboardInterrupt


if _PART == "site":
    signal.signal(signal.SIGTERM, _on_sigterm)


def _site_process_output() -> str:
    log = _SITE_PROCESS["log"]
    log.seek(0)
    return log.read()


class SiteTestsFailed(Exception):
    pass


class SiteTests(pytest.Item):
    """The first process's last item: waits for the second and fails if it failed, if it ran other tests than
    those this process deselected, or if it did not end."""

    def runtest(self) -> None:
        _SITE_PROCESS["done"].wait()  # its watcher gives up after BUILD_TIMEOUT_S + 3600 s
        if _SITE_PROCESS.get("timed_out"):
            _stop_site_process()
            raise SiteTestsFailed("the second pytest process did not end within two hours")
        code = _SITE_PROCESS["proc"].returncode
        if code != 0:
            raise SiteTestsFailed(f"the second pytest process failed (exit {code})")
        items = _SITE_PROCESS["items"]
        ran = items.read_text().split("\n") if items.exists() else []
        expected = _SITE_PROCESS["deselected"]
        if sorted(ran) != sorted(expected):
            raise SiteTestsFailed("the second pytest process ran other tests than this one left to it: "
                                  f"not run there {sorted(set(expected) - set(ran))}, "
                                  f"not expected {sorted(set(ran) - set(expected))}")

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, SiteTestsFailed):
            return f"{excinfo.value}; its output ends:\n{_site_process_output()[-12000:]}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, self.name


def cpu_report_lines(n: int = 15) -> list[str]:
    own, children, wall = (b - a for a, b in zip(_CPU["start"], _cpu_now(), strict=True))
    tests = _CPU["tests"]
    lines = [f"session: {wall:.0f} s wall, {own + children:.0f} s CPU "
             f"({own:.0f} s in this process, {children:.0f} s in its subprocesses)"]
    for build in (_BOOK_BUILD, _STUDENT_BUILD, _SITE_PROCESS):
        if "cpu" in build:
            lines.append(f"  {build['name']}: {build['cpu']:.0f} s CPU in {build['wall']:.0f} s wall")
    if "wall" in _SITE_PROCESS:  # which of the two processes was make test's longer chain
        alone = wall - (_SITE_PROCESS["started"] + _SITE_PROCESS["wall"] - _CPU["start"][2])
        lines.append(f"  this process then ran {alone:.0f} s alone" if alone > 0 else
                     f"  this process ended {-alone:.0f} s before the second pytest process")
    lines.append(f"  the {len(tests)} tests: {sum(t[0] + t[1] for t in tests.values()):.0f} s CPU "
                 f"({sum(t[0] for t in tests.values()):.0f} s in this process, "
                 f"{sum(t[1] for t in tests.values()):.0f} s in the subprocesses they waited for)")
    by_file: dict[str, float] = {}
    for nodeid, (mine, theirs, _) in tests.items():
        by_file[nodeid.split("::")[0]] = by_file.get(nodeid.split("::")[0], 0.0) + mine + theirs
    top = sorted(by_file.items(), key=lambda kv: -kv[1])[:n]
    lines.append("  by file: " + ", ".join(f"{Path(f).stem} {c:.0f}" for f, c in top))
    lines.append(f"the {n} tests using the most CPU (s: own + subprocesses, wall):")
    for nodeid, (mine, theirs, w) in sorted(tests.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:n]:
        lines.append(f"  {mine + theirs:6.1f} ({mine:.1f} + {theirs:.1f}), {w:6.1f} wall  {nodeid}")
    return lines


def _whole_suite(config) -> bool:
    """Whether this session runs the whole suite, or all of it but the site tests (``make test``: no paths or keywords
    given, and no marker expression but :data:`MAKE_TEST_MARKS`): it is then split in two pytest processes."""
    return (config.args_source == pytest.Config.ArgsSource.TESTPATHS
            and (config.option.markexpr or "") in ("", MAKE_TEST_MARKS)
            and not config.option.keyword and not config.option.collectonly
            and not getattr(config.option, "last_failed", False))


def _site_selected(config) -> bool:
    """Whether this session may run the tests that need the site (it does not deselect them all, as ``make test``)."""
    return (config.option.markexpr or "").strip() != MAKE_TEST_MARKS


# --- make quick ---------------------------------------------------------------------------------------------
# ``make quick`` runs ``pytest -m "not book and not slow"`` without the API fuzz's call recording: the edit loop's
# unit tests in a few minutes. ``make test`` runs every test, these included. The ``slow`` marker goes on every
# test of :data:`QUICK_SKIPPED_FILES`, on every test that runs a whole smoke run (:func:`_runs_a_smoke_run`: the
# contract tests and the site build execute each chapter's) and on the tests listed in ``tests/slow_tests.txt``
# (the chapters' own tests that cost the most CPU in ``make test``: how that list was chosen is written at its top).

#: files make quick leaves out whole: the site and its browser tests, the book jobs' builds, the paper plans, the
#: contract tests (every chapter's smoke run, twice), the API and command-line fuzz, and the runs in subprocesses
#: that kill, resume and harden the command line
QUICK_SKIPPED_FILES = ("tests/test_api_fuzz.py", "tests/test_book.py", "tests/test_book_jobs.py",
                       "tests/test_cli_fuzz.py", "tests/test_contract.py", "tests/test_hardening.py",
                       "tests/test_pages.py", "tests/test_plan.py", "tests/test_resume_kills.py",
                       "tests/test_runner.py", "tests/test_site.py", "tests/test_teaching.py")


def _slow_tests() -> frozenset[str]:
    listed = Path(__file__).with_name("slow_tests.txt")
    lines = listed.read_text().splitlines() if listed.exists() else []
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


_SLOW_TESTS = _slow_tests()


#: the chapters' module fixtures that compute a whole smoke run (a test using one is slow: it pays the run if first)
SMOKE_FIXTURES = frozenset({"smoke", "smoke_results"})
#: in a test's source: it runs a whole smoke run (the shared one, or the preset unchanged)
_SMOKE_CALLS = ("smoke_run(", '.preset("smoke"))')


def _runs_a_smoke_run(item) -> bool:
    if SMOKE_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    try:
        source = inspect.getsource(item.function)
    except (AttributeError, OSError, TypeError):
        return False
    return any(call in source for call in _SMOKE_CALLS)


#: ``make test``'s marker expression: every test but those marked ``book`` (the website build, the student edition
#: and the browser tests, which ``make test-site`` and CI's book step run)
MAKE_TEST_MARKS = "not book"
#: a test using one of these fixtures needs the built site or a browser: it is marked ``book``
#: (:func:`pytest_itemcollected`), so that ``make test`` leaves it to ``make test-site``
BOOK_FIXTURES = frozenset({"built_book", "student_site", "browser"})


def pytest_itemcollected(item):
    if BOOK_FIXTURES & set(getattr(item, "fixturenames", ())) and not item.get_closest_marker("book"):
        item.add_marker(pytest.mark.book)
    if "slow" not in (item.config.option.markexpr or ""):  # nothing selects by it (make test): spare the look-up
        return
    path = Path(str(item.path)).relative_to(ROOT).as_posix()
    if (path in QUICK_SKIPPED_FILES or item.nodeid in _SLOW_TESTS or item.nodeid.split("[")[0] in _SLOW_TESTS
            or _runs_a_smoke_run(item)):
        item.add_marker(pytest.mark.slow)


# The API fuzz (tests/test_api_fuzz.py) replays the valid calls the other tests make: record them
# from the start of the session, and run the fuzz after every other test but those that only read the
# built site (they call no chapter code).
def pytest_configure(config):
    if os.environ.get("EXPLORABLES_API_FUZZ", "1") != "0":
        api_fuzz.RECORDER = api_fuzz.Recorder()
        api_fuzz.RECORDER.install()


# The tests that need the built site run last, so that the background build overlaps the rest; in make
# test they run in a second pytest process (``_split``), and the first ends with the item that waits for it.
@pytest.hookimpl(trylast=True)  # after ``-m`` deselected: each process's list is what it runs
def pytest_collection_modifyitems(session, config, items):
    if _split(config) or _PART == "site":
        site = _PART == "site"
        gone = [item for item in items if _in_the_second_process(item) != site]
        items[:] = [item for item in items if _in_the_second_process(item) == site]
        if gone:
            config.hook.pytest_deselected(items=gone)
        if site and os.environ.get("EXPLORABLES_SITE_ITEMS"):
            Path(os.environ["EXPLORABLES_SITE_ITEMS"]).write_text("\n".join(item.nodeid for item in items))
        elif not site:
            _SITE_PROCESS["deselected"] = [item.nodeid for item in gone]
            name = "the tests of the second pytest process"
            items.append(SiteTests.from_parent(session, name=name, nodeid=f"tests/conftest.py::{name}"))
    items.sort(key=lambda item: (isinstance(item, SiteTests), _needs_the_site(item),
                                 item.nodeid.startswith("tests/test_api_fuzz.py")))


def pytest_collection_finish(session):
    if not session.config.option.collectonly and any(_needs_the_site(item) for item in session.items):
        if any("student_site" in getattr(item, "fixturenames", ()) for item in session.items):
            _STUDENT_OUT.append(session.config._tmp_path_factory.mktemp("student"))
        for name, record in _SITE_WORKS.items():
            record["wanted"] = any(name in getattr(item, "fixturenames", ()) for item in session.items)
        _start_book_build()


def pytest_sessionfinish(session, exitstatus):
    _stop_site_process()  # if the session ended before its last item waited for it
    _stop_book_build()  # if the session ended before a test waited for the site
    cpu_dump = os.environ.get("EXPLORABLES_CPU_DUMP")  # every test's CPU (own, subprocesses) and wall, as JSON
    if cpu_dump:
        import json

        Path(f"{cpu_dump}.{_PART or 'first'}.json").write_text(json.dumps(_CPU["tests"], indent=0))
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
