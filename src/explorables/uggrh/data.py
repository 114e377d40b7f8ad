"""Two modalities of one object, with some modalities missing.

* :func:`digits_with_tags`: scikit-learn's 8x8 digits as the "image" view and a synthetic "tag"
  view drawn from the hidden digit class (each class has a few typical tags, each kept with a
  probability, plus random tags). The class is returned separately and only the evaluation reads it.
* :func:`make_incomplete`: hides one modality of a fraction of the training pairs. The hidden rows
  are overwritten with NaN in :class:`IncompletePairs`, so a missing value cannot reach training
  unnoticed: any arithmetic on it would turn the result into NaN.
* :func:`load_features`: the paper-scale features (MIRFlickr-25K, NUS-WIDE, MS COCO) read from
  ``<data_root>/<dataset>.npz`` (layout in :data:`NPZ_LAYOUT`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..core.arguments import Array, RowsOf, checked
from ..core.datasets import open_data_file
from ..core.params import Choice, Float, Int, Probability
from ..core.validation import check_int

NPZ_LAYOUT = (
    "<data_root>/<dataset>.npz with float arrays 'image' (n, d_image) (e.g. VGG fc7 features), 'text' "
    "(n, d_text) (bag-of-words or tag vectors) and 'labels' (n, n_classes) multi-hot, used only to score; "
    "datasets: mirflickr, nuswide, coco"
)
#: the paper-scale datasets :func:`load_features` reads
FEATURE_DATASETS: tuple[str, ...] = ("mirflickr", "nuswide", "coco")
#: the largest feature file :func:`load_features` reads, and the most its arrays may hold decompressed (bytes):
#: NUS-WIDE's 4096-d VGG features for its ~270k images are ~4.4 GB as float32, ~8.8 GB as float64
MAX_FEATURE_FILE_BYTES = 16 * 1024**3
#: the largest synthetic tag vocabulary (the text view is 1797 x d_text float64)
MAX_D_TEXT = 100_000


@checked(image=Array("n d_image"), text=Array("n d_text"), labels=Array("n n_classes"))
@dataclass(frozen=True)
class Modalities:
    """Complete paired data: row ``i`` of ``image`` and ``text`` describe the same object."""

    image: np.ndarray
    text: np.ndarray
    labels: np.ndarray  # (n, n_classes) multi-hot: read by the evaluation only

    def __post_init__(self) -> None:
        for name in ("image", "text", "labels"):
            if not isinstance(getattr(self, name), np.ndarray):
                raise ValueError(f"{name} must be a numpy array, got {type(getattr(self, name)).__name__}")
        n = self.image.shape[0]
        if self.text.shape[0] != n or self.labels.shape[0] != n:
            raise ValueError(
                f"image, text and labels must have the same number of rows, got "
                f"{self.image.shape[0]}, {self.text.shape[0]} and {self.labels.shape[0]}"
            )

    @checked(rows=RowsOf(table="image"))
    def subset(self, rows: np.ndarray) -> Modalities:
        """The modalities (and labels) of the given rows, in their order."""
        return Modalities(self.image[rows], self.text[rows], self.labels[rows])


@checked(
    image=Array("n d_image", finite=False, allow_nan=True),
    text=Array("n d_text", finite=False, allow_nan=True),
    has_image=Array("n"),
    has_text=Array("n"),
)
@dataclass(frozen=True)
class IncompletePairs:
    """What a training function receives: both views, a mask of what is observed, and no labels.

    Rows where a modality is missing hold NaN in that modality's array (observed rows must be finite).
    """

    image: np.ndarray
    text: np.ndarray
    has_image: np.ndarray
    has_text: np.ndarray

    def __post_init__(self) -> None:
        n = self.image.shape[0]
        if self.text.shape[0] != n or self.has_image.shape != (n,) or self.has_text.shape != (n,):
            raise ValueError(
                f"image ({self.image.shape[0]} rows), text ({self.text.shape[0]} rows) and the two masks "
                "must describe the same samples"
            )
        for name in ("image", "text", "has_image", "has_text"):
            if not isinstance(getattr(self, name), np.ndarray):
                raise ValueError(f"{name} must be a numpy array, got {type(getattr(self, name)).__name__}")
        for name in ("has_image", "has_text"):
            dtype = getattr(self, name).dtype
            if dtype.kind != "b":
                raise ValueError(f"{name} must be a boolean mask (True: observed), got dtype {dtype}")
        if not np.all(self.has_image | self.has_text):
            raise ValueError("every sample must keep at least one modality (has_image | has_text)")
        for name, mask in (("image", self.has_image), ("text", self.has_text)):
            if not np.all(np.isfinite(getattr(self, name)[mask])):
                raise ValueError(f"{name} must hold finite numbers in every observed row (has_{name})")

    @property
    def n(self) -> int:
        return self.image.shape[0]

    @property
    def complete(self) -> np.ndarray:
        """Rows where both modalities are observed."""
        return self.has_image & self.has_text


@lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    return digits.data.astype(np.float64) / 16.0, digits.target.copy()


@checked(
    d_text=Int(2, MAX_D_TEXT),
    n_class_tags=Int(1, MAX_D_TEXT),
    p_tag=Probability(open_low=True),
    n_noise_tags=Int(0, MAX_D_TEXT),
)
def digits_with_tags(
    d_text: int = 100,
    n_class_tags: int = 8,
    p_tag: float = 0.6,
    n_noise_tags: int = 3,
    *,
    rng: np.random.Generator,
) -> Modalities:
    """Digits images (pixels / 16) and tag vectors generated from the hidden digit class.

    Each class owns ``n_class_tags`` tags (random, possibly shared with other classes); a sample
    keeps each of its class's tags with probability ``p_tag`` and gets ``n_noise_tags`` random tags.
    """
    n_class_tags = check_int("n_class_tags", n_class_tags, 1, d_text)
    n_noise_tags = check_int("n_noise_tags", n_noise_tags, 0, d_text)
    image, classes = (a.copy() for a in _digits())
    n, n_classes = len(classes), int(classes.max()) + 1
    class_tags = np.stack([rng.choice(d_text, n_class_tags, replace=False) for _ in range(n_classes)])
    text = np.zeros((n, d_text))
    keep = rng.random((n, n_class_tags)) < p_tag
    rows = np.repeat(np.arange(n), n_class_tags).reshape(n, n_class_tags)
    text[rows[keep], class_tags[classes][keep]] = 1.0
    for _ in range(n_noise_tags):
        text[np.arange(n), rng.integers(0, d_text, n)] = 1.0
    labels = np.eye(n_classes)[classes]
    return Modalities(image, text, labels)


def _npz_arrays(z, path: Path) -> dict[str, np.ndarray]:
    """The three layout arrays of an open npz file, each checked from its ``.npy`` header before it is read:
    real numbers (no objects, strings or complex), and a header whose shape matches the member's size in the
    archive, so a lying header cannot make numpy allocate more than the file declares (``ValueError`` if not)."""
    missing = [k for k in ("image", "text", "labels") if k not in z.files]
    if missing:
        raise ValueError(f"{path} lacks array(s) {missing}: {NPZ_LAYOUT}")
    arrays = {}
    for name in ("image", "text", "labels"):
        member = z.zip.getinfo(f"{name}.npy")
        with z.zip.open(member) as fh:
            version = np.lib.format.read_magic(fh)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"{path}: '{name}' is an .npy of format version {version}, not 1.0 or 2.0")
            fmt = np.lib.format
            shape, _fortran, dtype = (fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0)(fh)
            if dtype.kind not in "biuf" or dtype.hasobject:
                raise ValueError(f"{path}: '{name}' must hold real numbers, got dtype {dtype}")
            size = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if fh.tell() + size != member.file_size:
                raise ValueError(f"{path}: '{name}' declares shape {shape} ({size} bytes), but its member holds "
                                 f"{member.file_size - fh.tell()}: damaged")  # fmt: skip
        arrays[name] = z[name]
    return arrays


@checked(dataset=Choice(FEATURE_DATASETS))
def load_features(data_root: str | Path, dataset: str) -> Modalities:
    """Paper-scale features from ``<data_root>/<dataset>.npz`` (layout: :data:`NPZ_LAYOUT`).

    The file is read through :func:`explorables.core.datasets.open_data_file` (a regular file inside
    ``data_root``, at most :data:`MAX_FEATURE_FILE_BYTES`) with ``allow_pickle=False``, and the arrays it
    declares may not add up to more than :data:`MAX_FEATURE_FILE_BYTES` once decompressed. Whatever is
    wrong with it (empty, truncated, bit-flipped: every member carries a CRC-32; not a zip; arrays missing,
    of the wrong type, shape or size) is one ``ValueError`` naming the file.
    """
    path = Path(data_root) / f"{dataset}.npz"
    if not path.exists() and not path.is_symlink():
        raise ValueError(f"data_root must hold {path.name}: {NPZ_LAYOUT}; not found: {path}")
    with open_data_file(path, data_root, MAX_FEATURE_FILE_BYTES, what="feature file") as fh:
        try:
            with np.load(fh, allow_pickle=False) as z:
                if not isinstance(z, np.lib.npyio.NpzFile):
                    raise ValueError(f"it holds a single array, not the arrays of {NPZ_LAYOUT}")
                declared = sum(info.file_size for info in z.zip.infolist())
                if declared > MAX_FEATURE_FILE_BYTES:
                    raise ValueError(f"its arrays declare {declared} bytes, more than the {MAX_FEATURE_FILE_BYTES} "
                                     "allowed")  # fmt: skip
                arrays = _npz_arrays(z, path)
        except MemoryError:
            raise
        except ValueError as exc:
            message = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ValueError(message if str(path) in message else f"the feature file {path}: {message}") from None
        except Exception as exc:  # zipfile, zlib and numpy raise many types for a damaged file: one line for all
            text = str(exc).splitlines()[0][:160] if str(exc).strip() else ""
            reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
            raise ValueError(f"the feature file {path} is damaged or not an .npz file ({reason})") from None
    image, text, labels = (np.asarray(arrays[k], dtype=np.float64) for k in ("image", "text", "labels"))
    for name, arr in (("image", image), ("text", text), ("labels", labels)):
        if arr.ndim != 2 or not np.all(np.isfinite(arr)):
            raise ValueError(f"{path}: '{name}' must be a finite 2-d array, got shape {arr.shape}")
    if not image.shape[0] == text.shape[0] == labels.shape[0]:
        raise ValueError(f"{path}: image, text and labels must have the same number of rows, got "
                         f"{image.shape[0]}, {text.shape[0]} and {labels.shape[0]}")  # fmt: skip
    keep = labels.sum(1) > 0  # the usual protocol: drop samples without any label
    if not keep.any():
        raise ValueError(f"{path}: no sample has a label (every row of 'labels' is zero)")
    return Modalities(image[keep], text[keep], labels[keep])


@checked(n_query=Int(1), n_train=Int(2), n_database=Int(0))
def split(
    data: Modalities, n_query: int, n_train: int, n_database: int, rng: np.random.Generator
) -> tuple[Modalities, Modalities, Modalities]:
    """Disjoint random ``(train, query, database)`` sets; ``n_database = 0`` takes all the rest."""
    n = data.image.shape[0]
    rest = n - n_query - n_train
    if n_database > rest or rest < 1:
        raise ValueError(
            f"n_query + n_train + n_database must be <= the {n} samples, got {n_query} + {n_train} + {n_database}"
        )
    order = rng.permutation(n)
    db = order[n_query + n_train :] if n_database == 0 else order[n_query + n_train : n_query + n_train + n_database]
    return data.subset(order[n_query : n_query + n_train]), data.subset(order[:n_query]), data.subset(db)


@checked(
    image=Array("n d_image"),
    text=Array("n d_text"),
    missing_rate=Float(0.0, 1.0, high_inclusive=False),
    image_missing_share=Probability(),
)
def make_incomplete(
    image: np.ndarray,
    text: np.ndarray,
    missing_rate: float,
    image_missing_share: float = 0.5,
    *,
    rng: np.random.Generator,
) -> IncompletePairs:
    """Hide one modality of ``round(missing_rate * n)`` random pairs.

    Of those, ``round(image_missing_share * m)`` lose their image and the rest their text (modality
    imbalance). Hidden values are overwritten with NaN.
    """
    image, text = np.asarray(image, dtype=np.float64), np.asarray(text, dtype=np.float64)
    n = image.shape[0]
    m = round(missing_rate * n)
    chosen = rng.permutation(n)[:m]
    m_image = round(image_missing_share * m)
    has_image, has_text = np.ones(n, bool), np.ones(n, bool)
    has_image[chosen[:m_image]] = False
    has_text[chosen[m_image:]] = False
    image, text = image.copy(), text.copy()
    image[~has_image] = np.nan
    text[~has_text] = np.nan
    return IncompletePairs(image, text, has_image, has_text)
