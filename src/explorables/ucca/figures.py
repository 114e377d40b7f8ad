"""Figures of the chapter: builders ``results -> plotly figure`` (all from executed runs)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .experiment import DATASET_NAMES, METHOD_NAMES, METHODS, UCCAResults

METHOD_COLORS = {"oracle": PALETTE["grey"], "ucca": PALETTE["blue"], "ucca_no_faq": PALETTE["light_blue"],
                 "ucca_scipy_starts": PALETTE["purple"], "wasserstein_procrustes": PALETTE["orange"],
                 "gromov_wasserstein": PALETTE["green"], "random": PALETTE["red"]}  # fmt: skip


def idea_figure(results: UCCAResults) -> go.Figure:
    """The two views of the clustered dataset after whitening (first two directions): no pairs, same shapes.

    Colours are the clusters, shown to the reader only; the method never sees them.
    """
    path = results.curves["clustered"]["path"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("view X, whitened", "view Y, whitened (rows shuffled)"))
    for col, (cloud, labels) in enumerate(
        ((path["x_cloud"], path["labels_x"]), (path["y_cloud"], path["labels_y"])), 1
    ):
        cloud, labels = np.asarray(cloud), np.asarray(labels)
        fig.add_trace(go.Scatter(
            x=cloud[:, 0], y=cloud[:, 1], mode="markers", showlegend=False,
            marker=dict(size=5, color=[color(int(c)) for c in labels], opacity=0.8),
            hovertext=[f"cluster {c}" for c in labels],
        ), row=1, col=col)  # fmt: skip
        fig.update_xaxes(title_text="direction 1", row=1, col=col)
        fig.update_yaxes(title_text="direction 2", row=1, col=col)
    return style(fig, height=340)


def alternation_figure(results: UCCAResults) -> go.Figure:
    """Slider over UCCA's steps (after the QAP, then each CCA + assignment round) on the clustered data.

    Left: which cluster of Y each cluster of X is matched to (rows sum to 1; a permuted diagonal
    means clusters are matched consistently). Right: each canonical variate's correlation on the
    true test pairs, against the oracle's.
    """
    res = results.curves["clustered"]["path"]
    oracle = results.summary["clustered"]["per_component"]["oracle"]
    frames_data = res["frames"]
    k = len(frames_data[0]["test_corr"])
    fig = make_subplots(rows=1, cols=2, column_widths=[0.45, 0.55],
                        subplot_titles=("matching: cluster of x → cluster of its partner y",
                                        "correlation on the true test pairs"))  # fmt: skip
    comps = [f"variate {c + 1}" for c in range(k)]
    fig.add_trace(go.Bar(x=comps, y=oracle, name="oracle", marker_color=METHOD_COLORS["oracle"]), row=1, col=2)
    frames, labels = [], []
    for t, f in enumerate(frames_data):
        conf = np.asarray(f["confusion"])
        idx = add_frame(fig, [
            (go.Heatmap(z=conf, colorscale="Blues", zmin=0, zmax=1, showscale=False,
                        x=[f"y:{j}" for j in range(conf.shape[1])], y=[f"x:{i}" for i in range(conf.shape[0])],
                        hovertemplate="%{y} → %{x}: %{z:.0%}<extra></extra>"), 1, 1),
            (go.Bar(x=comps, y=f["test_corr"], name="UCCA", marker_color=METHOD_COLORS["ucca"],
                    text=[f"{v:.2f}" for v in f["test_corr"]], textposition="outside"), 1, 2),
        ])  # fmt: skip
        frames.append(idx)
        labels.append("after QAP" if t == 0 else f"round {t}")
    layouts = [
        {"title.text": f"{lab}: {f['exact']:.0%} exact matches"} for lab, f in zip(labels, frames_data, strict=True)
    ]
    fig.update_yaxes(range=[-1, 1.1], row=1, col=2)
    fig.update_layout(barmode="group")
    frame_slider(fig, frames, labels, prefix="step: ", active=len(frames) - 1, layouts=layouts)
    return style(fig, height=430, top=60)


def non_gaussianity_figure(results: UCCAResults) -> go.Figure:
    """Slider over λ (0: Gaussian latent, → 1: tight clusters): UCCA's first canonical variates on the true
    test pairs (left) and the correlation of UCCA and the oracle across λ (right)."""
    rows = results.summary["non_gaussianity"]["rows"]
    scatters = results.curves["non_gaussianity"]["scatter"]
    lams = [r["lambda"] for r in rows]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("UCCA's first variates, true test pairs",
                                                         "mean correlation on the true test pairs"))  # fmt: skip
    for m in ("oracle", "ucca", "random"):
        fig.add_trace(go.Scatter(x=lams, y=[r[m] for r in rows], mode="lines+markers", name=METHOD_NAMES[m],
                                 line=dict(color=METHOD_COLORS[m])), row=1, col=2)  # fmt: skip
    frames, labels = [], []
    for lam, sc, r in zip(lams, scatters, rows, strict=True):
        uv = np.asarray(sc["ucca"])
        frames.append(add_frame(fig, [
            (go.Scatter(x=uv[:, 0], y=uv[:, 1], mode="markers", showlegend=False,
                        marker=dict(size=4, color=METHOD_COLORS["ucca"], opacity=0.6)), 1, 1),
            (go.Scatter(x=[lam], y=[r["ucca"]], mode="markers", showlegend=False,
                        marker=dict(size=14, color=METHOD_COLORS["ucca"], symbol="circle-open")), 1, 2),
        ]))  # fmt: skip
        labels.append(f"{lam:g}")
    fig.update_xaxes(title_text="u₁ = x·w_x", row=1, col=1)
    fig.update_yaxes(title_text="v₁ = y·w_y", row=1, col=1)
    fig.update_xaxes(title_text="λ (non-Gaussianity of the latent)", row=1, col=2)
    fig.update_yaxes(range=[-1, 1.05], row=1, col=2)
    frame_slider(fig, frames, labels, prefix="λ = ", active=len(frames) - 1)
    return style(fig, height=430, legend_below=True)


def benchmark_figure(results: UCCAResults) -> go.Figure:
    """Mean ± sd over seeds of each method's true-pairing test correlation, per dataset."""
    s = results.summary
    names = [DATASET_NAMES[d] for d in results.config.datasets]
    fig = go.Figure()
    for m in METHODS:  # a method a dataset did not run (an ablation off ``ablation_datasets``) is left out there
        stats = [s[d][m] or {"mean": None, "sd": None} for d in results.config.datasets]
        fig.add_trace(go.Bar(
            x=names, y=[st["mean"] for st in stats], name=METHOD_NAMES[m],
            error_y=dict(type="data", array=[st["sd"] for st in stats]),
            marker_color=METHOD_COLORS[m],
        ))  # fmt: skip
    fig.add_hline(y=0, line=REFERENCE_LINE)
    fig.update_layout(barmode="group", yaxis_title="correlation on the true test pairs")
    return style(fig, height=420, legend_below=True)


def all_figures(results: UCCAResults) -> dict[str, go.Figure]:
    """Every figure of the chapter, by name (the command line writes them as HTML)."""
    figs = {"benchmark": benchmark_figure(results), "non_gaussianity": non_gaussianity_figure(results)}
    if "clustered" in results.curves and "path" in results.curves.get("clustered", {}):
        figs["idea"] = idea_figure(results)
        figs["alternation"] = alternation_figure(results)
    return figs
