"""A published single-cause method as the baseline: actual causality as an integer linear program.

Our reconstruction of the approach of Ibrahim & Pretschner (ATVA 2020, "From checking to
inference: actual causality computations as optimization problems"), solved with HiGHS through
:func:`scipy.optimize.milp`. It uses the same modified Halpern–Pearl definition (HP 2015) and the
same candidate convention as the rest of the chapter (:mod:`.causes`). Boolean models only.

**Encoding.** One binary value ``y_a`` for every endogenous ancestor ``a`` of φ and for φ's own
variables, and, for every candidate ``a`` (an ancestor outside φ), two binary move indicators:
``f_a`` (*flip*: ``a`` is in X⃗, set to its non-actual value) and ``h_a`` (*hold*: ``a`` is in W⃗,
fixed at its actual value), with ``f_a + h_a ≤ 1``. A variable with neither *follows* its
equation. Each equation is written as one linear inequality per row of its truth table over its
endogenous parents (exogenous parents are fixed by the context): "if the parents take the row's
values and ``a`` is not intervened on, ``y_a`` equals the row's output". The event ¬φ is one
inequality per row of φ's truth table on which φ is true ("the world is not this row").
(Ibrahim & Pretschner translate the equations by a Tseitin-style transformation of the formulas;
the truth-table form is equivalent and simple for the small fan-in of our models.)

**Inference** (:func:`ilp_minimal_cause`): minimise ``B·Σ f_a + Σ h_a`` with ``B`` larger than
the number of candidates. The optimum flips a smallest set of variables among all worlds in which
φ is false; that set is a ⊆-minimal cause (a strict subset passing AC2 would give a world with
fewer flips), and its contingency is a smallest one for it. Infeasible means no cause exists.

**Checking** (:func:`ilp_check`): a candidate X⃗ may flip, hold or follow; every other candidate
may only hold or follow. Infeasible: AC2 fails. Otherwise the optimum flips the fewest variables
of X⃗; X⃗ is a cause exactly when it must flip all of them (AC3), and otherwise the flipped subset
is a smaller cause, which the solver returns (the "inference" reading of a failed check).

**Enumeration with a single-cause solver** (:func:`ilp_enumerate`): ask for a minimal cause,
block every superset of it (``Σ_{a∈C} f_a ≤ |C| − 1``), ask again, until the program is
infeasible (every cause found: the list is then complete) or a budget of solver calls or causes
runs out. Causes come out in order of size, smallest first.

**Why blocking loses nothing, and why infeasible means complete.** Every set that passes AC2
contains a ⊆-minimal one, which is a cause; causes cannot contain one another, so a blocked
superset of a found cause is never a cause still to find, and when nothing is left that passes
AC2 outside the blocked sets, every cause has been found.

**Solver settings** (fixed before any run on the page's base seeds 0–4). Presolve is off: at these
sizes every solve ends at the root node, and presolve only adds a fixed cost per call (about four
times the cost of the solve). HiGHS runs on one thread (``threads=1``, which SciPy passes to HiGHS
verbatim). The budget is counted in solver calls (``max_solves``) and in branch-and-bound nodes
per call (``node_limit``), never in seconds, so what the method finds depends on the model
alone; times are measured, not used. Each solve's node count (``mip_node_count``) is kept: a
count of search work that no clock affects.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from ..core.arguments import checked
from ..core.params import Float, Int
from .causes import CauseSet, _cause_from, _check_variables, _setup, candidates_of
from .scm import BOOL, SCM

MAX_TABLE_INPUTS = 12
"""Truth tables (of an equation over its endogenous parents, or of φ) have at most 2**12 rows."""


@dataclass
class _Program:
    """The linear program of one (model, context, outcome): rows of ``lb ≤ A z ≤ ub`` over z."""

    cands: list[str]
    cone: list[str]  # candidates and φ's variables, topological order
    y: dict[str, int]  # column of y_a
    f: dict[str, int]  # column of f_a (candidates only)
    h: dict[str, int]  # column of h_a (candidates only)
    n_cols: int
    rows: list[dict[int, float]] = field(default_factory=list)
    lb: list[float] = field(default_factory=list)
    ub: list[float] = field(default_factory=list)

    def add(self, coefs: dict[int, float], lb: float, ub: float) -> None:
        self.rows.append(coefs)
        self.lb.append(lb)
        self.ub.append(ub)

    def matrix(self, extra: list[tuple[dict[int, float], float, float]]) -> LinearConstraint:
        rows = self.rows + [e[0] for e in extra]
        r, c, v = [], [], []
        for i, coefs in enumerate(rows):
            for j, x in coefs.items():
                r.append(i)
                c.append(j)
                v.append(x)
        A = coo_matrix((v, (r, c)), shape=(len(rows), self.n_cols)).tocsr()
        return LinearConstraint(A, self.lb + [e[1] for e in extra], self.ub + [e[2] for e in extra])


def _row_terms(names: list[str], row: tuple[int, ...], y: dict[str, int]) -> tuple[dict[int, float], int]:
    """``mismatch(row) = Σ_{r_p=1} (1 − y_p) + Σ_{r_p=0} y_p`` as (coefficients, constant)."""
    coefs: dict[int, float] = {}
    const = 0
    for name, bit in zip(names, row, strict=True):
        if bit:
            coefs[y[name]] = coefs.get(y[name], 0.0) - 1.0
            const += 1
        else:
            coefs[y[name]] = coefs.get(y[name], 0.0) + 1.0
    return coefs, const


def _encode(model: SCM, context: Mapping[str, int], phi, actual: dict[str, int]) -> _Program:
    cands = candidates_of(model, phi, ancestors_only=True)
    relevant = set(cands) | set(phi.names) | model.endogenous_ancestors(phi.names)
    cone = [v for v in model.order if v in relevant]
    y = {v: j for j, v in enumerate(cone)}
    f = {v: len(cone) + j for j, v in enumerate(cands)}
    h = {v: len(cone) + len(cands) + j for j, v in enumerate(cands)}
    prog = _Program(cands, cone, y, f, h, len(cone) + 2 * len(cands))
    for a in cone:  # the structural equations, one inequality per truth-table row
        parents = [p for p in model.parents(a) if p in model.formulas]
        if len(parents) > MAX_TABLE_INPUTS:
            raise ValueError(f"equation for {a} has {len(parents)} endogenous parents (> {MAX_TABLE_INPUTS})")
        movable = a in f
        for row in itertools.product(BOOL, repeat=len(parents)):
            out = model.formulas[a]({**context, **dict(zip(parents, row, strict=True))})
            mis, const = _row_terms(parents, row, y)
            coefs = dict(mis)
            coefs[y[a]] = coefs.get(y[a], 0.0) + (1.0 if out else -1.0)
            if movable:  # intervened: the equation does not bind
                coefs[f[a]] = coefs.get(f[a], 0.0) + 1.0
                coefs[h[a]] = coefs.get(h[a], 0.0) + 1.0
            if out:  # y_a + mismatch + f + h ≥ 1
                prog.add(coefs, 1.0 - const, math.inf)
            else:  # −y_a + mismatch + f + h ≥ 0
                prog.add(coefs, -float(const), math.inf)
    for a in cands:  # the moves: flip sets ¬a*, hold sets a*, not both
        if actual[a]:
            prog.add({y[a]: 1.0, f[a]: 1.0}, -math.inf, 1.0)  # f → y = 0
            prog.add({y[a]: 1.0, h[a]: -1.0}, 0.0, math.inf)  # h → y = 1
        else:
            prog.add({y[a]: 1.0, f[a]: -1.0}, 0.0, math.inf)  # f → y = 1
            prog.add({y[a]: 1.0, h[a]: 1.0}, -math.inf, 1.0)  # h → y = 0
        prog.add({f[a]: 1.0, h[a]: 1.0}, -math.inf, 1.0)
    names = sorted(phi.names, key=model.index.__getitem__)
    if len(names) > MAX_TABLE_INPUTS:
        raise ValueError(f"the outcome mentions {len(names)} variables (> {MAX_TABLE_INPUTS})")
    for row in itertools.product(BOOL, repeat=len(names)):  # ¬φ: the world is no row where φ holds
        if phi({**context, **dict(zip(names, row, strict=True))}):
            mis, const = _row_terms(names, row, y)
            prog.add(mis, 1.0 - const, math.inf)
    return prog


def _require_boolean(model: SCM) -> None:
    wide = [v for v, d in model.domains.items() if tuple(sorted(d)) != BOOL]
    wide += [u for u, d in model.exogenous.items() if tuple(sorted(d)) != BOOL]
    if wide:
        raise ValueError(f"the ILP baseline handles Boolean models only; variables {wide[:5]} are not Boolean")


@dataclass(frozen=True)
class _Solution:
    status: str  # "optimal", "infeasible" or "node limit"
    flip: list[str]
    hold: list[str]
    nodes: int = 0  # branch-and-bound nodes HiGHS explored (1: solved at the root)


NODE_LIMIT = 10_000
"""Branch-and-bound nodes per solve at most (a deterministic limit; far above what the book's models need)."""


def _solve(prog: _Program, allowed_flip: Iterable[str], extra: list, node_limit: int = NODE_LIMIT) -> _Solution:
    """Minimise B·Σ f + Σ h with flips only on ``allowed_flip``; HiGHS status mapped to a word."""
    allowed = set(allowed_flip)
    big = len(prog.cands) + 1.0
    c = np.zeros(prog.n_cols)
    upper = np.ones(prog.n_cols)
    for a in prog.cands:
        c[prog.f[a]], c[prog.h[a]] = big, 1.0
        if a not in allowed:
            upper[prog.f[a]] = 0.0
    options = {"presolve": False, "node_limit": int(node_limit), "threads": 1}
    with warnings.catch_warnings():  # SciPy warns that it passes ``threads`` to HiGHS verbatim
        warnings.filterwarnings("ignore", message="Unrecognized options", category=RuntimeWarning)
        res = milp(
            c,
            integrality=np.ones(prog.n_cols),
            bounds=Bounds(np.zeros(prog.n_cols), upper),
            constraints=prog.matrix(extra),
            options=options,
        )
    nodes = int(getattr(res, "mip_node_count", 0) or 0)
    if res.status == 2:
        return _Solution("infeasible", [], [], nodes)
    if res.status == 1 or res.x is None:  # the node limit before a proven optimum
        return _Solution("node limit", [], [], nodes)
    if res.status != 0:
        raise RuntimeError(f"HiGHS ended with status {res.status}: {res.message}")
    z = np.rint(res.x).astype(int)
    return _Solution("optimal", [a for a in prog.cands if z[prog.f[a]]], [a for a in prog.cands if z[prog.h[a]]], nodes)


@checked(skip_nested=True)  # ilp_enumerate runs bare: its arguments are checked here
def ilp_minimal_cause(model: SCM, context: Mapping[str, int], outcome: str) -> CauseSet:
    """One minimal (smallest) actual cause of ``outcome`` by optimisation, or none (inference mode)."""
    return ilp_enumerate(model, context, outcome, max_causes=1)


@checked()
@dataclass(frozen=True)
class CheckResult:
    """What :func:`ilp_check` found: ``is_cause``, and why not (``reason``), with a smaller cause if any."""

    is_cause: bool
    reason: str  # "cause", "outcome false" (AC1), "no witness" (AC2), "not minimal" (AC3)
    smaller: frozenset[str] = frozenset()
    contingency: frozenset[str] = frozenset()


@checked(skip_nested=True)  # parse_outcome runs bare
def ilp_check(model: SCM, context: Mapping[str, int], variables: Iterable[str], outcome: str) -> CheckResult:
    """Check AC1–AC3 for X⃗ = (actual values of ``variables``) with one integer program (checking mode).

    Infeasible program: AC2 fails (``"no witness"``). Feasible with fewer flips than |X⃗|: AC3 fails
    and ``smaller`` is the minimal subset the solver found (``"not minimal"``).
    """
    _require_boolean(model)
    phi, context, actual, holds = _setup(model, context, outcome)
    X = _check_variables(model, phi, variables)
    if not X:
        raise ValueError("variables must name at least one candidate cause variable")
    if not holds:
        return CheckResult(False, "outcome false")
    prog = _encode(model, context, phi, actual)
    outside = [v for v in X if v not in prog.f]  # a non-ancestor of φ: X⃗ cannot be minimal
    sol = _solve(prog, [v for v in X if v in prog.f], [])
    if sol.status == "infeasible":
        return CheckResult(False, "no witness")
    if sol.status != "optimal":  # pragma: no cover - the node limit is far above what one check needs
        raise RuntimeError("the checking program did not reach an optimum within the node limit")
    if len(sol.flip) == len(X) and not outside:
        return CheckResult(True, "cause", frozenset(sol.flip), frozenset(sol.hold))
    return CheckResult(False, "not minimal", frozenset(sol.flip), frozenset(sol.hold))


@checked(seconds=Float(0.0), solves=Int(0), nodes=Int(0), max_nodes=Int(0))
@dataclass
class Enumeration:
    """:func:`ilp_enumerate`'s causes, whether the list is complete, its solver calls and nodes, and times (s).

    ``causes``, ``complete``, ``solves`` and ``nodes`` depend on the model alone; ``found_at`` (the
    time each cause was found) and ``seconds`` are measurements.
    """

    causes: CauseSet
    found_at: list[float]
    complete: bool
    seconds: float
    solves: int
    nodes: int = 0
    max_nodes: int = 0  # the most nodes one solve explored (1: every solve ended at the root node)


@checked(skip_nested=True, max_causes=Int(1, 10**9), max_solves=Int(1, 10**9), node_limit=Int(1, 10**9))
def ilp_enumerate(
    model: SCM,
    context: Mapping[str, int],
    outcome: str,
    *,
    max_causes: int | None = None,
    max_solves: int | None = None,
    node_limit: int = NODE_LIMIT,
    details: bool = False,
) -> CauseSet | Enumeration:
    """Every actual cause a single-cause ILP solver finds by blocking the causes it found before.

    Stops when the program is infeasible (complete), after ``max_causes`` causes, after
    ``max_solves`` solver calls, or when one call reaches ``node_limit`` branch-and-bound nodes
    without an optimum. Every budget is a count, so the result depends on the model alone. Returns
    the :class:`~.causes.CauseSet` (method ``"ILP"``, ``evaluations`` = solver calls), or with
    ``details=True`` an :class:`Enumeration` with the nodes explored and the time each cause was found.
    """
    _require_boolean(model)
    start = time.perf_counter()
    phi, context, actual, holds = _setup(model, context, outcome)
    cands = candidates_of(model, phi, ancestors_only=True)
    causes, found_at, blocks = [], [], []
    complete, solves, nodes, max_nodes = not holds, 0, 0, 0
    if holds:
        prog = _encode(model, context, phi, actual)
        while (max_causes is None or len(causes) < max_causes) and (max_solves is None or solves < max_solves):
            sol = _solve(prog, cands, blocks, node_limit)
            solves += 1
            nodes += sol.nodes
            max_nodes = max(max_nodes, sol.nodes)
            if sol.status == "infeasible":
                complete = True
                break
            if sol.status == "node limit":
                break
            alt = {a: 1 - actual[a] for a in sol.flip}
            causes.append(_cause_from(model, context, phi, actual, sol.flip, alt, sol.hold))
            found_at.append(time.perf_counter() - start)
            blocks.append(({prog.f[a]: 1.0 for a in sol.flip}, -math.inf, len(sol.flip) - 1.0))
    result = CauseSet(outcome, holds, causes, tuple(cands), "ILP", solves)
    if not details:
        return result
    return Enumeration(result, found_at, complete, time.perf_counter() - start, solves, nodes, max_nodes)
