"""Figures of the chapter: builders ``results -> plotly figure`` (all from executed runs)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, frame_slider, style
from .experiment import METHOD_NAMES, UGGRHResults, part_name

COLORS = {"baseline": PALETTE["orange"], "uggrh": PALETTE["blue"], "random": PALETTE["grey"],
          "drop_incomplete": PALETTE["green"]}  # fmt: skip
DIRECTIONS = {"i2t": "image → text", "t2i": "text → image"}


def explorable_figure(results: UGGRHResults) -> go.Figure:
    """mAP@all against the missing rate, baseline and UGGRH (mean ± sd over seeds); a slider over code lengths."""
    cfg, s = results.config, results.summary
    rates = [100 * r for r in cfg.missing_rate_grid]
    fig = make_subplots(rows=1, cols=2, subplot_titles=tuple(DIRECTIONS.values()), shared_yaxes=True)
    chance = s[part_name(cfg.missing_rate_grid[0])]["random"]["mean"]
    for col in (1, 2):
        fig.add_trace(go.Scatter(x=[rates[0], rates[-1]], y=[chance, chance], mode="lines", line=REFERENCE_LINE,
                                 name="random codes", showlegend=col == 1), row=1, col=col)  # fmt: skip
    frames, labels = [], []
    for b in cfg.bits_grid:
        traces = []
        for col, d in enumerate(DIRECTIONS, 1):
            for method in ("baseline", "uggrh"):
                cells = [s[part_name(r)][method][str(b)][d] for r in cfg.missing_rate_grid]
                traces.append((go.Scatter(
                    x=rates, y=[c["mean"] for c in cells], error_y=dict(array=[c["sd"] for c in cells]),
                    mode="lines+markers", name=METHOD_NAMES[method], legendgroup=method, showlegend=col == 1,
                    line=dict(color=COLORS[method]),
                    hovertemplate=f"{b} bits, %{{x:.0f}}% missing: mAP %{{y:.3f}}<extra>{method}</extra>",
                ), 1, col))  # fmt: skip
        frames.append(add_frame(fig, traces))
        labels.append(f"{b} bits")
    fig.update_xaxes(title_text="training pairs missing one modality (%)")
    fig.update_yaxes(title_text="mAP@all", row=1, col=1)
    frame_slider(fig, frames, labels, prefix="code length: ", active=min(1, len(frames) - 1), pad_top=50)
    return style(fig, height=440, legend_below=False)


def ablation_figure(results: UGGRHResults) -> go.Figure:
    """mAP at the highest missing rate: UGGRH, each module removed, the control and the baseline (mean ± sd)."""
    s = results.summary
    ab = s["ablations"]
    part = s[part_name(ab["missing_rate"])]
    names = [
        "uggrh",
        "no_completion",
        "no_refinement",
        "no_graph_attention",
        "no_fusion",
        "drop_incomplete",
        "baseline",
    ]
    cells = [
        part["uggrh"][str(ab["bits"])]["mean"],
        *(ab[n] for n in names[1:-1]),
        part["baseline"][str(ab["bits"])]["mean"],
    ]
    colors = [COLORS["uggrh"], *[PALETTE["light_blue"]] * 4, COLORS["drop_incomplete"], COLORS["baseline"]]
    fig = go.Figure(go.Bar(
        x=[METHOD_NAMES[n] for n in names], y=[c["mean"] for c in cells], error_y=dict(array=[c["sd"] for c in cells]),
        marker_color=colors, hovertemplate="%{x}: %{y:.3f}<extra></extra>",
    ))  # fmt: skip
    lo = min(c["mean"] - c["sd"] for c in cells)
    fig.update_yaxes(
        title_text=f"mAP, {ab['missing_rate']:.0%} missing, {ab['bits']} bits", range=[max(0, lo - 0.05), None]
    )
    return style(fig, height=380)


def similarity_figure(results: UGGRHResults) -> go.Figure:
    """The training target S at the highest missing rate, baseline (mean-fill) vs UGGRH (refined).

    Rows and columns are sorted by the hidden class *for display only*; a clear block diagonal means
    the target already knows which samples belong together.
    """
    curves = results.curves.get(part_name(results.config.missing_rate_grid[-1]), {})
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("baseline: mean-fill, DJSRH joint S", "UGGRH: completed, refined S")
    )
    for col, method in enumerate(("baseline", "uggrh"), 1):
        if method in curves:
            fig.add_trace(go.Heatmap(z=np.asarray(curves[method]["target"]), zmin=-1, zmax=1, colorscale="RdBu",
                                     reversescale=True, showscale=col == 2), row=1, col=col)  # fmt: skip
        else:
            fig.add_trace(go.Scatter(x=[0], y=[0], mode="text", text=["not stored (digits only)"]), row=1, col=col)
        fig.update_yaxes(autorange="reversed", showticklabels=False, row=1, col=col)
        fig.update_xaxes(showticklabels=False, row=1, col=col)
    return style(fig, height=360)


def examples_figure(results: UGGRHResults) -> go.Figure:
    """Image queries (left) and the database items whose text codes rank first, baseline vs UGGRH (I→T).

    A red frame marks a retrieved item of another class; a button switches between the two methods.
    """
    curves = results.curves.get(part_name(results.config.missing_rate_grid[-1]), {})
    fig = go.Figure()
    frames, labels = [], []
    for method in ("baseline", "uggrh"):
        if method not in curves:
            continue
        ex = curves[method]["examples"]
        query, retrieved, hit = np.asarray(ex["query"]), np.asarray(ex["retrieved"]), np.asarray(ex["hit"])
        n_q, top = hit.shape
        mosaic = np.full((n_q * 10, (top + 2) * 10), np.nan)
        for i in range(n_q):
            mosaic[i * 10 + 1 : i * 10 + 9, 1:9] = query[i].reshape(8, 8)
            for j in range(top):
                c0 = (j + 2) * 10 + 1
                mosaic[i * 10 + 1 : i * 10 + 9, c0 : c0 + 8] = retrieved[i, j].reshape(8, 8)
        trace = go.Heatmap(z=mosaic, colorscale="Greys", showscale=False, hoverinfo="skip")
        idx = add_frame(fig, [trace])
        shapes = [dict(type="rect", x0=(j + 2) * 10 + 0.5, x1=(j + 2) * 10 + 8.5, y0=i * 10 + 0.5, y1=i * 10 + 8.5,
                       line=dict(color=PALETTE["red"], width=2))
                  for i in range(n_q) for j in range(top) if not hit[i, j]]  # fmt: skip
        frames.append((idx, shapes))
        labels.append(f"{METHOD_NAMES[method]}: {hit.mean():.0%} of the top {top} share the query's class")
    if not frames:
        fig.add_trace(go.Scatter(x=[0], y=[0], mode="text", text=["no examples stored (digits only)"]))
        return style(fig, height=200)
    fig.update_yaxes(autorange="reversed", showticklabels=False, scaleanchor="x")
    fig.update_xaxes(showticklabels=False)
    buttons = []
    for k, (label, (_idx, shapes)) in enumerate(zip(labels, frames, strict=True)):
        visible = [i in frames[k][0] for i in range(len(fig.data))]
        buttons.append(
            dict(
                method="update",
                label=label.split(":")[0],
                args=[{"visible": visible}, {"shapes": shapes, "title.text": label}],
            )
        )
    for i, tr in enumerate(fig.data):
        tr.visible = i in frames[-1][0]
    fig.update_layout(shapes=frames[-1][1], title=dict(text=labels[-1], font=dict(size=13)),
                      updatemenus=[dict(type="buttons", direction="right", buttons=buttons, active=len(buttons) - 1,
                                        x=0, y=1.18, xanchor="left")])  # fmt: skip
    return style(fig, height=360, top=90)


def speed_figure(results: UGGRHResults) -> go.Figure:
    """Seconds per query and database size: packed Hamming codes against float cosine search."""
    sp = results.summary["speed"]["retrieval_speed"]
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("time per query (ms, log scale)", "database size (MiB, log scale)")
    )
    names = [f"{sp['n_bits']}-bit codes", f"{sp['d_float']}-d float32"]
    fig.add_trace(go.Bar(x=names, y=[sp["hamming_query_s"] * 1e3, sp["cosine_query_s"] * 1e3],
                         marker_color=[COLORS["uggrh"], PALETTE["grey"]], showlegend=False), row=1, col=1)  # fmt: skip
    fig.add_trace(go.Bar(x=names, y=[sp["hamming_bytes"] / 2**20, sp["cosine_bytes"] / 2**20],
                         marker_color=[COLORS["uggrh"], PALETTE["grey"]], showlegend=False), row=1, col=2)  # fmt: skip
    fig.update_yaxes(type="log")
    return style(fig, height=320)


def all_figures(results: UGGRHResults) -> dict[str, go.Figure]:
    return {
        "explorable": explorable_figure(results),
        "similarity": similarity_figure(results),
        "examples": examples_figure(results),
        "ablations": ablation_figure(results),
        "speed": speed_figure(results),
    }
