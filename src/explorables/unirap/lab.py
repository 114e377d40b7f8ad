"""The live lab: type an instruction, change the clutter and the scene, switch between trained models.

The models (seed 0, unified: the curriculum at the most and at the fewest labels, and joint training on
the curriculum's data at the fewest) come from the experiment's run, trained once; a rerun
generates the scene and runs one forward pass, a redraw only toggles the overlays. An
instruction that names an object the scene lacks, or a part its object lacks, is answered with
the error, not with a guess.
"""

from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle

from ..core.figures import PALETTE
from ..core.labs import canvas_png, interactions
from ..core.threads import one_cpu_thread
from .experiment import UniRAPConfig, UniRAPResults, make_model, run
from .metrics import grasp_rectangle
from .model import decode
from .scenes import JAW, make_scene, resolve, tokenize


@functools.lru_cache(maxsize=1)
def _smoke_results() -> UniRAPResults:
    return run(UniRAPConfig.preset("smoke"))


class UniRAPLab:
    """The panel; ``UniRAPLab(results).widget`` is what the notebook displays (without ``results``, the
    models of a smoke run, trained once per process)."""

    def __init__(self, results: UniRAPResults | None = None):
        results = results if results is not None else _smoke_results()
        self.cfg = results.config
        self.models = {}
        for regime, state in results.curves["unified"]["lab_models"].items():
            model = make_model(self.cfg, [0], "unified")
            model.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})
            self.models[regime] = model.eval()
        style, lay = {"description_width": "110px"}, widgets.Layout(width="360px")
        clutter = min(self.cfg.max_clutter, 10)  # the training scenes' clutter (more is out of their range)
        first = make_scene(3, self.cfg.image_size, n_clutter=clutter, max_clutter=10).tools[0].name
        self.instruction = widgets.Text(value=f"grasp the {first} by its handle", description="instruction",
                                        continuous_update=False, style=style, layout=widgets.Layout(width="460px"))
        self.scene_seed = widgets.IntSlider(value=3, min=0, max=200, description="scene", style=style, layout=lay)
        self.clutter = widgets.IntSlider(value=clutter, min=0, max=10, description="clutter blobs", style=style,
                                         layout=lay)
        names = list(self.models)
        self.regime = widgets.ToggleButtons(options=names, value=names[0], description="model", style=style)
        self.show_truth = widgets.Checkbox(value=True, description="show the truth (dashed)", style=style)
        self.show_mask = widgets.Checkbox(value=True, description="show the predicted mask", style=style)
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="420px"))
        fig = Figure(figsize=(4.2, 4.2), dpi=72)
        FigureCanvasAgg(fig)
        self._fig, self._ax = fig, fig.add_axes((0.02, 0.02, 0.96, 0.9))
        for w in (self.instruction, self.scene_seed, self.clutter, self.regime):
            w.observe(self.rerun, names="value")
        for w in (self.show_truth, self.show_mask):
            w.observe(self.redraw, names="value")
        controls = widgets.VBox([self.instruction, widgets.HBox([self.scene_seed, self.clutter]), self.regime,
                                 widgets.HBox([self.show_truth, self.show_mask])])
        self.widget = widgets.VBox([controls, self.status, self.image])
        self._truth_artists: list = []
        self._mask_artist = None
        self.rerun()

    def predict(self, text: str):
        """The scene of the controls and the chosen model's prediction for ``text`` (errors propagate)."""
        s = self.cfg.image_size
        scene = make_scene(self.scene_seed.value, s, n_clutter=self.clutter.value, max_clutter=10)
        tool, part = resolve(scene, text)  # ValueError if the scene lacks the object or the object the part
        tokens = torch.as_tensor(tokenize(text))[None, None]
        with torch.no_grad(), one_cpu_thread():
            out = self.models[self.regime.value](torch.as_tensor(scene.image)[None, None], tokens)
        pred = {k: v[0, 0] for k, v in decode(out, s).items()}
        return scene, tool, part, pred

    def rerun(self, _change=None) -> None:
        """New scene or instruction or model: one forward pass, then draw."""
        try:
            scene, tool, part, pred = self.predict(self.instruction.value)
        except ValueError as err:
            self.status.value = f"<small><b>cannot ground this instruction:</b> {err}</small>"
            return
        self._draw(scene, tool, part, pred)
        self.status.value = (f"<small>objects: {', '.join(t.name for t in scene.tools)}; target: the {part} of the "
                             f"{tool.name}; model: {self.regime.value}</small>")
        self.redraw()

    def _draw(self, scene, tool, part, pred) -> None:
        ax, jaw = self._ax, JAW * self.cfg.image_size / 32
        ax.clear()
        ax.set_axis_off()
        ax.imshow(np.transpose(scene.image, (1, 2, 0)), interpolation="nearest")
        overlay = np.zeros((*pred["masks"].shape, 4))
        overlay[pred["masks"]] = (0.9, 0.66, 0.09, 0.6)
        self._mask_artist = ax.imshow(overlay, interpolation="nearest")
        x0, y0, x1, y1 = pred["boxes"] - 0.5
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, color=PALETTE["cyan"], lw=2))
        ax.add_patch(Polygon(grasp_rectangle(pred["grasps"], jaw) - 0.5, closed=True, fill=False,
                             color=PALETTE["red"], lw=2))
        t0, u0, t1, u1 = tool.box - 0.5
        self._truth_artists = [
            ax.add_patch(Rectangle((t0, u0), t1 - t0, u1 - u0, fill=False, color=PALETTE["cyan"], lw=1, ls="--")),
            ax.add_patch(Polygon(grasp_rectangle(tool.grasps[part], jaw) - 0.5, closed=True, fill=False,
                                 color=PALETTE["red"], lw=1, ls="--")),
            ax.contour(tool.parts[part].astype(float), levels=[0.5], colors=[PALETTE["gold"]], linewidths=1,
                       linestyles="dashed"),
        ]
        ax.set_title(f"“{self.instruction.value}”", fontsize=9)
        for artist in [self._mask_artist, *self._truth_artists]:  # drawn by redraw, over a cached background
            artist.set_animated(True)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)

    def redraw(self, _change=None) -> None:
        """Show or hide the truth and the predicted mask."""
        if not hasattr(self, "_background"):
            return
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        shown = ([self._mask_artist] if self.show_mask.value else []) + (self._truth_artists if self.show_truth.value
                                                                         else [])
        for artist in shown:
            self._ax.draw_artist(artist)
        self.image.value = canvas_png(canvas)


def benchmark_interactions(lab: UniRAPLab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py``: overlay toggles (redraws), and reruns."""
    lab = lab or UniRAPLab()
    tool = lab.instruction.value.split()[2]  # "grasp the <tool> by its handle"
    size = lab.cfg.image_size
    scenes = [k for k in range(4, 200)
              if tool in [t.name for t in make_scene(k, size, n_clutter=lab.clutter.value, max_clutter=10).tools]][:3]
    return interactions(
        redraw=[(lab.show_truth, (False, True) * 2), (lab.show_mask, (False, True))],
        rerun=[(lab.scene_seed, (*scenes, lab.scene_seed.value)), (lab.clutter, (8, lab.clutter.value)),
               (lab.regime, (*lab.regime.options[1:], lab.regime.options[0])),
               (lab.instruction, (f"pick up the {tool}", f"touch the handle of the {tool}"))],
    )
