"""Two chapters at a time (``explorables.book_jobs``): on a three-notebook Sphinx project, each notebook
is executed once, by two processes, into cache records that myst-nb's own lookup finds (the helper executes
the source as the ``source-read`` handlers leave it, as Sphinx does); a failing notebook still fails the build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""

CELL = """
# Notebook {name}

```{{code-cell}} ipython3
import os
with open(os.environ["BOOK_JOBS_LOG"], "a") as log:
    log.write(f"{name} {{os.getppid()}}\\n")
{extra}print("output of {name}")
```
"""


def write_project(src: Path, extensions: list[str], pages: dict[str, str], conf_extra: str = "") -> Path:
    """A small Sphinx project of MyST notebooks in ``src``: ``pages`` maps each page's docname (``nb1``,
    ``book/01-toy``) to its body after the jupytext header, in the index's toctree in that order; myst-nb
    executes through its cache and an error in a cell fails the build. Also used by
    ``benchmarks/maketest7_scale_switch.py`` (the smoke and the book scale in one output folder)."""
    src.mkdir(parents=True)
    (src / "conf.py").write_text(
        f"extensions = {['myst_nb', *extensions]!r}\n"
        'nb_execution_mode = "cache"\nnb_execution_raise_on_error = True\nexclude_patterns = ["_build"]\n' + conf_extra
    )
    (src / "index.md").write_text("# Index\n\n```{toctree}\n" + "".join(f"{name}\n" for name in pages) + "```\n")
    for name, body in pages.items():
        (src / f"{name}.md").parent.mkdir(parents=True, exist_ok=True)
        (src / f"{name}.md").write_text(HEADER + body)
    return src


def _project(tmp_path: Path, failing: str | None = None) -> Path:
    # a source-read handler (as explorables.sphinx_ext's scale line): both processes execute its result
    handler = (
        "def setup(app):\n"
        "    app.connect('source-read', lambda app, docname, source: source.__setitem__(\n"
        "        0, source[0].replace('output of', 'rewritten output of')))\n"
    )
    pages = {
        name: CELL.format(name=name, extra="raise RuntimeError('this notebook fails')\n" if name == failing else "")
        for name in ("nb1", "nb2", "nb3")
    }
    return write_project(tmp_path / "src", ["explorables.book_jobs"], pages, handler)


def _build(src: Path, jobs: int, log: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "EXPLORABLES_BOOK_JOBS": str(jobs),
        "BOOK_JOBS_LOG": str(log),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(src / "_build" / "html")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _runs(log: Path) -> list[tuple[str, int]]:
    lines = log.read_text().split() if log.exists() else []
    return list(zip(lines[::2], map(int, lines[1::2]), strict=True))


def test_two_processes_execute_each_notebook_once_into_the_cache_myst_nb_reads(tmp_path):
    src, log = _project(tmp_path), tmp_path / "runs.log"
    done = _build(src, 2, log)
    assert done.returncode == 0, done.stderr[-4000:]
    runs = _runs(log)
    assert sorted(name for name, _ in runs) == ["nb1", "nb2", "nb3"]  # each executed once
    assert len({parent for _, parent in runs}) == 2  # by Sphinx's process and by the helper
    for name in ("nb1", "nb2", "nb3"):
        assert f"rewritten output of {name}" in (src / "_build" / "html" / f"{name}.html").read_text()
    # a serial build from scratch on the same cache executes nothing: myst-nb's lookup finds every record
    again = tmp_path / "again"
    shutil.copytree(src, again, ignore=shutil.ignore_patterns("html", "doctrees"))
    done = _build(again, 1, log)
    assert done.returncode == 0, done.stderr[-4000:]
    assert len(_runs(log)) == 3
    assert "rewritten output of nb2" in (again / "_build" / "html" / "nb2.html").read_text()


def test_a_failing_notebook_still_fails_the_build(tmp_path):
    src, log = _project(tmp_path, failing="nb3"), tmp_path / "runs.log"  # nb3: the helper's first
    done = _build(src, 2, log)
    assert done.returncode != 0
    assert "ExecutionError" in done.stderr and "nb3.md" in done.stderr  # myst-nb's own error (raise_on_error)
    runs = _runs(log)
    assert sorted(name for name, _ in runs if name != "nb3") == ["nb1", "nb2"]  # the others once each
