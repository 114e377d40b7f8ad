"""Two-view data with a known true pairing: synthetic views of a shared latent, and real tables split in two.

Every generator returns a :class:`TwoViews`: paired views ``X`` (n × p), ``Y`` (n × q) with the
true pairing being the identity (row ``i`` of ``X`` goes with row ``i`` of ``Y``) and, where
there is one, the cluster label of each sample (used only to *draw* the matching, never by a
method). :func:`unpaired` hides the pairing: it shuffles ``Y``'s rows and returns the shuffle
separately, for the evaluation alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.arguments import Array, RowsOf, checked
from ..core.params import Choice, Float, Int, Probability
from ..core.validation import check_choice, check_in_range, check_int

LATENTS: tuple[str, ...] = ("clustered", "gaussian")
#: the most numbers (samples x features) a synthetic draw may hold
MAX_NUMBERS = 10**8


@checked(X=Array("n p"), Y=Array("m q"), labels=Array("n", integer=True))
@dataclass(frozen=True)
class TwoViews:
    """Paired views (row ``i`` of ``X`` with row ``i`` of ``Y``) and optional cluster labels."""

    X: np.ndarray
    Y: np.ndarray
    labels: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.X.shape[0] != self.Y.shape[0]:
            raise ValueError(f"X and Y must have the same number of rows, got {self.X.shape[0]} and {self.Y.shape[0]}")

    @checked(rows=RowsOf(table="X"))
    def subset(self, rows: np.ndarray) -> TwoViews:
        """The views (and labels) of the given rows, in their order."""
        return TwoViews(self.X[rows], self.Y[rows], None if self.labels is None else self.labels[rows])


def shared_latent(
    n: int,
    d_latent: int,
    *,
    latent: str = "clustered",
    non_gaussianity: float = 1.0,
    n_clusters: int = 6,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` draws of a ``d_latent``-dim shared latent ``z`` with unit variance per coordinate.

    ``latent="gaussian"``: ``z ~ N(0, I)``. ``latent="clustered"``: a mixture of ``n_clusters``
    Gaussian clusters with random, unequal weights, ``z = λ c_label + sqrt(1 − λ²) g`` with
    ``λ = non_gaussianity`` (0: Gaussian again; near 1: tight clusters). Returns ``(z, labels)``.
    """
    n = check_int("n", n, 2)
    d_latent = check_int("d_latent", d_latent, 1)
    latent = check_choice("latent", latent, LATENTS)
    lam = check_in_range("non_gaussianity", non_gaussianity, 0.0, 1.0)
    n_clusters = check_int("n_clusters", n_clusters, 2)
    g = rng.standard_normal((n, d_latent))
    if latent == "gaussian":
        return g, np.zeros(n, dtype=int)
    weights = rng.dirichlet(np.full(n_clusters, 2.0))
    labels = rng.choice(n_clusters, size=n, p=weights)
    centers = rng.standard_normal((n_clusters, d_latent))
    c = centers[labels]
    c = (c - c.mean(0)) / np.maximum(c.std(0), 1e-12)  # unit variance per coordinate
    return lam * c + np.sqrt(1.0 - lam**2) * g, labels


@checked(
    n=Int(2, MAX_NUMBERS),
    d_latent=Int(1, 10_000),
    d_x=Int(1, 10_000),
    d_y=Int(1, 10_000),
    latent=Choice(LATENTS),
    non_gaussianity=Probability(),
    n_clusters=Int(2, 10_000),
    noise=Float(0.0, 100.0),
)
def synthetic_views(
    n: int,
    *,
    d_latent: int = 3,
    d_x: int = 10,
    d_y: int = 12,
    latent: str = "clustered",
    non_gaussianity: float = 0.95,
    n_clusters: int = 6,
    noise: float = 0.3,
    rng: np.random.Generator,
) -> TwoViews:
    """Two views of one shared latent: ``X = z A + noise·E``, ``Y = z B + noise·F``.

    ``A`` (d_latent × d_x) and ``B`` (d_latent × d_y) are random Gaussian mixing matrices, ``E``,
    ``F`` independent standard Gaussian noise. The true canonical correlations are high when
    ``noise`` is small.
    """
    if n * (d_latent + d_x + d_y) > MAX_NUMBERS:
        raise ValueError(f"n x (d_latent + d_x + d_y) must be at most {MAX_NUMBERS:.0e} numbers, got n={n}")
    z, labels = shared_latent(
        n, d_latent, latent=latent, non_gaussianity=non_gaussianity, n_clusters=n_clusters, rng=rng
    )
    A = rng.standard_normal((d_latent, d_x)) / np.sqrt(d_latent)
    B = rng.standard_normal((d_latent, d_y)) / np.sqrt(d_latent)
    X = z @ A + noise * rng.standard_normal((z.shape[0], d_x))
    Y = z @ B + noise * rng.standard_normal((z.shape[0], d_y))
    return TwoViews(X, Y, labels if latent == "clustered" else None)


@checked()
def digit_halves() -> TwoViews:
    """scikit-learn's bundled 8×8 digits (1797 images, no download), split into left and right halves.

    View ``X`` is the left four pixel columns (32 features), ``Y`` the right four; the true pairing is
    "the same image". Labels are the digit classes (for drawing only).
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.images.astype(np.float64)  # (1797, 8, 8)
    X = images[:, :, :4].reshape(len(images), -1)
    Y = images[:, :, 4:].reshape(len(images), -1)
    return TwoViews(X, Y, digits.target.astype(int))


@checked()
def breast_cancer_views() -> TwoViews:
    """scikit-learn's bundled Wisconsin breast-cancer table (569 tumours, no download), two feature groups.

    View ``X`` holds the log of the ten "mean" measurements of each tumour's cell nuclei (radius,
    texture, ...), view ``Y`` the log of the ten "worst" (largest) ones; the true pairing is "the
    same tumour". Labels are benign/malignant (for drawing only).
    """
    from sklearn.datasets import load_breast_cancer

    table = load_breast_cancer()
    features = np.log(table.data + 1e-3)  # positive, right-skewed measurements; some are exactly 0
    return TwoViews(features[:, :10], features[:, 20:30], table.target.astype(int))


@checked()
def wine_views() -> TwoViews:
    """scikit-learn's bundled wine table (178 wines of 3 cultivars, no download), its feature halves as two views.

    Every measurement is standardised over the table (mean 0, sd 1: they come on very different scales, hue
    ~1, proline ~10³; a fixed per-feature scale, no pairing information). View ``X`` holds the first six
    (alcohol, malic acid, ash, alcalinity of ash, magnesium, total phenols), view ``Y`` the other seven
    (flavanoids, non-flavanoid phenols, proanthocyanins, colour intensity, hue, OD280/OD315, proline); the
    true pairing is "the same wine". The shared structure is clustered (three cultivars) and non-Gaussian.
    Labels are the cultivars (for drawing and scoring only).
    """
    from sklearn.datasets import load_wine

    table = load_wine()
    features = (table.data - table.data.mean(0)) / table.data.std(0)
    return TwoViews(features[:, :6], features[:, 6:], table.target.astype(int))


@checked()
def unpaired(views: TwoViews, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hide the pairing: ``(X, Y[shuffle], shuffle)``.

    A method receives only the first two; the evaluation uses ``shuffle`` to undo it (row ``j`` of
    the shuffled ``Y`` is row ``shuffle[j]`` of the original, so ``X[i]`` truly pairs with the
    shuffled row ``argsort(shuffle)[i]``).
    """
    shuffle = rng.permutation(views.Y.shape[0])
    return views.X, views.Y[shuffle], shuffle
