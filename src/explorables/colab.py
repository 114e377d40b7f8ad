"""Colab copies of the chapters: ``notebooks/<nn>-<slug>.ipynb``, generated from ``book/``.

Colab opens only ``.ipynb`` files, while the chapters are MyST-markdown notebooks. This module
converts each chapter with jupytext (no outputs) and prepends one cell that, on Colab only,
installs the ``explorables`` package from the book's repository (the ``repository.url`` of
``_config.yml``: the one place the repository is named). ``tests/test_site.py`` checks that the
committed notebooks are in sync; ``make notebooks`` regenerates them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[2]

INSTALL_CELL = """\
# On Colab, install this book's package first (elsewhere this cell does nothing).
import sys

if "google.colab" in sys.modules:
    get_ipython().run_line_magic("pip", "install --quiet 'explorables @ git+{repo}@{branch}' myst-nb")"""


def repository(root: Path = ROOT) -> tuple[str, str]:
    """``(url, branch)`` from ``_config.yml``."""
    config = yaml.safe_load((root / "_config.yml").read_text())
    repo = config["repository"]
    return repo["url"].rstrip("/"), repo.get("branch", "main")


def colab_notebook(chapter: Path, root: Path = ROOT) -> nbformat.NotebookNode:
    """The Colab notebook for one chapter (a MyST ``.md`` file)."""
    url, branch = repository(root)
    nb = jupytext.read(chapter)
    cell = nbformat.v4.new_code_cell(INSTALL_CELL.format(repo=url, branch=branch))
    cell.metadata["tags"] = ["colab-install"]
    nb.cells.insert(0, cell)
    nb.metadata.pop("jupytext", None)
    for i, c in enumerate(nb.cells):
        c.id = f"cell-{i}"  # stable ids, so regenerating an unchanged chapter changes nothing
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def chapters(root: Path = ROOT) -> list[Path]:
    return sorted((root / "book").glob("[0-9][0-9]-*.md"))


def main(root: Path = ROOT) -> int:
    out = root / "notebooks"
    out.mkdir(exist_ok=True)
    for chapter in chapters(root):
        target = out / f"{chapter.stem}.ipynb"
        target.write_text(render(colab_notebook(chapter, root)))
        print(f"wrote {target.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
