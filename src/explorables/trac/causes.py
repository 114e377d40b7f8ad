"""Actual causes under the modified Halpern–Pearl definition (Halpern 2015), four ways.

Definition (Halpern 2015; *Actual Causality*, Def. 2.2.1 with AC2(a^m)). In a model M with
context u, the conjunction X⃗ = x⃗ is an *actual cause* of the event φ if

* **AC1** (M, u) ⊨ X⃗ = x⃗ and (M, u) ⊨ φ;
* **AC2(a^m)** there are a set W⃗ of variables and a setting x⃗′ of X⃗ such that, with w⃗* the
  *actual* values of W⃗, (M, u) ⊨ [X⃗ ← x⃗′, W⃗ ← w⃗*] ¬φ;
* **AC3** no strict subset of X⃗ satisfies AC1 and AC2.

Convention used throughout (as in the literature's examples): causes and contingency sets range
over the endogenous variables that do not occur in φ ("candidates"). Since AC1 only asks that
X⃗ = x⃗ hold actually, a cause is identified by its set of variables X⃗ (x⃗ = their actual values).

What is here:

* :func:`is_actual_cause`: the definition checked literally for one candidate, with the scalar
  interpreter (the independent checker the tests use);
* :func:`brute_force_causes`: the oracle, every (X⃗, W⃗, x⃗′) evaluated (4^n interventions for
  n Boolean candidates), then the minimal X⃗ kept;
* :func:`trac`: our reconstruction of TrAC, which enumerates *witness worlds* over the ancestors
  of φ only (2^a assignments for a Boolean ancestors) and reads each world's unique minimal
  intervention off it (module :mod:`.trac`);
* :func:`pruned_search`: the reconstruction in the research notes (ancestors only, x⃗′ = ¬x⃗,
  X⃗ by increasing size, supersets of found causes pruned), and two single-cause baselines,
  :func:`but_for_causes` and :func:`first_cause`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..core.arguments import checked
from ..core.params import Int
from .scm import SCM, Formula, parse_formula

CHUNK_ROWS = 1 << 17


@checked()
@dataclass(frozen=True)
class Cause:
    """An actual cause X⃗ = x⃗ with one witness: contingency W⃗ = w⃗* and alternative x⃗′.

    ``contingency`` is a smallest W⃗ for this X⃗ (over all witnesses), so ``k = |X⃗| + |W⃗|``
    is the quantity of the Chockler–Halpern degree of responsibility. ``world`` is the
    counterfactual world (M, u) under [X⃗ ← x⃗′, W⃗ ← w⃗*], in which φ is false.
    """

    actual: dict[str, int]
    alternative: dict[str, int]
    contingency: dict[str, int]
    world: dict[str, int] = field(default_factory=dict)

    @property
    def variables(self) -> frozenset[str]:
        """The cause's variables X⃗ (without their values), the key by which cause sets are compared."""
        return frozenset(self.actual)

    @property
    def k(self) -> int:
        """|X⃗| + |W⃗| for this witness; with W⃗ a smallest contingency, 1/k is the Chockler–Halpern
        responsibility of each variable of X⃗ through this cause (see :mod:`.responsibility`)."""
        return len(self.actual) + len(self.contingency)

    def describe(self) -> str:
        x = " ∧ ".join(f"{v}={val}" for v, val in self.actual.items())
        w = ", ".join(f"{v}={val}" for v, val in self.contingency.items()) or "∅"
        alt = ", ".join(f"{v}←{val}" for v, val in self.alternative.items())
        return f"{x}   (set {alt}; hold {{{w}}})" if self.contingency else f"{x}   (set {alt}; W = ∅)"


@checked(evaluations=Int(0))
@dataclass
class CauseSet:
    """All causes found by one method, with what it cost."""

    outcome: str
    holds: bool  # φ holds in the actual world (else there are no causes: AC1 fails)
    causes: list[Cause]
    candidates: tuple[str, ...]
    method: str
    evaluations: int = 0  # interventions evaluated (rows of the batched evaluator)

    @property
    def sets(self) -> set[frozenset[str]]:
        return {c.variables for c in self.causes}


@checked(skip_nested=True)  # parse_formula runs bare: outcome is checked here
def parse_outcome(model: SCM, outcome: str) -> Formula:
    """The event φ as a formula over endogenous variables (e.g. ``"BS"`` or ``"Y == 0"``)."""
    phi = parse_formula(outcome, "outcome")
    unknown = sorted(phi.names - set(model.formulas))
    if unknown:
        raise ValueError(f"outcome {outcome!r} uses {unknown}, which are not endogenous variables of the model")
    if not phi.names:
        raise ValueError(f"outcome {outcome!r} must mention at least one endogenous variable")
    return phi


def candidates_of(model: SCM, phi: Formula, ancestors_only: bool) -> list[str]:
    """Variables that may appear in X⃗ or W⃗ (topological order): all non-φ endogenous ones, or
    only the ancestors of φ's variables (the *ancestor grammar*; see :func:`trac`)."""
    if ancestors_only:
        keep = model.endogenous_ancestors(phi.names)
        return [v for v in model.order if v in keep]
    return [v for v in model.order if v not in phi.names]


# --- the independent checker (scalar interpreter, literal definition) --------------------------


@checked(skip_nested=True)  # parse_outcome runs bare: its arguments are checked here
def ac2_witness(
    model: SCM, context: Mapping[str, int], variables: Iterable[str], outcome: str
) -> tuple[dict[str, int], dict[str, int]] | None:
    """A witness (W⃗ ← w⃗*, X⃗ ← x⃗′) for AC2(a^m), or None; smallest W⃗ first.

    Literal search over every W⃗ ⊆ candidates ∖ X⃗ and every x⃗′ ∈ ∏ dom(X), by the scalar
    interpreter (independent of the batched evaluator the enumerators use).
    """
    phi = parse_outcome(model, outcome)
    actual = model.evaluate(context)
    X = _check_variables(model, phi, variables)
    rest = [v for v in candidates_of(model, phi, False) if v not in X]
    settings = list(itertools.product(*(model.domains[v] for v in X)))
    for size in range(len(rest) + 1):
        for W in itertools.combinations(rest, size):
            held = {w: actual[w] for w in W}
            for xs in settings:
                alt = dict(zip(X, xs, strict=True))
                if not phi({**context, **model.evaluate(context, {**held, **alt})}):
                    return held, alt
    return None


@checked(skip_nested=True)  # parse_outcome and ac2_witness run bare: their arguments are checked here
def is_actual_cause(model: SCM, context: Mapping[str, int], variables: Iterable[str], outcome: str) -> bool:
    """Whether X⃗ = (actual values of ``variables``) is an actual cause of ``outcome`` (AC1–AC3)."""
    phi = parse_outcome(model, outcome)
    X = _check_variables(model, phi, variables)
    if not X or not phi({**context, **model.evaluate(context)}):  # AC1
        return False
    if ac2_witness(model, context, X, outcome) is None:  # AC2(a^m)
        return False
    return not any(  # AC3: no strict non-empty subset satisfies AC2 (AC1 holds for every subset)
        ac2_witness(model, context, sub, outcome) is not None
        for size in range(1, len(X))
        for sub in itertools.combinations(X, size)
    )


def _check_variables(model: SCM, phi: Formula, variables: Iterable[str]) -> list[str]:
    X = list(dict.fromkeys(variables))
    bad = [v for v in X if v not in model.formulas or v in phi.names]
    if bad:
        raise ValueError(f"candidate cause variables {bad} must be endogenous and not occur in the outcome")
    return sorted(X, key=model.index.__getitem__)


# --- shared machinery -------------------------------------------------------------------------


def _digits(codes: np.ndarray, radices: list[int]) -> np.ndarray:
    """Mixed-radix digits of integer ``codes`` (least significant first), shape (len(codes), len(radices))."""
    out = np.empty((len(codes), len(radices)), dtype=np.int64)
    rest = codes.copy()
    for j, r in enumerate(radices):
        out[:, j] = rest % r
        rest //= r
    return out


def _chunks(total: int, chunk: int = CHUNK_ROWS) -> Iterator[np.ndarray]:
    for start in range(0, total, chunk):
        yield np.arange(start, min(total, start + chunk), dtype=np.int64)


@checked()
def minimal_sets(masks: Iterable[int]) -> list[int]:
    """The ⊆-minimal elements of a family of sets given as bit masks (sorted by size, then value)."""
    unique = np.unique(np.fromiter(masks, dtype=np.int64))
    if unique.size == 0:
        return []
    sizes = np.array([bin(int(m)).count("1") for m in unique])
    kept: list[int] = []
    for s in np.unique(sizes):
        level = unique[sizes == s]
        for k in kept:  # drop supersets of smaller kept sets
            level = level[(level & k) != k]
        kept.extend(int(m) for m in level)
    return kept


def _cause_from(
    model: SCM,
    context: Mapping[str, int],
    phi: Formula,
    actual: dict[str, int],
    X: list[str],
    alternative: dict[str, int],
    W: list[str],
) -> Cause:
    held = {w: actual[w] for w in W}
    world = model.evaluate(context, {**held, **alternative})
    if phi({**context, **world}):
        raise AssertionError(f"internal error: the witness for {X} does not falsify the outcome")
    return Cause({v: actual[v] for v in X}, alternative, held, world)


def _setup(model: SCM, context: Mapping[str, int], outcome: str):
    phi = parse_outcome(model, outcome)
    context = model.check_context(context)
    actual = model.evaluate(context)
    return phi, context, actual, bool(phi({**context, **actual}))


# --- the oracle -------------------------------------------------------------------------------


@checked(skip_nested=True, max_rows=Int(1, 2**40))  # evaluate_batch in its loop runs bare
def brute_force_causes(
    model: SCM, context: Mapping[str, int], outcome: str, *, ancestors_only: bool = False, max_rows: int = 1 << 26
) -> CauseSet:
    """All actual causes by exhaustive evaluation of every intervention [X⃗ ← x⃗′, W⃗ ← w⃗*].

    Each candidate variable is free, held at its actual value (in W⃗) or set to any value of
    its domain (in X⃗): ∏(2 + |dom|) interventions, 4^n for n Boolean candidates. A set X⃗ passes
    AC2 if some row falsifies φ; the causes are the ⊆-minimal such sets (AC3). The contingency
    reported is a smallest W⃗ among the rows that witness the cause. Refuses more than
    ``max_rows`` interventions.

    The candidates are all endogenous variables outside φ (the definition taken literally), or,
    with ``ancestors_only``, only the ancestors of φ's variables (4^|A| interventions): the same
    causes, since a non-ancestor cannot change φ. The chapter uses the restricted oracle to
    separate the saving of the ancestor restriction from that of TrAC's witness target.
    """
    phi, context, actual, holds = _setup(model, context, outcome)
    cands = candidates_of(model, phi, ancestors_only=ancestors_only)
    name = "brute force (ancestors)" if ancestors_only else "brute force"
    if not holds:
        return CauseSet(outcome, False, [], tuple(cands), name)
    radices = [2 + len(model.domains[v]) for v in cands]
    total = int(np.prod(radices, dtype=np.float64))
    if total > max_rows:
        raise ValueError(f"brute force needs {total:,} interventions (> max_rows = {max_rows:,}); use trac")
    cols = np.array([model.index[v] for v in cands], dtype=np.int64)
    act = np.array([actual[v] for v in cands], dtype=np.int64)
    doms = [np.array(model.domains[v], dtype=np.int64) for v in cands]
    weights = np.int64(1) << np.arange(len(cands), dtype=np.int64)
    best: dict[int, tuple[int, int]] = {}  # X mask -> (smallest |W|, row code)
    for codes in _chunks(total):
        state = _digits(codes, radices)
        in_x, in_w = state >= 2, state == 1
        vals = np.where(in_w, act, 0)
        for j, dom in enumerate(doms):
            vals[:, j] = np.where(in_x[:, j], dom[np.maximum(state[:, j] - 2, 0)], vals[:, j])
        mask = np.zeros((len(codes), len(model.order)), dtype=bool)
        values = np.zeros_like(mask, dtype=np.int8)
        mask[:, cols], values[:, cols] = in_x | in_w, vals
        world = model.evaluate_batch(context, mask, values)
        fails = phi.batch({**context, **{v: world[:, i] for i, v in enumerate(model.order)}}, len(codes)) == 0
        _keep_best(best, (in_x[fails] * weights).sum(1), in_w[fails].sum(1), codes[fails])
    causes = []
    for m in minimal_sets(best):
        state = _digits(np.array([best[m][1]]), radices)[0]
        X = [v for j, v in enumerate(cands) if state[j] >= 2]
        W = [v for j, v in enumerate(cands) if state[j] == 1]
        alt = {v: int(doms[j][state[j] - 2]) for j, v in enumerate(cands) if state[j] >= 2}
        causes.append(_cause_from(model, context, phi, actual, X, alt, W))
    return CauseSet(outcome, True, causes, tuple(cands), name, total)


def _keep_best(best: dict[int, tuple[int, int]], masks: np.ndarray, wsize: np.ndarray, codes: np.ndarray) -> None:
    """Update ``best[mask] = (smallest |W|, its code)`` with a chunk of rows (vectorised per chunk)."""
    if masks.size == 0:
        return
    order = np.lexsort((codes, wsize, masks))
    masks, wsize, codes = masks[order], wsize[order], codes[order]
    first = np.r_[True, masks[1:] != masks[:-1]]
    for m, w, c in zip(masks[first].tolist(), wsize[first].tolist(), codes[first].tolist(), strict=True):
        if m not in best or (w, c) < best[m]:
            best[m] = (w, c)


# --- baselines --------------------------------------------------------------------------------


@checked(skip_nested=True, max_rows=Int(1, 2**40))  # evaluate_batch in its loop runs bare
def pruned_search(
    model: SCM, context: Mapping[str, int], outcome: str, *, first_only: bool = False, max_rows: int = 1 << 26
) -> CauseSet:
    """Search X⃗ by increasing size over the ancestors of φ, skipping supersets of causes found.

    For each X⃗ not containing a cause already found, every W⃗ ⊆ ancestors ∖ X⃗ is tried with
    every x⃗′ that differs from x⃗ in every coordinate (a cause is minimal, so x⃗′ can agree with
    x⃗ nowhere). Sound and complete (the research notes' reconstruction); its cost is about
    3^a interventions for a Boolean ancestors. ``first_only`` stops at the first cause found:
    the "first cause found" single-cause baseline.
    """
    phi, context, actual, holds = _setup(model, context, outcome)
    cands = candidates_of(model, phi, ancestors_only=True)
    name = "first cause found" if first_only else "pruned search"
    if not holds:
        return CauseSet(outcome, False, [], tuple(cands), name)
    found: list[Cause] = []
    found_masks: list[int] = []
    evaluations = 0
    pos = {v: j for j, v in enumerate(cands)}
    for size in range(1, len(cands) + 1):
        for X in itertools.combinations(cands, size):
            xm = sum(1 << pos[v] for v in X)
            if any(f & xm == f for f in found_masks):
                continue
            rest = [v for v in cands if v not in X]
            alts = list(itertools.product(*([d for d in model.domains[v] if d != actual[v]] for v in X)))
            rows = (1 << len(rest)) * len(alts)
            evaluations += rows
            if evaluations > max_rows:
                raise ValueError(f"pruned search exceeded max_rows = {max_rows:,} interventions")
            hit = _first_failing(model, context, phi, actual, X, rest, alts)
            if hit is not None:
                alt, W = hit
                found.append(_cause_from(model, context, phi, actual, list(X), alt, W))
                found_masks.append(xm)
                if first_only:
                    return CauseSet(outcome, True, found, tuple(cands), name, evaluations)
    return CauseSet(outcome, True, found, tuple(cands), name, evaluations)


def _first_failing(model, context, phi, actual, X, rest, alts):
    """The (x⃗′, W⃗) with smallest |W⃗| that falsifies φ, trying all W⃗ ⊆ rest at once; or None."""
    n_w = 1 << len(rest)
    subsets = (np.arange(n_w, dtype=np.int64)[:, None] >> np.arange(len(rest))) & 1
    rows = np.repeat(subsets, len(alts), axis=0).astype(bool)
    alt_rows = np.tile(np.array(alts, dtype=np.int8).reshape(len(alts), len(X)), (n_w, 1))
    mask = np.zeros((len(rows), len(model.order)), dtype=bool)
    values = np.zeros_like(mask, dtype=np.int8)
    xi = [model.index[v] for v in X]
    ri = [model.index[v] for v in rest]
    mask[:, xi] = True
    values[:, xi] = alt_rows
    mask[:, ri] = rows
    values[:, ri] = np.array([actual[v] for v in rest], dtype=np.int8)
    world = model.evaluate_batch(context, mask, values)
    fails = phi.batch({**context, **{v: world[:, i] for i, v in enumerate(model.order)}}, len(rows)) == 0
    if not fails.any():
        return None
    wsize = rows.sum(1)
    b = int(np.flatnonzero(fails)[np.argmin(wsize[fails])])
    alt = {v: int(x) for v, x in zip(X, alt_rows[b], strict=True)}
    return alt, [v for j, v in enumerate(rest) if rows[b, j]]


@checked(skip_nested=True)  # parse_outcome and its helpers' Cause, CauseSet and model calls run bare
def but_for_causes(model: SCM, context: Mapping[str, int], outcome: str) -> CauseSet:
    """Single variables whose change alone (W⃗ = ∅) falsifies φ: counterfactual dependence.

    Every cause found is a genuine actual cause (a singleton is minimal), but causes that need
    a contingency or a conjunction are missed.
    """
    phi, context, actual, holds = _setup(model, context, outcome)
    cands = candidates_of(model, phi, ancestors_only=True)
    if not holds:
        return CauseSet(outcome, False, [], tuple(cands), "but-for")
    causes, evaluations = [], 0
    for v in cands:
        for x in model.domains[v]:
            if x == actual[v]:
                continue
            evaluations += 1
            if not phi({**context, **model.evaluate(context, {v: x})}):
                causes.append(_cause_from(model, context, phi, actual, [v], {v: x}, []))
                break
    return CauseSet(outcome, True, causes, tuple(cands), "but-for", evaluations)


@checked(skip_nested=True)  # pruned_search runs bare: its arguments are checked here
def first_cause(model: SCM, context: Mapping[str, int], outcome: str) -> CauseSet:
    """The first minimal cause a size-ordered search finds (what single-cause solvers return)."""
    return pruned_search(model, context, outcome, first_only=True)
