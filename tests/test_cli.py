"""The command line: run writes the promised files, matching a direct call; errors are one line."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from explorables.cli import main
from explorables.omwu import OMWUConfig, run
from explorables.png_export import write_pngs


def test_run_smoke_writes_files_matching_a_direct_call(tmp_path):
    out = tmp_path / "omwu"
    assert main(["run", "omwu", "--scale", "smoke", "--out", str(out), "--no-figures"]) == 0
    config = json.loads((out / "config.json").read_text())
    results = json.loads((out / "results.json").read_text())
    assert config["scale"] == "smoke" and config["eta"] == OMWUConfig.preset("smoke").eta
    direct = run(OMWUConfig.preset("smoke")).summary
    assert results["bottleneck"]["rate_at_eta"] == direct["bottleneck"]["rate_at_eta"]
    assert results["best_iterate"]["rows"] == direct["best_iterate"]["rows"]


def test_set_overrides_are_parsed_with_the_field_type(tmp_path):
    out = tmp_path / "o"
    assert (
        main(
            [
                "run",
                "omwu",
                "--scale",
                "smoke",
                "--out",
                str(out),
                "--no-figures",
                "--set",
                "eta=0.2",
                "--set",
                "horizon_grid=10,100",
            ]
        )
        == 0
    )
    config = json.loads((out / "config.json").read_text())
    assert config["eta"] == 0.2 and config["horizon_grid"] == [10, 100]


def test_figures_are_written_as_html_and_png(tmp_path):
    assert main(["run", "omwu", "--scale", "smoke", "--quiet", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "explorable.html").stat().st_size > 1000
    assert (tmp_path / "plotly.min.js").exists()
    if shutil.which("chromium") or shutil.which("google-chrome"):  # kaleido needs a browser
        png = (tmp_path / "explorable.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def _figure():
    import plotly.graph_objects as go

    return go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 0, 1]))


def _alive_with(marker: str) -> list[int]:
    """Processes (zombies aside) whose command line holds ``marker``."""
    import psutil

    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        with contextlib.suppress(psutil.Error):
            if proc.info["status"] != psutil.STATUS_ZOMBIE and any(marker in a for a in proc.info["cmdline"] or []):
                found.append(proc.pid)
    return found


def test_a_stuck_png_export_is_stopped_with_the_browser_it_started(tmp_path):
    """kaleido's Chromium once stopped answering and make test waited forever: the export now runs in a child
    process, and a caller that has waited its time limit kills the child and what it started, then goes on. The
    stand-in browser starts in a session of its own (as choreographer starts Chromium) and keeps the child's
    stderr open, so neither a kill of the child's process group nor a wait for the end of a pipe would end it."""
    marker = f"explorables-stand-in-browser-{uuid.uuid4().hex}"
    browser = f"[sys.executable, '-c', 'import time; time.sleep(600)', {marker!r}]"
    stuck = (f"import subprocess, sys, time; subprocess.Popen({browser}, start_new_session=True);"
             " time.sleep(600)")  # fmt: skip
    names, why_not = write_pngs({"a": _figure()}, tmp_path, timeout_s=5.0, command=[sys.executable, "-c", stuck])
    assert names == [] and "still running after 5 s" in why_not
    assert not (tmp_path / "a.png").exists()
    for _ in range(100):  # SIGKILL is sent before write_pngs returns; the process may take a moment to go
        if not _alive_with(marker):
            break
        time.sleep(0.1)
    assert _alive_with(marker) == []


def test_a_failed_png_export_gives_its_last_error_line_and_no_names(tmp_path):
    names, why_not = write_pngs({"a": _figure()}, tmp_path,
                                command=[sys.executable, "-c", "import sys; sys.exit('no browser here')"])  # fmt: skip
    assert (names, why_not) == ([], "no browser here")
    with pytest.raises(ValueError, match="timeout_s must be > 0"):
        write_pngs({"a": _figure()}, tmp_path, timeout_s=0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "nosuch"], "unknown chapter 'nosuch'"),
        (["run", "omwu", "--set", "nokey=1"], "unknown config key 'nokey'"),
        (["run", "omwu", "--set", "eta=fast"], "expects float"),
        (["run", "omwu", "--set", "eta"], "key=value"),
        (["run", "omwu", "--set", "eta=-1"], "eta must be"),
    ],
)
def test_errors_are_one_clear_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_list_and_module_entry_point():
    proc = subprocess.run([sys.executable, "-m", "explorables", "list"], capture_output=True, text=True, check=True)
    assert "omwu" in proc.stdout and "paper" in proc.stdout


def test_every_book_chapter_is_registered_with_presets():
    from pathlib import Path

    from explorables.chapters import CHAPTERS
    from explorables.core.config import SCALES

    root = Path(__file__).resolve().parents[1]
    for page in sorted((root / "book").glob("[0-9][0-9]-*.md")):
        number, slug = int(page.stem[:2]), page.stem[3:]
        assert slug in CHAPTERS, f"{page.name} is not registered in explorables/chapters.py"
        assert CHAPTERS[slug].number == number
        module = CHAPTERS[slug].module()
        for scale in SCALES:
            assert module.Config.preset(scale).validated() is not None
        assert callable(module.run)
