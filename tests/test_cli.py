"""The command line: run writes the promised files, matching a direct call; errors are one line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

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


def _dead(pid: int) -> bool:
    """True once ``pid`` has exited (gone, or a zombie waiting for its new parent to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_stuck_png_export_is_stopped_with_the_browser_it_started(tmp_path):
    """kaleido's Chromium once stopped answering and make test waited forever: the export now runs in
    its own process group, and a caller that has waited its time limit kills the group and goes on."""
    pidfile = tmp_path / "browser.pid"
    browser = "[sys.executable, '-c', 'import time; time.sleep(600)']"
    stuck = (f"import subprocess, sys, time; p = subprocess.Popen({browser});"
             f" open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(600)")  # fmt: skip
    names, why_not = write_pngs({"a": _figure()}, tmp_path, timeout_s=5.0, command=[sys.executable, "-c", stuck])
    assert names == [] and "still running after 5 s" in why_not
    assert not (tmp_path / "a.png").exists()
    if pidfile.exists():  # the stand-in browser had started before the limit: it is killed with its parent
        pid = int(pidfile.read_text())
        for _ in range(100):
            if _dead(pid):
                break
            time.sleep(0.1)
        assert _dead(pid)


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
