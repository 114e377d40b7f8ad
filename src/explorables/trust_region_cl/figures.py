"""Figures: samples of every task per method with a slider over the task sequence (the explorable),
quality of every task along the sequence, re-convergence steps, and the MAML reading."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .continual import METHODS
from .experiment import TRAINED, TrustRegionCLResults
from .tasks import TASK_LABELS

METHOD_COLORS = {m: color(i) for i, m in enumerate(TRAINED)}


def explorable_figure(results: TrustRegionCLResults, n_points: int = 200) -> go.Figure:
    """Samples of every task seen so far (columns) for every method (rows), first seed; the slider
    steps through the sequence: "after task k". The top row is real data."""
    cfg = results.config
    samples = results.curves["sequence"]["samples"]  # per k: (methods, k + 1, n, d)
    reference = np.asarray(results.curves["sequence"]["reference"])  # (K, n, d)
    k_tasks, rows = len(cfg.tasks), ["real data", *[METHODS[m].label for m in TRAINED]]
    fig = make_subplots(
        rows=len(rows),
        cols=k_tasks,
        horizontal_spacing=0.01,
        vertical_spacing=0.012,
        column_titles=[TASK_LABELS[t] for t in cfg.tasks],
        row_titles=rows,
    )
    marker = dict(size=2.5)
    # SVG scatter, not WebGL (Scattergl): a page may hold about 16 WebGL contexts and this figure
    # has one panel per method and task; without WebGL (some school machines) nothing would draw
    for j in range(k_tasks):  # real data: always shown
        pts = reference[j, :n_points]
        fig.add_trace(
            go.Scatter(
                x=pts[:, 0].round(3),
                y=pts[:, 1].round(3),
                mode="markers",
                showlegend=False,
                marker=dict(color=PALETTE["grey"], **marker),
                hoverinfo="skip",
            ),
            row=1,
            col=j + 1,
        )
    frames, labels = [], []
    for k in range(k_tasks):
        traces = []
        for i, m in enumerate(TRAINED):
            for j in range(k + 1):
                pts = np.asarray(samples[k])[i, j, :n_points]
                traces.append(
                    (
                        go.Scatter(
                            x=pts[:, 0].round(3),
                            y=pts[:, 1].round(3),
                            mode="markers",
                            showlegend=False,
                            marker=dict(color=METHOD_COLORS[m], **marker),
                            hoverinfo="skip",
                        ),
                        i + 2,
                        j + 1,
                    )
                )
        frames.append(add_frame(fig, traces))
        labels.append(f"{k + 1}: {TASK_LABELS[cfg.tasks[k]]}")
    fig.update_xaxes(range=[-3, 3], showticklabels=False, showgrid=False, zeroline=False)
    fig.update_yaxes(range=[-3, 3], showticklabels=False, showgrid=False, zeroline=False)
    fig.update_annotations(font_size=10)
    frame_slider(fig, frames, labels, prefix="after task ", active=k_tasks - 1)
    return style(fig, height=130 * len(rows) + 80, top=40)


def forgetting_figure(results: TrustRegionCLResults) -> go.Figure:
    """Sliced Wasserstein distance of every task (panels) along the sequence, one line per method (mean over seeds)."""
    cfg = results.config
    matrix = np.asarray(results.curves["sequence"]["swd_matrix"])  # (methods, after k, task j)
    floor = results.summary["sequence"]["floor"]["mean"]
    k_tasks = len(cfg.tasks)
    fig = make_subplots(
        rows=1,
        cols=k_tasks,
        shared_yaxes=True,
        subplot_titles=[TASK_LABELS[t] for t in cfg.tasks],
        horizontal_spacing=0.02,
    )
    x = np.arange(1, k_tasks + 1)
    for j in range(k_tasks):
        for i, m in enumerate(TRAINED):
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=matrix[i, :, j],
                    mode="lines+markers",
                    name=METHODS[m].label,
                    legendgroup=m,
                    showlegend=j == 0,
                    line=dict(color=METHOD_COLORS[m], width=1.5),
                    marker=dict(size=4),
                ),
                row=1,
                col=j + 1,
            )
        fig.add_hline(y=floor, line=REFERENCE_LINE, row=1, col=j + 1)
    fig.update_xaxes(title_text="after task", tickvals=list(x))
    fig.update_yaxes(title_text="sliced Wasserstein (lower: better)", row=1, col=1)
    return style(fig, height=360, legend_below=True, bottom=90)


def reconvergence_figure(results: TrustRegionCLResults) -> go.Figure:
    """The re-learning area per method (mean ± sd over seeds): the held-out loss's relative excess over the common
    target, averaged over the fine-tuning window and the earlier tasks (lower: back faster)."""
    rec = results.summary["reconvergence"]["methods"]
    fig = go.Figure()
    for m in TRAINED:
        fig.add_trace(
            go.Bar(
                x=[METHODS[m].label],
                y=[rec[m]["area"]["mean"]],
                name=METHODS[m].label,
                marker_color=METHOD_COLORS[m],
                showlegend=False,
                error_y=dict(type="data", array=[rec[m]["area"]["sd"]]),
            )
        )
    fig.update_yaxes(title_text="re-learning area (loss above target; lower: faster)")
    return style(fig, height=340)


def maml_figure(results: TrustRegionCLResults) -> go.Figure:
    """Cosine of the trust-region step with the one-step update, and with the plain gradient, against lambda."""
    s = results.summary["maml"]
    fig = go.Figure()
    for key, name, c in (
        ("cos_maml", "one-step update −D⁻¹∇L (MAML inner step)", PALETTE["blue"]),
        ("cos_gradient", "plain gradient −∇L", PALETTE["orange"]),
    ):
        fig.add_trace(
            go.Scatter(
                x=s["lambdas"],
                y=[v["mean"] for v in s[key]],
                mode="lines+markers",
                name=name,
                line=dict(color=c),
                error_y=dict(type="data", array=[v["sd"] for v in s[key]]),
            )
        )
    fig.add_hline(y=1.0, line=REFERENCE_LINE)
    fig.update_xaxes(type="log", title_text="trust-region strength λ (tighter →)")
    fig.update_yaxes(title_text="cosine with the trust-region step", range=[-0.1, 1.05])
    return style(fig, height=360, legend_below=True, bottom=90)


def all_figures(results: TrustRegionCLResults) -> dict[str, go.Figure]:
    """Every figure of the chapter, by name (what ``explorables run`` writes as HTML)."""
    return {
        "explorable": explorable_figure(results),
        "forgetting": forgetting_figure(results),
        "reconvergence": reconvergence_figure(results),
        "maml": maml_figure(results),
    }
