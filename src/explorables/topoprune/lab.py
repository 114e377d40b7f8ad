"""The live lab: an ipywidgets panel that re-runs the selection and a training on the reader's settings.

A pool of 600 digits and their MLP features are fixed when the panel opens. Changing the feature
noise, the neighbourhood size k, the pruning rate or the method re-scores (on the features),
re-selects and trains an MLP on the kept subset; UMAP (cached per noise level) only draws the
picture. The "sample" slider only redraws: it picks the neighbourhood whose persistence diagram
is shown. Drawn with matplotlib into
an ``ipywidgets.Image`` so the last picture stays on the static website.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import PALETTE
from ..core.labs import canvas_png, interactions
from .embedding import umap_embedding
from .experiment import METHOD_NAMES
from .models import Split, add_feature_noise, digits_split, extract_features, train_feature_network, train_on_subsets
from .persistence import averaged_knn_radius, flag_pairs, neighbourhoods, persistence_scores, persistence_values
from .selection import ccs_selection, centre_distance, d2_selection, random_selection, select_by_score

N_POOL = 600
LAB_METHODS = ("topoprune", "radius", "centre", "d2", "ccs", "random")


class TopoPruneLab:
    """The panel. ``TopoPruneLab().widget`` is what the notebook displays."""

    def __init__(self, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        split = digits_split(0.3, rng)
        keep = np.sort(rng.choice(len(split.y_train), N_POOL, replace=False))
        self.split = Split(split.x_train[keep], split.y_train[keep], split.x_test, split.y_test)
        net, _ = train_feature_network("mlp", self.split, n_epochs=20, seed=seed)
        self.features = extract_features(net, self.split.x_train)
        self._embeddings: dict[float, np.ndarray] = {}
        self._features: dict[float, np.ndarray] = {}
        self._scores: dict[tuple[float, int], np.ndarray] = {}
        style = {"description_width": "140px"}
        lay = widgets.Layout(width="350px")
        self.noise = widgets.SelectionSlider(options=[0.0, 0.25, 0.5, 1.0], value=0.0, description="feature noise",
                                             style=style, layout=lay)  # fmt: skip
        self.k = widgets.IntSlider(value=30, min=5, max=30, description="neighbourhood k", style=style, layout=lay)
        self.rate = widgets.FloatSlider(value=0.9, min=0.5, max=0.95, step=0.05, description="pruning rate",
                                        style=style, layout=lay)  # fmt: skip
        self.method = widgets.Dropdown(options=[(METHOD_NAMES[m], m) for m in LAB_METHODS], value="topoprune",
                                       description="method", style=style, layout=lay)  # fmt: skip
        self.keep = widgets.Dropdown(options=[("evenly spaced ranks", "coverage"), ("lowest scores", "easy"),
                                              ("highest scores", "hard")], value="coverage",
                                     description="keep (by score)", style=style, layout=lay)  # fmt: skip
        self.sample = widgets.FloatSlider(value=1.0, min=0.0, max=1.0, step=0.1, description="sample (score %ile)",
                                          style=style, layout=lay)  # fmt: skip
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        self.status = widgets.HTML()
        self._build_figure()
        for w in (self.noise, self.k, self.rate, self.method, self.keep):
            w.observe(self.rerun, names="value")
        self.sample.observe(self.redraw, names="value")
        controls = widgets.GridBox([self.noise, self.k, self.rate, self.method, self.keep, self.sample],
                                   layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(320px, 1fr))"))
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def _build_figure(self) -> None:
        fig = Figure(figsize=(9, 3.8), dpi=80)
        FigureCanvasAgg(fig)
        self._ax_e, self._ax_d = fig.subplots(1, 2)
        fig.subplots_adjust(left=0.04, right=0.98, bottom=0.13, top=0.9, wspace=0.2)
        zeros = np.zeros(N_POOL)
        self._points = self._ax_e.scatter(zeros, zeros, s=6, c=zeros, cmap="viridis", alpha=0.6)
        self._kept = self._ax_e.scatter(zeros[:1], zeros[:1], s=22, facecolors="none", edgecolors=PALETTE["black"],
                                        linewidths=0.6)  # fmt: skip
        self._chosen = self._ax_e.scatter([0], [0], s=90, marker="x", color=PALETTE["red"])
        self._ax_e.set(xticks=[], yticks=[])
        self._title = self._ax_e.set_title("")
        self._h0 = self._ax_d.scatter([], [], s=18, color=PALETTE["blue"], label="H0")
        (self._diag,) = self._ax_d.plot([0, 1], [0, 1], ":", color=PALETTE["grey"], lw=1)
        self._ax_d.set(xlabel="birth", ylabel="death", title="diagram of the chosen neighbourhood")
        self._ax_d.legend(loc="lower right")
        self._fig = fig

    def noisy(self, noise: float) -> np.ndarray:
        """The features with ``noise`` × each feature's sd added (one draw per noise level)."""
        if noise not in self._features:
            self._features[noise] = (add_feature_noise(self.features, noise, np.random.default_rng(1)) if noise
                                     else self.features)  # fmt: skip
        return self._features[noise]

    def embedding(self, noise: float) -> np.ndarray:
        """UMAP of the (noisy) features, computed once per noise level: it only draws the picture."""
        if noise not in self._embeddings:
            self._embeddings[noise] = umap_embedding(self.noisy(noise), n_neighbours=15, n_epochs=60, seed=0)
        return self._embeddings[noise]

    def rerun(self, _change=None) -> None:
        """Re-score (cached per setting) on the (noisy) features, re-select and train the MLP on the kept subset."""
        self.Z = self.embedding(self.noise.value)
        feats = self.noisy(self.noise.value)
        y, rate, method, rng = self.split.y_train, self.rate.value, self.method.value, np.random.default_rng(0)
        self.hoods = neighbourhoods(feats, self.k.value)
        key = (self.noise.value, self.k.value)
        if key not in self._scores:
            self._scores[key] = persistence_scores(feats, self.k.value)
        self.scores = self._scores[key]
        if method == "topoprune":
            self.kept = select_by_score(self.scores, y, rate, self.keep.value)
        elif method == "radius":
            self.kept = select_by_score(averaged_knn_radius(feats, self.k.value), y, rate, self.keep.value)
        elif method == "centre":
            self.kept = select_by_score(centre_distance(feats, y), y, rate, "easy")
        elif method == "d2":
            self.kept = d2_selection(feats, y, rate, n_neighbours=15)
        elif method == "ccs":
            self.kept = ccs_selection(centre_distance(feats, y), y, rate, rng)
        else:
            self.kept = random_selection(y, rate, rng)
        self.accuracy = float(train_on_subsets(self.split, [self.kept], n_steps=100, seed=0)[0])
        self.redraw()

    def redraw(self, _change=None) -> None:
        """Show the embedding with the kept set and the diagram of the chosen neighbourhood (no re-run)."""
        order = np.argsort(self.scores)
        i = int(order[min(int(self.sample.value * (len(order) - 1)), len(order) - 1)])
        self._points.set_offsets(self.Z)
        self._points.set_array(self.scores)
        self._points.set_clim(self.scores.min(), self.scores.max())
        self._kept.set_offsets(self.Z[self.kept])
        self._chosen.set_offsets(self.Z[i : i + 1])
        pad = 0.05 * np.ptp(self.Z, axis=0)
        self._ax_e.set(xlim=(self.Z[:, 0].min() - pad[0], self.Z[:, 0].max() + pad[0]),
                       ylim=(self.Z[:, 1].min() - pad[1], self.Z[:, 1].max() + pad[1]))  # fmt: skip
        self._title.set_text(f"{METHOD_NAMES[self.method.value]}: {len(self.kept)} kept, accuracy {self.accuracy:.3f}")
        feats = self.noisy(self.noise.value)
        cloud = feats[self.hoods[i]] - feats[i]
        # H0 only, as the score in the book preset (and H1 of 31 points in 64-d would cost the redraw budget)
        d0, _ = persistence_values(torch.as_tensor(cloud), flag_pairs(cloud, 0))
        d0 = d0.numpy()
        self._h0.set_offsets(np.c_[np.zeros(len(d0)), d0])
        top = 1.05 * max(d0.max(initial=0), 1e-3)
        self._diag.set_data([0, top], [0, top])
        self._ax_d.set(xlim=(-0.05 * top, top), ylim=(-0.05 * top, top))
        self._fig.canvas.draw()
        self.image.value = canvas_png(self._fig.canvas)
        self.status.value = (f"<small>chosen sample: TopoPrune score {self.scores[i]:.3f}; {len(d0)} finite H0 "
                             f"classes in its neighbourhood, total persistence {d0.sum():.3f}</small>")  # fmt: skip


def benchmark_interactions(lab: TopoPruneLab | None = None) -> dict[str, list]:
    """A reader's interactions for ``benchmarks/run.py``: the sample slider redraws; the rest re-run."""
    lab = lab or TopoPruneLab()
    return interactions(
        redraw=[(lab.sample, (0.0, 0.3, 0.5, 0.8, 1.0, 0.6))],
        rerun=[(lab.rate, (0.7, 0.9)), (lab.method, ("centre", "topoprune")), (lab.keep, ("hard", "coverage")),
               (lab.k, (10, 15)),
               (lab.noise, (0.5, 0.0))],
    )  # fmt: skip
