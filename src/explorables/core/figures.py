"""One look for every chapter's figures: a palette, a layout style, and sliders over precomputed frames.

The website has no kernel, so its explorables are plotly figures whose sliders switch between
frames computed at build time. :func:`frame_slider` is that mechanism, written once: a chapter
adds each frame's traces, says which traces form which frame, and gets the slider.

On the site, ``book/_static/figure-widths.js`` fits every figure to the text column (688 px on a
desktop, about 370 px on a phone): the panels of a ``make_subplots`` grid that do not fit side by
side stack into rows, subplot titles move to their panel's top-left corner, ``row_titles`` become
headings above their rows, a legend at the right moves below. It reads the grid from the axes'
domains and the titles from ``make_subplots``' annotations, so a figure builder needs no width of
its own: build for the desktop column, with subplot (or column and row) titles rather than
free-floating notes in paper coordinates, and no fixed ``width``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

#: The book's colours (colour-blind-safe order of the D3 "category10" set plotly uses by default).
PALETTE: dict[str, str] = {
    "blue": "#1f77b4",
    "orange": "#ff7f0e",
    "green": "#2ca02c",
    "red": "#d62728",
    "purple": "#9467bd",
    "brown": "#8c564b",
    "pink": "#e377c2",
    "grey": "#7f7f7f",
    "olive": "#bcbd22",
    "cyan": "#17becf",
    "light_blue": "#9ecae1",
    "dark_blue": "#08519c",
    "gold": "#e6a817",
    "light_grey": "#d3d3d3",
    "dark_grey": "#505050",
    "black": "#000000",
}
#: The palette in drawing order, for series without a meaning of their own.
SEQUENCE: tuple[str, ...] = tuple(PALETTE[k] for k in ("blue", "orange", "green", "red", "purple", "brown", "pink",
                                                       "grey", "olive", "cyan"))  # fmt: skip
#: Reference lines (bounds, targets, equilibria): thin dotted grey.
REFERENCE_LINE: dict[str, Any] = {"color": PALETTE["grey"], "dash": "dot", "width": 1}


def color(i: int) -> str:
    """The ``i``-th colour of :data:`SEQUENCE` (wrapping around)."""
    return SEQUENCE[i % len(SEQUENCE)]


def style(
    fig: go.Figure, *, height: int = 420, legend_below: bool = False, top: int = 40, bottom: int = 40
) -> go.Figure:
    """The book's layout: white template, tight margins, a given height; the legend below if asked."""
    fig.update_layout(
        template="plotly_white",
        height=height,
        margin=dict(l=50, r=20, t=top, b=bottom),
        font=dict(size=12),
    )
    if legend_below:
        fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))
    return fig


def frame_slider(
    fig: go.Figure,
    frames: Sequence[Sequence[int]],
    labels: Sequence[str],
    *,
    prefix: str = "",
    active: int = 0,
    layouts: Sequence[Mapping[str, Any]] | None = None,
    y: float = 0.0,
    pad_top: int = 30,
) -> go.Figure:
    """Add a slider that shows one precomputed frame at a time.

    ``frames[k]`` lists the indices (into ``fig.data``) of the traces that make frame ``k``; a
    trace in no frame is always shown (axes decorations, reference lines). ``layouts[k]``, if
    given, is a layout update applied with frame ``k`` (e.g. ``{"title.text": ...}``). The figure
    opens on frame ``active``. Returns ``fig``.
    """
    if len(frames) != len(labels):
        raise ValueError(f"frames and labels must have the same length, got {len(frames)} and {len(labels)}")
    if not frames:
        raise ValueError("frames must hold at least one frame")
    if not 0 <= active < len(frames):
        raise ValueError(f"active must lie in [0, {len(frames) - 1}], got {active}")
    if layouts is not None and len(layouts) != len(frames):
        raise ValueError(f"layouts must have one entry per frame ({len(frames)}), got {len(layouts)}")
    n = len(fig.data)
    framed = {i for f in frames for i in f}
    if any(not 0 <= i < n for i in framed):
        raise ValueError(f"frame trace indices must lie in [0, {n - 1}]")

    def visibility(k: int) -> list[bool]:
        shown = set(frames[k])
        return [i in shown or i not in framed for i in range(n)]

    steps = []
    for k, label in enumerate(labels):
        args: list[Any] = [{"visible": visibility(k)}]
        if layouts is not None:
            args.append(dict(layouts[k]))
        steps.append(dict(method="update", label=label, args=args))
    for i, visible in enumerate(visibility(active)):
        fig.data[i].visible = visible
    if layouts is not None:
        fig.update_layout(dict(layouts[active]))
    fig.update_layout(
        sliders=[dict(active=active, steps=steps, currentvalue=dict(prefix=prefix), y=y, pad=dict(t=pad_top))]
    )
    return fig


def add_frame(fig: go.Figure, traces: Sequence[Any]) -> list[int]:
    """Add ``traces`` (or ``(trace, row, col)`` triples for subplots) and return their indices: one frame."""
    start = len(fig.data)
    for t in traces:
        if isinstance(t, tuple):
            trace, row, col = t
            fig.add_trace(trace, row=row, col=col)
        else:
            fig.add_trace(t)
    return list(range(start, len(fig.data)))
