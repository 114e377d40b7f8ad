"""Figures of the chapter, from :class:`~explorables.routing.experiment.RoutingResults`."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .collisions import dominant_pieces, segment_in_triangle
from .experiment import RoutingResults


def _rgba(hex_color: str, alpha: float) -> str:
    """A palette colour with transparency, as plotly's ``rgba(r,g,b,a)``."""
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


TOKEN_COLORS = (PALETTE["blue"], PALETTE["red"], PALETTE["green"])
TOKEN_FILLS = tuple(_rgba(c, 0.18) for c in TOKEN_COLORS)
KIND_COLORS = {"standard": PALETTE["grey"], "route_aware": PALETTE["orange"], "oracle": PALETTE["blue"]}
KIND_NAMES = {"standard": "standard FFN", "route_aware": "RA-FFN (4 statistics)", "oracle": "oracle FFN (all of α)"}
CONTROL_COLORS = {
    "no_collision": PALETTE["green"],
    "width_matched": PALETTE["purple"],
    "content_only": _rgba(PALETTE["grey"], 0.45),
}
CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
TRIANGLE_VALUES = (0.0, 1.0, 0.4)  # v: one value per token (d_head = 1, so rank V = 1 = n - 2)


def _xy(bary: np.ndarray) -> np.ndarray:
    return np.asarray(bary) @ CORNERS


def explorable_figure(v: tuple[float, float, float] = TRIANGLE_VALUES, frames: int = 21) -> go.Figure:
    """Three tokens, one value each: the weightings that give one output form a segment of the simplex.

    The triangle is the simplex of weightings (corner ``i``: all weight on token ``i``), shaded by
    which token dominates. The slider moves the head's output ``o = v . alpha``; the segment is
    every ``alpha`` with that output, coloured by its dominant token. Wherever it crosses a region
    boundary, weightings with different dominant sources give the very same output.
    """
    fig = go.Figure()
    centre = np.full(3, 1 / 3)
    for i in range(3):
        j, k = [t for t in range(3) if t != i]
        e = np.eye(3)
        poly = _xy(np.array([e[i], (e[i] + e[j]) / 2, centre, (e[i] + e[k]) / 2]))
        fig.add_trace(
            go.Scatter(
                x=np.r_[poly[:, 0], poly[0, 0]].round(4),
                y=np.r_[poly[:, 1], poly[0, 1]].round(4),
                fill="toself",
                mode="lines",
                fillcolor=TOKEN_FILLS[i],
                line=dict(width=0),
                name=f"token {i + 1} dominates",
                hoverinfo="skip",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=np.r_[CORNERS[:, 0], 0.0],
            y=np.r_[CORNERS[:, 1], 0.0].round(4),
            mode="lines+text",
            line=dict(color="black", width=1),
            text=[f"token {i + 1} (v = {v[i]:g})" for i in range(3)] + [""],
            textposition=["bottom left", "bottom right", "top center", "bottom left"],
            showlegend=False,
            hoverinfo="skip",
        )
    )
    outputs = np.linspace(min(v), max(v), frames + 2)[1:-1]
    slider_frames, titles = [], []
    for o in outputs:
        pieces = dominant_pieces(segment_in_triangle(v, o))
        traces = []
        for token, start, end in pieces:
            xy = _xy(np.vstack([start, end])).round(4)
            traces.append(
                go.Scatter(
                    x=xy[:, 0],
                    y=xy[:, 1],
                    mode="lines",
                    line=dict(color=TOKEN_COLORS[token], width=6),
                    name=f"same output, token {token + 1} dominant",
                    showlegend=False,
                    hovertemplate=f"o = {o:.2f}<br>dominant: token {token + 1}<extra></extra>",
                )
            )
        slider_frames.append(add_frame(fig, traces))
        winners = sorted({t + 1 for t, _, _ in pieces})
        titles.append(
            f"output o = {o:.2f}: the segment's weightings all give o; dominant token "
            + (" or ".join(map(str, winners)) + (" — a collision" if len(winners) > 1 else ""))
        )
    frame_slider(fig, slider_frames, [f"{o:.2f}" for o in outputs], prefix="head output o = ", active=frames // 2,
                 layouts=[{"title.text": t} for t in titles])  # fmt: skip
    style(fig, height=470, top=50, bottom=10)
    fig.update_layout(
        title_font=dict(size=13),
        xaxis=dict(visible=False, range=[-0.25, 1.25]),
        yaxis=dict(visible=False, scaleanchor="x", range=[-0.12, 0.98]),
        margin=dict(l=10, r=10),
        legend=dict(orientation="h", y=-0.02),
        plot_bgcolor="white",
    )
    return fig


def collision_figure(results: RoutingResults) -> go.Figure:
    """How often a harmful collision exists: against the sharpness of ``alpha`` and against ``d_head``."""
    c = results.summary["collisions"]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            f"n = {c['n']}, d_head = {c['d_head']}: against sharpness β",
            f"n = {c['n']}, β = {results.config.beta:g}: against d_head",
        ),
    )
    fig.add_trace(
        go.Scatter(
            x=[r["beta"] for r in c["by_beta"]],
            y=[r["fraction"] for r in c["by_beta"]],
            mode="lines+markers",
            line=dict(color=color(0)),
            name="against β",
            showlegend=False,
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Bar(
            x=[str(r["d_head"]) for r in c["by_d_head"]],
            y=[r["fraction"] for r in c["by_d_head"]],
            text=[f"collision set dim {r['fibre_dimension']}" for r in c["by_d_head"]],
            marker_color=color(0),
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    fig.update_xaxes(title_text="β (α = softmax(β z))", type="log", row=1, col=1)
    fig.update_xaxes(title_text="d_head (= rank V)", row=1, col=2)
    fig.update_yaxes(title_text="fraction of α with a harmful collision", range=[0, 1.05], row=1, col=1)
    fig.update_yaxes(range=[0, 1.05], row=1, col=2)
    style(fig, height=340, bottom=50)
    fig.update_layout(margin=dict(l=60, r=10))
    return fig


def example_figure(results: RoutingResults) -> go.Figure:
    """The worked collision: ``alpha`` and the LP's ``alpha'``, same output, different dominant source."""
    a = np.asarray(results.curves["collisions"]["example_alpha"])
    b = results.curves["collisions"]["example_alpha_prime"]
    ex = results.summary["collisions"]["example"]
    pos = np.arange(1, len(a) + 1)
    bars = [go.Bar(x=pos, y=a.round(4), name=f"α (dominant: token {ex['source'] + 1})", marker_color=color(0))]
    if ex.get("found", True):
        b = np.asarray(b)
        name = f"α′ from the LP (dominant: token {ex['new_source'] + 1})"
        bars.append(go.Bar(x=pos, y=b.round(4), name=name, marker_color=color(1)))
        title = f"same head output: ‖Vα − Vα′‖∞ = {ex['residual']:.1e}"
    else:
        title = f"no harmful collision in {ex['tries']} random heads (the last one is shown)"
    fig = go.Figure(bars)
    style(fig, height=300)
    fig.update_layout(
        barmode="group",
        title=dict(text=title, font=dict(size=13)),
        xaxis_title="source token",
        yaxis_title="weight",
        margin=dict(l=60, r=10),
        legend=dict(orientation="h", y=1.12),
    )
    return fig


def accuracy_figure(results: RoutingResults) -> go.Figure:
    """RRT test accuracy of the three FFNs and the controls, single hop and two hops, with chance."""
    s = results.summary
    fig = go.Figure()
    tasks = ["single hop", "two hops (pointer chasing)"]
    for kind in ("standard", "route_aware", "oracle"):
        ys = [s["single"]["accuracy"][kind], s["multi"]["accuracy"][kind]]
        fig.add_trace(
            go.Bar(
                x=tasks,
                y=ys,
                name=KIND_NAMES[kind],
                marker_color=KIND_COLORS[kind],
                text=[f"{y:.2f}" for y in ys],
                textposition="outside",
            )
        )
    controls = s["single"].get("controls", {})
    names = {
        "no_collision": "standard, d_head = {d_head} = n (no collisions)",
        "width_matched": "standard, d_head = {d_head}, d_ff = {d_ff} (width-matched)",
        "content_only": "standard, d_head = {d_head}, values without position",
    }
    for name, control in controls.items():
        # a control trained at one hop only (content-only values) has no two-hop bar
        ys = [s[part]["controls"].get(name, {}).get("accuracy") for part in ("single", "multi")]
        fig.add_trace(
            go.Bar(
                x=tasks,
                y=ys,
                name=names[name].format(d_head=control["d_head"], d_ff=control.get("d_ff", "")),
                marker_color=CONTROL_COLORS[name],
                text=["" if y is None else f"{y:.2f}" for y in ys],
                textposition="outside",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=tasks,
            y=[s[part]["rounding"]["squared_centroid"] for part in ("single", "multi")],
            mode="markers",
            marker=dict(symbol="line-ew-open", size=60, color="black"),
            name="no training: round (n − 1)·c₂",
        )
    )
    fig.add_hline(y=s["single"]["chance"], line=REFERENCE_LINE, annotation_text="chance")
    style(fig, height=430, top=80)
    fig.update_layout(
        barmode="group",
        yaxis=dict(title="accuracy naming the dominant source", range=[0, 1.1]),
        margin=dict(l=60, r=10),
        legend=dict(orientation="h", y=1.25),
    )
    return fig


def all_figures(results: RoutingResults) -> dict[str, go.Figure]:
    """Every figure of the chapter, by name (the runner writes them as HTML)."""
    return {
        "explorable": explorable_figure(),
        "collisions": collision_figure(results),
        "collision_example": example_figure(results),
        "accuracy": accuracy_figure(results),
    }
