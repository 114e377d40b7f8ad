"""The live lab: choose which influences change, the number of environments, the noise family and
the post-nonlinearity; a causal-prior VAE and a plain VAE are trained side by side on fresh data.

A rerun draws one latent model and its data (100 samples per environment), trains the two VAEs
for ``n_steps`` Adam steps as one ensemble (the status line says when it is training) and scores
each latent after the optimal matching, next to the chance level of the drawn latents (random
rotations of the whitened latents) and chance + the recovery margin; the "show component" buttons
only redraw the scatter of a true latent against the causal model's matched estimate.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from scipy.optimize import linear_sum_assignment

from ..core.figures import PALETTE, color
from ..core.labs import canvas_png, interactions
from ..core.threads import one_cpu_thread
from .claims import ABOVE_CHANCE
from .experiment import CRLConfig, chance_mcc
from .metrics import correlation_matrix
from .model import encode_means, fit
from .scm import NOISE_FAMILIES, default_graph, make_data, make_scm

EDGES: tuple[tuple[int, int], ...] = ((0, 1), (1, 2), (0, 2))
#: the book preset, whose learner schedule the lab reuses
BOOK = CRLConfig.preset("book")
#: random rotations behind the lab's chance level (fewer than the page's: a rerun must stay under a second)
LAB_ROTATIONS = 200


class CRLLab:
    """The panel; ``CRLLab().widget`` is what the notebook displays."""

    def __init__(self, n_steps: int = 150, n_per_env: int = 100, seed: int = 0):
        self.n_steps, self.n_per_env, self.seed = n_steps, n_per_env, seed
        style, lay = {"description_width": "120px"}, widgets.Layout(width="300px")
        self.changes = [
            widgets.Checkbox(value=True, description=f"z{j}→z{i} changes", style=style, layout=lay) for j, i in EDGES
        ]
        self.n_envs = widgets.IntSlider(value=10, min=3, max=20, description="environments", style=style, layout=lay)
        self.noise = widgets.Dropdown(
            options=NOISE_FAMILIES, value="gaussian", description="noise", style=style, layout=lay
        )
        self.post_nonlinear = widgets.Checkbox(value=False, description="post-nonlinear", style=style, layout=lay)
        self.component = widgets.ToggleButtons(
            options=[("z0", 0), ("z1", 1), ("z2", 2)], value=2, description="show component", style=style
        )
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        fig = Figure(figsize=(9.0, 3.4), dpi=80)
        FigureCanvasAgg(fig)
        self._fig, (self._ax_bars, self._ax_scatter) = fig, fig.subplots(1, 2)
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.88, wspace=0.25)
        for w in (*self.changes, self.n_envs, self.noise, self.post_nonlinear):
            w.observe(self.rerun, names="value")
        self.component.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [*self.changes, self.n_envs, self.noise, self.post_nonlinear],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(300px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.component, self.status, self.image])
        self.rerun()

    def rerun(self, _change=None) -> None:
        """Draw a model and data with the chosen settings, train both VAEs, score them, redraw."""
        self.status.value = f"<small>training two VAEs for {self.n_steps} steps …</small>"
        graph = default_graph(3)
        changing = {e for e, box in zip(EDGES, self.changes, strict=True) if box.value}
        rng = np.random.default_rng(self.seed)
        scm = make_scm(
            graph,
            changing,
            self.n_envs.value,
            rng,
            noise=self.noise.value,
            post_nonlinear=self.post_nonlinear.value,
            scale_range=BOOK.noise_scales,
        )
        data = make_data(scm, self.n_per_env, 10, rng)
        kind = "spearman" if self.post_nonlinear.value else "pearson"
        with one_cpu_thread():
            x = torch.tensor(np.stack([data.x, data.x]), dtype=torch.float32)
            env = torch.tensor(np.stack([data.env, data.env]))
            model = fit(
                x,
                env,
                ("causal", "plain"),
                scm.n_envs,
                3,
                seeds=(self.seed + 1, self.seed + 1),
                n_steps=self.n_steps,
                lr=1e-2,
                obs_std_start=BOOK.obs_std_start,  # the book preset's schedule
                warmup=BOOK.warmup,
                cosine=BOOK.cosine,
                sparsity=BOOK.sparsity,
            )
            means = encode_means(model, x, env)
        self.scores, self.matched = [], []
        for k in range(2):
            corr = correlation_matrix(data.z, means[k], kind)
            rows, cols = linear_sum_assignment(-corr)
            self.scores.append(corr[rows, cols])
            self.matched.append(means[k][:, cols])
        self.truth, self.identifiable = data.z, scm.identifiable()
        # the chance level of these latents: median MCC of random rotations of the whitened latents
        self.chance = chance_mcc(data.z, LAB_ROTATIONS, self.seed, kind)
        self._draw_static()
        self.redraw()

    def _draw_static(self) -> None:
        ax, sc = self._ax_bars, self._ax_scatter
        ax.clear()
        sc.clear()
        width = 0.38
        for k, label in enumerate(("causal prior", "plain VAE")):
            ax.bar(np.arange(3) + (k - 0.5) * width, self.scores[k], width, color=color(k), label=label)
        ax.set_xticks(
            range(3), [f"z{i} ({'ident.' if b else 'not ident.'})" for i, b in enumerate(self.identifiable)], fontsize=8
        )
        ax.axhline(self.chance, color=PALETTE["grey"], ls=":", lw=1, label="chance")
        ax.axhline(self.chance + ABOVE_CHANCE, color=PALETTE["grey"], ls="--", lw=1, label=f"chance + {ABOVE_CHANCE}")
        ax.set(ylim=(0, 1.05), title="|correlation| after matching")
        ax.legend(fontsize=8, loc="lower right")
        sc.set(
            xlim=(-3.5, 3.5),
            ylim=(-3.5, 3.5),
            xlabel="true latent (standardised)",
            ylabel="causal model's matched latent",
        )
        for a in (ax, sc):
            a.tick_params(labelsize=8)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        self._points = sc.scatter([], [], s=3, color=PALETTE["blue"], alpha=0.4)

    def redraw(self, _change=None) -> None:
        """Scatter the chosen true latent against the causal model's matched estimate (blitted)."""
        i = self.component.value
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        t, e = self.truth[:, i], self.matched[0][:, i]
        t, e = (t - t.mean()) / t.std(), (e - e.mean()) / max(e.std(), 1e-9)
        e = e * np.sign(np.corrcoef(t, e)[0, 1] or 1.0)
        self._points.set_offsets(np.column_stack([t, e]))
        self._ax_scatter.draw_artist(self._points)
        self.image.value = canvas_png(canvas)
        self.status.value = (
            f"<small>MCC causal prior {self.scores[0].mean():.2f}, plain VAE {self.scores[1].mean():.2f} "
            f"(chance {self.chance:.2f}); "
            f"z{i}: {self.scores[0][i]:.2f} vs {self.scores[1][i]:.2f} "
            f"(theory: {'identifiable' if self.identifiable[i] else 'not identifiable'})</small>"
        )


def benchmark_interactions(lab: CRLLab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py``: component redraws, and reruns of the training."""
    lab = lab or CRLLab()
    return interactions(
        redraw=[(lab.component, (0, 1, 2) * 4)],
        rerun=[(lab.changes[1], (False, True)), (lab.noise, ("laplace", "gaussian"))],
    )
