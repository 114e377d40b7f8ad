"""Where the packages check their arguments: issue 38's "check once, at the boundary", counted.

Reads every ``.py`` file under ``src/explorables`` (by the syntax tree, not by text) and counts, per package:

- ``@checked`` uses, those with ``skip_nested=True`` and those that declare no rule (``@checked()``: the type
  hints and default rules only);
- **bypasses**: ``<fn>.__wrapped__`` and ``inspect.unwrap`` in package code (core's own tooling aside);
- **twins**: a checked function ``f`` whose body calls a private ``_f`` (the method, or part of it, is in a private
  copy that internal callers use unchecked);
- **body checks on a declared parameter**: a statement of a checked function's body that only checks (a ``raise``,
  an ``if`` that only raises, a call of a ``check``/``_check`` helper; the classifier of ``quoted_code.py``) and
  reads a parameter the decorator gives an explicit rule. Each is sorted by what it reads:

  - ``shape``: the parameter's ``.shape``/``.ndim``/``len`` where its rule is an ``Array`` with a shape: the rule
    already fixed the number of axes and the sizes its names share (a likely repeat);
  - ``finite``: ``isfinite``/``isnan`` of an ``Array`` parameter whose rule refuses NaN (a likely repeat);
  - ``range``: a comparison of a parameter ruled by ``Int``/``Float`` with a constant (a likely repeat);
  - ``other``: everything else (a cross-parameter condition the rules cannot say, a value's content such as
    "holds only ±1", a helper call): read it before calling it a repeat.

The likely repeats are candidates for removal; ``other`` are mostly checks no declared rule makes. Run

    python benchmarks/boundary_census.py [--list] [--write benchmarks/boundary_census.md]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quoted_code import _is_validation  # the same classifier as the quoted-code count

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "explorables"
SHAPE_ATTRS = {"shape", "ndim", "size", "dim"}
FINITE_CALLS = {"isfinite", "isnan", "isinf", "all_finite"}
KINDS = ("shape", "finite", "range", "other")


@dataclass
class Package:
    name: str
    checked: int = 0
    skip_nested: int = 0
    no_rule: int = 0
    wrapped: list[str] = field(default_factory=list)
    unwrap: list[str] = field(default_factory=list)
    twins: list[str] = field(default_factory=list)
    body_checks: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, where, parameter)


def _checked_call(decorator: ast.expr, names: frozenset[str] = frozenset({"checked"})) -> ast.Call | None:
    """The ``@checked(...)`` call of a decorator (under any name the module imported it as), else ``None``."""
    if isinstance(decorator, ast.Call):
        func = decorator.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name in names:
            return decorator
    return None


def _checked_names(tree: ast.Module) -> frozenset[str]:
    """``checked`` and the names a module imports it as (``from ..core.arguments import checked as checked_args``)."""
    names = {"checked"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names |= {alias.asname for alias in node.names if alias.name == "checked" and alias.asname}
    return frozenset(names)


def _rule_kind(value: ast.expr) -> tuple[str, bool]:
    """The rule's class name and, for ``Array``, whether it declares a shape."""
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "?"
        has_shape = bool(value.args) and not (isinstance(value.args[0], ast.Constant) and value.args[0].value is None)
        has_shape = has_shape or any(k.arg == "shape" for k in value.keywords)
        return name, has_shape
    return "?", False


def _sort(stmt: ast.stmt, param: str, rule: str, has_shape: bool) -> str:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Attribute) and node.attr in SHAPE_ATTRS and rule == "Array" and has_shape:
            if isinstance(node.value, ast.Name) and node.value.id == param:
                return "shape"
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            reads = any(isinstance(a, ast.Name) and a.id == param for a in node.args)
            if name == "len" and reads and rule == "Array" and has_shape:
                return "shape"
            if name in FINITE_CALLS and reads and rule == "Array":
                return "finite"
        if isinstance(node, ast.Compare) and rule in ("Int", "Float"):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Name) and s.id == param for s in sides) and any(
                isinstance(s, ast.Constant) or (isinstance(s, ast.UnaryOp) and isinstance(s.operand, ast.Constant))
                for s in sides
            ):
                return "range"
    return "other"


def _function(package: Package, fn: ast.FunctionDef, where: str, rules: dict[str, tuple[str, bool]]) -> None:
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    calls = [node.func for stmt in body for node in ast.walk(stmt) if isinstance(node, ast.Call)]
    names = {f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "" for f in calls}
    if f"_{fn.name}" in names:  # the method lives in a private copy that the checked function (and loops) call
        package.twins.append(where)
    for stmt in body:
        if not _is_validation(stmt):
            continue
        names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        for param in sorted(names & set(rules)):
            rule, has_shape = rules[param]
            package.body_checks.append((_sort(stmt, param, rule, has_shape), f"{where}:{stmt.lineno}", param))


def census(src: Path = SRC) -> dict[str, Package]:
    packages: dict[str, Package] = {}
    for path in sorted(src.rglob("*.py")):
        relative = path.relative_to(src)
        name = relative.parts[0] if len(relative.parts) > 1 else "(top level)"
        package = packages.setdefault(name, Package(name))
        tree = ast.parse(path.read_text())
        checked_names = _checked_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "__wrapped__":
                package.wrapped.append(f"{relative}:{node.lineno}")
            if isinstance(node, ast.Attribute) and node.attr == "unwrap":
                if isinstance(node.value, ast.Name) and node.value.id == "inspect":
                    package.unwrap.append(f"{relative}:{node.lineno}")
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            for decorator in node.decorator_list:
                call = _checked_call(decorator, checked_names)
                if call is None:
                    continue
                package.checked += 1
                keywords = {k.arg: k.value for k in call.keywords if k.arg}
                skip = keywords.pop("skip_nested", None)
                keywords.pop("relation", None)  # a check of several arguments, not a parameter's rule
                package.skip_nested += isinstance(skip, ast.Constant) and skip.value is True
                package.no_rule += not keywords
                rules = {k: _rule_kind(v) for k, v in keywords.items()}
                if isinstance(node, ast.ClassDef):
                    init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
                    if init is not None:
                        _function(package, init, f"{relative}:{node.name}.__init__", rules)
                else:
                    _function(package, node, f"{relative}:{node.name}", rules)  # type: ignore[arg-type]
    return packages


def table(packages: dict[str, Package], listing: bool = False) -> str:
    rows = [
        "| package | `@checked` | skip_nested | no rule | `__wrapped__` | `inspect.unwrap` | twins | "
        + " | ".join(f"body: {k}" for k in KINDS)
        + " |",
        "|---" * (7 + len(KINDS)) + "|",
    ]
    total = Counter()
    for p in packages.values():
        kinds = Counter(k for k, _, _ in p.body_checks)
        values = [p.checked, p.skip_nested, p.no_rule, len(p.wrapped), len(p.unwrap), len(p.twins)]
        values += [kinds[k] for k in KINDS]
        total.update(dict(enumerate(values)))
        rows.append(f"| {p.name} | " + " | ".join(str(v) for v in values) + " |")
    rows.append("| **all** | " + " | ".join(str(total[i]) for i in range(6 + len(KINDS))) + " |")
    if listing:
        rows += ["", "Bypasses, twins and the body checks sorted `shape`, `finite` or `range`:", ""]
        for p in packages.values():
            rows += [f"- {p.name}: `__wrapped__` {w}" for w in p.wrapped]
            rows += [f"- {p.name}: `inspect.unwrap` {w}" for w in p.unwrap]
            rows += [f"- {p.name}: twin {w}" for w in p.twins]
            rows += [f"- {p.name}: {k} `{param}` at {w}" for k, w, param in p.body_checks if k != "other"]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list every bypass, twin and likely repeat")
    parser.add_argument("--write", type=Path, help="write the table (with the list) into this Markdown file")
    args = parser.parse_args(argv)
    packages = census()
    print(table(packages, args.list))
    if args.write:
        intro = __doc__.split("\n\n", 1)[1].rsplit("Run\n", 1)[0]
        text = table(packages, listing=True)
        args.write.write_text(f"# Boundary census: where the packages check their arguments\n\n{intro}\n{text}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
