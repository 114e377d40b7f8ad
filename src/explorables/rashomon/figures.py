"""Figures of the chapter, built from :class:`~explorables.rashomon.experiment.RashomonResults`."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, frame_slider, style
from .experiment import KINDS, RashomonResults

TITLES = {
    "linear": "linear regression (noise σ)",
    "logistic": "logistic regression (label flips ρ)",
    "gam": "regression GAM (noise σ)",
    "gam_logistic": "logistic GAM (label flips ρ)",
}
#: one colour per model class, and for the simplifications / shape functions drawn in order
KIND_COLORS = dict(zip(KINDS, (PALETTE[k] for k in ("blue", "red", "green", "purple")), strict=True))
SERIES = tuple(PALETTE[k] for k in ("blue", "red", "green", "purple", "orange", "brown", "pink", "cyan"))


def explorable_figure(results: RashomonResults) -> go.Figure:
    """Two-feature Rashomon sets with a slider over the noise level.

    Each panel shows the set of weights ``(w1, w2)`` whose (profile) loss is within the level of
    the best: solid for the absolute level ``theta``, dashed for the relative level
    ``eps * L(beta_hat)``, together with the simplification lines ``w1 = 0``, ``w2 = 0`` and
    ``w1 = w2``. A simplification is reachable when its line meets the set.
    """
    cfg, c = results.config, results.curves["views"]
    w1, w2 = c["w1"], c["w2"]
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("linear regression", "logistic regression"), horizontal_spacing=0.1
    )
    n_levels = len(c["sigma"])
    frames = []
    for k in range(n_levels):
        traces = []
        for col, kind in ((1, "linear"), (2, "logistic")):
            excess = c[kind]["excess_loss"][k]
            fits = c[kind]["fits"][k]
            traces.append(
                (
                    col,
                    go.Contour(  # the loss landscape: log10 of the excess loss
                        x=w1,
                        y=w2,
                        z=np.round(np.log10(np.maximum(excess, 1e-6)), 3),
                        contours=dict(start=-4, end=1, size=0.5),
                        colorscale="Greys",
                        reversescale=True,
                        opacity=0.35,
                        showscale=False,
                        line=dict(width=0.5),
                        name="log10 excess loss",
                        showlegend=False,
                        hovertemplate="w1=%{x:.2f}, w2=%{y:.2f}<br>log10(L − L̂)=%{z:.2f}<extra></extra>",
                    ),
                )
            )
            for level, dash, name in (
                (cfg.theta, "solid", f"R at θ = {cfg.theta:g}"),
                (cfg.relative_eps * fits[2], "dash", f"R at {cfg.relative_eps:.0%} of L̂"),
            ):
                traces.append(
                    (
                        col,
                        go.Contour(
                            x=w1,
                            y=w2,
                            z=np.round(excess, 5),
                            contours=dict(start=level, end=level, size=1, coloring="lines"),
                            line=dict(width=2.5, dash=dash),
                            colorscale=[[0, KIND_COLORS[kind]], [1, KIND_COLORS[kind]]],
                            showscale=False,
                            name=name,
                            showlegend=col == 1,
                            hoverinfo="skip",
                        ),
                    )
                )
            traces.append(
                (
                    col,
                    go.Scatter(
                        x=[fits[0]],
                        y=[fits[1]],
                        mode="markers",
                        marker=dict(size=9, color="black"),
                        name="best fit ŵ",
                        showlegend=col == 1,
                    ),
                )
            )
        frames.append(add_frame(fig, [(trace, 1, col) for col, trace in traces]))
    lo, hi = max(w1[0], w2[0]), min(w1[-1], w2[-1])
    simplification_lines = (
        ("w1 = 0", [0, 0], [w2[0], w2[-1]]),
        ("w2 = 0", [w1[0], w1[-1]], [0, 0]),
        ("w1 = w2", [lo, hi], [lo, hi]),
    )
    for col in (1, 2):  # the simplification lines, always visible
        for name, xs, ys in simplification_lines:
            fig.add_trace(
                go.Scatter(
                    x=xs, y=ys, mode="lines", line=REFERENCE_LINE, name=name, showlegend=False, hoverinfo="name"
                ),
                row=1,
                col=col,
            )
    labels = [f"σ={c['sigma'][k]:.2g} · ρ={c['rho'][k]:.2g}" for k in range(n_levels)]
    frame_slider(fig, frames, labels, prefix="noise: ", y=-0.12)
    fig.layout.sliders[0].font.size = 9
    style(fig, height=560)
    fig.update_layout(legend=dict(orientation="h", y=-0.45))
    for col in (1, 2):
        fig.update_xaxes(title_text="w1", range=[w1[0], w1[-1]], row=1, col=col)
        fig.update_yaxes(title_text="w2", range=[w2[0], w2[-1]], row=1, col=col)
    return fig


def cost_figure(results: RashomonResults) -> go.Figure:
    """Reducibility cost of every simplification against noise, one panel per model class."""
    s, cfg = results.summary, results.config
    fig = make_subplots(rows=2, cols=2, subplot_titles=[TITLES[k] for k in KINDS], vertical_spacing=0.14)
    for i, kind in enumerate(KINDS):
        row, col = divmod(i, 2)
        levels = s[kind]["levels"]
        for j, (name, costs) in enumerate(s[kind]["costs"].items()):
            fig.add_trace(
                go.Scatter(
                    x=levels,
                    y=np.maximum(costs, 1e-6),
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    showlegend=col == 0,
                    marker=dict(size=4),
                    line=dict(color=SERIES[j % len(SERIES)]),
                ),
                row=row + 1,
                col=col + 1,
            )
        fig.add_hline(y=cfg.theta, line=dict(color="black", dash="dash", width=1), row=row + 1, col=col + 1)
        fig.update_yaxes(type="log", range=[-5, 0.8], title_text="cost" if col == 0 else None, row=row + 1, col=col + 1)
        fig.update_xaxes(title_text=s[kind]["noise"], row=row + 1, col=col + 1)
    style(fig, height=720)
    fig.update_layout(
        legend=dict(font=dict(size=9)),
        title=dict(text=f"dashed: θ = {cfg.theta:g} (below it: reachable)", font=dict(size=12)),
    )
    return fig


def mechanism_figure(results: RashomonResults) -> go.Figure:
    """Per model class: Rashomon log-volume, reachable simplifications and model size against noise."""
    s = results.summary
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=("log-volume, absolute θ", "simplifications reachable", "size of the fitted model"),
    )
    colors = KIND_COLORS
    for kind in KINDS:
        x = np.arange(len(s[kind]["levels"]))
        v = np.array(s[kind]["log_volume_abs"])
        fig.add_trace(
            go.Scatter(x=x, y=v - v[0], name=TITLES[kind], line=dict(color=colors[kind]), legendgroup=kind),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=s[kind]["reachable_abs"],
                line=dict(color=colors[kind]),
                showlegend=False,
                legendgroup=kind,
                name="absolute θ",
            ),
            row=1,
            col=2,
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=s[kind]["reachable_rel"],
                line=dict(color=colors[kind], dash="dash"),
                showlegend=False,
                legendgroup=kind,
                name="relative θ",
            ),
            row=1,
            col=2,
        )
        size = np.array(s[kind]["size"])
        fig.add_trace(
            go.Scatter(x=x, y=size / size[0], line=dict(color=colors[kind]), showlegend=False, legendgroup=kind),
            row=1,
            col=3,
        )
    fig.update_yaxes(title_text="change from the least noisy", row=1, col=1)
    fig.update_yaxes(title_text="count (solid: absolute, dashed: relative)", row=1, col=2)
    fig.update_yaxes(title_text="relative to the least noisy", row=1, col=3)
    for col in (1, 2, 3):
        fig.update_xaxes(title_text="noise level (index, low → high)", row=1, col=col)
    style(fig, height=420)
    fig.update_layout(legend=dict(orientation="h", y=-0.3))
    return fig


def diversity_figure(results: RashomonResults) -> go.Figure:
    """Prediction diversity of models drawn from the Rashomon set against noise: the regression classes' mean
    prediction sd (solid: absolute θ, dashed: relative level) and, for the classification classes, the pattern
    diversity (solid, what the claim reads) and the set's closed-form ambiguity (dotted)."""
    s, cfg = results.summary, results.config
    fig = make_subplots(rows=1, cols=2, subplot_titles=("regression: prediction spread", "classification: diversity"))
    for kind in ("linear", "gam"):
        x = s[kind]["levels"]
        fig.add_trace(
            go.Scatter(x=x, y=s[kind]["spread_abs"], name=TITLES[kind], line=dict(color=KIND_COLORS[kind])), 1, 1
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=s[kind]["spread_rel"],
                name=f"{TITLES[kind]}, {cfg.relative_eps:.0%} of L̂",
                line=dict(color=KIND_COLORS[kind], dash="dash"),
            ),
            1,
            1,
        )
    for kind in ("logistic", "gam_logistic"):
        fig.add_trace(
            go.Scatter(x=s[kind]["levels"], y=s[kind]["pattern_abs"], name=f"{TITLES[kind]}, pattern diversity",
                       line=dict(color=KIND_COLORS[kind])),
            1,
            2,
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(x=s[kind]["levels"], y=s[kind]["ambiguity_abs"], name=f"{TITLES[kind]}, ambiguity",
                       line=dict(color=KIND_COLORS[kind], dash="dot")),
            1,
            2,
        )  # fmt: skip
    fig.update_yaxes(title_text="prediction sd", type="log", row=1, col=1)
    fig.update_yaxes(title_text="diversity", range=[0, 1.02], row=1, col=2)
    fig.update_xaxes(title_text="σ", row=1, col=1)
    fig.update_xaxes(title_text="ρ", row=1, col=2)
    style(fig, height=400)
    fig.update_layout(legend=dict(orientation="h", y=-0.3, font=dict(size=10)))
    return fig


def shapes_figure(results: RashomonResults) -> go.Figure:
    """Fitted shape functions of the two GAMs at the lowest and highest noise."""
    c = results.curves
    names = ["f1", "f2", "f3", "f4"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=(TITLES["gam"], TITLES["gam_logistic"]))
    for col, kind in ((1, "gam"), (2, "gam_logistic")):
        grid = c[kind]["grid"]
        for key, dash, tag in (
            ("level_0", "solid", "least noise"),
            (sorted(c[kind]["shapes"])[-1], "dash", "most noise"),
        ):
            for j, name in enumerate(names):
                fig.add_trace(
                    go.Scatter(
                        x=grid,
                        y=c[kind]["shapes"][key][j],
                        line=dict(dash=dash, color=SERIES[j]),
                        name=f"{name}, {tag}",
                        legendgroup=name,
                        showlegend=col == 1,
                    ),
                    row=1,
                    col=col,
                )
    return style(fig, height=380)


def all_figures(results: RashomonResults) -> dict[str, go.Figure]:
    """Every figure of the chapter by name (the command line saves these)."""
    return {
        "explorable": explorable_figure(results),
        "costs": cost_figure(results),
        "mechanisms": mechanism_figure(results),
        "diversity": diversity_figure(results),
        "shapes": shapes_figure(results),
    }
