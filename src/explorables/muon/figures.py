"""Figures of the chapter, from :class:`~explorables.muon.experiment.MuonResults`."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .experiment import MuonResults

COLORS = {
    "GD": "#1f77b4",
    "Muon": "#d62728",
    "Muon + momentum": "#ff7f0e",
    "Muon → GD": "#2ca02c",
    "GD + momentum": "#9467bd",
    "Adam": "#8c564b",
}
FRAMES = 40


def explorable_figure(results: MuonResults) -> go.Figure:
    """A slider over training steps: the path in the (river distance, spike coordinate) plane, and the losses.

    Left: every optimiser's path up to the chosen step (time runs right to left, toward the
    solution at the origin of the river axis). Right: the loss curves, with the chosen step marked.
    """
    c = results.curves["sensing"]
    T = len(c["GD"]["loss"]) - 1
    cut = np.unique(np.r_[np.geomspace(1, T, FRAMES - 1).astype(int), 0])  # log-spaced steps
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("path: river distance vs first spike coordinate", "loss (log scale)"),
        horizontal_spacing=0.1,
    )
    idx_all = np.unique(np.geomspace(1, T + 1, 600).astype(int) - 1)
    for name, run in c.items():  # loss curves, always visible
        fig.add_trace(
            go.Scatter(
                x=idx_all,
                y=np.asarray(run["loss"])[idx_all],
                name=name,
                line=dict(color=COLORS[name]),
                legendgroup=name,
            ),
            row=1,
            col=2,
        )
    n_fixed = len(fig.data)
    for k, t in enumerate(cut):
        for name, run in c.items():
            idx = np.unique(np.r_[np.linspace(0, t, min(t + 1, 300)).astype(int), t])
            fig.add_trace(
                go.Scatter(
                    x=np.asarray(run["river"])[idx],
                    y=np.asarray(run["spike"])[idx],
                    mode="lines",
                    line=dict(color=COLORS[name], width=1.2),
                    name=name,
                    legendgroup=name,
                    showlegend=False,
                    visible=k == len(cut) - 1,
                ),
                row=1,
                col=1,
            )
        fig.add_trace(
            go.Scatter(
                x=[max(t, 1)] * 2,
                y=[1e-8, 1e3],
                mode="lines",
                line=dict(color="gray", dash="dot"),
                showlegend=False,
                hoverinfo="skip",
                visible=k == len(cut) - 1,
            ),
            row=1,
            col=2,
        )
    per = len(c) + 1
    steps = []
    for k, t in enumerate(cut):
        vis = [True] * n_fixed + [False] * (per * len(cut))
        vis[n_fixed + per * k : n_fixed + per * (k + 1)] = [True] * per
        steps.append(dict(method="update", label=str(int(t)), args=[{"visible": vis}]))
    fig.update_layout(
        sliders=[
            dict(
                active=len(cut) - 1,
                steps=steps,
                currentvalue=dict(prefix="step t = "),
                y=-0.15,
                pad=dict(t=30),
                font=dict(size=9),
            )
        ],
        height=520,
        margin=dict(l=50, r=20, t=40, b=40),
        legend=dict(orientation="h", y=-0.5),
    )
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
    for row in s["rows"]:
        fig.add_trace(
            go.Scatter(
                x=s["switch_steps"],
                y=row["final_loss"],
                mode="lines+markers",
                name=f"λ_spike = {row['lam_spike']:g} (best: {row['best_switch']})",
            )
        )
    fig.update_layout(
        xaxis=dict(title="switch step (Muon before, GD after)", type="log"),
        yaxis=dict(title="final loss", type="log"),
        height=360,
        margin=dict(l=50, r=20, t=30, b=40),
    )
    return fig


def lm_figure(results: MuonResults) -> go.Figure:
    """Validation loss of the tiny language model for each optimiser schedule."""
    c = results.curves["lm"]
    names = {"adamw": "AdamW", "muon": "Muon (+ AdamW)", "muon_then_adamw": "Muon, then AdamW"}
    fig = go.Figure()
    for key, run in c.items():
        fig.add_trace(go.Scatter(x=run["steps"], y=run["val_loss"], mode="lines+markers", name=names[key]))
    switch = results.summary["lm"]["switch_step"]
    fig.add_vline(x=switch, line=dict(color="gray", dash="dot"))
    fig.update_layout(
        xaxis=dict(title="step"),
        yaxis=dict(title="validation loss (nats/char)"),
        height=340,
        margin=dict(l=50, r=20, t=30, b=40),
    )
    return fig


def all_figures(results: MuonResults) -> dict[str, go.Figure]:
    return {"explorable": explorable_figure(results), "switch": switch_figure(results), "lm": lm_figure(results)}
