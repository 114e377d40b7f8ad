"""Plotly figures of the chapter: persistence diagrams and barcodes (with the merge threshold
tau), clusters, MMA summands as staircase regions, prominences, and the two sliders."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, add_frame, color, frame_slider, style
from .persistence import Diagram

#: opacity of the grey that marks unlabelled points (-1, noise)
NOISE_ALPHA = 0.4


def colours(labels: np.ndarray) -> list[str]:
    """A colour per point: the label's palette entry (light grey for -1, noise)."""
    noise = _rgba(PALETTE["grey"], NOISE_ALPHA)
    return [noise if lab < 0 else color(int(lab)) for lab in np.asarray(labels)]


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _r(x: np.ndarray, digits: int = 3) -> list:
    return np.round(np.asarray(x, dtype=np.float64), digits).tolist()


def diagram_traces(diagram: Diagram, tau: float | None, *, lo: float, hi: float) -> list[go.Scatter]:
    """Points (birth, death) of a superlevel diagram, essential classes on top, diagonal, tau line.

    A peak is kept as a cluster when its prominence ``birth - death`` exceeds ``tau``: it lies
    above... below the line ``death = birth - tau``, drawn dashed.
    """
    pairs = diagram.pairs
    top = hi + 0.05 * (hi - lo)
    traces = [
        go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color="black", width=1), name="diagonal",
                   hoverinfo="skip", showlegend=False),
        go.Scatter(x=_r(pairs[:, 0]), y=_r(pairs[:, 1]), mode="markers", marker=dict(size=6, color=PALETTE["blue"]),
                   name="peak (birth, death)", hovertemplate="birth %{x}<br>death %{y}<extra></extra>"),
        go.Scatter(x=_r(diagram.essential), y=[top] * len(diagram.essential), mode="markers",
                   marker=dict(size=9, symbol="triangle-up", color=PALETTE["red"]), name="never dies"),
    ]
    if tau is not None and np.isfinite(tau):
        traces.append(go.Scatter(x=[lo + tau, hi], y=[lo, hi - tau], mode="lines",
                                 line=dict(color=PALETTE["orange"], dash="dash"), name=f"τ = {tau:.2f}"))
    return traces


def barcode_traces(diagram: Diagram, tau: float | None) -> list[go.Scatter]:
    """Bars [death, birth] of the superlevel diagram (longest first); bars longer than tau highlighted."""
    pairs = diagram.pairs
    lo = float(np.min(pairs[:, 1])) if len(pairs) else 0.0
    bars = [(b, lo - 0.1 * abs(lo) - 0.1) for b in diagram.essential] + [tuple(p) for p in pairs]
    xs, ys, xk, yk = [], [], [], []
    for i, (b, d) in enumerate(bars):
        keep = i < len(diagram.essential) or (tau is not None and b - d > tau)
        (xk if keep else xs).extend([d, b, None])
        (yk if keep else ys).extend([i, i, None])
    return [
        go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=PALETTE["light_blue"], width=3), name="bar: merged (< τ)"),
        go.Scatter(x=xk, y=yk, mode="lines", line=dict(color=PALETTE["dark_blue"], width=3), name="bar: a cluster"),
    ]


def toy_persistence_figure(t: np.ndarray, f: np.ndarray, diagram: Diagram, tau: float) -> go.Figure:
    """A function on a path graph, its barcode, and its diagram with the tau line."""
    fig = make_subplots(1, 3, subplot_titles=("f on a path graph (sweep f ≥ level downwards)", "barcode",
                                              "persistence diagram"), column_widths=[0.45, 0.25, 0.3])
    fig.add_trace(go.Scatter(x=_r(t), y=_r(f), mode="lines+markers", marker=dict(size=4), name="f",
                             line=dict(color=PALETTE["grey"])), 1, 1)
    for tr in barcode_traces(diagram, tau):
        fig.add_trace(tr, 1, 2)
    lo, hi = float(f.min()), float(f.max())
    for tr in diagram_traces(diagram, tau, lo=lo, hi=hi):
        fig.add_trace(tr, 1, 3)
    fig.update_xaxes(title_text="vertex", row=1, col=1)
    fig.update_xaxes(title_text="f (a bar runs from death to birth)", row=1, col=2)
    fig.update_yaxes(showticklabels=False, row=1, col=2)
    fig.update_xaxes(title_text="birth (peak height)", row=1, col=3)
    fig.update_yaxes(title_text="death (saddle height)", row=1, col=3)
    return style(fig, height=380, legend_below=True)


def _step_figure(panels: list[list[list[go.Scatter]]], labels: list[str], prefix: str, titles: tuple[str, ...],
                 notes: list[str]) -> go.Figure:
    """One figure with a slider: ``panels[step][col]`` are the traces of that step in column ``col``;
    ``notes[step]`` is the figure's title at that step."""
    fig = make_subplots(1, len(titles), subplot_titles=titles, horizontal_spacing=0.07)
    frames = [add_frame(fig, [(tr, 1, c + 1) for c, traces in enumerate(cols) for tr in traces]) for cols in panels]
    frame_slider(fig, frames, labels, prefix=prefix, layouts=[{"title.text": note} for note in notes], pad_top=40)
    fig.update_layout(showlegend=False, title=dict(x=0.5, font=dict(size=13)))
    return style(fig, height=460, top=60, bottom=30)


def _clusters(X: np.ndarray, labels: np.ndarray, outliers: np.ndarray | None = None, name: str = "") -> list:
    traces = [go.Scatter(x=_r(X[:, 0], 2), y=_r(X[:, 1], 2), mode="markers", name=name,
                         marker=dict(size=5, color=colours(labels)), hoverinfo="skip")]
    if outliers is not None and len(outliers):
        traces.append(go.Scatter(x=_r(X[outliers, 0], 2), y=_r(X[outliers, 1], 2), mode="markers",
                                 marker=dict(size=9, symbol="x-thin-open", color="black", line=dict(width=1.5)),
                                 name="outlier value", hoverinfo="skip"))
    return traces


def _diagram_of(curve: dict) -> Diagram:
    return Diagram(np.asarray(curve["pairs"]).reshape(-1, 2), np.asarray(curve["essential"]))


def explorable_figure(results: Any) -> go.Figure:
    """Slider over the outlier fraction: ToMATo's clusters, ToMAToMP's clusters, ToMATo's diagram."""
    cur, summ = results.curves["outliers"], results.summary["outliers"]
    X = np.asarray(cur["X"])
    fmax = max(float(np.max(r["f"])) for r in cur["runs"])
    fmin = min(float(np.min(r["f"])) for r in cur["runs"])
    panels, labels = [], []
    for run, s in zip(cur["runs"], summ["runs"], strict=True):
        ref, mp = run["tomato_ref"], run["mp_robust"]
        panels.append([
            _clusters(X, ref["labels"], run["outliers"], "ToMATo"),
            _clusters(X, mp["labels"], run["outliers"], "ToMAToMP"),
            diagram_traces(_diagram_of(ref), ref["tau"], lo=fmin, hi=fmax),
        ])
        labels.append(f"{s['fraction']:.0%}")
    k = summ["runs"][0]["tomato_ref"]["k"]
    notes = [f"ToMATo K={s['tomato_ref']['n_clusters']} ARI {s['tomato_ref']['ari']:.2f} · "
             f"ToMAToMP K={s['mp_robust']['n_clusters']} ARI {s['mp_robust']['ari']:.2f}" for s in summ["runs"]]
    fig = _step_figure(panels, labels, "outlier fraction: ",
                       (f"ToMATo (k-NN graph, k={k})", "ToMAToMP (radius, f, DTM)", "ToMATo's diagram and τ"), notes)
    fig.update_xaxes(title_text="birth", row=1, col=3)
    fig.update_yaxes(title_text="death", row=1, col=3)
    return fig


def k_slider_figure(results: Any) -> go.Figure:
    """Slider over ToMATo's k on clean two moons: the clusters and the diagram move with the graph."""
    cur = results.curves["k_sweep"]["moons"]
    X = np.asarray(cur["X"])
    f = np.asarray(cur["f"])
    panels, labels = [], []
    for k, c in cur["tomato"].items():
        d = _diagram_of(c)
        panels.append([_clusters(X, c["labels"]), diagram_traces(d, c["tau"], lo=float(f.min()), hi=float(f.max()))])
        labels.append(str(k))
    counts = results.summary["k_sweep"]["moons"]["counts"]
    notes = [f"k = {k}: ToMATo picks K = {counts[k]} (truth: 2)" for k in labels]
    fig = _step_figure(panels, labels, "ToMATo's k: ", ("ToMATo clusters (clean two moons)", "diagram and τ"), notes)
    fig.update_layout(height=420)
    return fig


def staircase(births: np.ndarray, deaths: np.ndarray, lo: float = 0.0, hi: float = 1.0) -> tuple[list, list]:
    """Outline of a 2-parameter interval ``{p : b <= p <= d for a birth b and a death d}`` in the box.

    At abscissa x the interval is the segment ``low(x) <= y <= high(x)`` with
    ``low(x) = min{b_y : b_x <= x}`` and ``high(x) = max{d_y : d_x >= x}`` (both staircases);
    the outline runs along ``high`` left to right and back along ``low``.
    """
    B, D = np.clip(np.asarray(births), lo, hi), np.clip(np.asarray(deaths), lo, hi)
    xs = np.unique(np.r_[B[:, 0], D[:, 0], lo, hi])
    eps = 1e-9
    grid = np.unique(np.r_[xs, np.clip(xs - eps, lo, hi)])
    low = np.array([B[B[:, 0] <= x + eps, 1].min(initial=np.inf) for x in grid])
    high = np.array([D[D[:, 0] >= x - eps, 1].max(initial=-np.inf) for x in grid])
    ok = low <= high
    if not ok.any():
        return [], []
    x, lw, hg = grid[ok], low[ok], high[ok]
    return [*x, *x[::-1], x[0]], [*hg, *lw[::-1], hg[0]]


def summands_figure(results: Any, fractions: tuple[int, ...] = (0, -1)) -> go.Figure:
    """The top four summands of the (radius, f) module as staircase regions (dots: birth corners),
    clean and with outliers."""
    cur, summ = results.curves["outliers"], results.summary["outliers"]
    titles = tuple(f"(radius, f) module, {summ['runs'][i]['fraction']:.0%} outliers" for i in fractions)
    fig = make_subplots(1, len(fractions), subplot_titles=titles)
    for col, i in enumerate(fractions, start=1):
        parts = cur["runs"][i]["mp_plain"]["summands"]
        prom = cur["runs"][i]["mp_plain"]["prominences"]
        for j, s in enumerate(parts[:4]):
            x, y = staircase(np.asarray(s["births"]), np.asarray(s["deaths"]))
            fig.add_trace(go.Scatter(x=_r(x), y=_r(y), fill="toself", mode="lines",
                                     fillcolor=_rgba(color(j), 0.12), line=dict(color=color(j), width=2),
                                     name=f"summand {j + 1} (prominence {prom[j]:.2f})", legendgroup=str(col)),
                          1, col)
            b = np.clip(np.asarray(s["births"]), 0, 1)
            fig.add_trace(go.Scatter(x=_r(b[:, 0]), y=_r(b[:, 1]), mode="markers", showlegend=False,
                                     marker=dict(color=color(j), size=7), hoverinfo="skip"), 1, col)
    fig.update_xaxes(title_text="radius / r_max", range=[0, 1])
    fig.update_yaxes(title_text="1 − rank(f)", range=[0, 1])
    return style(fig, height=420)


def prominence_figure(results: Any) -> go.Figure:
    """Sorted summand prominences for each outlier fraction: (radius, f) against (radius, f, DTM)."""
    summ = results.summary["outliers"]
    fig = make_subplots(1, 2, subplot_titles=("(radius, f)", "(radius, f, DTM)"), shared_yaxes=True)
    for i, run in enumerate(summ["runs"]):
        for col, key in ((1, "mp_plain"), (2, "mp_robust")):
            p = run[key]["prominences"]
            fig.add_trace(go.Scatter(x=list(range(1, len(p) + 1)), y=p, mode="lines+markers",
                                     line=dict(color=color(i)), name=f"{run['fraction']:.0%} outliers",
                                     showlegend=col == 1, legendgroup=str(i)), 1, col)
    fig.update_xaxes(title_text="summand (sorted)")
    fig.update_yaxes(title_text="prominence (largest cube side)", row=1, col=1)
    return style(fig, height=360)


METHODS = (("tomato_ref", "ToMATo (k-NN)"), ("mp_plain", "ToMAToMP (radius, f)"),
           ("mp_robust", "ToMAToMP (radius, f, DTM)"),
           ("tomato_dtm", "ToMATo on the DTM (control)"), ("hdbscan", "HDBSCAN"), ("kmeans", "k-means (true K)"))


def ari_figure(results: Any) -> go.Figure:
    """ARI against the outlier fraction, every method, touching blobs."""
    runs = results.summary["outliers"]["runs"]
    q = [100 * r["fraction"] for r in runs]
    fig = go.Figure()
    for key, name in METHODS:
        if key in runs[0]:
            fig.add_trace(go.Scatter(x=q, y=[r[key]["ari"] for r in runs], mode="lines+markers", name=name,
                                     line=dict(color=color(len(fig.data)))))
    fig.update_layout(xaxis_title="points with an outlier function value (%)", yaxis_title="ARI (all points)",
                      yaxis_range=[-0.05, 1.05])
    return style(fig, height=360, top=20)


def two_functions_figure(results: Any, index: int = 0) -> go.Figure:
    """The four quadrants of one seed of the two-function part: the planted labels, then ToMAToMP's
    labels with f alone, h alone, and both (titles give the count and ARI)."""
    one = results.summary["two_functions"]["seeds"][index]
    cur = results.curves["two_functions"]["seeds"][index]
    X = np.asarray(cur["X"])
    panels = [("planted quadrants", cur["truth"])] + [
        (f"{label}: K={one[key]['n_clusters']}, ARI {one[key]['ari']:.2f}", cur[key])
        for key, label in (("f", "f alone"), ("h", "h alone"), ("f_and_h", "f and h"))]
    fig = make_subplots(1, 4, subplot_titles=tuple(t for t, _ in panels), horizontal_spacing=0.04)
    for col, (title, labels) in enumerate(panels, start=1):
        for trace in _clusters(X, np.asarray(labels), name=title):
            trace.showlegend = False
            fig.add_trace(trace, 1, col)
        fig.update_xaxes(showticklabels=False, row=1, col=col)
        fig.update_yaxes(showticklabels=False, scaleanchor=f"x{col if col > 1 else ''}", row=1, col=col)
    return style(fig, height=320, top=50)


def all_figures(results: Any) -> dict[str, go.Figure]:
    """Every figure of the run (the command line writes them to ``--out``)."""
    return {
        "explorable": explorable_figure(results),
        "k_slider": k_slider_figure(results),
        "summands": summands_figure(results),
        "prominences": prominence_figure(results),
        "ari": ari_figure(results),
        "two_functions": two_functions_figure(results),
    }
