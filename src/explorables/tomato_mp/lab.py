"""The live lab: ToMATo and ToMAToMP side by side on the reader's data, functions and outliers.

* Moving τ (ToMATo's merge threshold) only **redraws**: gudhi relabels without recomputing, and
  only the ToMATo scatter and the τ line are repainted (blitting).
* Changing k **reruns** ToMATo (milliseconds).
* Changing the data set, the functions, the outlier fraction or the MMA resolution reruns the
  MMA (about a second for the lab's 150 points); the status line says so while it runs, and
  results are cached, so going back to a setting is instant.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from sklearn.decomposition import PCA
from sklearn.metrics import adjusted_rand_score

from ..core.figures import PALETTE, SEQUENCE
from ..core.labs import canvas_png, interactions
from .data import DATASETS, corrupt, log_kde, make_dataset
from .experiment import BANDWIDTH
from .figures import NOISE_ALPHA
from .multiparam import tomato_mp
from .persistence import TomatoResult, tomato

FUNCTIONS = ("density (log-KDE)", "density + coarse density (2× bandwidth)")


def _colours(labels: np.ndarray) -> np.ndarray:
    from matplotlib.colors import to_rgba

    table = np.array([to_rgba(c) for c in SEQUENCE])
    out = table[np.asarray(labels) % len(SEQUENCE)]
    out[np.asarray(labels) < 0] = to_rgba(PALETTE["grey"], NOISE_ALPHA)
    return out


@lru_cache(maxsize=32)
def prepare(dataset: str, functions: str, fraction: float, n: int = 150, seed: int = 0):
    """Points (and a 2-D view of them), the function(s) with outliers in the first, the truth."""
    ds = make_dataset(dataset, n, seed)
    f = log_kde(ds.X, BANDWIDTH[dataset])
    g, idx = corrupt(f, fraction, seed=seed)
    F = [g] if functions == FUNCTIONS[0] else [g, log_kde(ds.X, 2 * BANDWIDTH[dataset])]  # no labels used
    view = ds.X if ds.X.shape[1] == 2 else PCA(2, random_state=seed).fit_transform(ds.X)
    return ds.X, view, np.stack(F), ds.labels, idx


@lru_cache(maxsize=64)
def compute_mp(dataset: str, functions: str, fraction: float, n_lines: int, robust: bool = True):
    """ToMAToMP on the lab's data (cached: the MMA is the slow part)."""
    X, _, F, _, _ = prepare(dataset, functions, fraction)
    return tomato_mp(X, F, robust=robust, n_lines=n_lines)


class TomatoMPLab:
    """The panel. ``TomatoMPLab().widget`` is what the notebook displays."""

    def __init__(self, dataset: str = "blobs", fraction: float = 0.05, k: int = 10, n_lines: int = 30):
        style = {"description_width": "120px"}
        lay = widgets.Layout(width="330px")
        self.dataset = widgets.Dropdown(options=DATASETS, value=dataset, description="data set", style=style,
                                        layout=lay)
        self.functions = widgets.Dropdown(options=FUNCTIONS, value=FUNCTIONS[0], description="functions",
                                          style=style, layout=lay)
        self.fraction = widgets.FloatSlider(value=fraction, min=0.0, max=0.2, step=0.01, description="outlier fraction",
                                            style=style, layout=lay, readout_format=".2f")
        self.n_lines = widgets.IntSlider(value=n_lines, min=10, max=60, step=5, description="MMA lines", style=style,
                                        layout=lay)
        self.k = widgets.IntSlider(value=k, min=3, max=40, step=1, description="ToMATo k", style=style, layout=lay)
        self.tau = widgets.FloatSlider(value=1.0, min=0.0, max=5.0, step=0.01, description="ToMATo τ", style=style,
                                       layout=lay, readout_format=".2f")
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="800px"))
        self.status = widgets.HTML()
        self.tomato_run: TomatoResult | None = None
        self._suspended = True
        self._build_figure()
        for w in (self.dataset, self.functions, self.fraction, self.n_lines):
            w.observe(self.rerun_mp, names="value")
        self.k.observe(self.rerun_tomato, names="value")
        self.tau.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.dataset, self.functions, self.fraction, self.n_lines, self.k, self.tau],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(330px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun_mp()

    def _build_figure(self) -> None:
        fig = Figure(figsize=(9.5, 7.0), dpi=72)
        FigureCanvasAgg(fig)
        axes = fig.subplots(2, 2)
        fig.subplots_adjust(hspace=0.3, wspace=0.22, left=0.07, right=0.98, top=0.94, bottom=0.07)
        self._fig, self._axes = fig, axes
        (a_tc, a_td), (a_mc, a_mp) = axes
        self._tomato_pts = a_tc.scatter([], [], s=14)
        self._tomato_out = a_tc.scatter([], [], s=40, marker="x", c="k", linewidths=1)
        self._diag_pts = a_td.scatter([], [], s=14, c=PALETTE["blue"])
        self._diag_ess = a_td.scatter([], [], s=40, marker="^", c=PALETTE["red"])
        (self._diag_line,) = a_td.plot([], [], "k-", lw=0.8)
        (self._tau_line,) = a_td.plot([], [], "--", color=PALETTE["orange"], lw=1.5)
        self._mp_pts = a_mc.scatter([], [], s=14)
        self._mp_out = a_mc.scatter([], [], s=40, marker="x", c="k", linewidths=1)
        a_td.set(xlabel="birth", ylabel="death")
        a_mp.set(xlabel="summand (sorted)", ylabel="prominence")
        for ax in axes.flat:
            ax.tick_params(labelsize=8)

    # ---------------------------------------------------------------- reruns

    def rerun_mp(self, _change=None) -> None:
        """Recompute ToMAToMP (cached) for the current data, functions, outliers and resolution."""
        self.status.value = "<small>computing the MMA decomposition…</small>"
        self.mp = compute_mp(self.dataset.value, self.functions.value, round(self.fraction.value, 2),
                             self.n_lines.value)
        self.rerun_tomato()

    def rerun_tomato(self, _change=None) -> None:
        """Refit ToMATo (gudhi) at k on the first function; reset τ to the largest gap; draw all."""
        X, view, F, truth, idx = prepare(self.dataset.value, self.functions.value, round(self.fraction.value, 2))
        self.data = (view, truth, idx)
        self.tomato_run = tomato(X, F[0], k=min(self.k.value, len(X) - 1))
        d = self.tomato_run.diagram
        top = float(d.prominence.max()) if len(d.pairs) else 1.0
        self._suspended = True  # moving τ's range must not trigger a redraw before the full draw
        with self.tau.hold_trait_notifications():
            self.tau.max = round(top * 1.05 + 0.01, 2)
            self.tau.step = max(round(self.tau.max / 200, 3), 0.001)
            self.tau.value = min(self.tomato_run.threshold, self.tau.max)
        self._suspended = False
        self._full_draw()

    def _full_draw(self) -> None:
        view, truth, idx = self.data
        (a_tc, a_td), (a_mc, a_mp) = self._axes
        d = self.tomato_run.diagram
        lo = float(min(d.pairs[:, 1].min() if len(d.pairs) else d.essential.min(), d.essential.min()))
        hi = float(d.essential.max())
        pad = 0.05 * (hi - lo + 1e-9)
        self._tomato_pts.set_offsets(view)
        self._tomato_out.set_offsets(view[idx] if len(idx) else np.zeros((0, 2)))
        self._mp_pts.set_offsets(view)
        self._mp_out.set_offsets(view[idx] if len(idx) else np.zeros((0, 2)))
        self._mp_pts.set_facecolors(_colours(self.mp.labels))
        self._diag_pts.set_offsets(d.pairs if len(d.pairs) else np.zeros((0, 2)))
        self._diag_ess.set_offsets(np.column_stack([d.essential, np.full(len(d.essential), hi + pad)]))
        self._diag_line.set_data([lo, hi], [lo, hi])
        for ax in (a_tc, a_mc):
            ax.set_xlim(view[:, 0].min() - 0.3, view[:, 0].max() + 0.3)
            ax.set_ylim(view[:, 1].min() - 0.3, view[:, 1].max() + 0.3)
        a_td.set_xlim(lo - pad, hi + 2 * pad)
        a_td.set_ylim(lo - pad, hi + 2 * pad)
        a_mp.clear()
        p = self.mp.prominences[:15]
        kept, merged = PALETTE["dark_blue"], PALETTE["light_blue"]
        a_mp.bar(np.arange(1, len(p) + 1), p, color=[kept if i < self.mp.n_clusters else merged for i in range(len(p))])
        a_mp.set(xlabel="summand (sorted)", ylabel="prominence (cube side)", ylim=(0, 1.05))
        a_mp.set_title(f"MMA summands of {', '.join(self.mp.filtration.parameters)}", fontsize=10)
        mp_ari = adjusted_rand_score(truth, self.mp.labels)
        a_mc.set_title(f"ToMAToMP: K={self.mp.n_clusters} ({self.mp.n_labels} labels), ARI {mp_ari:.2f}", fontsize=10)
        a_td.set_title("ToMATo's diagram and τ (dashed)", fontsize=10)
        # background without the artists that τ moves, then blit them
        self._tomato_pts.set_visible(False)
        self._tau_line.set_visible(False)
        a_tc.set_title(f"ToMATo (k-NN graph, k={self.k.value}); τ below", fontsize=10)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        self._tomato_pts.set_visible(True)
        self._tau_line.set_visible(True)
        self.redraw()

    # ---------------------------------------------------------------- redraw

    def redraw(self, _change=None) -> None:
        """Relabel ToMATo at the current τ and repaint only what τ moves."""
        if self._suspended:
            return
        _, truth, _ = self.data
        tau = self.tau.value
        labels = self.tomato_run.labels_at(tau)
        d = self.tomato_run.diagram
        lo, hi = self._axes[0, 1].get_xlim()
        self._tomato_pts.set_facecolors(_colours(labels))
        self._tau_line.set_data([lo + tau, hi], [lo, hi - tau])
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        for artist in (self._tomato_pts, self._tau_line):
            artist.axes.draw_artist(artist)
        self.image.value = canvas_png(canvas)
        k = int(labels.max() + 1)
        self.status.value = (
            f"<small>ToMATo (k={self.k.value}, τ={tau:.2f}): K={k}, ARI {adjusted_rand_score(truth, labels):.2f} · "
            f"ToMAToMP: K={self.mp.n_clusters} ({self.mp.n_labels} labels), "
            f"ARI {adjusted_rand_score(truth, self.mp.labels):.2f} · "
            f"{len(d.pairs) + len(d.essential)} peaks in ToMATo's diagram</small>"
        )


def benchmark_interactions(lab: TomatoMPLab | None = None) -> dict[str, list]:
    """Callables that mimic a reader, for ``benchmarks/run.py``: τ moves redraw (150 ms budget);
    k moves rerun ToMATo, and the outlier fraction / MMA lines rerun the MMA (1 s budget)."""
    lab = lab or TomatoMPLab()
    top = lab.tau.max
    return interactions(
        redraw=[(lab.tau, [round(top * q, 2) for q in (0.1, 0.3, 0.5, 0.7, 0.9) * 3])],
        rerun=[(lab.k, (5, 15, 25, 10)), (lab.fraction, (0.0, 0.1)), (lab.n_lines, (20,)), (lab.dataset, ("moons",))],
    )
