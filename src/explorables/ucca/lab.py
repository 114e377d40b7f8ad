"""The live lab: an ipywidgets panel that re-runs UCCA on synthetic views the reader configures.

Changing the latent (type, λ, dimension), the noise, the reduced dimension ``d`` or the number of
restarts re-runs everything (data, UCCA, the oracle; ``n`` = 120 unpaired samples, 200 test pairs);
the "step" slider only redraws: it walks through UCCA's path (after the QAP, then each round of
CCA + assignment). Drawn with matplotlib into an ``ipywidgets.Image`` so the last picture stays
on the static website.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import PALETTE
from ..core.labs import canvas_png, interactions
from .baselines import cca_on_pairing
from .cca import cca, variate_correlations
from .data import synthetic_views, unpaired
from .method import ucca

N_TRAIN, N_TEST, N_CLUSTERS = 120, 200, 6
REFLECT_MAX_D = 3  # the 2^d - 1 reflections of eq. (ucca-reflect) only up to this d: a rerun stays well under 1 s


@dataclass
class LabRun:
    """One run of the lab: per step, the cluster matching and the variates on the true test pairs."""

    confusion: list[np.ndarray]
    variates: list[np.ndarray]  # (n_test, 2): first canonical variates of X and Y on the true test pairs
    correlations: list[np.ndarray]
    exact: list[float]
    oracle: np.ndarray


def compute(
    latent: str, non_gaussianity: float, d_latent: int, noise: float, d: int, n_restarts: int, seed: int = 0
) -> LabRun:
    """Draw the views, hide the pairing, run UCCA, and score every step of its path on the truth."""
    rng = np.random.default_rng(seed)
    views = synthetic_views(N_TRAIN + N_TEST, d_latent=d_latent, latent=latent, non_gaussianity=non_gaussianity,
                            n_clusters=N_CLUSTERS, noise=noise, rng=rng)  # fmt: skip
    train, test = views.subset(np.arange(N_TRAIN)), views.subset(np.arange(N_TRAIN, N_TRAIN + N_TEST))
    X, Y_shuffled, shuffle = unpaired(train, rng)
    truth = np.argsort(shuffle)
    k = min(2, d)
    fit = ucca(X, Y_shuffled, n_components=k, d=d, n_restarts=n_restarts, n_faq=3, n_alternations=8,
               reflect=d <= REFLECT_MAX_D, rng=rng)  # fmt: skip
    labels_x = train.labels if train.labels is not None else np.zeros(N_TRAIN, dtype=int)
    labels_y = labels_x[shuffle]
    n_labels = int(labels_x.max()) + 1
    run = LabRun([], [], [], [], variate_correlations(cca(train.X, train.Y, k, d=d), test.X, test.Y))
    for pairing in fit.pairings:
        conf = np.zeros((n_labels, n_labels))
        np.add.at(conf, (labels_x, labels_y[pairing]), 1.0)
        run.confusion.append(conf / np.maximum(conf.sum(1, keepdims=True), 1))
        step_fit = cca_on_pairing(X, Y_shuffled, pairing, k, d)
        u, v = step_fit.transform(test.X, test.Y)
        run.variates.append(np.c_[u[:, 0], v[:, 0]])
        run.correlations.append(variate_correlations(step_fit, test.X, test.Y))
        run.exact.append(float(np.mean(pairing == truth)))
    return run


class UCCALab:
    """The panel. ``UCCALab().widget`` is what the notebook displays."""

    def __init__(self) -> None:
        style = {"description_width": "120px"}
        lay = widgets.Layout(width="330px")
        self.latent = widgets.ToggleButtons(options=["clustered", "gaussian"], value="clustered",
                                            description="latent", style=style)  # fmt: skip
        self.non_gaussianity = widgets.FloatSlider(value=0.95, min=0.0, max=0.99, step=0.05,
                                                   description="λ (clusters)", style=style, layout=lay)  # fmt: skip
        self.d_latent = widgets.IntSlider(value=3, min=1, max=5, description="latent dim", style=style, layout=lay)
        self.noise = widgets.FloatSlider(value=0.3, min=0.0, max=1.5, step=0.05, description="noise",
                                         style=style, layout=lay)  # fmt: skip
        self.d = widgets.IntSlider(value=3, min=1, max=8, description="reduced dim d", style=style, layout=lay)
        self.n_restarts = widgets.IntSlider(value=16, min=3, max=48, description="restarts", style=style, layout=lay)
        self.step = widgets.IntSlider(value=0, min=0, max=0, description="step", style=style, layout=lay)
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        self.status = widgets.HTML()
        self._build_figure()
        for w in (self.latent, self.non_gaussianity, self.d_latent, self.noise, self.d, self.n_restarts):
            w.observe(self.rerun, names="value")
        self.step.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.latent, self.non_gaussianity, self.d_latent, self.noise, self.d, self.n_restarts, self.step],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(330px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def _build_figure(self) -> None:
        fig = Figure(figsize=(9, 3.6), dpi=80)
        FigureCanvasAgg(fig)
        ax_m, ax_s = fig.subplots(1, 2)
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.14, top=0.88, wspace=0.3)
        self._image = ax_m.imshow(np.zeros((N_CLUSTERS, N_CLUSTERS)), cmap="Blues", vmin=0, vmax=1)
        ax_m.set(title="cluster of x → cluster of its partner", xlabel="cluster of y", ylabel="cluster of x")
        self._points = ax_s.scatter(np.zeros(N_TEST), np.zeros(N_TEST), s=6, color=PALETTE["blue"], alpha=0.6)
        ax_s.set(xlim=(-4, 4), ylim=(-4, 4), xlabel="u₁ (view X)", ylabel="v₁ (view Y)")
        self._title = ax_s.set_title("")
        self._fig = fig

    def rerun(self, _change=None) -> None:
        """Re-run data, UCCA and the oracle with the current controls, then show the last step."""
        self.non_gaussianity.disabled = self.latent.value == "gaussian"
        self.run = compute(self.latent.value, self.non_gaussianity.value, self.d_latent.value, self.noise.value,
                           self.d.value, self.n_restarts.value)  # fmt: skip
        last = len(self.run.exact) - 1
        with self.step.hold_trait_notifications():
            self.step.max = last
            self.step.value = last
        self.redraw()

    def redraw(self, _change=None) -> None:
        """Show one step of UCCA's path (no re-run)."""
        r, t = self.run, min(self.step.value, len(self.run.exact) - 1)
        conf = r.confusion[t]
        self._image.set_data(conf)
        self._image.set_extent((-0.5, conf.shape[1] - 0.5, conf.shape[0] - 0.5, -0.5))
        uv = r.variates[t]
        scale = np.std(uv, axis=0)
        self._points.set_offsets(uv / np.where(scale > 0, scale, 1))
        self._title.set_text(f"first variates, true test pairs: ρ₁ = {r.correlations[t][0]:.2f}")
        self._fig.canvas.draw()
        self.image.value = canvas_png(self._fig.canvas)
        name = "after the QAP" if t == 0 else f"after round {t}"
        self.status.value = (
            f"<small>{name}: exact matches {r.exact[t]:.0%}; correlations on the true test pairs "
            f"{np.round(r.correlations[t], 2).tolist()} (oracle {np.round(r.oracle, 2).tolist()})</small>"
        )


def benchmark_interactions(lab: UCCALab | None = None) -> dict[str, list]:
    """A reader's interactions for ``benchmarks/run.py``: the step slider redraws; the rest re-run UCCA."""
    lab = lab or UCCALab()
    steps = list(range(lab.step.max + 1)) or [0]
    return interactions(
        redraw=[(lab.step, (steps * 4)[:12])],
        rerun=[(lab.noise, (0.5, 0.2)), (lab.non_gaussianity, (0.6, 0.9)), (lab.d, (4, 3)),
               (lab.latent, ("gaussian", "clustered")), (lab.n_restarts, (48,))],
    )  # fmt: skip
