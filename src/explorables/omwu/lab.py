"""The live lab: an ipywidgets panel that re-runs OMWU on the reader's game and settings.

Changing the game, ``eta``, ``T``, the start or the method re-runs the dynamics (a few
thousand steps of one small game: well under a second); moving the "show up to t" slider only
redraws. The four panels are drawn with matplotlib into an ``ipywidgets.Image`` so that the
panel's last state survives on the static website (without a kernel, the controls do not
respond; the page says so).
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..core.labs import canvas_png, interactions
from . import metrics as M
from .dynamics import omwu_numpy
from .equilibrium import solve_nash
from .games import (
    biased_rock_paper_scissors,
    hard_game,
    matching_pennies,
    random_interior_game,
    rock_paper_scissors,
)

GAMES = ("A_delta (hard 2x2)", "matching pennies", "rock-paper-scissors", "biased RPS", "random 4x4, interior NE")


def make_game(name: str, delta: float = 0.05, seed: int = 0) -> np.ndarray:
    """The payoff matrix of one of the lab's games (see :data:`GAMES`)."""
    if name == GAMES[0]:
        return hard_game(delta)
    if name == GAMES[1]:
        return matching_pennies()
    if name == GAMES[2]:
        return rock_paper_scissors()
    if name == GAMES[3]:
        return biased_rock_paper_scissors(3.0)
    if name == GAMES[4]:
        return random_interior_game(4, seed)[0]
    raise ValueError(f"game must be one of {GAMES}, got {name!r}")


def start_point(size: int, first: float) -> np.ndarray:
    """A start with mass ``first`` on action 1 and the rest spread evenly."""
    rest = (1.0 - first) / (size - 1)
    return np.r_[first, np.full(size - 1, rest)]


@dataclass
class LabRun:
    """One run of the lab: the metrics over time, for drawing."""

    steps: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    x_star: np.ndarray
    y_star: np.ndarray
    energy: np.ndarray
    predicted: np.ndarray
    kl_x: np.ndarray
    kl_y: np.ndarray
    gap: np.ndarray
    min_x: np.ndarray


def compute(
    game: str, delta: float, eta: float, steps: int, x_first: float, y_first: float, method: str = "omwu", seed: int = 0
) -> LabRun:
    """Run one game (numpy path) and compute everything the panel shows."""
    A = make_game(game, delta, seed)
    eq = solve_nash(A)
    n, m = A.shape
    log_x, log_y = omwu_numpy(A, eta, steps, start_point(n, x_first), start_point(m, y_first), method)
    log_x, log_y = torch.from_numpy(log_x[:, None]), torch.from_numpy(log_y[:, None])  # batch of one
    x, y, A_b = log_x.exp(), log_y.exp(), torch.from_numpy(A[None])
    E = M.energy(log_x, log_y, eq.x, eq.y)[:, 0].numpy()
    pred = M.predicted_dissipation(A_b, x[:-1], y[:-1], eq.x, eq.y, eta)[:, 0].numpy()
    return LabRun(
        steps=np.arange(steps + 1),
        x1=x[:, 0, 0].numpy(),
        y1=y[:, 0, 0].numpy(),
        x_star=eq.x,
        y_star=eq.y,
        energy=E,
        predicted=np.r_[E[:2], E[1] + np.cumsum(pred[1:])],
        kl_x=M.kl_from_log(eq.x, log_x)[:, 0].numpy(),
        kl_y=M.kl_from_log(eq.y, log_y)[:, 0].numpy(),
        gap=M.duality_gap(A_b, x, y)[:, 0].numpy(),
        min_x=x.amin(-1)[:, 0].numpy(),
    )


class OMWULab:
    """The panel. ``OMWULab().widget`` is what the notebook displays."""

    def __init__(self, game: str = GAMES[0], delta: float = 0.05, eta: float = 0.1, steps: int = 5_000):
        style = {"description_width": "110px"}
        lay = widgets.Layout(width="340px")
        self.game = widgets.Dropdown(options=GAMES, value=game, description="game", style=style, layout=lay)
        self.delta = widgets.FloatLogSlider(
            value=delta,
            base=10,
            min=-3,
            max=-0.31,
            step=0.05,
            description="δ (A_delta)",
            style=style,
            layout=lay,
            readout_format=".3f",
        )
        self.eta = widgets.FloatSlider(
            value=eta, min=0.01, max=0.5, step=0.01, description="step size η", style=style, layout=lay
        )
        self.steps = widgets.IntSlider(
            value=steps, min=100, max=15_000, step=100, description="iterations T", style=style, layout=lay
        )
        self.x_first = widgets.FloatSlider(
            value=0.5, min=0.02, max=0.98, step=0.02, description="start x₁", style=style, layout=lay
        )
        self.y_first = widgets.FloatSlider(
            value=0.5, min=0.02, max=0.98, step=0.02, description="start y₁", style=style, layout=lay
        )
        self.method = widgets.ToggleButtons(
            options=[("OMWU", "omwu"), ("MWU", "mwu")], value="omwu", description="method", style=style
        )
        self.window = widgets.IntSlider(
            value=steps, min=1, max=steps, step=1, description="show up to t", style=style, layout=lay
        )
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        self.status = widgets.HTML()
        self._build_figure()
        self.run: LabRun | None = None

        for w in (self.game, self.delta, self.eta, self.steps, self.x_first, self.y_first, self.method):
            w.observe(self.rerun, names="value")
        self.window.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.game, self.method, self.delta, self.eta, self.steps, self.window, self.x_first, self.y_first],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(340px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def _build_figure(self) -> None:
        """Create the figure and its artists once; redraws only move their data."""
        fig = Figure(figsize=(9.5, 6.2), dpi=80)
        FigureCanvasAgg(fig)
        axes = fig.subplots(2, 2)
        fig.subplots_adjust(hspace=0.35, wspace=0.25, left=0.08, right=0.98, top=0.94, bottom=0.08)
        (ax_traj, ax_e), (ax_kl, ax_gap) = axes
        self._fig, self._axes = fig, axes
        self._lines = {
            "traj": ax_traj.plot([], [], lw=0.8)[0],
            "nash": ax_traj.plot([], [], "r*", ms=12, label="Nash")[0],
            "now": ax_traj.plot([], [], "ko", ms=4)[0],
            "energy": ax_e.plot([], [], label="measured")[0],
            "predicted": ax_e.plot([], [], "--", label="predicted (2nd order)")[0],
            "kl_x": ax_kl.plot([], [], label="KL(x*‖x_t)")[0],
            "kl_y": ax_kl.plot([], [], label="KL(y*‖y_t)")[0],
            "min_x": ax_kl.plot([], [], ":", label="min_i x_t,i")[0],
            "gap": ax_gap.plot([], [])[0],
        }
        ax_traj.set(xlim=(0, 1), ylim=(0, 1), xlabel="x₁", ylabel="y₁", title="trajectory")
        ax_e.set(title="energy  KL(x*‖x)+KL(y*‖y)", xlabel="t", yscale="log")
        ax_kl.set(title="per-player KL and min_i x_t,i", xlabel="t", yscale="log")
        ax_gap.set(title="duality gap", xlabel="t", yscale="log")
        ax_e.legend(fontsize=8, loc="lower left")
        ax_kl.legend(fontsize=8, loc="lower left")
        for ax in axes.flat:
            ax.xaxis.set_major_locator(MaxNLocator(5))
            ax.tick_params(labelsize=8)

    def rerun(self, _change=None) -> None:
        """Re-run the dynamics with the current controls, fix the axes to the whole run, redraw."""
        self.delta.disabled = self.game.value != GAMES[0]
        self.run = compute(
            self.game.value,
            self.delta.value,
            self.eta.value,
            self.steps.value,
            self.x_first.value,
            self.y_first.value,
            self.method.value,
        )
        # Axes are scaled to the whole run once, so scrubbing through time keeps them still
        # and a redraw only has to paint the curves over a cached background (blitting).
        self._set_data(len(self.run.steps))
        for ax in self._axes.flat[1:]:
            ax.relim()
            ax.autoscale_view()
        for line in self._lines.values():
            line.set_visible(False)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        for key, line in self._lines.items():
            line.set_visible(key != "predicted" or self.method.value == "omwu")
        with self.window.hold_trait_notifications():
            self.window.max = self.steps.value
            self.window.value = self.steps.value
        self.redraw()

    def _set_data(self, k: int) -> None:
        """Give every curve the data of the first ``k`` recorded steps (thinned to <= 1500 points)."""
        r = self.run
        k = max(k, 2)
        sl = slice(0, k, max(1, k // 1500))
        t = r.steps[sl]
        lines = self._lines
        lines["traj"].set_data(r.x1[sl], r.y1[sl])
        lines["nash"].set_data([r.x_star[0]], [r.y_star[0]])
        lines["now"].set_data([r.x1[k - 1]], [r.y1[k - 1]])
        for key, values in (
            ("energy", r.energy),
            ("predicted", r.predicted),
            ("kl_x", r.kl_x),
            ("kl_y", r.kl_y),
            ("min_x", r.min_x),
            ("gap", r.gap),
        ):
            lines[key].set_data(t, np.maximum(values[sl], 1e-300))  # log axes need values > 0

    def redraw(self, _change=None) -> None:
        """Redraw the curves up to the "show up to t" slider, without re-running."""
        r = self.run
        k = max(int(np.searchsorted(r.steps, self.window.value, side="right")), 2)
        self._set_data(k)
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        for line in self._lines.values():
            if line.get_visible():
                line.axes.draw_artist(line)
        self.image.value = canvas_png(canvas)
        self.status.value = (
            f"<small>t={int(r.steps[k - 1])}: energy {r.energy[k - 1]:.3g}, gap {r.gap[k - 1]:.3g}, "
            f"min<sub>i</sub> x<sub>t,i</sub> {r.min_x[k - 1]:.2g}</small>"
        )


def benchmark_interactions(lab: OMWULab | None = None) -> dict[str, list]:
    """The reader's interactions that ``benchmarks/run.py`` times: the time slider only redraws;
    eta, delta, the game and the horizon re-run the method (the last one at the slowest setting)."""
    lab = lab or OMWULab()
    return interactions(
        redraw=[(lab.window, (500, 1500, 2500, 3500, 4500) * 4)],
        rerun=[
            (lab.eta, (0.12, 0.2, 0.3, 0.15)),
            (lab.delta, (0.01, 0.1, 0.003)),
            (lab.game, (*GAMES[1:], GAMES[0])),
            (lab.steps, (15_000,)),
        ],
    )
