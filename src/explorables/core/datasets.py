"""Paper-scale datasets, read from a local folder (``--data-root``); nothing is ever downloaded.

The layouts are torchvision's, so a dataset already on disk for torchvision works as is:

* :class:`ImageFolder`: ``root/<class>/<image>`` (``.png``, ``.jpg``, ...); classes are the
  sorted folder names, as in ``torchvision.datasets.ImageFolder`` (ImageNet subsets, ...).
* :func:`load_cifar`: ``root/cifar-10-batches-py/`` or ``root/cifar-100-python/``, the Python
  versions of CIFAR-10/100 that ``torchvision.datasets.CIFAR10/100`` read. Their batches are
  pickled dictionaries of numpy arrays; we unpickle them with a restricted unpickler that can
  build nothing but numpy arrays and plain containers.

Every file is read through :func:`read_data_file` (or :func:`open_data_file`, for readers that take an
open handle: uggrh's ``.npz`` features, routing's BERT checkpoints): it must be a regular file (not a folder, a
FIFO or a device, which could block a read forever), inside the data root once symbolic links are
resolved, and of bounded size. Whatever is wrong with a file (missing, empty, truncated,
bit-flipped, of another format, with arrays of the wrong shape or labels out of range) is one
``ValueError`` naming the file, never a traceback from the unpickler or PIL or a wait. A CIFAR
batch with the official number of images is also checked against the official MD5 (the
checksums torchvision uses), so a bit flip inside the pixels is caught too.

torchvision itself is not a dependency: its PyPI wheels are built for CUDA torch and do not
load with the CPU wheel this project pins.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import torch
from PIL import Image

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".tif", ".tiff", ".webp")
#: the largest dataset file read (bytes): the biggest CIFAR file is ~160 MB
MAX_DATA_FILE_BYTES = 4 * 1024**3
#: the official files' MD5 (as torchvision checks them) and how many images each holds
CIFAR_MD5 = {
    ("cifar-10-batches-py", "data_batch_1"): "c99cafc152244af753f735de768cd75f",
    ("cifar-10-batches-py", "data_batch_2"): "d4bba439e000b95fd0a9bffe97cbabec",
    ("cifar-10-batches-py", "data_batch_3"): "54ebc095f3ab1f0389bbae665268c751",
    ("cifar-10-batches-py", "data_batch_4"): "634d18415352ddfa80567beed471001a",
    ("cifar-10-batches-py", "data_batch_5"): "482c414d41f54cd18b22e5b47cb7c3cb",
    ("cifar-10-batches-py", "test_batch"): "40351d587109b95175f43aff81a1287e",
    ("cifar-100-python", "train"): "16019d7e3df5f24257cddd939b257f8d",
    ("cifar-100-python", "test"): "f0ef6b0ae62326f3e7ffdfab6717acfc",
}
CIFAR_OFFICIAL_IMAGES = {"data_batch": 10_000, "test_batch": 10_000, "train": 50_000, "test": 10_000}


def _one_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0][:160] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.contextmanager
def open_data_file(
    path: str | Path, root: str | Path | None = None, max_bytes: int = MAX_DATA_FILE_BYTES, what: str = "dataset file"
) -> Iterator[BinaryIO]:
    """An open binary handle on the file ``path`` (a context manager), or a one-line ``ValueError`` saying why not.

    Every file a paper-scale loader reads goes through here (or :func:`read_data_file`). The file must
    exist, be a regular file (a folder, a FIFO or a device is refused before it is opened, so nothing
    waits on it: a FIFO would block an ``open`` for ever, and some readers hold the GIL while they wait,
    so not even SIGTERM ends the process), lie inside ``root`` once symbolic links are resolved (when
    ``root`` is given), and hold at most ``max_bytes``. ``what`` names the file in the messages
    (``"dataset file"``, ``"checkpoint file"``, ...). The handle is checked again after opening (a file
    swapped for a FIFO between the check and the open is refused, not waited on).
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"missing {what} {path}") from None
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path} ({_one_line(exc)})") from None
    if root is not None:
        real, real_root = os.path.realpath(path), os.path.realpath(root)
        if os.path.commonpath([real, real_root]) != real_root:
            raise ValueError(f"the {what} {path} is a symbolic link out of the data root {root}; copy it in")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"the {what} {path} is not a regular file (a folder, a FIFO or a device)")
    if info.st_size > max_bytes:
        raise ValueError(f"the {what} {path} holds {info.st_size} bytes, more than the {max_bytes} allowed")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        fh = os.fdopen(fd, "rb")
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path} ({_one_line(exc)})") from None
    with fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped since the check
            raise ValueError(f"the {what} {path} is not a regular file (a folder, a FIFO or a device)")
        yield fh


def read_data_file(
    path: str | Path, root: str | Path | None = None, max_bytes: int = MAX_DATA_FILE_BYTES, what: str = "dataset file"
) -> bytes:
    """The bytes of the file ``path``, or a one-line ``ValueError`` saying why not (the checks of
    :func:`open_data_file`: a regular file, inside ``root``, at most ``max_bytes``)."""
    with open_data_file(path, root, max_bytes, what) as fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise ValueError(f"cannot read the {what} {path} ({_one_line(exc)})") from None
    if len(data) > max_bytes:
        raise ValueError(f"the {what} {path} holds more than the {max_bytes} bytes allowed")
    return data


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
        data = read_data_file(path, self.root)
        try:
            with Image.open(io.BytesIO(data)) as img:
                img.load()  # decodes the whole file: a truncated or damaged image fails here
                img = img.convert("RGB")
                if self.size is not None:
                    img = img.resize(self.size)
                array = np.asarray(img, dtype=np.float32) / 255.0
        except Exception as exc:  # PIL raises many types (and bombs): one line for every one
            raise ValueError(f"the image {path} cannot be read ({_one_line(exc)})") from None
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


def _load_batch(path: Path, root: Path | None = None) -> tuple[dict, bytes]:
    """The unpickled dictionary of one CIFAR file (string keys) and the file's bytes."""
    raw = read_data_file(path, root)
    try:
        data = _ArraysOnlyUnpickler(io.BytesIO(raw), encoding="latin1").load()
    except Exception as exc:  # any damage (empty, truncated, flipped, foreign) is the same one line
        raise ValueError(f"the CIFAR file {path} is damaged or not a CIFAR file ({_one_line(exc)})") from None
    if not isinstance(data, dict):
        raise ValueError(f"the CIFAR file {path} is not a CIFAR file (it holds a {type(data).__name__}, not a dict)")
    return {k.decode(errors="replace") if isinstance(k, bytes) else k: v for k, v in data.items()}, raw


def _batch_arrays(path: Path, batch: dict, raw: bytes, label_key: str, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Checked images ``(n, 3072)`` uint8 and labels ``(n,)`` in ``[0, n_classes)`` of one CIFAR batch."""
    missing = [k for k in ("data", label_key) if k not in batch]
    if missing:
        raise ValueError(f"the CIFAR file {path} lacks {missing}: not a CIFAR batch of this dataset")
    try:
        images = np.asarray(batch["data"])
        labels = np.asarray(batch[label_key])
        ok = images.dtype == np.uint8 and images.ndim == 2 and images.shape[1] == 3072
        ok = ok and labels.ndim == 1 and len(labels) == len(images) and np.issubdtype(labels.dtype, np.integer)
    except Exception:  # ragged or foreign contents
        ok = False
    if not ok:
        raise ValueError(
            f"the CIFAR file {path} does not hold uint8 images (n, 3072) with n integer labels: damaged or foreign"
        )
    if len(labels) and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(f"the CIFAR file {path} has labels outside [0, {n_classes}): damaged or foreign")
    official = CIFAR_MD5.get((path.parent.name, path.name))
    stem = path.name.rstrip("0123456789_") if path.name.startswith("data_batch") else path.name
    if official is not None and len(images) == CIFAR_OFFICIAL_IMAGES.get(stem, -1):
        if hashlib.md5(raw, usedforsecurity=False).hexdigest() != official:
            raise ValueError(f"the CIFAR file {path} differs from the official file (MD5 mismatch): damaged")
    return images, labels.astype(np.int64)


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
    meta_dict, _ = _load_batch(meta, root)
    names = meta_dict.get(names_key)
    if not isinstance(names, list) or not names or not all(isinstance(c, (str, bytes)) for c in names):
        raise ValueError(f"the CIFAR file {meta} lacks the list of class names {names_key!r}: damaged or foreign")
    classes = [c.decode(errors="replace") if isinstance(c, bytes) else c for c in names]
    arrays = [_batch_arrays(folder / f, *_load_batch(folder / f, root), label_key, len(classes)) for f in files]
    images = np.concatenate([a for a, _ in arrays]).reshape(-1, 3, 32, 32)
    labels = np.concatenate([b for _, b in arrays])
    return ArrayDataset(images=images, labels=labels, classes=classes)


def write_cifar(
    root: str | Path, name: str = "cifar10", n_train: int = 30, n_test: int = 6, n_classes: int | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Write a stand-in CIFAR-10/100 folder under ``root`` in torchvision's layout, random contents.

    The files are what :func:`load_cifar` reads (pickled dictionaries with bytes keys, protocol 2,
    as the official Python version): for ``cifar10`` five ``data_batch_i`` files sharing the
    ``n_train`` images and a ``test_batch``; for ``cifar100`` a ``train`` and a ``test`` file with
    fine and coarse labels. ``n_classes`` defaults to the dataset's (10 or 100). Tests, the GPU smoke
    run and a ``plan`` without the real data use it; it never overwrites the real files, because a
    folder that exists already is refused. Returns the training images ``(n_train, 3072)`` in file order.
    """
    if name not in ("cifar10", "cifar100"):
        raise ValueError(f"name must be 'cifar10' or 'cifar100', got {name!r}")
    n_classes = n_classes or (10 if name == "cifar10" else 100)
    if n_train < 1 or n_test < 1 or n_classes < 1:
        raise ValueError(f"n_train, n_test and n_classes must be >= 1, got {n_train}, {n_test}, {n_classes}")
    folder = Path(root) / ("cifar-10-batches-py" if name == "cifar10" else "cifar-100-python")
    folder.mkdir(parents=True, exist_ok=False)
    rng = np.random.default_rng(seed)
    train = rng.integers(0, 256, (n_train, 3072), dtype=np.uint8)
    test = rng.integers(0, 256, (n_test, 3072), dtype=np.uint8)

    def batch(images: np.ndarray) -> dict:
        labels = rng.integers(0, n_classes, len(images)).tolist()
        if name == "cifar10":
            return {b"data": images, b"labels": labels}
        return {b"data": images, b"fine_labels": labels, b"coarse_labels": [c % 20 for c in labels]}

    def dump(path: Path, obj: dict) -> None:
        path.write_bytes(pickle.dumps(obj, protocol=2))

    if name == "cifar10":
        for i, part in enumerate(np.array_split(train, 5), start=1):
            dump(folder / f"data_batch_{i}", batch(part))
        dump(folder / "test_batch", batch(test))
        dump(folder / "batches.meta", {b"label_names": [f"class{i}".encode() for i in range(n_classes)]})
    else:
        dump(folder / "train", batch(train))
        dump(folder / "test", batch(test))
        dump(folder / "meta", {b"fine_label_names": [f"class{i}".encode() for i in range(n_classes)]})
    return train
