"""Data, the two feature networks (an MLP and a small CNN) and the downstream training on a subset.

The feature networks are trained on the whole training pool (as a pretrained model would be);
their penultimate activations are the latent features every pruning method scores. The model
trained on a kept subset is an MLP on the raw pixels, trained from scratch; many subsets are
trained side by side as one batched ensemble (each member sees only its own subset).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..core.arguments import Array, checked
from ..core.device import resolve_device
from ..core.params import Choice, Float, Int, Positive, Probability
from ..core.resources import check_memory
from ..core.threads import one_cpu_thread

ARCHITECTURES: tuple[str, ...] = ("mlp", "cnn")


@dataclass(frozen=True)
class Split:
    """Images ``(n, c, h, w)`` in ``[0, 1]`` and labels, for the training pool and the test set."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(max(self.y_train.max(), self.y_test.max())) + 1


@checked(test_fraction=Probability(open_low=True, open_high=True))
def digits_split(test_fraction: float, rng: np.random.Generator) -> Split:
    """scikit-learn's bundled 8×8 digits (1,797 images), split per class into a pool and a test set."""
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    images = (images / 16.0).reshape(-1, 1, 8, 8).astype(np.float32)
    test = np.zeros(len(labels), dtype=bool)
    for c in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == c))
        test[members[: round(test_fraction * len(members))]] = True
    return Split(images[~test], labels[~test], images[test], labels[test])


def cifar_split(root: str, name: str = "cifar10", n_train: int | None = None) -> Split:
    """CIFAR from ``root`` (torchvision's layout, read by ``core.datasets``; never downloaded)."""
    from ..core.datasets import load_cifar

    train, test = load_cifar(root, name, train=True), load_cifar(root, name, train=False)
    n = len(train.labels) if n_train is None else min(n_train, len(train.labels))
    return Split((train.images[:n] / 255.0).astype(np.float32), train.labels[:n],
                 (test.images / 255.0).astype(np.float32), test.labels)  # fmt: skip


class MLP(nn.Module):
    """Two hidden layers; ``features`` is the second hidden layer (the penultimate activations)."""

    def __init__(self, d_in: int, n_classes: int, d_hidden: int = 64):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(d_in, d_hidden), nn.ReLU(),
                                  nn.Linear(d_hidden, d_hidden), nn.ReLU())  # fmt: skip
        self.head = nn.Linear(d_hidden, n_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


class CNN(nn.Module):
    """Two 3×3 convolutions with max-pooling, then a hidden layer (the penultimate activations)."""

    def __init__(self, channels: int, size: int, n_classes: int, width: int = 16, d_hidden: int = 64):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(width * (size // 4) ** 2, d_hidden), nn.ReLU(),
        )  # fmt: skip
        self.head = nn.Linear(d_hidden, n_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def make_network(architecture: str, split: Split) -> nn.Module:
    """The feature network of ``architecture`` (``"mlp"`` or ``"cnn"``) for the split's image shape."""
    c, h, w = split.x_train.shape[1:]
    if architecture == "mlp":
        return MLP(c * h * w, split.n_classes)
    if architecture == "cnn":
        return CNN(c, h, split.n_classes)
    raise ValueError(f"architecture must be one of {ARCHITECTURES}, got {architecture!r}")


@checked(architecture=Choice(ARCHITECTURES), n_epochs=Int(1, 10_000), batch_size=Int(1, 10**7), lr=Positive())
def train_feature_network(
    architecture: str, split: Split, *, n_epochs: int, batch_size: int = 128, lr: float = 3e-3,
    seed: int = 0, device: str | torch.device = "cpu",
) -> tuple[nn.Module, float]:
    """Train the feature network on the whole pool (Adam, cross-entropy); returns it and its test accuracy."""
    device = resolve_device(device)
    with one_cpu_thread(device):  # tiny networks: a second CPU thread only adds waiting
        return _train_feature_network(architecture, split, n_epochs, batch_size, lr, seed, device)


def _train_feature_network(
    architecture: str, split: Split, n_epochs: int, batch_size: int, lr: float, seed: int, device
) -> tuple[nn.Module, float]:
    torch.manual_seed(seed)
    net = make_network(architecture, split).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    x, y = torch.as_tensor(split.x_train, device=device), torch.as_tensor(split.y_train, device=device)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(n_epochs):
        for batch in torch.randperm(len(y), generator=gen).split(batch_size):
            opt.zero_grad()
            nn.functional.cross_entropy(net(x[batch]), y[batch]).backward()
            opt.step()
    return net, accuracy(net, split, device)


@torch.no_grad()
def accuracy(net: nn.Module, split: Split, device: str | torch.device = "cpu") -> float:
    """Test accuracy of ``net``."""
    net.eval()
    pred = net(torch.as_tensor(split.x_test, device=device)).argmax(-1).cpu().numpy()
    net.train()
    return float(np.mean(pred == split.y_test))


def _check_images(net: MLP | CNN, images: np.ndarray | torch.Tensor) -> None:
    """``images`` of the shape and dtype ``net`` takes (a batch of the images it was made for)."""
    shape = tuple(images.shape)
    if isinstance(net, CNN):
        conv, second, linear = net.body[0], net.body[3], net.body[7]
        ok = len(shape) == 4 and shape[1] == conv.in_channels
        ok = ok and second.out_channels * (shape[2] // 4) * (shape[3] // 4) == linear.in_features
        want = f"(n, {conv.in_channels}, h, w) with {second.out_channels} * (h // 4) * (w // 4) = {linear.in_features}"
    else:
        linear = net.body[1]
        ok = len(shape) >= 2 and int(np.prod(shape[1:])) == linear.in_features
        want = f"(n, ...) with {linear.in_features} values per image"
    if not ok:
        raise ValueError(f"images must have shape {want} for this network, got {shape}")
    dtype = torch.as_tensor(images[:1]).dtype
    if dtype != linear.weight.dtype:
        raise TypeError(f"images must have the dtype of the network's weights ({linear.weight.dtype}), got {dtype}")


@checked(images=Array(None))
@torch.no_grad()
def extract_features(
    net: MLP | CNN, images: np.ndarray | torch.Tensor, device: str | torch.device = "cpu"
) -> np.ndarray:
    """Penultimate activations of ``net`` (a feature network of this chapter) on ``images``, standardised
    per feature (float64)."""
    _check_images(net, images)
    device = resolve_device(device)
    net.eval()
    with one_cpu_thread(device):
        feats = torch.cat([net.features(b) for b in torch.as_tensor(images, device=device).split(4096)])
    net.train()
    f = feats.double().cpu().numpy()
    return (f - f.mean(0)) / np.where(f.std(0) > 1e-12, f.std(0), 1.0)


@checked(features=Array("n d"), noise=Float(0.0))
def add_feature_noise(features: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """Features plus Gaussian noise of ``noise`` times each feature's standard deviation (a latent perturbation)."""
    features = np.asarray(features)
    return features + noise * features.std(0) * rng.standard_normal(features.shape)


@checked(n_steps=Int(1, 10**6), d_hidden=Int(1, 100_000), lr=Positive(), weight_decay=Float(0.0))
def train_on_subsets(
    split: Split, subsets: list[np.ndarray], *, n_steps: int, d_hidden: int = 64, lr: float = 1e-2,
    weight_decay: float = 1e-4, seed: int = 0, device: str | torch.device = "cpu",
    inits: np.ndarray | None = None,
) -> np.ndarray:
    """Test accuracy of an MLP (pixels → ``d_hidden`` → classes) trained from scratch on each subset.

    All subsets train at once as a batched ensemble: member ``m`` has its own weights and sees only
    the pool indices ``subsets[m]`` (padded and masked), full-batch Adam for ``n_steps`` steps.
    Adam acts per weight, so the members do not interact. ``inits`` (one integer per subset, or
    None: every member its own) names each member's initialisation: members with the same number
    start from the same weights, so two subsets compared at the same number differ only by what
    they keep (full-batch: they see no batches that could differ either).
    """
    _check_subsets(split, subsets)
    if inits is not None:
        inits = np.asarray(inits)
        if inits.shape != (len(subsets),) or inits.dtype.kind not in "iu" or inits.min() < 0:
            raise ValueError(f"inits must hold one non-negative integer per subset ({len(subsets)}), got {inits!r}")
    n_members, width = len(subsets), max(len(s) for s in subsets)
    d_in, k = int(np.prod(split.x_train.shape[1:])), split.n_classes
    check_memory({
        "the ensemble's weights, gradients and Adam moments (len(subsets) x d_in x d_hidden)":
            16.0 * n_members * (d_in + 1 + k) * d_hidden,
        "the gathered batches and activations (len(subsets) x largest subset x (d_in + d_hidden))":
            8.0 * n_members * width * (d_in + d_hidden),
    })  # fmt: skip
    device = resolve_device(device)
    with one_cpu_thread(device):  # small matrices: a second CPU thread only adds waiting
        return _train_on_subsets(split, subsets, n_steps, d_hidden, lr, weight_decay, seed, device, inits)


def _check_subsets(split: Split, subsets: list[np.ndarray]) -> None:
    if not subsets:
        raise ValueError("subsets must hold at least one index array")
    n_pool = len(split.y_train)
    for m, s in enumerate(subsets):
        s = np.asarray(s)
        if s.ndim != 1 or len(s) == 0 or s.dtype.kind not in "iu" or s.min() < 0 or s.max() >= n_pool:
            raise ValueError(f"subsets[{m}] must be a non-empty 1-D array of pool indices in [0, {n_pool - 1}]")


def _train_on_subsets(split: Split, subsets: list[np.ndarray], n_steps: int, d_hidden: int, lr: float,
                      weight_decay: float, seed: int, device,
                      inits: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    _check_subsets(split, subsets)
    n_pool = len(split.y_train)
    dev = torch.device(device)
    gen = torch.Generator().manual_seed(seed)
    x_pool = torch.as_tensor(split.x_train.reshape(n_pool, -1), device=dev)
    y_pool = torch.as_tensor(split.y_train, device=dev)
    n_members, d_in, k = len(subsets), x_pool.shape[1], split.n_classes
    width = max(len(s) for s in subsets)
    index = torch.zeros((n_members, width), dtype=torch.long)
    mask = torch.zeros((n_members, width))
    for m, s in enumerate(subsets):
        index[m, : len(s)] = torch.as_tensor(np.asarray(s))
        mask[m, : len(s)] = 1.0
    index, mask = index.to(dev), mask.to(dev)
    xb, yb = x_pool[index], y_pool[index]  # (M, width, d_in), (M, width)

    shapes = ((d_in, d_in, d_hidden), (d_in, 1, d_hidden), (d_hidden, d_hidden, k), (d_hidden, 1, k))

    def uniform(g: torch.Generator, n: int, fan_in: int, *shape: int) -> torch.Tensor:
        bound = 1.0 / np.sqrt(fan_in)
        return (torch.rand(n, *shape, generator=g) * 2 - 1) * bound

    if inits is None:  # every member its own weights, drawn in one stream
        weights = [uniform(gen, n_members, fan_in, *shape) for fan_in, *shape in shapes]
    else:  # initialisation c drawn from its own stream (seed, c): the same whatever else trains beside it
        drawn = {}
        for c in np.unique(inits).tolist():
            g = torch.Generator().manual_seed(seed * 1_000_003 + c)
            drawn[c] = [uniform(g, 1, fan_in, *shape)[0] for fan_in, *shape in shapes]
        weights = [torch.stack([drawn[int(c)][j] for c in inits]) for j in range(len(shapes))]
    w1, b1, w2, b2 = (w.to(dev).requires_grad_(True) for w in weights)
    opt = torch.optim.Adam([w1, b1, w2, b2], lr=lr, weight_decay=weight_decay)
    for _ in range(n_steps):
        logits = torch.relu(xb @ w1 + b1) @ w2 + b2
        loss = nn.functional.cross_entropy(logits.reshape(-1, k), yb.reshape(-1), reduction="none")
        loss = ((loss.reshape(n_members, width) * mask).sum(1) / mask.sum(1)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        x_test = torch.as_tensor(split.x_test.reshape(len(split.y_test), -1), device=dev)
        pred = (torch.relu(x_test @ w1 + b1) @ w2 + b2).argmax(-1).cpu().numpy()  # (M, n_test)
    return (pred == split.y_test[None, :]).mean(axis=1)
