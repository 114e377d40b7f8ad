"""The live lab: prototypes K, temperature tau, branch weights, student type and class count.

A rerun trains three students side by side (CE, KD and RPKD; one seed) for ``n_steps`` steps
against a teacher trained once per class count when the lab opens, and shows their test
accuracy; the "prototype" slider only redraws: it shows, for four test images, where that
prototype fires in the teacher's map and in the RPKD student's map (eq. rpkd-map).
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import color
from ..core.labs import canvas_png, interactions
from ..core.threads import one_cpu_thread
from .data import load_digits_task, make_split, student_labels, super_labels
from .losses import RandomPrototypes, activation_maps
from .models import STUDENTS
from .training import ARM_LABELS, LossWeights, accuracy, teacher_targets, train_students, train_teachers

LAB_ARMS = ("ce", "kd", "rpkd")
N_SHOWN = 4


class RPKDLab:
    """The panel; ``RPKDLab().widget`` is what the notebook displays."""

    def __init__(self, n_steps: int = 25, n_labelled: int = 50, seed: int = 0):
        style, lay = {"description_width": "130px"}, widgets.Layout(width="330px")
        self.n_steps, self.n_labelled, self.seed = n_steps, n_labelled, seed
        task = load_digits_task()
        split = make_split(len(task.fine), 497, n_labelled, seed)
        self.x_train, self.fine_train = task.images[split.train], task.fine[split.train]
        self.x_test, self.fine_test = task.images[split.test], task.fine[split.test]
        self.teachers: dict[int, tuple] = {}
        self.classes = widgets.Dropdown(options=[10, 5, 2], value=2, description="classes C", style=style, layout=lay)
        self.student = widgets.Dropdown(options=list(STUDENTS), value="mixer", description="student", style=style,
                                        layout=lay)
        self.n_prototypes = widgets.Dropdown(options=[8, 32, 64, 256], value=64, description="prototypes K",
                                             style=style, layout=lay)
        self.tau = widgets.FloatLogSlider(value=0.2, base=10, min=-2, max=0, step=0.1, description="temperature τ",
                                          style=style, layout=lay)
        self.glob_weight = widgets.FloatSlider(value=1.0, min=0, max=5, step=0.25, description="global weight β",
                                               style=style, layout=lay)
        self.map_weight = widgets.FloatSlider(value=1.0, min=0, max=5, step=0.25, description="map weight γ",
                                              style=style, layout=lay)
        self.prototype = widgets.IntSlider(value=0, min=0, max=63, description="show prototype", style=style,
                                           layout=lay)
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        fig = Figure(figsize=(9.0, 3.4), dpi=80)
        FigureCanvasAgg(fig)
        self._fig = fig
        grid = fig.add_gridspec(2, 1 + N_SHOWN, width_ratios=[2.2] + [1] * N_SHOWN)
        self._ax_bar = fig.add_subplot(grid[:, 0])
        self._ax_maps = [[fig.add_subplot(grid[r, 1 + i]) for i in range(N_SHOWN)] for r in range(2)]
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.12, top=0.88, wspace=0.25, hspace=0.35)
        for w in (self.classes, self.student, self.n_prototypes, self.tau, self.glob_weight, self.map_weight):
            w.observe(self.rerun, names="value")
        self.prototype.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.classes, self.student, self.n_prototypes, self.tau, self.glob_weight, self.map_weight,
             self.prototype],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(330px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def rerun(self, _change=None) -> None:
        """Train CE, KD and RPKD students side by side with the chosen settings, then redraw."""
        c, k, tau = self.classes.value, self.n_prototypes.value, self.tau.value
        self.status.value = "<small>training three students …</small>"
        with one_cpu_thread():
            teacher, t_logits, t_tokens = self.teacher(c)
            prototypes = RandomPrototypes(k, 32, t_tokens.shape[-1], self.seed + 7)
            labels = student_labels(self.fine_train, self.n_labelled, c)[None]
            weights = LossWeights(glob=self.glob_weight.value, map=self.map_weight.value)
            model, _ = train_students(
                self.student.value, LAB_ARMS, self.x_train[None], labels, t_logits, t_tokens, prototypes, weights,
                width=16, grid=4, n_steps=self.n_steps, batch_size=48, lr=1e-2, temperature=4.0, tau=tau, ofa_eps=1.5,
                seed=self.seed, device=torch.device("cpu"),
            )
            y_test = super_labels(self.fine_test, c)[None]
            self.acc = accuracy(model, self.x_test[None], y_test, len(LAB_ARMS)).numpy()
            self.teacher_acc = float(accuracy(teacher, self.x_test[None], y_test)[0])
            shown = self.x_test[:N_SHOWN][None].expand(len(LAB_ARMS), -1, -1, -1, -1)
            _, z_student, _ = model(shown, 4)
            _, t_shown = teacher_targets(teacher, self.x_test[:N_SHOWN][None], 4, reference=self.x_train[None])
            with torch.no_grad():
                self.maps_teacher = activation_maps(prototypes.project_teacher(t_shown[0]), prototypes.prototypes,
                                                    tau).exp().numpy()
                self.maps_student = activation_maps(z_student[LAB_ARMS.index("rpkd")], prototypes.prototypes,
                                                    tau).exp().numpy()
        self.prototype.max = k - 1
        self._draw_static()
        self.redraw()

    def teacher(self, n_classes: int) -> tuple:
        """The CNN teacher of ``C = n_classes`` and its targets, trained on first use and then kept."""
        if n_classes not in self.teachers:
            teacher = train_teachers(self.x_train[None], super_labels(self.fine_train, n_classes)[None], n_classes,
                                     width=8, n_steps=100, batch_size=64, lr=1e-2, seed=self.seed + n_classes,
                                     device=torch.device("cpu"))
            self.teachers[n_classes] = (teacher, *teacher_targets(teacher, self.x_train[None], 4))
        return self.teachers[n_classes]

    def _draw_static(self) -> None:
        ax = self._ax_bar
        ax.clear()
        ax.bar(range(len(LAB_ARMS)), self.acc, color=[color(i) for i in (0, 1, 3)])
        ax.axhline(self.teacher_acc, color="grey", ls=":", lw=1)
        ax.set_xticks(range(len(LAB_ARMS)), [ARM_LABELS[a] for a in LAB_ARMS], fontsize=8)
        ax.set(ylim=(0, 1), title=f"test accuracy, C = {self.classes.value}")
        ax.tick_params(labelsize=8)
        for r, row in enumerate(self._ax_maps):
            for i, a in enumerate(row):
                a.clear()
                a.set_xticks([])
                a.set_yticks([])
                a.set_title(("teacher" if r == 0 else "RPKD student") + f" #{i}", fontsize=7)
        self._images = [[a.imshow(np.zeros((4, 4)), vmin=0, vmax=1, cmap="viridis", animated=True) for a in row]
                        for row in self._ax_maps]
        self._fig.canvas.draw()  # everything but the maps; redraw blits the maps onto this background
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)

    def redraw(self, _change=None) -> None:
        """Show where the chosen prototype fires (its activation map) on four test images."""
        k = min(self.prototype.value, self.maps_teacher.shape[1] - 1)
        self._fig.canvas.restore_region(self._background)
        for r, maps in enumerate((self.maps_teacher, self.maps_student)):
            for i in range(N_SHOWN):
                m = maps[i, k].reshape(4, 4)
                image = self._images[r][i]
                image.set_data(m / max(m.max(), 1e-12))
                image.axes.draw_artist(image)
        self.image.value = canvas_png(self._fig.canvas)
        acc = ", ".join(f"{ARM_LABELS[a]} {v:.3f}" for a, v in zip(LAB_ARMS, self.acc, strict=True))
        self.status.value = f"<small>{acc}; teacher {self.teacher_acc:.3f}; prototype {k}</small>"


def benchmark_interactions(lab: RPKDLab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py``: prototype redraws, and reruns of the training."""
    lab = lab or RPKDLab()
    return interactions(
        redraw=[(lab.prototype, (3, 10, 20, 40) * 2)],
        rerun=[(lab.classes, (5, 2)), (lab.tau, (0.5, 0.2)), (lab.student, ("cnn", "mixer"))],
    )
