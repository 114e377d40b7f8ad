"""Structural causal models with Boolean (or small finite-domain) variables on a networkx DAG.

A model is written as a dictionary of formulas, one per endogenous variable, in a small,
safe subset of Python expression syntax (parsed with :mod:`ast`, never ``eval``):

* names of variables, integer and Boolean constants (``True``/``False`` are 1/0);
* ``and``, ``or``, ``not`` (on truth values: any non-zero value is true, results are 0/1);
* comparisons ``== != < <= > >=`` (chains allowed), ``+``, ``-`` and ``x if c else y``.

Example (the rock-throwing story of Halpern & Pearl)::

    SCM({"ST": "U_ST", "BT": "U_BT", "SH": "ST", "BH": "BT and not SH", "BS": "SH or BH"},
        exogenous=["U_ST", "U_BT"])

Definitions follow Halpern (2016), *Actual Causality*, ch. 2: a (recursive) causal model is a
set of exogenous variables U, endogenous variables V, and one structural equation per V; a
*context* u assigns every exogenous variable; an *intervention* [Y <- y] replaces the equations
of Y by the constants y. With an acyclic graph, (M, u) and an intervention determine all values.
Each formula is compiled twice: a scalar interpreter (:meth:`SCM.evaluate`, used by the
independent cause checker) and a numpy version over batches of interventions
(:meth:`SCM.evaluate_batch`, used by the enumerators).
"""

from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from ..core.arguments import Array, OfInstance, checked
from ..core.params import Int, Probability, Text

BOOL: tuple[int, ...] = (0, 1)
MAX_DOMAIN = 16  # small finite domains only: values are stored as int8

_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub}


@dataclass(frozen=True)
class Formula:
    """A parsed formula: its source, its variable names and its two compiled forms."""

    source: str
    names: frozenset[str]
    tree: ast.expr

    def __call__(self, env: Mapping[str, int]) -> int:
        """Scalar interpreter: the formula's value under ``env`` (a dict of ints)."""
        return _interpret(self.tree, env)

    def batch(self, env: Mapping[str, Any], size: int) -> np.ndarray:
        """Vectorised value over ``size`` rows; ``env`` maps names to arrays (or scalars)."""
        out = _vectorised(self.tree, env)
        return np.broadcast_to(np.asarray(out, dtype=np.int64), (size,))


MAX_FORMULA_CHARS = 2_000  # a model's equations are short; bounds parsing time and memory
MAX_FORMULA_DEPTH = 100  # nesting depth of the syntax tree (the interpreters recurse on it)
MAX_CONSTANT = 2**31 - 1  # integer constants (values live in small domains anyway)


def _depth(tree: ast.AST) -> int:
    """Nesting depth of ``tree``, without recursion (so a deep tree cannot overflow the stack here)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


@checked(where=Text())
def parse_formula(source: str, where: str = "formula") -> Formula:
    """Parse ``source`` into a :class:`Formula`, allowing only the safe subset (module docstring).

    Raises ``ValueError`` naming ``where`` (e.g. ``equation for BS``) and the offending construct,
    also for a formula longer than :data:`MAX_FORMULA_CHARS` characters, nested deeper than
    :data:`MAX_FORMULA_DEPTH`, or with an integer constant beyond ±:data:`MAX_CONSTANT`.
    """
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"{where} must be a non-empty formula string, got {source!r}")
    if len(source) > MAX_FORMULA_CHARS:
        raise ValueError(f"{where}: a formula may have at most {MAX_FORMULA_CHARS} characters, got {len(source)}")
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"{where}: cannot parse {source[:80]!r} ({exc.msg})") from None
    except (RecursionError, MemoryError, ValueError):
        raise ValueError(f"{where}: the formula is nested too deeply or too large to parse") from None
    if _depth(tree) > MAX_FORMULA_DEPTH:
        raise ValueError(f"{where}: a formula may be nested at most {MAX_FORMULA_DEPTH} levels deep")
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Constant):
            if not isinstance(node.value, (bool, int)):
                raise ValueError(f"{where}: only integer and Boolean constants are allowed, got {node.value!r}")
            if abs(int(node.value)) > MAX_CONSTANT:
                raise ValueError(f"{where}: integer constants must lie within ±{MAX_CONSTANT}")
        elif isinstance(node, ast.BoolOp | ast.And | ast.Or | ast.Not | ast.Load | ast.IfExp | ast.USub):
            continue
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.Not | ast.USub):
                raise ValueError(f"{where}: operator {type(node.op).__name__} is not allowed in {source!r}")
        elif isinstance(node, ast.Compare):
            bad = [op for op in node.ops if type(op) not in _COMPARE]
            if bad:
                raise ValueError(f"{where}: comparison {type(bad[0]).__name__} is not allowed in {source!r}")
        elif isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY:
                raise ValueError(f"{where}: only + and - are allowed as arithmetic, got {type(node.op).__name__}")
        elif isinstance(node, tuple(_COMPARE) + tuple(_BINARY)):
            continue
        else:
            raise ValueError(
                f"{where}: {type(node).__name__} is not allowed in {source!r}; use names, constants, "
                "and/or/not, comparisons, + and -, and 'x if c else y'"
            )
    return Formula(source.strip(), frozenset(names), tree)


def _interpret(node: ast.expr, env: Mapping[str, int]) -> int:
    if isinstance(node, ast.Name):
        return int(env[node.id])
    if isinstance(node, ast.Constant):
        return int(node.value)
    if isinstance(node, ast.BoolOp):
        values = (_interpret(v, env) != 0 for v in node.values)
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    if isinstance(node, ast.UnaryOp):
        v = _interpret(node.operand, env)
        return int(v == 0) if isinstance(node.op, ast.Not) else -v
    if isinstance(node, ast.Compare):
        left = _interpret(node.left, env)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _interpret(right_node, env)
            if not _COMPARE[type(op)](left, right):
                return 0
            left = right
        return 1
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_interpret(node.left, env), _interpret(node.right, env))
    if isinstance(node, ast.IfExp):
        return _interpret(node.body, env) if _interpret(node.test, env) != 0 else _interpret(node.orelse, env)
    raise AssertionError(type(node))  # parse_formula admits nothing else


def _vectorised(node: ast.expr, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Constant):
        return int(node.value)
    if isinstance(node, ast.BoolOp):
        parts = [np.asarray(_vectorised(v, env)) != 0 for v in node.values]
        reduce = np.logical_and.reduce if isinstance(node.op, ast.And) else np.logical_or.reduce
        return reduce(np.broadcast_arrays(*parts)).astype(np.int64)
    if isinstance(node, ast.UnaryOp):
        v = np.asarray(_vectorised(node.operand, env))
        return (v == 0).astype(np.int64) if isinstance(node.op, ast.Not) else -v.astype(np.int64)
    if isinstance(node, ast.Compare):
        left = np.asarray(_vectorised(node.left, env), dtype=np.int64)
        result = np.asarray(True)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = np.asarray(_vectorised(right_node, env), dtype=np.int64)
            result = result & _COMPARE[type(op)](left, right)
            left = right
        return result.astype(np.int64)
    if isinstance(node, ast.BinOp):
        left = np.asarray(_vectorised(node.left, env), dtype=np.int64)
        return _BINARY[type(node.op)](left, np.asarray(_vectorised(node.right, env), dtype=np.int64))
    if isinstance(node, ast.IfExp):
        return np.where(
            np.asarray(_vectorised(node.test, env)) != 0, _vectorised(node.body, env), _vectorised(node.orelse, env)
        )
    raise AssertionError(type(node))


#: :meth:`SCM.evaluate_batch`'s ``mask`` and ``values``: 2-D, one column per endogenous variable
BATCH = OfInstance("_check_batch", "a 2-D array with one column per endogenous variable")


@checked(skip_nested=True)  # parse_formula and parents run bare in the constructor
class SCM:
    """A recursive structural causal model over finite domains (Boolean by default).

    Parameters
    ----------
    equations:
        ``{variable: formula}`` for every endogenous variable (insertion order is kept for display).
    exogenous:
        The exogenous variables: a list of names (Boolean), or ``{name: domain}``.
    domains:
        Optional ``{endogenous variable: tuple of allowed ints}``; default Boolean ``(0, 1)``.

    Raises ``ValueError`` for: a formula outside the safe syntax, a name that is neither
    endogenous nor exogenous, a variable declared both ways, a cycle (the message shows it), a
    domain that is empty/too large/not integers, and an equation that can produce a value outside
    its variable's domain (checked exhaustively over the parents' domains when that is small).
    """

    def __init__(
        self,
        equations: Mapping[str, str],
        exogenous: Iterable[str] | Mapping[str, Sequence[int]] = (),
        domains: Mapping[str, Sequence[int]] | None = None,
    ):
        if not isinstance(equations, Mapping) or not equations:
            raise ValueError("equations must be a non-empty dict {variable: formula}")
        exo = dict(exogenous) if isinstance(exogenous, Mapping) else {name: BOOL for name in exogenous}
        both = sorted(set(exo) & set(equations))
        if both:
            raise ValueError(f"variables {both} are declared both exogenous and endogenous (with an equation)")
        self.exogenous: dict[str, tuple[int, ...]] = {u: _check_domain(f"domain of {u}", d) for u, d in exo.items()}
        domains = dict(domains or {})
        unknown_dom = sorted(set(domains) - set(equations))
        if unknown_dom:
            raise ValueError(f"domains given for unknown endogenous variables {unknown_dom}")
        self.domains: dict[str, tuple[int, ...]] = {
            v: _check_domain(f"domain of {v}", domains.get(v, BOOL)) for v in equations
        }
        self.formulas: dict[str, Formula] = {}
        for v, src in equations.items():
            if not isinstance(v, str) or not v.isidentifier():
                raise ValueError(f"variable names must be identifiers, got {v!r}")
            self.formulas[v] = parse_formula(src, f"equation for {v}")  # names the equation
        graph = nx.DiGraph()
        graph.add_nodes_from(self.exogenous, exogenous=True)
        graph.add_nodes_from(self.formulas, exogenous=False)
        for v, f in self.formulas.items():
            unknown = sorted(f.names - set(self.formulas) - set(self.exogenous))
            if unknown:
                raise ValueError(
                    f"equation for {v} uses unknown variable(s) {unknown}; declare them as exogenous "
                    "or give them an equation"
                )
            graph.add_edges_from((p, v) for p in f.names)
        if not nx.is_directed_acyclic_graph(graph):
            cycle = " -> ".join(e[0] for e in nx.find_cycle(graph)) + f" -> {nx.find_cycle(graph)[0][0]}"
            raise ValueError(f"the model has a cycle ({cycle}); structural equations must form a DAG")
        self.graph = graph
        self.order: list[str] = [v for v in nx.topological_sort(graph) if v in self.formulas]
        self.index = {v: i for i, v in enumerate(self.order)}
        self._check_ranges()

    # -- structure ---------------------------------------------------------------------------
    @property
    def endogenous(self) -> list[str]:
        """Endogenous variables in topological order."""
        return list(self.order)

    @checked(v=OfInstance("_check_endogenous", "the name of an endogenous variable of the model"))
    def parents(self, v: str) -> list[str]:
        """The variables (endogenous or exogenous) that the equation of ``v`` reads, sorted."""
        return sorted(self.formulas[v].names)

    @checked(variables=OfInstance("_check_variables", "an iterable of names of variables of the model"))
    def endogenous_ancestors(self, variables: Iterable[str]) -> set[str]:
        """Endogenous strict ancestors of ``variables`` (networkx ``ancestors``), excluding them."""
        variables = set(variables)
        out: set[str] = set()
        for v in variables:
            out |= nx.ancestors(self.graph, v)
        return {a for a in out if a in self.formulas} - variables

    def intervened(self, setting: Mapping[str, int]) -> SCM:
        """The model M_{Y <- y}: the equations of ``setting``'s variables replaced by constants."""
        self._check_setting("setting", setting)
        eqs = {v: (str(int(setting[v])) if v in setting else f.source) for v, f in self.formulas.items()}
        return SCM(eqs, self.exogenous, self.domains)

    def __repr__(self) -> str:
        eqs = "; ".join(f"{v} = {self.formulas[v].source}" for v in self.order)
        return f"SCM({eqs}; exogenous {sorted(self.exogenous)})"

    # -- validation ----------------------------------------------------------------------------
    def check_context(self, context: Mapping[str, int]) -> dict[str, int]:
        """Return the context as ints; every exogenous variable needs a value in its domain."""
        if not isinstance(context, Mapping):
            raise ValueError(f"context must be a dict {{exogenous variable: value}}, got {context!r}")
        missing = sorted(set(self.exogenous) - set(context))
        if missing:
            raise ValueError(f"context is missing values for exogenous variable(s) {missing}")
        extra = sorted(set(context) - set(self.exogenous))
        if extra:
            raise ValueError(f"context assigns {extra}, which are not exogenous variables of the model")
        out = {}
        for u, val in context.items():
            out[u] = _check_value(f"context value of {u}", val, self.exogenous[u])
        return out

    def _check_setting(self, name: str, setting: Mapping[str, int]) -> dict[str, int]:
        """Validate an intervention ``{endogenous variable: value}`` (``name`` names it in the error)."""
        if not isinstance(setting, Mapping):
            raise ValueError(f"{name} must be a dict {{endogenous variable: value}}, got {setting!r}")
        out = {}
        for v, val in setting.items():
            if v not in self.formulas:
                raise ValueError(f"{name} names {v!r}, which is not an endogenous variable; known: {self.order}")
            out[v] = _check_value(f"{name} value of {v}", val, self.domains[v])
        return out

    def _check_endogenous(self, name: str, v: object) -> str:
        if not isinstance(v, str) or v not in self.formulas:
            raise ValueError(f"{name} must name an endogenous variable of the model, one of {self.order}; got {v!r}")
        return v

    def _check_variables(self, name: str, variables: object) -> list[str]:
        if isinstance(variables, (str, bytes)) or not isinstance(variables, Iterable):
            raise ValueError(f"{name} must be an iterable of variable names (a list, not one name), got {variables!r}")
        out = list(variables)
        unknown = [v for v in out if not isinstance(v, str) or v not in self.graph]
        if unknown:
            raise ValueError(f"{name} must name variables of the model, got {unknown!r}; known: {sorted(self.graph)}")
        return out

    def _check_batch(self, name: str, array: object) -> np.ndarray:
        """``mask`` or ``values`` of :meth:`evaluate_batch`: a 2-D array with one column per endogenous variable."""
        n = {"n": (len(self.order), "the model's endogenous variables")}
        if name == "mask":
            if not isinstance(array, np.ndarray) or array.dtype != np.bool_:
                what = f"dtype {array.dtype}" if isinstance(array, np.ndarray) else type(array).__name__
                raise ValueError(f"mask must be a Boolean numpy array of shape (B, {len(self.order)}), got {what}")
            return Array("b n").check_dims(name, array, n)
        Array("b n", integer=True).check_dims(name, array, n)
        array = np.asarray(array)  # the method receives what was checked: a list of rows becomes an array
        if array.min() < -128 or array.max() > 127:
            raise ValueError(f"{name} must hold integers in [-128, 127] (the domains' range)")
        return array

    def _check_ranges(self, max_rows: int = 4096) -> None:
        """Every equation maps its parents' domains into its own domain (checked exhaustively)."""
        for v in self.order:
            parents = self.parents(v)
            doms = [self.domains.get(p) or self.exogenous[p] for p in parents]
            if np.prod([len(d) for d in doms], dtype=float) > max_rows:
                continue
            rows = np.array(list(itertools.product(*doms)), dtype=np.int64).reshape(-1, len(parents) or 1)[
                :, : len(parents)
            ]
            env = {p: rows[:, j] for j, p in enumerate(parents)}
            values = self.formulas[v].batch(env, len(rows))
            bad = ~np.isin(values, self.domains[v])
            if bad.any():
                example = dict(zip(parents, rows[np.argmax(bad)].tolist(), strict=True))
                raise ValueError(
                    f"equation for {v} ({self.formulas[v].source}) gives {int(values[np.argmax(bad)])} when "
                    f"{example}, outside the domain {self.domains[v]} of {v}"
                )

    # -- evaluation ------------------------------------------------------------------------------
    def evaluate(self, context: Mapping[str, int], intervention: Mapping[str, int] | None = None) -> dict[str, int]:
        """All endogenous values in (M, u) under ``[intervention]``, by the scalar interpreter."""
        env: dict[str, int] = self.check_context(context)
        setting = self._check_setting("intervention", intervention or {})
        for v in self.order:
            env[v] = setting[v] if v in setting else self.formulas[v](env)
        return {v: env[v] for v in self.order}

    @checked(mask=BATCH, values=BATCH)
    def evaluate_batch(self, context: Mapping[str, int], mask: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Values of all endogenous variables for a batch of interventions (numpy path).

        ``mask[b, i]`` (Boolean) says whether variable ``order[i]`` is intervened on in row ``b``, and
        ``values[b, i]`` (an integer) is then its value. Returns an int8 array of shape ``(B, n)``. The
        enumerators call it in their loops with its checks skipped (``skip_nested``).
        """
        ctx = self.check_context(context)
        B = mask.shape[0]
        if values.shape != mask.shape:
            raise ValueError(f"values must have the shape of mask {mask.shape}, got {values.shape}")
        out = np.empty((B, len(self.order)), dtype=np.int8)
        env: dict[str, Any] = dict(ctx)
        for i, v in enumerate(self.order):
            computed = self.formulas[v].batch(env, B)
            out[:, i] = np.where(mask[:, i], values[:, i], computed)
            env[v] = out[:, i]
        return out


def _check_domain(name: str, domain: Sequence[int]) -> tuple[int, ...]:
    try:
        dom = tuple(int(x) for x in domain)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of integers, got {domain!r}") from None
    if len(dom) < 2 or len(set(dom)) != len(dom) or len(dom) > MAX_DOMAIN:
        raise ValueError(f"{name} must hold 2 to {MAX_DOMAIN} distinct integers, got {domain!r}")
    if min(dom) < -128 or max(dom) > 127:
        raise ValueError(f"{name} values must lie in [-128, 127], got {domain!r}")
    return dom


def _check_value(name: str, value: Any, domain: tuple[int, ...]) -> int:
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if not isinstance(value, (int, np.integer)) or int(value) not in domain:
        kind = "Boolean (0/1 or False/True)" if domain == BOOL else f"one of {domain}"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return int(value)


@checked(n=Int(1, 1_000), max_parents=Int(1, 12), p_root=Probability())
def random_boolean_scm(
    n: int, rng: np.random.Generator, max_parents: int = 3, p_root: float = 0.25
) -> tuple[SCM, dict[str, int], str]:
    """A random Boolean SCM with ``n`` endogenous variables, a random context and an outcome.

    Variables ``V0 .. V{n-1}`` in order; ``V0`` and, with probability ``p_root``, any other
    variable is a *root* ``Vi = Ui`` (its own exogenous coin); the others get 1 to
    ``max_parents`` parents among earlier variables (biased to recent ones, so graphs are deep)
    and a random non-constant truth table written as a DNF formula. The outcome is the variable
    with the most ancestors; the event is "it takes its actual value".
    Returns ``(model, context, outcome formula)``. ``n`` is at most 1,000 (a second to build; the
    enumerators need far fewer), ``max_parents`` at most 12 (truth tables of ``2**max_parents`` rows).
    """
    equations: dict[str, str] = {}
    exogenous: list[str] = []
    for i in range(n):
        if i == 0 or rng.random() < p_root:
            exogenous.append(f"U{i}")
            equations[f"V{i}"] = f"U{i}"
            continue
        k = int(rng.integers(1, min(max_parents, i) + 1))
        weights = np.arange(1, i + 1, dtype=float) ** 2
        parents = sorted(rng.choice(i, size=k, replace=False, p=weights / weights.sum()).tolist())
        while True:
            table = rng.integers(0, 2, size=2**k)
            if 0 < table.sum() < 2**k:
                break
        equations[f"V{i}"] = _dnf([f"V{p}" for p in parents], table)
    context = {u: int(rng.integers(0, 2)) for u in exogenous}
    model = SCM(equations, exogenous)
    outcome_var = max(model.order, key=lambda v: (len(model.endogenous_ancestors([v])), model.index[v]))
    actual = model.evaluate(context)[outcome_var]
    return model, context, f"{outcome_var} == {actual}"


def _dnf(names: list[str], table: np.ndarray) -> str:
    """A truth table over ``names`` (row r: bit j of r is names[j]) as a readable DNF formula."""
    terms = []
    for r, out in enumerate(table):
        if out:
            lits = [(n if (r >> j) & 1 else f"not {n}") for j, n in enumerate(names)]
            terms.append(" and ".join(lits))
    if len(terms) == 1:
        return terms[0]
    return " or ".join(f"({t})" if " and " in t else t for t in terms)
