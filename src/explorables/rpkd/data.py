"""The image task: scikit-learn's bundled digits (8x8), regrouped into super-classes; CIFAR at paper scale.

Super-classes: the fine label (digit 0-9) modulo ``C``, so ``C = 5`` merges {0, 5}, {1, 6}, ...
and ``C = 2`` is parity. Each super-class is a union of unlike digits, so the label says less
and less about the fine identity as ``C`` shrinks.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from ..core.arguments import Array, checked
from ..core.params import Int
from ..core.validation import check_int


@checked(fine=Array("n", integer=True), n_classes=Int(2), n_fine=Int(2, 10**6))
def super_labels(fine: np.ndarray | torch.Tensor, n_classes: int, n_fine: int = 10) -> np.ndarray | torch.Tensor:
    """Eq. (rpkd-super): the super-class ``fine mod C`` of every fine label (``fine`` in ``[0, n_fine)``)."""
    check_int("n_classes", n_classes, 2, n_fine)
    fine = fine if isinstance(fine, torch.Tensor) else np.asarray(fine)
    if int(fine.min()) < 0 or int(fine.max()) >= n_fine:
        raise ValueError(f"fine must hold labels in [0, n_fine = {n_fine}), got values in "
                         f"[{int(fine.min())}, {int(fine.max())}]")
    return fine % n_classes


@dataclass
class ImageTask:
    """Images ``(N, 1, H, W)`` in [0, 1] (one channel) and fine labels ``(N,)``."""

    images: torch.Tensor
    fine: torch.Tensor

    @property
    def image_size(self) -> int:
        return int(self.images.shape[-1])


@checked()
@lru_cache(maxsize=1)
def load_digits_task() -> ImageTask:
    """scikit-learn's ``load_digits`` (1797 images of 8x8, shipped with the package; no download); cached."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = torch.tensor(bunch.images, dtype=torch.float32).unsqueeze(1) / 16.0
    return ImageTask(images=images, fine=torch.tensor(bunch.target, dtype=torch.long))


def load_cifar_task(root: str, name: str = "cifar100", size: int = 16, n_fine: int = 10) -> ImageTask:
    """Paper scale: CIFAR from ``root`` (torchvision's layout, read by :mod:`explorables.core.datasets`),
    grey-scaled, resized to ``size`` and restricted to the first ``n_fine`` fine classes."""
    from torch.nn import functional as F

    from ..core.datasets import load_cifar

    check_int("size", size, 4)
    train, test = load_cifar(root, name, train=True), load_cifar(root, name, train=False)
    images = np.concatenate([train.images, test.images])
    fine = np.concatenate([train.labels, test.labels])
    keep = fine < n_fine
    x = torch.from_numpy(images[keep]).float().div_(255).mean(dim=1, keepdim=True)
    x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    return ImageTask(images=x, fine=torch.from_numpy(fine[keep]).long())


#: the generator seed of the shifted data set: one fixed variant, whatever the run's base seed
SHIFT_SEED = 2026


@checked(max_shift=Int(0, 8))
def shifted_task(task: ImageTask, max_shift: int) -> ImageTask:
    """A harder variant of ``task``: every image translated once by its own offset ``(dy, dx)``, each drawn
    uniformly from ``[-max_shift, max_shift]`` by a fixed generator (:data:`SHIFT_SEED`), with zero fill.

    The variant is a fixed data set (the same offsets in every run); ``max_shift = 0`` returns ``task``.
    Convolutions with pooling are built for shifts; a network over fixed-position tokens is not.
    """
    if max_shift == 0:
        return task
    n, _, h, w = task.images.shape
    check_int("max_shift", max_shift, 0, min(h, w) - 1)
    offsets = torch.randint(-max_shift, max_shift + 1, (n, 2), generator=torch.Generator().manual_seed(SHIFT_SEED))
    return ImageTask(images=_translate(task.images, offsets, max_shift), fine=task.fine.clone())


def _translate(images: torch.Tensor, offsets: torch.Tensor, max_shift: int) -> torch.Tensor:
    """Images ``(N, 1, H, W)`` each moved by its own integer offset ``offsets[i] = (dy, dx)`` (entries in
    ``[-max_shift, max_shift]``), zero fill: pixel ``(r, c)`` of the result is pixel ``(r - dy, c - dx)`` of
    the input. Unchecked (the callers draw the offsets): :func:`shifted_task` (one fixed data set) and the
    students' fresh views of every step (``train_students(augment=...)``)."""
    n, _, h, w = images.shape
    padded = torch.nn.functional.pad(images, (max_shift,) * 4)
    rows = (max_shift - offsets[:, 0])[:, None] + torch.arange(h, device=images.device)  # padded row r + s - dy
    cols = (max_shift - offsets[:, 1])[:, None] + torch.arange(w, device=images.device)
    idx = torch.arange(n, device=images.device)[:, None, None]
    return padded[idx, 0, rows[:, :, None], cols[:, None, :]].unsqueeze(1).contiguous()


@dataclass
class Split:
    """Index sets of one seed: ``train`` (the teacher's data and the transfer set), ``labelled`` (the
    student's labelled subset of ``train``) and ``test``."""

    train: torch.Tensor
    labelled: torch.Tensor
    test: torch.Tensor


@checked(n_images=Int(3, 10**7), n_test=Int(1), n_labelled=Int(1))
def make_split(n_images: int, n_test: int, n_labelled: int, seed: int) -> Split:
    """A seeded random split; ``labelled`` is the first ``n_labelled`` images of ``train``."""
    check_int("n_test", n_test, 1, n_images - 2)
    check_int("n_labelled", n_labelled, 1, n_images - n_test)
    perm = torch.randperm(n_images, generator=torch.Generator().manual_seed(seed))
    test, train = perm[:n_test], perm[n_test:]
    return Split(train=train, labelled=train[:n_labelled], test=test)


@checked(skip_nested=True, fine_train=Array("n", integer=True), n_labelled=Int(0), n_classes=Int(2, 10))
def student_labels(
    fine_train: np.ndarray | torch.Tensor, n_labelled: int, n_classes: int
) -> np.ndarray | torch.Tensor:
    """The labels a student may see on the transfer set: the super-class on its first ``n_labelled``
    images and ``-1`` (unknown) everywhere else. The distillation terms never read them."""
    if n_labelled > len(fine_train):
        raise ValueError(f"n_labelled must be <= len(fine_train) = {len(fine_train)}, got {n_labelled}")
    labels = super_labels(fine_train, n_classes)  # runs bare: checked here, by this function's rules
    labels = labels.clone() if isinstance(labels, torch.Tensor) else np.array(labels)
    labels[n_labelled:] = -1
    return labels
