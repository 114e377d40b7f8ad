"""The chapters as the notebook front-ends get them (explorables.notebooks, explorables.colab),
the reader environments' pins (binder/, the Colab cell) and the thread setting (core.threads)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap
from contextlib import redirect_stdout
from pathlib import Path

import jupytext
import nbformat
import pytest

from explorables import colab, notebooks
from explorables.core import threads

from .conftest import CHAPTERS, ROOT

# --- a synthetic chapter with every MyST construct the chapters use -------------------------------

MODULE = '''\
"""A module whose functions a chapter shows."""


def helper(x):
    return x


@staticmethod
def omwu_step(u, g, g_prev, eta):
    """One step, eq. (omwu-step)."""
    return u - eta * (2 * g - g_prev)  # eq. (omwu-step)


class Lab:
    def redraw(self):
        return "drawn"
'''

BIB = """\
@inproceedings{smith2020one, title={One}, author={Smith, Ann}, booktitle={NeurIPS}, year={2020}}
@article{jones2021two, title={Two}, author={Jones, Bob and Lee, Cy}, journal={J}, year={2021}}
@article{grand2024three, title={Three}, author={Grand-Cl{\\'e}ment, Julien and Roe, D. and Poe, E.}, journal={J},
  year={2024}}
"""

CHAPTER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

(chapter-demo)=
# 99. A demo chapter

```{include} _includes/box.md
```

## The idea

{cite:t}`smith2020one` propose the step below, following earlier work {cite:p}`jones2021two,grand2024three`.

```{math}
:label: demo-step
u_{t+1} = u_t - \\eta\\,(2g_t - g_{t-1})
```

```{math}
:label: demo-energy
E = \\mathrm{KL}(x^* \\| x)
```

The step {eq}`demo-step` lowers the energy {eq}`demo-energy`; see {ref}`chapter-demo` and {doc}`intro`.

```{literalinclude} ../src/demo/dynamics.py
:pyobject: omwu_step
:caption: One step, eq. {eq}`demo-step` (from `demo/dynamics.py`)
```

```{code-cell} ipython3
from myst_nb import glue

rate = 0.123456
glue("rate", rate, display=False)
glue("label", "closes", display=False)
```

The measured rate is {glue:text}`rate:.3f` and the gap {glue:text}`label`.

```{admonition} A note
:class: tip
Inline `{glue:text}` in code stays as it is.
```

```python
print("{cite:p}`not-a-role-in-code`")
```

```{figure} img/pic.png
:alt: a picture
The caption.
```

## Exercises

````{exercise} Scaling by hand
:label: demo-ex-scaling
Measure the rate at two step sizes. By what factor should it change?
````

````{solution-start} demo-ex-scaling
:class: dropdown
````
The rate scales like $\\eta^2$, so by about 9.

```{code-cell} ipython3
print("SOLUTION-CODE", rate * 9)
```

````{solution-end}
````

Text after the exercise, which must stay visible.

```{admonition} Solution
:class: dropdown
An old-style folded box.
```

```{bibliography}
:filter: docname in docnames
```
"""


@pytest.fixture()
def demo(tmp_path: Path) -> Path:
    (tmp_path / "book" / "_includes").mkdir(parents=True)
    (tmp_path / "src" / "demo").mkdir(parents=True)
    (tmp_path / "src" / "demo" / "dynamics.py").write_text(MODULE)
    (tmp_path / "book" / "_includes" / "box.md").write_text(
        "```{admonition} Shared box\n:class: note\nIncluded text with {cite:p}`smith2020one`.\n```\n"
    )
    (tmp_path / "book" / "references.bib").write_text(BIB)
    (tmp_path / "book" / "intro.md").write_text("# Introduction\n")
    chapter = tmp_path / "book" / "99-demo.md"
    chapter.write_text(CHAPTER)
    return chapter


def test_a_label_of_another_chapter_becomes_a_link_to_its_notebook(demo):
    (demo.parent / "98-other.md").write_text("(chapter-other)=\n# 98. The other chapter\n")
    demo.write_text(demo.read_text() + "\nSee also {ref}`chapter-other` and {ref}`chapter-missing`.\n")
    text = _markdown(notebooks.convert(demo))
    assert "See also [98. The other chapter](98-other.ipynb) and chapter-missing." in text


def _markdown(nb: nbformat.NotebookNode) -> str:
    """What a reader of ``nb`` sees as text (Markdown cells and live text cells' saved output)."""
    return "\n\n".join(notebooks.texts(nb))


def test_every_construct_becomes_plain_markdown(demo):
    nb = notebooks.convert(demo)
    text = _markdown(nb)
    assert notebooks.myst_left(nb) == []
    # citations, author-year, and the reference list of exactly the cited works
    assert "Smith (2020) propose" in text
    assert "(Jones and Lee, 2021; Grand-Clément et al., 2024)" in text
    assert text.count("\n- ") == 3 and "Grand\\-Clément" in text
    # equations numbered as the site numbers them (within the chapter, after its number), and their references
    assert "\\tag{99.1}" in text and "\\tag{99.2}" in text and "The step (99.1) lowers the energy (99.2)" in text
    # the literalinclude'd function, cut out with ast (decorator included, nothing else)
    shown = re.search(r"```python\n(.*?)```", text, re.S)[1]
    assert shown.startswith("@staticmethod\ndef omwu_step(") and "helper" not in shown and "class Lab" not in shown
    assert "*One step, eq. (99.1) (from `demo/dynamics.py`)*" in text
    # the include, the admonition, the exercise
    assert "> **Shared box**" in text and "Included text with (Smith, 2020)." in text
    assert "> **Exercise 99.1 (Scaling by hand)**" in text
    assert "see A demo chapter" not in text and "99. A demo chapter" in text and "*Introduction*" in text
    # glued values: named in the text, printed where computed
    assert "The measured rate is [`rate`]" in text
    assert nb.metadata["explorables"]["glue_formats"] == {"rate": ".3f"}
    assert "![a picture](../book/img/pic.png)\n\n*The caption.*" in text
    # code fences and inline code are left alone
    assert 'print("{cite:p}`not-a-role-in-code`")' in text and "Inline `{glue:text}` in code" in text


def test_solutions_are_folded_at_the_end_and_their_code_still_runs(demo):
    nb = notebooks.convert(demo)
    sources = [c.source for c in nb.cells]
    solutions = next(i for i, s in enumerate(sources) if s.startswith("## Solutions"))
    code = next(i for i, c in enumerate(nb.cells) if "SOLUTION-CODE" in c.source)
    assert code > solutions and nb.cells[code].cell_type == "code"
    assert all("scales like" not in s for s in sources[:solutions]), "a solution is visible before Solutions"
    assert all("old-style folded box" not in s for s in sources[:solutions])
    headings = [c for c in nb.cells[solutions:] if c.source.startswith("### ")]
    assert [h.source for h in headings] == ["### Solution to Exercise 99.1 (Scaling by hand)", "### Solution 1"]
    assert all(h.metadata["jp-MarkdownHeadingCollapsed"] for h in headings)
    assert nb.metadata["colab"]["collapsed_sections"] == [h.metadata["id"] for h in headings]
    # what followed the solution stays in place, visible
    after = next(i for i, s in enumerate(sources) if s.startswith("Text after the exercise"))
    assert after < solutions
    # only the last section holds folded headings: nothing else can be swallowed by a fold
    assert not any(c.metadata.get("jp-MarkdownHeadingCollapsed") for c in nb.cells[:solutions])


def test_glue_prints_the_value_where_it_is_computed():
    notebooks.glue_formats({"rate": ".3f"})
    out = io.StringIO()
    with redirect_stdout(out):
        notebooks.glue("rate", 0.123456, display=False)
        notebooks.glue("other", 2.0 / 3.0, display=False)
        notebooks.glue("word", "closes", display=False)
    assert out.getvalue().splitlines() == ["rate = 0.123", "other = 0.6667", "word = closes"]
    assert notebooks.GLUED["rate"] == 0.123456


def test_text_naming_glued_numbers_becomes_live_text_cells(demo):
    nb = notebooks.convert(demo)
    live = [c for c in nb.cells if "live-text" in c.metadata.get("tags", [])]
    assert live, "the paragraph with a glued number is not a live text cell"
    for cell in live:
        assert cell.cell_type == "code" and cell.metadata["jupyter"]["source_hidden"]
        assert cell.metadata["cellView"] == "form"
        saved = "".join(cell.outputs[0]["data"]["text/markdown"])
        assert "[`" in saved and not saved.lstrip().startswith("#"), "headings stay Markdown cells"
        assert saved in cell.source or repr(saved) in cell.source
    # the other paragraphs stay Markdown, and no Markdown cell names a glued number
    assert not any("[`rate`]" in c.source for c in nb.cells if c.cell_type == "markdown")


def test_split_at_headings_keeps_code_fences_whole():
    text = "# Title\nA [`x`] here.\n\n```python\n# not a heading\n```\n## Next\nmore"
    assert notebooks._split_at_headings(text) == [
        "# Title", "A [`x`] here.\n\n```python\n# not a heading\n```", "## Next", "more"]


def test_live_text_fills_numbers_computed_before_and_after_it():
    """Run in a real kernel: the display a live text cell made is updated by a later glue call."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("from explorables.notebooks import glue, glue_formats, live_text\n"
                                  "glue_formats({'early': '.2f', 'late': '.1f'})\nglue('early', 1.234)"),
        nbformat.v4.new_code_cell("live_text('Early [`early`], late [`late`], never [`never`].', "
                                  "('early', 'late', 'never'))"),
        nbformat.v4.new_code_cell("glue('late', 2.25)"),
    ])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    shown = "".join(nb.cells[1].outputs[0]["data"]["text/markdown"])
    assert shown == "Early 1.23, late 2.2, never [`never`]."
    assert nb.cells[2].outputs[0]["text"] == "late = 2.2\n"


def test_an_executed_notebook_gets_the_values_written_into_the_text(demo):
    """The site's download button: the executed notebook, with myst-nb's glue outputs."""
    nb = jupytext.read(demo)
    glue_cell = next(c for c in nb.cells if c.cell_type == "code" and "glue(" in c.source)
    glue_cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="kept\n")] + [
        nbformat.v4.new_output(
            "display_data",
            data={"application/papermill.record/text/plain": repr(value)},
            metadata={"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}},
        )
        for name, value in (("rate", 0.123456), ("label", "closes"))
    ]
    out = notebooks.convert(demo, nb)
    text = _markdown(out)
    assert "The measured rate is 0.123 and the gap closes." in text
    assert notebooks.myst_left(out) == []
    kept = next(c for c in out.cells if c.cell_type == "code" and "glue(" in c.source)
    # the glue records (invisible in notebook front-ends) go, other outputs stay
    assert [o.get("text") for o in kept.outputs] == ["kept\n"]
    assert "from explorables.notebooks import glue" in kept.source


def test_pyobject_finds_methods_and_refuses_unknown_names():
    assert notebooks.extract_pyobject(MODULE, "Lab.redraw").startswith("def redraw(self):")
    with pytest.raises(ValueError, match="pyobject"):
        notebooks.extract_pyobject(MODULE, "missing")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_each_chapter_converts_without_myst_left(chapter):
    """What Colab, Binder, JupyterHub and `make lab` open (notebooks/*.ipynb)."""
    nb = colab.colab_notebook(chapter)
    assert notebooks.myst_left(nb) == [], f"{chapter.name}: MyST-only syntax left"
    md = jupytext.read(chapter)
    n_glued = sum(len(re.findall(r"\bglue\(", c.source)) for c in md.cells if c.cell_type == "code")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "myst_nb" not in code and code.count("glue(") >= n_glued
    # every code cell of the chapter is still there, in the same order
    original = [c.source for c in md.cells if c.cell_type == "code"]
    converted = [c.source.replace("from explorables.notebooks import glue", "from myst_nb import glue")
                 for c in nb.cells[1:] if c.cell_type == "code" and "live-text" not in c.metadata.get("tags", [])]
    assert sorted(original) == sorted(converted)


# --- reader environments ----------------------------------------------------------------------------

DEV_ONLY = ("pytest", "ruff", "playwright", "kaleido", "jupyter-book", "sphinx-exercise")


def test_binder_installs_the_project_pins_with_cpu_torch_and_no_dev_tools():
    project, _ = colab.requirement_pins(ROOT / "requirements.txt")
    binder, options = colab.requirement_pins(ROOT / "binder" / "requirements.txt")
    for name, version in binder.items():
        assert name in project, f"binder pins {name}, which requirements.txt does not"
        assert version.split("+")[0] == project[name], f"{name}: binder {version}, project {project[name]}"
    assert binder["torch"].endswith("+cpu")
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in options
    assert not set(DEV_ONLY) & set(binder)
    assert binder["multipers"] == project["multipers"]
    assert "-e ." in (ROOT / "binder" / "postBuild").read_text() or "--no-deps -e ." in (
        ROOT / "binder" / "postBuild").read_text()


def test_the_colab_cell_installs_exactly_the_project_pins():
    project, _ = colab.requirement_pins(ROOT / "requirements.txt")
    for chapter in CHAPTERS[:1] or []:
        cell = colab.colab_notebook(chapter).cells[0].source
        pins = dict(re.findall(r"'([\w.-]+)==([\w.+]+)'", cell))
        assert pins, "the Colab cell pins nothing"
        for name, version in pins.items():
            assert version.split("+")[0] == project[name.lower()], f"Colab pins {name}=={version}"
        readers = {"numpy", "scipy", "torch", "scikit-learn", "networkx", "gudhi", "multipers", "matplotlib",
                   "plotly", "ipywidgets", "tqdm"}
        assert readers <= {n.lower() for n in pins}
        url, branch = colab.repository()
        assert f"git+{url}@{branch}" in cell and "--no-deps" in cell
        assert "download.pytorch.org/whl/cpu" in cell


def test_repository_url_is_one_setting(tmp_path):
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://github.com/someone/fork/\n  branch: dev\n")
    assert colab.repository(tmp_path) == ("https://github.com/someone/fork", "dev")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    url, _ = colab.repository()
    for name in tracked:
        path = ROOT / name
        if path.suffix in (".py", ".md", ".yml", ".txt", ".toml") and path.is_file() and name != "_config.yml":
            # A reader's ``git clone`` command has to spell the address; test_book checks it agrees with _config.yml.
            text = re.sub(r"git clone \S+", "git clone", path.read_text(errors="ignore"))
            assert url not in text, f"{name} names the repository: use _config.yml"


# --- threads ---------------------------------------------------------------------------------------


def test_cgroup_quota_caps_the_thread_count(tmp_path):
    proc = tmp_path / "cgroup"
    proc.write_text("0::/box\n")
    (tmp_path / "box").mkdir()
    (tmp_path / "box" / "cpu.max").write_text("150000 100000\n")
    assert threads.cgroup_cpu_limit(tmp_path, proc) == 1.5
    (tmp_path / "box" / "cpu.max").write_text("max 100000\n")
    assert threads.cgroup_cpu_limit(tmp_path, proc) is None
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("50000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    proc.write_text("1:cpu:/\n")
    assert threads.cgroup_cpu_limit(v1, proc) == 0.5


def test_thread_count_follows_the_environment_variable(monkeypatch):
    monkeypatch.setenv(threads.ENV, "3")
    assert threads.thread_count() == 3
    for bad in ("0", "-2", "two"):
        monkeypatch.setenv(threads.ENV, bad)
        with pytest.raises(ValueError, match=threads.ENV):
            threads.thread_count()
    monkeypatch.delenv(threads.ENV)
    assert 1 <= threads.thread_count() <= (os.cpu_count() or 1)


def _fresh_python(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items()
               if not k.endswith("_NUM_THREADS") and k not in (threads.ENV, "OMP_WAIT_POLICY")}
    environ.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environ, capture_output=True,
                          text=True, check=True, timeout=120).stdout.strip()


def test_importing_the_package_sets_torch_threads_once():
    code = """
        import explorables, torch
        from explorables.core import threads
        print(torch.get_num_threads(), threads.available_cpus())
    """
    got, cpus = map(int, _fresh_python(code).split())
    assert got == cpus
    assert _fresh_python(code, EXPLORABLES_THREADS="1").split()[0] == "1"
    waits = "import explorables, os; print(os.environ['OMP_WAIT_POLICY'])"
    assert _fresh_python(waits) == "PASSIVE" and _fresh_python(waits, OMP_WAIT_POLICY="ACTIVE") == "ACTIVE"
    # a count someone already lowered is kept
    lowered = "import torch; torch.set_num_threads(1); import explorables; print(torch.get_num_threads())"
    assert _fresh_python(lowered) == "1"


def test_unlimited_here_means_torchs_own_default():
    """Where nothing limits the process, the package's count is the one torch picks by itself."""
    default = int(_fresh_python("import torch; print(torch.get_num_threads())"))
    if threads.cgroup_cpu_limit() is None and len(os.sched_getaffinity(0)) == (os.cpu_count() or 0):
        assert threads.available_cpus() == default


def test_physical_cores_ignore_hyperthreads(monkeypatch):
    assert 1 <= threads.physical_cores() <= (os.cpu_count() or 1)
    # 2 cores with 2 hyper-threads each, all 4 CPUs available and no quota: 2 threads
    monkeypatch.setattr(threads.psutil, "cpu_count", lambda logical=True: 4 if logical else 2)
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(threads, "cgroup_cpu_limit", lambda: None)
    assert threads.physical_cores() == 2 and threads.available_cpus() == 2
    monkeypatch.setattr(threads.psutil, "cpu_count", lambda logical=True: None)  # unknown: the CPUs seen
    assert threads.physical_cores() == (os.cpu_count() or 1)


# --- the site's side (explorables.sphinx_ext) -------------------------------------------------------


def test_launch_buttons_point_at_the_notebook_copies():
    from explorables import sphinx_ext

    repo = "https://github.com/org/repo"
    buttons = [
        {"text": "Binder", "url": "https://mybinder.org/v2/gh/org/repo/main?urlpath=lab/tree/book/03-omwu.md"},
        {"text": "JupyterHub", "url": f"https://hub/hub/user-redirect/git-pull?repo={repo}&urlpath=lab/tree/repo/"
                                      "book/03-omwu.md&branch=main"},
        {"text": "Colab", "url": "https://colab.research.google.com/github/org/repo/blob/main/book/03-omwu.md"},
    ]
    context = {"header_buttons": [{"label": "launch-buttons", "buttons": buttons}]}
    sphinx_ext._point_launch_buttons_at_notebooks(None, "book/03-omwu", "page.html", context, None)
    for button in buttons:
        assert "notebooks/03-omwu.ipynb" in button["url"] and "book/03-omwu.md" not in button["url"]


def test_thebe_assets_are_dropped_when_thebe_is_off():
    from types import SimpleNamespace

    from explorables import sphinx_ext

    def script(filename, **attributes):
        return SimpleNamespace(filename=filename, attributes=attributes)

    config = script(None, body='const THEBE_JS_URL = "https://unpkg.com/thebe@0.8.2/lib/index.js"')
    keep = script("plotly.min.js")
    context = {"script_files": [config, script("sphinx-thebe.js"), keep],
               "css_files": ["_static/sphinx-thebe.css", "_static/styles.css"]}
    off = SimpleNamespace(config=SimpleNamespace(html_theme_options={"launch_buttons": {"thebe": False}}))
    sphinx_ext._drop_thebe(off, "p", "page.html", context, None)
    assert context["script_files"] == [keep] and context["css_files"] == ["_static/styles.css"]


def test_citations_without_authors_use_the_title(tmp_path):
    """A paper whose authors are unknown is cited by its title, as on the website, never by its key."""
    from explorables.notebooks import Bibliography

    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@misc{anon2026, title = {A Paper Without {Authors}}, howpublished = {NeurIPS 2026}, year = {2026}}\n"
        "@article{known2020, title = {T}, author = {Doe, Jane and Roe, Rick}, journal = {J}, year = {2020}}\n"
    )
    refs = Bibliography(bib)
    assert refs.cite(["anon2026"], textual=True) == "*A Paper Without Authors* (2026)"
    assert refs.cite(["known2020"], textual=False) == "(Doe and Roe, 2020)"
    assert "anon2026" not in refs.references(["anon2026", "known2020"])
