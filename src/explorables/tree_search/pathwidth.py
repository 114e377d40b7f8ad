"""Exact pathwidth of trees, and the recursive spine decomposition the prediction search walks.

**The characterisation we use** (Ellis, Sudborough and Turner 1994; Scheffler 1989): for
``k >= 1`` a tree has pathwidth ``<= k`` iff it has a path ``P`` (a *spine*) such that every
component of ``T - P`` has pathwidth ``<= k - 1``; a single vertex has pathwidth 0.

From it follows the test we compute with (our derivation, checked against brute force in the
tests): ``pw(T) <= k`` iff some path meets every *branch* of pathwidth ``>= k`` (a branch is a
component of ``T - v``). Root the tree. For a vertex ``v`` whose children's subtrees have largest
pathwidth ``K >= 1``, ``pw(T_v)`` is ``K`` or ``K + 1``; call a subtree ``T_w`` (``w != v``)
*minimal K-heavy* if ``pw(T_w) = K`` and all its children have pathwidth ``< K``. These are
disjoint, and

* three or more of them: no path meets all, so ``pw(T_v) = K + 1``;
* at most one (root ``w``): the path ``v .. w`` works, ``pw(T_v) = K``;
* exactly two (roots ``w1, w2`` with lowest common ancestor ``a``): every path meeting both
  contains ``w1 .. w2`` and has ``a`` as its top vertex, so ``pw(T_v) = K`` iff ``a = v`` or the
  tree ``T_v - T_a`` has pathwidth ``<= K - 1``.

A vertex's **label** is ``(pw, roots, a)``: the pathwidth of its subtree, the roots of the
minimal heavy subtrees at that level (one or two) and their lowest common ancestor. Labels
combine bottom-up; the one recursive question, the pathwidth of ``T_v - T_a`` (a subtree with a
*hole*), is answered by the same rules on the subtree with holes, memoised. The whole runs
without Python recursion along the tree (only along the at most ``pw`` nested hole levels).

The **spine** of a subtree is read off its root's label: ``[root]`` if the pathwidth jumped
there, the path ``root .. w`` for one heavy root, the path ``w1 .. w2`` for two. Removing it leaves
components of smaller pathwidth; doing this recursively gives the :class:`SpineDecomposition`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from ..core.arguments import Array, OfInstance, checked
from .tree import Tree

Label = tuple[int, tuple[int, ...], int]  # (pathwidth, roots of the minimal heavy subtrees, their LCA)


class _Labeller:
    """Labels of the subtrees of one component of the tree (vertices with ``comp[v] == cid``)."""

    def __init__(self, tree: Tree, comp: list[int], cid: int, size: list[int] | None = None):
        self.tree, self.comp, self.cid = tree, comp, cid
        self.children = tree.children
        self.size = tree.size.tolist() if size is None else size
        self.base: dict[int, Label] = {}
        self.memo: dict[tuple[int, tuple[int, ...]], Label] = {}

    def kids(self, v: int) -> list[int]:
        comp, cid = self.comp, self.cid
        return [c for c in self.children[v] if comp[c] == cid]

    def combine(self, v: int, labels: list[Label], holes: tuple[int, ...]) -> Label:
        """The label of ``v``'s subtree (minus ``holes``) from its children's labels (rules above)."""
        if not labels:
            return (0, (v,), v)
        K = max(lab[0] for lab in labels)
        if K == 0:  # a star: v with leaves
            return (1, (v,), v)
        heavy = [lab for lab in labels if lab[0] == K]
        roots = tuple(r for lab in heavy for r in lab[1])
        if len(roots) >= 3:
            return (K + 1, (v,), v)
        if len(roots) == 1:
            return (K, roots, roots[0])
        if len(heavy) == 2:
            return (K, roots, v)
        a = heavy[0][2]  # both heavy roots below one child: their LCA a is below v
        with_hole = self.label(v, tuple(sorted((*holes, a))))
        return (K, roots, a) if with_hole[0] <= K - 1 else (K + 1, (v,), v)

    def label(self, v: int, holes: tuple[int, ...] = ()) -> Label:
        """Label of the subtree of ``v`` inside the component, minus the subtrees of ``holes``."""
        if not holes:
            return self.base[v]
        key = (v, holes)
        if key in self.memo:
            return self.memo[key]
        size, memo, base = self.size, self.memo, self.base
        stack = [key]
        while stack:
            u, hs = stack[-1]
            if (u, hs) in memo:
                stack.pop()
                continue
            labels, missing = [], False
            for c in self.kids(u):
                if c in hs:
                    continue
                hc = tuple(h for h in hs if c <= h < c + size[c])
                if not hc:
                    labels.append(base[c])
                elif (c, hc) in memo:
                    labels.append(memo[(c, hc)])
                else:
                    stack.append((c, hc))
                    missing = True
            if missing:
                continue
            memo[(u, hs)] = self.combine(u, labels, hs)
            stack.pop()
        return memo[key]

    def run(self, vertices_desc: list[int]) -> None:
        """Base labels of every vertex of the component (vertices in decreasing preorder id)."""
        base = self.base
        for v in vertices_desc:
            base[v] = self.combine(v, [base[c] for c in self.kids(v)], ())


@checked()
def subtree_labels(tree: Tree) -> list[Label]:
    """The label of every rooted subtree ``T_v`` of ``tree`` (rooted at internal vertex 0)."""
    lab = _Labeller(tree, [0] * tree.n, 0)
    lab.run(list(range(tree.n - 1, -1, -1)))
    return [lab.base[v] for v in range(tree.n)]


@checked()
def pathwidth(tree: Tree | nx.Graph) -> int:
    """Exact pathwidth of a tree (label algorithm above; quadratic at worst, near-linear in practice)."""
    if not isinstance(tree, Tree):
        tree = Tree.from_networkx(tree)
    return subtree_labels(tree)[0][0]


@checked()
def vertex_separation_bruteforce(graph: nx.Graph) -> int:
    """Vertex separation number by dynamic programming over vertex subsets (= pathwidth; Kinnersley 1992).

    ``vs(G) = min over orderings max_i |{u in first i : u has a neighbour after i}|``; the DP
    ``f(S) = max(|boundary(S)|, min_{v in S} f(S - v))`` over all ``2^n`` subsets. Use for ``n <= 16``.
    """
    nodes = list(graph.nodes)
    n = len(nodes)
    if n > 16:
        raise ValueError(f"graph must have at most 16 vertices for brute force, got {n}")
    where = {v: i for i, v in enumerate(nodes)}
    nb = [0] * n
    for a, b in graph.edges:
        nb[where[a]] |= 1 << where[b]
        nb[where[b]] |= 1 << where[a]
    full = (1 << n) - 1
    f = [0] * (1 << n)
    for S in range(1, 1 << n):
        boundary = sum(1 for i in range(n) if S >> i & 1 and nb[i] & ~S & full)
        best = min(f[S & ~(1 << i)] for i in range(n) if S >> i & 1)
        f[S] = max(boundary, best)
    return f[full]


@checked()
def pathwidth_by_branches(graph: nx.Graph) -> int:
    """Pathwidth from Scheffler's branch rule, by recursion on vertex sets (small trees only).

    ``pw(T) >= k + 1`` iff some vertex has three branches of pathwidth ``>= k`` (``k >= 1``), so
    ``pw(T) = max(1, max_v 1 + third-largest branch pathwidth at v)`` for ``n >= 2``. A second,
    independent oracle for the tests. ``graph`` must be a tree with at most 16 vertices.
    """
    n = graph.number_of_nodes()
    if n == 0 or graph.is_directed() or not nx.is_tree(graph):
        raise ValueError("graph must be an undirected tree (non-empty, connected and acyclic)")
    if n > 16:
        raise ValueError(f"graph must have at most 16 vertices for the branch rule, got {n}")
    memo: dict[frozenset, int] = {}

    def pw(vs: frozenset) -> int:
        if vs in memo:
            return memo[vs]
        if len(vs) == 1:
            return 0
        sub = graph.subgraph(vs)
        best = 1
        for v in vs:
            branches = sorted((pw(frozenset(c)) for c in nx.connected_components(sub.subgraph(vs - {v}))), reverse=True)
            if len(branches) >= 3 and branches[2] >= 1:
                best = max(best, branches[2] + 1)
        memo[vs] = best
        return best

    return pw(frozenset(graph.nodes))


_INDEX = Array("m", integer=True)
_VERTEX = Array("n", integer=True)
#: a method's component and vertex arguments (checked at the boundary, skipped when nested)
COMPONENT = OfInstance("_check_component", "a component id in [0, number of components - 1]")
VERTEX = OfInstance("_check_vertex", "a vertex id in [0, n - 1]")


@checked(
    parent=_INDEX, level=_INDEX, pw=_INDEX, attach=_INDEX, attach_spine=_INDEX, ctin=_INDEX, ctout=_INDEX,
    comp_of=_VERTEX, pos=_VERTEX,
)
@dataclass
class SpineDecomposition:
    """The recursive spine decomposition of a tree (component 0 is the whole tree).

    Component ``c`` has a spine ``spines[c]`` (a path, in order), a ``parent[c]`` component
    (``-1`` for the root), its ``level`` and exact pathwidth ``pw[c]``, and is joined to its parent
    by the edge ``(attach_spine[c], attach[c])`` (``attach[c]`` inside ``c``). ``comp_of[v]`` is the
    component whose spine holds ``v``, ``pos[v]`` its index on that spine. Membership of a vertex in
    a component is an interval test on the component tree (``ctin``, ``ctout``).
    """

    spines: list[np.ndarray]
    parent: np.ndarray
    level: np.ndarray
    pw: np.ndarray
    attach: np.ndarray
    attach_spine: np.ndarray
    comp_of: np.ndarray
    pos: np.ndarray
    ctin: np.ndarray
    ctout: np.ndarray

    def __post_init__(self) -> None:
        if len(self.spines) != len(self.parent):
            raise ValueError(f"spines must hold one spine per component ({len(self.parent)}), got {len(self.spines)}")

    @property
    def depth(self) -> int:
        """Number of levels of the decomposition."""
        return int(self.level.max()) + 1

    @property
    def pathwidth(self) -> int:
        """Exact pathwidth of the whole tree."""
        return int(self.pw[0])

    def _check_id(self, name: str, value: Any, count: int, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) < count:
            raise ValueError(f"{name} must be a {what} id in [0, {count - 1}], got {value!r}")
        return int(value)

    def _check_component(self, name: str, c: Any) -> int:
        return self._check_id(name, c, len(self.parent), "component")

    def _check_vertex(self, name: str, v: Any) -> int:
        return self._check_id(name, v, len(self.comp_of), "vertex")

    @checked(skip_nested=True, c=COMPONENT, v=VERTEX)
    def contains(self, c: int, v: int) -> bool:
        """Whether vertex ``v`` lies in component ``c``."""
        x = self.ctin[self.comp_of[v]]
        return bool(self.ctin[c] <= x < self.ctout[c])

    @checked(skip_nested=True, c=COMPONENT, v=VERTEX)
    def child_containing(self, c: int, v: int) -> int:
        """The child component of ``c`` that holds ``v`` (``v`` in ``c`` but not on its spine)."""
        d = int(self.comp_of[v])
        while self.parent[d] != c:
            d = int(self.parent[d])
            if d < 0:
                raise ValueError(f"v must be a vertex below component c, got v = {v}, c = {c}")
        return d


@checked()
def spine_decomposition(tree: Tree) -> SpineDecomposition:
    """Decompose ``tree`` recursively into spines (exact: every component of level ``l`` has pathwidth
    ``<= pw(T) - l``, so there are at most ``pw(T) + 1`` levels). O(n · levels) plus the labelling."""
    n = tree.n
    comp = [0] * n
    parent_t = tree.parent.tolist()
    size_list = tree.size.tolist()
    spines: list[np.ndarray] = []
    cparent: list[int] = []
    level: list[int] = []
    pws: list[int] = []
    attach: list[int] = []
    attach_spine: list[int] = []
    comp_of = np.full(n, -1, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    # queue of components: (id, vertices ascending, parent comp, level, attach, attach_spine)
    queue = [(0, list(range(n)), -1, 0, 0, -1)]
    next_id = 1
    head = 0
    records: dict[int, tuple] = {}
    while head < len(queue):
        cid, verts, par, lev, att, att_sp = queue[head]
        head += 1
        lab = _Labeller(tree, comp, cid, size_list)
        lab.run(verts[::-1])
        top = verts[0]
        pw, roots, _a = lab.base[top]
        if pw == 0 or roots == (top,):
            spine = [top]
        elif len(roots) == 1:
            spine = tree.path(top, roots[0])
        else:
            spine = tree.path(roots[0], roots[1])
        spine = list(spine)
        on_spine = set(spine)
        for _end in range(2):  # extend both ends downward as far as possible (leaves smaller components)
            spine.reverse()
            v = spine[-1]
            while True:
                options = [c for c in lab.kids(v) if c not in on_spine]
                if not options:
                    break
                v = max(options, key=lambda c: lab.base[c][0])
                spine.append(v)
                on_spine.add(v)
        records[cid] = (np.array(spine, dtype=np.int64), par, lev, pw, att, att_sp)
        for i, v in enumerate(spine):
            comp_of[v] = cid
            pos[v] = i
        # split the rest into components (ascending preorder: a vertex's parent comes first)
        new_comp: dict[int, int] = {}
        members: dict[int, list[int]] = {}
        for v in verts:
            if v in on_spine:
                continue
            p = parent_t[v]
            if p >= 0 and comp[p] == cid and p not in on_spine:
                k = new_comp[p]
            else:
                k = next_id
                next_id += 1
                members[k] = []
                if p >= 0 and p in on_spine and comp[p] == cid:
                    a_in, a_sp = v, p  # hangs below a spine vertex
                else:
                    a_sp = min(spine)  # the part above the spine's top vertex, joined to it by an edge
                    a_in = parent_t[a_sp]
                queue.append((k, members[k], cid, lev + 1, a_in, a_sp))
            new_comp[v] = k
            members[k].append(v)
        for v, k in new_comp.items():
            comp[v] = k
    m = next_id
    for cid in range(m):
        spine, par, lev, pw, att, att_sp = records[cid]
        spines.append(spine)
        cparent.append(par)
        level.append(lev)
        pws.append(pw)
        attach.append(att)
        attach_spine.append(att_sp)
    # interval numbering of the component tree (children were created after their parents)
    cpar = np.array(cparent, dtype=np.int64)
    kids: list[list[int]] = [[] for _ in range(m)]
    for c in range(1, m):
        kids[cpar[c]].append(c)
    ctin = np.zeros(m, dtype=np.int64)
    ctout = np.zeros(m, dtype=np.int64)
    counter = 0
    stack: list[tuple[int, bool]] = [(0, False)]
    while stack:
        c, done = stack.pop()
        if done:
            ctout[c] = counter
            continue
        ctin[c] = counter
        counter += 1
        stack.append((c, True))
        stack.extend((k, False) for k in reversed(kids[c]))
    return SpineDecomposition(
        spines=spines,
        parent=cpar,
        level=np.array(level, dtype=np.int64),
        pw=np.array(pws, dtype=np.int64),
        attach=np.array(attach, dtype=np.int64),
        attach_spine=np.array(attach_spine, dtype=np.int64),
        comp_of=comp_of,
        pos=pos,
        ctin=ctin,
        ctout=ctout,
    )


def all_trees(max_n: int) -> itertools.chain:
    """Every tree with 1..max_n vertices up to isomorphism (networkx's generator)."""
    return itertools.chain.from_iterable(nx.nonisomorphic_trees(k) for k in range(1, max_n + 1))
