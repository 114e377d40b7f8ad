"""Figures: the explorable (spectrograms over sampling steps and VM positions), per-band errors,
steps vs quality, beamforming, the room, and the training losses. Builders take results."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .experiment import (
    BEAM_LABELS,
    BEAMFORMING,
    FIXED_LABELS,
    FIXED_LAYOUT,
    METHOD_LABELS,
    METHODS,
    VirtualFlowResults,
)

METHOD_COLORS = {
    "nearest": PALETTE["grey"],
    "noise": PALETTE["olive"],
    "pseudo": PALETTE["orange"],
    "pseudo_train": PALETTE["gold"],
    "control": PALETTE["brown"],
    "flow": PALETTE["blue"],
    "reflow": PALETTE["cyan"],
    "supervised": PALETTE["green"],
}


def _heatmap(z: np.ndarray, cfg, show_scale: bool = False) -> go.Heatmap:
    hop = cfg.nfft // 2
    t = np.arange(z.shape[1]) * hop / cfg.fs
    f = np.linspace(0, cfg.fs / 2, z.shape[0]) / 1000
    return go.Heatmap(
        z=np.asarray(z, int),
        x=np.round(t, 3),
        y=np.round(f, 3),
        zmin=-60,
        zmax=0,
        colorscale="Viridis",
        showscale=show_scale,
        colorbar=dict(title="dB", len=0.9),
        hovertemplate="%{x:.2f} s, %{y:.2f} kHz: %{z} dB<extra></extra>",
    )


def explorable_figure(results: VirtualFlowResults) -> go.Figure:
    """Spectrograms of the true VM, the pseudo-target and Virtual-Flow's sample, one frame per (VM distance,
    sampling steps) and one per distance for reflow at one step; SI-SDR in the title."""
    cfg, e = results.config, results.curves["seed_0"]["explorable"]
    fig = make_subplots(
        rows=1,
        cols=3,
        shared_yaxes=True,
        horizontal_spacing=0.03,
        subplot_titles=("true VM (evaluation only)", "pseudo-target", "generated"),
    )
    frames, labels, layouts = [], [], []
    for i, dist in enumerate(e["distances"]):
        cm = f"{dist * 100:.0f} cm"
        fixed = [(_heatmap(e[f"{i}/truth"], cfg), 1, 1), (_heatmap(e[f"{i}/pseudo"], cfg), 1, 2)]
        base = add_frame(fig, fixed)
        info = (
            f"VM at {cm}: pseudo-target {e[f'{i}/pseudo_sisdr']:.1f} dB, nearest mic {e[f'{i}/nearest_sisdr']:.1f} dB"
        )
        for j, k in enumerate(e["steps"]):
            idx = add_frame(fig, [(_heatmap(e[f"{i}/flow/{k}"], cfg, show_scale=True), 1, 3)])
            frames.append(base + idx)
            labels.append(f"{cm}, {k} step{'s' if k > 1 else ''}")
            layouts.append(
                {
                    "title.text": f"{info}; Virtual-Flow, {k} Euler step{'s' if k > 1 else ''}: "
                    f"{e[f'{i}/flow_sisdr'][j]:.1f} dB (SI-SDR vs truth)"
                }
            )
        idx = add_frame(fig, [(_heatmap(e[f"{i}/reflow"], cfg, show_scale=True), 1, 3)])
        frames.append(base + idx)
        labels.append(f"{cm}, reflow 1 step")
        layouts.append({"title.text": f"{info}; reflow, 1 step: {e[f'{i}/reflow_sisdr']:.1f} dB (SI-SDR vs truth)"})
    frame_slider(fig, frames, labels, prefix="VM distance, sampler: ", layouts=layouts, pad_top=50)
    fig.update_xaxes(title_text="time (s)")
    fig.update_yaxes(title_text="frequency (kHz)", row=1, col=1)
    style(fig, height=430, top=70, bottom=40)
    fig.update_layout(title=dict(font=dict(size=12)))
    return fig


def band_figure(results: VirtualFlowResults) -> go.Figure:
    """Per frequency band: the complex error (NMSE) and the energy ratio of every estimator, mean ± sd over seeds."""
    cfg, a = results.config, results.summary["aggregate"]
    edges = [cfg.fs / 2 * b / cfg.n_bands / 1000 for b in range(cfg.n_bands + 1)]
    bands = [f"{edges[b]:g}–{edges[b + 1]:g} kHz" for b in range(cfg.n_bands)]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            "error vs the true VM (NMSE, dB; lower is better)",
            "energy ratio estimate/truth (dB; 0 is right)",
        ),
    )
    for m in METHODS:
        for col, key in ((1, "nmse"), (2, "energy")):
            entry = a[f"{key}/{m}"]
            fig.add_trace(
                go.Bar(
                    x=bands,
                    y=entry["mean"],
                    error_y=dict(array=entry["sd"]),
                    name=METHOD_LABELS[m],
                    marker_color=METHOD_COLORS[m],
                    legendgroup=m,
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
    fig.add_hline(y=0, line=REFERENCE_LINE, row=1, col=2)
    style(fig, height=420, legend_below=True)
    fig.update_layout(barmode="group")
    return fig


def steps_figure(results: VirtualFlowResults) -> go.Figure:
    """SI-SDR against the truth vs Euler steps (base and reflow), and the distance to the base's many-step sample."""
    cfg, a = results.config, results.summary["aggregate"]
    ks = list(cfg.steps_grid)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            "SI-SDR vs the true VM (dB)",
            f"distance to the base flow's {cfg.reflow_teacher_steps}-step sample (dB)",
        ),
    )
    for name, label, c in (
        ("flow", "Virtual-Flow", METHOD_COLORS["flow"]),
        ("reflow", "after reflow", METHOD_COLORS["reflow"]),
    ):
        for col, key in ((1, "steps"), (2, "to_teacher")):
            mu = [a[f"{key}/{name}/{k}"]["mean"] for k in ks]
            sd = [a[f"{key}/{name}/{k}"]["sd"] for k in ks]
            if key == "to_teacher" and name == "flow":
                pts = [(k, m, s) for k, m, s in zip(ks, mu, sd, strict=True) if k != cfg.reflow_teacher_steps]
                if not pts:
                    continue
                ks_p, mu, sd = (list(v) for v in zip(*pts, strict=True))
            else:
                ks_p = ks
            fig.add_trace(
                go.Scatter(
                    x=ks_p,
                    y=mu,
                    error_y=dict(array=sd),
                    mode="lines+markers",
                    name=label,
                    line=dict(color=c),
                    legendgroup=name,
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
    for m in ("pseudo", "supervised"):
        fig.add_trace(
            go.Scatter(
                x=[ks[0], ks[-1]],
                y=[a[f"sisdr/{m}"]["mean"]] * 2,
                mode="lines",
                name=METHOD_LABELS[m],
                line=dict(color=METHOD_COLORS[m], dash="dot"),
            ),
            row=1,
            col=1,
        )
    fig.update_xaxes(type="log", title_text="Euler steps (network evaluations)")
    style(fig, height=380, legend_below=True)
    return fig


def beamforming_figure(results: VirtualFlowResults) -> go.Figure:
    """MVDR output SI-SDR and STOI per channel set (mean ± sd over seeds)."""
    a = results.summary["aggregate"]
    labels = [BEAM_LABELS[b] for b in BEAMFORMING]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("MVDR output SI-SDR (dB)", "STOI"))
    for col, key in ((1, "beam_sisdr"), (2, "beam_stoi")):
        mu = [a[f"{key}/{b}"]["mean"] for b in BEAMFORMING]
        sd = [a[f"{key}/{b}"]["sd"] for b in BEAMFORMING]
        fig.add_trace(
            go.Bar(
                x=labels,
                y=mu,
                error_y=dict(array=sd),
                marker_color=[color(i) for i in range(len(mu))],
                showlegend=False,
            ),
            row=1,
            col=col,
        )
        fig.add_hline(y=mu[0], line=REFERENCE_LINE, row=1, col=col)
    lo = min(a[f"beam_stoi/{b}"]["mean"] for b in BEAMFORMING)
    fig.update_yaxes(range=[max(0.0, lo - 0.05), 1.0], row=1, col=2)
    style(fig, height=380, bottom=110)
    return fig


def fixed_layout_figure(results: VirtualFlowResults) -> go.Figure:
    """Fixed-layout MVDR output SI-SDR per fill-in of the physical mic's slot (mean ± sd over seeds), with two lines:
    the real mics' own refitted MVDR (solid: every fill-in but the physical mic sits below it) and the slot left
    empty (dashed: the control of the gate "useful")."""
    a = results.summary["aggregate"]
    mu = [a[f"fixed_sisdr/{b}"]["mean"] for b in FIXED_LAYOUT]
    sd = [a[f"fixed_sisdr/{b}"]["sd"] for b in FIXED_LAYOUT]
    fig = go.Figure(
        go.Bar(
            x=[FIXED_LABELS[b] for b in FIXED_LAYOUT],
            y=mu,
            error_y=dict(array=sd),
            marker_color=[color(i) for i in range(len(mu))],
            showlegend=False,
        )
    )
    real = a["fixed_sisdr/real"]["mean"]  # the same rooms as the bars
    fig.add_hline(
        y=real,
        line=dict(color=PALETTE["dark_grey"], width=2),
        annotation_text="real mics alone, refitted",
        annotation_position="top right",
    )
    fig.add_hline(
        y=a["fixed_sisdr/empty"]["mean"],
        line=REFERENCE_LINE,
        annotation_text="slot left empty",
        annotation_position="bottom right",
    )
    fig.update_yaxes(title_text="fixed-layout MVDR output SI-SDR (dB)")
    return style(fig, height=400, bottom=120)


def scene_figure(results: VirtualFlowResults) -> go.Figure:
    """The first test room seen from above: real mics, held-out mics, the virtual mic, talker, interferer,
    estimated direction."""
    s = results.curves["seed_0"]["scene"]
    dims = np.asarray(s["room_dim"])
    fig = go.Figure()
    fig.add_shape(type="rect", x0=0, y0=0, x1=dims[0], y1=dims[1], line=dict(color=PALETTE["dark_grey"]))
    center = np.asarray(s["real_mics"])[:, :2].mean(0)
    az = float(s["azimuth"])
    fig.add_trace(
        go.Scatter(
            x=[center[0], center[0] + 1.5 * np.cos(az)],
            y=[center[1], center[1] + 1.5 * np.sin(az)],
            mode="lines",
            line=REFERENCE_LINE,
            name="estimated direction (DOA)",
        )
    )
    pts = (
        ("real mics", s["real_mics"], PALETTE["blue"], "circle"),
        ("held-out mics (training targets only)", s["aux_mics"], PALETTE["purple"], "circle-open"),
        ("virtual mic", np.asarray(s["virtual_mic"])[None], PALETTE["red"], "x"),
        ("talker", np.asarray(s["source"])[None], PALETTE["green"], "star"),
        ("interferer", np.asarray(s["interferer"])[None], PALETTE["grey"], "square"),
    )
    for name, p, c, sym in pts:
        p = np.asarray(p).reshape(-1, 3)
        if not len(p):
            continue
        fig.add_trace(
            go.Scatter(x=p[:, 0], y=p[:, 1], mode="markers", name=name, marker=dict(color=c, symbol=sym, size=9))
        )
    fig.update_xaxes(title_text="x (m)", range=[-0.2, dims[0] + 0.2])
    fig.update_yaxes(title_text="y (m)", range=[-0.2, dims[1] + 0.2], scaleanchor="x")
    return style(fig, height=380)


def loss_figure(results: VirtualFlowResults) -> go.Figure:
    """Training losses of the first seed: flow matching, reflow, the control and the supervised model."""
    losses = results.curves["seed_0"]["losses"]
    fig = go.Figure()
    for i, (m, v) in enumerate(losses.items()):
        v = np.asarray(v, float)
        w = max(1, len(v) // 50)
        smooth = np.convolve(v, np.ones(w) / w, mode="valid")
        fig.add_trace(go.Scatter(y=smooth, mode="lines", name=METHOD_LABELS.get(m, m), line=dict(color=color(i))))
    fig.update_xaxes(title_text="Adam step")
    fig.update_yaxes(title_text="loss (running mean)", type="log")
    return style(fig, height=320, legend_below=True)


def all_figures(results: VirtualFlowResults) -> dict[str, go.Figure]:
    """Every figure of the chapter, by name (what the command line writes as HTML)."""
    return {
        "explorable": explorable_figure(results),
        "bands": band_figure(results),
        "steps": steps_figure(results),
        "beamforming": beamforming_figure(results),
        "scene": scene_figure(results),
        "losses": loss_figure(results),
    }
