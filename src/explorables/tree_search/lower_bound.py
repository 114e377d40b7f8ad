"""The Ω(k log η) lower-bound family: nested spiders, an adversary that plays against any search, and
the exact optimal worst case of tree search (vertex ranking).

**The family** (our construction; the paper's own family is not given in its abstract). A *nested
spider* ``S_k(L)`` is built recursively: ``S_0`` is one vertex; ``S_k`` is a path ``v_0 .. v_{L-1}``
(the *top path*) with a copy of ``S_{k-1}`` hanging from every ``v_j``, joined by the middle vertex
of the copy's own top path. It has ``n_k = L (n_{k-1} + 1)`` vertices and, for ``L >= 3``,
pathwidth exactly ``k`` (the top path is a spine whose removal leaves copies of ``S_{k-1}``; an inner
top-path vertex has three branches of pathwidth ``k - 1``). The prediction is the middle vertex of
the top path, so every vertex is within ``eta = `` its eccentricity, exactly ``k (floor(L / 2) + 1)``.

**The adversary and its bound** (a proof, checked by the tests). The adversary keeps a block (a copy
of some ``S_l``) and an interval ``[a, b]`` of its top path; the vertices ``G[a, b]`` (the path
vertices ``v_a .. v_b`` and everything hanging from them) stay consistent with all answers. A query
outside ``G[a, b]`` is answered toward it (no information: ``G[a, b]`` is connected). A query at
``v_j`` or inside the copy hanging from it, ``a <= j <= b``, is answered toward the longer of
``[a, j-1]`` and ``[j+1, b]``: the interval keeps at least ``floor(m / 2)`` of its ``m`` indices.
Once ``a = b``, the adversary moves into the copy hanging from ``v_a`` with its full top path. So
each level costs at least ``floor(log2 L)`` queries, and the last vertex one more (a search must
query the target itself to end):

    every deterministic search algorithm needs at least 1 + k * floor(log2 L) queries on S_k(L),

against a target within ``eta`` of the prediction, whatever it knows about the tree, the prediction
and ``eta``. Since ``eta = k (floor(L / 2) + 1)``, this is ``Ω(k log eta)`` for ``L >= k`` (then
``eta + 1 <= L**2``).

**The exact optimum** (for comparison): the fewest queries any algorithm needs in the worst case on
a tree is its tree-depth (minimum vertex-ranking number), computed bottom-up with Schäffer's
critical lists (1989); querying, in the candidate set, the vertex of largest rank attains it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.arguments import checked
from ..core.params import Int
from .search import Ask, Memory, candidate_mask, narrow
from .tree import Tree

MAX_FAMILY_SIZE = 2_000_000
"""Largest nested spider :func:`nested_spider` builds (vertices)."""


@checked(k=Int(0, 30), length=Int(1, 10**6))
def nested_spider_size(k: int, length: int) -> int:
    """Vertices of ``S_k(length)``: ``n_0 = 1``, ``n_k = length * (n_{k-1} + 1)``."""
    n = 1
    for _ in range(k):
        n = length * (n + 1)
    return n


@checked(k=Int(0, 30), length=Int(1, 10**6))
def forced_queries(k: int, length: int) -> int:
    """The adversary's proven lower bound on ``S_k(length)``: ``1 + k * floor(log2 length)`` queries."""
    return 1 + k * (length.bit_length() - 1)


@dataclass
class NestedSpider:
    """A nested spider ``S_k(L)`` (module docstring) as a :class:`Tree`, with its block structure.

    Vertex ids are the tree's internal ids. ``paths[b]`` is block ``b``'s top path (one vertex for a
    level-0 block), ``kids[b][j]`` the block hanging from ``paths[b][j]``, ``levels[b]`` its level
    ``l`` (a copy of ``S_l``). ``block_at[l][v]`` / ``pos_at[l][v]``: the level-``l`` block holding
    ``v`` and the index of the top-path vertex whose part holds it (``-1`` if none). Block 0 is the
    whole tree; ``prediction`` is the middle of its top path and ``eta`` its eccentricity.
    """

    k: int
    length: int
    tree: Tree
    paths: list[list[int]]
    kids: list[list[int]]
    levels: list[int]
    block_at: np.ndarray
    pos_at: np.ndarray
    prediction: int
    eta: int


@checked(k=Int(1, 30), length=Int(1, 10**6))
def nested_spider(k: int, length: int) -> NestedSpider:
    """Build ``S_k(length)`` (module docstring); at most :data:`MAX_FAMILY_SIZE` vertices."""
    n = nested_spider_size(k, length)
    if n > MAX_FAMILY_SIZE:
        raise ValueError(
            f"k and length must give at most {MAX_FAMILY_SIZE:,} vertices, got k = {k}, length = {length} ({n:,})"
        )
    parents = np.full(n, -1, dtype=np.int64)
    paths: list[list[int]] = []
    kids: list[list[int]] = []
    levels: list[int] = []
    block_at = np.full((k + 1, n), -1, dtype=np.int64)
    pos_at = np.full((k + 1, n), -1, dtype=np.int64)
    counter = 0
    # iterative construction: (level, attach vertex, block id to fill); a block reserves its path first
    stack: list[tuple[int, int, int]] = []

    def new_block(level: int, attach: int) -> int:
        nonlocal counter
        b = len(paths)
        m = 1 if level == 0 else length
        path = list(range(counter, counter + m))
        counter += m
        mid = m // 2
        parents[path[mid]] = attach
        for i in range(mid):
            parents[path[i]] = path[i + 1]
        for i in range(mid + 1, m):
            parents[path[i]] = path[i - 1]
        paths.append(path)
        kids.append([])
        levels.append(level)
        if level > 0:
            stack.append((level, attach, b))
        return b

    new_block(k, -1)
    while stack:
        level, _attach, b = stack.pop()
        kids[b] = [new_block(level - 1, v) for v in paths[b]]
    # block_at / pos_at: each block's vertices are its path and, recursively, its kids' vertices
    order = sorted(range(len(paths)), key=lambda b: -levels[b])  # parents before children
    parent_block = [-1] * len(paths)
    parent_pos = [-1] * len(paths)
    for b in order:
        for j, c in enumerate(kids[b]):
            parent_block[c], parent_pos[c] = b, j
    for b in range(len(paths)):
        # walk up: the vertices of b's path belong to b at its level and to every ancestor block above
        chain, c, lev_b = [], b, levels[b]
        if lev_b > 0:
            for j, v in enumerate(paths[b]):
                block_at[lev_b, v], pos_at[lev_b, v] = b, j
        while parent_block[c] >= 0:
            chain.append((parent_block[c], parent_pos[c]))
            c = parent_block[c]
        for pb, pj in chain:
            lev = levels[pb]
            for v in paths[b]:
                block_at[lev, v], pos_at[lev, v] = pb, pj
    tree = Tree.from_parents(parents)
    to_int = np.array([tree.index[v] for v in range(n)], dtype=np.int64)
    ib = np.full_like(block_at, -1)
    ip = np.full_like(pos_at, -1)
    ib[:, to_int] = block_at
    ip[:, to_int] = pos_at
    paths_int = [[int(to_int[v]) for v in p] for p in paths]
    prediction = paths_int[0][length // 2]
    eta = int(tree.distances_from(prediction).max())
    return NestedSpider(k, length, tree, paths_int, kids, levels, ib, ip, prediction, eta)


class Adversary:
    """Answers queries on a :class:`NestedSpider` so that every deterministic algorithm needs at least
    :func:`forced_queries` of them (module docstring). Call it as the ``ask`` of any search.

    ``target`` is the vertex the answers end up pointing to (``-1`` until the adversary is down to
    one vertex); every answer given is consistent with it (``tree.step(v, target)``).
    """

    def __init__(self, spider: NestedSpider):
        if not isinstance(spider, NestedSpider):
            raise ValueError(f"spider must be a NestedSpider (from nested_spider), got {type(spider).__name__}")
        self.s = spider
        self.block, self.level = 0, spider.k
        self.lo, self.hi = 0, spider.length - 1
        self.target = -1
        self.halvings = 0

    def _descend(self, b: int) -> None:
        self.block, self.level = b, self.s.levels[b]
        self.lo, self.hi = 0, len(self.s.paths[b]) - 1
        if self.level == 0:
            self.target = self.s.paths[b][0]

    def __call__(self, v: int) -> int:
        s, tree = self.s, self.s.tree
        v = tree._check_vertex("v", v)
        while True:
            if self.level == 0:
                return tree.step(v, self.target)
            path = s.paths[self.block]
            inside = s.block_at[self.level, v] == self.block and self.lo <= s.pos_at[self.level, v] <= self.hi
            if not inside:
                return tree.step(v, path[self.lo])  # G[a, b] is connected and avoids v: no information
            j = int(s.pos_at[self.level, v])
            if self.lo < self.hi:
                if j - self.lo >= self.hi - j:
                    self.hi = j - 1
                else:
                    self.lo = j + 1
                self.halvings += 1
                return tree.step(v, path[self.lo])
            child = s.kids[self.block][j]
            self._descend(child)
            if v == path[j]:  # the interval's last path vertex: the rest hangs below it
                return tree.step(v, s.paths[child][len(s.paths[child]) // 2])
            # v lies inside the hanging copy: answer it there


@checked()
def vertex_ranking(tree: Tree) -> np.ndarray:
    """An optimal vertex ranking of ``tree`` (Schäffer's critical lists, bottom-up): ``ranks[v] >= 1``,
    two vertices of equal rank are separated by one of higher rank, and ``ranks.max()`` is the
    tree-depth, the fewest queries any search needs in the worst case."""
    n = tree.n
    children = tree.children
    lists: list[list[int] | None] = [None] * n
    ranks = np.zeros(n, dtype=np.int64)
    for v in range(n - 1, -1, -1):  # children have larger preorder ids
        seen: set[int] = set()
        twice = 0
        for c in children[v]:
            for x in lists[c]:  # type: ignore[union-attr]
                if x in seen:
                    twice = max(twice, x)
                seen.add(x)
            lists[c] = None
        r = twice + 1
        while r in seen:
            r += 1
        ranks[v] = r
        lists[v] = [r] + [x for x in seen if x > r]
    return ranks


@checked()
def tree_depth(tree: Tree) -> int:
    """The optimal worst-case number of queries on ``tree`` (its tree-depth), for trees of any size."""
    return int(vertex_ranking(tree).max())


def ranking_search(tree: Tree, ranks: np.ndarray, ask: Ask | Memory) -> list[int]:
    """Query the vertex of largest rank among the candidates until found: at most ``ranks.max()``
    queries, so an optimal algorithm when ``ranks`` is :func:`vertex_ranking` of ``tree``."""
    ranks = np.asarray(ranks)
    if ranks.shape != (tree.n,) or not np.issubdtype(ranks.dtype, np.integer) or ranks.min() < 1:
        raise ValueError(f"ranks must be an integer array of length n = {tree.n} with values >= 1")
    mem = ask if isinstance(ask, Memory) else Memory(ask)
    mask = candidate_mask(tree, mem.answers)
    while True:
        idx = np.flatnonzero(mask)
        if len(idx) == 0:
            raise ValueError("ask gave answers that no vertex of the tree is consistent with")
        c = int(idx[np.argmax(ranks[idx])])
        a = mem(c)
        if a < 0:
            return mem.queried
        narrow(tree, mask, c, a)


def k_log_eta(k: int, eta: int) -> float:
    """``k log2(eta + 1)``: the scale the family's worst cases are compared with."""
    return k * math.log2(eta + 1)


__all__ = [
    "Adversary",
    "NestedSpider",
    "forced_queries",
    "k_log_eta",
    "nested_spider",
    "nested_spider_size",
    "ranking_search",
    "tree_depth",
    "vertex_ranking",
]
