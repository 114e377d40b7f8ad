"""The live lab: target marginal, guidance scale, statistic and method on the 2-D toy.

The lab reuses a trained noise predictor and time-dependent classifier (from the chapter's run, or
small ones trained once when it is built on its own) and only re-samples on every change, so a
rerun takes a fraction of a second. The "show" control only redraws.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import PALETTE
from ..core.labs import canvas_png, interactions
from ..core.threads import one_cpu_thread
from . import diffusion as D
from . import toy as Y
from .experiment import (
    JeffreyConfig,
    JeffreyResults,
    classifier_potential,
    jeffrey_potential,
    toy_classifier,
    toy_denoiser,
    train_toy_classifier,
    train_toy_denoiser,
)
from .metrics import cell_frequencies
from .rule import jeffrey_weights, tv_distance

STATISTICS = {"signs of x₁ and x₂ (4 cells)": "ab", "sign of x₁ only (2 cells)": "a", "sign of x₂ only (2 cells)": "b"}
METHODS = ("Jeffrey guidance", "classifier guidance (y ~ q)")
SHOW = ("guided samples", "exact Jeffrey target", "unguided samples")
COLORS = (PALETTE["blue"], PALETTE["orange"], PALETTE["green"], PALETTE["purple"])


def _train_small(cfg: JeffreyConfig) -> tuple[dict, dict]:
    """A small toy model and classifier, for a lab built without a chapter run (a few seconds)."""
    device = torch.device("cpu")
    gen = torch.Generator().manual_seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    schedule = D.NoiseSchedule.cosine(cfg.n_diffusion_steps)
    data = Y.sample_toy(cfg.n_toy_train, gen)
    with one_cpu_thread(device):
        den, _ = train_toy_denoiser(cfg, data, schedule, gen, device)
        clf = train_toy_classifier(cfg, data, schedule, gen, device)
    return den.state_dict(), clf.state_dict()


class JeffreyLab:
    """The panel; ``JeffreyLab(results).widget`` is what the notebook displays."""

    def __init__(self, results: JeffreyResults | None = None, n_samples: int = 500, seed: int = 0):
        if results is not None:
            cfg = results.config
            den_state, clf_state = results.curves["toy_model"]["denoiser"], results.curves["toy"]["classifier_state"]
        else:
            # the book's network sizes and T (so the latency is the page's), trained briefly
            book = JeffreyConfig.preset("book")
            cfg = JeffreyConfig.preset(
                "smoke",
                n_diffusion_steps=book.n_diffusion_steps,
                toy_d_hidden=book.toy_d_hidden,
                n_toy_denoiser_steps=500,
                n_toy_classifier_steps=200,
            )
            den_state, clf_state = _train_small(cfg)
        self.device = torch.device("cpu")
        self.denoiser = toy_denoiser(cfg, den_state, self.device)
        self.classifier = toy_classifier(cfg, clf_state, self.device)
        self.schedule = D.NoiseSchedule.cosine(cfg.n_diffusion_steps)
        self.n_samples, self.seed = n_samples, seed
        self.p_model = Y.cell_marginal()  # the toy's cell marginal (the model matches it closely)
        style, lay = {"description_width": "150px"}, widgets.Layout(width="360px")
        self.method = widgets.ToggleButtons(options=METHODS, value=METHODS[0], style={"button_width": "190px"})
        self.statistic = widgets.Dropdown(
            options=list(STATISTICS), description="statistic s(x)", style=style, layout=lay
        )
        self.p_a = widgets.FloatSlider(
            value=0.5, min=0.05, max=0.95, step=0.05, description="target P(x₁ > 0)", style=style, layout=lay
        )
        self.p_b = widgets.FloatSlider(
            value=0.5, min=0.05, max=0.95, step=0.05, description="target P(x₂ > 0)", style=style, layout=lay
        )
        self.coupling = widgets.FloatSlider(
            value=0.0, min=-1, max=1, step=0.25, description="target coupling", style=style, layout=lay
        )
        self.scale = widgets.FloatLogSlider(
            value=1.0, base=10, min=-1, max=1, step=0.05, description="guidance scale γ", style=style, layout=lay
        )
        self.show = widgets.Dropdown(options=SHOW, description="show", style=style, layout=lay)
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        fig = Figure(figsize=(9.0, 3.6), dpi=72)
        FigureCanvasAgg(fig)
        self._fig, (self._ax_pts, self._ax_bar) = fig, fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1]})
        fig.subplots_adjust(left=0.06, right=0.98, bottom=0.22, top=0.9, wspace=0.2)
        for w in (self.method, self.statistic, self.p_a, self.p_b, self.coupling, self.scale):
            w.observe(self.rerun, names="value")
        self.show.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.statistic, self.scale, self.p_a, self.p_b, self.coupling, self.show],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(360px, 1fr))"),
        )
        self.widget = widgets.VBox([self.method, controls, self.status, self.image])
        self.rerun()

    def target(self) -> tuple[np.ndarray, np.ndarray]:
        """The target over the four cells, and the group of each cell under the chosen statistic."""
        kind = STATISTICS[self.statistic.value]
        if kind == "ab":
            q = Y.joint_target(self.p_a.value, self.p_b.value, self.coupling.value)
            return q, np.arange(4)
        # one attribute: Jeffrey keeps p(x | a), so the other attribute moves only through it
        groups = np.array([0, 0, 1, 1]) if kind == "a" else np.array([0, 1, 0, 1])
        p_one = self.p_a.value if kind == "a" else self.p_b.value
        q_group = np.array([1 - p_one, p_one])
        p_group = np.bincount(groups, weights=self.p_model, minlength=2)
        return self.p_model * q_group[groups] / p_group[groups], groups

    def rerun(self, _change=None) -> None:
        """Re-sample the guided model (the networks are not retrained) and redraw."""
        q_cells, groups = self.target()
        n_groups = int(groups.max()) + 1
        q_group = np.bincount(groups, weights=q_cells, minlength=n_groups)
        p_group = np.bincount(groups, weights=self.p_model, minlength=n_groups)
        gen = torch.Generator().manual_seed(self.seed)
        group_t = torch.as_tensor(groups)
        with np.errstate(divide="ignore"):
            log_w = torch.as_tensor(np.log(jeffrey_weights(q_group, p_group)), dtype=torch.float32)

        class Grouped(torch.nn.Module):  # the classifier of the coarser statistic
            def __init__(self, inner: torch.nn.Module):
                super().__init__()
                self.inner = inner

            def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
                return D.group_logits(self.inner(x, t), group_t, n_groups)

        clf = Grouped(self.classifier)
        if self.method.value == METHODS[0]:
            potential = jeffrey_potential(clf, log_w)
        else:
            labels = torch.multinomial(torch.as_tensor(q_group), self.n_samples, replacement=True, generator=gen)
            potential = classifier_potential(clf, labels)
        with one_cpu_thread(self.device):
            self.samples = D.sample(
                self.denoiser,
                self.schedule,
                self.n_samples,
                (2,),
                generator=gen,
                potential=potential,
                scale=self.scale.value,
            ).numpy()
            if not hasattr(self, "unguided"):
                self.unguided = D.sample(self.denoiser, self.schedule, self.n_samples, (2,), generator=gen).numpy()
        self.exact = Y.sample_jeffrey_target(
            self.n_samples, q_cells, torch.Generator().manual_seed(self.seed + 1)
        ).numpy()
        self.q_cells = q_cells
        self._draw_static()
        self.redraw()

    def _build_figure(self) -> None:
        """Axes, guide lines, legend and the bar artists, drawn once; bars and points are blitted on top."""
        ax, bx = self._ax_pts, self._ax_bar
        ax.axhline(0, color="grey", lw=0.5)
        ax.axvline(0, color="grey", lw=0.5)
        ax.set(xlim=(-3.2, 3.2), ylim=(-3.2, 3.2), aspect="equal")
        xs = np.arange(4)
        self._bars = [
            bx.bar(xs + dx, np.zeros(4), 0.27, color=color, label=label, animated=True)
            for dx, color, label in (
                (-0.27, PALETTE["grey"], "model p"),
                (0.0, PALETTE["dark_blue"], "guided"),
                (0.27, PALETTE["red"], "target q"),
            )
        ]
        bx.set_xticks(xs, ["−,−", "−,+", "+,−", "+,+"])
        bx.set(ylim=(0, 1), title="cell marginal (signs of x₁, x₂)")
        bx.legend(fontsize=8, loc="upper center", ncol=3)
        for a in (ax, bx):
            a.tick_params(labelsize=8)
        self._points = ax.scatter([], [], s=3, alpha=0.6, linewidths=0, animated=True)
        self._title = ax.set_title("", animated=True)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)

    def _draw_static(self) -> None:
        """Set the bars (they change only on a rerun) and the status line; :meth:`redraw` blits them."""
        if not hasattr(self, "_background"):
            self._build_figure()
        self.achieved = cell_frequencies(Y.toy_cells(torch.as_tensor(self.samples)), 4)
        for bars, heights in zip(self._bars, (self.p_model, self.achieved, self.q_cells), strict=True):
            for rect, height in zip(bars, heights, strict=True):
                rect.set_height(float(height))
        self.status.value = (
            f"<small>TV(guided, target) = {tv_distance(self.achieved, self.q_cells):.3f}; "
            f"TV(model, target) = {tv_distance(self.p_model, self.q_cells):.3f}</small>"
        )

    def redraw(self, _change=None) -> None:
        """Blit the bars and the chosen point set (guided, exact Jeffrey target or unguided) onto the static picture."""
        pts = {SHOW[0]: self.samples, SHOW[1]: self.exact, SHOW[2]: self.unguided}[self.show.value]
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        cells = Y.toy_cells(torch.as_tensor(pts)).numpy()
        self._points.set_offsets(pts)
        self._points.set_facecolor(np.asarray(COLORS)[cells])
        self._title.set_text(self.show.value)
        for bars in self._bars:
            for rect in bars:
                self._ax_bar.draw_artist(rect)
        self._ax_pts.draw_artist(self._points)
        self._ax_pts.draw_artist(self._title)
        self.image.value = canvas_png(canvas)


def benchmark_interactions(lab: JeffreyLab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py`` (built with :func:`explorables.core.labs.interactions`)."""
    lab = lab or JeffreyLab()
    return interactions(
        redraw=[(lab.show, [SHOW[1], SHOW[2], SHOW[0]] * 2)],
        rerun=[
            (lab.scale, [2.0, 0.5, 1.0]),
            (lab.p_a, [0.3, 0.5]),
            (lab.coupling, [-0.5, 0.0]),
            (lab.method, [METHODS[1], METHODS[0]]),
            (lab.statistic, [list(STATISTICS)[1], next(iter(STATISTICS))]),
        ],
    )
