"""The generated API fuzz (issue 29): every public callable of every package, one hostile argument at a time.

See ``tests/api_fuzz.py`` for how the inputs are generated and judged. This file runs after every
other test (``conftest.pytest_collection_modifyitems``) because it replays the valid calls those
tests made. Which calls it replays does not depend on what else the session ran: in a session that
ran all of a package's own test files (``make test``) it replays the calls they made; in any other
session (this file alone, one package, ``-k``) it first runs the package's own tests once in a
subprocess to record them, for the function fuzz and the method fuzz alike.
"""

from __future__ import annotations

import collections
import inspect
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from . import api_fuzz
from .conftest import ROOT

#: item findings of the chapters whose files other helpers own (issue 53 item 5): ``(callable, parameter)`` -> what
#: is missing. Every other finding fails. An entry need not give its finding in every session: the fuzz replays the
#: first recorded call, and which call comes first depends on what the session ran (in a whole ``make test`` run the
#: calls recorded for these two functions do not reach the listed inputs), so a listed entry that refuses cleanly is
#: not a failure; remove an entry when its function is fixed.
ITEM_FUZZ_PENDING: dict[tuple[str, str], str] = {}

#: per package, the calls its own tests recorded in a subprocess of this session (both fuzzes read the one file)
_DUMPS: dict[str, Path] = {}


def _package_tests(package: str) -> list[Path]:
    return sorted(ROOT.glob(f"tests/test_{package}*.py")) or [ROOT / "tests" / "test_kit.py"]


def _ran_here(package: str, session: pytest.Session) -> bool:
    """Whether this session ran every test of the package's own test files (as ``make test`` does), so that
    the session's records hold what those tests call. A session that selected some of them (``-k``, ``-m``,
    a node id, ``--deselect``, ``--lf``) or none (this file alone) records the package in a subprocess instead:
    the records then do not depend on what else the session ran."""
    option = session.config.option
    if option.keyword or option.markexpr not in ("", "not book") or option.deselect or getattr(option, "lf", False):
        return False
    tests = _package_tests(package)
    if any("::" in arg and Path(arg.split("::")[0]).resolve() in tests for arg in session.config.args):
        return False
    ran = {Path(item.path) for item in session.items}
    return all(test in ran for test in tests)


def _records(package: str, request: pytest.FixtureRequest, tmp_path_factory) -> dict[str, list[api_fuzz.Record]]:
    """The valid calls the package's own tests made: this session's records if it ran them all, otherwise
    those of one subprocess per package and session (shared by the function fuzz and the method fuzz)."""
    recorder = api_fuzz.RECORDER
    if recorder is not None:
        recorder.uninstall()  # the fuzz's own calls (a hostile value accepted) are not valid calls to keep
        if _ran_here(package, request.session):
            return recorder.records
    dump = _DUMPS.get(package)
    if dump is None:
        dump = tmp_path_factory.mktemp(f"records_{package}") / "records.pkl"
        env = {**os.environ, "EXPLORABLES_API_FUZZ": "1", "EXPLORABLES_API_FUZZ_DUMP": str(dump)}
        command = [sys.executable, "-m", "pytest", "-q", "-m", "not book", "-p", "no:cacheprovider"]
        proc = subprocess.run(
            [*command, *map(str, _package_tests(package))],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if not dump.exists():
            pytest.fail(f"recording the valid calls of {package} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        _DUMPS[package] = dump
    return pickle.loads(dump.read_bytes())  # written by our own subprocess


def _without_pending(package: str, findings: list, methods: bool = False) -> list:
    """The findings less the item findings listed in :data:`ITEM_FUZZ_PENDING` for this package (functions or
    methods). A listed entry that gives no finding in this session is not one: see :data:`ITEM_FUZZ_PENDING`."""
    pending = {
        key
        for key in ITEM_FUZZ_PENDING
        if key[0].startswith(f"{package}.") and (key[0].count(".") == 2) == methods
    }
    return [c for c in findings if not (c.value.startswith(api_fuzz.ITEM) and (c.callable, c.parameter) in pending)]


def test_pending_item_entries_name_a_public_callable_and_its_parameter():
    """Each :data:`ITEM_FUZZ_PENDING` entry names a parameter of a public callable, so a renamed or removed function
    cannot leave a stale entry behind."""
    for qualname, parameter in ITEM_FUZZ_PENDING:
        callables = api_fuzz.public_callables(qualname.split(".")[0])
        assert qualname in callables, f"{qualname} is not a public callable"
        assert parameter in inspect.signature(callables[qualname]).parameters, f"{qualname} has no {parameter}"


@pytest.mark.parametrize("package", api_fuzz.packages())
def test_every_public_callable_refuses_hostile_arguments_cleanly(
    package, request, tmp_path_factory, tmp_path, monkeypatch
):
    records = _records(package, request, tmp_path_factory)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # a function handed a bogus path writes nothing into the repository
    callables = api_fuzz.public_callables(package)
    counts: collections.Counter = collections.Counter()
    item_counts: collections.Counter = collections.Counter()
    findings, never_called, with_items = [], [], set()
    unshippable = [q for q in records.get(api_fuzz.UNSHIPPABLE, []) if q in callables]
    for qualname, obj in callables.items():
        kept = records.get(qualname) or []
        if not kept:
            if qualname not in unshippable:  # called, but with an object that cannot cross processes
                never_called.append(qualname)
            continue
        for case in api_fuzz.fuzz_callable(qualname, obj, kept[0]):
            if case.value.startswith(api_fuzz.ITEM):
                item_counts[case.outcome] += 1
                with_items.add(qualname)
            else:
                counts[case.outcome] += 1
            if case.outcome in api_fuzz.FINDINGS:
                findings.append(case)
    api_fuzz.REPORT[package] = {"callables": len(callables) - len(never_called), "cases": dict(counts)}
    findings = _without_pending(package, findings)
    if item_counts:  # one item of a list or tuple argument replaced (issue 53 item 5)
        api_fuzz.REPORT[f"{package} (items)"] = {"callables": len(with_items), "cases": dict(item_counts)}
    counts += item_counts
    lines = [f"{c.outcome:>6}  {c.callable}({c.parameter}={c.value}): {c.detail}" for c in findings]
    assert not findings, (
        f"{len(findings)} of {sum(counts.values())} hostile inputs were not refused cleanly:\n" + "\n".join(lines)
    )
    assert not never_called, f"no test makes a valid call of {never_called}: the fuzz has nothing to replay"


def _takes_arguments(cls: type, name: str) -> bool:
    parameters = inspect.signature(api_fuzz.method_function(cls, name)).parameters
    return any(p not in ("self", "cls") for p in parameters)


@pytest.mark.parametrize("package", [p for p in api_fuzz.packages() if api_fuzz.public_methods(p)])
def test_every_public_method_refuses_hostile_arguments_cleanly(
    package, request, tmp_path_factory, tmp_path, monkeypatch
):
    """The same fuzz for the public methods of the public classes (issue 53): each recorded call is replayed on a
    copy of its instance, one argument replaced at a time. A package whose tests call none of its public methods
    validly fails (there would be nothing to replay). Every package's methods are checked at the boundary (issue 53
    item 5), so none is expected to fail."""
    methods = api_fuzz.public_methods(package)
    records = _records(package, request, tmp_path_factory)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    counts: collections.Counter = collections.Counter()
    item_counts: collections.Counter = collections.Counter()
    findings, with_items = [], set()
    called = [q for q in methods if records.get(q)]
    # a method no test calls validly has nothing to replay (counted in the report); the package needs one, and one
    # that takes an argument when it has such methods (a method of ``self`` alone has no input to fuzz)
    assert called, f"no test of {package} makes a valid call of any of its {len(methods)} public methods"
    with_arguments = [q for q in methods if _takes_arguments(*methods[q])]
    assert not with_arguments or set(with_arguments) & set(called), (
        f"no test of {package} makes a valid call of any of its public methods that take arguments: {with_arguments}"
    )
    for qualname in called:
        cls, name = methods[qualname]
        for case in api_fuzz.fuzz_callable(qualname, api_fuzz.method_function(cls, name), records[qualname][0]):
            if case.value.startswith(api_fuzz.ITEM):
                item_counts[case.outcome] += 1
                with_items.add(qualname)
            else:
                counts[case.outcome] += 1
            if case.outcome in api_fuzz.FINDINGS:
                findings.append(case)
    findings = _without_pending(package, findings, methods=True)
    api_fuzz.REPORT[f"{package} (methods)"] = {"callables": len(called), "cases": dict(counts)}
    if item_counts:
        api_fuzz.REPORT[f"{package} (method items)"] = {"callables": len(with_items), "cases": dict(item_counts)}
    counts += item_counts
    total = sum(counts.values())
    lines = [f"{c.outcome:>6}  {c.callable}({c.parameter}={c.value}): {c.detail}" for c in findings]
    assert not findings, f"{len(findings)} of {total} hostile method inputs were not refused cleanly:\n" + "\n".join(
        lines
    )
