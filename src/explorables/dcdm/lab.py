"""The live lab: DCDM on the 2-D mixture with the reader's K, Dirichlet prior and KL weight.

Every change of K, alpha_0 or beta retrains one small DCDM (a few hundred steps on one CPU thread)
and re-samples; the concept picker only redraws (it highlights the samples of one concept).
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import PALETTE, SEQUENCE
from ..core.labs import canvas_png, interactions
from ..core.threads import one_cpu_thread
from . import data as Dt
from .metrics import cluster_scores
from .networks import MLPDenoiser, MLPEncoder
from .training import TrainSettings, generator_noise, train_concept_models

ALL = "all concepts"


class DCDMLab:
    """The panel; ``DCDMLab().widget`` is what the notebook displays."""

    def __init__(self, n_modes: int = 6, n_steps: int = 200, n_train: int = 1500, seed: int = 0):
        self.n_modes, self.n_steps, self.seed = n_modes, n_steps, seed
        self.data = Dt.mixture_data(n_train, 10, n_modes, 0.25, seed)
        style, lay = {"description_width": "150px"}, widgets.Layout(width="360px")
        self.k = widgets.IntSlider(value=n_modes, min=1, max=12, description="concepts K", style=style, layout=lay)
        self.prior = widgets.FloatLogSlider(
            value=0.3, base=10, min=-2, max=1, step=0.25, description="prior α₀", style=style, layout=lay
        )
        self.beta = widgets.FloatLogSlider(
            value=0.003, base=10, min=-4, max=0, step=0.25, description="KL weight β", style=style, layout=lay
        )
        self.concept = widgets.Dropdown(options=[ALL], value=ALL, description="show", style=style, layout=lay)
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="520px"))
        fig = Figure(figsize=(5.2, 5.0), dpi=72)
        FigureCanvasAgg(fig)
        self._fig, self._ax = fig, fig.subplots()
        fig.subplots_adjust(left=0.08, right=0.98, bottom=0.08, top=0.92)
        for w in (self.k, self.prior, self.beta):
            w.observe(self.rerun, names="value")
        self.concept.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.k, self.prior, self.beta, self.concept],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(360px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def rerun(self, _change=None) -> None:
        """Retrain one small DCDM with the current K, alpha_0 and beta, sample every concept, redraw."""
        k = int(self.k.value)
        settings = TrainSettings(k, self.n_steps, 20, 64, 5e-3, float(self.beta.value), float(self.prior.value))
        torch.manual_seed(self.seed)
        with one_cpu_thread("cpu"):
            models = train_concept_models(
                self.data.x_train,
                settings,
                lambda: MLPEncoder(2, k, 32, 2),
                lambda: MLPDenoiser(2, 20, 32, 2),
                seeds=(self.seed,),
                arms=("dcdm",),
            )
            self.samples = models.sample_concepts(40, noise=generator_noise(self.seed + 1))[0].numpy()
        self.centres = models.centres[0].numpy()
        assign = models.assign(self.data.x_train)[0]
        self.usage = np.bincount(assign, minlength=k) / len(assign)
        scores = cluster_scores(self.data.y_train, assign)  # labels: for this status line only
        self.status.value = (
            f"<small>NMI with the modes {scores['nmi']:.2f}, ARI {scores['ari']:.2f}; "
            f"concepts used (≥ 1% of the data): {int((self.usage >= 0.01).sum())} of {k}</small>"
        )
        options = [ALL] + [f"concept {i} ({u:.0%} of the data)" for i, u in enumerate(self.usage)]
        keep = self.concept.value if self.concept.value in options else ALL
        with self.concept.hold_trait_notifications():
            self.concept.options = options
            self.concept.value = keep
        self.redraw()

    def _build(self) -> None:
        ax = self._ax
        x = self.data.x_train.numpy()
        ax.scatter(x[:, 0], x[:, 1], s=2, color=PALETTE["light_grey"])
        ax.set(xlim=(-3.2, 3.2), ylim=(-3.2, 3.2), aspect="equal", title="data (grey), centres (stars), samples")
        ax.tick_params(labelsize=8)
        self._points = ax.scatter([], [], s=8, animated=True)
        self._stars = ax.scatter([], [], s=160, marker="*", edgecolors="black", linewidths=0.6, animated=True)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)

    def redraw(self, _change=None) -> None:
        """Blit the samples (one concept highlighted, or all) and the centres onto the static picture."""
        if not hasattr(self, "_background"):
            self._build()
        k = len(self.centres)
        colours = np.array([_rgba(SEQUENCE[i % len(SEQUENCE)]) for i in range(k)])
        pick = None if self.concept.value == ALL else self.concept.options.index(self.concept.value) - 1
        faces = np.repeat(colours, self.samples.shape[1], axis=0)
        if pick is not None:
            faces[:, 3] = 0.08
            faces[pick * self.samples.shape[1] : (pick + 1) * self.samples.shape[1], 3] = 1.0
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        self._points.set_offsets(self.samples.reshape(-1, 2))
        self._points.set_facecolor(faces)
        self._stars.set_offsets(self.centres)
        self._stars.set_facecolor(colours)
        self._ax.draw_artist(self._points)
        self._ax.draw_artist(self._stars)
        self.image.value = canvas_png(canvas)


def _rgba(hex_colour: str) -> tuple[float, float, float, float]:
    h = hex_colour.lstrip("#")
    return (int(h[0:2], 16) / 255, int(h[2:4], 16) / 255, int(h[4:6], 16) / 255, 0.8)


def benchmark_interactions(lab: DCDMLab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py`` (built with :func:`explorables.core.labs.interactions`)."""
    lab = lab or DCDMLab()
    options = list(lab.concept.options)
    return interactions(
        redraw=[(lab.concept, [options[1], options[2], options[0]] * 2)],
        rerun=[(lab.k, [4, 8, 6]), (lab.prior, [1.0, 0.3]), (lab.beta, [0.03, 0.003])],
    )
