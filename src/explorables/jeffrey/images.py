"""Images: the datasets, the embedding network (our stand-in for Inception), density ratios, a small U-Net.

* :func:`load_images`: scikit-learn's bundled 8x8 digits (offline), or CIFAR-10 / a labelled
  image folder from ``--data-root`` (read with :mod:`explorables.core.datasets`; nothing is
  downloaded). Pixels are scaled to ``[-1, 1]``.
* :class:`Embedder`: an MLP classifier trained on the dataset's labels; its penultimate layer is
  the embedding ``e(x)`` in which we measure a Fréchet distance (*a stand-in for FID*, which uses
  Inception-v3 features) and whose distribution Jeffrey guidance targets.
* :class:`PixelPCA`: the principal components of the training pixels (scikit-learn; no labels): the
  second, independent embedding of the Fréchet control, trained by another objective (reconstruction).
* :func:`ink` / :func:`image_cells`: the attributes of the fairness experiment, "thick stroke"
  (mean ink above a threshold) and the predicted class.
* :func:`fit_density_ratio`: ``w(e) = q(e) / p(e)`` by logistic regression (scikit-learn) between
  real and generated embeddings, eq. (density-ratio).
* :class:`UNet`: a small U-Net denoiser for 32x32 images at paper scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from torch import nn
from torch.nn import functional as F

from ..core.datasets import ImageFolder, load_cifar
from ..core.diffusion import time_features
from ..core.validation import check_choice, check_int, check_positive

DATASETS = ("digits", "cifar10", "image_folder")


@dataclass
class ImageData:
    """Images in ``[-1, 1]`` with shape ``(N, C, H, W)`` and integer labels, split into train and test."""

    train: torch.Tensor
    train_labels: torch.Tensor
    test: torch.Tensor
    test_labels: torch.Tensor
    n_classes: int


def load_images(
    dataset: str, data_root: str = "", *, seed: int = 0, n_test: int = 500, image_size: int = 32, limit: int = 0
) -> ImageData:
    """Load ``dataset`` and split it into train and a held-out test set of ``n_test`` images.

    ``digits``: scikit-learn's 1,797 8x8 digits (shipped with the package). ``cifar10``: torchvision's
    ``cifar-10-batches-py/`` under ``data_root`` (train batches, then a random ``n_test`` of the test
    batch). ``image_folder``: ``data_root/<class>/<image>`` resized to ``image_size`` (e.g. FFHQ or
    CelebA-HQ sorted into attribute folders). ``limit > 0`` keeps at most that many training images.
    """
    check_choice("dataset", dataset, DATASETS)
    n_test = check_int("n_test", n_test, minimum=2)
    gen = torch.Generator().manual_seed(seed)
    if dataset == "digits":
        from sklearn.datasets import load_digits

        x_np, y_np = load_digits(return_X_y=True)
        x = torch.tensor(x_np / 8.0 - 1.0, dtype=torch.float32).view(-1, 1, 8, 8)
        y = torch.tensor(y_np, dtype=torch.long)
        perm = torch.randperm(len(x), generator=gen)
        if n_test >= len(x):
            raise ValueError(f"n_test must be < {len(x)} for digits, got {n_test}")
        test, train = perm[:n_test], perm[n_test:]
        data = ImageData(x[train], y[train], x[test], y[test], 10)
    else:
        if not data_root:
            raise ValueError(f"dataset {dataset!r} is read from --data-root, which is empty")
        if dataset == "cifar10":
            tr, te = load_cifar(data_root, "cifar10", train=True), load_cifar(data_root, "cifar10", train=False)
            x_tr, y_tr = tr.tensors()
            x_te, y_te = te.tensors()
            n_classes = len(tr.classes)
        else:
            folder = ImageFolder(Path(data_root), size=(image_size, image_size))
            if len(folder.classes) < 2:
                raise ValueError(
                    f"image_folder needs at least 2 class folders under {data_root} (the embedding is a classifier)"
                )
            x_all = torch.stack([folder[i][0] for i in range(len(folder))])
            y_all = torch.tensor([label for _, label in folder.samples], dtype=torch.long)
            perm = torch.randperm(len(x_all), generator=gen)
            if n_test >= len(x_all):
                raise ValueError(f"n_test must be < {len(x_all)} (images under {data_root}), got {n_test}")
            x_te, y_te, x_tr, y_tr = (
                x_all[perm[:n_test]],
                y_all[perm[:n_test]],
                x_all[perm[n_test:]],
                y_all[perm[n_test:]],
            )
            n_classes = len(folder.classes)
        pick = torch.randperm(len(x_te), generator=gen)[:n_test]
        data = ImageData(x_tr * 2 - 1, y_tr, x_te[pick] * 2 - 1, y_te[pick], n_classes)
    if limit:
        data.train, data.train_labels = data.train[:limit], data.train_labels[:limit]
    return data


class Embedder(nn.Module):
    """An MLP classifier on flattened images; :meth:`embed` is its penultimate layer ``e(x)``."""

    def __init__(self, d_in: int, n_classes: int, d_hidden: int = 128, d_embed: int = 32):
        super().__init__()
        self.body = nn.Sequential(
            nn.Flatten(), nn.Linear(d_in, d_hidden), nn.SiLU(), nn.Linear(d_hidden, d_embed), nn.SiLU()
        )
        self.head = nn.Linear(d_embed, n_classes)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def train_embedder(
    images: torch.Tensor,
    labels: torch.Tensor,
    n_classes: int,
    *,
    d_hidden: int = 128,
    d_embed: int = 32,
    n_steps: int = 300,
    seed: int = 0,
    noise_std: float = 0.1,
) -> Embedder:
    """Full-batch Adam on the labelled training images (with a little input noise), then frozen."""
    n_steps = check_int("n_steps", n_steps, minimum=1)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = Embedder(images[0].numel(), n_classes, d_hidden, d_embed).to(images.device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    batch = min(len(images), 2048)
    for _ in range(n_steps):
        idx = torch.randint(len(images), (batch,), generator=gen).to(images.device)
        x = images[idx] + noise_std * torch.randn(images[idx].shape, generator=gen).to(images.device)
        loss = F.cross_entropy(model(x), labels[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


@torch.no_grad()
def embed(model: Embedder, images: torch.Tensor, batch_size: int = 4096) -> np.ndarray:
    """Embeddings ``e(x)`` of ``images`` as a float64 numpy array."""
    return (
        torch.cat([model.embed(images[i : i + batch_size]) for i in range(0, len(images), batch_size)])
        .double()
        .cpu()
        .numpy()
    )


@dataclass
class PixelPCA:
    """``e(x) = V^T (x - mean)``: the top principal components of the training pixels, fitted without labels."""

    mean: np.ndarray
    components: np.ndarray
    explained: float

    @classmethod
    def fit(cls, images: torch.Tensor, n_components: int, *, seed: int = 0) -> PixelPCA:
        """scikit-learn's PCA on the flattened ``images`` (``n_components`` at most the pixel count)."""
        from sklearn.decomposition import PCA

        x = images.flatten(1).double().cpu().numpy()
        n_components = check_int("n_components", n_components, minimum=1)
        k = min(n_components, x.shape[1], len(x))
        pca = PCA(k, svd_solver="randomized" if x.shape[1] > 500 else "full", random_state=seed).fit(x)
        return cls(pca.mean_, pca.components_, float(pca.explained_variance_ratio_.sum()))

    def state(self) -> dict:
        return {"mean": self.mean, "components": self.components, "explained": self.explained}

    @classmethod
    def from_state(cls, state: dict) -> PixelPCA:
        return cls(np.asarray(state["mean"]), np.asarray(state["components"]), float(state["explained"]))

    def __call__(self, images: torch.Tensor) -> np.ndarray:
        """The embeddings of ``images`` as a float64 array ``(n, n_components)``."""
        return (images.flatten(1).double().cpu().numpy() - self.mean) @ self.components.T


def ink(images: torch.Tensor) -> torch.Tensor:
    """Mean intensity of each image in ``[0, 1]`` (ink for digits: thick strokes have more)."""
    return ((images.flatten(1) + 1) / 2).mean(1)


@torch.no_grad()
def image_cells(model: Embedder, images: torch.Tensor, ink_threshold: float) -> torch.Tensor:
    """The fairness statistic ``s(x) = 2 * class(x) + [ink(x) > threshold]`` (``2 * n_classes`` cells)."""
    cls = torch.cat([model(images[i : i + 4096]).argmax(1) for i in range(0, len(images), 4096)])
    return 2 * cls + (ink(images) > ink_threshold).long()


@dataclass
class DensityRatio:
    """``log w(e) = log q(e) / p(e)`` from a logistic regression on ``[e, e^2]`` (standardised)."""

    model: LogisticRegression
    mean: np.ndarray
    std: np.ndarray
    log_prior: float

    def log_w(self, emb: np.ndarray) -> np.ndarray:
        """``logit D(e) + log(n_generated / n_real)``, eq. (density-ratio)."""
        return self.model.decision_function((_quadratic(emb) - self.mean) / self.std) + self.log_prior


def _quadratic(emb: np.ndarray) -> np.ndarray:
    return np.concatenate([emb, emb**2], axis=1)


def fit_density_ratio(real: np.ndarray, generated: np.ndarray, *, c: float = 0.1, seed: int = 0) -> DensityRatio:
    """Classify real (target ``q``) against generated (model ``p``) embeddings: ``D/(1-D) = (q/p) (n_q/n_p)``.

    Quadratic features make a Gaussian-vs-Gaussian ratio exactly representable (what a Fréchet
    distance sees). ``c`` is scikit-learn's inverse L2 strength.
    """
    check_positive("c", c)
    if real.ndim != 2 or generated.ndim != 2 or real.shape[1] != generated.shape[1]:
        raise ValueError(f"real and generated must be (n, d) with the same d, got {real.shape}, {generated.shape}")
    feats = _quadratic(np.concatenate([real, generated]))
    mean, std = feats.mean(0), feats.std(0) + 1e-8
    target = np.r_[np.ones(len(real)), np.zeros(len(generated))]
    model = LogisticRegression(C=c, max_iter=2000, random_state=seed).fit((feats - mean) / std, target)
    return DensityRatio(model, mean, std, float(np.log(len(generated) / len(real))))


def normalised_weights(log_w: np.ndarray, clip: float = 20.0) -> np.ndarray:
    """``w / mean(w)`` with ``w`` capped at ``clip`` times its median (heavy tails would swamp the h_t fit)."""
    check_positive("clip", clip)
    w = np.exp(log_w - np.max(log_w))
    w = np.minimum(w, clip * np.median(w))
    return w / w.mean()


class _ResBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, d_time: int):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(8, c_in), nn.Conv2d(c_in, c_out, 3, padding=1)
        self.time = nn.Linear(d_time, c_out)
        self.norm2, self.conv2 = nn.GroupNorm(8, c_out), nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x))) + self.time(temb)[:, :, None, None]
        return self.skip(x) + self.conv2(F.silu(self.norm2(h)))


class UNet(nn.Module):
    """A small U-Net noise predictor ``eps_theta(x_t, t)`` for ``C x H x W`` images (H, W divisible by 4)."""

    def __init__(self, channels: int, n_steps: int, width: int = 64, d_time: int = 64):
        super().__init__()
        self.n_steps, self.d_time = n_steps, d_time
        self.time = nn.Sequential(nn.Linear(d_time, d_time), nn.SiLU(), nn.Linear(d_time, d_time))
        w1, w2 = width, 2 * width
        self.inp = nn.Conv2d(channels, w1, 3, padding=1)
        self.down1, self.down2 = _ResBlock(w1, w1, d_time), _ResBlock(w1, w2, d_time)
        self.mid = _ResBlock(w2, w2, d_time)
        self.up2, self.up1 = _ResBlock(2 * w2, w1, d_time), _ResBlock(2 * w1, w1, d_time)
        self.out = nn.Sequential(nn.GroupNorm(8, w1), nn.SiLU(), nn.Conv2d(w1, channels, 3, padding=1))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        temb = self.time(time_features(t, self.n_steps, self.d_time))
        h0 = self.inp(x)
        h1 = self.down1(h0, temb)  # H
        h2 = self.down2(F.avg_pool2d(h1, 2), temb)  # H/2
        m = self.mid(F.avg_pool2d(h2, 2), temb)  # H/4
        u2 = self.up2(torch.cat([F.interpolate(m, scale_factor=2), h2], 1), temb)
        u1 = self.up1(torch.cat([F.interpolate(u2, scale_factor=2), h1], 1), temb)
        return self.out(u1).flatten(1)
