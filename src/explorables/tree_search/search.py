"""Search algorithms in the query model: centroid search, the prediction-based spine search, its
robust variant, and the exact optimal worst case for small trees.

Every algorithm talks to the tree only through ``ask(v)`` (the answer of the query model on
internal ids: ``-1`` for found, else the neighbour of ``v`` toward the target) and returns the
list of vertices it queried, the last one being the target. A vertex asked twice is answered from
memory and counted once.

**Explicit bound of the spine search** (our reconstruction of the paper's algorithm; derivation in
the chapter). With prediction error ``eta = d(prediction, target)`` and ``k`` the exact pathwidth,

    queries <= 1                                         if eta = 0,
    queries <= 2 + k * (2 * ceil(log2(eta + 1)) + 1)     otherwise.

The first query is the prediction itself. Then at each level of the spine decomposition the
search queries the projection of the prediction on the spine, doubles its steps along the spine
(offsets 1, 2, 4, ...) and binary-searches the last bracket: ``2 ceil(log2(d + 1)) + 1`` queries
when the exit vertex lies ``d <= eta`` spine steps away. At most ``k`` levels have a spine of
pathwidth ``>= 1``; the last level, a single vertex, costs one query.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..core.arguments import Array, checked
from ..core.params import Choice, Int
from .pathwidth import SpineDecomposition
from .tree import Tree

Ask = Callable[[int], int]


@checked(n=Int(1))
def centroid_bound(n: int) -> int:
    """Worst-case queries of centroid search on ``n`` vertices: ``floor(log2 n) + 1``."""
    return math.floor(math.log2(n)) + 1


@checked(eta=Int(0), k=Int(0))
def spine_bound(eta: int, k: int) -> int:
    """Our explicit worst-case bound for :func:`spine_search` (module docstring)."""
    if eta == 0:
        return 1
    return 2 + k * (2 * math.ceil(math.log2(eta + 1)) + 1)


@checked(n=Int(1))
def robust_bound(n: int) -> int:
    """The robust variant never needs more than ``2 (floor(log2 n) + 1)`` queries."""
    return 2 * centroid_bound(n)


@checked()
@dataclass
class Memory:
    """The answers received so far (a repeated query is answered from memory, not counted)."""

    ask: Ask
    queried: list[int] = field(default_factory=list)
    answers: dict[int, int] = field(default_factory=dict)

    def __call__(self, v: int) -> int:
        if v in self.answers:
            return self.answers[v]
        a = self.ask(v)
        self.answers[v] = a
        self.queried.append(v)
        return a

    @property
    def found(self) -> bool:
        return bool(self.queried) and self.answers[self.queried[-1]] == -1


def candidate_mask(tree: Tree, answers: dict[int, int]) -> np.ndarray:
    """The vertices consistent with all (non-found) answers: an intersection of components."""
    mask = np.ones(tree.n, dtype=bool)
    for v, a in answers.items():
        if a < 0:
            mask[:] = False
            mask[v] = True
            return mask
        narrow(tree, mask, v, a)
    return mask


def narrow(tree: Tree, mask: np.ndarray, query: int, answer: int) -> None:
    """Drop from ``mask`` (in place) the candidates that the answer to ``query`` rules out.

    The answer is the neighbour of ``query`` on the path to the target. Vertices are numbered in
    preorder, so a subtree is a contiguous range: if the answer is ``query``'s parent, the target
    is outside ``query``'s subtree; if it is a child, the target is inside that child's subtree.
    """
    size = tree.size
    if answer == tree.parent[query]:
        mask[query : query + size[query]] = False
    else:  # answer is a child of query
        mask[:answer] = False
        mask[answer + size[answer] :] = False


@checked(skip_nested=True, mask=Array("n"))
def centroid_search(tree: Tree, ask: Ask | Memory, mask: np.ndarray | None = None) -> list[int]:
    """Query a centroid of the candidate set until found (at most ``floor(log2 n) + 1`` queries).

    The centroid of a connected candidate set ``S`` is the vertex ``c`` of ``S`` with the smallest
    ``|S ∩ T_c|`` among those with ``2 |S ∩ T_c| >= |S|``; every component of ``S - c`` then has
    at most ``|S| / 2`` vertices. Subtree counts are prefix sums over the preorder. ``mask``, if
    given, is a boolean array of length ``n`` marking the candidates (default: those consistent
    with the answers in ``ask``'s memory).
    """
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != (tree.n,) or not mask.any():
            raise ValueError(f"mask must be a boolean array of length n = {tree.n} with at least one True entry")
    mem = ask if isinstance(ask, Memory) else Memory(ask)
    mask = candidate_mask(tree, mem.answers) if mask is None else mask.copy()
    size = tree.size
    while True:
        idx = np.flatnonzero(mask)
        m = len(idx)
        if m == 0:
            raise ValueError("ask gave answers that no vertex of the tree is consistent with (is it this tree's?)")
        cs = np.concatenate([[0], np.cumsum(mask)])
        s_sub = cs[idx + size[idx]] - cs[idx]
        cand = idx[2 * s_sub >= m]
        c = int(cand[np.argmin(s_sub[2 * s_sub >= m])])
        a = mem(c)
        if a < 0:
            return mem.queried
        narrow(tree, mask, c, a)


class _Budget(Exception):
    pass


def check_decomposition(tree: Tree, decomposition: SpineDecomposition) -> None:
    """A ``ValueError`` naming ``decomposition`` unless it was made from a tree of ``tree``'s size."""
    if len(decomposition.comp_of) != tree.n or len(decomposition.pos) != tree.n:
        raise ValueError(
            f"decomposition must be spine_decomposition(tree) of this tree (n = {tree.n}), "
            f"got one of a tree with {len(decomposition.comp_of)} vertices"
        )


@checked(skip_nested=True, budget=Int(0))
def spine_search(
    tree: Tree, decomposition: SpineDecomposition, prediction: int, ask: Ask | Memory, budget: int | None = None
) -> list[int]:
    """Prediction-based search along the recursive spine decomposition (module docstring).

    With a ``budget``, stops once that many queries were made without finding the target and
    returns the queries made so far (the last one is then not the target: ``Memory.found`` is
    false); :func:`robust_search` continues from there with centroid search.
    """
    check_decomposition(tree, decomposition)
    mem = ask if isinstance(ask, Memory) else Memory(ask)
    try:
        return _spine_search(tree, decomposition, prediction, mem, budget)
    except _Budget:
        return mem.queried


def _spine_search(
    tree: Tree, decomposition: SpineDecomposition, prediction: int, mem: Memory, budget: int | None
) -> list[int]:
    """:func:`spine_search` on a :class:`Memory`, raising ``_Budget`` when the budget runs out."""
    D = decomposition
    prediction = tree._check_vertex("prediction", prediction)

    def q(v: int) -> int:
        if budget is not None and v not in mem.answers and len(mem.queried) >= budget:
            raise _Budget
        return mem(v)

    if q(prediction) < 0:
        return mem.queried
    c, proj = 0, prediction
    while True:
        spine = D.spines[c]
        L = len(spine)
        if not D.contains(c, proj):
            proj = int(D.attach[c])  # nearest vertex of the component to the prediction
        i = D.pos[tree.median(proj, int(spine[0]), int(spine[-1]))] if L > 1 else 0
        _exit_index, answer = doubling_along_spine(spine, int(i), q)
        if answer < 0:
            return mem.queried
        c = D.child_containing(c, answer)


def _direction(spine: np.ndarray, j: int, answer: int) -> int:
    """+1 / -1 if the answer at spine index j points along the spine, 0 if off the spine."""
    if j + 1 < len(spine) and spine[j + 1] == answer:
        return 1
    if j >= 1 and spine[j - 1] == answer:
        return -1
    return 0


def doubling_along_spine(spine: np.ndarray, i: int, q: Callable[[int], int]) -> tuple[int, int]:
    """Doubling, then binary search, along one spine from index ``i``: eq. (ts-doubling) per level.

    Returns the index of the exit vertex (the target, or the spine vertex whose hanging
    component holds it) and its answer (``-1`` found, else the off-spine neighbour). With the
    exit ``d`` spine steps from ``i`` and ``2^(j-1) < d <= 2^j``: one query at ``i``, ``j + 1``
    doubling queries, at most ``j - 1`` binary-search queries; ``2j + 1 <= 2 ceil(log2(d + 1)) + 1``.
    """
    L = len(spine)
    a = q(int(spine[i]))  # query pi, the spine vertex nearest the prediction: the "+ 1" of (ts-doubling)
    if a < 0:
        return i, a  # found
    s = _direction(spine, i, a)  # the answer points along the spine (+1 / -1) or off it (0)
    if s == 0:
        return i, a  # pi is the exit: recurse into the component the answer points to
    lo, step = i, 1
    while True:  # doubling: offsets 1, 2, 4, ..., 2^j with 2^(j-1) < d <= 2^j: j + 1 queries
        j = min(max(i + s * step, 0), L - 1)  # clamped at the spine's end
        a = q(int(spine[j]))
        d = _direction(spine, j, a)
        if a < 0 or d == 0:
            return j, a  # found, or the exit
        if d == s:  # the target lies further on: double the offset
            lo, step = j, 2 * step
            continue
        hi = j  # the answer points back: the exit lies strictly between lo and hi
        break
    while True:  # binary search of the 2^(j-1) - 1 vertices inside the bracket: at most j - 1 queries
        m = (lo + hi) // 2 if s > 0 else -((-lo - hi) // 2)
        a = q(int(spine[m]))
        d = _direction(spine, m, a)
        if a < 0 or d == 0:
            return m, a
        if d == s:
            lo = m
        else:
            hi = m


@checked(skip_nested=True, budget=Int(0))
def robust_search(
    tree: Tree, decomposition: SpineDecomposition, prediction: int, ask: Ask | Memory, budget: int | None = None
) -> list[int]:
    """Spine search for ``budget`` queries (default ``floor(log2 n) + 1``), then centroid search on
    the vertices still consistent with the answers. Never more than ``budget + floor(log2 n) + 1``
    queries (``2 (floor(log2 n) + 1)`` by default), and identical to spine search whenever that
    one needs at most ``budget`` queries."""
    check_decomposition(tree, decomposition)
    mem = ask if isinstance(ask, Memory) else Memory(ask)
    budget = centroid_bound(tree.n) if budget is None else budget
    try:
        return _spine_search(tree, decomposition, prediction, mem, budget)
    except _Budget:
        return centroid_search(tree, mem)


@checked()
def optimal_worst_case(tree: Tree) -> int:
    """The optimal worst-case number of queries over all targets, exactly (small trees).

    ``OPT(S) = min_{v in S} 1 + max_{C component of S - v} OPT(C)`` with ``OPT(∅) = 0``, memoised
    over connected vertex sets as bitmasks. Exponential in the worst case: use for ``n <= 16``.
    """
    n = tree.n
    if n > 16:
        raise ValueError(f"tree must have at most 16 vertices for the exact optimum, got {n}")
    nb = [sum(1 << u for u in tree.neighbours(v)) for v in range(n)]
    memo: dict[int, int] = {}

    def components(S: int) -> list[int]:
        out = []
        while S:
            low = S & -S
            comp, frontier = low, low
            while frontier:
                v = frontier.bit_length() - 1
                frontier &= ~(1 << v)
                new = nb[v] & S & ~comp
                comp |= new
                frontier |= new
            out.append(comp)
            S &= ~comp
        return out

    def opt(S: int) -> int:
        if S in memo:
            return memo[S]
        best = n + 1
        T = S
        while T:
            v = (T & -T).bit_length() - 1
            T &= T - 1
            worst = max((opt(C) for C in components(S & ~(1 << v))), default=0)
            best = min(best, 1 + worst)
        memo[S] = best
        return best

    return opt((1 << n) - 1)


@checked(skip_nested=True, algorithm=Choice(("centroid", "spine", "robust")))
def queries_for(
    tree: Tree, algorithm: str, target: int, prediction: int = 0, decomposition: SpineDecomposition | None = None
) -> list[int]:
    """Run one algorithm (``"centroid"``, ``"spine"`` or ``"robust"``) against a target; the searches and the
    oracle's ``tree.step`` run bare (their arguments are checked here)."""
    target = tree._check_vertex("target", target)
    prediction = tree._check_vertex("prediction", prediction)
    if decomposition is not None:
        check_decomposition(tree, decomposition)

    def ask(v: int) -> int:
        return tree.step(v, target)

    if algorithm == "centroid":
        return centroid_search(tree, ask)
    if decomposition is None:
        raise ValueError(f"decomposition must be given: algorithm {algorithm!r} needs a spine decomposition")
    if algorithm == "spine":
        return spine_search(tree, decomposition, prediction, ask)
    return robust_search(tree, decomposition, prediction, ask)


__all__ = [
    "Memory",
    "candidate_mask",
    "centroid_bound",
    "centroid_search",
    "doubling_along_spine",
    "narrow",
    "optimal_worst_case",
    "queries_for",
    "robust_bound",
    "robust_search",
    "spine_bound",
    "spine_search",
]
