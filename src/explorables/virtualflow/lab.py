"""The live lab: move the virtual mic, change the room and the noise, the sampler's steps and reflow.

On start the lab trains a small set of models (Virtual-Flow, its reflow, the supervised reference)
on a few rooms with 2 real mics (and held-out mics for the training pseudo-targets); changing the
number of mics trains a new set (a few seconds, the
status line says so). Every other control re-simulates one room (pyroomacoustics), rebuilds the
pseudo-target, samples Virtual-Flow and runs the MVDR beamformer as the experiment does (cross-fitted
steering, scored on the speech part): real mics alone, with a random channel (the control: no
information), with the virtual channel, and with a physical microphone at the virtual spot; "compare
with" only redraws.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.labs import canvas_png, interactions
from ..core.threads import one_cpu_thread
from .data import make_example, nearest_mic
from .downstream import si_sdr
from .experiment import (
    Models,
    VirtualFlowConfig,
    beam_score,
    beamform,
    build_example,
    estimate,
    random_channel,
    train_models,
)
from .scenes import random_scene, simulate

SHOW = (
    ("Virtual-Flow", "flow"),
    ("pseudo-target", "pseudo"),
    ("nearest real mic", "nearest"),
    ("supervised (trained with the truth)", "supervised"),
)


class VirtualFlowLab:
    """The panel; ``VirtualFlowLab().widget`` is what the notebook displays."""

    def __init__(self, seed: int = 0, n_scenes: int = 4, n_steps: int = 150):
        import torch

        self.torch = torch
        self.seed = seed
        self.cfg = VirtualFlowConfig.preset(
            "smoke",
            seeds=(0,),
            n_train_scenes=n_scenes,
            n_train_steps=n_steps,
            n_regression_steps=n_steps // 2,
            n_supervised_steps=n_steps // 2,
            n_reflow_steps=n_steps // 2,
            d_hidden=32,
            clip_s=1.0,
            seed=seed,
        )
        self.models: dict[int, Models] = {}
        style, lay = {"description_width": "110px"}, widgets.Layout(width="320px")
        self.distance = widgets.FloatSlider(
            value=0.25, min=0.1, max=0.4, step=0.01, description="VM distance (m)", style=style, layout=lay
        )
        self.angle = widgets.IntSlider(
            value=45, min=0, max=359, step=15, description="VM angle (°)", style=style, layout=lay
        )
        self.n_mics = widgets.IntSlider(value=2, min=2, max=4, description="real mics", style=style, layout=lay)
        self.snr = widgets.FloatSlider(
            value=0.0, min=-10.0, max=20.0, step=1.0, description="SNR (dB)", style=style, layout=lay
        )
        self.rt60 = widgets.FloatSlider(
            value=0.2, min=0.15, max=0.4, step=0.05, description="RT60 (s)", style=style, layout=lay
        )
        self.steps = widgets.SelectionSlider(
            options=[1, 2, 4, 8], value=4, description="Euler steps", style=style, layout=lay
        )
        self.reflow = widgets.Checkbox(value=False, description="use the reflowed model", style=style, layout=lay)
        self.show = widgets.Dropdown(options=SHOW, value="flow", description="compare with", style=style, layout=lay)
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="760px"))
        fig = Figure(figsize=(9.0, 3.2), dpi=80)
        FigureCanvasAgg(fig)
        self._fig, (self._ax_true, self._ax_est) = fig, fig.subplots(1, 2, sharey=True)
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.88, wspace=0.05)
        self._images = None
        for w in (self.distance, self.angle, self.n_mics, self.snr, self.rt60, self.steps, self.reflow):
            w.observe(self.rerun, names="value")
        self.show.observe(self.redraw, names="value")
        controls = widgets.GridBox(
            [self.distance, self.angle, self.n_mics, self.snr, self.rt60, self.steps, self.reflow, self.show],
            layout=widgets.Layout(grid_template_columns="repeat(auto-fill, minmax(320px, 1fr))"),
        )
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def _models(self, n_mics: int) -> Models:
        if n_mics not in self.models:
            self.status.value = f"<small>training small models for {n_mics} real mics …</small>"
            cfg = self.cfg.replace(n_mics=n_mics)
            train = [build_example(cfg, 0, "train", i) for i in range(cfg.n_train_scenes)]
            self.models[n_mics] = train_models(cfg, train, 0, self.torch.device("cpu"))
        return self.models[n_mics]

    def rerun(self, _change=None) -> None:
        """Simulate the room with the chosen settings, estimate the VM with every method, beamform, redraw."""
        cfg = self.cfg.replace(n_mics=self.n_mics.value)
        with one_cpu_thread():
            models = self._models(cfg.n_mics)
            rng = np.random.default_rng(self.seed + 12_345)
            rt = float(self.rt60.value)
            scene = random_scene(
                rng,
                fs=cfg.fs,
                n_mics=cfg.n_mics,
                array_radius=cfg.array_radius,
                vm_distance=(self.distance.value, self.distance.value),
                rt60_range=(rt, rt),
                vm_angle=np.radians(self.angle.value),
            )
            sim = simulate(
                scene,
                int(cfg.clip_s * cfg.fs),
                rng,
                snr_db=float(self.snr.value),
                sensor_snr_db=cfg.sensor_snr_db,
                lead_s=cfg.lead_s,
                max_order=cfg.max_order,
            )
            ex = make_example(scene, sim, nfft=cfg.nfft, lead_s=cfg.lead_s, doa_method=cfg.doa_method)
            x0 = self.torch.randn(ex.cond.shape[0], 2, generator=self.torch.Generator().manual_seed(self.seed))
            name = "reflow" if self.reflow.value else "flow"
            specs = {
                m: estimate(
                    models, ex, m, n_steps=self.steps.value, solver=cfg.solver, x0=x0, device=self.torch.device("cpu")
                )
                for m in ("pseudo", "nearest", "supervised")
            }
            specs["flow"] = estimate(
                models, ex, name, n_steps=self.steps.value, solver=cfg.solver, x0=x0, device=self.torch.device("cpu")
            )
            hop, n = cfg.nfft // 2, ex.real.shape[1]
            from .pseudo import istft, stft

            first = int(np.ceil(cfg.lead_s * cfg.fs / hop)) * hop
            self.scores = {
                m: si_sdr(istft(s, cfg.nfft, hop, n)[first:], ex.truth_wave[first:]) for m, s in specs.items()
            }
            physical = stft(ex.vm_recording, cfg.nfft, hop)
            noise = random_channel(ex, np.random.default_rng(self.seed + 1))
            # scored as the experiment scores it: the speech part, cross-fitted steering
            self.beam = tuple(
                beam_score(ex, beamform(ex, extra, cfg), cfg)[0] for extra in (None, noise, specs["flow"], physical)
            )
        peak = np.abs(ex.truth).max()
        self.db = {m: np.clip(20 * np.log10(np.abs(s) / peak + 1e-6), -60, 0) for m, s in specs.items()}
        self.db["truth"] = np.clip(20 * np.log10(np.abs(ex.truth) / peak + 1e-6), -60, 0)
        self.nearest = nearest_mic(ex)
        self.extent = (0, n / cfg.fs, 0, cfg.fs / 2000)
        self.doa_deg = float(np.degrees(ex.azimuth))
        self.redraw()

    def redraw(self, _change=None) -> None:
        """Show the true VM next to the chosen estimate (no recomputation)."""
        key = self.show.value
        if self._images is None:
            kw = dict(origin="lower", aspect="auto", vmin=-60, vmax=0, extent=self.extent, cmap="viridis")
            self._images = (self._ax_true.imshow(self.db["truth"], **kw), self._ax_est.imshow(self.db[key], **kw))
            self._ax_true.set(xlabel="time (s)", ylabel="frequency (kHz)", title="true VM (evaluation only)")
            self._ax_est.set(xlabel="time (s)")
            for ax in (self._ax_true, self._ax_est):
                ax.tick_params(labelsize=8)
        else:
            self._images[0].set_data(self.db["truth"])
            self._images[1].set_data(self.db[key])
        label = dict((v, k) for k, v in SHOW)[key]
        if key == "flow":
            label = f"{'reflow' if self.reflow.value else 'Virtual-Flow'}, {self.steps.value} step(s)"
        self._ax_est.set_title(f"{label}: SI-SDR {self.scores[key]:.1f} dB", fontsize=10)
        self._fig.canvas.draw()
        self.image.value = canvas_png(self._fig.canvas)
        self.status.value = (
            f"<small>SI-SDR vs the true VM: Virtual-Flow {self.scores['flow']:.1f} dB, pseudo-target "
            f"{self.scores['pseudo']:.1f}, nearest mic {self.scores['nearest']:.1f}, supervised "
            f"{self.scores['supervised']:.1f}. MVDR (speech part): real mics {self.beam[0]:.1f} dB, + a random "
            f"channel {self.beam[1]:.1f} dB (no information: the bar any VM must clear), + Virtual-Flow VM "
            f"{self.beam[2]:.1f} dB, + a physical mic there {self.beam[3]:.1f} dB. Estimated direction "
            f"{self.doa_deg:.0f}° (the louder source's, often the interferer's).</small>"
        )


def benchmark_interactions(lab: VirtualFlowLab | None = None) -> dict[str, list]:
    """Scripted interactions for ``benchmarks/run.py``: "compare with" redraws; room, noise and sampler reruns."""
    lab = lab or VirtualFlowLab()
    return interactions(
        redraw=[(lab.show, ("pseudo", "nearest", "supervised", "flow") * 2)],
        rerun=[
            (lab.distance, (0.3, 0.2)),
            (lab.steps, (1, 8)),
            (lab.reflow, (True, False)),
            (lab.snr, (5.0, 0.0)),
            (lab.rt60, (0.3,)),
        ],
    )
