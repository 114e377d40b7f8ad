"""Local persistent homology of a point cloud, made differentiable with torch.

gudhi computes the Vietoris–Rips persistence of a small cloud and, with
``flag_persistence_generators``, says *which edges* create and destroy every class: an H0 class
dies at an edge ``(a, b)``, an H1 class is born at an edge ``(b1, b2)`` and dies at an edge
``(d1, d2)``. With those index pairs fixed, every birth and death is a distance between two
points, so a torch distance matrix gives the same values *and* their gradients (the recipe of
Carrière et al., ICML 2021). This is eq. (topoprune-pers) and (topoprune-loss) of the chapter.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from functools import cache
from itertools import repeat

import gudhi
import numpy as np
import torch

from ..core.arguments import Array, checked
from ..core.params import Bool, Int, Positive
from ..core.threads import one_cpu_thread
from ..core.validation import check_int

#: a point cloud: at least two points of at least one coordinate
_POINTS = Array("n d", min_size=(("n", 2),))


@checked(h0=Array("m0 2", integer=True, nonempty=False), h1=Array("m1 4", integer=True, nonempty=False))
@dataclass(frozen=True)
class FlagPairs:
    """Persistence pairs of a Rips filtration as point indices (from gudhi).

    ``h0``: ``(m0, 2)`` edges at which the finite H0 classes die (they are born at 0);
    ``h1``: ``(m1, 4)`` birth edge ``(b1, b2)`` and death edge ``(d1, d2)`` of each finite H1 class.
    """

    h0: np.ndarray
    h1: np.ndarray

    def __post_init__(self) -> None:
        for name in ("h0", "h1"):
            value = np.asarray(getattr(self, name))
            if value.size and value.min() < 0:
                raise ValueError(f"{name} must hold point indices >= 0, got {int(value.min())}")


def _check_tensor_points(points: torch.Tensor, pairs: FlagPairs | None) -> None:
    """``points`` a float tensor (it is differentiated), and every index of ``pairs`` one of its points."""
    if not isinstance(points, torch.Tensor) or not points.is_floating_point():
        raise TypeError(f"points must be a floating-point torch.Tensor of shape (n, d), got {type(points).__name__}")
    if pairs is None:
        return
    n = points.shape[0]
    for name, index in (("h0", pairs.h0), ("h1", pairs.h1)):
        if np.size(index) and int(np.max(index)) >= n:
            raise ValueError(f"pairs.{name} holds point index {int(np.max(index))}, but points has only {n} points")


@checked(points=_POINTS, max_dimension=Int(0, 1))
def flag_pairs(points: np.ndarray, max_dimension: int = 1) -> FlagPairs:
    """The persistence pairs of the Rips filtration of ``points``, as edges (gudhi).

    ``max_dimension`` 0 gives H0 only, 1 gives H0 and H1 (triangles are added to the complex).
    """
    arr = np.asarray(points, dtype=np.float64)
    h0, h1 = _pair_arrays(arr, max_dimension)
    return FlagPairs(h0=h0, h1=h1)


def _pair_arrays(arr: np.ndarray, max_dimension: int) -> tuple[np.ndarray, np.ndarray]:
    """gudhi's pairs of one checked float64 cloud: ``h0`` ``(m0, 2)`` and ``h1`` ``(m1, 4)`` point indices."""
    tree = gudhi.RipsComplex(points=arr).create_simplex_tree(max_dimension=max_dimension + 1)
    tree.compute_persistence()
    regular, higher, _, _ = tree.flag_persistence_generators()
    h0 = np.asarray(regular, dtype=np.int64).reshape(-1, 3)[:, 1:]  # [vertex, a, b]: dies at edge (a, b)
    h1 = np.asarray(higher[0], dtype=np.int64).reshape(-1, 4) if higher else np.zeros((0, 4), dtype=np.int64)
    return h0, h1


@checked(points=_POINTS)
def persistence_values(points: torch.Tensor, pairs: FlagPairs) -> tuple[torch.Tensor, torch.Tensor]:
    """``(deaths_h0, (births_h1, deaths_h1))`` read off torch distances at gudhi's pairs, eq. (topoprune-pers).

    Differentiable in ``points`` (for fixed pairs, which is how the pairs behave away from ties).
    """
    _check_tensor_points(points, pairs)
    dist = torch.cdist(points, points)
    h0, h1 = torch.as_tensor(pairs.h0), torch.as_tensor(pairs.h1)
    deaths0 = dist[h0[:, 0], h0[:, 1]]
    births1, deaths1 = dist[h1[:, 0], h1[:, 1]], dist[h1[:, 2], h1[:, 3]]
    return deaths0, torch.stack([births1, deaths1], dim=-1)


@checked(skip_nested=True, points=_POINTS)  # flag_pairs and persistence_values run bare on the checked points
def total_persistence(points: torch.Tensor, pairs: FlagPairs | None = None) -> torch.Tensor:
    """The local loss of eq. (topoprune-loss): the summed lifetimes of the finite H0 and H1 classes."""
    _check_tensor_points(points, pairs)
    if pairs is None:
        pairs = flag_pairs(points.detach().cpu().numpy())
    deaths0, h1 = persistence_values(points, pairs)
    return deaths0.sum() + (h1[:, 1] - h1[:, 0]).sum()


#: exact_knn searches this many rows or fewer on one thread (the book's pools, classes and lab; not CIFAR's)
ONE_THREAD_ROWS = 10_000


@cache
def _thread_pools():  # created once, after scikit-learn's neighbour search (and its OpenMP) is loaded
    from sklearn.neighbors import NearestNeighbors  # noqa: F401
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_thread():
    """A context in which every OpenMP and BLAS thread pool loaded in this process (torch's, scikit-learn's,
    numpy's, scipy's, numba's) runs on one thread; the counts before it are restored after it. The
    experiment runs each seed in it when processes share the seeds: a second thread in either process
    would only wait for (or take) the core the other one works on."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)  # looks the pools up now: every library loaded so far


def exact_knn(data: np.ndarray, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's exact neighbour search of every row of ``data`` among the rows (itself included):
    ``(distances, indices)``, ``(n, n_neighbors)``, nearest first; on one thread (OpenMP and BLAS) for
    up to :data:`ONE_THREAD_ROWS` rows.

    On the book's few hundred points the search's threads cost far more than they save: on the
    book's 2-core Intel host, loaded, one class's search took ~45x the CPU time with two spinning
    threads as with one. Every search is exact and each row's distances are computed the same way
    on any number of threads: the neighbours and distances are the same (tested)."""
    from sklearn.neighbors import NearestNeighbors

    with _thread_pools().limit(limits=1) if len(data) <= ONE_THREAD_ROWS else nullcontext():
        dist, idx = NearestNeighbors(n_neighbors=n_neighbors).fit(data).kneighbors(data)
    return dist, idx


@checked(points=_POINTS, n_neighbours=Int(1))
def nearest_others(points: np.ndarray, n_neighbours: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k = n_neighbours`` nearest *other* points of every point (Euclidean, scikit-learn's exact
    search): indices ``(n, k)`` and distances ``(n, k)``, nearest first.

    The point itself is taken out of its own list by index, not by distance, so a duplicate of it
    (distance 0) stays a neighbour. Vectorised: one ``k + 1`` search, then each row drops its own index,
    or its farthest entry when a duplicate pushed the point itself out of the ``k + 1``.
    """
    arr = np.asarray(points, dtype=np.float64)
    k = check_int("n_neighbours", n_neighbours, 1, arr.shape[0] - 1)
    dist, idx = exact_knn(arr, k + 1)
    keep = idx != np.arange(arr.shape[0])[:, None]
    keep[keep.all(axis=1), -1] = False  # the point itself was not among its k + 1: drop the farthest
    return idx[keep].reshape(-1, k), dist[keep].reshape(-1, k)


@checked(skip_nested=True, Z=_POINTS, n_neighbours=Int(2))  # nearest_others runs bare on the checked cloud
def neighbourhoods(Z: np.ndarray, n_neighbours: int) -> np.ndarray:
    """``(n, k + 1)`` indices: each sample followed by its ``k`` nearest neighbours in ``Z`` (Euclidean)."""
    arr = np.asarray(Z, dtype=np.float64)
    k = check_int("n_neighbours", n_neighbours, 2, arr.shape[0] - 1)
    rest, _ = nearest_others(arr, k)
    return np.concatenate([np.arange(arr.shape[0])[:, None], rest], axis=1)


@checked(clouds=Array("b m d", min_size=(("m", 2),)))
def mst_pairs(clouds: np.ndarray) -> np.ndarray:
    """The H0 persistence pairs of every cloud in ``clouds`` (``(b, m, d)``), from its minimum spanning tree.

    In a Rips filtration every point is born at 0 and a component dies when an edge first joins it to
    another: the finite H0 deaths are exactly the edge lengths of a minimum spanning tree (Kruskal's
    algorithm is the union-find of the filtration). Prim's algorithm, run on all clouds at once in numpy
    (``m - 1`` vectorised steps), gives each cloud's ``m - 1`` edges ``(a, b)`` as an ``(b, m - 1, 2)``
    integer array: the same death values as gudhi's pairs (the edges themselves can differ only between
    edges of equal length). No gudhi call, hence no per-cloud Python loop.
    """
    arr = np.asarray(clouds, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("clouds must hold finite coordinates")
    b, m = arr.shape[:2]
    sq = (arr**2).sum(-1)
    dist = sq[:, :, None] + sq[:, None, :] - 2.0 * np.einsum("bid,bjd->bij", arr, arr)  # squared: same order
    rows = np.arange(b)
    in_tree = np.zeros((b, m), dtype=bool)
    in_tree[:, 0] = True
    best, parent = dist[:, 0, :].copy(), np.zeros((b, m), dtype=np.int64)
    edges = np.empty((b, m - 1, 2), dtype=np.int64)
    for step in range(m - 1):
        best[in_tree] = np.inf
        j = best.argmin(axis=1)  # the nearest point outside the tree joins it
        edges[:, step, 0], edges[:, step, 1] = parent[rows, j], j
        in_tree[rows, j] = True
        closer = dist[rows, j, :] < best
        best = np.where(closer, dist[rows, j, :], best)
        parent = np.where(closer, j[:, None], parent)
    return edges


@checked(skip_nested=True, points=_POINTS, moved=_POINTS, n_neighbours=Int(2))  # neighbourhoods, mst_pairs run bare
def pair_changes(points: np.ndarray, moved: np.ndarray, n_neighbours: int) -> dict[str, float]:
    """How much a perturbation changes the neighbourhoods and their H0 persistence pairs.

    Row ``i`` of ``points`` and of ``moved`` is the same sample before and after the perturbation. Each
    sample's neighbourhood (it and its ``n_neighbours`` nearest others, :func:`neighbourhoods`) is taken in
    both; its H0 pairs (the edges of its minimum spanning tree, :func:`mst_pairs`) are written as the two
    *samples* they join, so a pair counts as kept when the same two samples are still a pair of that
    sample's neighbourhood, whether or not the rest of the neighbourhood changed. Means over samples:
    ``members_kept`` (share of the neighbours still neighbours), ``pairs_kept`` (share of the pairs still
    pairs) and ``changed`` (share of neighbourhoods with at least one pair not kept). Edges of equal length
    can be swapped by a tie; continuous data has none.
    """
    a, b = np.asarray(points, dtype=np.float64), np.asarray(moved, dtype=np.float64)
    k = check_int("n_neighbours", n_neighbours, 2, a.shape[0] - 1)
    n = a.shape[0]

    def hoods_and_pairs(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hoods = neighbourhoods(arr, k)
        local = mst_pairs(arr[hoods] - arr[hoods[:, :1]])  # (n, k, 2) indices into the hood
        ends = np.take_along_axis(hoods[:, None, :], local.reshape(n, 1, -1), axis=2).reshape(n, k, 2)
        return hoods, ends.min(-1) * n + ends.max(-1)  # each pair as one code of its two samples

    hoods_a, codes_a = hoods_and_pairs(a)
    hoods_b, codes_b = hoods_and_pairs(b)
    kept = (codes_a[:, :, None] == codes_b[:, None, :]).any(-1)
    members = (hoods_a[:, 1:, None] == hoods_b[:, None, 1:]).any(-1)
    return {"members_kept": float(members.mean()), "pairs_kept": float(kept.mean()),
            "changed": float((~kept.all(axis=1)).mean())}  # fmt: skip


def _chunk_pairs(clouds: np.ndarray, max_dimension: int) -> list[tuple[np.ndarray, np.ndarray]]:
    # the clouds are made from a checked embedding: no per-cloud argument checks in this hot loop
    return [_pair_arrays(np.asarray(cloud, dtype=np.float64), max_dimension) for cloud in clouds]


@checked(skip_nested=True, clouds=Array("c m d"), max_dimension=Int(0, 1), workers=Int(0, 1024))  # mst_pairs runs bare
def batched_pairs(
    clouds: np.ndarray, max_dimension: int = 1, workers: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """gudhi's pairs of every cloud in ``clouds`` (``(n, m, d)``), stacked with the cloud's index in front.

    Returns ``h0`` as ``(·, 3)`` rows ``[cloud, a, b]`` and ``h1`` as ``(·, 5)`` rows
    ``[cloud, b1, b2, d1, d2]``, ready to index a batched distance matrix. ``workers`` processes
    share the clouds (0: all cores); the pairs, hence every number, are the same for any count.
    With ``max_dimension`` 0 the H0 pairs come from :func:`mst_pairs` (no gudhi: the same death values,
    tested against gudhi) and ``h1`` is empty.
    """
    workers = workers or os.cpu_count() or 1
    if max_dimension == 0:  # H0 only: the minimum spanning trees, all clouds at once (no gudhi, no workers)
        edges = mst_pairs(np.asarray(clouds))
        index = np.repeat(np.arange(len(edges)), edges.shape[1])[:, None]
        return torch.as_tensor(np.c_[index, edges.reshape(-1, 2)]), torch.zeros((0, 5), dtype=torch.int64)
    if workers > 1 and len(clouds) >= 8 * workers:
        chunks = np.array_split(np.asarray(clouds), 4 * workers)
        with ProcessPoolExecutor(workers) as pool:
            all_pairs = [p for chunk in pool.map(_chunk_pairs, chunks, repeat(max_dimension)) for p in chunk]
    else:
        all_pairs = _chunk_pairs(clouds, max_dimension)
    h0s, h1s = [], []
    for i, (h0, h1) in enumerate(all_pairs):
        h0s.append(np.c_[np.full(len(h0), i), h0])
        h1s.append(np.c_[np.full(len(h1), i), h1])
    return torch.as_tensor(np.concatenate(h0s)), torch.as_tensor(np.concatenate(h1s).reshape(-1, 5))


@checked(Z=Array("n d"), hoods=Array("m k", integer=True, min_size=(("k", 2),)))
def local_clouds(Z: np.ndarray, hoods: np.ndarray) -> np.ndarray:
    """Each neighbourhood centred on its sample and scaled by its mean distance to its neighbours.

    The scaling makes the score scale-free: a dense and a sparse region with the same shape get the
    same persistence (our choice; the abstract does not say).
    ``hoods`` is ``(m, k + 1)`` indices of rows of ``Z`` (as :func:`neighbourhoods` returns), ``k >= 1``.
    """
    Z, hoods = np.asarray(Z), np.asarray(hoods)
    if hoods.min() < 0 or hoods.max() >= Z.shape[0]:
        raise ValueError(f"hoods must hold row indices of Z in [0, {Z.shape[0] - 1}], got {hoods.min()}..{hoods.max()}")
    clouds = Z[hoods] - Z[hoods[:, :1]]
    radius = np.linalg.norm(clouds[:, 1:], axis=-1).mean(axis=1)
    return clouds / np.where(radius > 0, radius, 1.0)[:, None, None]


@checked(skip_nested=True, points=_POINTS, hoods=Array("m k", integer=True, min_size=(("k", 2),)),
         max_dimension=Int(0, 1), workers=Int(0, 1024))  # fmt: skip
def neighbourhood_persistence(
    points: np.ndarray, hoods: np.ndarray, max_dimension: int = 0, workers: int = 1
) -> np.ndarray:
    """Total persistence, eq. (topoprune-loss), of every neighbourhood ``points[hoods[j]]`` as it lies in
    ``points`` (centred on its sample, not rescaled): one value per row of ``hoods``.

    A value of the diagram, not of its pairs: moving every point by at most ``eps`` moves each finite H0
    death by at most ``2 eps`` (the stability theorem), so the H0 part moves by at most ``2 eps k``.
    """
    arr = np.asarray(points, dtype=np.float64)
    hoods = np.asarray(hoods)
    if hoods.min() < 0 or hoods.max() >= arr.shape[0]:
        raise ValueError(f"hoods must hold row indices of points in [0, {arr.shape[0] - 1}], "
                         f"got {hoods.min()}..{hoods.max()}")  # fmt: skip
    clouds = arr[hoods] - arr[hoods[:, :1]]
    h0, h1 = batched_pairs(clouds, max_dimension, workers)
    with one_cpu_thread():
        c = torch.as_tensor(clouds)
        dist = torch.cdist(c, c)
        total = torch.zeros(len(hoods), dtype=dist.dtype)
        total.index_add_(0, h0[:, 0], dist[h0[:, 0], h0[:, 1], h0[:, 2]])
        if len(h1):
            total.index_add_(0, h1[:, 0], dist[h1[:, 0], h1[:, 3], h1[:, 4]] - dist[h1[:, 0], h1[:, 1], h1[:, 2]])
    return total.numpy()


@checked(skip_nested=True, features=_POINTS, n_neighbours=Int(2), max_dimension=Int(0, 1), workers=Int(0, 1024),
         average=Bool())  # fmt: skip
def persistence_scores(
    features: np.ndarray, n_neighbours: int = 30, max_dimension: int = 0, workers: int = 1, average: bool = True
) -> np.ndarray:
    """TopoPrune's score, eq. (topoprune-stable) (our reconstruction, second version).

    Every sample's neighbourhood (itself and its ``n_neighbours`` nearest neighbours in the latent
    ``features``, the support of UMAP's fuzzy simplicial set) is a Rips cloud in the feature space,
    unscaled; its total persistence (H0, and H1 if ``max_dimension`` is 1) is a value of its diagram.
    A sample's score is the mean of that value over the neighbourhoods it belongs to (its own and
    those of the samples that count it as a neighbour), as in eq. (topoprune-score). Uses no labels
    and no UMAP layout: the layout is what made the first version unstable (measured in the chapter).
    ``average=False`` returns each sample's own neighbourhood's value, not averaged (the diagnosis
    measures what the averaging adds).
    """
    arr = np.asarray(features, dtype=np.float64)
    hoods = neighbourhoods(arr, n_neighbours)
    values = neighbourhood_persistence(arr, hoods, max_dimension, workers)
    if not average:
        return values
    return _mean_over_memberships(values[:, None].repeat(hoods.shape[1], 1), hoods, arr.shape[0])


@checked(features=_POINTS, n_neighbours=Int(2))
def averaged_knn_radius(features: np.ndarray, n_neighbours: int = 30) -> np.ndarray:
    """The control score: each neighbourhood's mean distance from its centre to its ``n_neighbours``
    nearest neighbours (the kNN radius, no persistence), averaged over the neighbourhoods a sample
    belongs to exactly as :func:`persistence_scores` averages the total persistence. Same
    neighbourhoods, same averaging: only the value of each neighbourhood differs."""
    arr = np.asarray(features, dtype=np.float64)
    n_neighbours = check_int("n_neighbours", n_neighbours, 2, arr.shape[0] - 1)
    hoods = neighbourhoods(arr, n_neighbours)
    radius = np.linalg.norm(arr[hoods[:, 1:]] - arr[hoods[:, :1]], axis=-1).mean(1)
    return _mean_over_memberships(radius[:, None].repeat(hoods.shape[1], 1), hoods, arr.shape[0])


def _mean_over_memberships(per_member: np.ndarray, hoods: np.ndarray, n: int) -> np.ndarray:
    """``per_member[j, a]`` belongs to sample ``hoods[j, a]``: each sample's mean over its memberships."""
    total, count = np.zeros(n), np.zeros(n)
    np.add.at(total, hoods, per_member)
    np.add.at(count, hoods, 1.0)
    return total / count


@checked(skip_nested=True, Z=_POINTS, n_neighbours=Int(2), n_steps=Int(1, 10_000), lr=Positive(),
         max_dimension=Int(0, 1), workers=Int(0, 1024))  # fmt: skip
def topological_scores(
    Z: np.ndarray, n_neighbours: int = 15, n_steps: int = 3, lr: float = 0.05, max_dimension: int = 1,
    workers: int = 1, rescale: bool = True,
) -> np.ndarray:
    """The first version's score, eq. (topoprune-score): displacement under the local optimisation.

    Every sample's neighbourhood in the embedding ``Z`` is optimised by ``n_steps`` steps of
    gradient descent on its total persistence, eq. (topoprune-loss), with gudhi's pairs recomputed
    at every step; a sample's score is its mean displacement over all the neighbourhoods it belongs
    to (its own and those of the samples that count it as a neighbour). Uses no labels.
    ``workers``: processes for gudhi's pairs (0: all cores; the scores do not depend on it).
    ``rescale``: divide each neighbourhood by its mean distance to the sample (the first version did;
    ``False`` keeps the embedding's scale, for the chapter's measurement of what made it unstable).
    Measured unstable (rank correlation with itself under feature noise near zero); kept to show why.
    """
    arr = np.asarray(Z, dtype=np.float64)
    hoods = neighbourhoods(arr, n_neighbours)
    clouds = local_clouds(arr, hoods) if rescale else arr[hoods] - arr[hoods[:, :1]]
    with one_cpu_thread():  # (n, k + 1, k + 1) distances: small blocks, one thread is faster
        moved = _descend(torch.as_tensor(clouds), n_steps, lr, max_dimension, workers)
    return _mean_over_memberships(moved, hoods, arr.shape[0])


def _descend(start: torch.Tensor, n_steps: int, lr: float, max_dimension: int, workers: int = 1) -> np.ndarray:
    """Eq. (topoprune-step) on every neighbourhood at once; returns each point's displacement ``(n, k + 1)``."""
    clouds = start.clone().requires_grad_(True)
    for _ in range(n_steps):
        h0, h1 = batched_pairs(clouds.detach().numpy(), max_dimension, workers)
        dist = torch.cdist(clouds, clouds)  # (n, k + 1, k + 1): all neighbourhoods at once
        loss = dist[h0[:, 0], h0[:, 1], h0[:, 2]].sum()
        loss = loss + (dist[h1[:, 0], h1[:, 3], h1[:, 4]] - dist[h1[:, 0], h1[:, 1], h1[:, 2]]).sum()
        (grad,) = torch.autograd.grad(loss, clouds)  # neighbourhoods are independent: one backward for all
        with torch.no_grad():
            clouds -= lr * grad
    return (clouds.detach() - start).norm(dim=-1).numpy()
