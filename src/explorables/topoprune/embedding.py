"""The global, topology-aware embedding: UMAP (umap-learn) of the latent features."""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..core.arguments import Array, checked
from ..core.params import Int
from ..core.validation import check_int


@checked(features=Array("n d", min_size=(("n", 10),)), n_epochs=Int(1, 100_000))
def umap_embedding(
    features: np.ndarray, *, d_embed: int = 2, n_neighbours: int = 15, n_epochs: int = 100, seed: int = 0
) -> np.ndarray:
    """UMAP of ``features`` into ``d_embed`` dimensions (umap-learn; seeded, so single-threaded).

    UMAP builds a fuzzy simplicial set over the kNN graph of the features and lays it out in low
    dimension: the paper's "topology-aware manifold approximation". Uses no labels. The exact kNN
    graph (scikit-learn, :func:`~explorables.topoprune.persistence.nearest_others`) is given to UMAP
    as ``precomputed_knn``: the same graph its exact small-data path builds, found without calling a
    distance function once per pair from Python.
    """
    f = np.asarray(features, dtype=np.float64)
    d_embed = check_int("d_embed", d_embed, 1, f.shape[1])
    n_neighbours = check_int("n_neighbours", n_neighbours, 2, f.shape[0] - 1)
    import torch
    import umap  # imported here: numba compiles on first use (seconds)

    from .persistence import nearest_others

    # the exact kNN graph, found once by scikit-learn and handed to UMAP (its own small-data path
    # computes every pairwise distance through a Python-level metric call; "force_approximation_algorithm"
    # only makes it read the graph given instead). UMAP counts a point as its own first neighbour.
    others, dist = nearest_others(f, n_neighbours - 1)
    knn = (np.c_[np.arange(len(f)), others], np.c_[np.zeros(len(f)), dist])

    threads = torch.get_num_threads()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "n_jobs overridden by random_state": we want the seed
            reducer = umap.UMAP(n_components=d_embed, n_neighbors=n_neighbours, n_epochs=n_epochs,
                                random_state=seed, init="spectral", precomputed_knn=knn,
                                force_approximation_algorithm=True)  # fmt: skip
            return np.asarray(reducer.fit_transform(f), dtype=np.float64)
    finally:
        # umap-learn's thread limits, on exit, reset the OpenMP pool torch shares to another count;
        # torch's thread count (hence its float results) must not depend on whether UMAP ran before
        torch.set_num_threads(threads)


def warm_up_umap() -> float:
    """Seconds spent on UMAP's first call in this process (numba compiles its kernels then; later calls
    reuse them). The book's time budget counts it, so the experiment measures it."""
    start = time.perf_counter()
    umap_embedding(np.random.default_rng(0).standard_normal((60, 4)), n_neighbours=5, n_epochs=10)
    return time.perf_counter() - start


def pca_embedding(features: np.ndarray, *, d_embed: int = 2) -> np.ndarray:
    """The top ``d_embed`` principal components: a linear stand-in for UMAP (no numba warm-up), used
    by the ``smoke`` preset so that the tests run in seconds; not TopoPrune's embedding."""
    f = np.asarray(features, dtype=np.float64)
    if f.ndim != 2 or f.shape[0] < 2:
        raise ValueError(f"features must be a 2-D array of at least 2 samples, got shape {f.shape}")
    d_embed = check_int("d_embed", d_embed, 1, f.shape[1])
    centred = f - f.mean(0)
    _, vectors = np.linalg.eigh(centred.T @ centred)  # ascending eigenvalues: the last are the top directions
    top = vectors[:, ::-1][:, :d_embed]
    signs = np.sign(top[np.abs(top).argmax(axis=0), np.arange(d_embed)])  # each axis's largest loading > 0
    return centred @ (top * signs)


@checked(Z=Array("n d", min_size=(("n", 2),)))
def knn_radius(Z: np.ndarray, n_neighbours: int = 15) -> np.ndarray:
    """Mean distance of each point to its ``n_neighbours`` nearest neighbours in the embedding.

    The control score: the same embedding and selection as TopoPrune, without any persistence.
    """
    from .persistence import exact_knn

    Z = np.asarray(Z, dtype=np.float64)
    n_neighbours = check_int("n_neighbours", n_neighbours, 1, Z.shape[0] - 1)
    dist, _ = exact_knn(Z, n_neighbours + 1)  # one thread: the same neighbours, far less CPU
    return dist[:, 1:].mean(1)
