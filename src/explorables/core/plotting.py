"""Showing plotly figures the same way everywhere: JupyterLab, Colab and the static website.

Chapters call :func:`show` and never pick a plotly renderer themselves.

:func:`show` emits one output with two representations:

* ``application/vnd.plotly.v1+json``, which JupyterLab, Notebook 7 and VS Code draw with their
  plotly renderer (the ``jupyterlab-plotly`` extension ships inside the ``plotly`` package);
* ``text/html``: a ``<div>`` and a ``Plotly.newPlot`` call *without* plotly.js inlined. The book
  build picks this one and the site loads ``plotly.min.js`` once, from its own ``_static/``
  (see :mod:`explorables.sphinx_ext`), so a page carries only its figures' data and works with
  no network.

On Colab, which has neither the plotly renderer nor the site's ``_static/``, it defers to
plotly's own Colab renderer.
"""

from __future__ import annotations

import hashlib
import io
import sys

import matplotlib.figure
import plotly.graph_objects as go
import plotly.io as pio

# typesetMath off: the site loads MathJax 3 for the text, and plotly.js would call its
# MathJax-2 API on it (a page error); our figure labels use Unicode, not LaTeX.
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "typesetMath": False}


def figure_html(fig: go.Figure) -> str:
    """The figure as an HTML fragment that expects a global ``Plotly`` (no plotly.js inlined).

    The ``div`` id is derived from the figure's content, so rebuilding an unchanged chapter
    gives byte-identical HTML.
    """
    spec = fig.to_json()
    div_id = "plotly-" + hashlib.sha1(spec.encode()).hexdigest()[:12]
    return pio.to_html(
        fig, include_plotlyjs=False, full_html=False, div_id=div_id, config=PLOTLY_CONFIG, validate=False
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
    if "google.colab" in sys.modules:  # pragma: no cover - only on Colab
        fig.show(renderer="colab", config=PLOTLY_CONFIG)
        return
    bundle = pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict())
    bundle["text/html"] = figure_html(fig)
    bundle["text/plain"] = f"<plotly figure: {len(fig.data)} traces>"
    display(bundle, raw=True)
