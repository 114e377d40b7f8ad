"""Each page of the book executed from a cold kernel at the smoke scale, once per pytest process.

``make test`` builds no website (``make test-site`` and CI's book step do, ``tests/test_book.py``); it executes every
page instead, as the build's kernels would: the page's source with its ``SCALE = "book"`` line set to ``"smoke"``
(:func:`explorables.sphinx_ext.set_page_scale`, what ``EXPLORABLES_BOOK_SCALE=smoke`` does in a build), read as myst-nb
reads it (jupytext's MyST format), executed by nbclient (the executor myst-nb uses) in a kernel of its own with the
page's folder as working directory, the build's per-cell timeout and no error allowed. A chapter page gets one more
cell at its end, which records whether its run was the smoke preset and its run's summary
(``tests/test_contract.py::test_same_seed_gives_identical_summaries`` compares that run with the smoke run of the
test process). A first cell sets the kernel's threads as the test processes have them (``_THREADS``).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import torch
from nbclient import NotebookClient

from explorables.sphinx_ext import set_page_scale

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
#: every page of the book that has code to execute (the chapters, the synthesis, the execution statistics)
PAGES = sorted(page for page in BOOK.glob("*.md") if "```{code-cell}" in page.read_text())
#: the build's per-cell bound (``_config.yml`` ``execute: timeout``): it only catches a hang
TIMEOUT_S = 1200

#: the output types of a figure (``explorables.core.plotting.show``: plotly's bundle, or a matplotlib PNG)
FIGURE_TYPES = ("application/vnd.plotly.v1+json", "image/png")

#: the page's first cell: torch and the package imported, and torch's threads set, as tests/conftest.py does in the
#: test processes (the kernel inherits their environment, so the BLAS libraries get the same thread counts): a run
#: in the kernel then computes what the same run in a test process computes, to the last bit (with torch on one
#: thread and the BLAS on the package's count, sensory's CKA values differed in the last digit)
_THREADS = """\
import os as _os
import torch as _torch
import explorables as _explorables
_torch.set_num_threads(int(_os.environ["EXPLORABLES_TEST_THREADS"]))
"""

#: the chapter page's last cell: whether ``results`` is the smoke preset's run, and its summary
_RECORD = """\
import json as _json
from explorables.cli import _jsonable as _jsonable_
with open({path!r}, "w") as _f:
    _json.dump({{"smoke_preset": bool(results.config == type(results.config).preset("smoke")),
                "summary": _jsonable_(results.summary)}}, _f)
"""

_RUNS: dict[str, Any] = {}
_OUT = tempfile.TemporaryDirectory(prefix="explorables-pages-")


def is_chapter(stem: str) -> bool:
    return stem[:2].isdigit()


def chapter_page(slug: str) -> str:
    """The page (file stem) of chapter ``slug``: ``book/NN-<slug>.md``."""
    (page,) = BOOK.glob(f"[0-9][0-9]-{slug}.md")
    return page.stem


def executed_page(stem: str) -> dict[str, Any]:
    """Execute page ``book/<stem>.md`` at the smoke scale on the first call of the process, and return its record:
    ``seconds`` (wall), ``figures`` (outputs that draw one), ``tracebacks`` (printed outputs holding one), and for a
    chapter ``smoke_preset`` and ``summary``. A page that failed raises its error on
    every call (it is executed once)."""
    if stem not in _RUNS:
        try:
            _RUNS[stem] = _execute(stem)
        except Exception as error:  # kept, and raised again to every caller
            _RUNS[stem] = error
    record = _RUNS[stem]
    if isinstance(record, Exception):
        raise record
    return record


def _execute(stem: str) -> dict[str, Any]:
    page = BOOK / f"{stem}.md"
    text = page.read_text()
    if is_chapter(stem):
        text = set_page_scale(text, "smoke", page.name)
    notebook = jupytext.reads(text, fmt="myst")
    record_path = Path(_OUT.name) / f"{stem}.json"
    notebook.cells.insert(0, nbformat.v4.new_code_cell(_THREADS))
    if is_chapter(stem):
        notebook.cells.append(nbformat.v4.new_code_cell(_RECORD.format(path=str(record_path))))
    client = NotebookClient(
        notebook, timeout=TIMEOUT_S, allow_errors=False, resources={"metadata": {"path": str(page.parent)}}
    )
    start = time.monotonic()
    # the kernel runs in the page's folder: a relative PYTHONPATH (``PYTHONPATH=src`` in a worktree) made absolute, so
    # that it imports the package the test process imports
    path = os.pathsep.join(
        os.path.abspath(entry) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry
    )
    env = {**os.environ, "EXPLORABLES_TEST_THREADS": str(torch.get_num_threads()), "PYTHONPATH": path}
    client.execute(env=env)
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", [])]
    record: dict[str, Any] = {
        "seconds": time.monotonic() - start,
        # what tests/test_book.py checks on the built page: figures drawn, no traceback printed
        "figures": sum(any(kind in output.get("data", {}) for kind in FIGURE_TYPES) for output in outputs),
        "tracebacks": sum("Traceback (most recent call last)" in output.get("text", "") for output in outputs),
    }
    if is_chapter(stem):
        record.update(json.loads(record_path.read_text()))
    return record
