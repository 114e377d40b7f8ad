"""The chapter's data: a 2-D Gaussian mixture, scikit-learn's 8x8 digits (PCA-reduced), CIFAR-10 at paper scale.

Every dataset comes as a :class:`Dataset`: training inputs (what DCDM, the ablations and k-means
see), held-out inputs (for the sample-quality floor and interventions), and the labels of both,
which only the evaluation reads. ``decode`` maps model space back to pixels for pictures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA

from ..core.datasets import load_cifar
from ..core.validation import check_int, check_positive

DATASETS = ("mixture", "digits", "cifar10")


@dataclass
class Dataset:
    """Inputs in model space (``float32``, shape ``(n, D)``) and the labels the training never sees."""

    name: str
    x_train: torch.Tensor
    y_train: np.ndarray
    x_test: torch.Tensor
    y_test: np.ndarray
    n_classes: int
    image_shape: tuple[int, ...] | None = None  # pixels of one decoded input (None: 2-D points)
    decode: Callable[[np.ndarray], np.ndarray] | None = None  # model space -> pixels in [0, 1]

    @property
    def d_data(self) -> int:
        return int(self.x_train.shape[1])


def mixture_modes(n_modes: int, radius: float = 2.0) -> np.ndarray:
    """The means of the mixture: ``n_modes`` points evenly spaced on a circle of ``radius``."""
    angles = 2 * math.pi * np.arange(n_modes) / n_modes
    return radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)


def sample_mixture(
    n: int, n_modes: int, std: float, rng: np.random.Generator, radius: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points of an equal-weight mixture of isotropic Gaussians on a circle, and their modes."""
    n = check_int("n", n, minimum=1)
    n_modes = check_int("n_modes", n_modes, minimum=1)
    std = check_positive("std", std)
    labels = rng.integers(n_modes, size=n)
    return mixture_modes(n_modes, radius)[labels] + std * rng.standard_normal((n, 2)), labels


def mixture_classifier(points: np.ndarray, n_modes: int, radius: float = 2.0) -> np.ndarray:
    """The Bayes classifier of the mixture (equal weights and variances: the nearest mode)."""
    d = ((points[:, None, :] - mixture_modes(n_modes, radius)[None]) ** 2).sum(-1)
    return d.argmin(1)


def mixture_data(n_train: int, n_test: int, n_modes: int, std: float, seed: int) -> Dataset:
    """The 2-D mixture (its own seed, so every model of a run sees the same points)."""
    rng = np.random.default_rng(seed)
    x, y = sample_mixture(n_train + n_test, n_modes, std, rng)
    x = torch.tensor(x, dtype=torch.float32)
    return Dataset("mixture", x[:n_train], y[:n_train], x[n_train:], y[n_train:], n_modes)


def digits_data(d_pca: int, n_test: int, seed: int) -> Dataset:
    """scikit-learn's 8x8 digits in ``[-1, 1]``, projected on their first ``d_pca`` principal components
    (fitted on the training split) and scaled to unit mean square; ``decode`` undoes both."""
    x, y = load_digits(return_X_y=True)
    x = x / 8.0 - 1.0
    order = np.random.default_rng(seed).permutation(len(x))
    test, train = order[:n_test], order[n_test:]
    pca = PCA(d_pca, random_state=0).fit(x[train])
    z_train = pca.transform(x[train])
    scale = float(np.sqrt((z_train**2).mean()))

    def encode(a: np.ndarray) -> torch.Tensor:
        return torch.tensor(pca.transform(a) / scale, dtype=torch.float32)

    def decode(z: np.ndarray) -> np.ndarray:
        pixels = pca.inverse_transform(np.asarray(z, dtype=np.float64) * scale)
        return np.clip((pixels + 1.0) / 2.0, 0.0, 1.0).reshape(-1, 8, 8)

    return Dataset("digits", encode(x[train]), y[train], encode(x[test]), y[test], 10, (8, 8), decode)


def cifar_data(data_root: str, n_train: int, n_test: int, seed: int) -> Dataset:
    """CIFAR-10 from ``data_root`` (torchvision's ``cifar-10-batches-py/``; read by
    :func:`explorables.core.datasets.load_cifar`, never downloaded), as flat vectors in ``[-1, 1]``."""
    train, test = load_cifar(data_root, "cifar10", train=True), load_cifar(data_root, "cifar10", train=False)
    rng = np.random.default_rng(seed)
    pick_tr = rng.permutation(len(train.labels))[: n_train or len(train.labels)]
    pick_te = rng.permutation(len(test.labels))[:n_test]

    def flat(images: np.ndarray) -> torch.Tensor:
        return torch.tensor(images.reshape(len(images), -1), dtype=torch.float32) / 127.5 - 1.0

    def decode(z: np.ndarray) -> np.ndarray:
        return np.clip((np.asarray(z).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1) + 1) / 2, 0, 1)

    return Dataset(
        "cifar10",
        flat(train.images[pick_tr]),
        train.labels[pick_tr],
        flat(test.images[pick_te]),
        test.labels[pick_te],
        10,
        (32, 32, 3),
        decode,
    )
