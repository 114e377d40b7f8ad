"""The live lab: pick a loss, its noise scale, weight and horizon; train a small pendulum model and roll it out.

A rerun trains one small hybrid model (width 16) for ``n_steps`` Adam steps on pre-generated
pendulum data (the status line shows progress), measures the cosine of its loss's gradient with
the K-step unrolled gradient at the start and at the end of training, and rolls the model out;
the "show up to t" slider only redraws.
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
from .losses import METHOD_LABELS, METHODS
from .metrics import blow_up_step, rollout
from .models import make_model
from .systems import pendulum
from .training import gradient_cosines, sample_windows, train


class StableNDELab:
    """The panel; ``StableNDELab().widget`` is what the notebook displays."""

    def __init__(self, n_steps: int = 80, rollout_steps: int = 500, n_curves: int = 4, seed: int = 0):
        style, lay = {"description_width": "120px"}, widgets.Layout(width="330px")
        self.n_steps, self.rollout_steps, self.seed = n_steps, rollout_steps, seed
        self.system = pendulum(dt=0.2)
        with one_cpu_thread():
            self.data = self.system.trajectories(24, 80, torch.Generator().manual_seed(seed)).unsqueeze(0)
            self.x0 = self.system.trajectories(n_curves, 1, torch.Generator().manual_seed(seed + 1))[:, 0]
            self.truth = rollout(self.system, self.x0, rollout_steps).numpy()
        self.method = widgets.Dropdown(
            options=[(METHOD_LABELS[m], m) for m in METHODS],
            value="complete",
            description="loss",
            style=style,
            layout=lay,
        )
        self.noise_std = widgets.FloatLogSlider(
            value=0.05, base=10, min=-3, max=0, step=0.1, description="noise scale σ", style=style, layout=lay
        )
        self.weight = widgets.FloatLogSlider(
            value=1.0, base=10, min=-2, max=3, step=0.25, description="Jacobian weight λ", style=style, layout=lay
        )
        self.horizon = widgets.IntSlider(value=8, min=1, max=16, description="horizon K", style=style, layout=lay)
        self.window = widgets.IntSlider(
            value=rollout_steps,
            min=1,
            max=rollout_steps,
            step=10,
            description="show up to step",
            style=style,
            layout=lay,
        )
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        fig = Figure(figsize=(9.0, 3.6), dpi=80)
        FigureCanvasAgg(fig)
        self._fig, (self._ax_phase, self._ax_energy) = fig, fig.subplots(1, 2)
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.9, wspace=0.25)
        for w in (self.method, self.noise_std, self.weight, self.horizon):
            w.observe(self.rerun, names="value")
        self.window.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.method, self.noise_std, self.weight, self.horizon, self.window],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(330px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def rerun(self, _change=None) -> None:
        """Train a fresh model with the chosen loss, measure gradient alignment, roll it out, redraw."""
        method, k = self.method.value, self.horizon.value
        self.status.value = f"<small>training with {METHOD_LABELS[method]} …</small>"
        with one_cpu_thread():
            model = make_model(self.system, 1, width=16, depth=2, seeds=(self.seed,))
            windows = sample_windows(self.data, 32, k, torch.Generator().manual_seed(self.seed + 2))
            opts = dict(noise_std=self.noise_std.value, weight=self.weight.value, jvp_mode="difference")
            cheap = () if method == "unrolled" else (method,)
            before = gradient_cosines(model, windows, methods=cheap, **opts) if cheap else {}
            train(
                model,
                self.data,
                method,
                n_steps=self.n_steps,
                batch_size=64,
                horizon=k,
                lr=1e-2,
                data_seed=self.seed,
                **opts,
            )
            after = gradient_cosines(model, windows, methods=cheap, **opts) if cheap else {}
            traj = rollout(model, self.x0.unsqueeze(0), self.rollout_steps)[:, 0]
            self.blow = blow_up_step(traj, self.system.blow_up_radius).numpy()
            self.traj = traj.numpy()
            h = self.system.energy(traj)
            self.drift = (h - h[:1]).abs().numpy()
        self.cosines = (float(before[method][0]), float(after[method][0])) if cheap else None
        self._draw_static()
        self.redraw()

    def _draw_static(self) -> None:
        ax_p, ax_e = self._ax_phase, self._ax_energy
        ax_p.clear()
        ax_e.clear()
        for k in range(self.truth.shape[1]):
            ax_p.plot(self.truth[:, k, 0], self.truth[:, k, 1], color=PALETTE["grey"], lw=2, alpha=0.4)
        ax_p.set(xlim=(-3.5, 3.5), ylim=(-2.5, 2.5), xlabel="q", ylabel="p", title="phase portrait (grey: truth)")
        ax_e.set(
            yscale="log",
            ylim=(1e-6, 10),
            xlim=(0, self.rollout_steps * self.system.dt),
            xlabel="time",
            title="|H(t) − H(0)| per rollout",
        )
        for ax in (ax_p, ax_e):
            ax.tick_params(labelsize=8)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        self._lines = [ax_p.plot([], [], color=PALETTE["blue"], lw=1)[0] for _ in range(self.traj.shape[1])]
        self._energy = [ax_e.plot([], [], color=PALETTE["red"], lw=1)[0] for _ in range(self.traj.shape[1])]

    def redraw(self, _change=None) -> None:
        """Draw the rollouts up to the "show up to step" slider (blitting on the static background)."""
        t = self.window.value
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        time = np.arange(t + 1) * self.system.dt
        for k, (line, energy) in enumerate(zip(self._lines, self._energy, strict=True)):
            pts = self.traj[: t + 1, k]
            line.set_data(pts[:, 0], pts[:, 1])
            energy.set_data(time, np.maximum(self.drift[: t + 1, k], 1e-9))
            line.axes.draw_artist(line)
            energy.axes.draw_artist(energy)
        self.image.value = canvas_png(canvas)
        blown = int((self.blow <= t).sum())
        cos = (
            ""
            if self.cosines is None
            else f"; cosine with the K-step unrolled gradient: {self.cosines[0]:.2f} at the start, "
            f"{self.cosines[1]:.2f} after training"
        )
        self.status.value = (
            f"<small>{METHOD_LABELS[self.method.value]}: {blown}/{len(self.blow)} rollouts "
            f"blown up by step {t}{cos}</small>"
        )


def benchmark_interactions(lab: StableNDELab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py``: slider redraws, and reruns of the training."""
    lab = lab or StableNDELab()
    return interactions(
        redraw=[(lab.window, (100, 250, 400, 500) * 3)],
        rerun=[
            (lab.method, ("one_step", "noise_rollout", "complete")),
            (lab.noise_std, (0.2, 0.05)),
            (lab.horizon, (4, 8)),
        ],
    )
