"""The live lab: pick a tree, a target, a prediction error and an algorithm; watch the search.

Changing the tree, its size, the target, ``eta``, the random seed of the prediction or the
algorithm re-runs the search (the spine decomposition of each tree is cached); moving the
"after query" slider only redraws. The picture is drawn with matplotlib into an
``ipywidgets.Image``: the tree is painted once as a background and each redraw blits the
candidate set, the queried vertices and the prediction over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from ..core.labs import canvas_png, interactions
from ..core.validation import check_choice
from .experiment import search_trace
from .families import ast_tree, digits_dendrogram, synthetic_tree
from .figures import TREE_COLORS, tidy_layout
from .pathwidth import SpineDecomposition, spine_decomposition
from .search import centroid_bound, spine_bound
from .tree import Tree, branch_heights, random_vertex_at_distance

LAB_TREES = ("caterpillar", "spider", "complete binary", "random recursive", "AST of bisect.py", "digits dendrogram")
ALGORITHMS = ("spine", "robust", "centroid")
MAX_LABELS = 40


@lru_cache(maxsize=32)
def lab_tree(name: str, n: int = 80, seed: int = 0) -> tuple[Tree, SpineDecomposition, tuple]:
    """A tree of the lab (rooted at a centre for drawing), its spine decomposition and branch heights."""
    check_choice("tree", name, LAB_TREES)
    if name == "AST of bisect.py":
        base = ast_tree("bisect")
    elif name == "digits dendrogram":
        base = digits_dendrogram(max(4, n // 2), 1, seed).tree
    else:
        base = synthetic_tree(name, max(n, 7), seed)
    # root at a centre: the vertex in the middle of a longest path
    far = int(np.argmax(base.distances_from(0)))
    d_far = base.distances_from(far)
    other = int(np.argmax(d_far))
    centre = base.path(far, other)[int(d_far[other]) // 2]
    tree = Tree(base.n, base.edges, root=centre)
    return tree, spine_decomposition(tree), branch_heights(tree)


@dataclass
class LabRun:
    """One search of the lab."""

    target: int
    prediction: int
    eta: int
    queries: list[int]
    candidates: list[list[int]]


class TreeSearchLab:
    """The ipywidgets panel (``lab.widget``)."""

    def __init__(self, tree: str = "caterpillar", n: int = 80, eta: int = 6, algorithm: str = "spine"):
        style = {"description_width": "140px"}
        lay = widgets.Layout(width="360px")
        self.tree = widgets.Dropdown(options=LAB_TREES, value=tree, description="tree", style=style, layout=lay)
        self.n = widgets.IntSlider(
            value=n, min=15, max=300, step=5, description="vertices", style=style, layout=lay, continuous_update=False
        )
        self.target = widgets.IntSlider(
            value=0, min=0, max=1, description="target", style=style, layout=lay, continuous_update=False
        )
        self.eta = widgets.IntSlider(
            value=eta, min=0, max=40, description="prediction error η", style=style, layout=lay, continuous_update=False
        )
        self.seed = widgets.IntSlider(
            value=0, min=0, max=20, description="prediction seed", style=style, layout=lay, continuous_update=False
        )
        self.algorithm = widgets.ToggleButtons(
            options=ALGORITHMS, value=algorithm, description="algorithm", style=style
        )
        self.step = widgets.IntSlider(value=0, min=0, max=1, description="after query", style=style, layout=lay)
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="820px"))
        self.status = widgets.HTML()
        self._quiet = False
        self._fig: Figure | None = None
        for w in (self.tree, self.n):
            w.observe(self._new_tree, names="value")
        for w in (self.target, self.eta, self.seed, self.algorithm):
            w.observe(self.rerun, names="value")
        self.step.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.tree, self.n, self.target, self.eta, self.seed, self.step],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(330px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.algorithm, self.status, self.image])
        lab_tree("digits dendrogram", n)  # warm the cache: the first dendrogram imports scikit-learn
        self._new_tree()

    # --- the tree and its background ---------------------------------------------------------
    def _new_tree(self, _change=None) -> None:
        self.n.disabled = self.tree.value == "AST of bisect.py"
        self._T, self._D, self._heights = lab_tree(self.tree.value, self.n.value)
        x, y = tidy_layout(self._T.parent)
        self._xy = np.c_[x, y]
        far = np.flatnonzero(self._T.depth == self._T.depth.max())
        self._build_figure()
        self._quiet = True  # setting the target's range must not re-run a half-updated panel
        try:
            self.target.max = self._T.n - 1
            self.target.value = int(far[len(far) // 2])
        finally:
            self._quiet = False
        self.rerun()

    def _build_figure(self) -> None:
        T, xy = self._T, self._xy
        fig = Figure(figsize=(10, 5.2), dpi=80)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0.01, 0.01, 0.98, 0.9))
        ax.set_axis_off()
        segs = np.stack([xy[T.parent[1:]], xy[1:]], axis=1)
        ax.add_collection(LineCollection(segs, colors=TREE_COLORS["edge"], linewidths=0.8))
        ms = 18 if T.n <= 120 else 6
        ax.scatter(xy[:, 0], xy[:, 1], s=ms, c=TREE_COLORS["vertex"], zorder=2)
        # the top spine, for orientation
        sp = self._D.spines[0]
        ax.plot(xy[sp, 0], xy[sp, 1], color=TREE_COLORS["top_spine"], lw=3, alpha=0.5, zorder=1)
        pad = 0.03
        ax.set_xlim(xy[:, 0].min() - pad, xy[:, 0].max() + pad)
        ax.set_ylim(xy[:, 1].min() - 0.6, xy[:, 1].max() + 0.6)
        self._art = {
            "cand": ax.scatter([], [], s=ms * 3, c=TREE_COLORS["candidate"], zorder=3),
            "queried": ax.scatter([], [], s=ms * 4, c=TREE_COLORS["queried"], zorder=4),
            "pred": ax.scatter(
                [], [], s=220, marker="D", facecolors="none", edgecolors="black", linewidths=2, zorder=5
            ),
            "target": ax.scatter([], [], s=260, marker="*", c=TREE_COLORS["target"], zorder=6),
        }
        self._texts = [ax.text(0, 0, "", fontsize=9, ha="center", va="bottom", zorder=7) for _ in range(MAX_LABELS)]
        self._title = fig.text(0.01, 0.95, "", fontsize=11)
        self._fig = fig
        fig.canvas.draw()
        self._background = fig.canvas.copy_from_bbox(fig.bbox)

    # --- computing and drawing ----------------------------------------------------------------
    def rerun(self, _change: Any = None) -> None:
        """Pick the prediction at distance ``eta`` (a seeded random walk) and re-run the search."""
        if self._quiet:
            return
        T = self._T
        t = int(self.target.value)
        rng = np.random.default_rng([self.seed.value, t, self.eta.value])
        eta = int(self.eta.value)
        p = random_vertex_at_distance(T, t, eta, rng, self._heights)
        while p < 0:  # no vertex that far away: take the farthest possible
            eta -= 1
            p = random_vertex_at_distance(T, t, eta, rng, self._heights)
        tr = search_trace(T, self._D, self.algorithm.value, t, p)
        self.run = LabRun(t, p, eta, tr["queries"], tr["candidates"])
        self._quiet = True
        try:
            self.step.max = len(self.run.queries)
            self.step.value = len(self.run.queries)
        finally:
            self._quiet = False
        self.redraw()

    def redraw(self, _change: Any = None) -> None:
        """Show the state after ``step`` queries (blitted over the cached tree)."""
        if self._quiet:
            return
        r, xy = self.run, self._xy
        k = min(int(self.step.value), len(r.queries))
        cand = r.candidates[k] if k < len(r.queries) else [r.target]
        done = r.queries[:k]
        self._art["cand"].set_offsets(xy[cand])
        self._art["queried"].set_offsets(xy[done] if done else np.empty((0, 2)))
        self._art["pred"].set_offsets(xy[[r.prediction]])
        self._art["target"].set_offsets(xy[[r.target]])
        for i, txt in enumerate(self._texts):
            if i < len(done):
                txt.set_position((xy[done[i], 0], xy[done[i], 1] + 0.15))
                txt.set_text(str(i + 1))
            else:
                txt.set_text("")
        k_pw = self._D.pathwidth
        self._title.set_text(
            f"{self.tree.value}: n = {self._T.n}, pathwidth {k_pw} · η = {r.eta} · {self.algorithm.value}: "
            f"{len(r.queries)} queries (bound {spine_bound(r.eta, k_pw)}, centroid ≤ {centroid_bound(self._T.n)})"
        )
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        for art in [*self._art.values(), *self._texts[: max(1, len(done))], self._title]:
            art.axes.draw_artist(art) if art.axes is not None else self._fig.draw_artist(art)
        self.image.value = canvas_png(canvas)
        self.status.value = (
            f"<small>after {k} of {len(r.queries)} queries: {len(cand)} vertices still possible "
            f"(blue); red = queried, in order; ◇ prediction, ★ target</small>"
        )


def benchmark_interactions(lab: TreeSearchLab | None = None) -> dict[str, list]:
    """Callables that mimic a reader's interactions, for ``benchmarks/run.py``.

    ``"redraw"`` interactions only redraw (budget 150 ms); ``"rerun"`` ones re-run the search
    (budget 1 s). Each callable changes one control, exactly as a slider drag would.
    """
    lab = lab or TreeSearchLab()
    return interactions(
        redraw=[(lab.step, (0, 1, 2, 3, 4, 5) * 3)],
        rerun=[
            (lab.eta, (1, 3, 10, 20)),
            (lab.algorithm, ("robust", "centroid", "spine")),
            (lab.target, (3, 10)),
            (lab.tree, LAB_TREES[1:]),
            (lab.n, (300,)),
        ],
    )
