"""The live lab: step sizes, spike curvature, momentum and switch step on the river-valley model.

Every control re-runs GD, Muon and the two-stage schedule on a 10×10 sensing problem (a fraction
of a second); the "show up to t" slider only redraws.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import PALETTE
from ..core.labs import canvas_png, interactions
from .figures import COLORS
from .optimizers import muon_and_switch, optimize
from .sensing import make_problem

#: steps of every lab run (the book's valley runs 3,000): 1,000 keeps a rerun near half a second of CPU
LAB_STEPS = 1_000


class MuonLab:
    """The panel; ``MuonLab().widget`` is what the notebook displays."""

    def __init__(self, steps: int = LAB_STEPS, size: int = 10):
        style, lay = {"description_width": "170px"}, widgets.Layout(width="380px")
        self.steps, self.size = steps, size
        self.muon_lr = widgets.FloatLogSlider(
            value=0.02, base=10, min=-3, max=-0.5, step=0.05, description="Muon step size", style=style, layout=lay
        )
        self.gd_fraction = widgets.FloatSlider(
            value=0.95, min=0.1, max=1.05, step=0.05, description="GD step × 2/λ_spike", style=style, layout=lay
        )
        self.lam_spike = widgets.FloatLogSlider(
            value=100, base=10, min=0, max=3, step=0.1, description="spike curvature", style=style, layout=lay
        )
        self.momentum = widgets.FloatSlider(
            value=0.0, min=0.0, max=0.95, step=0.05, description="Muon momentum", style=style, layout=lay
        )
        self.switch = widgets.IntSlider(
            value=200, min=0, max=steps, step=25, description="switch step", style=style, layout=lay
        )
        self.window = widgets.IntSlider(
            value=steps, min=1, max=steps, description="show up to t", style=style, layout=lay
        )
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        fig = Figure(figsize=(9.5, 3.8), dpi=80)
        FigureCanvasAgg(fig)
        self._fig, (self._ax_path, self._ax_loss) = fig, fig.subplots(1, 2)
        fig.subplots_adjust(left=0.08, right=0.98, bottom=0.15, top=0.9, wspace=0.25)
        for w in (self.muon_lr, self.gd_fraction, self.lam_spike, self.momentum, self.switch):
            w.observe(self.rerun, names="value")
        self.window.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.muon_lr, self.gd_fraction, self.lam_spike, self.momentum, self.switch, self.window],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(340px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def rerun(self, _change=None) -> None:
        """Re-run the three optimisers, fix the axes to the whole run, redraw."""
        lam = self.lam_spike.value
        problem = make_problem(m=self.size, n=self.size, lam_spike=lam)
        gd_lr = self.gd_fraction.value * 2 / lam
        common = dict(steps=self.steps, muon_lr=self.muon_lr.value, gd_lr=gd_lr)
        # Muon and the switch share Muon's run up to the switch step: computed once (the same numbers, tested)
        muon, switch = muon_and_switch(problem, switch_step=self.switch.value, momentum=self.momentum.value, **common)
        self.runs = {"GD": optimize(problem, "gd", **common), "Muon": muon, "Muon → GD": switch}
        self._draw_static()
        self.redraw()

    def _draw_static(self) -> None:
        """Axes, labels and limits for the whole run; the curves are blitted on top by :meth:`redraw`."""
        ax_path, ax_loss = self._ax_path, self._ax_loss
        ax_path.clear()
        ax_loss.clear()
        self._lines = {}
        for name, run in self.runs.items():
            (path,) = ax_path.plot(run.river, run.spike, color=COLORS[name], lw=0.8, label=name)
            (loss,) = ax_loss.semilogy(np.maximum(run.loss, 1e-12), color=COLORS[name], label=name)
            self._lines[name] = (path, loss)
        ax_path.set(xlabel="distance along the river", ylabel="spike coordinate", title="path")
        ax_loss.set(xlabel="step", title="loss")
        ax_loss.axvline(self.switch.value, color=PALETTE["grey"], ls=":", lw=1)
        ax_loss.legend(fontsize=8)
        for ax in (ax_path, ax_loss):
            ax.tick_params(labelsize=8)
        for pair in self._lines.values():
            for line in pair:
                line.set_visible(False)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        for pair in self._lines.values():
            for line in pair:
                line.set_visible(True)

    def redraw(self, _change=None) -> None:
        """Draw the paths and losses up to the "show up to t" slider (blitting: no full redraw)."""
        t = self.window.value
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        steps = np.arange(t + 1)
        for name, (path, loss) in self._lines.items():
            run = self.runs[name]
            path.set_data(run.river[: t + 1], run.spike[: t + 1])
            loss.set_data(steps, np.maximum(run.loss[: t + 1], 1e-12))
            path.axes.draw_artist(path)
            loss.axes.draw_artist(loss)
        self.image.value = canvas_png(canvas)
        final = ", ".join(f"{k}: {r.loss[t]:.1e}" for k, r in self.runs.items())
        stable = "stable" if self.gd_fraction.value < 1 else "<b>unstable</b> (above 2/λ_spike)"
        self.status.value = f"<small>loss at t = {t}: {final}; GD step {stable}</small>"


def benchmark_interactions(lab: MuonLab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py``: the time slider redraws, every other control reruns."""
    lab = lab or MuonLab()
    return interactions(
        redraw=[(lab.window, (100, 300, 500, 800, lab.steps) * 3)],
        rerun=[(lab.muon_lr, (0.01, 0.05, 0.02)), (lab.lam_spike, (30, 300, 100)), (lab.momentum, (0.9, 0.0)),
               (lab.switch, (100, 400))],
    )  # fmt: skip
