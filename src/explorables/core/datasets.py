"""Paper-scale datasets, read from a local folder (``--data-root``); nothing is ever downloaded.

The layouts are torchvision's, so a dataset already on disk for torchvision works as is:

* :class:`ImageFolder`: ``root/<class>/<image>`` (``.png``, ``.jpg``, ...); classes are the
  sorted folder names, as in ``torchvision.datasets.ImageFolder`` (ImageNet subsets, ...).
* :func:`load_cifar`: ``root/cifar-10-batches-py/`` or ``root/cifar-100-python/``, the Python
  versions of CIFAR-10/100 that ``torchvision.datasets.CIFAR10/100`` read. Their batches are
  pickled dictionaries of numpy arrays; we unpickle them with a restricted unpickler that can
  build nothing but numpy arrays and plain containers.

torchvision itself is not a dependency: its PyPI wheels are built for CUDA torch and do not
load with the CPU wheel this project pins.
"""

from __future__ import annotations

import io
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".tif", ".tiff", ".webp")


class ImageFolder(torch.utils.data.Dataset):
    """Images in ``root/<class>/*``, as ``(float tensor C x H x W in [0, 1], class index)``."""

    def __init__(self, root: str | Path, size: tuple[int, int] | None = None):
        self.root = Path(root)
        if not self.root.is_dir():
            raise ValueError(f"data root {self.root} is not a folder (expected root/<class>/<image>)")
        self.classes = sorted(p.name for p in self.root.iterdir() if p.is_dir())
        if not self.classes:
            raise ValueError(f"data root {self.root} has no class folders (expected root/<class>/<image>)")
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = [
            (path, self.class_to_idx[c])
            for c in self.classes
            for path in sorted((self.root / c).iterdir())
            if path.suffix.lower() in IMAGE_SUFFIXES
        ]
        if not self.samples:
            raise ValueError(f"no images ({', '.join(IMAGE_SUFFIXES)}) under {self.root}")
        self.size = size

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        path, label = self.samples[index]
        with Image.open(path) as img:
            img = img.convert("RGB")
            if self.size is not None:
                img = img.resize(self.size)
            array = np.asarray(img, dtype=np.float32) / 255.0
        return torch.from_numpy(array).permute(2, 0, 1).contiguous(), label


class _ArraysOnlyUnpickler(pickle.Unpickler):
    """Unpickles numpy arrays, dicts, lists, strings and numbers; refuses every other class."""

    ALLOWED = frozenset(
        {
            ("numpy.core.multiarray", "_reconstruct"),
            ("numpy._core.multiarray", "_reconstruct"),
            ("numpy", "ndarray"),
            ("numpy", "dtype"),
            ("numpy.core.multiarray", "scalar"),
            ("numpy._core.multiarray", "scalar"),
            ("_codecs", "encode"),
        }
    )

    def find_class(self, module: str, name: str):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a dataset file")


def _load_batch(path: Path) -> dict:
    if not path.exists():
        raise ValueError(f"missing CIFAR batch file {path}")
    with open(path, "rb") as fh:
        data = _ArraysOnlyUnpickler(io.BytesIO(fh.read()), encoding="latin1").load()
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in data.items()}


@dataclass
class ArrayDataset:
    """Images ``(N, 3, 32, 32)`` as uint8 and integer labels ``(N,)``."""

    images: np.ndarray
    labels: np.ndarray
    classes: list[str]

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Images as float tensors in ``[0, 1]`` and labels as int64."""
        return torch.from_numpy(self.images).float().div_(255), torch.from_numpy(self.labels).long()


def load_cifar(root: str | Path, name: str = "cifar10", train: bool = True) -> ArrayDataset:
    """CIFAR-10 or CIFAR-100 from ``root`` in torchvision's layout (the Python version)."""
    root = Path(root)
    if name == "cifar10":
        folder, files = (
            root / "cifar-10-batches-py",
            ([f"data_batch_{i}" for i in range(1, 6)] if train else ["test_batch"]),
        )
        meta, label_key, names_key = folder / "batches.meta", "labels", "label_names"
    elif name == "cifar100":
        folder, files = root / "cifar-100-python", ["train" if train else "test"]
        meta, label_key, names_key = folder / "meta", "fine_labels", "fine_label_names"
    else:
        raise ValueError(f"name must be 'cifar10' or 'cifar100', got {name!r}")
    if not folder.is_dir():
        raise ValueError(f"{folder} not found: --data-root must contain torchvision's {folder.name}/ folder")
    batches = [_load_batch(folder / f) for f in files]
    images = np.concatenate([np.asarray(b["data"], dtype=np.uint8) for b in batches]).reshape(-1, 3, 32, 32)
    labels = np.concatenate([np.asarray(b[label_key], dtype=np.int64) for b in batches])
    classes = list(_load_batch(meta)[names_key])
    return ArrayDataset(images=images, labels=labels, classes=classes)
