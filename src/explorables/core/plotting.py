"""Showing plotly figures the same way everywhere: JupyterLab, Colab and the static website.

Chapters call :func:`show` and never pick a plotly renderer themselves.

:func:`show` emits one output with two representations:

* ``application/vnd.plotly.v1+json``, which JupyterLab, Notebook 7 and VS Code draw with their
  plotly renderer (the ``jupyterlab-plotly`` extension ships inside the ``plotly`` package);
* ``text/html``: a ``<div>`` and a ``Plotly.newPlot`` call *without* plotly.js inlined. The book
  build picks this one and the site loads plotly.js (a partial bundle) once, from its own ``_static/``
  (see :mod:`explorables.sphinx_ext`), so a page carries only its figures' data and works with
  no network.

On Colab, which has neither the plotly renderer nor the site's ``_static/``, it defers to
plotly's own Colab renderer.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import sys
from typing import Any

import matplotlib.figure
import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

# typesetMath off: the site loads MathJax 3 for the text, and plotly.js would call its
# MathJax-2 API on it (a page error); our figure labels use Unicode, not LaTeX.
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "typesetMath": False}


#: float64 arrays whose finite non-zero magnitudes lie in this range are sent to the page as float32
#: (7 significant digits, far below what a screen shows); others (e.g. energies decaying to 1e-60
#: on a log axis) keep float64, since float32 would turn them into zeros.
FLOAT32_RANGE = (1e-30, 1e30)


def _as_float32(array: dict[str, Any]) -> dict[str, Any]:
    """A plotly typed array (``{"dtype": "f8", "bdata": <base64>}``) as float32 when that loses nothing visible."""
    values = np.frombuffer(base64.b64decode(array["bdata"]), dtype="<f8")
    magnitudes = np.abs(values[np.isfinite(values) & (values != 0)])
    if magnitudes.size and (magnitudes.min() < FLOAT32_RANGE[0] or magnitudes.max() > FLOAT32_RANGE[1]):
        return array
    return {**array, "dtype": "f4", "bdata": base64.b64encode(values.astype("<f4")).decode()}


def compact_spec(spec: Any) -> Any:
    """The figure's JSON with its float64 typed arrays as float32 (see :data:`FLOAT32_RANGE`): the
    site's pages are mostly figure data, and this halves it. Everything else is returned as is."""
    if isinstance(spec, dict):
        if spec.get("dtype") == "f8" and isinstance(spec.get("bdata"), str):
            return _as_float32(spec)
        return {key: compact_spec(value) for key, value in spec.items()}
    if isinstance(spec, list):
        return [compact_spec(value) for value in spec]
    return spec


def plain_log_ticks(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` whose log axes label their ticks as powers of ten (10⁻⁴), not with SI
    prefixes (plotly's default writes 1e-4 as "100μ", which reads as a unit). Axes that set their
    own ``exponentformat`` keep it."""
    fig = go.Figure(fig)
    fig.for_each_xaxis(lambda axis: _power_ticks(axis))
    fig.for_each_yaxis(lambda axis: _power_ticks(axis))
    return fig


def _power_ticks(axis: Any) -> None:
    if axis.type == "log" and axis.exponentformat is None:
        axis.exponentformat = "power"


def figure_html(fig: go.Figure) -> str:
    """The figure as an HTML fragment that expects a global ``Plotly`` (no plotly.js inlined), with
    its data compacted (:func:`compact_spec`).

    A figure with frames opens on its first view and plays nothing until the reader asks.
    The ``div`` id is derived from the figure's content, so rebuilding an unchanged chapter
    gives byte-identical HTML.
    """
    spec = compact_spec(json.loads(fig.to_json()))
    div_id = "plotly-" + hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    # auto_play=False: plotly.py would otherwise end a figure with frames by playing them all on load
    return pio.to_html(
        spec, include_plotlyjs=False, full_html=False, div_id=div_id, config=PLOTLY_CONFIG, validate=False,
        auto_play=False,
    )


def show(fig: go.Figure | matplotlib.figure.Figure) -> None:
    """Display a plotly or matplotlib figure in a notebook or on the book's static site.

    plotly: see the module docstring. matplotlib: rendered once to PNG (the chapters build
    figures with ``matplotlib.figure.Figure``, never through pyplot's global state).
    """
    from IPython.display import Image, display

    if isinstance(fig, matplotlib.figure.Figure):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight")
        display(Image(buf.getvalue()))
        return
    fig = plain_log_ticks(fig)
    if "google.colab" in sys.modules:  # pragma: no cover - only on Colab
        fig.show(renderer="colab", config=PLOTLY_CONFIG)
        return
    bundle = pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict())
    bundle["text/html"] = figure_html(fig)
    bundle["text/plain"] = f"<plotly figure: {len(fig.data)} traces>"
    display(bundle, raw=True)
