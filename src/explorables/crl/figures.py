"""Figures of the chapter: the latent graphs, the explorable (per-component MCC per edge pattern),
the baselines, the training curves and the stick-figure motion case."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import networkx as nx
import numpy as np
import plotly.graph_objects as go
from matplotlib.figure import Figure

from ..core.figures import PALETTE, add_frame, color, frame_slider, style
from .claims import ABOVE_CHANCE, LENS_GAP, LENS_TOL
from .experiment import PATTERNS, CRLResults, changing_edges
from .scm import MOTION_GAITS, MOTION_JOINTS, default_graph, stick_figure

PREDICTED = {True: PALETTE["blue"], False: PALETTE["orange"]}


def graph_figure(patterns: tuple[str, ...] = PATTERNS, d_latent: int = 3) -> Figure:
    """The latent DAG once per pattern: changing influences solid, fixed ones dashed grey; nodes
    coloured by the prediction (blue: identifiable, orange: not)."""
    graph = default_graph(d_latent)
    pos = {i: (i, 0.35 * (i % 2)) for i in graph.nodes}
    fig = Figure(figsize=(2.3 * len(patterns), 2.2), dpi=90)
    axes = fig.subplots(1, len(patterns), squeeze=False)[0]
    for ax, pattern in zip(axes, patterns, strict=True):
        changing = changing_edges(pattern, sorted(graph.edges))
        ident = [all(e in changing for e in graph.in_edges(i)) for i in graph.nodes]
        nx.draw_networkx_nodes(graph, pos, ax=ax, node_color=[PREDICTED[b] for b in ident], node_size=420)
        nx.draw_networkx_labels(graph, pos, {i: f"z{i}" for i in graph.nodes}, ax=ax, font_color="white")
        for style_, edges, col in (
            ("solid", changing, PALETTE["dark_blue"]),
            ("dashed", set(graph.edges) - changing, PALETTE["grey"]),
        ):
            nx.draw_networkx_edges(
                graph,
                pos,
                edgelist=sorted(edges),
                ax=ax,
                style=style_,
                edge_color=col,
                connectionstyle="arc3,rad=0.25",
                arrows=True,
                node_size=420,
                width=1.6,
            )
        ax.set_title(f"changes: {pattern}", fontsize=9)
        ax.set_axis_off()
        ax.set_ylim(-0.45, 0.8)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.85, bottom=0.02, wspace=0.05)
    return fig


def _component_traces(arm: dict, name: str, show_legend: bool) -> list:
    comps = arm["components"]
    labels = [f"z{i}" for i in range(len(comps))]
    med = np.array([c["median"] for c in comps])
    lo = med - np.array([c["min"] for c in comps])
    hi = np.array([c["max"] for c in comps]) - med
    colors = [PREDICTED[bool(i)] for i in arm["identifiable"]]
    bars = go.Bar(
        x=labels,
        y=med,
        marker_color=colors,
        error_y=dict(type="data", array=hi, arrayminus=lo),
        name=name,
        showlegend=False,
        hovertemplate="%{x}: median %{y:.2f}<extra></extra>",
    )
    seeds = np.array([c["per_seed"] for c in comps])  # (d, seeds)
    dots = go.Scatter(
        x=np.repeat(labels, seeds.shape[1]),
        y=seeds.ravel(),
        mode="markers",
        name="one seed",
        marker=dict(color=PALETTE["black"], size=6, symbol="circle-open"),
        showlegend=show_legend,
        hovertemplate="%{x}: %{y:.2f}<extra>one seed</extra>",
    )
    return [bars, dots, *chance_traces(arm, labels, show_legend)]


def chance_traces(arm: dict, labels: list[str], show_legend: bool) -> list[go.Scatter]:
    """Two horizontal lines across ``labels``: the arm's chance level (mean over seeds) and chance + the
    recovery margin, the level a component must clear to count as recovered."""
    level = float(np.mean(arm["chance"]["per_seed"]))
    out = []
    for y, name, dash in (
        (level, "chance (rotations of the whitened latents)", "dot"),
        (level + ABOVE_CHANCE, f"chance + {ABOVE_CHANCE} (recovered above this)", "dash"),
    ):
        out.append(
            go.Scatter(
                x=labels,
                y=[y] * len(labels),
                mode="lines",
                name=name,
                showlegend=show_legend,
                line=dict(color=PALETTE["grey"], dash=dash, width=1.5),
                hovertemplate=f"{name}: {y:.2f}<extra></extra>",
            )
        )
    return out


def explorable_figure(results: CRLResults) -> go.Figure:
    """Per-component MCC of the causal-prior VAE, one frame per pattern of changing influences.

    Bars: median over seeds (whiskers: min to max); blue where the theory predicts identifiability,
    orange where it does not; circles: individual seeds; grey lines: the arm's chance level (dotted)
    and chance + :data:`~explorables.crl.claims.ABOVE_CHANCE` (dashed).
    """
    fig = go.Figure()
    frames, labels, layouts = [], [], []
    arms = [(n, a) for n, a in results.summary["arms"].items() if a["prior"] == "causal" and a["data"] == "synthetic"]
    for k, (name, arm) in enumerate(arms):
        frames.append(add_frame(fig, _component_traces(arm, name, k == 0)))
        labels.append(arm["pattern"])
        layouts.append(
            {
                "title.text": f"causal-prior VAE, influences that change: {arm['pattern']} "
                f"(MCC {arm['mcc']['mean']:.2f} ± {arm['mcc']['sd']:.2f})"
            }
        )
    frame_slider(fig, frames, labels, prefix="changes: ", layouts=layouts)
    fig.update_yaxes(range=[0, 1.05], title="|correlation| after matching")
    return style(fig, height=430, top=50)


def baseline_figure(results: CRLResults) -> go.Figure:
    """Per-component MCC on the all-change data: causal prior against the factorised, plain and shared priors."""
    fig = go.Figure()
    names = [
        n
        for n in ("causal / all", "factorised / all", "plain / all", "shared / all", "causal / post-nonlinear")
        if n in results.summary["arms"]
    ]
    for k, name in enumerate(names):
        arm = results.summary["arms"][name]
        comps = arm["components"]
        med = np.array([c["median"] for c in comps])
        fig.add_trace(
            go.Bar(
                x=[f"z{i}" for i in range(len(comps))],
                y=med,
                name=name,
                marker_color=color(k),
                error_y=dict(
                    type="data",
                    array=np.array([c["max"] for c in comps]) - med,
                    arrayminus=med - np.array([c["min"] for c in comps]),
                ),
            )
        )
    if "causal / all" in results.summary["arms"]:  # the chance level of the all-change targets, shared by the priors
        arm = results.summary["arms"]["causal / all"]
        for trace in chance_traces(arm, [f"z{i}" for i in range(len(arm["components"]))], True):
            fig.add_trace(trace)
    fig.update_layout(barmode="group", title="all influences change: median over seeds (whiskers: min to max)")
    fig.update_yaxes(range=[0, 1.05], title="|correlation| after matching")
    return style(fig, height=380, legend_below=True, top=50)


def training_figure(results: CRLResults) -> go.Figure:
    """Mean MCC during training (median over seeds) for every arm."""
    steps = results.curves["curve_steps"]
    fig = go.Figure()
    for k, (name, values) in enumerate(results.curves["curve_mcc"].items()):
        fig.add_trace(
            go.Scatter(x=steps, y=np.median(values, axis=1), name=name, mode="lines+markers", line=dict(color=color(k)))
        )
    fig.update_layout(title="mean MCC while training (median over seeds)")
    fig.update_xaxes(title="Adam step")
    fig.update_yaxes(title="MCC", range=[0, 1.02])
    return style(fig, height=380, legend_below=True, top=50)


def motion_figure(results: CRLResults, n_poses: int = 12) -> Figure:
    """Stick figures of the kinematic chain, a few sampled poses per gait, and the joints' MCC."""
    angles, env = results.curves["motion_angles"], results.curves["motion_env"]
    fig = Figure(figsize=(10.5, 2.9), dpi=90)
    n = len(MOTION_GAITS)
    axes = fig.subplots(1, n + 1, gridspec_kw=dict(width_ratios=[1] * n + [1.6]))
    for g, ax in enumerate(axes[:n]):
        poses = stick_figure(angles[env == g][:n_poses])
        for p in poses:
            ax.plot(p[:, 0], p[:, 1], color=PALETTE["blue"], alpha=0.45, lw=1.2)
            ax.plot(p[1:3, 0], p[1:3, 1], "o", color=PALETTE["dark_grey"], ms=2)
        ax.set(xlim=(-1.6, 1.6), ylim=(-2.3, 0.2), aspect="equal", title=MOTION_GAITS[g])
        ax.title.set_fontsize(9)
        ax.set_axis_off()
    ax = axes[-1]
    arms = results.summary["arms"]
    width = 0.38
    for k, name in enumerate(("motion / causal", "motion / plain")):
        med = [c["median"] for c in arms[name]["components"]]
        ax.bar(np.arange(3) + (k - 0.5) * width, med, width, color=color(k), label=name.split("/ ")[1])
        for i, c in enumerate(arms[name]["components"]):
            ax.plot([i + (k - 0.5) * width] * len(c["per_seed"]), c["per_seed"], "o", mfc="none", mec="k", ms=3)
    level = float(np.mean(arms["motion / causal"]["chance"]["per_seed"]))
    ax.axhline(level, color=PALETTE["grey"], ls=":", lw=1, label="chance")
    ax.axhline(level + ABOVE_CHANCE, color=PALETTE["grey"], ls="--", lw=1, label=f"chance + {ABOVE_CHANCE}")
    ax.set_xticks(range(3), MOTION_JOINTS, fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_title("MCC per joint", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=7, loc="lower right")
    fig.subplots_adjust(left=0.01, right=0.99, top=0.88, bottom=0.1, wspace=0.15)
    return fig


def lens_figure(results: CRLResults) -> go.Figure:
    """The exact lens: per edge, the held-out likelihood gap of removing it (nats per sample), one frame
    per pattern of changing influences. Bars: mean over seeds; circles: single seeds; blue where the
    influence changes (the theory predicts a gap), orange where it is fixed (it predicts none); grey
    dashed lines: the thresholds :data:`~explorables.crl.claims.LENS_GAP` and ``LENS_TOL``."""
    lens = results.summary["lens"]
    fig = go.Figure()
    frames, labels = [], []
    edges = lens["edges"]
    for k, (pattern, v) in enumerate(lens["patterns"].items()):
        gaps = np.asarray(v["gap"])  # (edges, seeds)
        cols = [PREDICTED[bool(c)] for c in v["changes"]]
        traces = [
            go.Bar(
                x=edges,
                y=gaps.mean(1),
                marker_color=cols,
                showlegend=False,
                hovertemplate="edge %{x}: mean gap %{y:.3f} nats<extra></extra>",
            ),
            go.Scatter(
                x=np.repeat(edges, gaps.shape[1]),
                y=gaps.ravel(),
                mode="markers",
                name="one seed",
                marker=dict(color=PALETTE["black"], size=6, symbol="circle-open"),
                showlegend=k == 0,
                hovertemplate="edge %{x}: %{y:.3f}<extra>one seed</extra>",
            ),
        ]
        frames.append(add_frame(fig, traces))
        labels.append(pattern)
    for y, name in ((LENS_GAP, f"{LENS_GAP} nats: a gap"), (LENS_TOL, f"{LENS_TOL} nats: none")):
        fig.add_trace(
            go.Scatter(
                x=edges,
                y=[y] * len(edges),
                mode="lines",
                name=name,
                line=dict(color=PALETTE["grey"], dash="dash" if y == LENS_GAP else "dot", width=1.5),
            )
        )
    frame_slider(fig, frames, labels, prefix="changes: ")
    fig.update_layout(title="likelihood cost of removing each edge (blue: its influence changes, orange: fixed)")
    fig.update_xaxes(title="edge removed")
    fig.update_yaxes(title="held-out gap (nats per sample)")
    return style(fig, height=430, top=50)


def all_figures(results: CRLResults) -> dict[str, go.Figure]:
    """Every plotly figure of the chapter, by name (what ``python -m explorables run crl`` writes as HTML;
    the matplotlib pictures, :func:`graph_figure` and :func:`motion_figure`, are drawn by the page)."""
    figures = {"explorable": explorable_figure(results), "training": training_figure(results)}
    if results.config.use_baselines:
        figures["baselines"] = baseline_figure(results)
    if results.summary.get("lens"):
        figures["lens"] = lens_figure(results)
    return figures
