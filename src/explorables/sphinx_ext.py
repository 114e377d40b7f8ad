"""A small Sphinx extension that serves the book's JavaScript from the site itself (no CDN).

Enabled in ``_config.yml`` (``sphinx.extra_extensions``). It adds ``plotly.min.js`` (copied
from the installed ``plotly`` package, so its version always matches the Python side) to every
page's ``<head>``, before require.js, so that plotly registers the global ``Plotly`` that
:func:`explorables.core.plotting.show` relies on.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import plotly

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def _copy_assets(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    target = static / PLOTLY_JS.name
    if not target.exists() or target.stat().st_size != PLOTLY_JS.stat().st_size:
        shutil.copyfile(PLOTLY_JS, target)


def setup(app: Any) -> dict[str, Any]:
    # priority < 200: load before require.js (which myst-nb adds for widget pages); with an AMD
    # loader already present, plotly.js would register as a module instead of window.Plotly.
    app.add_js_file(PLOTLY_JS.name, priority=100)
    app.connect("build-finished", _copy_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
