"""Figures of the chapter, from :class:`~explorables.muon.experiment.MuonResults`."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .experiment import MuonResults

COLORS = {
    "GD": PALETTE["blue"],
    "Muon": PALETTE["red"],
    "Muon + momentum": PALETTE["orange"],
    "Muon → GD": PALETTE["green"],
    "GD + momentum": PALETTE["purple"],
    "Adam": PALETTE["brown"],
    "Muon, cosine": PALETTE["pink"],
    "Muon, linear → 0": PALETTE["olive"],
    "Muon, WSD": PALETTE["cyan"],
}
#: runs the explorable leaves out (the claims table has them): one decayed schedule, cosine, stands for all
NOT_DRAWN = ("Muon, linear → 0", "Muon, WSD")
FRAMES = 40


def explorable_figure(results: MuonResults) -> go.Figure:
    """A slider over training steps: the path in the (river distance, spike coordinate) plane, and the losses.

    Left: every optimiser's path up to the chosen step (time runs right to left, toward the
    solution at the origin of the river axis). Right: the loss curves, with the chosen step marked.
    """
    c = {k: v for k, v in results.curves["sensing"].items() if k not in NOT_DRAWN}
    T = len(c["GD"]["loss"]) - 1
    cut = np.unique(np.r_[np.geomspace(1, T, FRAMES - 1).astype(int), 0])  # log-spaced steps
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("path: river distance vs first spike coordinate", "loss (log scale)"),
        horizontal_spacing=0.1,
    )
    idx_all = np.unique(np.geomspace(1, T + 1, 600).astype(int) - 1)
    for name, run in c.items():  # loss curves: in no frame, so always visible
        label = "Adam (untuned: Muon's step)" if name == "Adam" else name
        loss = go.Scatter(x=idx_all, y=np.asarray(run["loss"])[idx_all], name=label, line=dict(color=COLORS[name]),
                          legendgroup=name)  # fmt: skip
        fig.add_trace(loss, row=1, col=2)
    frames = []
    for t in cut:
        traces = []
        for name, run in c.items():
            idx = np.unique(np.r_[np.linspace(0, t, min(t + 1, 300)).astype(int), t])
            path = go.Scatter(x=np.asarray(run["river"])[idx], y=np.asarray(run["spike"])[idx], mode="lines",
                              line=dict(color=COLORS[name], width=1.2), name=name, legendgroup=name,
                              showlegend=False)  # fmt: skip
            traces.append((path, 1, 1))
        marker = go.Scatter(x=[max(t, 1)] * 2, y=[1e-8, 1e3], mode="lines", line=REFERENCE_LINE, showlegend=False,
                            hoverinfo="skip")  # fmt: skip
        traces.append((marker, 1, 2))
        frames.append(add_frame(fig, traces))
    frame_slider(fig, frames, [str(int(t)) for t in cut], prefix="step t = ", active=len(cut) - 1, y=-0.15)
    fig.layout.sliders[0].font = dict(size=9)
    style(fig, height=520)
    fig.update_layout(legend=dict(orientation="h", y=-0.5))
    river0 = c["GD"]["river"][0]
    spike_max = max(np.abs(run["spike"]).max() for run in c.values())
    fig.update_xaxes(
        title_text="distance to the solution along the river", range=[-0.05 * river0, 1.05 * river0], row=1, col=1
    )
    fig.update_yaxes(title_text="spike coordinate", range=[-1.1 * spike_max, 1.1 * spike_max], row=1, col=1)
    fig.update_xaxes(title_text="step", type="log", row=1, col=2)
    fig.update_yaxes(type="log", range=[-6, 1.5], row=1, col=2)
    return fig


def switch_figure(results: MuonResults) -> go.Figure:
    """Final loss of the two-stage schedule against the switch step, one line per spike curvature."""
    s = results.summary["switch"]
    fig = go.Figure()
    for i, row in enumerate(s["rows"]):
        fig.add_trace(
            go.Scatter(
                x=s["switch_steps"],
                y=row["final_loss"],
                mode="lines+markers",
                name=f"λ_spike = {row['lam_spike']:g} (best: {row['best_switch']})",
                line=dict(color=color(i)),
            )
        )
    fig.update_layout(
        xaxis=dict(title="switch step (Muon before, GD after)", type="log"), yaxis=dict(title="final loss", type="log")
    )
    return style(fig, height=360, top=30)


def lm_figure(results: MuonResults) -> go.Figure:
    """Validation loss of the tiny language model for each optimiser schedule."""
    c = results.curves["lm"]
    names = {"adamw": "AdamW (untuned step)", "muon": "Muon (+ AdamW)", "muon_then_adamw": "Muon, then AdamW",
             "muon_cosine": "Muon, cosine step", "muon_linear": "Muon, linear step → 0",
             "muon_wsd": "Muon, warmup-stable-decay"}  # fmt: skip
    fig = go.Figure()
    for i, (key, run) in enumerate(c.items()):
        fig.add_trace(go.Scatter(x=run["steps"], y=run["val_loss"], mode="lines+markers", name=names[key],
                                 line=dict(color=color(i))))  # fmt: skip
    fig.add_vline(x=results.summary["lm"]["switch_step"], line=REFERENCE_LINE)
    fig.update_layout(xaxis=dict(title="step"), yaxis=dict(title="validation loss (nats/char)"))
    return style(fig, height=340, top=30)


def all_figures(results: MuonResults) -> dict[str, go.Figure]:
    """Every figure of the chapter, by name (the runner writes them as HTML)."""
    return {"explorable": explorable_figure(results), "switch": switch_figure(results), "lm": lm_figure(results)}
