"""Figures: the explorable (accuracy per method, slider over the class count, next to the probe curve)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .experiment import RPKDResults
from .training import ARM_LABELS

#: short bar labels (the control's full name is in the chapter's text)
SHORT = {"ce": "CE", "kd": "KD", "ofa": "OFA", "rpkd": "RPKD", "rpkd_kd": "RPKD+KD", "feature_match": "control"}
PROBE_LABELS = {"logits": "class logits (KD, OFA)", "prototypes": "prototype distribution", "maps": "activation maps",
                "pooled_projection": "pooled projection, no prototypes"}


def explorable_figure(results: RPKDResults) -> go.Figure:
    """Left: test accuracy of every method at one class count (slider); right: probe accuracy against C."""
    grid = results.summary["class_grid"]
    arms = results.summary["arms"]
    fig = make_subplots(rows=1, cols=2, column_widths=[0.58, 0.42], subplot_titles=(
        "student test accuracy (mean ± sd over seeds)", "fine-digit probe accuracy of each target"))
    frames, labels = [], []
    for c in grid:
        part = results.summary[f"C={c}"]
        acc = part["accuracy"]
        bar = go.Bar(
            x=[SHORT[a] for a in arms],
            y=[acc[a]["mean"] for a in arms],
            error_y=dict(type="data", array=[acc[a]["sd"] for a in arms]),
            marker_color=[color(i) for i in range(len(arms))], showlegend=False,
            customdata=[ARM_LABELS[a] for a in arms], hovertemplate="%{customdata}: %{y:.3f}<extra></extra>",
        )
        teacher = go.Scatter(x=[SHORT[arms[0]], SHORT[arms[-1]]],
                             y=[part["teacher_accuracy"]] * 2, mode="lines", line=REFERENCE_LINE,
                             name="teacher", showlegend=False, hovertemplate="teacher: %{y:.3f}<extra></extra>")
        marker = go.Scatter(x=[c, c], y=[0, 1], mode="lines", line=dict(color=PALETTE["light_grey"], width=6),
                            showlegend=False, hoverinfo="skip")
        frames.append(add_frame(fig, [(bar, 1, 1), (teacher, 1, 1), (marker, 1, 2)]))
        labels.append(f"C = {c}")
    for i, (key, label) in enumerate(PROBE_LABELS.items()):
        fig.add_trace(go.Scatter(
            x=grid, y=[results.summary[f"C={c}"]["probe"][key] for c in grid], mode="lines+markers", name=label,
            line=dict(color=[PALETTE["orange"], PALETTE["blue"], PALETTE["green"], PALETTE["blue"]][i],
                      dash="dot" if key == "pooled_projection" else "solid"),
        ), row=1, col=2)
    fig.add_trace(go.Scatter(x=[min(grid), max(grid)], y=[0.1, 0.1], mode="lines", line=REFERENCE_LINE,
                             name="chance (10 digits)"), row=1, col=2)
    fig.update_yaxes(range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], row=1, col=2)
    fig.update_xaxes(title_text="number of classes C", autorange="reversed", row=1, col=2)
    style(fig, height=460, legend_below=True, bottom=90)
    return frame_slider(fig, frames, labels, prefix="classes: ", y=-0.35)


def loss_figure(results: RPKDResults) -> go.Figure:
    """Training loss (mean over members) of the student ensemble at each class count."""
    fig = go.Figure()
    for i, c in enumerate(results.summary["class_grid"]):
        fig.add_trace(go.Scatter(y=results.curves[f"C={c}"]["loss"], mode="lines", name=f"C = {c}",
                                 line=dict(color=color(i))))
    fig.update_layout(xaxis_title="step", yaxis_title="loss (mean over members)")
    return style(fig, height=320)


def all_figures(results: RPKDResults) -> dict[str, go.Figure]:
    return {"explorable": explorable_figure(results), "loss": loss_figure(results)}
