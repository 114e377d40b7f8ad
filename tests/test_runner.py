"""The paper-scale runner: checkpoints, kill-and-resume, several processes, local datasets."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from explorables.core.checkpoint import (
    Checkpointer,
    FolderLock,
    LoopState,
    atomic_write_text,
    checkpoint_bytes,
    read_checkpoint,
)
from explorables.core.datasets import ImageFolder, load_cifar, write_cifar
from explorables.omwu import OMWUConfig, run

from .cli_runs import ENV, ROOT, kill_mid_run, untimed_results
from .cli_runs import cli as _cli

# --- checkpoints ---------------------------------------------------------------------------------


def test_checkpoint_round_trip_restores_entries_and_rng(tmp_path):
    ck = Checkpointer(tmp_path, every_s=0)
    torch.manual_seed(3)
    np.random.seed(3)  # noqa: NPY002 - the global state is what the checkpoint must carry
    ck.save("phase", {"array": np.arange(5.0), "tensor": torch.ones(2), "nested": {"x": [1, 2.5, "a", None]}})
    expected = (torch.rand(3), np.random.rand(3))  # noqa: NPY002
    torch.manual_seed(99)
    resumed = Checkpointer(tmp_path, resume=True)
    entry = resumed.get("phase")
    np.testing.assert_array_equal(entry["array"], np.arange(5.0))
    assert torch.equal(entry["tensor"], torch.ones(2)) and entry["nested"] == {"x": [1, 2.5, "a", None]}
    assert torch.equal(torch.rand(3), expected[0])
    np.testing.assert_array_equal(np.random.rand(3), expected[1])  # noqa: NPY002


@pytest.mark.parametrize(
    "view", [np.arange(3.0)[::-1], np.arange(3.0)[::-1][:1], np.arange(12.0).reshape(3, 4).T[::-1]]
)
def test_checkpoint_stores_strided_and_reversed_numpy_views(tmp_path, view):
    Checkpointer(tmp_path, every_s=0).save("view", view)
    np.testing.assert_array_equal(Checkpointer(tmp_path, resume=True).get("view"), view)


def test_checkpoint_loads_with_weights_only_and_refuses_objects(tmp_path):
    path = tmp_path / Checkpointer.FILENAME
    # an arbitrary object, with a valid header and checksum: only weights_only stands in its way
    path.write_bytes(checkpoint_bytes({"entries": {"evil": Path("/")}, "rng": {}}))
    with pytest.raises(ValueError, match="UnpicklingError"):  # weights_only refused to rebuild it
        Checkpointer(tmp_path, resume=True)


def test_atomic_write_leaves_old_or_new(tmp_path):
    target = tmp_path / "f.json"
    atomic_write_text(target, "old")
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]  # no temporary left behind


def test_resuming_finished_phases_gives_identical_results(tmp_path):
    """Phases stored in a checkpoint are reused as they are (the kill test covers loops)."""
    config = OMWUConfig.preset("smoke")
    reference = run(config)
    ck = Checkpointer(tmp_path, every_s=0)
    first = run(config.replace(), checkpoint=ck)
    assert ck.saves > 0
    resumed = run(config, checkpoint=Checkpointer(tmp_path, resume=True))
    for name in ("bottleneck", "best_iterate", "random_games", "mwu_vs_omwu"):
        assert resumed.summary[name] == reference.summary[name] == first.summary[name]


def test_kill_and_resume_matches_an_uninterrupted_run(tmp_path):
    args = ["run", "omwu", "--scale", "smoke", "--quiet", "--no-figures", "--set", "n_sweep_steps=40000"]
    full, interrupted = tmp_path / "full", tmp_path / "interrupted"
    assert _cli(*args, "--out", str(full)).returncode == 0

    # killed inside a loop, not between parts
    saved = kill_mid_run(args, interrupted, ready=lambda entries: any("/loop/" in k for k in entries))
    loops = [v for k, v in saved.items() if "/loop/" in k]
    assert loops and 0 < loops[0]["step"] < loops[0]["extra"]["steps"], "the checkpoint should hold a loop in progress"

    resumed = _cli(*args, "--out", str(interrupted), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "(resumed)" in resumed.stdout
    assert untimed_results(interrupted) == untimed_results(full)  # equal to the bit: JSON keeps every digit


def test_resuming_a_different_run_is_refused(tmp_path):
    assert _cli("run", "omwu", "--scale", "smoke", "--no-figures", "--quiet", "--out", str(tmp_path),
                "--checkpoint-every", "0").returncode == 0  # fmt: skip
    ck = read_checkpoint(tmp_path / Checkpointer.FILENAME)
    assert any(k.startswith("part/") for k in ck["entries"])
    # a checkpoint holding a loop of another length must not be silently reused
    bad = Checkpointer(tmp_path, resume=True)
    other = LoopState(None, "").state(256, {"steps": 1, "shape": [1, 2, 2], "record_every": 1})
    bad.entries = {"bottleneck/loop/bottleneck": other}
    with pytest.raises(ValueError, match="different run"):
        run(OMWUConfig.preset("smoke"), checkpoint=bad)


def test_resume_with_other_settings_is_refused(tmp_path):
    args = ["run", "omwu", "--scale", "smoke", "--no-figures", "--quiet", "--out", str(tmp_path)]
    assert _cli(*args, "--checkpoint-every", "0").returncode == 0
    before = (tmp_path / "config.json").read_text()
    proc = _cli(*args, "--resume", "--set", "eta=0.2")
    assert proc.returncode == 2 and "other settings (eta)" in proc.stderr
    assert (tmp_path / "config.json").read_text() == before  # a refused resume writes nothing
    with pytest.raises(ValueError, match="other settings"):  # the library refuses too
        run(OMWUConfig.preset("smoke", eta=0.2), checkpoint=Checkpointer(tmp_path, resume=True))
    assert _cli(*args, "--resume").returncode == 0  # same settings: fine


# --- several processes ---------------------------------------------------------------------------


def test_two_process_gloo_run_matches_single_process(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    single = subprocess.run([sys.executable, "tests/run_toy.py", "run", "toy", "--scale", "smoke", "--quiet",
                             "--out", str(one)], env=ENV, cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert single.returncode == 0, single.stderr
    double = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                             "tests/run_toy.py", "run", "toy", "--scale", "smoke", "--quiet", "--out", str(two)],
                            env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert double.returncode == 0, double.stderr[-3000:]
    a, b = json.loads((one / "results.json").read_text()), json.loads((two / "results.json").read_text())
    assert b["world_size"] == 2 and b["rank"] == 0  # written by rank 0
    assert abs(a["final_loss"] - b["final_loss"]) <= 1e-10 * a["final_loss"]
    from explorables.cli import OUT_MARKER

    visible = sorted(p.name for p in two.iterdir() if p.name not in (FolderLock.NAME, FolderLock.OWNER))
    assert visible == [OUT_MARKER, "config.json", "results.json"]  # rank 0's files, and the folder's mark
    assert double.stdout.count("wrote ") == 1  # only rank 0 reports and writes


# --- command-line errors -----------------------------------------------------------------------------


def test_missing_data_root_is_one_clear_line(tmp_path):
    proc = subprocess.run([sys.executable, "tests/run_toy.py", "run", "toy", "--scale", "paper", "--out",
                           str(tmp_path)], env=ENV, cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--data-root is required for toy at scale paper" in proc.stderr
    proc = subprocess.run([sys.executable, "tests/run_toy.py", "run", "toy", "--scale", "paper", "--data-root",
                           str(tmp_path / "nope")], env=ENV, cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 2 and "is not a folder" in proc.stderr


# --- datasets in torchvision's layouts, faked in a temporary folder ----------------------------------


def test_image_folder_reads_torchvision_layout(tmp_path):
    rng = np.random.default_rng(0)
    for c, n in (("cat", 2), ("dog", 3)):
        (tmp_path / c).mkdir()
        for i in range(n):
            Image.fromarray(rng.integers(0, 255, (6, 5, 3), dtype=np.uint8)).save(tmp_path / c / f"{i}.png")
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    ds = ImageFolder(tmp_path)
    assert ds.classes == ["cat", "dog"] and len(ds) == 5
    image, label = ds[4]
    assert image.shape == (3, 6, 5) and label == 1 and 0 <= image.min() and image.max() <= 1
    with Image.open(tmp_path / "dog" / "2.png") as img:
        np.testing.assert_allclose(image.permute(1, 2, 0).numpy(), np.asarray(img) / 255, atol=1e-6)
    with pytest.raises(ValueError, match="no class folders"):
        ImageFolder(tmp_path / "cat")


def _fake_cifar10(root: Path, per_batch: int = 4) -> np.ndarray:
    return write_cifar(root, "cifar10", n_train=5 * per_batch, n_test=per_batch, seed=1)


def test_cifar_reader_matches_the_written_arrays(tmp_path):
    written = _fake_cifar10(tmp_path)
    ds = load_cifar(tmp_path, "cifar10", train=True)
    assert ds.images.shape == (20, 3, 32, 32) and ds.labels.shape == (20,) and len(ds.classes) == 10
    np.testing.assert_array_equal(ds.images.reshape(20, -1), written)
    images, labels = ds.tensors()
    assert images.dtype == torch.float32 and labels.dtype == torch.int64
    assert load_cifar(tmp_path, "cifar10", train=False).images.shape == (4, 3, 32, 32)


def test_cifar_reader_refuses_pickled_objects(tmp_path):
    _fake_cifar10(tmp_path)
    (tmp_path / "cifar-10-batches-py" / "test_batch").write_bytes(pickle.dumps({b"data": Path("/")}))
    with pytest.raises(ValueError, match="refusing to load"):
        load_cifar(tmp_path, "cifar10", train=False)
    with pytest.raises(ValueError, match="cifar-100-python"):
        load_cifar(tmp_path, "cifar100")


def test_optimizer_state_survives_a_checkpoint(tmp_path):
    """Optimiser states are keyed by integers; a round trip must keep them (or resumed training drifts)."""
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    model(torch.ones(4, 3)).sum().backward()
    opt.step()
    Checkpointer(tmp_path, every_s=0).save("opt", opt.state_dict())
    restored = torch.optim.AdamW(model.parameters(), lr=0.1)
    restored.load_state_dict(Checkpointer(tmp_path, resume=True).get("opt"))
    assert set(restored.state_dict()["state"]) == set(opt.state_dict()["state"]) == {0, 1}
    for k in (0, 1):
        assert torch.equal(restored.state_dict()["state"][k]["exp_avg"], opt.state_dict()["state"][k]["exp_avg"])
