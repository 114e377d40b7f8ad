"""Figures: the stimuli (a small picture first), the explorable (alignment against continuation
length per cue, a slider over layers), the crossover per layer, and the controls."""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import plotly.graph_objects as go
from matplotlib.backends.backend_agg import FigureCanvasAgg
from plotly.subplots import make_subplots

from ..core.figures import PALETTE, REFERENCE_LINE, add_frame, frame_slider, style
from .claims import difference, layer_means
from .encoders import _band_edges
from .experiment import CUE_NAMES, ENCODERS, SensoryResults
from .stimuli import SAMPLE_RATE, captions, render_image, sample_stimuli, synth_sound

CUE_COLOURS = {"none": PALETTE["grey"], "see": PALETTE["blue"], "hear": PALETTE["orange"]}


def stimuli_figure(results: SensoryResults, n_items: int = 4) -> matplotlib.figure.Figure:
    """A few items of the first seed: caption, picture and spectrogram (the same draw the experiment used)."""
    cfg = results.config
    rng = np.random.default_rng([cfg.seed, cfg.seeds[0]])
    stimuli = sample_stimuli(cfg.n_stimuli, rng)
    texts = captions(stimuli, results.summary["alignment"]["phrasings"][0])
    n_items = min(n_items, stimuli.n)
    fig = matplotlib.figure.Figure(figsize=(2.6 * n_items, 4.4), dpi=90)
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, n_items, squeeze=False)
    for i in range(n_items):
        axes[0, i].imshow(render_image(stimuli, i), interpolation="nearest")
        axes[0, i].set_axis_off()
        words = texts[i].split()
        axes[0, i].set_title("\n".join([" ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2 :])]),
                             fontsize=7)  # fmt: skip
        wave = synth_sound(stimuli, i)
        axes[1, i].specgram(wave, NFFT=256, Fs=SAMPLE_RATE, noverlap=128, cmap="magma")
        axes[1, i].set_yscale("log")
        axes[1, i].set_ylim(_band_edges(2)[0], SAMPLE_RATE / 2)
        axes[1, i].set_xlabel("time (s)", fontsize=7)
        axes[1, i].tick_params(labelsize=6)
    axes[1, 0].set_ylabel("frequency (Hz)", fontsize=7)
    fig.tight_layout()
    return fig


def explorable_figure(results: SensoryResults) -> go.Figure:
    """Alignment with each encoder against continuation length T, one line per cue (mean ± sd over seeds);
    the slider picks the layer."""
    cfg, a = results.config, results.summary["alignment"]
    mean, sd = np.asarray(a["mean"]), np.asarray(a["sd"])
    ts = list(range(cfg.n_new_tokens + 1))
    fig = make_subplots(rows=1, cols=2, subplot_titles=[f"vs {e} encoder" for e in ENCODERS], shared_yaxes=True)
    for col in (1, 2):
        fig.add_trace(go.Scatter(x=[ts[0], ts[-1]], y=[a["chance"]] * 2, mode="lines", line=REFERENCE_LINE,
                                 name="chance k/(n−1)", showlegend=col == 1, hoverinfo="skip"),
                      row=1, col=col)  # fmt: skip
    frames = []
    for li, layer in enumerate(cfg.layer_grid):
        traces = []
        for c, cue in enumerate(cfg.cues):
            for e, _enc in enumerate(ENCODERS):
                traces.append((go.Scatter(
                    x=ts, y=mean[c, e, :, li], error_y=dict(type="data", array=sd[c, e, :, li], thickness=1, width=3),
                    mode="lines+markers", name=CUE_NAMES.get(cue, cue), legendgroup=cue, showlegend=e == 0,
                    line=dict(color=CUE_COLOURS.get(cue, PALETTE["green"])),
                    hovertemplate=f"{cue}, layer {layer}, T=%{{x}}: %{{y:.3f}}<extra></extra>",
                ), 1, e + 1))  # fmt: skip
        frames.append(add_frame(fig, traces))
    frame_slider(fig, frames, [str(layer) for layer in cfg.layer_grid], prefix="layer ", active=len(frames) - 1)
    fig.update_xaxes(title_text="continuation length T (tokens)", dtick=1)
    fig.update_yaxes(title_text="mutual k-NN alignment", row=1, col=1)
    return style(fig, height=430, bottom=90)


def crossover_figure(results: SensoryResults) -> go.Figure:
    """The crossover per layer: vision(see) − vision(hear) and audio(hear) − audio(see), at T = 0 and T = T_max
    (mean ± sd over seeds); above zero is the predicted direction."""
    cfg, per_seed = results.config, np.asarray(results.summary["alignment"]["per_seed"])
    fig = go.Figure()
    if not ("see" in cfg.cues and "hear" in cfg.cues):
        fig.add_trace(go.Scatter(x=[0], y=[0], mode="markers", name="(no see/hear cues in this run)"))
        return style(fig)
    s, h = cfg.cues.index("see"), cfg.cues.index("hear")
    layers = list(cfg.layer_grid)
    fig.add_trace(go.Scatter(x=[layers[0], layers[-1]], y=[0, 0], mode="lines", line=REFERENCE_LINE,
                             showlegend=False, hoverinfo="skip"))  # fmt: skip
    for t, dash in ((0, "solid"), (cfg.n_new_tokens, "dash")):
        for e, (name, sign, colour) in enumerate(
            (("vision: see − hear", 1, "blue"), ("audio: hear − see", -1, "orange"))
        ):
            gain = sign * (per_seed[:, s, e, t, :] - per_seed[:, h, e, t, :])  # (seeds, layers)
            sd = gain.std(axis=0, ddof=1) if gain.shape[0] > 1 else np.zeros(gain.shape[1])
            fig.add_trace(go.Scatter(
                x=layers, y=gain.mean(axis=0), error_y=dict(type="data", array=sd, thickness=1, width=3),
                mode="lines+markers", name=f"{name}, T = {t}", line=dict(color=PALETTE[colour], dash=dash),
            ))  # fmt: skip
    fig.update_layout(xaxis_title="layer", yaxis_title="alignment gain (predicted direction > 0)")
    return style(fig, height=400, legend_below=True, bottom=110)


def controls_figure(results: SensoryResults) -> go.Figure:
    """Chance, the controls, the bag-of-words reference and the model's no-cue alignment (means ± sd over seeds)."""
    cfg, a = results.config, results.summary["alignment"]
    names, means, sds, colours = [], [], [], []

    def bar(name: str, values: list[float], colour: str) -> None:
        arr = np.asarray(values, dtype=float)
        names.append(name)
        means.append(float(arr.mean()))
        sds.append(float(arr.std(ddof=1)) if arr.size > 1 else 0.0)
        colours.append(PALETTE[colour])

    bar("vision enc. vs audio enc.", a["encoder_vs_encoder"]["values"], "grey")
    bar("LLM vs encoders, shuffled", a["shuffled"]["values"], "grey")
    for enc in ENCODERS:
        bar(f"bag of words vs {enc}", a["bag_of_words"][enc]["values"], "light_blue")
    if "none" in cfg.cues:
        for enc in ENCODERS:
            bar(f"LLM (no cue, T=0) vs {enc}", layer_means(results, "none", enc, 0), "dark_blue")
    fig = go.Figure(go.Bar(x=names, y=means, error_y=dict(type="data", array=sds), marker_color=colours))
    fig.add_hline(y=a["chance"], line=REFERENCE_LINE, annotation_text="chance")
    fig.update_layout(yaxis_title="mutual k-NN alignment", showlegend=False)
    return style(fig, height=380, bottom=120)


def all_figures(results: SensoryResults) -> dict[str, go.Figure]:
    """Every plotly figure of the chapter, by name (what ``python -m explorables run sensory`` writes as HTML;
    the matplotlib picture of the stimuli, :func:`stimuli_figure`, is drawn by the page)."""
    return {
        "explorable": explorable_figure(results),
        "crossover": crossover_figure(results),
        "controls": controls_figure(results),
    }


__all__ = ["all_figures", "controls_figure", "crossover_figure", "difference", "explorable_figure", "stimuli_figure"]
