"""Figures: plotly builders that take :class:`~explorables.dcdm.experiment.DCDMResults` and return figures.

* :func:`explorable_figure`: a slider over training steps, the centres and their samples (mixture and digits);
* :func:`mixing_figure`: a slider mixing two concepts, ``pi = (1 - lam) e_a + lam e_b``;
* :func:`scores_figure`: NMI / ARI of every arm, k-means and the untrained encoder (mean ± sd);
* :func:`intervention_figure`: held-out digits before and after swapping their concept weights;
* :func:`denoising_figure`: the denoising error per noise level of DCDM, fixed centres and the plain DDPM.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, add_frame, color, frame_slider, style
from .experiment import DCDMResults
from .training import ARMS

ARM_LABELS = {
    "dcdm": "DCDM",
    "fixed_centres": "fixed centres",
    "softmax": "softmax weights",
    "no_kl": "no KL",
    "ddpm": "plain DDPM",
}


def mosaic(images: np.ndarray, gap: int = 1) -> np.ndarray:
    """Tile ``(rows, cols, h, w)`` grey images into one array with ``gap`` pixels of NaN between them."""
    images = np.asarray(images, dtype=float)
    rows, cols, h, w = images.shape[:4]
    out = np.full((rows * (h + gap) - gap, cols * (w + gap) - gap), np.nan)
    for r in range(rows):
        for c in range(cols):
            out[r * (h + gap) : r * (h + gap) + h, c * (w + gap) : c * (w + gap) + w] = images[r, c]
    return out


def _grey(z: np.ndarray, **kw) -> go.Heatmap:
    return go.Heatmap(z=z, colorscale="Greys", zmin=0, zmax=1, showscale=False, hoverinfo="skip", **kw)


def _is_grey(arr: np.ndarray) -> bool:
    return np.asarray(arr).ndim >= 3 and np.asarray(arr).shape[-1] != 3


def _image_panel(centres: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """Rows = concepts: the centre, then its samples (grey images only)."""
    grid = np.concatenate([np.asarray(centres)[:, None], np.asarray(samples)], axis=1)
    return mosaic(grid)[::-1]  # heatmaps draw row 0 at the bottom


def explorable_figure(results: DCDMResults) -> go.Figure:
    """The centres and their samples over training (first seed of DCDM): the mixture and the digits."""
    mix, img = results.curves["mixture"], results.curves["images"]
    fig = make_subplots(
        1,
        2,
        column_widths=[0.5, 0.5],
        subplot_titles=(
            "2-D mixture: data (grey), centres (stars), samples per concept",
            "digits: centre, then samples, per concept",
        ),
    )
    data = mix["data"]
    fig.add_trace(
        go.Scatter(
            x=data[:, 0],
            y=data[:, 1],
            mode="markers",
            marker=dict(size=3, color=PALETTE["light_grey"]),
            name="data",
            showlegend=False,
        ),
        1,
        1,
    )
    frames, labels = [], []
    grey = _is_grey(img["frames"][0]["samples"])
    for f_mix, f_img in zip(mix["frames"], img["frames"], strict=False):
        traces = []
        for k, (c, pts) in enumerate(zip(f_mix["centres"], f_mix["samples"], strict=True)):
            traces.append(
                (
                    go.Scatter(
                        x=pts[:, 0],
                        y=pts[:, 1],
                        mode="markers",
                        marker=dict(size=5, color=color(k), opacity=0.7),
                        showlegend=False,
                        hoverinfo="skip",
                    ),
                    1,
                    1,
                )
            )
            traces.append(
                (
                    go.Scatter(
                        x=[c[0]],
                        y=[c[1]],
                        mode="markers",
                        marker=dict(size=16, symbol="star", color=color(k), line=dict(width=1, color=PALETTE["black"])),
                        showlegend=False,
                        name=f"centre {k}",
                    ),
                    1,
                    1,
                )
            )
        if grey:
            traces.append((_grey(_image_panel(f_img["centres"], f_img["samples"])), 1, 2))
        frames.append(add_frame(fig, traces))
        labels.append(f"{f_mix['step']} / {f_img['step']}")
    fig.update_xaxes(range=[-3.2, 3.2], row=1, col=1)
    fig.update_yaxes(range=[-3.2, 3.2], scaleanchor="x", row=1, col=1)
    fig.update_xaxes(visible=False, row=1, col=2)
    fig.update_yaxes(visible=False, scaleanchor="x2", row=1, col=2)
    frame_slider(fig, frames, labels, prefix="training step (mixture / digits): ", active=len(frames) - 1)
    return style(fig, height=520, bottom=90)


def mixing_figure(results: DCDMResults) -> go.Figure:
    """Samples with weights ``(1 - lam)`` on one concept and ``lam`` on another (same noise for every lam)."""
    mix, img = results.curves["mixture"]["mixing"], results.curves["images"]["mixing"]
    fig = make_subplots(1, 2, subplot_titles=("2-D mixture", "digits (4 samples per λ, same noise)"))
    data = results.curves["mixture"]["data"]
    fig.add_trace(
        go.Scatter(
            x=data[:, 0],
            y=data[:, 1],
            mode="markers",
            marker=dict(size=3, color=PALETTE["light_grey"]),
            showlegend=False,
            hoverinfo="skip",
        ),
        1,
        1,
    )
    frames, labels = [], []
    grey = _is_grey(img["samples"])
    for i, lam in enumerate(mix["lambdas"]):
        pts = mix["samples"][i]
        traces = [
            (
                go.Scatter(
                    x=pts[:, 0],
                    y=pts[:, 1],
                    mode="markers",
                    marker=dict(size=6, color=PALETTE["blue"]),
                    showlegend=False,
                ),
                1,
                1,
            )
        ]
        if grey:
            traces.append((_grey(mosaic(np.asarray(img["samples"][i])[None])[::-1]), 1, 2))
        frames.append(add_frame(fig, traces))
        labels.append(f"{lam:.1f}")
    fig.update_xaxes(range=[-3.2, 3.2], row=1, col=1)
    fig.update_yaxes(range=[-3.2, 3.2], scaleanchor="x", row=1, col=1)
    fig.update_xaxes(visible=False, row=1, col=2)
    fig.update_yaxes(visible=False, scaleanchor="x2", row=1, col=2)
    frame_slider(fig, frames, labels, prefix="λ (weight on the second concept): ")
    return style(fig, height=380, bottom=90)


def scores_figure(results: DCDMResults, metric: str = "nmi") -> go.Figure:
    """``metric`` (``nmi`` or ``ari``) of every concept arm, k-means and the untrained encoder, mean ± sd."""
    fig = go.Figure()
    names = [ARM_LABELS[a] for a in ARMS if a != "ddpm"] + ["k-means", "untrained encoder"]
    for i, part in enumerate(("mixture", "images")):
        s = results.summary[part]
        stats = [s["arms"][a][metric] for a in ARMS if a != "ddpm"] + [s["kmeans"][metric], s["untrained"][metric]]
        fig.add_trace(
            go.Bar(
                x=names,
                y=[v["mean"] for v in stats],
                error_y=dict(array=[v["sd"] for v in stats]),
                name="2-D mixture" if part == "mixture" else "digits",
                marker_color=color(i),
            )
        )
    fig.update_layout(barmode="group", yaxis_title=metric.upper() + " against the labels", yaxis_range=[0, 1.05])
    return style(fig, height=360, legend_below=True)


def intervention_figure(results: DCDMResults) -> go.Figure:
    """Held-out digits (top row) and the same digits after swapping their concept weights (bottom row)."""
    ex = results.curves["images"].get("interventions")
    fig = go.Figure()
    if ex is not None and _is_grey(ex["originals"]):
        fig.add_trace(_grey(mosaic(np.stack([ex["originals"], ex["kept"], ex["edited"]]))[::-1]))
        titles = ", ".join(f"{int(a)}→{int(b)}" for a, b in zip(ex["from_labels"], ex["to_labels"], strict=True))
        fig.update_layout(
            title=dict(
                text=f"rows: input, regenerated as is, regenerated with the swap; concept labels {titles}",
                font=dict(size=11),
            )
        )
    else:
        fig.add_trace(go.Scatter(x=[0], y=[0], mode="text", text=["no intervention examples in this run"]))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, scaleanchor="x")
    return style(fig, height=260)


def loss_figure(results: DCDMResults) -> go.Figure:
    """Training loss of every member (every 50 steps), coloured by arm."""
    fig = go.Figure()
    n_seeds = len(results.config.seeds)
    for part, dash in (("images", "solid"),):
        losses = np.asarray(results.curves[part]["losses"])
        if losses.ndim != 2:
            continue
        for e in range(losses.shape[1]):
            arm = ARMS[e // n_seeds]
            fig.add_trace(
                go.Scatter(
                    x=np.arange(len(losses)) * 50,
                    y=losses[:, e],
                    mode="lines",
                    line=dict(color=color(ARMS.index(arm)), dash=dash, width=1),
                    name=ARM_LABELS[arm],
                    legendgroup=arm,
                    showlegend=e % n_seeds == 0,
                )
            )
    fig.update_layout(xaxis_title="training step (digits)", yaxis_title="loss of eq. (dcdm-elbo)")
    return style(fig, height=320, legend_below=True)


def denoising_figure(results: DCDMResults, arms: tuple[str, ...] = ("dcdm", "fixed_centres", "ddpm")) -> go.Figure:
    """The denoising error on held-out inputs at each measured noise level (x: the noise variance
    ``1 - abar_t``), mean ± sd over seeds, of ``arms``; one panel per dataset."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("2-D mixture", "digits"), horizontal_spacing=0.1)
    for col, part in enumerate(("mixture", "images"), start=1):
        s = results.summary[part]
        x = s["noise_fractions"]
        for arm in arms:
            a = s["arms"][arm]
            stats = [a[f"denoise_{j}"] for j in range(len(x))]
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[v["mean"] for v in stats],
                    error_y=dict(array=[v["sd"] for v in stats]),
                    mode="lines+markers",
                    line=dict(color=color(ARMS.index(arm))),
                    name=ARM_LABELS[arm],
                    legendgroup=arm,
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(title_text="noise variance 1 − ᾱ_t", row=1, col=col)
    fig.update_yaxes(title_text="denoising error ‖ε − ε_θ‖² / D", row=1, col=1)
    return style(fig, height=340, legend_below=True)


def all_figures(results: DCDMResults) -> dict[str, go.Figure]:
    """Every figure of the chapter, by name (what the runner writes as HTML)."""
    return {
        "explorable": explorable_figure(results),
        "mixing": mixing_figure(results),
        "nmi": scores_figure(results, "nmi"),
        "ari": scores_figure(results, "ari"),
        "interventions": intervention_figure(results),
        "loss": loss_figure(results),
        "denoising": denoising_figure(results),
    }
