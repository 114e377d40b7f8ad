"""Figures of the chapter, built from :class:`~explorables.trac.experiment.TracResults`.

Builders take results (they never re-run the method) and return plotly figures; the notebook
shows them with :func:`explorables.core.plotting.show`.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, add_frame, frame_slider, style
from .experiment import TracResults

SHORT_NAMES = {
    "ff_conjunctive": "fire (and)",
    "ff_disjunctive": "fire (or)",
    "rock_throwing": "rocks",
    "voting_6_5": "vote 6–5",
    "voting_3_0": "vote 3–0",
    "double_prevention": "double prev.",
    "bogus_prevention": "bogus prev.",
}
#: node colours of the explorable and the lab, by role in the cause's witness
ROLE_COLOURS = {"cause": PALETTE["red"], "contingency": PALETTE["blue"], "outcome": PALETTE["gold"], "free": "silver"}
EDGE_COLOUR = "darkgray"


def layered_positions(nodes: list[str], edges: list[list[str]]) -> dict[str, tuple[float, float]]:
    """Left-to-right layers by topological generation (networkx), nodes spread evenly per layer."""
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    pos = {}
    for x, layer in enumerate(nx.topological_generations(g)):
        layer = sorted(layer, key=nodes.index)
        for k, v in enumerate(layer):
            pos[v] = (float(x), (len(layer) - 1) / 2 - k)
    return pos


def _roles(ex: dict[str, Any], cause: dict[str, Any]) -> dict[str, str]:
    phi_vars = [v for v in ex["actual"] if v in ex["outcome"].replace("(", " ").replace(")", " ").split()]
    roles = {}
    for v in ex["actual"]:
        roles[v] = (
            "cause" if v in cause["X"] else "contingency" if v in cause["W"] else "outcome" if v in phi_vars else "free"
        )
    return roles


def _cause_title(ex: dict[str, Any], i: int) -> str:
    c = ex["causes"][i]
    x = " ∧ ".join(f"{v}={ex['actual'][v]}" for v in c["X"])
    alt = ", ".join(f"{v}←{val}" for v, val in c["alternative"].items())
    w = ", ".join(f"{v}={val}" for v, val in c["W"].items())
    held = f"; hold {w}" if w else ""
    return (
        f"<b>{ex['title']}</b>: cause {i + 1} of {len(ex['causes'])}: <b>{x}</b> "
        f"<span style='font-size:11px'>(set {alt}{held} → {ex['outcome']} becomes false)</span>"
    )


def explorable_figure(results: TracResults) -> go.Figure:
    """The explorable: each example as a graph; the slider steps through every cause of every
    example, and the buttons jump to an example's first cause.

    Red: the cause X⃗ (its counterfactual value shown after the arrow); blue: the contingency
    W⃗, held at its actual value; gold: the outcome's variables; grey: free variables. Every
    node shows "actual → value in the counterfactual world".
    """
    examples = results.summary["examples"]
    fig = go.Figure()
    frames: list[list[int]] = []  # one per (example, cause): its edge trace and its node trace
    labels, titles, first = [], [], {}
    for key, ex in examples.items():
        nodes = list(ex["actual"])
        pos = layered_positions(nodes, ex["edges"])
        xs, ys = [], []
        for a, b in ex["edges"]:
            xs += [pos[a][0], pos[b][0], None]
            ys += [pos[a][1], pos[b][1], None]
        edge = go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=EDGE_COLOUR, width=1.2), hoverinfo="skip")
        (edges,) = add_frame(fig, [edge])
        first[key] = len(frames)
        for i, cause in enumerate(ex["causes"]):
            roles = _roles(ex, cause)
            nodes_trace = go.Scatter(
                x=[pos[v][0] for v in nodes],
                y=[pos[v][1] for v in nodes],
                mode="markers+text",
                text=[f"{v}<br>{ex['actual'][v]}→{cause['world'][v]}" for v in nodes],
                textposition="middle center",
                textfont=dict(size=10),
                hovertext=[f"{v} = {ex['equations'][v]}<br>role: {roles[v]}" for v in nodes],
                hoverinfo="text",
                marker=dict(
                    size=46,
                    color=[ROLE_COLOURS[roles[v]] for v in nodes],
                    opacity=0.85,
                    line=dict(color="black", width=1),
                ),
            )
            frames.append([edges, *add_frame(fig, [nodes_trace])])
            labels.append(" ∧ ".join(cause["X"]))
            titles.append({"title.text": _cause_title(ex, i)})
    fig.update_traces(showlegend=False)
    frame_slider(fig, frames, labels, prefix="cause: ", layouts=titles)
    fig.layout.sliders[0].update(x=0.05, len=0.9)

    def jump(k: int) -> list[Any]:  # what a button does: the slider's step k, shown as the slider would
        shown = set(frames[k])
        return [{"visible": [i in shown for i in range(len(fig.data))]}, {**titles[k], "sliders[0].active": k}]

    buttons = [
        dict(method="update", label=SHORT_NAMES.get(key, examples[key]["title"]), args=jump(k))
        for key, k in first.items()
    ]
    legend = " ".join(f"<span style='color:{c}'>●</span> {name}" for name, c in ROLE_COLOURS.items())
    style(fig, height=520, top=120, bottom=10)
    fig.update_layout(
        title=dict(font=dict(size=13)),
        updatemenus=[
            dict(
                type="buttons",
                direction="right",
                buttons=buttons,
                x=0,
                y=1.13,
                xanchor="left",
                showactive=True,
                font=dict(size=10),
            )
        ],
        xaxis=dict(visible=False),
        yaxis=dict(visible=False),
        autosize=True,  # width follows the page's column (no fixed width)
        annotations=[
            dict(
                text=legend + " · node text: actual → counterfactual value",
                x=0,
                y=1.02,
                xref="paper",
                yref="paper",
                showarrow=False,
                xanchor="left",
                font=dict(size=11),
            )
        ],
    )
    return fig


def scaling_figure(results: TracResults) -> go.Figure:
    """Time, causes and baseline recall against the number of variables n (medians per n)."""
    per_n = results.summary["scaling"]["per_n"]
    ns = [p["n"] for p in per_n]
    fig = make_subplots(
        rows=2,
        cols=2,
        vertical_spacing=0.16,
        subplot_titles=(
            "median time per instance (s)",
            "evaluations per instance (mean)",
            "recall of the cause set",
            "causes per instance (mean, max dotted)",
        ),
    )
    styles = {
        "trac": ("TrAC (witness worlds)", PALETTE["red"]),
        "pruned": ("pruned search", PALETTE["purple"]),
        "brute": ("brute force (oracle)", "black"),
        "brute_anc": ("brute force over ancestors", PALETTE["brown"]),
        "but_for": ("but-for baseline", PALETTE["blue"]),
        "first": ("first cause found", PALETTE["green"]),
    }
    for key, (name, colour) in styles.items():
        column = f"time_{key}_median_seconds"
        pts = [(p["n"], p[column]) for p in per_n if p.get(column) is not None]
        if pts:
            fig.add_trace(
                go.Scatter(
                    x=[a for a, _ in pts],
                    y=[round(b, 6) for _, b in pts],
                    name=name,
                    mode="lines+markers",
                    line=dict(color=colour),
                    legendgroup=key,
                ),
                1,
                1,
            )
    for key in ("trac", "pruned", "brute", "brute_anc"):
        name, colour = styles[key]
        pts = [(p["n"], p[f"rows_{key}_mean"]) for p in per_n if p.get(f"rows_{key}_mean") is not None]
        fig.add_trace(
            go.Scatter(
                x=[a for a, _ in pts],
                y=[round(b, 1) for _, b in pts],
                name=name,
                showlegend=False,
                mode="lines+markers",
                line=dict(color=colour),
                legendgroup=key,
            ),
            1,
            2,
        )
    fig.add_trace(
        go.Scatter(
            x=ns,
            y=[1.0] * len(ns),
            mode="lines+markers",
            line=dict(color=PALETTE["red"]),
            name="TrAC",
            legendgroup="trac",
            showlegend=False,
        ),
        2,
        1,
    )
    for key in ("but_for", "first"):
        name, colour = styles[key]
        fig.add_trace(
            go.Scatter(
                x=ns,
                y=[round(p[f"recall_{key}"], 4) for p in per_n],
                mode="lines+markers",
                line=dict(color=colour),
                name=name,
                legendgroup=key,
                showlegend=False,
            ),
            2,
            1,
        )
    fig.add_trace(
        go.Scatter(
            x=ns,
            y=[round(p["causes_mean"], 3) for p in per_n],
            mode="lines+markers",
            line=dict(color=PALETTE["red"]),
            name="mean",
            showlegend=False,
        ),
        2,
        2,
    )
    fig.add_trace(
        go.Scatter(
            x=ns,
            y=[p["causes_max"] for p in per_n],
            mode="lines+markers",
            line=dict(color=PALETTE["red"], dash="dot"),
            name="max",
            showlegend=False,
        ),
        2,
        2,
    )
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_yaxes(range=[0, 1.05], row=2, col=1)
    fig.update_xaxes(title_text="n (endogenous variables)", row=2)
    style(fig, height=620)
    fig.update_layout(autosize=True, legend=dict(orientation="h", y=-0.14))
    return fig


def all_figures(results: TracResults) -> dict[str, go.Figure]:
    """Every figure of the chapter by name (the command line saves these)."""
    return {"explorable": explorable_figure(results), "scaling": scaling_figure(results)}
