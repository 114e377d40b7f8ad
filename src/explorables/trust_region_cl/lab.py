"""The live lab: trust-region radius, replay weight and task order; fine-tuning against TR-CL.

A rerun trains two small task-conditioned diffusion models side by side on three tasks in the
chosen order (one seed; fine-tuning and the trust-region method with the chosen radius and beta),
generating samples of every task seen after each one; the "after task" slider only redraws.
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
from .continual import METHODS, Member, Strengths, eval_batch, train_sequence
from .diffusion import Net, init_params, make_schedule
from .metrics import random_directions, sliced_wasserstein
from .tasks import TASK_LABELS, sample_task

ORDERS: dict[str, tuple[str, ...]] = {
    "gaussians → moons → circles": ("gaussians", "moons", "circles"),
    "circles → moons → gaussians": ("circles", "moons", "gaussians"),
    "spiral → checkerboard → moons": ("spiral", "checkerboard", "moons"),
}
LAB_METHODS: tuple[str, ...] = ("finetune", "trcl")
#: training steps per task of a rerun (150 until the budget pass: a rerun took up to 1.3 s on a loaded machine; 100
#: until the move to the Intel host, where a rerun took 1.1 s quiet, benchmarks/page_times_intel.md)
LAB_STEPS = 75
#: the radius slider's start (the lab's tiny model, not the book's tuned radius)
LAB_RADIUS = 0.01


class TrustRegionCLLab:
    """The panel; ``TrustRegionCLLab().widget`` is what the notebook displays."""

    def __init__(self, n_steps_per_task: int = LAB_STEPS, n_samples: int = 150, seed: int = 0):
        style, lay = {"description_width": "130px"}, widgets.Layout(width="340px")
        self.n_steps, self.n_samples, self.seed = n_steps_per_task, n_samples, seed
        self.trust = widgets.FloatLogSlider(
            value=LAB_RADIUS, base=10, min=-3, max=0, step=0.25, description="trust radius r", style=style, layout=lay
        )
        self.replay = widgets.FloatSlider(
            value=1.0, min=0.0, max=4.0, step=0.25, description="replay weight β", style=style, layout=lay
        )
        self.order = widgets.Dropdown(options=list(ORDERS), description="task order", style=style, layout=lay)
        self.after = widgets.IntSlider(value=3, min=1, max=3, description="after task", style=style, layout=lay)
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="720px"))
        fig = Figure(figsize=(7.2, 4.8), dpi=80)
        FigureCanvasAgg(fig)
        self._fig, self._axes = fig, fig.subplots(len(LAB_METHODS), 3)
        fig.subplots_adjust(left=0.12, right=0.98, bottom=0.03, top=0.92, wspace=0.05, hspace=0.12)
        for w in (self.trust, self.replay, self.order):
            w.observe(self.rerun, names="value")
        self.after.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.trust, self.replay, self.order, self.after],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(340px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def rerun(self, _change=None) -> None:
        """Train fine-tuning and TR-CL on the chosen order with the chosen strengths, then redraw."""
        tasks = ORDERS[self.order.value]
        self.status.value = "<small>training fine-tuning and TR-CL on three tasks …</small>"
        with one_cpu_thread():
            net, schedule = Net(2, len(tasks), width=48, depth=2), make_schedule(30)
            members = [Member(m, 0) for m in LAB_METHODS]
            params = init_params(net, [self.seed] * len(members))
            record = train_sequence(
                params,
                net,
                schedule,
                tasks,
                members,
                Strengths(replay_weight=self.replay.value, trust_radius=self.trust.value),
                n_seeds=1,
                n_steps_per_task=self.n_steps,
                batch_size=64,
                lr=1e-2,
                n_fisher=32,
                n_samples=self.n_samples,
                eval_set=eval_batch(tasks, 1, 8, 30, self.seed, "cpu"),
                seed=self.seed,
            )
            g = torch.Generator().manual_seed(self.seed + 1)
            real = torch.stack([sample_task(t, self.n_samples, g) for t in tasks])
            dirs = random_directions(32, 2, g)
            self.samples = [s.numpy() for s in record.samples]  # per k: (2, k + 1, n, 2)
            self.swd = [sliced_wasserstein(s, real[: s.shape[1]].expand_as(s), dirs).numpy() for s in record.samples]
        if tasks != getattr(self, "tasks", None):  # new titles: redraw the axes; else reuse the static background
            self.tasks = tasks
            self._draw_static()
        self.redraw()

    def _draw_static(self) -> None:
        for i, m in enumerate(LAB_METHODS):
            for j, t in enumerate(self.tasks):
                ax = self._axes[i, j]
                ax.clear()
                ax.set(xlim=(-3, 3), ylim=(-3, 3), xticks=[], yticks=[])
                if i == 0:
                    ax.set_title(TASK_LABELS[t], fontsize=10)
                if j == 0:
                    ax.set_ylabel(METHODS[m].label, fontsize=9)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        colours = (PALETTE["blue"], PALETTE["green"])
        self._dots = [
            [self._axes[i, j].scatter([], [], s=3, color=colours[i]) for j in range(3)] for i in range(len(LAB_METHODS))
        ]

    def redraw(self, _change=None) -> None:
        """Show the samples generated after the chosen task (blitting onto the static axes)."""
        k = self.after.value - 1
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        for i in range(len(LAB_METHODS)):
            for j in range(3):
                dots = self._dots[i][j]
                dots.set_offsets(self.samples[k][i, j] if j <= k else np.empty((0, 2)))
                dots.axes.draw_artist(dots)
        self.image.value = canvas_png(canvas)
        parts = [
            f"{METHODS[m].label}: "
            + ", ".join(f"{TASK_LABELS[self.tasks[j]]} {self.swd[k][i, j]:.2f}" for j in range(k + 1))
            for i, m in enumerate(LAB_METHODS)
        ]
        self.status.value = (
            f"<small>after task {k + 1}, sliced Wasserstein to real data (lower: better): "
            + "; ".join(parts)
            + "</small>"
        )


def benchmark_interactions(lab: TrustRegionCLLab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py``: slider redraws, and reruns of the training."""
    lab = lab or TrustRegionCLLab()
    return interactions(
        redraw=[(lab.after, (1, 2, 3) * 4)],
        rerun=[(lab.trust, (1.0, 0.01)), (lab.replay, (0.0, 1.0)), (lab.order, tuple(ORDERS)[1::-1])],
    )
