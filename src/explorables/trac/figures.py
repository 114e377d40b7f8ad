"""Figures of the chapter, built from :class:`~explorables.trac.experiment.TracResults`.

Builders take results (they never re-run the method) and return plotly figures; the notebook
shows them with :func:`explorables.core.plotting.show`.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import plotly.graph_objects as go
from plotly.subplots import make_subplots

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
ROLE_COLOURS = {"cause": "#d62728", "contingency": "#1f77b4", "outcome": "#e6a817", "free": "#b0b0b0"}


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
    """The explorable: each example as a graph; buttons pick the example, the slider a cause.

    Red: the cause X⃗ (its counterfactual value shown after the arrow); blue: the contingency
    W⃗, held at its actual value; gold: the outcome's variables; grey: free variables. Every
    node shows "actual → value in the counterfactual world".
    """
    examples = results.summary["examples"]
    fig = go.Figure()
    index: list[tuple[str, int | None]] = []  # (example, cause index or None for edges)
    for key, ex in examples.items():
        nodes = list(ex["actual"])
        pos = layered_positions(nodes, ex["edges"])
        xs, ys = [], []
        for a, b in ex["edges"]:
            xs += [pos[a][0], pos[b][0], None]
            ys += [pos[a][1], pos[b][1], None]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line=dict(color="#999", width=1.2),
                hoverinfo="skip",
                visible=False,
                showlegend=False,
            )
        )
        index.append((key, None))
        for i, cause in enumerate(ex["causes"]):
            roles = _roles(ex, cause)
            text = [f"{v}<br>{ex['actual'][v]}→{cause['world'][v]}" for v in nodes]
            hover = [f"{v} = {ex['equations'][v]}<br>role: {roles[v]}" for v in nodes]
            fig.add_trace(
                go.Scatter(
                    x=[pos[v][0] for v in nodes],
                    y=[pos[v][1] for v in nodes],
                    mode="markers+text",
                    text=text,
                    textposition="middle center",
                    textfont=dict(size=10),
                    hovertext=hover,
                    hoverinfo="text",
                    marker=dict(
                        size=46,
                        color=[ROLE_COLOURS[roles[v]] for v in nodes],
                        opacity=0.85,
                        line=dict(color="#333", width=1),
                    ),
                    visible=False,
                    showlegend=False,
                )
            )
            index.append((key, i))

    def visible(key: str, i: int) -> list[bool]:
        return [k == key and (j is None or j == i) for k, j in index]

    def slider(key: str) -> dict[str, Any]:
        ex = examples[key]
        steps = [
            dict(
                method="update",
                label=" ∧ ".join(c["X"]),
                args=[{"visible": visible(key, i)}, {"title.text": _cause_title(ex, i)}],
            )
            for i, c in enumerate(ex["causes"])
        ]
        return dict(active=0, steps=steps, currentvalue=dict(prefix="cause: "), pad=dict(t=30), x=0.05, len=0.9)

    keys = list(examples)
    buttons = [
        dict(
            method="update",
            label=SHORT_NAMES.get(k, examples[k]["title"]),
            args=[{"visible": visible(k, 0)}, {"sliders": [slider(k)], "title.text": _cause_title(examples[k], 0)}],
        )
        for k in keys
    ]
    for t, v in zip(fig.data, visible(keys[0], 0), strict=True):
        t.visible = v
    legend = " ".join(f"<span style='color:{c}'>●</span> {name}" for name, c in ROLE_COLOURS.items())
    fig.update_layout(
        title=dict(text=_cause_title(examples[keys[0]], 0), font=dict(size=13)),
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
        sliders=[slider(keys[0])],
        xaxis=dict(visible=False),
        yaxis=dict(visible=False),
        height=520,
        autosize=True,  # width follows the page's column (no fixed width)
        margin=dict(l=10, r=10, t=120, b=10),
        plot_bgcolor="white",
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
            "interventions / configurations evaluated (mean)",
            "recall of the cause set",
            "causes per instance (mean, max dotted)",
        ),
    )
    styles = {
        "trac": ("TrAC (witness worlds)", "#d62728"),
        "pruned": ("pruned search", "#9467bd"),
        "brute": ("brute force (oracle)", "#333333"),
        "brute_anc": ("brute force over ancestors", "#8c564b"),
        "but_for": ("but-for baseline", "#1f77b4"),
        "first": ("first cause found", "#2ca02c"),
    }
    for key, (name, colour) in styles.items():
        pts = [(p["n"], p[f"time_{key}_median_s"]) for p in per_n if p.get(f"time_{key}_median_s") is not None]
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
            line=dict(color="#d62728"),
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
            line=dict(color="#d62728"),
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
            line=dict(color="#d62728", dash="dot"),
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
    fig.update_layout(
        height=620, autosize=True, margin=dict(l=40, r=10, t=40, b=40), legend=dict(orientation="h", y=-0.14)
    )
    return fig


def all_figures(results: TracResults) -> dict[str, go.Figure]:
    """Every figure of the chapter by name (the command line saves these)."""
    return {"explorable": explorable_figure(results), "scaling": scaling_figure(results)}
