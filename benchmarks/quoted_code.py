"""How much of the code the pages quote is the method, and how much is argument checking.

Every ``literalinclude`` with a ``:pyobject:`` in ``book/*.md`` names one function (or method) in
``src/explorables``. For each, the statements of its body are classified (by the syntax tree, not
by text):

- **validation**: a ``raise``; an ``if`` or ``try`` whose every branch only raises or checks; a call
  (bare or assigned) to a checking helper, a name starting with ``check``/``_check`` or equal to
  ``_tensor``; an ``assert``;
- **docstring**: the leading string;
- **method**: every other statement.

A statement counts with all its source lines; comment-only and blank lines count with nothing.
A quoted function whose method body is a single ``return`` of a call to a function named ``_`` +
its own name is a **wrapper** (the equations are in the function the page does not show).

    python benchmarks/quoted_code.py [--write benchmarks/quoted_code.md]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from explorables.notebooks import find_pyobject

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = re.compile(r"```\{literalinclude\}\s+(\S+)\s*\n((?::[^\n]*\n)*)")
CHECKERS = re.compile(r"^_?check|^_?require_|^_tensor$")


@dataclass
class Quoted:
    page: str
    name: str
    method: int
    validation: int
    docstring: int
    wrapper: bool


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return None


def _is_validation(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Raise | ast.Assert):
        return True
    if isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign):
        name = _call_name(stmt.value) if stmt.value is not None else None
        return name is not None and bool(CHECKERS.match(name))
    if isinstance(stmt, ast.If):
        branches = [stmt.body, stmt.orelse] if stmt.orelse else [stmt.body]
        return all(branch and all(_is_validation(s) for s in branch) for branch in branches)
    if isinstance(stmt, ast.Try):
        handlers_ok = all(all(_is_validation(s) or isinstance(s, ast.Pass) for s in h.body) for h in stmt.handlers)
        return handlers_ok and any(isinstance(s, ast.Raise) for h in stmt.handlers for s in h.body)
    return False


def _lines(stmt: ast.stmt) -> int:
    return (stmt.end_lineno or stmt.lineno) - stmt.lineno + 1


def classify(source: str, name: str, page: str = "") -> Quoted:
    """Count method, validation and docstring lines of ``name`` (``Class.method`` allowed) in ``source``."""
    body = list(find_pyobject(source, name).body)  # found as the pages' literalinclude finds it
    docstring = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        if isinstance(body[0].value.value, str):  # type: ignore[attr-defined]
            docstring = _lines(body[0])
            body = body[1:]
    method = [s for s in body if not _is_validation(s)]
    validation = sum(_lines(s) for s in body if _is_validation(s))
    short = name.split(".")[-1]
    wrapper = (
        len(method) == 1
        and isinstance(method[0], ast.Return)
        and _call_name(method[0].value) == f"_{short}"  # type: ignore[arg-type]
    )
    return Quoted(page, name, sum(_lines(s) for s in method), validation, docstring, wrapper)


def quoted_functions(book: Path = ROOT / "book") -> list[Quoted]:
    """Every ``:pyobject:`` the pages quote, classified."""
    found = []
    for page in sorted(book.glob("*.md")):
        for match in INCLUDE.finditer(page.read_text()):
            lines = [line[1:] for line in match.group(2).splitlines() if line.startswith(":")]
            options = dict(line.split(":", 1) for line in lines if ":" in line)
            if "pyobject" not in options:
                continue
            source = (page.parent / match.group(1)).resolve().read_text()
            found.append(classify(source, options["pyobject"].strip(), page.stem))
    return found


def table(rows: list[Quoted]) -> str:
    method = sum(r.method for r in rows)
    validation = sum(r.validation for r in rows)
    lines = [
        "| page | function | method lines | validation lines | docstring lines | wrapper |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.page} | `{r.name}` | {r.method} | {r.validation} | {r.docstring} | {'yes' if r.wrapper else ''} |"
        for r in rows
    ]
    share = method / max(1, method + validation)
    heavy = sum(r.validation >= r.method for r in rows)
    lines += [
        "",
        f"{len(rows)} quoted functions: {method} method lines, {validation} validation lines "
        f"(method share {share:.0%} of the code lines); {heavy} with at least as many validation as method "
        f"lines; {sum(r.wrapper for r in rows)} wrappers.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="write the table into this Markdown file")
    args = parser.parse_args(argv)
    text = table(quoted_functions())
    print(text)
    if args.write:
        intro = __doc__.split("\n\n", 1)[1]
        args.write.write_text(f"# Quoted code: method and validation lines\n\n{intro}\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
