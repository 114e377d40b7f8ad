"""The runner under careless or hostile use: corrupt checkpoints, shared output folders, killed writes, bad options."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from explorables.cli import main
from explorables.core.checkpoint import Checkpointer, FolderLock, read_checkpoint, remove_stale_temporaries
from explorables.core.config import ExperimentConfig

SMOKE = ["run", "omwu", "--scale", "smoke", "--quiet", "--no-figures"]


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00garbage" * 50, b"PK\x03\x04truncated-zip", None],
    ids=["empty", "random-bytes", "truncated", "foreign-tensor"],
)
def test_a_corrupt_checkpoint_is_one_clear_line_and_nothing_is_overwritten(tmp_path, capsys, content):
    path = tmp_path / Checkpointer.FILENAME
    if content is None:
        import torch

        torch.save({"weights": torch.ones(2)}, path)  # a real torch file, but not ours
    else:
        path.write_bytes(content)
    before = path.read_bytes()
    assert main([*SMOKE, "--out", str(tmp_path), "--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot be used" in err and "--restart" in err
    assert path.read_bytes() == before and not (tmp_path / "results.json").exists()
    with pytest.raises(ValueError, match="cannot be used"):
        read_checkpoint(path)


def _sound_checkpoint(folder) -> bytes:
    assert main([*SMOKE, "--out", str(folder), "--checkpoint-every", "0"]) == 0
    return (folder / Checkpointer.FILENAME).read_bytes()


def _bit_flipped(data: bytes) -> bytes:
    i = len(data) // 2
    return data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1 :]


@pytest.mark.parametrize(
    "corrupt", ["one-byte", "truncated", "bit-flipped", "link-out", "fifo", "folder", "old-format"]
)
def test_any_damaged_checkpoint_is_refused_in_one_line_without_waiting(tmp_path, capsys, corrupt):
    sound = _sound_checkpoint(tmp_path / "sound")
    path = tmp_path / "run" / Checkpointer.FILENAME
    path.parent.mkdir()
    if corrupt == "one-byte":
        path.write_bytes(sound[:1])
    elif corrupt == "truncated":
        path.write_bytes(sound[: len(sound) - 100])
    elif corrupt == "bit-flipped":  # would load and resume with changed numbers without the checksum
        path.write_bytes(_bit_flipped(sound))
    elif corrupt == "link-out":
        path.symlink_to("/etc/passwd")
    elif corrupt == "fifo":  # opening a FIFO for reading would wait for a writer for ever
        os.mkfifo(path)
    elif corrupt == "folder":
        path.mkdir()
    else:  # a bare torch file of our old format: no header, no checksum
        import torch

        torch.save({"entries": {}, "rng": {}}, path)
    with pytest.raises(ValueError, match="cannot be used"):
        read_checkpoint(path)
    if corrupt != "link-out":  # a link is refused earlier, as a link in --out (below)
        assert main([*SMOKE, "--out", str(path.parent), "--resume"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--restart" in err


def _crafted(payload: dict, case: str):
    """``payload`` (a sound checkpoint's) with one field replaced as ``case`` says; the field named in the refusal."""
    import json

    import torch

    entries, rng = payload["entries"], payload["rng"]
    part = next(k for k in entries if k.startswith("part/"))
    numpy_state, python_state = json.loads(rng["numpy"]), json.loads(rng["python"])
    return {
        "entry values str": ({"entries": {k: "garbage" for k in entries}, "rng": rng}, "entries['run']"),
        "entry values list": ({"entries": {k: [1, 2, 3] for k in entries}, "rng": rng}, "entries['run']"),
        "rng torch float": ({"entries": entries, "rng": {**rng, "torch": torch.zeros(3)}}, "rng['torch']"),
        "rng torch short": ({"entries": entries, "rng": {**rng, "torch": torch.zeros(7, dtype=torch.uint8)}},
                            "rng['torch']"),
        "rng numpy keys": ({"entries": entries, "rng": {**rng, "numpy": json.dumps([numpy_state[0], [-1] * 624,
                                                                                    *numpy_state[2:]])}},
                           "rng['numpy']"),
        "rng numpy tensor": ({"entries": entries, "rng": {**rng, "numpy": torch.ones(3)}}, "rng['numpy']"),
        "rng python gauss": ({"entries": entries, "rng": {**rng, "python": json.dumps([*python_state[:2], "x"])}},
                             "rng['python']"),
        "rng cuda": ({"entries": entries, "rng": {**rng, "cuda": "x"}}, "rng['cuda']"),
        "part without summary": ({"entries": {**entries, part: {"curves": {}, "seconds": 1.0}}, "rng": rng}, part),
        "part seconds": ({"entries": {**entries, part: {**entries[part], "seconds": "x"}}, "rng": rng}, part),
        "numpy tag": ({"entries": {**entries, "x": {"__numpy__": "x"}}, "rng": rng}, "entries['x']"),
        "entry keys": ({"entries": {1: 2, **entries}, "rng": rng}, "entries"),
        "extra field": ({"entries": entries, "rng": rng, "more": 1}, "entries and rng"),
    }[case]


@pytest.mark.parametrize(
    "case",
    ["entry values str", "entry values list", "rng torch float", "rng torch short", "rng numpy keys",
     "rng numpy tensor", "rng python gauss", "rng cuda", "part without summary", "part seconds", "numpy tag",
     "entry keys", "extra field"],
)  # fmt: skip
def test_a_crafted_checkpoint_with_a_valid_checksum_is_refused_naming_the_field(tmp_path, capsys, case):
    """Issue 53: the checksum proves a file is the one written, not what it holds; 3 of 7 crafted checkpoints
    with a valid checksum gave a traceback (AttributeError in Checkpointer.bind, TypeError in
    torch.set_rng_state). Every one is now one line naming the file and the field, and nothing is written."""
    from explorables.core.checkpoint import checkpoint_bytes

    _sound_checkpoint(tmp_path / "sound")
    payload = read_checkpoint(tmp_path / "sound" / Checkpointer.FILENAME)
    crafted, field = _crafted(payload, case)
    path = tmp_path / "run" / Checkpointer.FILENAME
    path.parent.mkdir()
    path.write_bytes(checkpoint_bytes(crafted))
    with pytest.raises(ValueError, match="cannot be used"):
        read_checkpoint(path)
    capsys.readouterr()
    assert main([*SMOKE, "--out", str(path.parent), "--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and field in err and "--restart" in err, err
    assert not (path.parent / "results.json").exists() and not (path.parent / "config.json").exists()


def test_the_runner_never_writes_through_links_and_removes_only_its_own_temporaries(tmp_path, capsys):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").symlink_to(target)
    assert main([*SMOKE, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "symbolic links" in err and "results.json" in err
    assert target.read_text() == "keep me"
    (out / "results.json").unlink()
    foreign = [out / ".notes.tmp", out / ".draft.tmp", out / "data.1.tmp"]  # not of the form .<name>.<pid>.tmp
    for f in foreign:
        f.write_text("someone else's")
    ours = out / f".{Checkpointer.FILENAME}.12345.tmp"
    ours.write_bytes(b"x")
    assert remove_stale_temporaries(out) == [ours]
    assert all(f.exists() for f in foreign)


@pytest.mark.parametrize(
    "foreign",
    [{"notes.txt": "mine"}, {"config.json": '{"lr": 0.1}'}, {"results.json": "[1]", "paper.tex": "x"},
     {"data/": ""}, {"plotly.min.js": "my own"}],
    ids=["notes", "someone's config.json", "someone's results.json", "a subfolder", "a figure's name"],
)  # fmt: skip
def test_an_unmarked_out_holding_foreign_files_is_refused_and_left_untouched(tmp_path, capsys, foreign):
    """Issue 53: a run wrote config.json, results.json and checkpoint.pt into any existing --out (6 of 6 folders
    holding someone else's files). A folder without the marker that holds files the runner did not write is
    refused in one line naming it and the way to mark it; nothing in it changes."""
    from explorables.cli import OUT_MARKER

    out = tmp_path / "out"
    out.mkdir()
    for name, text in foreign.items():
        (out / name.rstrip("/")).mkdir() if name.endswith("/") else (out / name).write_text(text)
    before = sorted(p.name for p in out.iterdir())
    assert main([*SMOKE, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(out) in err and f"touch {out / OUT_MARKER}" in err, err
    assert sorted(p.name for p in out.iterdir()) == before
    assert all((out / n).read_text() == t for n, t in foreign.items() if not n.endswith("/"))


def test_a_marked_new_empty_or_earlier_run_folder_is_written(tmp_path, capsys):
    """The runner marks every --out it uses (one it creates, or an empty one) and writes into a marked one even
    beside foreign files; a folder of an earlier run (config.json of a chapter, results.json, checkpoint.pt,
    no marker) is still resumed."""
    from explorables.cli import OUT_MARKER

    new, empty = tmp_path / "new" / "deeper", tmp_path / "empty"
    empty.mkdir()
    for out in (new, empty):
        assert main([*SMOKE, "--out", str(out)]) == 0
        assert (out / OUT_MARKER).is_file() and (out / "results.json").is_file()
    (empty / "notes.txt").write_text("mine")  # a marked folder: the user's own file beside the run's is fine
    assert main([*SMOKE, "--out", str(empty), "--checkpoint-every", "0"]) == 0
    assert (empty / "notes.txt").read_text() == "mine"
    (empty / "notes.txt").unlink()
    (empty / OUT_MARKER).unlink()  # a run of a version before the marker
    assert main([*SMOKE, "--out", str(empty), "--resume"]) == 0
    assert (empty / OUT_MARKER).is_file()
    (empty / OUT_MARKER).unlink()
    (empty / "config.json").write_text('{"chapter": "not a chapter"}')
    assert main([*SMOKE, "--out", str(empty), "--resume"]) == 2
    assert "config.json" in capsys.readouterr().err


def test_a_module_planted_in_the_working_directory_never_runs(tmp_path):
    for name in ("doctest", "inspect", "typing_extensions"):
        (tmp_path / f"{name}.py").write_text("raise SystemExit('PLANTED')\n")
    proc = subprocess.run([sys.executable, "-m", "explorables", "list"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0 and "PLANTED" not in proc.stdout + proc.stderr
    assert "rpkd" in proc.stdout


def test_a_terminated_run_ends_in_one_line_and_can_resume(tmp_path):
    args = [sys.executable, "-m", "explorables", "run", "muon", "--scale", "smoke", "--quiet", "--no-figures",
            "--out", str(tmp_path), "--checkpoint-every", "0"]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # wait for the first checkpoint (bounded by the run itself: it ends on its own if never signalled)
    while proc.poll() is None and not (tmp_path / Checkpointer.FILENAME).exists():
        time.sleep(0.05)
    if proc.poll() is not None:
        pytest.fail("the smoke run ended before its first checkpoint")
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=300)[1].strip()
    assert proc.returncode == 130, err
    assert err.splitlines() == ["explorables: interrupted; continue with the same command and --resume"]
    read_checkpoint(tmp_path / Checkpointer.FILENAME)  # the last checkpoint is sound
    assert main(["run", "muon", "--scale", "smoke", "--quiet", "--no-figures", "--out", str(tmp_path),
                 "--resume"]) == 0  # fmt: skip


def test_restart_deletes_the_checkpoint_and_runs(tmp_path):
    (tmp_path / Checkpointer.FILENAME).write_bytes(b"junk")
    assert main([*SMOKE, "--out", str(tmp_path), "--restart"]) == 0
    assert (tmp_path / "results.json").exists()
    read_checkpoint(tmp_path / Checkpointer.FILENAME)  # the new one is sound
    assert main([*SMOKE, "--out", str(tmp_path), "--restart", "--resume"]) == 2


def test_a_folder_held_by_a_live_run_is_refused_and_a_killed_owner_never_blocks(tmp_path, capsys):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom explorables.core.checkpoint import FolderLock\n"
         "lock = FolderLock(sys.argv[1])\nlock.acquire()\nprint('held', flush=True)\ntime.sleep(120)", str(tmp_path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main([*SMOKE, "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "another run" in err and str(tmp_path) in err
        assert f"pid {holder.pid}" in err  # the holder's host and pid, for the reader
        assert not (tmp_path / "config.json").exists()
    finally:
        holder.kill()  # SIGKILL: the owner gets no chance to release its lock
        holder.wait()
    # the owner is gone: the next run takes the folder, then releases it
    assert main([*SMOKE, "--out", str(tmp_path)]) == 0
    with FolderLock(tmp_path):
        pass


def test_two_runs_into_one_folder_never_mix_their_files(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "explorables", *SMOKE, "--out", str(tmp_path)]
    procs = [subprocess.Popen([*cmd, "--seed", str(s)], env=env, stderr=subprocess.PIPE, text=True) for s in (0, 1)]
    outcomes = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in outcomes)
    # either both ran one after the other, or the second was refused: never a silent mix
    assert codes in ([0, 0], [0, 2])
    if codes == [0, 2]:
        assert any("another run" in err for _, err in outcomes)
    import json

    seed = json.loads((tmp_path / "config.json").read_text())["seed"]
    ck = Checkpointer(tmp_path, resume=True)
    assert ck.get("run")["seed"] == seed


def test_leftover_temporaries_are_removed_when_a_run_starts(tmp_path):
    stale = tmp_path / f".{Checkpointer.FILENAME}.99999999.tmp"
    stale.write_bytes(b"x" * 1000)
    assert remove_stale_temporaries(tmp_path) == [stale] and not stale.exists()
    stale.write_bytes(b"x")
    assert main([*SMOKE, "--out", str(tmp_path)]) == 0
    assert not stale.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--checkpoint-every", "nan"], "--checkpoint-every must be a finite number"),
        (["--checkpoint-every", "-1"], "--checkpoint-every must be a finite number"),
        (["--seed", "-1"], "seed must be an integer in [0, 4294967295]"),
        (["--seed", str(2**64)], "seed must be an integer in [0, 4294967295]"),
        (["--set", "data_root=/nonexistent/folder"], "data_root must be an existing folder"),
    ],
)
def test_bad_options_are_refused_before_any_work(tmp_path, capsys, extra, message):
    out = tmp_path / "out"
    assert main([*SMOKE, "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not (out / "config.json").exists()


def test_out_that_is_a_file_or_under_a_file_is_refused(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out in (afile, afile / "sub"):
        assert main([*SMOKE, "--out", str(out)]) == 2
        assert "is a file, not a folder" in capsys.readouterr().err
    assert afile.read_text() == "x"


def test_data_root_must_exist_through_the_api_too(tmp_path):
    with pytest.raises(ValueError, match="data_root must be an existing folder"):
        ExperimentConfig(data_root=str(tmp_path / "missing")).validated()
    assert ExperimentConfig(data_root=str(tmp_path)).validated().data_root == str(tmp_path)


# --- memory: refused before any work, with the estimate (issue 29) ----------------------------------


def test_check_memory_names_the_biggest_items_and_the_budget():
    from explorables.core.resources import GIB, check_memory

    check_memory({"small": 1.0}, budget=GIB)  # fits: nothing happens
    with pytest.raises(ValueError, match=r"about 3\.0 GiB.*1\.0 GiB.*matrices \(n\^2\): 2\.0 GiB; vectors"):
        check_memory({"vectors": 1.0 * GIB, "matrices (n^2)": 2.0 * GIB}, budget=GIB)


def test_available_memory_honours_the_override(monkeypatch):
    from explorables.core.resources import GIB, available_memory_bytes

    monkeypatch.delenv("EXPLORABLES_MEMORY_GB", raising=False)
    assert available_memory_bytes() > 0.1 * GIB
    monkeypatch.setenv("EXPLORABLES_MEMORY_GB", "1.5")
    assert available_memory_bytes() == int(1.5 * GIB)
    for bad in ("lots", "-2", "0"):
        monkeypatch.setenv("EXPLORABLES_MEMORY_GB", bad)
        with pytest.raises(ValueError, match="EXPLORABLES_MEMORY_GB"):
            available_memory_bytes()


def test_an_oversized_setting_is_refused_before_any_work(monkeypatch):
    """omwu's random_game_size=200000 used to die in numpy with a 298 GiB allocation traceback."""
    from explorables.omwu import OMWUConfig

    config = OMWUConfig.preset("smoke")
    with pytest.raises(ValueError, match=r"random_game_size\^2\): [\d,.]+ GiB"):
        config.replace(random_game_size=200_000)
    monkeypatch.setenv("EXPLORABLES_MEMORY_GB", "0.001")  # 1 MiB: even the smoke preset cannot fit
    with pytest.raises(ValueError, match=r"more than the 0\.0 GiB"):
        OMWUConfig.preset("smoke").validated()


@pytest.mark.parametrize("scale", ["smoke", "book"])
def test_every_chapter_fits_its_own_presets_in_a_laptop(scale, monkeypatch):
    """The estimates never refuse what the book itself runs (8 GiB is a small laptop)."""
    from explorables.chapters import CHAPTERS

    monkeypatch.setenv("EXPLORABLES_MEMORY_GB", "8")
    for chapter in CHAPTERS.values():
        chapter.module().Config.preset(scale).validated()
