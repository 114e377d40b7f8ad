"""The live lab: pick a model class, a noise level and a Rashomon level; see which simplifications fit.

Changing the model class, the noise or the seed refits the model (a fraction of a second);
moving the level ``theta`` or switching absolute/relative only redraws, since the costs do not
depend on the level.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import PALETTE
from ..core.labs import canvas_png, interactions
from . import data as D
from .experiment import KINDS, RashomonConfig, _problem
from .models import drop_feature, fit, reducibility_cost

REACHABLE, UNREACHABLE = PALETTE["green"], PALETTE["grey"]

LABELS = {
    "linear": "linear regression",
    "logistic": "logistic regression",
    "gam": "regression GAM",
    "gam_logistic": "logistic GAM",
}


class RashomonLab:
    """The panel; ``RashomonLab().widget`` is what the notebook displays."""

    def __init__(self, kind: str = "logistic", noise: float = 0.2, n: int = 2_000):
        style, lay = {"description_width": "120px"}, widgets.Layout(width="340px")
        self.config = RashomonConfig.preset("book", n_samples=n)
        self.dataset = widgets.Dropdown(
            options=["synthetic", *D.REAL_DATASETS], value="synthetic", description="data", style=style, layout=lay
        )
        self.kind = widgets.Dropdown(
            options=[(LABELS[k], k) for k in KINDS], value=kind, description="model", style=style, layout=lay
        )
        self.noise = widgets.FloatSlider(
            value=noise, min=0.0, max=0.45, step=0.01, description="noise", style=style, layout=lay
        )
        self.theta = widgets.FloatLogSlider(
            value=0.01, base=10, min=-4, max=-0.5, step=0.1, description="level θ or ε", style=style, layout=lay
        )
        self.relative = widgets.ToggleButtons(
            options=[("absolute θ", False), ("relative ε·L̂", True)], value=False, description="level", style=style
        )
        self.seed = widgets.IntSlider(value=0, min=0, max=9, description="seed", style=style, layout=lay)
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        self._fig = Figure(figsize=(9.5, 4.2), dpi=80)
        FigureCanvasAgg(self._fig)
        self._axes = self._fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.3, 1]})
        self._fig.subplots_adjust(left=0.27, right=0.98, wspace=0.3, bottom=0.14, top=0.9)
        for w in (self.dataset, self.kind, self.noise, self.seed):
            w.observe(self.rerun, names="value")
        for w in (self.theta, self.relative):
            w.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.dataset, self.kind, self.noise, self.theta, self.seed, self.relative],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(340px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def rerun(self, _change=None) -> None:
        """Refit at the current data, model class, noise level and seed, then redraw."""
        real = self.dataset.value != "synthetic"
        if real:  # a real data set fixes the model class: its own target
            X, y, self.feature_names, loss = D.real_data(self.dataset.value)
            with self.kind.hold_trait_notifications():
                self.kind.value = "linear" if loss == "squared" else "logistic"
        self.kind.disabled = real
        kind = self.kind.value
        regression = kind in ("linear", "gam")
        self.noise.description = "added noise σ" if regression else "label flips ρ"
        self.noise.max = 3.0 if regression else 0.45
        level = max(self.noise.value, 0.01) if regression else min(self.noise.value, 0.45)
        if real:
            rng = np.random.default_rng(self.seed.value)
            noisy = y + level * rng.standard_normal(len(y)) if loss == "squared" else D.flip_labels(y, level, rng)
            design, y, ridge, basis = X, noisy, (1e-3 if loss == "logistic" else 0.0), None
            simplifications = {f"drop {name}": drop_feature(X.shape[1], j) for j, name in enumerate(self.feature_names)}
        else:
            self.feature_names = None
            rng = np.random.default_rng([self.config.seed, self.seed.value])
            design, y, loss, ridge, simplifications, basis = _problem(kind, level, rng, self.config)
        self.fitted = fit(design, y, loss, ridge)
        self.costs = {name: reducibility_cost(self.fitted, C) for name, C in simplifications.items()}
        self.basis = basis
        self._draw_static()
        self.redraw()

    def level(self) -> float:
        return self.theta.value * (self.fitted.loss_value if self.relative.value else 1.0)

    def _draw_static(self) -> None:
        """Everything that depends on the fit only; the level's line and bar colours are blitted on top."""
        ax_cost, ax_model = self._axes
        ax_cost.clear()
        ax_model.clear()
        names = list(self.costs)
        costs = np.maximum(np.array([self.costs[n] for n in names]), 1e-7)
        self._bars = ax_cost.barh(names, costs, color=UNREACHABLE)
        self._line = ax_cost.axvline(self.level(), color="black", ls="--", lw=1)
        ax_cost.set(xscale="log", xlim=(1e-6, 10), title="reducibility cost (green: reachable)")
        ax_cost.invert_yaxis()
        ax_cost.tick_params(labelsize=8)
        if self.feature_names is not None:
            x = np.arange(len(self.fitted.w))
            ax_model.bar(x, self.fitted.w, color=PALETTE["blue"], label="fitted ŵ (standardised features)")
            ax_model.set(title="weights", xticks=x[:: max(1, len(x) // 10)])
        elif self.basis is None:
            w_star = np.asarray(self.config.w_star)
            x = np.arange(len(w_star))
            ax_model.bar(x, self.fitted.w, color=PALETTE["blue"], label="fitted ŵ")
            ax_model.plot(x, w_star, "k_", ms=20, mew=2, label="true w*")
            ax_model.set(xticks=x, xticklabels=[f"w{i + 1}" for i in x], title="weights")
        else:
            grid = np.linspace(-1, 1, 101)
            for j, name in enumerate(D.SHAPES):
                shape = self.basis.shape(self.fitted.w, j, grid)
                (line,) = ax_model.plot(grid, shape, label=f"f{j + 1} (true {name})")
                slope, intercept = np.polyfit(grid, shape, 1)  # its best linear fit
                ax_model.plot(grid, slope * grid + intercept, ls=":", color=line.get_color())
            ax_model.set(title="fitted shapes (dotted: best line)", xlabel="x")
        ax_model.legend(fontsize=7)
        ax_model.tick_params(labelsize=8)
        dynamic = [*self._bars, self._line]
        for artist in dynamic:
            artist.set_visible(False)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        for artist in dynamic:
            artist.set_visible(True)

    def redraw(self, _change=None) -> None:
        """Recolour the bars and move the level's line (blitting: no full redraw)."""
        level = self.level()
        costs = np.array(list(self.costs.values()))
        reachable = costs <= level
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        for bar, ok in zip(self._bars, reachable, strict=True):
            bar.set_color(REACHABLE if ok else UNREACHABLE)
            bar.axes.draw_artist(bar)
        self._line.set_xdata([level, level])
        self._line.axes.draw_artist(self._line)
        self.image.value = canvas_png(canvas)
        self.status.value = (
            f"<small>L̂ = {self.fitted.loss_value:.4f}; level = {level:.3g}; "
            f"{int(reachable.sum())} of {len(costs)} simplifications reachable</small>"
        )


def benchmark_interactions(lab: RashomonLab | None = None) -> dict[str, list]:
    """The reader's interactions that ``benchmarks/run.py`` times: the level and its convention only
    redraw; the noise, the model class, the seed and the data set refit."""
    lab = lab or RashomonLab()
    return interactions(
        redraw=[(lab.theta, (0.001, 0.003, 0.03, 0.1, 0.01) * 3), (lab.relative, (True, False))],
        rerun=[
            (lab.noise, (0.05, 0.3, 0.1)),
            (lab.kind, (*KINDS[1:], KINDS[0])),
            (lab.seed, (3,)),
            (lab.dataset, (*D.REAL_DATASETS, "synthetic")),
        ],
    )
