"""A small Sphinx extension for the book, enabled in ``_config.yml`` (``sphinx.extra_extensions``).

* It serves plotly.js from the site itself (no CDN): plotly's cartesian partial bundle, vendored
  in ``book/_static/third_party/plotly/`` (a third of the full bundle's weight; the book draws only
  cartesian traces), refused at build time unless its version is the installed ``plotly``
  package's plotly.js (:func:`check_plotly_bundle`), and loaded once in every page's ``<head>``
  before any AMD loader, so that plotly registers the global ``Plotly`` that
  :func:`explorables.core.plotting.show` relies on.
* It points the Binder, JupyterHub and Colab launch buttons at the chapter's notebook copy in
  ``notebooks/`` (plain Jupyter Markdown, see :mod:`explorables.notebooks`), and makes the
  ``.ipynb`` download button serve the executed chapter converted the same way, with the glued
  numbers written into the text and the solutions folded.
* Without Thebe (``launch_buttons.thebe: false``) it drops what sphinx-thebe, which Jupyter Book
  always loads, puts on every page anyway: a script naming its CDN URL, its loader, its
  stylesheet and a kernel configuration pointing at an example repository
  (:func:`_drop_thebe`), so no page names a CDN or a repository other than the book's.
* It drops duplicated ``<script>`` tags (a sphinx-thebe bug, see :func:`_drop_duplicate_scripts`).
* It re-executes a chapter when its package code changed (see
  :func:`_rerun_chapters_whose_package_changed`), so the site never shows stale outputs.
* It forwards ipywidgets' MathJax-2 calls to MathJax 3 (:data:`MATHJAX2_SHIM`).
* No figure animates on load (:data:`NO_AUTOPLAY`).
* It loads the book's scripts: ``figure-widths.js`` (figures fit the text column: panels stack on a
  narrow screen), ``narrow-screens.js`` (claims tables as cards on a phone), ``sidebar-toggles.js``.
* It numbers exercises, equations and other numbered items within each chapter, prefixed with
  the chapter's number (Exercise 3.2, equation (3.1)), as the notebooks do
  (:func:`number_within_pages`); Sphinx alone numbers them across the whole book.
* ``EXPLORABLES_BOOK_SCALE=smoke`` executes every chapter at the smoke scale (:func:`set_page_scale`):
  ``make test-site``'s website build does (``make test`` executes the pages the same way without a website,
  ``tests/test_pages.py``), to check that every page executes in a fraction of the time;
  ``make book`` (the published site) and ``make student`` leave it unset and execute the book scale.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import plotly

#: the full plotly.js of the installed ``plotly`` package (JupyterLab and Colab draw with it)
PLOTLY_PACKAGE_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
#: the partial bundle the site serves, relative to ``html_static_path`` (``book/_static``)
PLOTLY_JS = "third_party/plotly/plotly-cartesian.min.js"
#: the trace types in that bundle (its README); ``tests/test_site.py`` checks the pages use no other
PLOTLY_TRACES = frozenset(
    {"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour", "image", "pie",
     "scatter", "scatterternary", "violin"}
)  # fmt: skip
_PLOTLY_VERSION = re.compile(rb"plotly\.js (?:\([^)]*\) )?v(\d+\.\d+\.\d+)")


def plotly_js_version(path: Path) -> str:
    """The version in a plotly.js bundle's banner (``plotly.js (cartesian - minified) v4.1.1``)."""
    with Path(path).open("rb") as handle:
        match = _PLOTLY_VERSION.search(handle.read(400))
    if match is None:
        raise ValueError(f"{path} does not start with a plotly.js banner")
    return match.group(1).decode()


def check_plotly_bundle(static: Path) -> None:
    """Refuse a vendored plotly.js whose version differs from the ``plotly`` package's (the figures'
    JSON is written by that package for its own plotly.js)."""
    vendored, expected = plotly_js_version(static / PLOTLY_JS), plotly_js_version(PLOTLY_PACKAGE_JS)
    if vendored != expected:
        raise RuntimeError(
            f"book/_static/{PLOTLY_JS} is plotly.js {vendored} but the installed plotly package has {expected}: "
            "update the vendored bundle (book/_static/third_party/README.md)"
        )
PACKAGE = Path(__file__).resolve().parent
CHAPTER_DOC = re.compile(r"^book/\d\d-(?P<slug>\w+)$")

#: the scales a build may execute the chapters at (``EXPLORABLES_BOOK_SCALE``; default ``book``)
BOOK_SCALES = ("book", "smoke")
SCALE_ENV = "EXPLORABLES_BOOK_SCALE"
#: the one line of a chapter's ``parameters`` cell that sets its scale
SCALE_LINE = re.compile(r'^SCALE = "book"(?=[ \t]*(?:#.*)?$)', re.M)
_CODE_CELL = re.compile(r"^```\{code-cell\}", re.M)


def book_scale() -> str:
    """The scale the build executes the chapters at: ``EXPLORABLES_BOOK_SCALE`` (default ``book``)."""
    value = os.environ.get(SCALE_ENV, "book").strip() or "book"
    if value not in BOOK_SCALES:
        raise ValueError(f"{SCALE_ENV} must be one of {BOOK_SCALES}, got {value!r}")
    return value


def set_page_scale(text: str, scale: str, name: str = "the chapter") -> str:
    """The chapter source ``text`` executing at ``scale``: its one ``SCALE = "book"`` line, which must sit in
    a code cell tagged ``parameters`` (a comment may follow it), becomes ``SCALE = "<scale>"``; nothing else
    changes. A chapter
    without exactly one such line, or a scale other than :data:`BOOK_SCALES`, is refused (``ValueError``)."""
    if scale not in BOOK_SCALES:
        raise ValueError(f"{SCALE_ENV} must be one of {BOOK_SCALES}, got {scale!r}")
    found = list(SCALE_LINE.finditer(text))
    if len(found) != 1:
        raise ValueError(f'{name}: {len(found)} lines `SCALE = "book"`, expected exactly one (in the cell tagged '
                         f"parameters), so that {SCALE_ENV}=smoke can execute it at the smoke scale")
    line = found[0]
    cells = list(_CODE_CELL.finditer(text, 0, line.start()))
    cell = text[cells[-1].start():line.start()] if cells else ""
    body = cell.split("\n", 1)[1] if "\n" in cell else ""
    options = re.match(r"(?:---\n.*?\n---\n|(?::[^\n]*\n)*)", body, re.S).group(0)
    if not cells or re.search(r"^```\s*$", body, re.M) or not re.search(r"\bparameters\b", options):
        raise ValueError(f'{name}: its line `SCALE = "book"` is not in a code cell tagged parameters')
    if scale == "book":
        return text
    return text[:line.start()] + f'SCALE = "{scale}"' + text[line.end():]


def _set_scale(app: Any, docname: str, source: list[str]) -> None:
    """``source-read``: a chapter executes at the build's scale (``explorables_book_scale``)."""
    if CHAPTER_DOC.match(docname):
        source[0] = set_page_scale(source[0], app.config.explorables_book_scale, app.env.doc2path(docname))


def _read_scale(app: Any, config: Any) -> None:
    config.explorables_book_scale = book_scale()

# ipywidgets' embedder typesets HTML widgets with the MathJax-2 API (``MathJax.Hub.Queue``);
# the site runs MathJax 3. This shim forwards those calls so the page logs no error.
MATHJAX2_SHIM = """\
(function () {
  var hub = {Queue: function (job) {
    var el = job && job[2], mj = window.MathJax;
    if (el && mj && mj.typesetPromise) { mj.typesetPromise([el]); }
  }};
  var current = window.MathJax;
  // MathJax 3 replaces window.MathJax when it starts, so add Hub to whatever is assigned.
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { if (value && !value.Hub) { value.Hub = hub; } current = value; }
  });
})();"""


# plotly.py's HTML for a figure with frames ends with ``Plotly.animate(id, null)``, which plays every
# frame on load (chapter 13's explorable ran through its 93 frames and stopped on the last).
# core.plotting asks for no autoplay; this guard drops such a call from any page (the reader's
# sliders and buttons go through plotly's own registry, not through ``window.Plotly.animate``).
NO_AUTOPLAY = """\
(function () {
  var P = window.Plotly;
  if (!P || !P.animate) { return; }
  var animate = P.animate;
  P.animate = function (gd, frames) {
    if (arguments.length <= 2 && (frames === null || frames === undefined)) { return Promise.resolve(); }
    return animate.apply(this, arguments);
  };
})();"""


def chapter_fingerprint(slug: str) -> str:
    """Hash of the code a chapter's outputs depend on: its subpackage and the shared core."""
    digest = hashlib.sha256()
    for folder in (PACKAGE / slug, PACKAGE / "core"):
        for path in sorted(folder.rglob("*.py")):
            digest.update(str(path.relative_to(PACKAGE)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _rerun_chapters_whose_package_changed(app: Any, env: Any, added: set, changed: set, removed: set) -> list[str]:
    """Re-execute a chapter when its *package* code changed, not only its notebook.

    jupyter-cache keys outputs on the notebook's code cells, so editing
    ``src/explorables/<slug>/`` would otherwise leave stale figures on the site. We keep one
    fingerprint per chapter in ``_build/.explorables-fingerprints.json``; for a chapter whose
    fingerprint moved, its cache record is dropped and the page is marked outdated.
    """
    # next to the execution cache it describes (a build with another --path-output that shares the
    # cache, like `make student`, must see the same fingerprints, or it would drop every record)
    state = _cache_path(app).parent / ".explorables-fingerprints.json"
    old = json.loads(state.read_text()) if state.exists() else {}
    new, stale = {}, []
    for docname in sorted(env.found_docs):
        match = CHAPTER_DOC.match(docname)
        if match and (PACKAGE / match["slug"]).is_dir():
            new[docname] = chapter_fingerprint(match["slug"])
            if old.get(docname) != new[docname]:
                stale.append(docname)
    if stale:
        _drop_cached_outputs(app, [Path(env.doc2path(d)).resolve() for d in stale])
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps(new, indent=1))
    return [d for d in stale if d not in added and d not in changed]


def _cache_path(app: Any) -> Path:
    """The jupyter-cache folder myst-nb executes into (``nb_execution_cache_path``, else its default)."""
    configured = getattr(app.config, "nb_execution_cache_path", "") or ""
    return Path(configured) if configured else Path(app.outdir).parent / ".jupyter_cache"


def _drop_cached_outputs(app: Any, sources: list[Path]) -> None:
    cache_path = _cache_path(app)
    if not cache_path.exists():
        return
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_path))
    wanted = {str(p) for p in sources}
    for record in cache.list_cache_records():
        if str(Path(record.uri).resolve()) in wanted:
            cache.remove_cache(record.pk)


def number_within_pages(toc_fignumbers: dict[str, dict[str, dict[str, tuple[int, ...]]]]) -> list[str]:
    """Renumber Sphinx's numbered items (``env.toc_fignumbers``: page -> type -> id -> number) so
    that each page counts from 1 in its own order, prefixed with the chapter's number on chapter
    pages (``book/03-omwu``: exercises 3.1, 3.2, ...; equations (3.1), ...). Sphinx numbers them
    across the whole book when no chapter is numbered, so chapter 16 began at equation (84) while
    its notebook began at (1). Returns the pages whose numbers changed."""
    from .notebooks import chapter_number

    changed = []
    for docname, by_type in toc_fignumbers.items():
        number = chapter_number(docname.rsplit("/", 1)[-1])
        prefix = (number,) if number is not None else ()
        before = {kind: dict(ids) for kind, ids in by_type.items()}
        for ids in by_type.values():
            for k, node_id in enumerate(sorted(ids, key=ids.__getitem__), start=1):
                ids[node_id] = (*prefix, k)
        if by_type != before:
            changed.append(docname)
    return changed


def _number_within_pages(app: Any, env: Any) -> list[str]:
    return number_within_pages(env.toc_fignumbers)


def _check_plotly_bundle(app: Any, config: Any) -> None:
    for folder in config.html_static_path:
        static = Path(app.confdir) / folder
        if (static / PLOTLY_JS).is_file():
            check_plotly_bundle(static)
            return
    raise RuntimeError(f"no html_static_path folder holds {PLOTLY_JS} (book/_static/third_party/README.md)")


def _point_launch_buttons_at_notebooks(app: Any, pagename: str, templatename: str, context: dict,
                                       doctree: Any) -> None:
    """Binder, JupyterHub and Colab open ``notebooks/<chapter>.ipynb``, not ``book/<chapter>.md``.

    sphinx-book-theme builds their links from the page's source (``book/<chapter>.md``), which
    Colab cannot open and JupyterLab would show as raw MyST; the committed notebook copies
    (:mod:`explorables.colab`) read right in all three.
    """
    stem = Path(pagename).name
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            url = button.get("url", "")
            if button.get("text") in ("Binder", "JupyterHub", "Colab") and f"book/{stem}.md" in url:
                button["url"] = url.replace(f"book/{stem}.md", f"notebooks/{stem}.ipynb")


_point_colab_at_ipynb = _point_launch_buttons_at_notebooks  # its first name, when it moved Colab only


def _with_outputs(app: Any, pagename: str, source: Path, copied: Any) -> Any:
    """The executed notebook: ``copied`` if it has outputs, else the jupyter-cache record's.

    When a chapter comes from the cache, myst-nb 1.4 writes the notebook it read, before the
    cached outputs were merged into it (``jupyter_execute/<page>.ipynb`` has no outputs).
    """
    if any(cell.get("outputs") for cell in copied.cells if cell.cell_type == "code"):
        return copied
    cache_path = getattr(getattr(app.env, "mystnb_config", None), "execution_cache_path", "")
    cache_path = Path(cache_path or Path(app.outdir).parent / ".jupyter_cache")
    if not cache_path.exists():
        return copied
    import jupytext
    from jupyter_cache import get_cache

    text = source.read_text(encoding="utf-8")
    if CHAPTER_DOC.match(pagename):  # the source the build executed (``_set_scale``)
        text = set_page_scale(text, app.config.explorables_book_scale, source)
    try:
        _, merged = get_cache(str(cache_path)).merge_match_into_notebook(jupytext.reads(text, fmt=source.suffix[1:]))
    except KeyError:  # no cache record for this version of the chapter
        return copied
    return merged


def _thebe_enabled(app: Any) -> bool:
    options = getattr(app.config, "html_theme_options", {}) or {}
    return bool((options.get("launch_buttons") or {}).get("thebe"))


def _drop_thebe_config_node(app: Any, doctree: Any, docname: str) -> None:
    """sphinx-thebe's ``<script type="text/x-thebe-config">`` node, when Thebe is off."""
    if _thebe_enabled(app):
        return
    from docutils import nodes

    for node in list(doctree.findall(nodes.raw)):
        if "x-thebe-config" in node.astext():
            node.parent.remove(node)


def _drop_thebe(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """sphinx-thebe's scripts and stylesheet, when Thebe is off."""
    if _thebe_enabled(app):
        return

    def thebe(asset: Any) -> bool:
        filename = str(getattr(asset, "filename", None) or asset)
        body = (getattr(asset, "attributes", {}) or {}).get("body") or ""
        return "thebe" in filename or "THEBE_JS_URL" in body

    for key in ("script_files", "css_files"):
        if context.get(key):
            context[key] = [asset for asset in context[key] if not thebe(asset)]


def _convert_downloaded_notebook(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """The ``.ipynb`` download button: the executed chapter, as plain Jupyter Markdown.

    sphinx-book-theme copies the executed notebook (MyST Markdown cells) to
    ``_sources/<page>.ipynb``; this replaces it with :func:`explorables.notebooks.convert`'s
    version, outputs kept and glued numbers written into the text.
    """
    if not context.get("ipynb_source") or not CHAPTER_DOC.match(pagename):
        return
    import nbformat

    from explorables import notebooks

    target = Path(app.outdir) / "_sources" / context["ipynb_source"]
    if not target.exists():
        return
    source = Path(app.env.doc2path(pagename))
    executed = _with_outputs(app, pagename, source, nbformat.read(target, as_version=4))
    # myst-nb takes the glued values out of the notebook it writes and keeps them beside it
    glue_file = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.glue.json"
    values = None
    if glue_file.exists():
        glued = json.loads(glue_file.read_text())
        values = {k: v["data"]["text/plain"] for k, v in glued.items() if "text/plain" in v.get("data", {})}
    converted = notebooks.convert(source, executed, values=values)
    target.write_text(nbformat.writes(converted) + "\n")


def _drop_duplicate_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Keep one copy of each ``<script>``.

    sphinx-thebe 0.3.1 registers its inline config (``const THEBE_JS_URL = ...``) on every
    read pass, and the execution-statistics table makes myst-nb read twice, so the page would
    declare the constant twice: a console error.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        attributes = getattr(script, "attributes", {}) or {}
        # an inline script may be registered with filename None or "": the same script
        key = (getattr(script, "filename", None) or "", attributes.get("body"))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app: Any) -> dict[str, Any]:
    # priority < 200: load before require.js (which myst-nb adds for widget pages); with an AMD
    # loader already present, plotly.js would register as a module instead of window.Plotly.
    app.add_js_file(PLOTLY_JS, priority=100)
    app.add_js_file(None, body=MATHJAX2_SHIM, priority=90)  # before MathJax and the widget embedder
    app.add_js_file(None, body=NO_AUTOPLAY, priority=110)  # after plotly.js, before the figures
    # book/_static/sidebar-toggles.js: the phone menu and the sidebar collapse button (see the file)
    app.add_js_file("sidebar-toggles.js", loading_method="defer")
    app.add_css_file("explorables.css")  # book/_static/explorables.css
    # book/_static/figure-widths.js: figures fit the column (panels stack, titles top-left); legends clear axis titles
    app.add_js_file("figure-widths.js", loading_method="defer")
    # book/_static/narrow-screens.js: claims tables as cards below 600 px, verdicts marked; wide formulas scroll
    app.add_js_file("narrow-screens.js", loading_method="defer")
    app.connect("env-get-outdated", _rerun_chapters_whose_package_changed)
    # EXPLORABLES_BOOK_SCALE=smoke: every chapter at the smoke scale (make test-site). An "env" value, so a build at
    # the other scale reads every page again instead of reusing the doctrees; the execution cache keys each
    # chapter on its code, the scale line included, so the two scales never share a record.
    app.add_config_value("explorables_book_scale", "book", "env")
    app.connect("config-inited", _read_scale)
    app.connect("source-read", _set_scale, priority=100)  # before book_jobs reads the sources (priority 900)
    # two chapters at a time: a helper process executes chapters into the cache beside Sphinx's own
    app.setup_extension("explorables.book_jobs")
    app.connect("config-inited", _check_plotly_bundle)
    # after Sphinx's toctree collector numbers figures across the book (it listens at priority 500)
    app.connect("env-get-updated", _number_within_pages, priority=900)
    app.connect("html-page-context", _point_launch_buttons_at_notebooks, priority=900)  # after sphinx-book-theme
    app.connect("html-page-context", _convert_downloaded_notebook, priority=900)
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    app.connect("html-page-context", _drop_thebe, priority=900)
    app.connect("doctree-resolved", _drop_thebe_config_node, priority=900)  # after sphinx-thebe adds it
    return {"parallel_read_safe": True, "parallel_write_safe": True}
