"""Data sets and functions on them: touching blobs, two moons, circles, iris, four quadrants with two
functions; KDE and DTM in torch.

Everything is generated (scikit-learn's generators) or ships with scikit-learn (``load_iris``):
no download. The density estimates run in torch on any ``device``, so the full-scale run computes
them for 10^5 points on a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from sklearn.datasets import load_iris, make_circles, make_moons

from ..core.arguments import Array, checked
from ..core.device import resolve_device
from ..core.params import Choice, Device, Float, Int, Positive
from ..core.resources import check_memory
from ..core.validation import check_choice, check_in_range, check_int, check_positive
from .validate import check_function, check_points

DATASETS = ("blobs", "moons", "circles", "iris")


@checked(X=Array("n d"), labels=Array("n", integer=True))
@dataclass(frozen=True)
class Dataset:
    """Points, planted labels, and a name."""

    name: str
    X: np.ndarray
    labels: np.ndarray


@checked(name=Choice(DATASETS), n=Int(10))
def make_dataset(name: str, n: int = 300, seed: int = 0) -> Dataset:
    """One of :data:`DATASETS` with ``n`` points (iris always has its 150 flowers).

    ``blobs``: three Gaussian blobs that touch (centres (0,0), (2.6,0), (1.3,2.2), std 0.55,
    0.55, 0.45); ``moons`` and ``circles``: scikit-learn's generators with noise; ``iris``: the
    four standardised measurements of Fisher's 150 flowers, three species.
    """
    check_choice("name", name, DATASETS)
    n = check_int("n", n, minimum=10)
    check_memory({f"make_dataset n = {n:,} points (about 64 bytes each)": 64 * n})
    rng = np.random.default_rng(seed)
    if name == "blobs":
        centres = np.array([(0.0, 0.0), (2.6, 0.0), (1.3, 2.2)])
        std = np.array([0.55, 0.55, 0.45])
        labels = np.repeat(np.arange(3), -(-n // 3))[:n]
        X = centres[labels] + rng.normal(size=(n, 2)) * std[labels, None]
    elif name == "moons":
        X, labels = make_moons(n, noise=0.08, random_state=seed)
        X = X * 1.5
    elif name == "circles":
        X, labels = make_circles(n, noise=0.05, factor=0.45, random_state=seed)
        X = X * 2.0
    else:
        iris = load_iris()
        X = (iris.data - iris.data.mean(0)) / iris.data.std(0)
        labels = iris.target
    return Dataset(name=name, X=np.asarray(X, dtype=np.float64), labels=np.asarray(labels, dtype=np.int64))


#: centres of the four groups of :func:`make_quadrants`, in the order of their labels (2 · [x > 0] + [y > 0])
QUADRANT_CENTRES = np.array([(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)])


def two_bumps(t: np.ndarray, width: float = 0.5) -> np.ndarray:
    """``exp(-(t - 1)² / 2w²) + exp(-(t + 1)² / 2w²)``: high near ``t = ±1``, a valley at ``t = 0``."""
    t = np.asarray(t, dtype=np.float64)
    return np.exp(-((t - 1.0) ** 2) / (2 * width**2)) + np.exp(-((t + 1.0) ** 2) / (2 * width**2))


#: point layouts of :func:`make_quadrants`: four Gaussian groups around the quadrant centres, one uniform
#: square, one Gaussian blob centred at the origin (benchmarks/tomato_mp_quadrants_rule.md)
QUADRANT_LAYOUTS = ("groups", "square", "blob")
#: half side of the ``square`` layout: the square [-2, 2]², the bumps' peaks (±1) in the middle of each half
SQUARE_HALF_SIDE = 2.0


@checked(n=Int(8), spread=Positive(), width=Positive(), noise=Float(0.0, 10.0), layout=Choice(QUADRANT_LAYOUTS))
def make_quadrants(n: int = 200, seed: int = 0, *, spread: float = 0.6, width: float = 0.5,
                   noise: float = 0.03, layout: str = "groups") -> tuple[Dataset, np.ndarray]:
    """Four clusters that only two functions together separate.

    The points (``layout``, :data:`QUADRANT_LAYOUTS`): ``"groups"``, four Gaussian groups of sd
    ``spread`` centred at ``(±1, ±1)`` (:data:`QUADRANT_CENTRES`; at 0.6 they overlap into one cloud,
    but its density still dips to about half between the groups, so the geometry can split them);
    ``"square"``, uniform on ``[-2, 2]²`` (a flat density: no gap or dip anywhere between the
    quadrants); ``"blob"``, one Gaussian of sd ``spread`` centred at the origin (one density peak,
    where the quadrants meet). Only ``"groups"`` reads ``spread`` as the groups' sd, ``"blob"`` as the
    blob's, ``"square"`` not at all. The planted label of a point is its quadrant, the sign pattern
    ``2 · [x > 0] + [y > 0]``. The two functions are
    measurements on the points, computed from the positions and fresh noise, never from the labels:
    ``f1 = two_bumps(x) + noise · N(0, 1)`` is high on the left and right groups and low on the
    vertical line between them, ``f2`` the same in ``y``. Each splits only one pair of sides: the
    superlevel sets of ``f1`` alone are two vertical bands (two clusters), those of ``f2`` two
    horizontal bands; only where both are high do four pieces appear.

    Returns the data set (labels = quadrants) and the ``(2, n)`` array ``[f1, f2]``.
    """
    n = check_int("n", n, minimum=8)
    spread = check_positive("spread", spread)
    width = check_positive("width", width)
    check_in_range("noise", noise, 0.0, 10.0)
    check_choice("layout", layout, QUADRANT_LAYOUTS)
    rng = np.random.default_rng(seed)
    if layout == "groups":
        group = np.repeat(np.arange(4), -(-n // 4))[:n]
        X = QUADRANT_CENTRES[group] + spread * rng.normal(size=(n, 2))
    elif layout == "square":
        X = rng.uniform(-SQUARE_HALF_SIDE, SQUARE_HALF_SIDE, size=(n, 2))
    else:
        X = spread * rng.normal(size=(n, 2))
    labels = 2 * (X[:, 0] > 0) + (X[:, 1] > 0)
    F = np.stack([two_bumps(X[:, 0], width), two_bumps(X[:, 1], width)]) + noise * rng.normal(size=(2, n))
    return Dataset(name="quadrants", X=X, labels=labels.astype(np.int64)), F


def _torch(X: np.ndarray, device: str | torch.device) -> torch.Tensor:
    return torch.as_tensor(X, dtype=torch.float64, device=resolve_device(device))


@checked(X=Array("n d"), bandwidth=Positive(), device=Device(), batch=Int(1))
def log_kde(X: np.ndarray, bandwidth: float = 0.4, *, device: str = "cpu", batch: int = 4096) -> np.ndarray:
    """Gaussian kernel density estimate at the points, in logs (up to an additive constant).

    ``log f(x_i) = logsumexp_j(-|x_i - x_j|^2 / (2 h^2)) - log n``, computed in blocks of rows.
    """
    X = check_points("X", X)
    h = check_positive("bandwidth", bandwidth)
    P = _torch(X, device)
    out = []
    for start in range(0, len(P), batch):
        d2 = torch.cdist(P[start : start + batch], P).square()
        out.append(torch.logsumexp(-d2 / (2 * h * h), dim=1) - np.log(len(P)))
    return torch.cat(out).cpu().numpy()


@checked(X=Array("n d"), mass=Float(0.0, 1.0, low_inclusive=False), device=Device(), batch=Int(1))
def dtm(X: np.ndarray, mass: float = 0.05, *, device: str = "cpu", batch: int = 4096) -> np.ndarray:
    """Distance to measure (Chazal, Cohen-Steiner, Mérigot 2011) at the points.

    ``DTM(x) = sqrt(mean of |x - x_(j)|^2 over the k = ceil(mass * n) nearest points x_(j)``
    (the point itself included). Large where the points are sparse; it moves little when a few
    points move, which is what makes it robust.
    """
    X = check_points("X", X)
    check_in_range("mass", mass, 0.0, 1.0, low_inclusive=False)
    k = max(2, int(np.ceil(mass * len(X))))
    P = _torch(X, device)
    out = []
    for start in range(0, len(P), batch):
        d2 = torch.cdist(P[start : start + batch], P).square()
        out.append(torch.topk(d2, k, dim=1, largest=False).values.mean(1).sqrt())
    return torch.cat(out).cpu().numpy()


@checked(f=Array("n"), fraction=Float(0.0, 0.5))
def corrupt(
    f: np.ndarray, fraction: float, seed: int = 0, low: float = 0.3, high: float = 1.5
) -> tuple[np.ndarray, np.ndarray]:
    """Give a ``fraction`` of the points outlier values ``max f + U(low, high) * (max f - median f)``.

    Returns the corrupted values and the indices of the corrupted points. The outliers sit
    anywhere in space (chosen uniformly among the points): their values, not their positions,
    are wrong.
    """
    f = check_function("f", f)
    check_in_range("fraction", fraction, 0.0, 0.5)
    if not 0 <= low < high <= 1e6:
        raise ValueError(f"low and high must satisfy 0 <= low < high <= 1e6, got low={low!r}, high={high!r}")
    rng = np.random.default_rng(seed + 12345)
    m = round(fraction * len(f))
    idx = np.sort(rng.choice(len(f), size=m, replace=False))
    g = f.copy()
    spread = f.max() - np.median(f)
    g[idx] = f.max() + rng.uniform(low, high, size=m) * spread
    return g, idx


def toy_path_signal(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A bumpy function on the path graph ``0 - 1 - ... - n-1``: three bumps of different heights
    plus a little noise. Returns the abscissae, the values and the edges (for the idea figure)."""
    n = check_int("n", n, minimum=5)
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n)
    f = (np.exp(-((t - 0.2) / 0.08) ** 2) + 0.6 * np.exp(-((t - 0.55) / 0.1) ** 2)
         + 0.8 * np.exp(-((t - 0.85) / 0.06) ** 2) + 0.05 * rng.normal(size=n))
    edges = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    return t, f, edges
