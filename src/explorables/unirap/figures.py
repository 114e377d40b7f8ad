"""Figures: the explorable (a slider over test scenes, true and predicted box, part mask and grasp) and
the data-efficiency curves (each metric against the number of instruction-labelled scenes)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .claims import METRIC_LABELS, METRICS, control_counts, curve_scores, scores
from .experiment import UniRAPResults, scene_arrays
from .metrics import grasp_rectangle
from .scenes import JAW
from .training import LABELS

PANELS = (("truth", "truth"), ("curriculum", "unified + curriculum"), ("pose_direct", "pose from its own map"))


def _rgba(name: str, alpha: float) -> str:
    h = PALETTE[name].lstrip("#")
    return f"rgba({int(h[0:2], 16)}, {int(h[2:4], 16)}, {int(h[4:6], 16)}, {alpha})"


def _box_trace(box: np.ndarray, colour: str, name: str, dash: str = "solid") -> go.Scatter:
    x0, y0, x1, y1 = (float(v) - 0.5 for v in box)
    return go.Scatter(x=[x0, x1, x1, x0, x0], y=[y0, y0, y1, y1, y0], mode="lines", name=name, showlegend=False,
                      line=dict(color=colour, width=2, dash=dash), hoverinfo="name")


def _grasp_trace(grasp: np.ndarray, jaw: float, colour: str, name: str) -> go.Scatter:
    corners = grasp_rectangle(grasp, jaw) - 0.5
    # the two jaws (the short sides) thick, joined by the opening's sides
    xs = [corners[0, 0], corners[3, 0], None, corners[1, 0], corners[2, 0], None, corners[0, 0], corners[1, 0], None,
          corners[3, 0], corners[2, 0]]
    ys = [corners[0, 1], corners[3, 1], None, corners[1, 1], corners[2, 1], None, corners[0, 1], corners[1, 1], None,
          corners[3, 1], corners[2, 1]]
    return go.Scatter(x=xs, y=ys, mode="lines", name=name, showlegend=False, line=dict(color=colour, width=2),
                      hoverinfo="name")


def _mask_trace(mask: np.ndarray, colour: str) -> go.Heatmap:
    z = np.where(mask, 1.0, np.nan)
    return go.Heatmap(z=z, colorscale=[[0, colour], [1, colour]], showscale=False, hoverinfo="skip", zmin=0, zmax=1)


def explorable_figure(results: UniRAPResults) -> go.Figure:
    """Slider over test scenes: the truth, the unified model (curriculum) and the ablation whose pose
    reads an attention map of its own instead of the mask."""
    cfg = results.config
    test = scene_arrays(cfg)
    shown = results.curves["unified"]["shown"]
    preds = {"curriculum": shown["curriculum"], "pose_direct": shown["pose_direct"]}
    jaw = JAW * cfg.image_size / 32
    n = len(test["texts"])
    fig = make_subplots(rows=1, cols=len(PANELS), subplot_titles=[t for _, t in PANELS], horizontal_spacing=0.03)
    frames, labels, layouts = [], [], []
    mask_colour, box_colour, grasp_colour = _rgba("gold", 0.6), PALETTE["cyan"], PALETTE["red"]
    for i in range(n):
        image = (np.transpose(test["images"][i], (1, 2, 0)) * 255).astype(np.uint8)
        traces = []
        for col, (key, _) in enumerate(PANELS, start=1):
            src = test if key == "truth" else preds[key]
            traces += [(go.Image(z=image, hoverinfo="skip"), 1, col),
                       (_mask_trace(src["masks"][i], mask_colour), 1, col),
                       (_box_trace(src["boxes"][i], box_colour, "box"), 1, col),
                       (_grasp_trace(src["grasps"][i], jaw, grasp_colour, "grasp"), 1, col)]
        frames.append(add_frame(fig, traces))
        labels.append(str(i + 1))
        layouts.append({"title.text": f"“{test['texts'][i]}”"})
    s = cfg.image_size
    for col in range(1, len(PANELS) + 1):
        fig.update_xaxes(range=[-0.5, s - 0.5], showticklabels=False, showgrid=False, zeroline=False, row=1, col=col,
                         constrain="domain")
        fig.update_yaxes(range=[s - 0.5, -0.5], showticklabels=False, showgrid=False, zeroline=False, row=1, col=col,
                         scaleanchor=f"x{'' if col == 1 else col}")
    style(fig, height=400, top=70)
    fig.update_layout(title=dict(x=0.5, font=dict(size=14)))
    return frame_slider(fig, frames, labels, prefix="test scene ", layouts=layouts, y=0.0)


def efficiency_figure(results: UniRAPResults) -> go.Figure:
    """Each metric (mean ± sd over the curriculum's ``seeds``, the same members at every count: ``curve_scores``)
    against the instruction-labelled scene count, per regime."""
    grid = results.summary["labelled_grid"]
    chance = results.summary["unified"]["chance"]
    fig = make_subplots(rows=1, cols=3, subplot_titles=[METRIC_LABELS[k] for k in METRICS])
    for col, key in enumerate(METRICS, start=1):
        for j, regime in enumerate(("curriculum", "joint_parsing", "joint")):
            counts = grid if regime == "curriculum" else control_counts(results)  # the no-parsing arm's are the same
            st = [curve_scores(results, regime, n)[key] for n in counts]  # every point: the same member seeds
            fig.add_trace(go.Scatter(x=counts, y=[s["mean"] for s in st], mode="lines+markers", name=LABELS[regime],
                                     error_y=dict(type="data", array=[s["sd"] for s in st]),
                                     line=dict(color=color(j)), showlegend=col == 1, legendgroup=regime),
                          row=1, col=col)
        n = results.summary["n_labelled"]
        for j, arch in enumerate(("separate", "pose_direct")):
            st = scores(results, arch)[key]
            fig.add_trace(go.Scatter(x=[n], y=[st["mean"]], mode="markers", name=LABELS[arch],
                                     error_y=dict(type="data", array=[st["sd"]]),
                                     marker=dict(color=color(3 + j), size=10, symbol="diamond"), showlegend=col == 1,
                                     legendgroup=arch), row=1, col=col)
        fig.add_trace(go.Scatter(x=[grid[0], grid[-1]], y=[chance[key]] * 2, mode="lines", line=REFERENCE_LINE,
                                 name="chance", showlegend=col == 1, legendgroup="chance"), row=1, col=col)
        fig.update_xaxes(type="log", title_text="instruction-labelled scenes", row=1, col=col)
        fig.update_yaxes(range=[0, 1.02], row=1, col=col)
    style(fig, height=420, legend_below=True, bottom=110)
    fig.update_layout(legend=dict(y=-0.3))
    return fig


def loss_figure(results: UniRAPResults) -> go.Figure:
    """Training loss (mean over members) of each part's ensemble."""
    fig = go.Figure()
    first = results.curves["pretrain"]["loss"]
    fig.add_trace(go.Scatter(y=first, mode="lines", name="phase 1 (stages 1-2 and the control's start)",
                             line=dict(color=color(0))))
    for i, part in enumerate(("unified", "separate"), start=1):
        fig.add_trace(go.Scatter(x=np.arange(len(first), len(first) + len(results.curves[part]["loss"])),
                                 y=results.curves[part]["loss"], mode="lines", name=f"phase 2: {part}",
                                 line=dict(color=color(i))))
    fig.update_layout(xaxis_title="step", yaxis_title="loss (mean over members)")
    return style(fig, height=300)


def all_figures(results: UniRAPResults) -> dict[str, go.Figure]:
    return {"explorable": explorable_figure(results), "efficiency": efficiency_figure(results),
            "loss": loss_figure(results)}
