"""The GPU smoke script (benchmarks/gpu_smoke.py) in its CPU dry mode, and the configs it builds."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from explorables.chapters import CHAPTERS
from explorables.core.datasets import load_cifar

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("gpu_smoke", ROOT / "benchmarks" / "gpu_smoke.py")
gpu_smoke = importlib.util.module_from_spec(spec)
sys.modules["gpu_smoke"] = gpu_smoke
spec.loader.exec_module(gpu_smoke)


@pytest.mark.parametrize("slug", sorted(CHAPTERS))
def test_every_capped_paper_config_is_valid_and_capped(slug):
    config_cls = CHAPTERS[slug].module().Config
    paper = config_cls.preset("paper")
    changes = gpu_smoke.capped_overrides(paper, 20)  # the GPU run's cap
    changes.update(gpu_smoke.grid_overrides(paper, changes))
    changes.update(gpu_smoke.EXTRA.get(slug, {}))
    capped = paper.replace(**changes)  # a refused combination raises here
    for name, value in changes.items():
        if gpu_smoke.STEP_FIELD.search(name) and name not in gpu_smoke.CAP_EXEMPT:
            assert value <= getattr(paper, name), name
    # nothing but loop lengths, positions in them and the named extras changes
    assert {k for k in changes if getattr(capped, k) != getattr(paper, k)} <= set(changes)


def test_fixture_cifar_is_read_by_the_real_loader(tmp_path):
    root = gpu_smoke.write_fixtures(tmp_path)
    train, test = load_cifar(root, "cifar10", train=True), load_cifar(root, "cifar10", train=False)
    assert train.images.shape == (5 * 9_999, 3, 32, 32) and test.images.shape == (9_999, 3, 32, 32)
    c100 = load_cifar(root, "cifar100", train=True)
    assert c100.labels.max() < 100 and len(c100.classes) == 100
    z = np.load(root / "mirflickr.npz")
    assert z["labels"].sum(1).min() >= 1 and z["image"].shape[1] == 4096
    assert len(list((root / "speech").glob("*.wav"))) == 8


def test_dry_run_on_the_cpu_writes_a_table(tmp_path):
    out, rows = tmp_path / "gpu.md", tmp_path / "gpu.json"
    files = ["--out", str(out), "--json", str(rows), "--workdir", str(tmp_path / "w")]
    code = gpu_smoke.main(["--device", "cpu", "--steps", "2", "--chapters", "omwu", "--passes", "smoke",
                           "--limit-s", "900", *files])  # fmt: skip
    table = out.read_text()
    assert code == 0 and "| omwu | smoke | ok |" in table
    [row] = json.loads(rows.read_text())
    assert row["peak_mb"] > 0 and row["claim_rows"] > 0


def test_a_paper_pass_that_outlasts_its_limit_is_reported_not_raised(tmp_path):
    out, rows = tmp_path / "gpu.md", tmp_path / "gpu.json"
    files = ["--out", str(out), "--json", str(rows), "--workdir", str(tmp_path / "w")]
    gpu_smoke.main(["--device", "cpu", "--steps", "2", "--chapters", "omwu", "--passes", "paper",
                    "--limit-s", "3", *files])  # fmt: skip
    [row] = json.loads(rows.read_text())
    assert row["outcome"] in ("ok", "stopped at limit")


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        gpu_smoke.main(["--steps", "0"])
    with pytest.raises(ValueError, match="unknown chapter"):
        gpu_smoke.main(["--device", "cpu", "--chapters", "no_such_chapter"])


def test_paper_rows_carry_the_committed_plan_projection():
    from explorables.core.plan import read_plan

    planned = [s for s in sorted(CHAPTERS) if read_plan(s) is not None]
    assert planned
    notes = gpu_smoke.plan_notes(planned[0])
    assert len(notes) == 1 and notes[0].startswith("plan: peak ")
    assert gpu_smoke.plan_notes("no_such_chapter") == []
    plan = read_plan(planned[0])
    ratio = gpu_smoke.plan_notes(planned[0], peak_mb=plan["peak_bytes"] / 2e6)[0]
    assert ratio.endswith("measured peak / planned peak 0.5")


def test_loss_trends_find_every_loss_curve_and_list_the_ones_that_do_not_go_down():
    from types import SimpleNamespace

    falling = [4.0, 3.0, 2.5, 2.0, 1.5, 1.0, 0.9, 0.8]
    results = SimpleNamespace(
        summary={"final_loss": 0.8, "arm": {"losses": falling, "acc": [0.1, 0.2, 0.3, 0.4]}},
        curves={"train_loss": np.array([falling, falling[::-1]]).T,  # (steps, members): the mean is flat
                "loss_short": [1.0, 2.0],  # too short to be a curve
                "loss": [1.0, 1.0, float("nan"), 1.0, 1.0]})  # a member with a NaN: no finite column
    n, flat = gpu_smoke.loss_trends(results)
    assert n == 3 and flat == ["curves.train_loss", "curves.loss"]
    assert gpu_smoke.loss_trends(SimpleNamespace(summary={"acc": [1, 2, 3, 4]}, curves={})) == (0, [])
