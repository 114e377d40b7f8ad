"""Figures: the idea (samples before and after), the explorable (a slider over the guidance scale),
the scale sweep, the digits and the fairness table. Builders take results and return figures."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .experiment import JeffreyResults

CELL_NAMES = ("x₁<0, x₂<0", "x₁<0, x₂>0", "x₁>0, x₂<0", "x₁>0, x₂>0")
CELL_COLORS = (PALETTE["blue"], PALETTE["orange"], PALETTE["green"], PALETTE["purple"])
N_SHOWN = 700  # points per scatter (the page stays small)


def _cells(x: np.ndarray) -> np.ndarray:
    return 2 * (x[:, 0] > 0) + (x[:, 1] > 0)


def _scatter(x: np.ndarray, name: str, showlegend: bool = False) -> list[go.Scatter]:
    x = x[:N_SHOWN]
    cells = _cells(x)
    return [
        go.Scatter(
            x=x[cells == s, 0],
            y=x[cells == s, 1],
            mode="markers",
            name=CELL_NAMES[s],
            legendgroup=str(s),
            showlegend=showlegend,
            marker=dict(size=3, color=CELL_COLORS[s], opacity=0.6),
        )
        for s in range(4)
    ]


def _joint(x: np.ndarray) -> np.ndarray:
    return np.bincount(_cells(x), minlength=4) / len(x)


def idea_figure(results: JeffreyResults) -> go.Figure:
    """Unguided samples of the toy model and exact samples of its Jeffrey update toward p(a)p(b)."""
    c = results.curves["toy"]
    fig = make_subplots(
        rows=1,
        cols=3,
        column_widths=[0.36, 0.36, 0.28],
        subplot_titles=("the model p (unguided samples)", "Jeffrey's update p′ (exact samples)", "cell marginal"),
    )
    for tr in _scatter(c["unguided"], "p", showlegend=True):
        fig.add_trace(tr, row=1, col=1)
    for tr in _scatter(c["exact"], "p′"):
        fig.add_trace(tr, row=1, col=2)
    fig.add_trace(
        go.Bar(x=list(CELL_NAMES), y=_joint(c["unguided"]), name="p(a, b)", marker_color=PALETTE["grey"]), row=1, col=3
    )
    fig.add_trace(
        go.Bar(x=list(CELL_NAMES), y=np.asarray(c["target"]), name="q = p(a) p(b)", marker_color=PALETTE["red"]),
        row=1,
        col=3,
    )
    for col in (1, 2):
        fig.update_xaxes(range=[-3.2, 3.2], row=1, col=col, title_text="x₁")
        fig.update_yaxes(
            range=[-3.2, 3.2], row=1, col=col, scaleanchor=f"x{col}", title_text="x₂" if col == 1 else None
        )
    fig.update_xaxes(tickangle=45, row=1, col=3)
    return style(fig, height=380, legend_below=True, bottom=90)


def explorable_figure(results: JeffreyResults) -> go.Figure:
    """Slider over the guidance scale: Jeffrey and classifier-guidance samples, and the cell marginal of each."""
    c, sweep = results.curves["toy"], results.summary["toy"]["sweep"]
    scales = [float(s) for s in c["scales"]]
    fig = make_subplots(
        rows=1,
        cols=3,
        column_widths=[0.35, 0.35, 0.30],
        subplot_titles=("Jeffrey guidance", "classifier guidance (y ~ q)", "cell marginal"),
    )
    fig.add_trace(
        go.Bar(x=list(CELL_NAMES), y=np.asarray(c["target"]), name="target q", marker_color=PALETTE["red"]),
        row=1,
        col=3,
    )
    frames, layouts = [], []
    active = scales.index(1.0) if 1.0 in scales else 0
    for k, s in enumerate(scales):
        xj, xc = c["jeffrey"][k], c["classifier"][k]
        traces = [(tr, 1, 1) for tr in _scatter(xj, "J", showlegend=k == active)] + [
            (tr, 1, 2) for tr in _scatter(xc, "C")
        ]
        traces += [
            (go.Bar(x=list(CELL_NAMES), y=_joint(xj), name="Jeffrey", marker_color=PALETTE["dark_blue"]), 1, 3),
            (go.Bar(x=list(CELL_NAMES), y=_joint(xc), name="classifier guidance", marker_color=PALETTE["gold"]), 1, 3),
        ]
        frames.append(add_frame(fig, traces))
        j, cg = sweep["jeffrey"][k], sweep["classifier"][k]
        layouts.append(
            {
                "title.text": f"γ = {s:g}: TV to q {j['tv']:.3f} (Jeffrey) vs {cg['tv']:.3f} (classifier); "
                f"conditional MMD² {j['cond_mmd2']:.3f} vs {cg['cond_mmd2']:.3f}"
            }
        )
    for col in (1, 2):
        fig.update_xaxes(range=[-3.2, 3.2], row=1, col=col, title_text="x₁")
        fig.update_yaxes(range=[-3.2, 3.2], row=1, col=col, scaleanchor=f"x{col}")
    fig.update_xaxes(tickangle=45, row=1, col=3)
    fig.update_yaxes(range=[0, 0.8], row=1, col=3)
    style(fig, height=470, legend_below=True, top=70, bottom=110)
    fig.update_layout(barmode="group", title=dict(font=dict(size=12)))
    return frame_slider(
        fig, frames, [f"{s:g}" for s in scales], prefix="guidance scale γ = ", active=active, layouts=layouts, y=-0.45
    )


def sweep_figure(results: JeffreyResults) -> go.Figure:
    """TV to the target and conditional MMD² against the guidance scale (first seed), both methods."""
    sweep, t = results.summary["toy"]["sweep"], results.summary["toy"]
    scales = sweep["scales"]
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("TV to the target marginal q", "conditional MMD² given the cell")
    )
    for i, (key, name) in enumerate((("jeffrey", "Jeffrey guidance"), ("classifier", "classifier guidance (y ~ q)"))):
        for col, metric in ((1, "tv"), (2, "cond_mmd2")):
            fig.add_trace(
                go.Scatter(
                    x=scales,
                    y=[r[metric] for r in sweep[key]],
                    mode="lines+markers",
                    name=name,
                    showlegend=col == 1,
                    line=dict(color=color(i)),
                ),
                row=1,
                col=col,
            )
    for col, metric in ((1, "tv"), (2, "cond_mmd2")):
        fig.add_hline(
            y=t["seeds"][0]["unguided"][metric],
            line=REFERENCE_LINE,
            row=1,
            col=col,
            annotation_text="unguided",
            annotation_position="top left",
        )
    fig.update_xaxes(type="log", title_text="guidance scale γ")
    return style(fig, height=340, legend_below=True, bottom=80)


def digits_figure(results: JeffreyResults) -> go.Figure:
    """Rows of images: held-out real, unguided, Jeffrey (embedding target), classifier guidance, Jeffrey (fairness)."""
    c = results.curves["images"]
    rows = [("held-out real", "real"), ("unguided", "unguided"), ("Jeffrey: embedding", "jeffrey"),
            ("classifier guidance", "classifier"), ("Jeffrey: fairness", "fair_jeffrey")]  # fmt: skip
    n = min(12, len(c["real"]))
    first = np.asarray(c["real"][0])
    channels, h, w = first.shape
    pad = max(1, h // 8)
    mosaic = np.full((len(rows) * (h + pad), n * (w + pad), 3), 255, dtype=np.uint8)
    for r, (_, key) in enumerate(rows):
        for j in range(n):
            img = (np.asarray(c[key][j]).transpose(1, 2, 0) + 1) / 2  # [-1, 1] -> [0, 1], H x W x C
            img = np.repeat(1 - img, 3, axis=2) if channels == 1 else img  # digits: dark ink on white
            mosaic[r * (h + pad) : r * (h + pad) + h, j * (w + pad) : j * (w + pad) + w] = np.clip(img * 255, 0, 255)
    fig = go.Figure(go.Image(z=mosaic, hoverinfo="skip"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(tickvals=[r * (h + pad) + h / 2 for r in range(len(rows))], ticktext=[label for label, _ in rows])
    return style(fig, height=60 * len(rows) + 40, top=10, bottom=10)


def fairness_figure(results: JeffreyResults) -> go.Figure:
    """P(thick stroke | class) for the unguided model, Jeffrey guidance, what its classifier's confusion predicts
    (``rule.jeffrey_marginal_with``), classifier guidance with the same classifier and the target (first seed)."""
    fair = results.summary["images"]["seeds"][0]["fairness"]
    n_classes = len(fair["target"]) // 2
    fig = go.Figure()
    for i, (key, name) in enumerate(
        (
            ("unguided", "unguided"),
            ("jeffrey", "Jeffrey guidance"),
            ("predicted_jeffrey", "Jeffrey, as its classifier's confusion predicts"),
            ("classifier", "classifier guidance, y ~ q (capability control)"),
        )
    ):
        if key not in fair:
            continue
        joint = np.asarray(fair[key]["joint"]).reshape(n_classes, 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_thick = joint[:, 1] / joint.sum(1)
        fig.add_trace(go.Bar(x=list(range(n_classes)), y=p_thick, name=name, marker_color=color(i)))
    target = np.asarray(fair["target"]).reshape(n_classes, 2)
    fig.add_hline(y=float(target[:, 1].sum()), line=REFERENCE_LINE, annotation_text="target: P(thick) for every class")
    fig.update_layout(
        barmode="group",
        xaxis_title="digit class (predicted)",
        yaxis_title="P(thick stroke | class)",
        xaxis=dict(dtick=1),
        yaxis=dict(range=[0, 1]),
    )
    return style(fig, height=340, legend_below=True, bottom=80)


def all_figures(results: JeffreyResults) -> dict:
    """Every figure of the chapter by name (the command line writes them as HTML/PNG)."""
    figs = {
        "idea": idea_figure(results),
        "explorable": explorable_figure(results),
        "sweep": sweep_figure(results),
    }
    if "images" in results.curves:
        figs["digits"] = digits_figure(results)
        figs["fairness"] = fairness_figure(results)
    return figs
