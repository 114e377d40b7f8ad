"""Figures of the chapter, built from :class:`~explorables.omwu.experiment.OMWUResults`.

Every builder takes results (never recomputes) and returns a plotly figure; the notebook shows
them with :func:`explorables.core.plotting.show`.
"""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, color, frame_slider, style
from .experiment import OMWUResults

MAX_POINTS = 400


def _bins(n: int, points: int = MAX_POINTS) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(points, n)).astype(int))


def _bin_min(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Minimum over each bin ``[idx[k], idx[k+1])`` so dips survive down-sampling."""
    return np.minimum.reduceat(values, idx)


def idea_figure(results: OMWUResults, delta: float = 0.05, steps: int = 8_000) -> matplotlib.figure.Figure:
    """The small picture first: one trajectory on ``A_delta``, coloured by how fast energy drains.

    Colour is ``log10(-(E_{t+1} - E_t) / E_t)``: bright where the energy dissipates quickly,
    dark where it stalls, which is where the iterate hugs the edge ``x_1 = 1`` of the square.
    """
    c = results.curves["bottleneck"]
    b = int(np.argmin(np.abs(c["deltas"] - delta)))
    k = min(steps, len(c["steps"]) - 1)
    E = c["energy"][: k + 1, b]
    drain = np.log10(np.maximum(-np.diff(E) / E[:-1], 1e-12))
    fig = matplotlib.figure.Figure(figsize=(9, 3.4), dpi=100)
    ax_traj, ax_e = fig.subplots(1, 2)
    points = ax_traj.scatter(c["x1"][1 : k + 1, b], c["y1"][1 : k + 1, b], c=drain, s=2, cmap="viridis", vmin=-9)
    ax_traj.plot(c["x_star"][b, 0], c["y_star"][b, 0], "r*", ms=12)
    ax_traj.set(
        xlim=(0, 1.02),
        ylim=(0, 1),
        xlabel="x₁ (row player)",
        ylabel="y₁ (column player)",
        title=f"OMWU on A_δ, δ = {c['deltas'][b]:g}",
    )
    fig.colorbar(points, ax=ax_traj, label="log₁₀ relative energy drop per step")
    # two axes: on one shared log axis the energy's steps (a factor of two) vanish next to
    # min_i x_t,i's ten decades
    ax_e.semilogy(c["steps"][: k + 1], E, lw=1.4, color="C0", label="energy E_t (left axis)")
    ax_e.set(xlabel="t", ylabel="energy E_t", title="energy stalls while min_i x_t,i is tiny")
    ax_min = ax_e.twinx()
    ax_min.semilogy(
        c["steps"][: k + 1], c["min_x"][: k + 1, b], lw=1, ls=":", color="C1", label="min_i x_t,i (right axis)"
    )
    ax_min.set_ylabel("min_i x_t,i")
    handles = ax_e.get_legend_handles_labels()[0] + ax_min.get_legend_handles_labels()[0]
    ax_e.legend(handles=handles, loc="lower left", fontsize=8)
    fig.tight_layout()
    return fig


def explorable_figure(results: OMWUResults) -> go.Figure:
    """The chapter's explorable: a slider over delta for the hard game ``A_delta``.

    Left: the trajectory ``(x_t1, y_t1)`` spiralling in to the equilibrium. Middle: the energy
    ``E_t`` (log scale) and the energy predicted by summing the second-order dissipation.
    Right: ``min_i x_t,i``; the energy plateaus line up with its dips toward 0.
    """
    c = results.curves["bottleneck"]
    steps, deltas = c["steps"], c["deltas"]
    idx = _bins(len(steps))
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=("trajectory (x₁, y₁)", "energy E_t (log)", "min_i x_t,i (log)"),
        horizontal_spacing=0.08,
    )
    t = steps[idx]
    frames = []
    for b in range(len(deltas)):
        frames.append(
            add_frame(
                fig,
                [
                    (
                        go.Scatter(
                            x=c["x1"][idx, b],
                            y=c["y1"][idx, b],
                            mode="lines",
                            line=dict(width=1.2, color=PALETTE["blue"]),
                            name="OMWU iterate",
                            customdata=t,
                            hovertemplate="t=%{customdata}<br>x₁=%{x:.4f}<br>y₁=%{y:.4f}<extra></extra>",
                        ),
                        1,
                        1,
                    ),
                    (
                        go.Scatter(
                            x=[c["x_star"][b, 0]],
                            y=[c["y_star"][b, 0]],
                            mode="markers",
                            name="Nash equilibrium",
                            marker=dict(symbol="star", size=12, color=PALETTE["red"]),
                        ),
                        1,
                        1,
                    ),
                    (
                        go.Scatter(
                            x=t, y=c["energy"][idx, b], name="energy (measured)", line=dict(color=PALETTE["blue"])
                        ),
                        1,
                        2,
                    ),
                    (
                        go.Scatter(
                            x=t,
                            y=np.maximum(c["predicted_energy"][idx, b], 1e-300),
                            name="energy (predicted dissipation)",
                            line=dict(color=PALETTE["orange"], dash="dash"),
                        ),
                        1,
                        2,
                    ),
                    (
                        go.Scatter(
                            x=t,
                            y=_bin_min(c["min_x"][:, b], idx),
                            name="min_i x_t,i",
                            line=dict(color=PALETTE["green"]),
                        ),
                        1,
                        3,
                    ),
                ],
            )
        )
    frame_slider(fig, frames, [f"{d:g}" for d in deltas], prefix="δ = ", active=len(deltas) // 2, y=-0.16)
    fig.layout.sliders[0].font.size = 10  # twelve labels side by side
    style(fig, height=600)
    fig.update_layout(legend=dict(orientation="h", x=0, y=-0.5))
    fig.update_xaxes(range=[0, 1], title_text="x₁", row=1, col=1)
    fig.update_yaxes(range=[0, 1], title_text="y₁", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_yaxes(type="log", row=1, col=3)
    fig.update_xaxes(title_text="t", row=1, col=2)
    fig.update_xaxes(title_text="t", row=1, col=3)
    return fig


def rate_figure(results: OMWUResults) -> go.Figure:
    """Measured linear rate ``-d log E / dt`` against delta, one line per eta (log-log).

    Open markers: runs still in their transient (not settled, see the experiment's scaling fit). Dotted:
    the measured shape c·η²·δ; dashed: the earlier bound's game dependence η²ξc² in our reading
    (:mod:`explorables.omwu.prior`) with the largest constant that keeps it below every settled run (a bound
    can sit only below the rates it guarantees); the dotted line's constant fits the easiest games (δ ≥ 0.1).
    """
    c = results.curves["bottleneck"]
    s = results.summary["bottleneck"]
    # constant of the reference line c·η²·δ, fitted on the easiest games (δ >= 0.1)
    easy = c["deltas"] >= 0.1
    const = float(np.median((c["rate_grid"] / (c["etas"][:, None] ** 2 * c["deltas"][None, :]))[:, easy]))
    fig = go.Figure()
    for k, eta in enumerate(c["etas"]):
        fig.add_trace(
            go.Scatter(
                x=c["deltas"],
                y=c["rate_grid"][k],
                mode="lines+markers",
                name=f"η = {eta:g}",
                line=dict(color=color(k)),
                marker=dict(symbol=["circle" if v else "circle-open" for v in c["rate_settled_grid"][k]], size=8),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=c["deltas"],
                y=const * eta**2 * c["deltas"],
                mode="lines",
                line=dict(color=color(k), dash="dot", width=1),
                name=f"{const:.2f}·η²·δ",
                showlegend=k == 0,
                legendgroup="ref",
            )
        )
        if "prior_grid" in c:
            fig.add_trace(
                go.Scatter(
                    x=c["deltas"],
                    y=c["prior_grid"][k],
                    mode="lines",
                    line=dict(color=color(k), dash="dash", width=1),
                    name="earlier bound's shape η²ξc², ξ = δ/(1+δ), c = δ/2 (our reading)",
                    showlegend=k == 0,
                    legendgroup="prior",
                )
            )
    style(fig, height=420, top=50)
    fig.update_layout(
        xaxis=dict(type="log", title="δ"),
        yaxis=dict(type="log", title="rate  −d log E/dt"),
        title=f"fitted: rate ∝ δ^{s['rate_exponent_delta']:.2f} · η^{s['rate_exponent_eta']:.2f}",
    )
    return fig


def best_iterate_figure(results: OMWUResults) -> go.Figure:
    """Worst case over the family of the best iterate so far, against T (log-log)."""
    c = results.curves["best_iterate"]
    t = c["steps"][1:]
    idx = np.unique(np.geomspace(1, len(t), MAX_POINTS).astype(int) - 1)
    fig = go.Figure()
    for k, (key, name) in enumerate(
        (("worst_kl", "KL to Nash"), ("worst_tv", "TV to Nash"), ("worst_gap", "duality gap"))
    ):
        fig.add_trace(go.Scatter(x=t[idx], y=c[key][1:][idx], name=name, line=dict(color=color(k))))
    ref = c["worst_gap"][1:][idx][0] * (t[idx] / t[idx][0]) ** -0.5
    fig.add_trace(go.Scatter(x=t[idx], y=ref, name="∝ T^(-1/2)", line=REFERENCE_LINE))
    style(fig, height=360, top=30)
    fig.update_layout(
        xaxis=dict(type="log", title="T"),
        yaxis=dict(type="log", title="worst case over δ of min_{t≤T}"),
    )
    return fig


def mwu_figure(results: OMWUResults) -> go.Figure:
    """MWU spirals out (energy grows) while OMWU spirals in, on matching pennies."""
    c = results.curves["mwu_vs_omwu"]
    idx = _bins(len(c["steps"]))
    fig = make_subplots(rows=1, cols=2, subplot_titles=("trajectory (x₁, y₁)", "energy E_t"))
    for method, line_color in (("mwu", PALETTE["red"]), ("omwu", PALETTE["blue"])):
        fig.add_trace(
            go.Scatter(
                x=c[method]["x1"][idx],
                y=c[method]["y1"][idx],
                name=method.upper(),
                line=dict(color=line_color, width=1),
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=c["steps"][idx],
                y=c[method]["energy"][idx],
                name=method.upper(),
                line=dict(color=line_color),
                showlegend=False,
            ),
            row=1,
            col=2,
        )
    fig.update_xaxes(range=[0, 1], row=1, col=1)
    fig.update_yaxes(range=[0, 1], scaleanchor="x", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    return style(fig, height=360)


def all_figures(results: OMWUResults) -> dict[str, go.Figure]:
    """Every figure of the chapter by name (the command line saves these)."""
    return {
        "explorable": explorable_figure(results),
        "rates": rate_figure(results),
        "best_iterate": best_iterate_figure(results),
        "mwu_vs_omwu": mwu_figure(results),
    }
