"""Baselines: what CCA gets from pairings found without the QAP, and from no pairing at all.

Each returns a pairing of the rows of ``X`` with the rows of (the given, shuffled) ``Y``; the
experiment then fits CCA on the matched pairs (:func:`cca_on_pairing`) and scores it on the true
pairing, exactly as for UCCA.

* :func:`random_pairing`: a uniformly random permutation (what CCA finds with no information).
* :func:`gromov_wasserstein_pairing`: Gromov–Wasserstein matching of the two views' distance
  matrices (POT's ``ot.gromov.gromov_wasserstein``), the alignment used for unpaired
  multimodal data by SCOT (Demetci et al., 2022); the coupling is rounded to a permutation.
* :func:`wasserstein_procrustes_pairing`: Wasserstein–Procrustes (Grave et al., 2019), the
  unsupervised alignment of word embeddings: alternate an orthogonal map (Procrustes) and a linear
  assignment, on the same whitened views, from as many random rotation starts of the same kind as UCCA
  (its own draws) and with as many Procrustes rounds per start as UCCA's screening, but without the QAP
  (no FAQ, no alternation): it isolates what the QAP step adds to those starts.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist
from threadpoolctl import threadpool_limits

from ..core.arguments import Array, checked
from ..core.params import Bool, Int, Positive
from ..core.validation import check_int, check_matrix
from .cca import MAX_SIZE, CCAFit, cca, check_permutation, fit_whitening
from .method import rotation_start


@checked(X=Array("n p"), Y=Array("n q"), pairing=Array("_"), n_components=Int(1, MAX_SIZE), d=Int(1, MAX_SIZE))
def cca_on_pairing(X: np.ndarray, Y: np.ndarray, pairing: np.ndarray, n_components: int, d: int) -> CCAFit:
    """CCA (eq. ``ucca-cca``, views whitened to ``d`` directions) of ``X`` paired with ``Y[pairing]``."""
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    pairing = check_permutation(pairing, X.shape[0], "pairing")
    return cca(X, Y[pairing], n_components, d=d)


@checked(n=Int(1, 10**7))
def random_pairing(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random permutation of ``0 .. n−1``."""
    return rng.permutation(n)


def _standardised_distances(Z: np.ndarray) -> np.ndarray:
    Z = (Z - Z.mean(0)) / np.maximum(Z.std(0), 1e-12)
    D = cdist(Z, Z)
    return D / D.max()


@checked(X=Array("n p"), Y=Array("n q"), entropic=Bool(), epsilon=Positive())
def gromov_wasserstein_pairing(
    X: np.ndarray, Y: np.ndarray, *, entropic: bool = False, epsilon: float = 5e-3
) -> np.ndarray:
    """Gromov–Wasserstein matching (POT) of the two views' Euclidean distance matrices.

    Features are standardised, distances scaled to ``[0, 1]``; the square-loss GW problem with
    uniform weights is solved by POT's conditional gradient (or its entropic version, for large
    ``n``) and the coupling rounded to a permutation with ``linear_sum_assignment``.
    """
    import ot

    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    n = X.shape[0]
    C1, C2 = _standardised_distances(X), _standardised_distances(Y)
    p = np.full(n, 1.0 / n)
    with threadpool_limits(1, user_api="blas"):
        if entropic:
            T = ot.gromov.entropic_gromov_wasserstein(C1, C2, p, p, "square_loss", epsilon=epsilon)
        else:
            T = ot.gromov.gromov_wasserstein(C1, C2, p, p, "square_loss")
        _, pairing = linear_sum_assignment(T, maximize=True)
    return pairing


@checked(X=Array("n p"), Y=Array("m q"), d=Int(1, MAX_SIZE), n_restarts=Int(1, 10_000), n_iterations=Int(1, 10_000))
def wasserstein_procrustes_pairing(
    X: np.ndarray, Y: np.ndarray, *, d: int, n_restarts: int = 8, n_iterations: int = 5, rng: np.random.Generator
) -> np.ndarray:
    """Wasserstein–Procrustes on views whitened to ``d`` directions, best of ``n_restarts`` rotation starts.

    Alternates ``P = argmax tr(Pᵀ X̃ Q Ỹᵀ)`` (linear assignment) and ``Q = argmax tr(Qᵀ X̃ᵀ P Ỹ)``
    over orthogonal ``Q`` (Procrustes: ``Q = U Vᵀ`` from the SVD). Keeps the restart with the
    largest final ``tr(Qᵀ X̃ᵀ P Ỹ)``.
    """
    X, Y = check_matrix("X", X), check_matrix("Y", Y)
    Xw, Yw = fit_whitening(X, d, name="X")(X), fit_whitening(Y, d, name="Y")(Y)
    best, best_score = None, -np.inf
    with threadpool_limits(1, user_api="blas"):
        for _ in range(check_int("n_restarts", n_restarts, 1)):
            pairing = rotation_start(Xw, Yw, rng)
            for _ in range(check_int("n_iterations", n_iterations, 1)):
                u, _, vt = np.linalg.svd(Xw.T @ Yw[pairing])
                Q = u @ vt  # Procrustes: X̃ ≈ Ỹ[P] Qᵀ
                _, new = linear_sum_assignment(Xw @ Q @ Yw.T, maximize=True)
                if np.array_equal(new, pairing):
                    break
                pairing = new
            score = float(np.trace(Q.T @ Xw.T @ Yw[pairing]))
            if score > best_score:
                best, best_score = pairing, score
    return best
