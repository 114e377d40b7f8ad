"""Trees as arrays, and the query model of tree search.

A :class:`Tree` stores an unrooted tree with its vertices renumbered in depth-first *preorder*
from a root: vertex ``v``'s subtree is then the contiguous range ``[v, v + size[v])`` and every
parent has a smaller number than its children. That one convention makes the answers of the
query model, subtree tests and the candidate sets of a search cheap numpy operations, and it
keeps everything iterative (no Python recursion), so trees of a million vertices work.

The **query model** (:class:`TreeSearchOracle`): a target vertex ``t`` is hidden; querying a
vertex ``v`` answers ``"found"`` if ``v = t`` and otherwise the neighbour of ``v`` on the path
from ``v`` to ``t`` (equivalently: which component of ``T - v`` holds the target).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import networkx as nx
import numpy as np

from ..core.arguments import Array, OfInstance, checked
from ..core.params import Int
from ..core.validation import check_int

FOUND = "found"
#: a method's vertex argument: an internal id of the instance's tree (checked at the boundary, skipped when nested)
VERTEX = OfInstance("_check_vertex", "a vertex id in [0, n - 1]")


@checked(n=Int(1, 10**9), edges=Array("m 2", integer=True, nonempty=False), root=Int(0))
class Tree:
    """An unrooted tree on ``n`` vertices, stored in DFS preorder from ``labels[0]``.

    Build it with :meth:`from_networkx` or :meth:`from_edges`. Internal vertex ids are
    ``0..n-1`` in preorder; ``labels[i]`` is the original name of internal vertex ``i``.
    """

    def __init__(self, n: int, edges: np.ndarray, labels: Sequence[Hashable] | None = None, root: int = 0):
        edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        if len(edges) != n - 1:
            raise ValueError(f"edges must hold exactly n - 1 = {n - 1} edges (a tree), got {len(edges)}")
        if len(edges) and (edges.min() < 0 or edges.max() >= n):
            raise ValueError(f"edges must join vertices in [0, {n - 1}]")
        if np.any(edges[:, 0] == edges[:, 1]):
            raise ValueError("tree must not have self-loops")
        root = check_int("root", root, minimum=0, maximum=n - 1)
        # adjacency in CSR form
        both = np.concatenate([edges, edges[:, ::-1]])
        order = np.lexsort((both[:, 1], both[:, 0]))
        both = both[order]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.add.at(indptr, both[:, 0] + 1, 1)
        indptr = np.cumsum(indptr)
        nbrs = both[:, 1]
        # iterative DFS preorder from the root
        pre = np.full(n, -1, dtype=np.int64)  # original id -> preorder id
        order_orig = np.empty(n, dtype=np.int64)
        parent_orig = np.full(n, -1, dtype=np.int64)
        stack = [root]
        count = 0
        ip, nb = indptr.tolist(), nbrs.tolist()
        par = parent_orig  # alias
        while stack:
            v = stack.pop()
            if pre[v] >= 0:
                continue
            pre[v] = count
            order_orig[count] = v
            count += 1
            for u in reversed(nb[ip[v] : ip[v + 1]]):
                if pre[u] < 0:
                    par[u] = v
                    stack.append(u)
                elif u != par[v]:
                    raise ValueError("tree must be acyclic (these edges contain a cycle)")
        if count != n:
            raise ValueError(f"tree must be connected: only {count} of {n} vertices reachable from the root")
        self.n = n
        base_labels = list(range(n)) if labels is None else list(labels)
        if len(base_labels) != n:
            raise ValueError(f"labels must have n = {n} entries, got {len(base_labels)}")
        self.labels: list[Hashable] = [base_labels[v] for v in order_orig.tolist()]
        self.index: dict[Hashable, int] = {lab: i for i, lab in enumerate(self.labels)}
        parent = np.full(n, -1, dtype=np.int64)
        has_parent = parent_orig[order_orig] >= 0
        parent[has_parent] = pre[parent_orig[order_orig][has_parent]]
        self.parent = parent
        depth = np.zeros(n, dtype=np.int64)
        for v in range(1, n):  # parents come first in preorder
            depth[v] = depth[parent[v]] + 1
        self.depth = depth
        size = np.ones(n, dtype=np.int64)
        for v in range(n - 1, 0, -1):
            size[parent[v]] += size[v]
        self.size = size
        # children lists (sorted, since ids are preorder)
        kids = np.argsort(parent[1:], kind="stable") + 1
        cptr = np.zeros(n + 1, dtype=np.int64)
        np.add.at(cptr, parent[1:] + 1, 1)
        self.child_ptr = np.cumsum(cptr)
        self.child_list = kids
        self._children: list[list[int]] | None = None
        self._up: np.ndarray | None = None
        self.edges = np.c_[parent[1:], np.arange(1, n)]  # (parent, child) pairs in preorder ids

    # --- construction ------------------------------------------------------------------------
    @classmethod
    @checked()
    def from_networkx(cls, graph: nx.Graph, root: Hashable | None = None) -> Tree:
        """The tree ``graph`` (a networkx graph that must be a tree), rooted at ``root``."""
        if not isinstance(graph, nx.Graph) or graph.is_directed() or graph.is_multigraph():
            raise ValueError("graph must be an undirected networkx.Graph (a tree)")
        if graph.number_of_nodes() == 0 or not nx.is_tree(graph):
            raise ValueError("graph must be a tree (non-empty, connected and acyclic)")
        nodes = list(graph.nodes)
        where = {v: i for i, v in enumerate(nodes)}
        edges = np.array([(where[a], where[b]) for a, b in graph.edges], dtype=np.int64).reshape(-1, 2)
        if root is not None and root not in where:
            raise ValueError(f"root {root!r} is not a vertex of the tree")
        return cls(len(nodes), edges, labels=nodes, root=0 if root is None else where[root])

    @classmethod
    @checked(parents=Array("n", integer=True))
    def from_parents(cls, parents: Sequence[int] | np.ndarray, labels: Sequence[Hashable] | None = None) -> Tree:
        """A rooted tree from a parent array (``parents[root] = -1``, exactly one root)."""
        parents = np.asarray(parents, dtype=np.int64)
        if parents.min() < -1 or parents.max() >= len(parents):
            raise ValueError(f"parents must hold vertex ids in [0, {len(parents) - 1}] and -1 for the root")
        roots = np.flatnonzero(parents < 0)
        if len(roots) != 1:
            raise ValueError(f"parents must mark exactly one root with -1, got {len(roots)}")
        child = np.flatnonzero(parents >= 0)
        return cls(len(parents), np.c_[parents[child], child], labels=labels, root=int(roots[0]))

    def to_networkx(self) -> nx.Graph:
        """The tree as a networkx graph on the original labels."""
        g = nx.Graph()
        g.add_nodes_from(self.labels)
        g.add_edges_from((self.labels[a], self.labels[b]) for a, b in self.edges.tolist())
        return g

    # --- structure ---------------------------------------------------------------------------
    @property
    def children(self) -> list[list[int]]:
        """``children[v]``: the children of ``v`` (in increasing preorder)."""
        if self._children is None:
            ptr, lst = self.child_ptr.tolist(), self.child_list.tolist()
            self._children = [lst[ptr[v] : ptr[v + 1]] for v in range(self.n)]
        return self._children

    @checked(skip_nested=True, v=VERTEX)
    def neighbours(self, v: int) -> list[int]:
        """The neighbours of internal vertex ``v``."""
        p = int(self.parent[v])
        return ([p] if p >= 0 else []) + self.children[v]

    def _check_vertex(self, name: str, v: Any) -> int:
        """``v`` as an internal id, or a ``ValueError`` naming ``name`` if it is not a vertex."""
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) < self.n:
            raise ValueError(f"{name} must be a vertex id in [0, {self.n - 1}], got {v!r}")
        return int(v)

    @checked(skip_nested=True, x=VERTEX, v=VERTEX)
    def in_subtree(self, x: int, v: int) -> bool:
        """Whether ``x`` lies in the subtree of ``v`` (``v`` included)."""
        return v <= x < v + self.size[v]

    @checked(skip_nested=True, v=VERTEX, t=VERTEX)
    def step(self, v: int, t: int) -> int:
        """The neighbour of ``v`` on the path to ``t``, or ``-1`` if ``v == t``."""
        if v == t:
            return -1
        if v < t < v + self.size[v]:
            lo, hi = self.child_ptr[v], self.child_ptr[v + 1]
            k = int(np.searchsorted(self.child_list[lo:hi], t, side="right")) - 1
            return int(self.child_list[lo + k])
        return int(self.parent[v])

    def _lifting(self) -> np.ndarray:
        if self._up is None:
            levels = max(1, int(self.depth.max()).bit_length())
            up = np.empty((levels, self.n), dtype=np.int64)
            up[0] = np.where(self.parent >= 0, self.parent, 0)
            for j in range(1, levels):
                up[j] = up[j - 1][up[j - 1]]
            self._up = up
        return self._up

    @checked(skip_nested=True, u=VERTEX, v=VERTEX)
    def lca(self, u: int, v: int) -> int:
        """Lowest common ancestor (binary lifting)."""
        if self.depth[u] < self.depth[v]:
            u, v = v, u
        if self.in_subtree(u, v):
            return v
        up = self._lifting()
        for j in range(len(up) - 1, -1, -1):
            w = int(up[j, u])
            if not self.in_subtree(v, w):
                u = w
        return int(self.parent[u])

    @checked(skip_nested=True, u=VERTEX, v=VERTEX)
    def dist(self, u: int, v: int) -> int:
        """The number of edges on the path from ``u`` to ``v``."""
        return int(self.depth[u] + self.depth[v] - 2 * self.depth[self.lca(u, v)])

    @checked(skip_nested=True, u=VERTEX, v=VERTEX)
    def path(self, u: int, v: int) -> list[int]:
        """The vertices of the path from ``u`` to ``v``, in order."""
        a = self.lca(u, v)
        left, right = [], []
        while u != a:
            left.append(u)
            u = int(self.parent[u])
        while v != a:
            right.append(v)
            v = int(self.parent[v])
        return [*left, a, *right[::-1]]

    @checked(skip_nested=True, x=VERTEX, a=VERTEX, b=VERTEX)
    def median(self, x: int, a: int, b: int) -> int:
        """The vertex where the paths between ``x``, ``a`` and ``b`` meet (projection of ``x`` on path a-b)."""
        cands = (self.lca(x, a), self.lca(x, b), self.lca(a, b))
        return max(cands, key=lambda w: self.depth[w])

    @checked(skip_nested=True, s=VERTEX)
    def distances_from(self, s: int) -> np.ndarray:
        """Distances from ``s`` to every vertex (BFS)."""
        dist = np.full(self.n, -1, dtype=np.int64)
        dist[s] = 0
        frontier = [s]
        while frontier:
            nxt = []
            for v in frontier:
                for u in self.neighbours(v):
                    if dist[u] < 0:
                        dist[u] = dist[v] + 1
                        nxt.append(u)
            frontier = nxt
        return dist


@checked()
def branch_heights(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    """``down[v]``: height of ``v``'s subtree; ``up[v]``: longest path from ``v`` that starts toward its parent."""
    n, parent = tree.n, tree.parent.tolist()
    down = [0] * n
    for v in range(n - 1, 0, -1):
        p = parent[v]
        down[p] = max(down[p], down[v] + 1)
    up = [0] * n
    children = tree.children
    for v in range(n):  # parents before children
        kids = children[v]
        if not kids:
            continue
        best = [*sorted((down[c] + 1 for c in kids), reverse=True)[:2], 0, 0]
        for c in kids:
            other = best[1] if down[c] + 1 == best[0] else best[0]
            up[c] = 1 + max(up[v], other)
    return np.array(down, dtype=np.int64), np.array(up, dtype=np.int64)


@checked(eta=Int(0))
def random_vertex_at_distance(
    tree: Tree, t: int, eta: int, rng: np.random.Generator, heights: tuple[np.ndarray, np.ndarray] | None = None
) -> int:
    """A random vertex at distance exactly ``eta`` from ``t``, or ``-1`` if there is none.

    A non-backtracking walk from ``t`` (it never comes closer to ``t``) that at each step picks
    uniformly among the branches still deep enough to go on for the remaining steps, so it never
    gets stuck. Not uniform on the sphere, but every vertex at distance ``eta`` can be reached.
    ``heights`` is :func:`branch_heights` of ``tree`` (computed when not given).
    """
    t = tree._check_vertex("t", t)
    if heights is not None and (
        len(heights) != 2 or any(np.shape(h) != (tree.n,) for h in heights)
    ):
        raise ValueError(f"heights must be branch_heights(tree): two arrays of length n = {tree.n}")
    if eta == 0:
        return t
    down, up = heights if heights is not None else branch_heights(tree)
    prev, v = -1, t
    for remaining in range(eta, 0, -1):
        options = []
        p = int(tree.parent[v])
        if p >= 0 and p != prev and up[v] >= remaining:
            options.append(p)
        options += [c for c in tree.children[v] if c != prev and down[c] + 1 >= remaining]
        if not options:
            return -1
        prev, v = v, options[int(rng.integers(len(options)))]
    return v


@checked()
class TreeSearchOracle:
    """The query model: a hidden target; ``query(v)`` answers ``"found"`` or the next vertex toward it.

    ``tree`` is a networkx tree (vertices are its labels) or a :class:`Tree` (vertices are its
    internal ids). Every query is counted in :attr:`queries` and recorded in :attr:`history`.
    Querying something that is not a vertex of the tree raises ``ValueError``.
    """

    def __init__(self, tree: nx.Graph | Tree, target: Hashable):
        self._labelled = not isinstance(tree, Tree)
        self.tree = Tree.from_networkx(tree) if self._labelled else tree
        self._target = self._to_id("target", target)
        self.queries = 0
        self.history: list[Hashable] = []

    def _to_id(self, name: str, v: Hashable) -> int:
        if self._labelled:
            try:
                return self.tree.index[v]
            except (KeyError, TypeError):
                raise ValueError(f"{name} {v!r} is not a vertex of the tree") from None
        return self.tree._check_vertex(name, v)

    @checked(skip_nested=True)
    def query(self, v: Hashable) -> Hashable:
        """``"found"`` if ``v`` is the target, else the neighbour of ``v`` toward the target."""
        i = self._to_id("v", v)
        self.queries += 1
        self.history.append(v)
        j = self.tree.step(i, self._target)
        if j < 0:
            return FOUND
        return self.tree.labels[j] if self._labelled else j

    def _check_vertex(self, name: str, v: Any) -> int:
        return self.tree._check_vertex(name, v)

    @checked(skip_nested=True, i=VERTEX)
    def ask(self, i: int) -> int:
        """The same query on internal ids (``-1`` for found): what the search algorithms call."""
        self.queries += 1
        self.history.append(self.tree.labels[i] if self._labelled else i)
        return self.tree.step(i, self._target)
