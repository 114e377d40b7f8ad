"""How the chapter scores concepts and samples (scikit-learn does the clustering scores and k-means).

* :func:`cluster_scores`: NMI and ARI of an assignment against labels (``sklearn.metrics``).
* :func:`kmeans_assign`: k-means on the same inputs (``sklearn.cluster.KMeans``).
* :func:`usage_weighted_purity`: how pure the samples generated for each concept are under a classifier.
* :func:`mmd2`: the squared maximum mean discrepancy between two samples (a sample-quality distance).
* :func:`principal_axes`: a sample's leading principal directions and its variance along each (a thin SVD).
* :func:`variance_ratios`: a sample's spread along a reference's leading principal components, relative to the
  reference's (why a generator that errs in second moments loses to a Gaussian fit under :func:`mmd2`).
* :func:`majority_labels`: the label most inputs of each concept carry (evaluation only).
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from ..core.validation import check_int


def mean_sd(values) -> dict[str, float]:
    """Mean and sample standard deviation (0 for one value)."""
    arr = np.asarray(values, dtype=np.float64)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0}


def cluster_scores(labels: np.ndarray, assignment: np.ndarray) -> dict[str, float]:
    """NMI (arithmetic normalisation) and ARI of ``assignment`` against ``labels``."""
    labels, assignment = np.asarray(labels), np.asarray(assignment)
    if labels.shape != assignment.shape:
        raise ValueError(f"labels and assignment must have the same shape, got {labels.shape} and {assignment.shape}")
    return {
        "nmi": float(normalized_mutual_info_score(labels, assignment)),
        "ari": float(adjusted_rand_score(labels, assignment)),
    }


def kmeans_assign(x: np.ndarray, n_clusters: int, seed: int, n_init: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """k-means (k-means++ starts, best of ``n_init``) on ``x``: the assignment and the centres."""
    n_clusters = check_int("n_clusters", n_clusters, minimum=1)
    km = KMeans(n_clusters, n_init=n_init, random_state=seed).fit(np.asarray(x, dtype=np.float64))
    return km.labels_, km.cluster_centers_


def majority_labels(assignment: np.ndarray, labels: np.ndarray, n_concepts: int) -> np.ndarray:
    """For each concept, the label most of its inputs carry (``-1`` for an unused concept)."""
    out = np.full(n_concepts, -1)
    for k in range(n_concepts):
        members = labels[assignment == k]
        if len(members):
            out[k] = np.bincount(members).argmax()
    return out


def usage_weighted_purity(predicted: np.ndarray, usage: np.ndarray) -> tuple[float, np.ndarray]:
    """Purity of concept-conditioned samples: ``predicted[k]`` are the classifier's labels of the samples
    generated for concept ``k``; its purity is the share of its most common label. Returns the mean over
    concepts weighted by ``usage`` (the share of training inputs each concept takes) and the purities."""
    predicted = np.asarray(predicted)
    usage = np.asarray(usage, dtype=np.float64)
    if predicted.ndim != 2 or len(predicted) != len(usage):
        raise ValueError(f"predicted must be (n_concepts, n) with n_concepts = len(usage) = {len(usage)}")
    purity = np.array([np.bincount(row).max() / len(row) for row in predicted])
    return float((purity * usage).sum() / usage.sum()), purity


def squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``|a_i - b_j|^2`` for all pairs, ``(len(a), len(b))``, as ``|a|^2 + |b|^2 - 2 a b^T`` (memory ``n m``,
    not ``n m D``: CIFAR's 3072 dimensions at paper scale), clipped at 0 against rounding."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    d = (a**2).sum(1)[:, None] + (b**2).sum(1)[None, :] - 2.0 * a @ b.T
    return np.maximum(d, 0.0)


#: the kernel's bandwidths, as multiples of the median pairwise distance (chosen on tuning base seed 100:
#: at the median alone a Gaussian fit to the 2-D mixture is as close to held-out data as data itself)
BANDWIDTH_SCALES: tuple[float, ...] = (0.2, 0.5, 1.0)


def median_bandwidth(x: np.ndarray, max_points: int = 500) -> float:
    """The median pairwise distance of (up to ``max_points`` of) ``x``."""
    x = np.asarray(x, dtype=np.float64)[:max_points]
    d = np.sqrt(squared_distances(x, x))
    return float(np.median(d[np.triu_indices(len(x), 1)]))


def kernel_bandwidths(x: np.ndarray, scales=BANDWIDTH_SCALES) -> tuple[float, ...]:
    """The bandwidths of :func:`mmd2`: ``scales`` times the median pairwise distance of ``x``."""
    h = median_bandwidth(x)
    return tuple(float(s) * h for s in scales)


def mmd2(x: np.ndarray, y: np.ndarray, bandwidth) -> float:
    """Unbiased squared MMD (Gretton et al., 2012) with the kernel ``exp(-|a - b|^2 / (2 h^2))``, or, for a
    sequence of bandwidths, the mean of those kernels (a kernel that sees the modes and the spread at once)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) < 2 or len(y) < 2:
        raise ValueError("mmd2 needs at least two points in each sample")
    hs = np.atleast_1d(np.asarray(bandwidth, dtype=np.float64))
    if hs.ndim != 1 or len(hs) == 0 or not np.all(hs > 0):
        raise ValueError(f"bandwidth must be a positive number or a non-empty sequence of them, got {bandwidth!r}")
    dxx, dyy, dxy = squared_distances(x, x), squared_distances(y, y), squared_distances(x, y)

    def k(d: np.ndarray) -> np.ndarray:
        # the mean of the kernels, accumulated in place (the same sums as np.mean over a stacked copy, in half the time)
        out = np.exp(-d / (2 * hs[0] ** 2))
        for h in hs[1:]:
            out += np.exp(-d / (2 * h**2))
        out /= len(hs)
        return out

    kxx, kyy, kxy = k(dxx), k(dyy), k(dxy)
    n, m = len(x), len(y)
    return float(
        (kxx.sum() - np.trace(kxx)) / (n * (n - 1)) + (kyy.sum() - np.trace(kyy)) / (m * (m - 1)) - 2 * kxy.mean()
    )


#: how many leading principal components of the held-out data :func:`variance_ratios` reads in the evaluation
VARIANCE_COMPONENTS = 10


def principal_axes(reference: np.ndarray, n_components: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_components`` leading principal directions of ``reference`` (columns of a ``(D, k)`` array; all of
    them when ``None``, at most the dimension) and its sample variance along each, largest first: a thin SVD of
    the centred sample, ``X - mean = U S V^T``, variances ``S**2 / (n - 1)``, which costs ``O(n D min(n, D))``
    instead of an eigendecomposition of the ``D x D`` covariance (images: ``D = 3072``)."""
    reference = np.asarray(reference, dtype=np.float64)
    if reference.ndim != 2 or len(reference) < 2:
        raise ValueError(f"reference must be (n, D) with at least two points, got {reference.shape}")
    d = reference.shape[1]
    k = d if n_components is None else min(check_int("n_components", n_components, minimum=1), d)
    _, singular, vt = np.linalg.svd(reference - reference.mean(0), full_matrices=False)
    variances = np.zeros(k)
    variances[: min(k, len(singular))] = singular[:k] ** 2 / (len(reference) - 1)
    if not np.all(variances > 1e-12 * max(float(variances[0]), 1e-300)):
        raise ValueError("reference has no spread along one of the requested components")
    return vt[:k].T, variances


def variance_ratios(
    x: np.ndarray,
    reference: np.ndarray,
    n_components: int | None = None,
    *,
    axes: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """The variance of ``x`` along each of the ``n_components`` leading principal directions of ``reference``
    (all of them when ``None``; at most the dimension), divided by ``reference``'s variance along it (sample
    variances, each sample about its own mean), largest component first. 1 everywhere for a sample with the
    reference's covariance; ``c**2`` for ``c`` times a copy of the reference. ``axes``: ``principal_axes(reference,
    n_components)`` computed once, to compare several samples with one reference."""
    x, reference = np.asarray(x, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    if x.ndim != 2 or reference.ndim != 2 or x.shape[1] != reference.shape[1]:
        raise ValueError(f"x and reference must be (n, D) with the same D, got {x.shape} and {reference.shape}")
    if len(x) < 2 or len(reference) < 2:
        raise ValueError("variance_ratios needs at least two points in each sample")
    directions, variances = principal_axes(reference, n_components) if axes is None else axes
    projected = (x - x.mean(0)) @ directions
    return projected.var(0, ddof=1) / variances
