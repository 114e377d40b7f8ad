"""The live lab: type your own cue and see how it moves SmolLM2 toward the vision or the audio encoder.

On start the lab draws N_ITEMS (12) items (seed 0, first phrasing), encodes their pictures and sounds, and
runs the model on every caption under the three named cues, keeping the last prompt token's
hidden state at every layer ("see" and "hear" with their answer openings "I see" / "I hear", so their state is
the opening's last token's). Typing a cue (press Enter) re-runs the model on the prompts with your cue (a rerun);
a typed cue gets no opening, so its state is the chat header's last token, like "none". The layer, k and encoder
controls only recompute the alignment and redraw.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import PALETTE, REFERENCE_LINE
from ..core.labs import canvas_png, interactions
from .alignment import chance_level, mutual_knn_alignment
from .encoders import audio_features, vision_features
from .experiment import ENCODERS
from .llm import LanguageModel, PrefixCache, _common_prefix_length, load_language_model, prefix_cache, representations
from .stimuli import captions, opening, prompt, sample_stimuli

N_ITEMS = 12  # 12, not 16: the cue now follows the caption, so a rerun runs every caption again (rerun <= 1 s)
NAMED = ("none", "see", "hear")
COLOURS = {"none": PALETTE["grey"], "see": PALETTE["blue"], "hear": PALETTE["orange"], "yours": PALETTE["green"]}


def caption_prefixes(lm: LanguageModel, texts: list[str]) -> PrefixCache:
    """Each caption's chat tokens up to the end of the caption (what every cue's prompt begins with), run once."""
    return prefix_cache(lm, [lm.encode(prompt(t, "none"))[: _common_prefix_length([lm.encode(prompt(t, "none")),
                                                                                  lm.encode(t)])] for t in texts])


def cue_representations(
    lm: LanguageModel, texts: list[str], cue: str, prefixes: PrefixCache | None = None
) -> np.ndarray:
    """``(n_layers + 1, n, d)``: the last prompt token's state at every layer for each caption + ``cue`` (and a
    named cue's answer opening). ``prefixes`` (:func:`caption_prefixes` of ``texts``) spares running the captions
    again: the same numbers."""
    if not isinstance(cue, str):
        raise ValueError(f"cue must be a string, got {cue!r}")
    prompts, openings = [prompt(t, cue) for t in texts], [opening(cue)] * len(texts)
    if prefixes is not None and not all(
        len(ids) > len(q) and ids[: len(q)] == q
        for ids, q in zip((lm.encode(p, o) for p, o in zip(prompts, openings, strict=True)), prefixes.ids, strict=True)
    ):
        prefixes = None  # a cue whose first characters join the caption's last token: run the whole prompts
    reps, _ = representations(lm, prompts, tuple(range(lm.n_layers + 1)), 0, openings=openings, prefixes=prefixes)
    return reps[0]


class SensoryLab:
    """The panel. ``SensoryLab().widget`` is what the notebook displays; ``lm`` defaults to SmolLM2 (offline)."""

    def __init__(self, lm: LanguageModel | None = None, n_items: int = N_ITEMS, seed: int = 0) -> None:
        self.lm = lm or load_language_model()
        stimuli = sample_stimuli(n_items, np.random.default_rng([seed, 0]))
        self.texts = captions(stimuli, 0)
        self.features = {"vision": vision_features(stimuli), "audio": audio_features(stimuli)}
        self.prefixes = caption_prefixes(self.lm, self.texts)  # a rerun runs only the cue's tokens on top
        self.reps = {cue: cue_representations(self.lm, self.texts, cue, self.prefixes) for cue in NAMED}
        self._scores: dict[tuple, np.ndarray] = {}  # alignment per (cue, encoder, k): a redraw reuses it
        style = {"description_width": "90px"}
        lay = widgets.Layout(width="330px")
        self.cue = widgets.Text(value="Picture its colour and shape.", description="your cue", continuous_update=False,
                                style=style, layout=widgets.Layout(width="520px"))  # fmt: skip
        self.layer = widgets.IntSlider(value=self.lm.n_layers, min=0, max=self.lm.n_layers, description="layer",
                                       style=style, layout=lay)  # fmt: skip
        self.k = widgets.IntSlider(value=3, min=1, max=n_items - 2, description="k", style=style, layout=lay)
        self.encoder = widgets.ToggleButtons(options=list(ENCODERS), value="vision", description="encoder", style=style)
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="780px"))
        self.status = widgets.HTML()
        self._build_figure()
        self.cue.observe(self.rerun, names="value")
        for w in (self.layer, self.k, self.encoder):
            w.observe(self.redraw, names="value")
        controls = widgets.VBox([self.cue, widgets.HBox([self.layer, self.k]), self.encoder])
        self.widget = widgets.VBox([controls, self.status, self.image])
        self.rerun()

    def _build_figure(self) -> None:
        """The figure and its artists, made once; a redraw only moves them (clearing and rebuilding the axes cost
        most of a redraw's time)."""
        fig = Figure(figsize=(9.5, 3.4), dpi=80)
        FigureCanvasAgg(fig)
        self._ax_bar, self._ax_layers = ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.6]})
        fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.3)
        names = [*NAMED, "yours"]
        self._bars = dict(zip(names, ax.bar(names, [0.0] * len(names), color=[COLOURS[c] for c in names]),
                              strict=True))  # fmt: skip
        self._chance = [a.axhline(0.0, color=REFERENCE_LINE["color"], linestyle=":", linewidth=1) for a in (ax, ax2)]
        ax.set(ylim=(0, 1), ylabel="mutual k-NN alignment")
        layers = np.arange(self.lm.n_layers + 1)
        self._lines = {c: ax2.plot(layers, np.zeros(layers.size), color=COLOURS[c], label=c,
                                   linewidth=2 if c == "yours" else 1)[0] for c in names}  # fmt: skip
        self._marker = ax2.axvline(0, color=PALETTE["light_grey"], linewidth=1)
        ax2.set(xlabel="layer", ylim=(0, 1), title="every layer")
        ax2.legend(fontsize=7, loc="upper left", ncols=4)
        self._fig = fig
        # what a redraw changes is drawn on top of a saved background (axes, ticks, labels, legend: drawn once)
        self._moving = [*self._bars.values(), *self._chance, *self._lines.values(), self._marker, ax.title]
        for artist in self._moving:
            artist.set_animated(True)
        fig.canvas.draw()
        self._background = fig.canvas.copy_from_bbox(fig.bbox)

    def rerun(self, _change=None) -> None:
        """Run the model with the typed cue (an empty cue is refused with a message), then redraw."""
        text = self.cue.value.strip()
        if not text:
            self.status.value = "<small>cue must be a non-empty text; showing the last valid cue</small>"
            if "yours" not in self.reps:
                self.reps["yours"] = self.reps["none"]
                self._forget_yours()
            self.redraw()
            return
        self.status.value = f"<small>running the model on {len(self.texts)} prompts with your cue…</small>"
        self.reps["yours"] = cue_representations(self.lm, self.texts, text, self.prefixes)
        self._forget_yours()
        self.redraw()

    def _forget_yours(self) -> None:
        """Drop the cached alignments of the typed cue (its representations changed)."""
        self._scores = {key: v for key, v in self._scores.items() if key[0] != "yours"}

    def alignments(self) -> dict[str, np.ndarray]:
        """Per cue: mutual k-NN alignment with the chosen encoder at every layer."""
        feats, k = self.features[self.encoder.value], self.k.value
        out = {}
        for cue, reps in self.reps.items():
            key = (cue, self.encoder.value, k)
            if key not in self._scores:
                self._scores[key] = np.array([mutual_knn_alignment(r, feats, k) for r in reps])
            out[cue] = self._scores[key]
        return out

    def redraw(self, _change=None) -> None:
        """Recompute the alignments (no model run) and draw them."""
        scores, layer = self.alignments(), self.layer.value
        chance = chance_level(len(self.texts), self.k.value)
        for c, bar in self._bars.items():
            bar.set_height(scores[c][layer])
        for line in self._chance:
            line.set_ydata([chance, chance])
        for c, line in self._lines.items():
            line.set_ydata(scores[c])
        self._marker.set_xdata([layer, layer])
        self._ax_bar.set_title(f"layer {layer}, vs {self.encoder.value} encoder")
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        for artist in self._moving:
            artist.axes.draw_artist(artist)
        self.image.value = canvas_png(self._fig.canvas)
        if self.cue.value.strip():
            gap = scores["yours"][layer] - scores["none"][layer]
            self.status.value = (f"<small>{len(self.texts)} items, chance {chance:.3f}; your cue minus no cue at "
                                 f"layer {layer}: {gap:+.3f} (one draw of items: differences under about 0.1 "
                                 "are within seed noise)</small>")  # fmt: skip


def benchmark_interactions(lab: SensoryLab | None = None) -> dict[str, list]:
    """A reader's interactions for ``benchmarks/run.py``: layer, k and encoder redraw; a new cue re-runs the model."""
    lab = lab or SensoryLab()
    top = lab.lm.n_layers
    return interactions(
        redraw=[(lab.layer, (top // 2, top // 3, top)), (lab.k, (5, 3)), (lab.encoder, ("audio", "vision"))],
        rerun=[(lab.cue, ("Listen to the sound it makes.", "Picture its colour and shape."))],
    )
