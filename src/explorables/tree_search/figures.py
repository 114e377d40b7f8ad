"""Figures of the chapter: builders ``results -> plotly figure`` (small, rounded data)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, style
from .experiment import EXPLORABLE_TREES, TreeSearchResults
from .pathwidth import spine_decomposition
from .search import spine_bound
from .tree import Tree

#: one colour per algorithm and reference curve, from the book's palette
COLORS = {
    "spine": PALETTE["red"],
    "robust": PALETTE["purple"],
    "centroid": PALETTE["blue"],
    "bound": PALETTE["grey"],
    "ref": PALETTE["green"],
}
#: the drawn tree: edges, vertices, the top spine, the candidate set and the target
TREE_COLORS = {
    "edge": "lightgray",
    "vertex": "darkgray",
    "top_spine": PALETTE["orange"],
    "candidate": PALETTE["light_blue"],
    "queried": PALETTE["red"],
    "target": PALETTE["green"],
}


def tidy_layout(parents: np.ndarray | list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates for a rooted tree given in preorder: leaves at consecutive x, parents centred, y = -depth."""
    parents = np.asarray(parents)
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    for v in range(1, n):
        children[parents[v]].append(v)
    x = np.zeros(n)
    y = np.zeros(n)
    leaf = 0
    for v in range(1, n):
        y[v] = y[parents[v]] - 1
    for v in range(n - 1, -1, -1):
        if children[v]:
            x[v] = np.mean([x[c] for c in children[v]])
    # leaves in preorder get consecutive positions; then recompute parents bottom-up
    for v in range(n):
        if not children[v]:
            x[v] = leaf
            leaf += 1
    for v in range(n - 1, -1, -1):
        if children[v]:
            x[v] = np.mean([x[c] for c in children[v]])
    return np.round(x / max(1, leaf - 1), 3), y


def _edges_xy(parents: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[list, list]:
    ex: list[Any] = []
    ey: list[Any] = []
    for v in range(1, len(parents)):
        p = parents[v]
        ex += [float(x[p]), float(x[v]), None]
        ey += [float(y[p]), float(y[v]), None]
    return ex, ey


def _log_ref(etas: list[int], k: int) -> list[float]:
    return [round(k * math.log2(e + 1), 2) for e in etas]


def _family_curves(f: dict[str, Any]) -> dict[str, list]:
    x = [e + 1 for e in f["etas"]]
    return {
        "x": x,
        "spine": [round(v, 2) for v in f["spine_mean"]],
        "robust": [round(v, 2) for v in f["robust_mean"]],
        "centroid": [round(v, 2) for v in f["centroid_mean"]],
        "bound": [spine_bound(e, f["pathwidth"]) for e in f["etas"]],
        "ref": _log_ref(f["etas"], f["pathwidth"]),
    }


def explorable_figure(results: TreeSearchResults) -> go.Figure:
    """Left: a small tree and the spine search stepping through its queries (slider); right: mean
    queries against ``eta`` for the same family at the book's size, with the bound and ``k log2(eta+1)``."""
    s = results.summary
    ex = s["explorable"]
    fams = s["families"]
    frames, labels, starts = [], [], {}
    for name, _n in EXPLORABLE_TREES:
        if name not in ex:
            continue
        info = ex[name]
        parents = np.array(info["parents"])
        x, y = tidy_layout(parents)
        edx, edy = _edges_xy(parents, x, y)
        spine = info["top_spine"]
        sx, sy = [float(x[v]) for v in spine], [float(y[v]) for v in spine]
        curves = _family_curves(fams[name]) if name in fams else None
        target = info["target"]
        for eta, run in info["runs"].items():
            qs, cands = run["spine"]["queries"], run["spine"]["candidates"]
            p = run["prediction"]
            for step in range(len(qs) + 1):
                cand = cands[step] if step < len(qs) else [target]
                done = qs[:step]
                data = [
                    go.Scatter(x=edx, y=edy),
                    go.Scatter(x=x.tolist(), y=y.tolist()),
                    go.Scatter(x=sx, y=sy),
                    go.Scatter(x=[float(x[v]) for v in cand], y=[float(y[v]) for v in cand]),
                    go.Scatter(
                        x=[float(x[v]) for v in done],
                        y=[float(y[v]) for v in done],
                        text=[str(i + 1) for i in range(len(done))],
                    ),
                    go.Scatter(x=[float(x[p])], y=[float(y[p])]),
                    go.Scatter(x=[float(x[target])], y=[float(y[target])]),
                ]
                if curves is not None:
                    data += [
                        go.Scatter(x=curves["x"], y=curves["spine"]),
                        go.Scatter(x=curves["x"], y=curves["robust"]),
                        go.Scatter(x=curves["x"], y=curves["centroid"]),
                        go.Scatter(x=curves["x"], y=curves["bound"]),
                        go.Scatter(x=curves["x"], y=curves["ref"]),
                        go.Scatter(x=[int(eta) + 1], y=[len(qs)]),
                    ]
                fname = f"{name} η={eta} q={step}"
                title = (
                    f"{name} (pathwidth {info['pathwidth']}), prediction error η = {eta}: "
                    f"spine search {len(qs)} queries (centroid: {run['centroid_queries']}) · after {step}"
                )
                frames.append(go.Frame(name=fname, data=data, layout=go.Layout(title_text=title)))
                labels.append(fname)
                starts.setdefault(name, fname)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.58, 0.42], horizontal_spacing=0.08)
    styles = [
        dict(mode="lines", line=dict(color=TREE_COLORS["edge"], width=1), name="edges", hoverinfo="skip"),
        dict(mode="markers", marker=dict(color=TREE_COLORS["vertex"], size=5), name="vertices", hoverinfo="skip"),
        dict(mode="lines", line=dict(color=TREE_COLORS["top_spine"], width=4), name="top spine", opacity=0.6),
        dict(mode="markers", marker=dict(color=TREE_COLORS["candidate"], size=10), name="still possible"),
        dict(
            mode="markers+text",
            marker=dict(color=TREE_COLORS["queried"], size=11),
            textposition="top center",
            textfont=dict(size=10),
            name="queried (in order)",
        ),
        dict(
            mode="markers",
            marker=dict(symbol="diamond-open", size=16, color="black", line=dict(width=2)),
            name="prediction",
        ),
        dict(mode="markers", marker=dict(symbol="star", size=15, color=TREE_COLORS["target"]), name="target"),
        dict(mode="lines+markers", line=dict(color=COLORS["spine"]), name="spine search (mean)"),
        dict(mode="lines+markers", line=dict(color=COLORS["robust"], dash="dot"), name="robust (mean)"),
        dict(mode="lines+markers", line=dict(color=COLORS["centroid"]), name="centroid (mean)"),
        dict(mode="lines", line=dict(color=COLORS["bound"], dash="dash"), name="our bound"),
        dict(mode="lines", line=dict(color=COLORS["ref"], dash="dot"), name="k·log₂(η+1)"),
        dict(mode="markers", marker=dict(size=14, color="black", symbol="x"), name="this search"),
    ]
    first = next(i for i, lab in enumerate(labels) if lab.startswith("caterpillar η=4") and lab.endswith("q=0"))
    for i, tr in enumerate(frames[first].data):
        fig.add_trace(go.Scatter(x=tr.x, y=tr.y, text=tr.text, **styles[i]), row=1, col=1 if i < 7 else 2)
    fig.frames = frames
    fig.update_layout(
        title=dict(text=frames[first].layout.title.text, y=0.985, x=0.01, font=dict(size=14)),
        height=660,
        margin=dict(l=20, r=20, t=110, b=20),
        legend=dict(orientation="h", y=-0.3, font=dict(size=10)),
        sliders=[
            dict(
                active=first,
                currentvalue=dict(prefix="frame: ", font=dict(size=12, color="black")),
                pad=dict(t=10),
                y=-0.02,
                ticklen=0,
                tickcolor="rgba(0,0,0,0)",
                font=dict(color="rgba(0,0,0,0)"),
                steps=[
                    dict(
                        label=lab,
                        method="animate",
                        args=[
                            [lab],
                            dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0)),
                        ],
                    )
                    for lab in labels
                ],
            )
        ],
        updatemenus=[
            dict(
                type="buttons",
                direction="right",
                x=0.0,
                y=1.12,
                xanchor="left",
                showactive=False,
                buttons=[
                    dict(
                        label=name,
                        method="animate",
                        args=[
                            [start],
                            dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0)),
                        ],
                    )
                    for name, start in starts.items()
                ],
            )
        ],
    )
    fig.update_xaxes(visible=False, row=1, col=1)
    fig.update_yaxes(visible=False, row=1, col=1)
    fig.update_xaxes(type="log", title_text="η + 1 (prediction error + 1)", row=1, col=2)
    fig.update_yaxes(title_text="queries", rangemode="tozero", row=1, col=2)
    return fig


def spine_picture(parents: list[int] | np.ndarray, title: str = "") -> go.Figure:
    """A small tree coloured by the level of the spine that holds each vertex (the idea, in one picture)."""
    parents = np.asarray(parents)
    tree = Tree.from_parents(parents)
    D = spine_decomposition(tree)
    # redraw in the tree's own preorder
    order = np.array([tree.labels[i] for i in range(tree.n)])
    x0, y0 = tidy_layout(parents)
    x, y = x0[order], y0[order]
    edx, edy = _edges_xy(tree.parent, x, y)
    fig = go.Figure(
        go.Scatter(x=edx, y=edy, mode="lines", line=dict(color=TREE_COLORS["edge"]), hoverinfo="skip", showlegend=False)
    )
    # level 0 red, then orange, green, ... (the chapter's text names the first two)
    palette = [PALETTE[k] for k in ("red", "orange", "green", "blue", "purple", "brown", "pink")]
    for level in range(D.depth):
        comps = np.flatnonzero(D.level == level)
        for j, c in enumerate(comps):
            sp = D.spines[c]
            fig.add_trace(
                go.Scatter(
                    x=x[sp],
                    y=y[sp],
                    mode="lines+markers",
                    line=dict(color=palette[level % len(palette)], width=3),
                    marker=dict(size=7),
                    name=f"level {level} spines (pathwidth ≤ {D.pathwidth - level})",
                    legendgroup=str(level),
                    showlegend=j == 0,
                    hoverinfo="skip",
                )
            )
    style(fig, height=380, top=50, bottom=10)
    fig.update_layout(
        title_text=title or f"spine decomposition, pathwidth {D.pathwidth}",
        xaxis_visible=False,
        yaxis_visible=False,
    )
    return fig


def idea_figure(results: TreeSearchResults) -> go.Figure:
    """The spine decompositions of the small spider and complete binary tree of the explorable."""
    ex = results.summary["explorable"]
    name = "complete binary" if "complete binary" in ex else next(iter(ex))
    return spine_picture(ex[name]["parents"], f"{name}: spines by level (pathwidth {ex[name]['pathwidth']})")


def curves_figure(results: TreeSearchResults) -> go.Figure:
    """Mean (and worst) queries against eta for every family and real tree, with the bound."""
    s = results.summary
    panels = {**s["families"], **{k: v for k, v in s["real"].items() if "etas" in v}}
    names = list(panels)
    cols = 4
    rows = math.ceil(len(names) / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[f"{k} (n={v['n']:,}, pw {v['pathwidth']})" for k, v in panels.items()],
        vertical_spacing=0.14,
    )
    for i, name in enumerate(names):
        f = panels[name]
        c = _family_curves(f)
        r, col = i // cols + 1, i % cols + 1
        show = i == 0
        # (y values, legend name, line or marker style, legend group) of each curve in a panel
        curves = [
            (c["spine"], "spine search (mean)", dict(line=dict(color=COLORS["spine"])), "s"),
            (
                f["spine_max"],
                "spine search (worst)",
                dict(mode="markers", marker=dict(color=COLORS["spine"], symbol="triangle-up-open")),
                "sw",
            ),
            (c["robust"], "robust (mean)", dict(line=dict(color=COLORS["robust"], dash="dot")), "r"),
            (c["centroid"], "centroid (mean)", dict(line=dict(color=COLORS["centroid"])), "c"),
            (c["bound"], "our bound", dict(line=dict(color=COLORS["bound"], dash="dash")), "b"),
            (c["ref"], "k·log₂(η+1)", dict(line=dict(color=COLORS["ref"], dash="dot")), "k"),
        ]
        for y, label, look, group in curves:
            fig.add_trace(go.Scatter(x=c["x"], y=y, name=label, legendgroup=group, showlegend=show, **look), r, col)
        fig.update_xaxes(type="log", row=r, col=col)
        fig.update_yaxes(
            range=[0, max(max(f["spine_max"]), max(c["bound"][:-1] or [1]), f["centroid_bound"]) + 2], row=r, col=col
        )
    fig.update_xaxes(title_text="η + 1", row=rows)
    style(fig, height=330 * rows, top=50)
    fig.update_layout(legend=dict(orientation="h", y=-0.12))
    return fig


def lower_bound_figure(results: TreeSearchResults) -> go.Figure:
    """Complete binary tree, prediction at the root: worst queries grow linearly in eta."""
    lb = results.summary["lower_bound"]
    rows = lb["rows"]
    eta = [r["eta"] for r in rows]
    fig = go.Figure()
    for a in ("spine", "robust", "centroid"):
        fig.add_trace(
            go.Scatter(
                x=eta,
                y=[r[f"{a}_max"] for r in rows],
                name=f"{a} (worst)",
                line=dict(color=COLORS[a], dash="dot" if a == "robust" else None),
            )
        )
    fig.add_trace(
        go.Scatter(
            x=eta,
            y=[r["counting_bound"] for r in rows],
            name="any algorithm needs ≥ ⌈η/2⌉",
            line=dict(color="black", dash="dash"),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=eta,
            y=[round(math.log2(e + 1), 2) for e in eta],
            name="log₂(η+1)",
            line=dict(color=COLORS["ref"], dash="dot"),
        )
    )
    style(fig, height=380, top=50)
    fig.update_layout(
        title_text=f"complete binary tree (n={lb['n']:,}), prediction at the root",
        xaxis_title="η (depth of the target)",
        yaxis_title="queries",
    )
    return fig


def family_figure(results: TreeSearchResults) -> go.Figure:
    """The lower-bound family: queries the adversary forces, the optimum and the proven bound, against k log2(eta+1)."""
    fam = results.summary["family"]
    rows = sorted(fam["rows"], key=lambda r: r["k_log_eta"])
    x = [round(r["k_log_eta"], 2) for r in rows]
    text = [f"k={r['k']}, L={r['length']}, η={r['eta']}, n={r['n']:,}" for r in rows]
    series = [
        *((f"{a}, forced", [r["forced"][a] for r in rows], COLORS[a], 9, "circle" if a == "spine" else "square")
          for a in ("spine", "centroid")),
        ("optimum (any algorithm)", [r["optimum"] for r in rows], "black", 8, "diamond"),
        ("proven: 1 + k⌊log₂ L⌋", [r["proven_bound"] for r in rows], COLORS["bound"], 8, "x"),
    ]  # fmt: skip
    fig = go.Figure()
    for name, y, color, size, symbol in series:
        fig.add_trace(
            go.Scatter(
                x=x, y=y, name=name, mode="markers", marker=dict(color=color, size=size, symbol=symbol), text=text
            )
        )
    top = max(x) * 1.05
    for c, dash in ((1.0, "dot"), (0.5, "dash")):
        fig.add_trace(
            go.Scatter(
                x=[0, top],
                y=[0, c * top],
                mode="lines",
                name=f"{c:g}·k log₂(η+1)",
                line=dict(color=COLORS["ref"], dash=dash),
            )
        )
    style(fig, height=400, top=50)
    fig.update_layout(
        title_text="nested spiders S_k(L): worst case vs k log₂(η+1)", xaxis_title="k·log₂(η+1)", yaxis_title="queries"
    )
    return fig


def dendrogram_figure(results: TreeSearchResults) -> go.Figure:
    """Learned predictions on the digits dendrogram: mean queries per eta bin for each predictor."""
    dends = {k: v for k, v in results.summary["real"].items() if "pca_dims" in v}
    fig = go.Figure()
    dashes = ("solid", "dash", "dot", "dashdot")
    for i, d in enumerate(dends.values()):
        x = [b["bin"] for b in d["bins"]]
        label = f"{d['pca_dims']}-D PCA"
        for a in ("spine", "centroid"):
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[round(b[f"{a}_mean"], 2) for b in d["bins"]],
                    name=f"{a}, prediction from {label}",
                    line=dict(color=COLORS[a], dash=dashes[i % 4]),
                    text=[f"{b['count']} digits" for b in d["bins"]],
                )
            )
    d0 = next(iter(dends.values()))
    style(fig, height=380, top=50)
    fig.update_layout(
        title_text=f"digits dendrogram (n={d0['n']:,}): mean queries by prediction error (hover: how many digits)",
        xaxis_title="η (tree distance between predicted and true leaf)",
        yaxis_title="queries",
    )
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=[b[0] for b in _BIN_ORDER])
    return fig


_BIN_ORDER = (("0",), ("1",), ("2",), ("3–4",), ("5–8",), ("9–16",), ("17–32",), ("≥ 33",))


def all_figures(results: TreeSearchResults) -> dict[str, go.Figure]:
    """Every figure of the chapter, by name (what the runner writes as HTML)."""
    return {
        "explorable": explorable_figure(results),
        "idea": idea_figure(results),
        "curves": curves_figure(results),
        "lower_bound": lower_bound_figure(results),
        "family": family_figure(results),
        "dendrogram": dendrogram_figure(results),
    }
