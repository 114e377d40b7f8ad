"""The live lab: collisions of a random head, the 3-token picture, and the RRT accuracies.

* ``n``, ``d_head``, ``β`` and ``seed`` re-run the collision LP on a random head (``V`` Gaussian,
  ``alpha = softmax(beta z)``): a few linear programs, well under a second.
* The output slider moves the 3-token preimage segment and the hop toggle switches the accuracy
  bars (precomputed by the chapter's run): both only redraw (blitting).
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Polygon

from ..core.figures import PALETTE
from ..core.labs import canvas_png, interactions
from .collisions import dominant_pieces, fibre_dimension, find_collision, segment_in_triangle
from .figures import CONTROL_COLORS, CORNERS, KIND_COLORS, TOKEN_COLORS, TRIANGLE_VALUES

KINDS = ("standard", "route_aware", "oracle")
KIND_LABELS = ("standard", "RA-FFN", "oracle", "d_head=n")  # the last: the no-collision control


def random_head(n: int, d_head: int, beta: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A Gaussian ``d_head x n`` value matrix and ``alpha = softmax(beta z)`` with Gaussian ``z``."""
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((d_head, n))
    z = rng.standard_normal(n)
    alpha = np.exp(beta * (z - z.max()))
    return V, alpha / alpha.sum()


class RoutingLab:
    """The panel; ``RoutingLab(results).widget`` is what the notebook displays."""

    def __init__(self, results=None):
        style, lay = {"description_width": "110px"}, widgets.Layout(width="320px")
        self.accuracy = None
        if results is not None:
            s = results.summary
            self.accuracy = {
                hop: [s[hop]["accuracy"][k] for k in KINDS]
                + [s[hop].get("controls", {}).get("no_collision", {}).get("accuracy", 0.0)]
                for hop in ("single", "multi")
            }
        self.n = widgets.IntSlider(value=16, min=3, max=32, description="tokens n", style=style, layout=lay)
        self.d_head = widgets.IntSlider(value=4, min=1, max=32, description="d_head", style=style, layout=lay)
        self.beta = widgets.FloatLogSlider(
            value=2.0, base=10, min=-1, max=1.2, step=0.05, description="sharpness β", style=style, layout=lay
        )
        self.seed = widgets.IntSlider(value=0, min=0, max=50, description="random head", style=style, layout=lay)
        lo, hi = min(TRIANGLE_VALUES), max(TRIANGLE_VALUES)
        self.output = widgets.FloatSlider(
            value=0.5, min=lo + 0.01, max=hi - 0.01, step=0.01, description="3-token output", style=style, layout=lay
        )
        self.hops = widgets.ToggleButtons(options=[("single hop", "single"), ("two hops", "multi")], value="single")
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="900px"))
        fig = Figure(figsize=(11.5, 3.6), dpi=80)
        FigureCanvasAgg(fig)
        self._fig = fig
        self._ax_alpha, self._ax_tri, self._ax_acc = fig.subplots(1, 3, gridspec_kw=dict(width_ratios=[1.6, 1, 1]))
        fig.subplots_adjust(left=0.05, right=0.98, bottom=0.15, top=0.88, wspace=0.25)
        self._draw_triangle_and_bars()
        for w in (self.n, self.d_head, self.beta, self.seed):
            w.observe(self.rerun, names="value")
        self.output.observe(self.redraw, names="value")
        self.hops.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.n, self.d_head, self.beta, self.seed, self.output, self.hops],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(330px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def _draw_triangle_and_bars(self) -> None:
        ax = self._ax_tri
        centre = np.full(3, 1 / 3)
        eye = np.eye(3)
        for i in range(3):
            j, k = [t for t in range(3) if t != i]
            poly = np.array([eye[i], (eye[i] + eye[j]) / 2, centre, (eye[i] + eye[k]) / 2]) @ CORNERS
            ax.add_patch(Polygon(poly, closed=True, color=TOKEN_COLORS[i], alpha=0.15, lw=0))
            where = CORNERS[i] + [(-0.05, -0.07), (0.05, -0.07), (0, 0.04)][i]
            ax.text(*where, f"{i + 1} (v={TRIANGLE_VALUES[i]:g})", ha="center", fontsize=8)
        ax.plot(*np.r_[CORNERS, CORNERS[:1]].T, color="black", lw=0.8)
        ax.set(xlim=(-0.15, 1.15), ylim=(-0.12, 0.95), aspect="equal", title="3 tokens: α with the same output")
        ax.axis("off")
        self._segments = [ax.plot([], [], lw=5, color="k", animated=True)[0] for _ in range(3)]
        axb = self._ax_acc
        colors = [KIND_COLORS[k] for k in KINDS] + [CONTROL_COLORS["no_collision"]]
        self._bars = axb.bar(KIND_LABELS, [0] * len(KIND_LABELS), color=colors, animated=True)
        axb.set(ylim=(0, 1.05), title="RRT accuracy (chapter's run)")
        axb.tick_params(labelsize=8)
        if self.accuracy is None:
            axb.text(1, 0.5, "pass the chapter's results\nto see the accuracies", ha="center", fontsize=8)

    def rerun(self, _change=None) -> None:
        """A new random head: its collision set and the LP's colliding weighting; then redraw."""
        n = self.n.value
        d = min(self.d_head.value, 64)
        V, alpha = random_head(n, d, self.beta.value, self.seed.value)
        self.fibre = fibre_dimension(V)
        self.collision = find_collision(V, alpha) if self.fibre > 0 else None
        self.alpha = alpha
        ax = self._ax_alpha
        ax.clear()
        pos = np.arange(1, n + 1)
        ax.bar(pos - 0.2, alpha, width=0.4, label=f"α (dominant {int(alpha.argmax()) + 1})", color=PALETTE["blue"])
        if self.collision is not None:
            c = self.collision
            ax.bar(pos + 0.2, c.alpha_prime, width=0.4, label=f"α′ (dominant {c.source + 1})", color=PALETTE["orange"])
            ax.set_title(f"same output V α′ = V α, residual {c.residual:.0e}", fontsize=10)
        else:
            ax.set_title("no weighting with the same output has another dominant token", fontsize=10)
        ax.set(xlabel="source token", ylim=(0, 1))
        ax.legend(fontsize=8, loc="upper right")
        ax.tick_params(labelsize=8)
        for artist in (*self._segments, *self._bars):
            artist.set_visible(False)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        for artist in (*self._segments, *self._bars):
            artist.set_visible(True)
        self.redraw()

    def redraw(self, _change=None) -> None:
        """Move the 3-token segment and switch the accuracy bars (blitted onto the static background)."""
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        seg = segment_in_triangle(TRIANGLE_VALUES, self.output.value)
        pieces = dominant_pieces(seg) if seg is not None else []
        for k, line in enumerate(self._segments):
            if k < len(pieces):
                token, start, end = pieces[k]
                xy = np.vstack([start, end]) @ CORNERS
                line.set_data(xy[:, 0], xy[:, 1])
                line.set_color(TOKEN_COLORS[token])
            else:
                line.set_data([], [])
            self._ax_tri.draw_artist(line)
        heights = self.accuracy[self.hops.value] if self.accuracy is not None else [0] * len(KIND_LABELS)
        for bar, h in zip(self._bars, heights, strict=True):
            bar.set_height(h)
            self._ax_acc.draw_artist(bar)
        self.image.value = canvas_png(canvas)
        rank = min(self.d_head.value, self.n.value)
        found = (
            f"the LP moved the dominant source from {self.collision.original_source + 1} to "
            f"{self.collision.source + 1} (margin {self.collision.margin:.3f})"
            if self.collision is not None
            else "no harmful collision for this α"
        )
        winners = sorted({t + 1 for t, _, _ in pieces})
        acc = ", ".join(f"{lab} {h:.2f}" for lab, h in zip(KIND_LABELS, heights, strict=True))
        self.status.value = (
            f"<small>rank V = {rank} vs n − 2 = {self.n.value - 2}: collision set of dimension {self.fibre}; "
            f"{found}. 3-token output {self.output.value:.2f}: dominant token(s) {winners}. "
            f"RRT ({self.hops.value}): {acc}</small>"
        )


def benchmark_interactions(lab: RoutingLab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py``: output and hops redraw; the head's settings rerun the LP."""
    if lab is None:
        from .experiment import RoutingConfig, run

        lab = RoutingLab(run(RoutingConfig.preset("smoke", n_steps=5, n_collision_trials=1)))
    return interactions(
        redraw=[(lab.output, (0.2, 0.35, 0.5, 0.65, 0.8) * 2), (lab.hops, ("multi", "single"))],
        rerun=[(lab.beta, (1.0, 4.0, 2.0)), (lab.d_head, (2, 8, 14, 4)), (lab.n, (24, 16)), (lab.seed, (1, 2))],
    )
