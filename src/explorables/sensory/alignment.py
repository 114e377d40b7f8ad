"""Representational alignment between two feature sets of the same items.

Mutual k-nearest-neighbour alignment (eq. ``sensory-mknn``), the metric of the "platonic
representation" line of work that the paper uses, and linear CKA (eq. ``sensory-cka``) for
comparison. Both take two matrices whose row ``i`` describes the same item ``i`` in two spaces of
any widths.
"""

from __future__ import annotations

import numpy as np

from ..core.arguments import Array, checked
from ..core.params import Int
from ..core.validation import check_int

#: two feature sets of the same items: each 2-D, >= 3 rows; their row counts are compared by ``_paired``
FEATURES_A = Array("n_a d_a", min_size=(("n_a", 3),))
FEATURES_B = Array("n_b d_b", min_size=(("n_b", 3),))


def _paired(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    for name, x in ((name_a, a), (name_b, b)):
        if x.ndim != 2 or x.shape[0] < 3 or x.shape[1] < 1:
            raise ValueError(f"{name} must be a 2-D array with >= 3 rows (items) and >= 1 column, got shape {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must hold finite numbers only")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{name_a} and {name_b} must describe the same items (same number of rows), "
                         f"got {a.shape[0]} and {b.shape[0]}")  # fmt: skip
    return a, b


@checked(features=Array("n d"))
def normalise(features: np.ndarray) -> np.ndarray:
    """Centre the columns, then scale every row to unit length (a zero row stays zero)."""
    x = np.asarray(features, dtype=np.float64)
    x = x - x.mean(axis=0, keepdims=True)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def _k_below_items(features: np.ndarray, k: int) -> None:
    """:func:`knn_indices`' relation: ``1 <= k <= n - 2`` (another item besides the neighbours and the item)."""
    check_int("k", k, 1, np.shape(features)[0] - 2)


@checked(skip_nested=True, features=Array("n d", min_size=(("n", 3),)), k=Int(1), relation=_k_below_items)
def knn_indices(features: np.ndarray, k: int) -> np.ndarray:
    """``(n, k)``: each item's ``k`` nearest other items by cosine similarity after centring (``1 <= k <= n - 2``).

    Ties are broken by the lower index (a stable sort), so equal inputs give equal neighbourhoods.
    """
    x = normalise(features)
    sim = x @ x.T
    np.fill_diagonal(sim, -np.inf)  # an item is not its own neighbour
    return np.argsort(-sim, axis=1, kind="stable")[:, :k]


@checked(skip_nested=True, features_a=FEATURES_A, features_b=FEATURES_B, k=Int(1))
def mutual_knn_alignment(features_a: np.ndarray, features_b: np.ndarray, k: int = 5) -> float:
    """Mutual k-NN alignment, eq. (sensory-mknn): mean over items of |N_A(i) ∩ N_B(i)| / k.

    ``N_A(i)`` are item ``i``'s ``k`` nearest other items in space A (cosine similarity of
    centred features). 1 means identical neighbourhoods; two unrelated spaces score about
    :func:`chance_level` ``= k / (n - 1)``. Needs ``1 <= k <= n - 2``.
    """
    a, b = _paired("features_a", features_a, "features_b", features_b)
    n = a.shape[0]
    k = check_int("k", k, 1, n - 2)
    na, nb = knn_indices(a, k), knn_indices(b, k)
    hits = np.zeros((n, n), dtype=bool)
    hits[np.arange(n)[:, None], na] = True
    overlap = hits[np.arange(n)[:, None], nb].sum(axis=1)  # |N_A(i) ∩ N_B(i)|
    return float(np.mean(overlap / k))


@checked(n=Int(3), k=Int(1))
def chance_level(n: int, k: int) -> float:
    """Expected mutual k-NN alignment of independent neighbourhoods: ``k / (n - 1)``.

    Item ``i``'s ``k`` neighbours in B are a uniform draw from the ``n - 1`` other items, so each
    of its ``k`` neighbours in A is among them with probability ``k / (n - 1)``.
    """
    n = check_int("n", n, 3)
    k = check_int("k", k, 1, n - 2)
    return k / (n - 1)


@checked(features_a=FEATURES_A, features_b=FEATURES_B)
def linear_cka(features_a: np.ndarray, features_b: np.ndarray) -> float:
    """Linear centred kernel alignment, eq. (sensory-cka).

    ``||B_c^T A_c||_F^2 / (||A_c^T A_c||_F ||B_c^T B_c||_F)`` with column-centred ``A_c, B_c``:
    1 for spaces equal up to rotation and scale. Unrelated spaces do not score near 0 unless ``n`` is large
    against both widths: independent Gaussian features of 32 rows (the book preset) and widths 576 and 256 score
    about 0.9, so a CKA value means something only beside the level of unrelated features of the same sizes.
    """
    a, b = _paired("features_a", features_a, "features_b", features_b)
    a = a - a.mean(axis=0, keepdims=True)
    b = b - b.mean(axis=0, keepdims=True)
    cross = np.linalg.norm(b.T @ a) ** 2
    denom = np.linalg.norm(a.T @ a) * np.linalg.norm(b.T @ b)
    if denom == 0:
        raise ValueError("features_a and features_b must not be constant (CKA is undefined for a constant space)")
    return float(cross / denom)
