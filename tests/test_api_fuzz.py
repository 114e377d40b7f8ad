"""The generated API fuzz (issue 29): every public callable of every package, one hostile argument at a time.

See ``tests/api_fuzz.py`` for how the inputs are generated and judged. This file runs after every
other test (``conftest.pytest_collection_modifyitems``) because it replays the valid calls those
tests made. Run on its own, it first runs the package's own tests in a subprocess to record them.
"""

from __future__ import annotations

import collections
import os
import pickle
import subprocess
import sys

import pytest

from . import api_fuzz
from .conftest import ROOT


def _records(package: str, tmp_path) -> dict[str, list[api_fuzz.Record]]:
    callables = api_fuzz.public_callables(package)
    recorder = api_fuzz.RECORDER
    if recorder is not None and any(recorder.records.get(q) for q in callables):
        return recorder.records
    # not recorded in this session: run the package's own tests in a subprocess and read what they kept
    tests = sorted(ROOT.glob(f"tests/test_{package}*.py")) or [ROOT / "tests" / "test_kit.py"]
    dump = tmp_path / "records.pkl"
    env = {**os.environ, "EXPLORABLES_API_FUZZ": "1", "EXPLORABLES_API_FUZZ_DUMP": str(dump)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "not book", "-p", "no:cacheprovider", *map(str, tests)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if not dump.exists():
        pytest.fail(f"recording the valid calls of {package} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return pickle.loads(dump.read_bytes())  # written by our own subprocess just now


@pytest.mark.parametrize("package", api_fuzz.packages())
def test_every_public_callable_refuses_hostile_arguments_cleanly(package, tmp_path, monkeypatch):
    records = _records(package, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # a function handed a bogus path writes nothing into the repository
    callables = api_fuzz.public_callables(package)
    counts: collections.Counter = collections.Counter()
    findings, never_called = [], []
    unshippable = [q for q in records.get(api_fuzz.UNSHIPPABLE, []) if q in callables]
    for qualname, obj in callables.items():
        kept = records.get(qualname) or []
        if not kept:
            if qualname not in unshippable:  # called, but with an object that cannot cross processes
                never_called.append(qualname)
            continue
        for case in api_fuzz.fuzz_callable(qualname, obj, kept[0]):
            counts[case.outcome] += 1
            if case.outcome in api_fuzz.FINDINGS:
                findings.append(case)
    api_fuzz.REPORT[package] = {"callables": len(callables) - len(never_called), "cases": dict(counts)}
    lines = [f"{c.outcome:>6}  {c.callable}({c.parameter}={c.value}): {c.detail}" for c in findings]
    assert not findings, (
        f"{len(findings)} of {sum(counts.values())} hostile inputs were not refused cleanly:\n" + "\n".join(lines)
    )
    assert not never_called, f"no test makes a valid call of {never_called}: the fuzz has nothing to replay"


#: packages whose public methods are not yet checked at the boundary (issue 53 item 5): their method fuzz runs and
#: reports, but is expected to fail until they are. tree_search, muon, tomato_mp, trac, rashomon, crl and dcdm have
#: left it (omwu had nothing to fix); a package leaves it once its methods refuse every hostile input cleanly.
METHOD_FUZZ_PENDING = frozenset(
    {
        "core", "sensory", "routing", "rpkd", "ucca", "uggrh", "jeffrey",
        "stable_nde", "trust_region_cl", "unirap", "virtualflow", "topoprune",
    }
)  # fmt: skip


def _method_package(package: str):
    if package in METHOD_FUZZ_PENDING:
        reason = "issue 53 item 5: this package's public methods are not yet checked at the boundary"
        return pytest.param(package, marks=pytest.mark.xfail(reason=reason, strict=False))
    return package


@pytest.mark.parametrize("package", [_method_package(p) for p in api_fuzz.packages() if api_fuzz.public_methods(p)])
def test_every_public_method_refuses_hostile_arguments_cleanly(package, tmp_path, monkeypatch):
    """The same fuzz for the public methods of the public classes (issue 53): each recorded call is replayed on a
    copy of its instance, one argument replaced at a time."""
    methods = api_fuzz.public_methods(package)
    records = _records(package, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    counts: collections.Counter = collections.Counter()
    findings = []
    for qualname, (cls, name) in methods.items():
        kept = records.get(qualname) or []
        if not kept:
            continue  # a method no test calls validly has nothing to replay (counted in the report)
        for case in api_fuzz.fuzz_callable(qualname, api_fuzz.method_function(cls, name), kept[0]):
            counts[case.outcome] += 1
            if case.outcome in api_fuzz.FINDINGS:
                findings.append(case)
    called = sum(1 for q in methods if records.get(q))
    api_fuzz.REPORT[f"{package} (methods)"] = {"callables": called, "cases": dict(counts)}
    lines = [f"{c.outcome:>6}  {c.callable}({c.parameter}={c.value}): {c.detail}" for c in findings]
    total = sum(counts.values())
    assert not findings, f"{len(findings)} of {total} hostile method inputs were not refused cleanly:\n" + "\n".join(
        lines
    )
