"""A generated fuzz of the command line (issue 29): every chapter, every setting, every run option.

The inputs are generated, not listed by hand:

* for every config field of every chapter, ``--set NAME=VALUE`` with each value its declared rule
  must refuse (``Rule.bad_values()``: wrong type, out of range, NaN, one past each bound, the
  implicit integer cap), written as the command line writes it, plus ``10**12``, an empty value
  and a malformed tuple;
* for every chapter, the run options: ``--seed`` (negative, ``2**32``, ``2**64``, not a number),
  ``--checkpoint-every`` (NaN, negative, infinite, not a number), ``--out`` (a file, under a file,
  a place that cannot be created), ``--data-root`` (missing), ``--resume`` with ``--restart``,
  unknown or malformed ``--set``, unknown ``--scale``/``--device``.

Each runs in-process on the smoke preset. The only good outcome (``refused``) is exit code 2 with one line on
stderr that names the option or field, and nothing written to ``--out``. Anything else is a
finding: ``other`` (a traceback, another exit code, more than one line or no name), ``silent``
(the run started: exit 0) or ``hang`` (past 60 s of CPU time; ``api_fuzz.time_bound``).
"""

from __future__ import annotations

import collections
import dataclasses
import math
import typing
from pathlib import Path

import pytest

from explorables.chapters import CHAPTERS
from explorables.cli import main
from explorables.core.config import _parse_value
from explorables.core.params import field_rule

from .api_fuzz import CLI_REPORT, MIN_CPU_LIMIT_S, FuzzTimeout, time_bound

SLUGS = sorted(CHAPTERS)


def render(value: object) -> str | None:
    """``value`` as it would be typed after ``--set NAME=`` (``None`` when it cannot be typed)."""
    if isinstance(value, bool) or isinstance(value, (int, float, str)):
        return str(value)
    if isinstance(value, (tuple, list)):
        items = [render(v) for v in value]
        return None if any(i is None for i in items) else ",".join(items)
    return None


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def typed_bad_value(name: str, value: object, hint: object) -> str | None:
    """The command-line spelling of a value the field's rule refuses, if typing it means that value.

    ``"yes"`` is a bad *Python* value for a bool field, but the command line reads ``yes`` as
    ``True``; such spellings are not bad input there and are left out. A spelling the command
    line cannot parse at all is kept: it must be refused too.
    """
    text = render(value)
    if text is None:
        return None
    try:
        parsed = _parse_value(name, text, hint)
    except ValueError:
        return text
    return text if _same(parsed, value) else None


def field_cases(slug: str) -> list[tuple[str, str]]:
    """``(name, typed value)`` pairs every field of the chapter must refuse."""
    config_cls = CHAPTERS[slug].module().Config
    hints = typing.get_type_hints(config_cls)
    cases = []
    for f in dataclasses.fields(config_cls):
        rule = field_rule(f)
        hint = hints[f.name]
        typed = {typed_bad_value(f.name, v, hint) for v in (rule.bad_values() if rule else [])}
        item = typing.get_args(hint)[0] if typing.get_origin(hint) is tuple else None
        if hint is int:
            typed |= {"1000000000000", "", "2.5", "seven"}
        elif hint is float:
            typed |= {"nan", "", "seven"}
        elif item in (int, float):
            typed |= {"1,,x", "seven"}
        elif hint is bool:
            typed |= {"maybe", ""}
        if f.name == "data_root":
            typed.add("/no/such/folder")
        typed.discard(None)
        cases += [(f.name, value) for value in sorted(typed)]
    return cases


def option_cases(tmp: Path) -> list[tuple[str, list[str]]]:
    """``(what must be named, extra argv)`` for the run options."""
    afile = tmp / "a-file"
    afile.write_text("x")
    return [
        ("--seed", ["--seed", "-1"]),
        ("seed", ["--seed", str(2**32)]),
        ("seed", ["--seed", str(2**64)]),
        ("--seed", ["--seed", "x"]),
        ("--checkpoint-every", ["--checkpoint-every", "nan"]),
        ("--checkpoint-every", ["--checkpoint-every", "-1"]),
        ("--checkpoint-every", ["--checkpoint-every", "inf"]),
        ("--checkpoint-every", ["--checkpoint-every", "x"]),
        ("--out", ["--out", str(afile)]),
        ("--out", ["--out", str(afile / "under")]),
        ("--out", ["--out", "/proc/explorables-cannot-create"]),
        ("--data-root", ["--data-root", str(tmp / "missing")]),
        ("--restart", ["--resume", "--restart"]),
        ("--set", ["--set", "no-equals-sign"]),
        ("unknown", ["--set", "no_such_field=1"]),
        ("--scale", ["--scale", "huge"]),
        ("--device", ["--device", "tpu"]),
    ]


def run_cli(argv: list[str], capsys) -> tuple[str, str]:
    """``(outcome, detail)`` of one command line."""
    try:
        with time_bound(MIN_CPU_LIMIT_S):
            code = main(argv)
    except FuzzTimeout:
        return "hang", f"still running after {MIN_CPU_LIMIT_S:.0f} s of CPU time"
    except SystemExit as exit_:  # argparse refuses with exit code 2 and a usage line
        code = exit_.code
    except BaseException as error:  # any traceback is a finding
        return "other", f"{type(error).__name__}: {error}"
    err = capsys.readouterr().err.strip()
    if code == 0:
        return "silent", "exit 0: the run went ahead"
    if code != 2:
        return "other", f"exit {code}: {err[-200:]}"
    lines = err.splitlines()
    if "Traceback" in err:
        return "other", f"traceback: {err[-200:]}"
    # argparse prints its (wrapped) usage, then one error line
    argparse_usage = bool(lines) and lines[0].startswith("usage:") and ": error: " in lines[-1]
    if len(lines) != 1 and not argparse_usage:
        return "other", f"{len(lines)} lines on stderr: {err[-200:]}"
    return "refused", lines[-1]


@pytest.mark.parametrize("slug", SLUGS)
def test_every_bad_setting_and_option_is_one_clear_line_before_any_work(slug, tmp_path, capsys):
    base = ["run", slug, "--scale", "smoke", "--quiet", "--no-figures"]
    counts: collections.Counter = collections.Counter()
    findings = []
    inputs = [(name, ["--set", f"{name}={value}"]) for name, value in field_cases(slug)]
    inputs += option_cases(tmp_path)
    for k, (name, extra) in enumerate(inputs):
        out = tmp_path / f"out-{k}"  # a folder per input: one accepted run cannot mask the next
        argv = [*base, *extra] if "--out" in extra else [*base, "--out", str(out), *extra]
        outcome, detail = run_cli(argv, capsys)
        if outcome == "refused" and name not in detail and name.lstrip("-") not in detail:
            outcome, detail = "other", f"the message does not name {name!r}: {detail}"
        if outcome == "refused" and (out / "config.json").exists():
            outcome, detail = "other", "refused, but only after writing config.json"
        counts[outcome] += 1
        if outcome != "refused":
            findings.append(f"{outcome:>6}  {' '.join(extra)}: {detail}")
    CLI_REPORT[slug] = counts
    assert not findings, f"{len(findings)} of {sum(counts.values())} bad command lines:\n" + "\n".join(findings)


def test_the_fuzz_generates_values_for_every_field_that_can_be_mistyped():
    from explorables.core.params import Text

    for slug in SLUGS:
        fields = dataclasses.fields(CHAPTERS[slug].module().Config)
        # any string is a valid free-text setting (a name, a path): only those may go without a case
        free_text = {f.name for f in fields if type(field_rule(f)) is Text and not field_rule(f).nonempty}
        assert {f.name for f in fields} - free_text <= {name for name, _ in field_cases(slug)}, slug
