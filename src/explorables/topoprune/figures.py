"""Figures: the embedding with the kept points (slider over noise × pruning rate), local persistence
diagrams, accuracy against the pruning rate, and the stability of the kept sets."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .experiment import METHOD_NAMES, METHODS, PERTURBATION_NAMES, PERTURBATIONS, VARIANTS, TopoPruneResults

#: short names of the diagnosis's score variants, for the figure's legend
VARIANT_SHORT = {
    "first": "first version (displacement, rescaled, layout)",
    "unscaled": "… not rescaled",
    "layout_values": "… total persistence, layout, layout's k",
    "layout_values_wide": "… total persistence, layout, TopoPrune's k",
    "topoprune": "TopoPrune now (total persistence, features)",
    "own": "… own neighbourhood only, not averaged",
}

VIEW_TITLES = {"mlp": "MLP features select", "cnn": "CNN features select (transfer)",
               "mlp_noisy": "noisy MLP features select"}  # fmt: skip


def _r(a: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(a, dtype=np.float64), 3)


def explorable_figure(results: TopoPruneResults) -> go.Figure:
    """UMAP of the clean MLP features (first seed): left coloured by TopoPrune's score, right by class;
    the kept points of TopoPrune (left) and of the distance to the class centre (right) ringed. Slider:
    clean or noisy features × pruning rate. Every frame is drawn on the *clean* layout, so a point
    stays where it is and only its colour and ring change with the noise (a noisy layout would move
    the points as well, and the eye would read UMAP's redrawing as the scores' instability). The
    layout only draws the picture: the scores are computed on the features (without the diagnosis,
    their PCA draws it)."""
    ex, cfg = results.curves["example"], results.config
    Z = ex["embedding"]["mlp"]

    titles = ("TopoPrune (colour: score)", "distance to class centre (colour: class)")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.06, subplot_titles=titles)
    frames, labels = [], []
    for v, name in (("mlp", "clean"), ("mlp_noisy", f"noise {cfg.noise}")):
        score, y = ex["scores"][v], np.asarray(ex["labels"])
        back = add_frame(fig, [
            (go.Scatter(x=_r(Z[:, 0]), y=_r(Z[:, 1]), mode="markers", showlegend=False, hoverinfo="skip",
                          marker=dict(size=4, color=_r(score), colorscale="Viridis", opacity=0.5,
                                      colorbar=dict(title="score", x=0.46, len=0.8))), 1, 1),
            (go.Scatter(x=_r(Z[:, 0]), y=_r(Z[:, 1]), mode="markers", showlegend=False, hoverinfo="skip",
                          marker=dict(size=4, color=[color(int(c)) for c in y], opacity=0.4)), 1, 2),
        ])  # fmt: skip
        for r in (str(x) for x in cfg.prune_grid):
            kept = [np.asarray(ex["kept"][v][m][r]) for m in ("topoprune", "centre")]
            ring = [
                (go.Scatter(x=_r(Z[k, 0]), y=_r(Z[k, 1]), mode="markers", showlegend=False, hoverinfo="skip",
                              marker=dict(size=7, color="rgba(0,0,0,0)", line=dict(color=PALETTE["black"], width=1))),
                 1, col)
                for col, k in ((1, kept[0]), (2, kept[1]))
            ]  # fmt: skip
            frames.append(back + add_frame(fig, ring))
            labels.append(f"{name}, pruned {float(r):.0%}")
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    frame_slider(fig, frames, labels, prefix="features: ")
    return style(fig, height=470, bottom=90)


def diagram_figure(results: TopoPruneResults) -> go.Figure:
    """Three neighbourhoods (lowest, median, highest TopoPrune score): the cloud in the latent features on
    its first two principal axes, and its persistence diagram (H0 deaths at birth 0, H1 pairs)."""
    ex = results.curves["example"]["examples"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("neighbourhood (first two principal axes)",
                                                        "persistence diagram"))  # fmt: skip
    top = max(max(e["h0"].max(initial=0), e["h1"].max(initial=0)) for e in ex) * 1.05
    fig.add_trace(go.Scatter(x=[0, top], y=[0, top], mode="lines", line=REFERENCE_LINE, showlegend=False), 1, 2)
    frames, labels = [], []
    for e in ex:
        c = e["cloud"]
        traces = [
            (go.Scatter(x=_r(c[:, 0]), y=_r(c[:, 1]), mode="markers", name="neighbours",
                        marker=dict(color=PALETTE["blue"], size=8), showlegend=False), 1, 1),
            (go.Scatter(x=_r(c[:1, 0]), y=_r(c[:1, 1]), mode="markers", name="the sample", showlegend=False,
                        marker=dict(color=PALETTE["red"], size=12, symbol="x")), 1, 1),
            (go.Scatter(x=np.zeros(len(e["h0"])), y=_r(e["h0"]), mode="markers", name="H0",
                        marker=dict(color=PALETTE["blue"], size=8)), 1, 2),
            (go.Scatter(x=_r(e["h1"][:, 0]), y=_r(e["h1"][:, 1]), mode="markers", name="H1",
                        marker=dict(color=PALETTE["green"], size=9, symbol="triangle-up")), 1, 2),
        ]  # fmt: skip
        frames.append(add_frame(fig, traces))
        labels.append(f"{e['label']} ({e['score']:.3f})")
    fig.update_xaxes(title_text="birth", row=1, col=2)
    fig.update_yaxes(title_text="death", row=1, col=2)
    frame_slider(fig, frames, labels, prefix="sample: ")
    return style(fig, height=430, bottom=90)


def accuracy_figure(results: TopoPruneResults) -> go.Figure:
    """Test accuracy against the pruning rate, per method (mean ± sd over seeds), for each feature view."""
    m, rates = results.summary["methods"], [str(r) for r in results.config.prune_grid]
    views = ("mlp", "cnn", "mlp_noisy")
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, subplot_titles=[VIEW_TITLES[v] for v in views])
    full = m["full_accuracy"]["mean"]
    xs = [float(r) for r in rates]
    for j, v in enumerate(views, start=1):
        fig.add_trace(go.Scatter(x=[xs[0], xs[-1]], y=[full, full], mode="lines", line=REFERENCE_LINE,
                                 name="full pool", showlegend=j == 1), 1, j)  # fmt: skip
        for i, k in enumerate(METHODS):
            acc = m["accuracy"][v][k]
            here = [r for r in rates if r in acc]  # the CNN and noisy views train at the highest rate only
            fig.add_trace(go.Scatter(
                x=[float(r) for r in here], y=[acc[r]["mean"] for r in here], mode="lines+markers",
                name=METHOD_NAMES[k], legendgroup=k, showlegend=j == 1,
                line=dict(color=color(i), width=3 if k == "topoprune" else 1.5),
                error_y=dict(type="data", array=[acc[r]["sd"] for r in here], visible=True),
            ), 1, j)  # fmt: skip
        fig.update_xaxes(title_text="pruning rate", tickformat=".0%", row=1, col=j)
    fig.update_yaxes(title_text="test accuracy", row=1, col=1)
    return style(fig, height=420, legend_below=True, bottom=110)


def stability_figure(results: TopoPruneResults, level: float | None = None) -> go.Figure:
    """The chapter's central figure. Left: the rank correlation of each score with itself under feature noise
    and across extractors (mean ± sd over seeds), pooled over the pool (what the gates read, against
    their ``level``) and within classes (the mean over classes: the ranking a class-balanced selection
    reads). Right (first seed): from
    the first version's score to TopoPrune's, one change at a time, under each perturbation."""
    from .claims import STABLE

    level = STABLE if level is None else level
    m = results.summary["methods"]
    diag = m.get("diagnosis")
    titles = ("over seeds: pooled (the gates) and within classes", "first seed: what made the first version unstable")
    fig = make_subplots(rows=1, cols=2 if diag else 1, horizontal_spacing=0.1,
                        subplot_titles=titles[: 2 if diag else 1])  # fmt: skip
    cats = ["noise, pooled", "noise, within classes", "CNN vs MLP, pooled", "CNN vs MLP, within classes"]
    keys = ("spearman_noise", "spearman_noise_within", "spearman_transfer", "spearman_transfer_within")
    for i, k in enumerate(("topoprune", "radius", "centre")):
        fig.add_trace(go.Bar(
            x=cats, name=METHOD_NAMES[k], marker_color=color(i), legendgroup="a",
            y=[m[key][k]["mean"] for key in keys],
            error_y=dict(type="data", array=[m[key][k]["sd"] for key in keys]),
        ), 1, 1)  # fmt: skip
    fig.add_trace(go.Scatter(x=cats, y=[level] * len(cats), mode="lines", line=REFERENCE_LINE,
                             name=f"gate level {level} (the gates read the pooled bars)"), 1, 1)  # fmt: skip
    if diag:
        for i, v in enumerate(VARIANTS):
            fig.add_trace(go.Bar(x=[PERTURBATION_NAMES[p] for p in PERTURBATIONS],
                                 y=[diag[v][p] for p in PERTURBATIONS], name=VARIANT_SHORT[v],
                                 marker_color=color(i + 3), legendgroup="b"), 1, 2)  # fmt: skip
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="Spearman with the clean score", range=[-0.1, 1.05], row=1, col=1)
    return style(fig, height=440, legend_below=True, bottom=150)


def jaccard_figure(results: TopoPruneResults) -> go.Figure:
    """Overlap (Jaccard) of each method's kept set on clean and on noisy features, per pruning rate."""
    m, rates = results.summary["methods"], [str(r) for r in results.config.prune_grid]
    fig = go.Figure()
    for i, k in enumerate(METHODS):
        fig.add_trace(go.Bar(
            x=[f"{float(r):.0%}" for r in rates], y=[m["jaccard"][k][r]["mean"] for r in rates],
            error_y=dict(type="data", array=[m["jaccard"][k][r]["sd"] for r in rates]),
            name=METHOD_NAMES[k], marker_color=color(i),
        ))  # fmt: skip
    fig.update_layout(barmode="group", xaxis_title="pruning rate",
                      yaxis_title="Jaccard overlap, clean vs noisy kept set")  # fmt: skip
    return style(fig, height=380, legend_below=True, bottom=100)


def all_figures(results: TopoPruneResults) -> dict[str, go.Figure]:
    """Every figure of the chapter, by name (what the runner writes as HTML)."""
    return {
        "explorable": explorable_figure(results),
        "diagrams": diagram_figure(results),
        "accuracy": accuracy_figure(results),
        "stability": stability_figure(results),
        "jaccard": jaccard_figure(results),
    }
