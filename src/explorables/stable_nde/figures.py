"""Figures: phase portraits over rollout time (the explorable), gradient alignment, stability and cost."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .claims import LABELS
from .experiment import TRAINED, StableNDEResults

METHOD_COLORS = {m: color(i) for i, m in enumerate(TRAINED)}
AXES = {
    "pendulum": ((0, 1), ("angle q", "momentum p")),
    "lorenz": ((0, 2), ("x", "z")),
    "ks": ((0, 1), ("u(0)", "u(Δx)")),
}


def _clip(points: np.ndarray, radius: float) -> np.ndarray:
    """Points beyond ``radius`` (a blown-up rollout) become NaN, so the plot keeps its scale."""
    out = points.astype(float).copy()
    bad = ~np.isfinite(out).all(-1) | (np.linalg.norm(np.nan_to_num(out, nan=np.inf), axis=-1) > radius)
    out[bad] = np.nan
    return out


def explorable_figure(results: StableNDEResults, system: str = "pendulum", n_frames: int = 5) -> go.Figure:
    """Phase portraits of the truth and of every trained model (first seed) with a slider over rollout time."""
    c = results.curves[system]
    (i, j), (xlab, ylab) = AXES[system]
    time = np.asarray(c["time"])
    truth = np.asarray(c["truth"])
    limit = 1.6 * np.nanmax(np.abs(truth[..., [i, j]]), axis=(0, 1))
    radius = 3.0 * float(np.nanmax(np.linalg.norm(truth, axis=-1)))
    panels = ["truth", *TRAINED]
    titles = ["truth (RK4)", *[LABELS[m] for m in TRAINED]]
    n_cols = 5
    fig = make_subplots(
        rows=-(-len(panels) // n_cols),
        cols=n_cols,
        subplot_titles=titles,
        horizontal_spacing=0.05,
        vertical_spacing=0.14,
    )
    ends = np.unique(np.linspace(len(time) // n_frames, len(time), n_frames).astype(int))
    frames, labels = [], []
    for end in ends:
        traces = []
        for p, name in enumerate(panels):
            pts = truth if name == "truth" else np.asarray(c["rollouts"][name])
            pts = _clip(pts[:end], radius)
            line_color = PALETTE["grey"] if name == "truth" else METHOD_COLORS[name]
            for k in range(pts.shape[1]):
                traces.append(
                    (
                        go.Scatter(
                            x=pts[:, k, i],
                            y=pts[:, k, j],
                            mode="lines",
                            showlegend=False,
                            line=dict(width=1, color=line_color),
                            hoverinfo="skip",
                        ),
                        p // n_cols + 1,
                        p % n_cols + 1,
                    )
                )
        frames.append(add_frame(fig, traces))
        labels.append(f"{time[end - 1]:.0f}")
    for p in range(len(panels)):
        fig.update_xaxes(
            range=[-limit[0], limit[0]],
            row=p // n_cols + 1,
            col=p % n_cols + 1,
            title_text=xlab if p >= n_cols else None,
        )
        lo = -limit[1] if system != "lorenz" else 0.0
        fig.update_yaxes(
            range=[lo, limit[1]], row=p // n_cols + 1, col=p % n_cols + 1, title_text=ylab if p % n_cols == 0 else None
        )
    frame_slider(fig, frames, labels, prefix="rollout time t = ", active=len(frames) - 1)
    return style(fig, height=560, top=40, bottom=20)


def alignment_figure(results: StableNDEResults) -> go.Figure:
    """Cosine between each cheap loss's gradient and the unrolled gradient at the checkpoints (mean ± sd over seeds)."""
    systems = results.config.systems
    fig = make_subplots(rows=1, cols=len(systems), subplot_titles=list(systems), shared_yaxes=True)
    for col, name in enumerate(systems, start=1):
        a = results.summary[name]["alignment"]
        for m in a["cosine"]:
            fig.add_trace(
                go.Scatter(
                    x=a["steps"],
                    y=a["mean"][m],
                    error_y=dict(type="data", array=a["sd"][m]),
                    mode="lines+markers",
                    name=LABELS[m],
                    legendgroup=m,
                    showlegend=col == 1,
                    line=dict(color=METHOD_COLORS[m]),
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(title_text="one-step training step of the checkpoint", row=1, col=col)
    fig.update_yaxes(title_text="cosine with the unrolled gradient", range=[-1.05, 1.05], row=1, col=1)
    return style(fig, height=380, legend_below=True, bottom=80)


def stability_figure(results: StableNDEResults) -> go.Figure:
    """Pendulum: median energy drift over rollout time. Lorenz: the long-run distribution of z against the truth's."""
    systems = [n for n in results.config.systems if n in ("pendulum", "lorenz")]
    titles = [
        "pendulum: median |H(t) − H(0)|" if n == "pendulum" else "Lorenz-63: density of z (after burn-in)"
        for n in systems
    ]
    fig = make_subplots(rows=1, cols=max(1, len(systems)), subplot_titles=titles or ["no ODE system run"])
    for col, name in enumerate(systems, start=1):
        c = results.curves[name]
        if name == "pendulum":
            for m in TRAINED:
                fig.add_trace(
                    go.Scatter(
                        x=c["time"],
                        y=np.maximum(c["energy_drift"][m], 1e-9),
                        mode="lines",
                        name=LABELS[m],
                        legendgroup=m,
                        showlegend=col == 1,
                        line=dict(color=METHOD_COLORS[m], width=1.5),
                    ),
                    row=1,
                    col=col,
                )
            fig.update_yaxes(type="log", row=1, col=col)
            fig.update_xaxes(title_text="time", row=1, col=col)
        else:
            mid = 0.5 * (c["z_edges"][1:] + c["z_edges"][:-1])
            fig.add_trace(
                go.Scatter(
                    x=mid, y=c["z_truth"], mode="lines", name="truth", line=dict(color=PALETTE["grey"], width=3)
                ),
                row=1,
                col=col,
            )
            for m in TRAINED:
                fig.add_trace(
                    go.Scatter(
                        x=mid,
                        y=c["z_hist"][m],
                        mode="lines",
                        name=LABELS[m],
                        legendgroup=m,
                        showlegend=len(systems) == 1,
                        line=dict(color=METHOD_COLORS[m], width=1.5),
                    ),
                    row=1,
                    col=col,
                )
            fig.update_xaxes(title_text="z", row=1, col=col)
    return style(fig, height=380, legend_below=True, bottom=80)


def cost_figure(results: StableNDEResults) -> go.Figure:
    """CPU milliseconds per training step of each method, per system."""
    fig = go.Figure()
    for name in results.config.systems:
        cost = results.summary[name]["step_cost_seconds"]
        fig.add_trace(go.Bar(x=[LABELS[m] for m in TRAINED], y=[cost[m] * 1e3 for m in TRAINED], name=name))
    one = np.mean([results.summary[n]["step_cost_seconds"]["one_step"] * 1e3 for n in results.config.systems])
    fig.add_hline(y=one, line=REFERENCE_LINE)
    fig.update_layout(barmode="group", yaxis_title="ms per training step")
    return style(fig, height=340, legend_below=True, bottom=110)


def all_figures(results: StableNDEResults) -> dict[str, go.Figure]:
    """Every figure of the chapter, by name (the runner writes them as HTML)."""
    out = {f"explorable_{n}": explorable_figure(results, n) for n in results.config.systems}
    out.update(alignment=alignment_figure(results), stability=stability_figure(results), cost=cost_figure(results))
    return out
