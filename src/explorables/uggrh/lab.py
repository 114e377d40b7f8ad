"""The live lab: an ipywidgets panel that re-trains the baseline and UGGRH on the reader's settings.

Changing the missing rate, the share of image-missing pairs, the code length or a module toggle
re-runs everything on a small problem (250 training pairs, one seed, fewer steps than the book);
the "query" slider only redraws: it shows what each method retrieves for another image query.
Drawn with matplotlib into an ``ipywidgets.Image`` so the last picture stays on the static website.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import PALETTE
from ..core.labs import canvas_png, interactions
from .data import digits_with_tags, make_incomplete, split
from .experiment import evaluate
from .method import Modules, TrainSettings, prepare, train_hashing
from .retrieval import hamming_ranking

N_TRAIN, N_QUERY, N_DATABASE, N_SHOWN, TOP = 250, 200, 500, 12, 8
SETTINGS = TrainSettings(n_hidden=64, n_epochs=60, n_completion_steps=60)


@dataclass
class LabRun:
    """One run: mAP per method, and per shown query the top retrieved images and whether they match."""

    scores: dict
    mosaics: dict  # method -> (N_SHOWN, 10, (TOP + 2) * 10) images
    hits: dict  # method -> (N_SHOWN, TOP) bool


def _mosaic(query: np.ndarray, retrieved: np.ndarray) -> np.ndarray:
    row = np.full((10, (retrieved.shape[0] + 2) * 10), np.nan)
    row[1:9, 1:9] = query.reshape(8, 8)
    for j, img in enumerate(retrieved):
        row[1:9, (j + 2) * 10 + 1 : (j + 2) * 10 + 9] = img.reshape(8, 8)
    return row


def compute(missing_rate: float, image_share: float, n_bits: int, modules: Modules, seed: int = 0) -> LabRun:
    """Hide modalities, train the baseline and UGGRH (with ``modules``), score and retrieve."""
    rng = np.random.default_rng(seed)
    data = digits_with_tags(rng=rng)
    train, query, database = split(data, N_QUERY, N_TRAIN, N_DATABASE, rng)
    pairs = make_incomplete(train.image, train.text, missing_rate, image_share, rng=rng)
    run = LabRun({}, {}, {})
    for method, mods in (("baseline", None), ("uggrh", modules)):
        hashing = train_hashing(prepare(pairs, mods, SETTINGS, seed=seed), n_bits, mods, SETTINGS, seed=seed)
        run.scores[method] = evaluate(hashing, query, database)
        ranking = hamming_ranking(hashing.image_codes(query.image[:N_SHOWN]), hashing.text_codes(database.text))
        top = ranking[:, :TOP]
        run.hits[method] = (query.labels[:N_SHOWN, None, :] * database.labels[top]).sum(-1) > 0
        run.mosaics[method] = np.stack([_mosaic(query.image[i], database.image[top[i]]) for i in range(N_SHOWN)])
    return run


class UGGRHLab:
    """The panel. ``UGGRHLab().widget`` is what the notebook displays."""

    def __init__(self) -> None:
        style = {"description_width": "130px"}
        lay = widgets.Layout(width="330px")
        self.missing_rate = widgets.FloatSlider(value=0.7, min=0.0, max=0.8, step=0.1, description="missing rate",
                                                style=style, layout=lay)  # fmt: skip
        self.image_share = widgets.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.25,
                                               description="share lacking image", style=style, layout=lay)  # fmt: skip
        self.n_bits = widgets.ToggleButtons(options=[16, 32, 64], value=32, description="bits", style=style)
        self.toggles = {
            name: widgets.Checkbox(value=True, description=name, layout=widgets.Layout(width="220px"))
            for name in ("use_completion", "use_refinement", "use_graph_attention", "use_fusion")
        }
        self.query = widgets.IntSlider(value=0, min=0, max=N_SHOWN - 1, description="query", style=style, layout=lay)
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        self.status = widgets.HTML()
        self._build_figure()
        for w in (self.missing_rate, self.image_share, self.n_bits, *self.toggles.values()):
            w.observe(self.rerun, names="value")
        self.query.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.missing_rate, self.image_share, self.n_bits, self.query, *self.toggles.values()],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(330px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def _build_figure(self) -> None:
        fig = Figure(figsize=(9, 2.9), dpi=80)
        FigureCanvasAgg(fig)
        self._axes = fig.subplots(2, 1)
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.02, top=0.9, hspace=0.35)
        blank = np.zeros((10, (TOP + 2) * 10))
        self._images, self._titles, self._marks = [], [], []
        for ax in self._axes:
            self._images.append(ax.imshow(blank, cmap="Greys", vmin=0, vmax=1, interpolation="nearest"))
            self._titles.append(ax.set_title("", fontsize=10))
            ax.set_axis_off()
            self._marks.append([ax.add_patch(_frame(j)) for j in range(TOP)])
        self._fig = fig

    def modules(self) -> Modules:
        return Modules(**{name: box.value for name, box in self.toggles.items()})

    def rerun(self, _change=None) -> None:
        """Re-train both methods with the current controls, then redraw."""
        self.run = compute(self.missing_rate.value, self.image_share.value, self.n_bits.value, self.modules())
        self.redraw()

    def redraw(self, _change=None) -> None:
        """Show the current query's retrievals (no re-run)."""
        r, q = self.run, self.query.value
        for k, method in enumerate(("baseline", "uggrh")):
            self._images[k].set_data(r.mosaics[method][q])
            hits = r.hits[method][q]
            for j, mark in enumerate(self._marks[k]):
                mark.set_visible(not hits[j])
            name = "baseline (mean-fill)" if method == "baseline" else "UGGRH"
            self._titles[k].set_text(f"{name}: image query → top {TOP} by text code, {hits.sum()} of {TOP} same class")
        self._fig.canvas.draw()
        self.image.value = canvas_png(self._fig.canvas)
        s = r.scores
        self.status.value = (
            f"<small>mAP@all image→text / text→image: baseline {s['baseline']['i2t']:.3f} / {s['baseline']['t2i']:.3f}"
            f", UGGRH {s['uggrh']['i2t']:.3f} / {s['uggrh']['t2i']:.3f} (one seed, {N_TRAIN} training pairs; "
            "red frames: another class)</small>"
        )


def _frame(j: int):
    from matplotlib.patches import Rectangle

    return Rectangle(((j + 2) * 10 + 0.5, 0.5), 8, 8, fill=False, edgecolor=PALETTE["red"], linewidth=2, visible=False)


def benchmark_interactions(lab: UGGRHLab | None = None) -> dict[str, list]:
    """A reader's interactions for ``benchmarks/run.py``: the query slider redraws; the rest re-train."""
    lab = lab or UGGRHLab()
    return interactions(
        redraw=[(lab.query, (1, 2, 3, 4, 5, 6, 7, 0))],
        rerun=[(lab.missing_rate, (0.3, 0.7)), (lab.n_bits, (16, 32)),
               (lab.toggles["use_graph_attention"], (False, True)), (lab.image_share, (1.0, 0.5))],
    )  # fmt: skip
