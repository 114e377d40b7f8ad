"""ToMAToMP: clusters from the MMA decomposition of H0 of a multi-parameter filtration.

Our reconstruction (the paper's body is not public; see the chapter for what is assumed):

1. **Filtration** on the complete graph of the points, up to the radius ``r_max`` at which it
   becomes connected (the longest edge of the Euclidean minimum spanning tree), so no graph is
   chosen by hand. Every coordinate is a *sublevel* parameter in ``[0, 1]``:
   the radius ``|uv| / r_max`` (vertices at 0), one coordinate ``1 - rank(f_i)`` per function
   (rank-normalised superlevel sets), and, in the robust variant, ``rank(DTM)`` of the
   distance to measure. A vertex enters at its own grade, an edge at the radius and the
   coordinate-wise max of its endpoints' grades.
2. **MMA** (Loiseaux, Carrière, Blumberg 2022) of H0 with multipers: a sum of interval modules.
3. **Prominence** of a summand: the side of the largest cube ``[b, b + s·1]`` it contains, that
   is ``max over births b and deaths d of min_i (d_i - b_i)``. A summand is prominent only if it
   survives a joint move in *every* parameter.
4. **Count**: the essential summands (one per component of the whole graph) plus the summands
   before the largest gap in the sorted prominences of the others; **assignment**: each selected
   summand's generator vertex and its connected component at grade ``b + (s_K / 2)·1`` form a
   core; the other points reach a core over the filtration's own graph, its edges in the order
   the diagonal of the filtration reaches them (:func:`propagate_along`; until issue 50 item 5,
   the Euclidean minimum spanning tree, :func:`propagate`). The assignment is a heuristic of
   ours (see :func:`assign`): it can return fewer distinct labels than the count ``K``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import gudhi
import multipers as mp
import numpy as np
from multipers.mma_structures import PyModule_f64
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
from scipy.spatial.distance import pdist, squareform
from scipy.stats import rankdata

from ..core.arguments import Array, checked
from ..core.params import Device, Float, Int, Positive, Rule, Text, Tuple
from ..core.validation import check_in_range, check_int, check_positive
from .data import dtm as distance_to_measure
from .persistence import largest_gap_count
from .validate import check_functions, check_points


@checked(
    vertex_grades=Array("n p"),
    edges=Array("m 2", integer=True, nonempty=False),
    edge_grades=Array("m p", nonempty=False),
    parameters=Tuple(Text(nonempty=True)),
    r_max=Positive(),
)
@dataclass(frozen=True)
class MultiFiltration:
    """A 1-critical multi-filtration of a graph: one grade per vertex and per edge."""

    vertex_grades: np.ndarray  # (n, p)
    edges: np.ndarray  # (m, 2)
    edge_grades: np.ndarray  # (m, p)
    parameters: tuple[str, ...]
    r_max: float

    def __post_init__(self) -> None:
        n, p = np.shape(self.vertex_grades)
        if len(self.parameters) != p:
            raise ValueError(f"parameters must name the p = {p} grade coordinates, got {len(self.parameters)}")
        if len(self.edges) and (np.min(self.edges) < 0 or np.max(self.edges) >= n):
            raise ValueError(f"edges must join vertices in [0, {n - 1}]")

    @property
    def num_parameters(self) -> int:
        """Number of filtration parameters ``p`` (radius, one per function, and the DTM if robust)."""
        return self.vertex_grades.shape[1]


def ranks01(values: np.ndarray) -> np.ndarray:
    """Ranks scaled to ``[0, 1]`` (average ranks for ties): a monotone change of the values."""
    n = len(values)
    return (rankdata(values) - 1.0) / max(n - 1, 1)


@checked(X=Array("n d"))
def connecting_radius(X: np.ndarray) -> float:
    """The smallest radius at which the neighbourhood graph of ``X`` is connected (longest MST edge)."""
    X = check_points("X", X)
    mst = minimum_spanning_tree(squareform(pdist(X)))
    return float(mst.data.max()) if mst.nnz else 1.0


@checked(X=Array("n d"), dtm_mass=Float(0.0, 1.0, low_inclusive=False), r_max=Positive(), device=Device())
def build_filtration(
    X: np.ndarray,
    functions: Sequence[float] | Sequence[Sequence[float]] | np.ndarray,
    *,
    robust: bool = True,
    dtm_mass: float = 0.05,
    r_max: float | None = None,
    device: str = "cpu",
) -> MultiFiltration:
    """The (radius, functions[, DTM]) filtration of the graph of all pairs closer than ``r_max``."""
    X = check_points("X", X)
    F = check_functions("functions", functions, len(X))
    r_max = connecting_radius(X) if r_max is None else check_positive("r_max", r_max)
    cols = [np.zeros(len(X))] + [1.0 - ranks01(f) for f in F]
    names = ["radius"] + [f"f{i + 1}" for i in range(len(F))]
    if robust:
        cols.append(ranks01(distance_to_measure(X, dtm_mass, device=device)))
        names.append("DTM")
    V = np.column_stack(cols)
    iu, ju = np.triu_indices(len(X), 1)
    d = pdist(X)
    keep = d <= r_max
    u, v = iu[keep], ju[keep]
    E = np.column_stack([d[keep] / r_max, np.maximum(V[u, 1:], V[v, 1:])])
    return MultiFiltration(V, np.column_stack([u, v]), E, tuple(names), float(r_max))


@checked(block=Int(1))
def drop_dominated_edges(filt: MultiFiltration, block: int = 2048) -> MultiFiltration:
    """The same filtration without the edges that a two-step path already replaces: the H0 module is unchanged.

    An edge ``uv`` is dropped when some vertex ``w`` has both edges ``uw`` and ``wv`` strictly shorter
    (radius coordinate) and its own function grades at most the edge's (``V_w <= max(V_u, V_v)``
    coordinate-wise): the path ``u w v`` is then present at every grade where ``uv`` is, so the
    connected components at every grade, hence H0 as a module, do not change. The strict radius
    order makes dropping all such edges at once safe (each dropped edge's path uses shorter edges,
    by induction present or replaced). On Gaussian groups this leaves ~10 % of the edges; the MMA's
    cost grows with them. The MMA of the smaller graph need not list the same corners: it is an
    approximation whose vineyard follows the complex (see :func:`tomato_mp`, ``reduce``).

    The argument needs the filtrations :func:`build_filtration` makes: the radius coordinate first, every
    vertex at radius 0, and every edge's other grades the maximum of its ends' (a lower-star filtration
    in the functions). Then ``uw`` enters at ``(r_uw, max(V_u, V_w)) <= (r_uv, max(V_u, V_v))``. For any
    other filtration an edge ``uw`` could enter later than its ends and the path could be missing, so
    such a filtration is refused.
    """
    n, p = filt.vertex_grades.shape
    E, G = filt.edges, filt.edge_grades
    if len(E) == 0:
        return filt
    V = filt.vertex_grades
    if np.any(V[:, 0] != 0) or not np.array_equal(G[:, 1:], np.maximum(V[E[:, 0], 1:], V[E[:, 1], 1:])):
        raise ValueError(
            "filt must be a radius-first, lower-star filtration (every vertex at radius 0, every edge's other "
            "grades the maximum of its ends'), as build_filtration makes: for others a dropped edge's path can be "
            "missing"
        )
    R = np.full((n, n), np.inf)
    R[E[:, 0], E[:, 1]] = G[:, 0]
    R[E[:, 1], E[:, 0]] = G[:, 0]
    Vf = filt.vertex_grades[:, 1:]
    keep = np.ones(len(E), dtype=bool)
    for start in range(0, len(E), block):
        u, v, g = E[start : start + block, 0], E[start : start + block, 1], G[start : start + block]
        short = (R[u] < g[:, :1]) & (R[v] < g[:, :1])  # (b, n): w closer to both ends than u to v
        low = np.all(Vf[None, :, :] <= g[:, None, 1:], axis=2) if p > 1 else True
        keep[start : start + block] = ~np.any(short & low, axis=1)
    return MultiFiltration(filt.vertex_grades, E[keep], G[keep], filt.parameters, filt.r_max)


@checked()
def to_simplextree(filt: MultiFiltration) -> mp.SimplexTreeMulti:
    """The filtration as a multipers simplex tree, built directly with ``insert_batch``.

    This avoids converting a gudhi ``SimplexTree`` (see :func:`from_gudhi`): with gudhi 3.13 and
    multipers 2.2.3 the default (fast) conversion crashes the interpreter.
    """
    st = mp.SimplexTreeMulti(num_parameters=filt.num_parameters)
    n = len(filt.vertex_grades)
    st.insert_batch(np.arange(n, dtype=np.int32)[None, :], np.ascontiguousarray(filt.vertex_grades))
    if len(filt.edges):
        st.insert_batch(np.ascontiguousarray(filt.edges.T, dtype=np.int32), np.ascontiguousarray(filt.edge_grades))
    return st


@checked(num_parameters=Int(1, 64))
def from_gudhi(st: gudhi.SimplexTree, num_parameters: int) -> mp.SimplexTreeMulti:
    """Convert a gudhi simplex tree into a multipers one (first coordinate = gudhi's filtration).

    Always with ``safe_conversion=True``: multipers 2.2.3's default conversion deserialises
    gudhi's internal buffer and, with gudhi 3.13, segfaults (``tests/test_tomato_mp.py`` keeps a
    regression test of the safe path and documents the unsafe one).
    """
    return mp.SimplexTreeMulti(st, num_parameters=check_int("num_parameters", num_parameters), safe_conversion=True)


#: the most lines ``mma_h0`` slices along (its time grows like ``n_lines^(p-1)``)
MAX_LINES = 10_000


@checked(n_lines=Int(4, MAX_LINES), n_jobs=Int(1, 1024))
def mma_h0(filt: MultiFiltration, n_lines: int = 40, n_jobs: int = 1) -> mp.PyModule_f64:
    """The MMA decomposition (multipers ``module_approximation``) of H0, on the box ``[0, 1]^p``."""
    check_int("n_lines", n_lines, minimum=4)
    p = filt.num_parameters
    box = np.array([np.zeros(p), np.ones(p)])
    module = mp.module_approximation(to_simplextree(filt), box=box, nlines=n_lines, n_jobs=n_jobs, ignore_warning=True)
    return module.get_module_of_degree(0)


@checked(
    births=Array("a p", finite=False),
    deaths=Array("b p", finite=False),
    prominence=Float(0.0),
    corner=Array("p", finite=False),
)
@dataclass(frozen=True)
class Summand:
    """One interval summand: its corners, its prominence (largest cube side) and where the cube sits."""

    births: np.ndarray  # (a, p) minimal corners
    deaths: np.ndarray  # (b, p) maximal corners, clipped to the box
    prominence: float
    corner: np.ndarray  # b: the birth corner of the largest cube
    essential: bool = False  # one death corner is +inf in every coordinate: the summand never dies


@checked(
    births=Array("a p", finite=False, nonempty=False, min_size=(("p", 1),)),
    deaths=Array("b p", finite=False, nonempty=False, min_size=(("p", 1),)),
)
def summand_prominence(births: np.ndarray, deaths: np.ndarray) -> tuple[float, np.ndarray]:
    """Side of the largest cube ``[b, b + s·1]`` inside an interval (``max_(b,d) min_i (d_i - b_i)``)."""
    B = np.atleast_2d(np.asarray(births, dtype=np.float64))
    D = np.atleast_2d(np.asarray(deaths, dtype=np.float64))
    if len(B) == 0 or len(D) == 0:
        return 0.0, np.zeros(B.shape[1])
    side = (D[None, :, :] - B[:, None, :]).min(-1)  # (a, b)
    i, j = np.unravel_index(np.argmax(side), side.shape)
    return float(max(side[i, j], 0.0)), B[i]


@checked(skip_nested=True)  # summand_prominence and Summand run bare on the corners made here
def summands(module: PyModule_f64) -> list[Summand]:
    """The summands of an MMA module, with their prominences, most prominent first."""
    if not isinstance(module, PyModule_f64):
        raise TypeError(f"module must be a multipers PyModule_f64 (from mma_h0), got {type(module).__name__}")
    out = []
    for s in module:
        births = np.asarray(s.get_birth_list(), dtype=np.float64)
        raw_deaths = np.asarray(s.get_death_list(), dtype=np.float64)
        if births.size == 0:
            continue
        deaths = np.minimum(raw_deaths, 1.0)
        essential = bool(raw_deaths.size and np.any(np.all(np.isposinf(np.atleast_2d(raw_deaths)), axis=1)))
        prom, corner = summand_prominence(births, deaths)
        out.append(Summand(births, deaths, prom, corner, essential))
    out.sort(key=lambda s: -s.prominence)
    return out


def components_at(filt: MultiFiltration, grade: np.ndarray) -> np.ndarray:
    """Connected-component label of every vertex in the subgraph at ``grade`` (-1: not present)."""
    present = np.all(filt.vertex_grades <= grade + 1e-12, axis=1)
    e = filt.edges[np.all(filt.edge_grades <= grade + 1e-12, axis=1)]
    n = len(present)
    g = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)) if len(e) else coo_matrix((n, n))
    _, comp = connected_components(g, directed=False)
    return np.where(present, comp, -1)


class _Cores(Rule):
    """The cores of :func:`assign`: a list of 1-D integer index arrays, any of which may be empty (a
    summand that found every component taken gets no core). The default rule of ``list[np.ndarray]``
    refuses empty arrays, which made that documented case raise instead of returning."""

    def check(self, name: str, value: list) -> list:
        for i, core in enumerate(value):
            Array("m", integer=True, nonempty=False).check(f"{name}[{i}]", core)
        return value

    def describe(self) -> str:
        return "a list of 1-D integer index arrays (each may be empty)"


@checked(labels=Array("n", integer=True), n_clusters=Int(1), prominences=Array("k", nonempty=False), cores=_Cores())
@dataclass
class ToMAToMPResult:
    """Labels, the chosen count, the summands and their prominences, and the cores."""

    labels: np.ndarray
    n_clusters: int
    prominences: np.ndarray
    summands: list[Summand] = field(repr=False)
    cores: list[np.ndarray] = field(repr=False)
    filtration: MultiFiltration = field(repr=False)

    @property
    def n_labels(self) -> int:
        """Number of distinct labels actually assigned (can be below ``n_clusters``, see :func:`assign`)."""
        return len(np.unique(self.labels[self.labels >= 0]))

    @property
    def n_empty_cores(self) -> int:
        """Selected summands that got no core (every component was already taken)."""
        return sum(1 for c in self.cores if len(c) == 0)


def assign(filt: MultiFiltration, X: np.ndarray, selected: list[Summand], scale: float) -> tuple[np.ndarray, list]:
    """Cores of the selected summands at grade ``corner + scale·1``; the other points follow
    :func:`propagate_along` (the filtration's graph in the diagonal's order) to a core.

    A heuristic, not a theorem: MMA gives each summand's births and deaths, not the vertex that
    generates it. We take, among the components at the cube's grade that hold no generator of a
    more prominent summand, the vertex closest (sup norm) to a birth corner. When the summand's
    own component already holds an older generator (the approximation blurs supports), that
    vertex lies in *another* component and need not belong to the summand's support; and when
    every component is taken, the summand gets an empty core and no label. So the labels can
    have fewer distinct values than the count ``K``: :attr:`ToMAToMPResult.n_labels` and
    :attr:`ToMAToMPResult.n_empty_cores` report it.
    """
    grades = filt.vertex_grades
    n = len(grades)
    owner = np.full(n, -1)
    size = np.full(n, np.inf)
    cores = []
    generators: list[int] = []
    for c, s in enumerate(selected):
        comp = components_at(filt, s.corner + scale)
        # The summand is alive at this grade, so its component holds no older summand's
        # generator: among those components, take the vertex closest to a birth corner.
        taken = {comp[g] for g in generators}
        candidates = np.flatnonzero((comp >= 0) & ~np.isin(comp, list(taken)))
        if len(candidates) == 0:
            cores.append(np.zeros(0, dtype=np.int64))
            continue
        gap = np.abs(grades[candidates, None, :] - s.births[None, :, :]).max(-1).min(1)
        gen = int(candidates[np.argmin(gap)])
        generators.append(gen)
        core = np.flatnonzero(comp == comp[gen])
        cores.append(core)
        better = core[len(core) < size[core]]  # a point in two cores goes to the smaller one
        owner[better], size[better] = c, len(core)
    return propagate_along(filt, X, owner), cores


def propagate(X: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Spread the labels of ``seeds`` (-1: unlabelled) along the Euclidean minimum spanning tree.

    Kruskal's order (shortest edge first) with a union-find that joins two parts unless both
    already carry a label: every unlabelled point gets the label of the core it reaches by the
    path whose longest step is smallest (semi-supervised single linkage). Unlike a nearest-point
    rule, this follows the shape of elongated clusters such as the two moons.
    """
    labels = np.asarray(seeds).copy()
    if np.all(labels < 0):
        return labels
    mst = minimum_spanning_tree(squareform(pdist(X))).tocoo()
    return _join_labelled(labels, mst.row, mst.col, np.argsort(mst.data, kind="stable"))


def _join_labelled(labels: np.ndarray, rows: np.ndarray, cols: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Union-find over the edges ``(rows[i], cols[i])`` taken in ``order``: two parts join unless both
    already carry a label (>= 0); every point ends with its part's label (-1 if none)."""
    parent = np.arange(len(labels))
    root_label = labels.copy()

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i in order:
        a, b = find(rows[i]), find(cols[i])
        if a == b or (root_label[a] >= 0 and root_label[b] >= 0):
            continue
        parent[b] = a
        root_label[a] = max(root_label[a], root_label[b])
    return root_label[[find(v) for v in range(len(labels))]]


def propagate_along(filt: MultiFiltration, X: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Spread the labels of ``seeds`` (-1: unlabelled) over the filtration's own graph, its edges in
    the order the diagonal line ``t·(1, ..., 1)`` reaches them (the max over coordinates of the
    edge's grade; ties by Euclidean length).

    The same union-find as :func:`propagate` (two parts join unless both carry a label), but the
    order is the filtration's: a point joins the core that the diagonal of the filtration connects
    it to first, so the functions, not only the positions, draw the boundaries (as ToMATo's uphill
    walk follows f). Points the graph never reaches keep -1.
    """
    labels = np.asarray(seeds).copy()
    if np.all(labels < 0) or len(filt.edges) == 0:
        return labels
    e = filt.edges
    # an edge exists on the diagonal once both endpoints and the edge itself are present
    enter = np.maximum(filt.edge_grades.max(1), np.maximum(filt.vertex_grades[e[:, 0]].max(1),
                                                           filt.vertex_grades[e[:, 1]].max(1)))
    length = np.linalg.norm(X[e[:, 0]] - X[e[:, 1]], axis=1)
    return _join_labelled(labels, e[:, 0], e[:, 1], np.lexsort((length, enter)))


def essential_first(parts: list[Summand]) -> list[Summand]:
    """The summands with the essential ones (never dying) first, each group most prominent first."""
    return [s for s in parts if s.essential] + [s for s in parts if not s.essential]


def check_essential_first(parts: list[Summand], n_essential: int) -> None:
    """Check that the ``n_essential`` most prominent summands are the ones that never die.

    A summand is essential when one of its death corners is ``+inf`` in every coordinate (one per
    connected component of the whole graph). :func:`tomato_mp` puts them first
    (:func:`essential_first`; they need not be the most prominent: an essential summand born late
    along a function axis has a small cube) and counts them apart; a ``RuntimeError`` means the
    MMA found a different number of essential summands than the graph has components.
    """
    essential = [s.essential for s in parts]
    if sum(essential) != n_essential or not all(essential[:n_essential]):
        raise RuntimeError(
            f"expected the {n_essential} essential summand(s) to be the most prominent, "
            f"found essential flags {essential[: n_essential + 3]} in prominence order"
        )


@checked(
    X=Array("n d"),
    n_clusters=Int(1),
    n_lines=Int(4, MAX_LINES),
    dtm_mass=Float(0.0, 1.0, low_inclusive=False),
    r_max=Positive(),
    device=Device(),
    n_jobs=Int(1, 1024),
)
def tomato_mp(
    X: np.ndarray,
    functions: Sequence[float] | Sequence[Sequence[float]] | np.ndarray,
    *,
    robust: bool = True,
    n_clusters: int | None = None,
    n_lines: int = 40,
    dtm_mass: float = 0.05,
    r_max: float | None = None,
    device: str = "cpu",
    n_jobs: int = 1,
    reduce: bool = False,
) -> ToMAToMPResult:
    """Cluster ``X`` with ToMAToMP (our reconstruction, see the module docstring).

    ``functions``: one array of ``n`` values, or several (a ``(p, n)`` array or a list).
    ``robust`` adds the distance-to-measure parameter (mass ``dtm_mass``). Without
    ``n_clusters``, the count is read from the largest prominence gap. ``reduce`` computes the MMA on
    the graph without its dominated edges (:func:`drop_dominated_edges`: the same H0 module, about a
    tenth of the edges on Gaussian groups, several times faster); the components and the assignment
    always use the whole graph. With one function the MMA came out identical on every sample tried;
    with two or more, its corners can differ (the approximation follows the complex), which can move
    a small summand's prominence (benchmarks/tomato_mp_reduce.md).
    """
    X = check_points("X", X)
    F = check_functions("functions", functions, len(X))
    check_in_range("dtm_mass", dtm_mass, 0.0, 1.0, low_inclusive=False)
    if n_clusters is not None:
        check_int("n_clusters", n_clusters, minimum=1, maximum=len(X))
    filt = build_filtration(X, F, robust=robust, dtm_mass=dtm_mass, r_max=r_max, device=device)
    mma_input = drop_dominated_edges(filt) if reduce else filt
    parts = essential_first(summands(mma_h0(mma_input, n_lines=n_lines, n_jobs=n_jobs)))
    prom = np.array([s.prominence for s in parts])
    # The components of the whole graph never die: their summands always count, as ToMATo's
    # essential classes do, whatever their cube size (with f = -log KDE, say, an essential summand
    # can be born late and be less prominent than a finite one).
    n_essential = int(components_at(filt, np.ones(filt.num_parameters)).max() + 1)
    check_essential_first(parts, n_essential)
    k = n_clusters or largest_gap_count(prom[n_essential:], n_essential)
    k = min(k, len(parts))
    selected = parts[:k]
    labels, cores = assign(filt, X, selected, scale=selected[-1].prominence / 2)
    return ToMAToMPResult(labels, k, prom, parts, cores, filt)
