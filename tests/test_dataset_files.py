"""Issue 53, item 3: every dataset file the package reads (CIFAR batches and meta, ImageFolder images)
gives one clear line naming the file on any corruption, and never waits (a FIFO or a device is refused
before it is opened)."""

from __future__ import annotations

import os
import pickle
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from explorables.core import datasets as D


def _cifar(root: Path, n: int = 6) -> Path:
    D.write_cifar(root, "cifar10", n_train=5 * n, n_test=n)
    return root / "cifar-10-batches-py"


def _images(root: Path) -> None:
    for c in ("a", "b"):
        (root / c).mkdir(parents=True)
        for i in range(2):
            Image.fromarray(np.full((8, 8, 3), 60 * i, np.uint8)).save(root / c / f"{i}.png")


def _replace(target: Path, make) -> None:
    target.unlink()
    make(target)


def _npz(target: Path) -> None:
    with open(target, "wb") as fh:
        np.savez(fh, a=np.zeros(3))


def _flip(pos: int):
    def mutate(target: Path) -> None:
        data = bytearray(target.read_bytes())
        data[pos % len(data)] ^= 0xFF
        target.write_bytes(bytes(data))

    return mutate


#: corruptions every reader must refuse; each mutates the file in place (``outside`` is a file beyond the root)
CORRUPTIONS = {
    "empty": lambda t, outside: t.write_bytes(b""),
    "one byte": lambda t, outside: t.write_bytes(t.read_bytes()[:1]),
    "truncated half": lambda t, outside: t.write_bytes(t.read_bytes()[: len(t.read_bytes()) // 2]),
    "header flipped 0": lambda t, outside: _flip(0)(t),
    "header flipped 1": lambda t, outside: _flip(1)(t),
    "header flipped 2": lambda t, outside: _flip(2)(t),
    "text": lambda t, outside: t.write_text("hello\n"),
    "a pickled function": lambda t, outside: t.write_bytes(pickle.dumps(os.system)),
    "a pickled list": lambda t, outside: t.write_bytes(pickle.dumps([1, 2, 3])),
    "a pickled dict of other keys": lambda t, outside: t.write_bytes(pickle.dumps({"x": 1})),
    "an npz": lambda t, outside: _npz(t),
    "a folder": lambda t, outside: _replace(t, lambda p: p.mkdir()),
    "a FIFO": lambda t, outside: _replace(t, os.mkfifo),
    "a link to /dev/zero": lambda t, outside: _replace(t, lambda p: p.symlink_to("/dev/zero")),
    "a link out of the root": lambda t, outside: _replace(t, lambda p: p.symlink_to(outside)),
}
#: CIFAR only: well-formed pickles with the wrong contents, for a batch and for the meta file
CIFAR_CONTENTS = {
    "data_batch_3": {
        "wrong shape": {b"data": np.zeros((3, 5), np.uint8), b"labels": [0, 1, 2]},
        "labels of another length": {b"data": np.zeros((3, 3072), np.uint8), b"labels": [0]},
        "labels out of range": {b"data": np.zeros((2, 3072), np.uint8), b"labels": [-5, 99]},
        "float images": {b"data": np.zeros((2, 3072)), b"labels": [0, 1]},
    },
    "batches.meta": {
        "names not a list": {b"label_names": 3},
        "no names": {b"label_names": []},
        "numbers as names": {b"label_names": [1.5, 2.5]},
        "too few names for the labels": {b"label_names": [b"a"]},
    },
}
CONTENTS = sorted({name for group in CIFAR_CONTENTS.values() for name in group})


def _refused_in_one_line(load, name: str) -> str:
    """``load()`` must raise a one-line ValueError naming ``name``; a guard (not a timing) fails a wait."""
    outcome: dict = {}

    def go() -> None:
        try:
            load()
            outcome["result"] = "accepted"
        except BaseException as exc:  # the test reports whatever escaped
            outcome["result"] = exc

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(60)
    assert outcome, "the reader waited (a FIFO or a device was opened)"
    exc = outcome["result"]
    assert isinstance(exc, ValueError), f"not refused in one line: {exc!r}"
    message = str(exc)
    assert "\n" not in message and name in message, message
    return message


@pytest.mark.parametrize("target", ["data_batch_3", "batches.meta"])
@pytest.mark.parametrize("corruption", [*CORRUPTIONS, *CONTENTS])
def test_a_damaged_cifar_file_is_one_line_naming_it(tmp_path, target, corruption):
    if corruption in CONTENTS and corruption not in CIFAR_CONTENTS[target]:
        pytest.skip("contents of the other kind of file")
    folder = _cifar(tmp_path / "root")
    path, outside = folder / target, tmp_path / "outside"
    outside.write_bytes(path.read_bytes())  # a sound copy: only where it lies is wrong
    if corruption in CONTENTS:
        path.write_bytes(pickle.dumps(CIFAR_CONTENTS[target][corruption], protocol=2))
    else:
        CORRUPTIONS[corruption](path, outside)
    # a meta file with too few names is seen at the first batch whose labels it cannot name
    name = "data_batch_1" if corruption == "too few names for the labels" else target
    _refused_in_one_line(lambda: D.load_cifar(tmp_path / "root"), name)


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_damaged_image_is_one_line_naming_it(tmp_path, corruption):
    root = tmp_path / "root"
    _images(root)
    path, outside = root / "b" / "1.png", tmp_path / "outside.png"
    outside.write_bytes(path.read_bytes())
    CORRUPTIONS[corruption](path, outside)

    def load() -> None:
        folder = D.ImageFolder(root, size=(8, 8))
        for i in range(len(folder)):
            folder[i]

    _refused_in_one_line(load, "1.png")


def test_a_sound_dataset_still_loads_and_links_inside_the_root_are_followed(tmp_path):
    root = tmp_path / "root"
    folder = _cifar(root)
    (folder / "kept").write_bytes((folder / "test_batch").read_bytes())
    (folder / "test_batch").unlink()
    (folder / "test_batch").symlink_to(folder / "kept")
    data = D.load_cifar(root, train=False)
    assert data.images.shape == (6, 3, 32, 32) and data.classes[0] == "class0"
    _images(tmp_path / "images")
    image, label = D.ImageFolder(tmp_path / "images")[3]
    assert image.shape == (3, 8, 8) and label == 1


def test_an_official_size_cifar_batch_is_checked_against_the_official_md5(tmp_path):
    """A bit flip in the pixels cannot be seen in a pickle; a file with the official number of images must
    match the official MD5, so this (non-official) one is refused."""
    folder = _cifar(tmp_path / "root")
    batch = {b"data": np.zeros((10_000, 3072), np.uint8), b"labels": [0] * 10_000}
    (folder / "test_batch").write_bytes(pickle.dumps(batch, protocol=2))
    message = _refused_in_one_line(lambda: D.load_cifar(tmp_path / "root", train=False), "test_batch")
    assert "MD5" in message


def test_read_data_file_refuses_oversized_files(tmp_path):
    path = tmp_path / "big"
    path.write_bytes(b"x" * 100)
    assert D.read_data_file(path, tmp_path, max_bytes=100) == b"x" * 100
    _refused_in_one_line(lambda: D.read_data_file(path, tmp_path, max_bytes=99), "big")


def test_the_stand_in_cifar_writer_round_trips_and_never_overwrites(tmp_path):
    written = D.write_cifar(tmp_path, "cifar100", n_train=7, n_test=3, n_classes=4)
    data = D.load_cifar(tmp_path, "cifar100")
    np.testing.assert_array_equal(data.images.reshape(7, -1), written)
    assert data.labels.max() < 4 and len(data.classes) == 4
    with pytest.raises(FileExistsError):
        D.write_cifar(tmp_path, "cifar100")
    with pytest.raises(ValueError, match="name must be"):
        D.write_cifar(tmp_path, "imagenet")
    with pytest.raises(ValueError, match="n_train"):
        D.write_cifar(tmp_path / "x", "cifar10", n_train=0)


# --- uggrh's paper-scale features (<data_root>/<dataset>.npz) ---------------------------------------


def _features(root: Path, **arrays) -> Path:
    rng = np.random.default_rng(0)
    sound = {"image": rng.random((12, 6)), "text": rng.random((12, 4)), "labels": np.eye(3)[np.arange(12) % 3]}
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "coco.npz", "wb") as fh:
        np.savez(fh, **{**sound, **arrays})
    return root / "coco.npz"


def _npz_of(**arrays) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _lying_header() -> bytes:
    """An npz whose 'image' header declares 8 TB (100000000000 x 10 float64) over a few bytes of data."""
    import io
    import zipfile

    header = ("{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 10), }".ljust(118) + "\n").encode()
    npy = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("image.npy", npy + bytes(80))
        z.writestr("text.npy", npy)
        z.writestr("labels.npy", npy)
    return buffer.getvalue()


_TWO = np.ones((2, 2))
#: well-formed files with contents the layout does not allow
FEATURE_CONTENTS = {
    "object array": lambda: _npz_of(image=np.array([None, 1], dtype=object), text=_TWO, labels=_TWO),
    "strings": lambda: _npz_of(image=np.array(["a", "b"]), text=_TWO, labels=_TWO),
    "complex": lambda: _npz_of(image=np.ones((2, 2), complex), text=_TWO, labels=_TWO),
    "3-d": lambda: _npz_of(image=np.ones((2, 2, 2)), text=_TWO, labels=_TWO),
    "rows differ": lambda: _npz_of(image=np.ones((3, 2)), text=_TWO, labels=_TWO),
    "array missing": lambda: _npz_of(image=_TWO),
    "NaN": lambda: _npz_of(image=np.full((2, 2), np.nan), text=_TWO, labels=_TWO),
    "no sample labelled": lambda: _npz_of(image=_TWO, text=_TWO, labels=np.zeros((2, 2))),
    "a lying header": _lying_header,
    "a single .npy": lambda: (lambda b: (np.save(b, _TWO), b.getvalue())[1])(__import__("io").BytesIO()),
}


@pytest.mark.parametrize("corruption", [*CORRUPTIONS, *FEATURE_CONTENTS])
def test_a_damaged_feature_file_is_one_line_naming_it(tmp_path, corruption):
    """Issue 53: 113 of 128 damaged .npz files gave a zipfile/EOFError traceback before the loader went
    through core.datasets.open_data_file."""
    from explorables.uggrh.data import load_features

    path, outside = _features(tmp_path / "root"), tmp_path / "outside.npz"
    outside.write_bytes(path.read_bytes())
    if corruption in FEATURE_CONTENTS:
        path.write_bytes(FEATURE_CONTENTS[corruption]())
    else:
        CORRUPTIONS[corruption](path, outside)
    _refused_in_one_line(lambda: load_features(tmp_path / "root", "coco"), "coco.npz")


def test_a_truncated_or_bit_flipped_feature_file_is_refused_or_reads_the_same(tmp_path):
    """Every truncation is refused; a bit flip is refused (each member carries a CRC-32) unless it hit zip
    metadata that changes nothing read, and then the arrays are the sound ones."""
    from explorables.uggrh.data import load_features

    path = _features(tmp_path / "root")
    sound_bytes, sound = path.read_bytes(), load_features(tmp_path / "root", "coco")
    for cut in range(0, len(sound_bytes), max(1, len(sound_bytes) // 25)):
        path.write_bytes(sound_bytes[:cut])
        _refused_in_one_line(lambda: load_features(tmp_path / "root", "coco"), "coco.npz")
    for pos in range(0, len(sound_bytes), max(1, len(sound_bytes) // 60)):
        path.write_bytes(sound_bytes[:pos] + bytes([sound_bytes[pos] ^ 0x08]) + sound_bytes[pos + 1 :])
        try:
            data = load_features(tmp_path / "root", "coco")
        except ValueError as exc:
            assert "\n" not in str(exc) and "coco.npz" in str(exc)
        else:
            for name in ("image", "text", "labels"):
                np.testing.assert_array_equal(getattr(data, name), getattr(sound, name))
