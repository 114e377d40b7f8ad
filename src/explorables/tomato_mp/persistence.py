"""0-dimensional persistence of superlevel sets on a graph, and ToMATo (gudhi) on top of it.

The chapter teaches persistence with :func:`superlevel_persistence`, a short union-find that
applies the *elder rule*; :func:`gudhi_superlevel_persistence` computes the same diagram with
gudhi (the tests check that they agree), and :func:`tomato` runs ToMATo
(Chazal, Guibas, Oudot, Skraba, JACM 2013) through ``gudhi.clustering.Tomato``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import gudhi
import numpy as np
from gudhi.clustering.tomato import Tomato

from ..core.arguments import Array, checked
from ..core.params import Choice, Float, Int, Positive
from ..core.validation import check_choice, check_int, check_positive
from .validate import check_function, check_points

Edges = np.ndarray  # (m, 2) int array of undirected edges


@checked(pairs=Array("m 2", nonempty=False), essential=Array("k", nonempty=False))
@dataclass(frozen=True)
class Diagram:
    """A 0-dim superlevel persistence diagram: finite pairs and the births of the essential classes.

    ``pairs[i] = (birth, death)`` with ``birth >= death`` (a peak appears at ``f = birth`` and is
    absorbed by an older one at ``f = death``); ``essential`` holds the peaks of the components
    that never die (one per connected component of the graph).
    """

    pairs: np.ndarray
    essential: np.ndarray

    @property
    def prominence(self) -> np.ndarray:
        """``birth - death`` of every finite pair (how far a peak rises above its saddle)."""
        return self.pairs[:, 0] - self.pairs[:, 1] if len(self.pairs) else np.zeros(0)


def check_edges(edges: Sequence[Sequence[int]] | np.ndarray, n: int) -> np.ndarray:
    """Validate an edge list on ``n`` vertices; return it as an ``(m, 2)`` int array."""
    if edges is None or isinstance(edges, (str, bytes)):
        raise ValueError(f"edges must be an (m, 2) array of vertex indices, got {type(edges).__name__}")
    raw = np.asarray(edges)
    if raw.size == 0:
        return np.zeros((0, 2), np.int64)
    if raw.ndim != 2 or raw.shape[1] != 2 or raw.dtype.kind not in "iu":
        raise ValueError(f"edges must be an (m, 2) array of integer vertex indices, got shape {raw.shape} "
                         f"of dtype {raw.dtype}")
    e = raw.astype(np.int64)
    if e.size and (e.min() < 0 or e.max() >= n):
        raise ValueError(f"edges must join vertices in [0, {n - 1}], got indices in [{e.min()}, {e.max()}]")
    return e


def adjacency(edges: Edges, n: int) -> list[list[int]]:
    """The neighbours of each of the ``n`` vertices of an undirected graph."""
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        neighbours[u].append(v)
        neighbours[v].append(u)
    return neighbours


def find(parent: np.ndarray, x: int) -> int:
    """The root of ``x`` in a union-find forest (with path halving)."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@checked()
def superlevel_persistence(f: Sequence[float] | np.ndarray, edges: Edges) -> Diagram:
    """0-dim persistence of the superlevel sets ``{f >= t}`` of ``f`` on a graph: a union-find
    with the elder rule, eq. (tomato-elder); ToMATo's merge with threshold tau = +inf.

    Equal to gudhi's lower-star persistence of ``-f`` (:func:`gudhi_superlevel_persistence`);
    zero-length pairs (a peak absorbed at its own value, from ties) are dropped, as gudhi does.
    """
    f = check_function("f", f)
    n = len(f)
    neighbours = adjacency(check_edges(edges, n), n)
    order = np.lexsort((np.arange(n), -f))  # sweep t from +inf down: decreasing f, ties by index
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)  # rank[u] < rank[v]: u is already in {f >= f(v)} when v enters
    parent = np.arange(n)  # union-find forest; every root is the peak (highest vertex) of its component
    pairs: list[tuple[float, float]] = []
    for v in order:
        roots = {find(parent, u) for u in neighbours[v] if rank[u] < rank[v]}
        if not roots:
            continue  # no higher neighbour: v is a peak, a component born at f(v)
        oldest = min(roots, key=lambda r: rank[r])  # elder rule (tomato-elder): the highest peak survives
        parent[v] = oldest  # v joins the elder; when it touches several components, v is the saddle s
        for r in roots - {oldest}:
            if f[r] > f[v]:  # peak r dies at s: the pair (f(r), f(s)), prominence f(r) - f(s) (tomato-prominence)
                pairs.append((f[r], f[v]))
            parent[r] = oldest  # r's component merges into the elder's
    essential = -np.sort(-f[list({find(parent, v) for v in range(n)})])  # the peaks that never die
    arr = np.array(pairs, dtype=np.float64).reshape(-1, 2)
    return Diagram(pairs=arr[np.argsort(-(arr[:, 0] - arr[:, 1]), kind="stable")], essential=essential)


@checked()
def gudhi_superlevel_persistence(f: Sequence[float] | np.ndarray, edges: Edges) -> Diagram:
    """The same diagram computed by gudhi: lower-star filtration of ``-f`` on the graph."""
    f = check_function("f", f)
    e = check_edges(edges, len(f))
    st = gudhi.SimplexTree()
    for i, value in enumerate(f):
        st.insert([i], filtration=-value)
    for u, v in e:
        st.insert([int(u), int(v)], filtration=max(-f[u], -f[v]))
    st.compute_persistence(persistence_dim_max=True)
    bars = st.persistence_intervals_in_dimension(0)
    finite = bars[np.isfinite(bars[:, 1])] if len(bars) else np.zeros((0, 2))
    pairs = -finite  # back to superlevel values: (birth, death) with birth >= death
    pairs = pairs[pairs[:, 0] > pairs[:, 1]]  # drop zero-length bars
    essential = np.sort(bars[~np.isfinite(bars[:, 1]), 0]) * -1.0
    return Diagram(pairs=pairs[np.argsort(-(pairs[:, 0] - pairs[:, 1]), kind="stable")], essential=essential)


@checked(prominences=Array("m", nonempty=False), n_essential=Int(0))
def largest_gap_count(
    prominences: Sequence[float] | np.ndarray, n_essential: int = 0, *, top: float | None = None
) -> int:
    """Number of clusters from the largest gap in the sorted prominences.

    The ``n_essential`` components that never die always count. Among the finite prominences
    ``p_1 >= p_2 >= ... >= p_m`` (with ``p_(m+1) = 0``) we keep the ``K`` before the largest drop
    ``p_K - p_(K+1)``, and return ``n_essential + K``.

    Limitation: the drops start at ``p_1``, so as soon as there is one finite peak the answer is
    at least ``n_essential + 1``; pure noise (``[0.1, 0.09]``) still yields an extra cluster. Pass
    ``top``, a prominence for the essential classes (e.g. the range of ``f``, or the cube size of
    an essential MMA summand), to add the drop ``top - p_1``: when it is the largest, the answer
    is ``n_essential`` (one cluster per connected component).
    """
    p = -np.sort(-np.asarray(prominences, dtype=np.float64))
    if len(p) == 0:
        return max(n_essential, 1)
    gaps = p - np.r_[p[1:], 0.0]
    if top is not None and top - p[0] > gaps.max():
        return max(n_essential, 1)
    return int(np.argmax(gaps)) + 1 + n_essential


@checked(prominences=Array("m", nonempty=False), n_clusters=Int(1), n_essential=Int(0))
def gap_threshold(prominences: Sequence[float] | np.ndarray, n_clusters: int, n_essential: int = 0) -> float:
    """A merge threshold tau that keeps ``n_clusters`` clusters: the midpoint of the gap between the
    ``(n_clusters - n_essential)``-th and the next largest prominence (0 below the last one). Asked
    for more clusters than there are peaks, it keeps them all (tau = 0)."""
    p = np.r_[-np.sort(-np.asarray(prominences, dtype=np.float64)), 0.0]
    kept = min(max(n_clusters - n_essential, 0), len(p))
    above = p[kept - 1] if kept >= 1 else p[0] + 1.0
    below = p[min(kept, len(p) - 1)]
    return float((above + below) / 2)


@checked(labels=Array("n", integer=True), n_clusters=Int(1))
@dataclass(frozen=True)
class TomatoResult:
    """ToMATo's output: labels at the chosen count, the diagram, and the count chosen by the gap."""

    labels: np.ndarray
    n_clusters: int
    diagram: Diagram
    threshold: float  # tau: a merge threshold that yields n_clusters (midpoint of the gap)
    model: Tomato | None = field(default=None, repr=False, compare=False)  # gudhi's fitted object

    @checked(tau=Float())
    def labels_at(self, tau: float) -> np.ndarray:
        """Labels after merging every peak of prominence <= ``tau`` (gudhi relabels, no recomputation).

        gudhi relabels by setting ``n_clusters_`` on its fitted object; we restore the fitted count
        afterwards, so ``self.model`` still describes ``self.labels`` and the result is not mutated.
        ``tau`` is any finite number (a negative one merges nothing).
        """
        if self.model is None:
            raise ValueError("labels_at needs the fitted model: this result was made without one (model=None)")
        count = int(np.sum(self.diagram.prominence > tau)) + len(self.diagram.essential)
        fitted = self.model.n_clusters_
        try:
            self.model.n_clusters_ = max(count, 1)
            return np.asarray(self.model.labels_).copy()
        finally:
            self.model.n_clusters_ = fitted


@checked(X=Array("n d"), graph_type=Choice(("knn", "radius")), k=Int(1), r=Positive(), n_clusters=Int(1))
def tomato(
    X: np.ndarray,
    f: Sequence[float] | np.ndarray,
    *,
    graph_type: str = "knn",
    k: int = 10,
    r: float = 0.5,
    n_clusters: int | None = None,
) -> TomatoResult:
    """ToMATo with gudhi: graph (k-NN or radius ``r``), function values ``f`` (manual density).

    Without ``n_clusters``, the count is read from the largest gap of the diagram's prominences
    (:func:`largest_gap_count`); gudhi then merges every peak whose prominence is below the gap.
    The graph's components are never merged: asked for fewer clusters than components, ToMATo
    returns one cluster per component, and ``n_clusters`` says so. ``X`` must hold at least two
    distinct points (copies of a single point have no structure to cluster).
    """
    X = check_points("X", X)
    f = check_function("f", f, len(X))
    check_choice("graph_type", graph_type, ("knn", "radius"))
    params: dict = {"k": check_int("k", k, minimum=1, maximum=len(X) - 1)} if graph_type == "knn" else {}
    if graph_type == "radius":
        params["r"] = check_positive("r", r)
    if n_clusters is not None:
        check_int("n_clusters", n_clusters, minimum=1, maximum=len(X))
    model = Tomato(graph_type=graph_type, density_type="manual", **params).fit(X, weights=f)
    raw = np.asarray(model.diagram_, dtype=np.float64).reshape(-1, 2)
    raw = raw[raw[:, 0] > raw[:, 1]]  # zero-length pairs (tied values) dropped, as in the diagrams above
    essential = -np.sort(-np.asarray(model.max_weight_per_cc_, dtype=np.float64))
    diagram = Diagram(pairs=raw[np.argsort(-(raw[:, 0] - raw[:, 1]), kind="stable")], essential=essential)
    count = n_clusters or largest_gap_count(diagram.prominence, len(essential))
    # gudhi cannot merge components of the graph: at least one cluster per component
    count = max(min(count, model.n_leaves_), len(essential))
    model.n_clusters_ = count
    tau = gap_threshold(diagram.prominence, count, len(essential))
    return TomatoResult(labels=np.asarray(model.labels_).copy(), n_clusters=count, diagram=diagram, threshold=tau,
                        model=model)
