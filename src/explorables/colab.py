"""The notebook copies of the chapters: ``notebooks/<nn>-<slug>.ipynb``, generated from ``book/``.

Colab, Binder and JupyterHub open these (the site's launch buttons point at them), and
``make lab`` opens them too. Each is the chapter converted to plain Jupyter Markdown by
:mod:`explorables.notebooks` (no outputs), with one first cell that

* on Colab only, installs the versions the book is tested with: the reader's pins of
  ``binder/requirements.txt`` (equal to ``requirements.txt``'s, ``tests/test_notebooks.py`` checks;
  torch is the CPU build), then the ``explorables`` package itself, without dependencies, from
  the book's repository (``repository.url`` of ``_config.yml``: the one place it is named);
* everywhere, tells :func:`explorables.notebooks.glue` how the text formats each glued number.

``tests/test_site.py`` checks that the committed notebooks are in sync; ``make notebooks``
regenerates them.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

import nbformat
import yaml

from explorables import notebooks

ROOT = Path(__file__).resolve().parents[2]
READER_REQUIREMENTS = Path("binder") / "requirements.txt"
#: Colab brings its own Jupyter front-end and kernel: never replace those
NOT_ON_COLAB = ("jupyterlab", "ipykernel", "notebook", "jupyter-server")
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][\w.-]*)==(?P<version>\S+)$")

SETUP_CELL = """\
# @title Setup (run me first): on Colab, installs the tested versions
# On Colab, this first installs the book's package and the versions it is tested with
# (torch's CPU build; a minute or two). In JupyterLab or Binder they are installed already.
import sys

if "google.colab" in sys.modules:
    pins = {pins}
    get_ipython().run_line_magic("pip", "install --quiet {index} " + " ".join(pins))
    get_ipython().run_line_magic("pip", "install --quiet --no-deps 'explorables @ git+{repo}@{branch}'")
    from explorables.notebooks import restart_if_stale

    restart_if_stale(pins)

from explorables.notebooks import glue_formats

glue_formats({formats})"""


def repository(root: Path = ROOT) -> tuple[str, str]:
    """``(url, branch)`` from ``_config.yml``."""
    config = yaml.safe_load((root / "_config.yml").read_text())
    repo = config["repository"]
    return repo["url"].rstrip("/"), repo.get("branch", "main")


def requirement_pins(path: Path) -> tuple[dict[str, str], list[str]]:
    """``({name: version}, [index options])`` of a pip requirements file (names lower-cased)."""
    pins, options = {}, []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("--"):
            options.append(line)
        elif match := PIN.match(line):
            pins[match["name"].lower()] = match["version"]
    return pins, options


def colab_pins(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """The ``name==version`` list the Colab cell installs, and pip's index options for it."""
    pins, options = requirement_pins(root / READER_REQUIREMENTS)
    return [f"{name}=={version}" for name, version in pins.items() if name not in NOT_ON_COLAB], options


def setup_cell(formats: dict[str, str], root: Path = ROOT) -> nbformat.NotebookNode:
    url, branch = repository(root)
    pins, options = colab_pins(root)
    listed = "[\n" + "".join(f"        {pin!r},\n" for pin in pins) + "    ]"
    shown = repr(dict(sorted(formats.items())))
    if len(shown) > 90:
        shown = "{\n" + textwrap.indent("".join(f"{k!r}: {v!r},\n" for k, v in sorted(formats.items())), "    ") + "}"
    source = SETUP_CELL.format(pins=listed, index=" ".join(options), repo=url, branch=branch, formats=shown)
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["colab-install"]
    cell.metadata["cellView"] = "form"  # Colab shows the title only
    cell.metadata["jupyter"] = {"source_hidden": True}  # JupyterLab: a folded input, click to show
    return cell


def colab_notebook(chapter: Path, root: Path = ROOT, out_dir: Path | None = None) -> nbformat.NotebookNode:
    """The notebook copy of one chapter (a MyST ``.md`` file), to be saved in ``out_dir``."""
    nb = notebooks.convert(chapter, out_dir=out_dir or root / "notebooks")
    formats = nb.metadata.pop("explorables", {}).get("glue_formats", {})
    nb.cells.insert(0, setup_cell(formats, root))
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"  # stable ids, so regenerating an unchanged chapter changes nothing
        if "id" in cell.metadata:
            cell.metadata["id"] = cell.id
    if "colab" in nb.metadata:
        nb.metadata["colab"]["collapsed_sections"] = [
            c.id for c in nb.cells if c.metadata.get("jp-MarkdownHeadingCollapsed")
        ]
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def chapters(root: Path = ROOT) -> list[Path]:
    return sorted((root / "book").glob("[0-9][0-9]-*.md"))


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description="Write the notebook copies of the chapters.")
    parser.add_argument("--out", type=Path, default=root / "notebooks", help="folder (default notebooks/)")
    out = parser.parse_args(argv).out
    out = out if out.is_absolute() else root / out
    out.mkdir(parents=True, exist_ok=True)
    for chapter in chapters(root):
        target = out / f"{chapter.stem}.ipynb"
        target.write_text(render(colab_notebook(chapter, root, out)))
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
