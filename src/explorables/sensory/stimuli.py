"""A small synthetic world whose items have a look and a sound, drawn independently.

Every item has three visual attributes (colour, shape, size) and three auditory ones (pitch,
timbre, rhythm). Each item is given three ways: a **caption** in words (what the language model
reads), a **picture** rendered with numpy (what the vision encoder sees) and a **sound**
synthesised with numpy (what the audio encoder hears). Because the visual and auditory attributes
are drawn independently, an encoder of one modality carries no information about the other:
any alignment between the language model and the vision encoder comes from the visual words of
the captions, and likewise for sound.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.arguments import Array, OfInstance, checked
from ..core.params import Choice, Float, Int, Text
from ..core.validation import check_int

COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (0.85, 0.1, 0.1), "orange": (0.95, 0.55, 0.1), "yellow": (0.95, 0.9, 0.15),
    "green": (0.15, 0.7, 0.2), "blue": (0.15, 0.3, 0.9), "purple": (0.55, 0.2, 0.75),
}  # fmt: skip
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "diamond")
SIZES: dict[str, float] = {"small": 0.22, "large": 0.42}  # radius as a fraction of the picture's side
PITCHES: dict[str, float] = {"low": 140.0, "middle": 440.0, "high": 1400.0}  # fundamental (Hz)
TIMBRES: tuple[str, ...] = ("whistling", "buzzing", "hissing")  # sine, sawtooth-like harmonics, band noise
RHYTHMS: dict[str, float] = {"steady": 0.0, "slow-pulsing": 2.0, "fast-pulsing": 9.0}  # pulses per second

VISUAL_ATTRIBUTES: tuple[str, ...] = ("colour", "shape", "size")
AUDITORY_ATTRIBUTES: tuple[str, ...] = ("pitch", "timbre", "rhythm")

#: Caption phrasings: each seed of the experiment uses one (its index modulo this list).
PHRASINGS: tuple[str, ...] = (
    "A {size} {colour} {shape} making a {pitch}, {rhythm} {timbre} sound.",
    "A {rhythm}, {pitch} {timbre} sound from a {colour} {shape}, {size}.",
    "It is {colour}, {size} and a {shape}; its sound is {timbre}, {pitch} and {rhythm}.",
    "Its sound: {pitch}, {timbre}, {rhythm}. Its look: a {size} {colour} {shape}.",
)

#: Sensory cues: an instruction put after the caption in the user turn, and (named cues only) the opening words of the
#: model's answer (:data:`OPENINGS`). Reconstructed: the paper's exact wording was not available. The neutral "none"
#: cue asks for a description without naming a sense and opens no answer. A named cue also says which sense to leave
#: out: with "Describe only what you would hear." alone the 135M model kept to the opening, not the instruction, on
#: one caption phrasing (chosen on tuning seeds by ``benchmarks/sensory_instruction_rule.md``).
CUES: dict[str, str] = {
    "none": "Describe it.",
    "see": "Describe only what you would see, not what you would hear.",
    "hear": "Describe only what you would hear, not what you would see.",
}
#: The first words of the model's answer under each named cue (the generation continues from them; a free-text cue
#: has none). A 135M chat model given only the instruction mostly starts "The sound of ..." under either cue.
OPENINGS: dict[str, str] = {"none": "", "see": "I see", "hear": "I hear"}

_VISUAL_SIZES = (len(COLOURS), len(SHAPES), len(SIZES))
_AUDITORY_SIZES = (len(PITCHES), len(TIMBRES), len(RHYTHMS))

SAMPLE_RATE = 8000  # Hz
SOUND_S = 0.5  # seconds
IMAGE_SIZE = 32  # pixels


@checked(
    visual=Array("n 3", integer=True), auditory=Array("n 3", integer=True), offsets=Array("n 2"),
    detune=Array("n"), noise_seeds=Array("n", integer=True),
)
@dataclass(frozen=True)
class Stimuli:
    """``n`` items: attribute indices (``visual``: colour, shape, size; ``auditory``: pitch, timbre, rhythm)
    and the nuisance draws (position, phase, jitter) the renderers use."""

    visual: np.ndarray  # (n, 3) int
    auditory: np.ndarray  # (n, 3) int
    offsets: np.ndarray  # (n, 2) picture position jitter, fraction of the side
    detune: np.ndarray  # (n,) relative pitch jitter
    noise_seeds: np.ndarray  # (n,) seeds of each item's pixel and sample noise

    def __post_init__(self) -> None:
        for name, sizes in (("visual", _VISUAL_SIZES), ("auditory", _AUDITORY_SIZES)):
            table = np.asarray(getattr(self, name))
            if (table < 0).any() or (table >= np.asarray(sizes)).any():
                raise ValueError(f"{name} must hold attribute indices in [0, {sizes}) per column, "
                                 f"got columns in [{table.min(axis=0).tolist()}, {table.max(axis=0).tolist()}]")
        if (np.abs(np.asarray(self.offsets)) > 0.5).any():
            raise ValueError("offsets must lie in [-0.5, 0.5] (a fraction of the picture's side)")
        if (np.abs(np.asarray(self.detune)) >= 0.5).any():
            raise ValueError("detune must lie in (-0.5, 0.5) (a relative pitch jitter)")
        seeds = np.asarray(self.noise_seeds)
        if (seeds < 0).any() or (seeds >= 2**62).any():
            raise ValueError("noise_seeds must hold seeds in [0, 2**62)")

    @property
    def n(self) -> int:
        return int(self.visual.shape[0])

    def _check_item(self, name: str, i: Any) -> int:
        """``i`` as an item index, or a ``ValueError`` naming ``name`` if it is not one of ``[0, n)``."""
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= int(i) < self.n:
            raise ValueError(f"{name} must be an item index in [0, {self.n - 1}], got {i!r}")
        return int(i)

    @checked(i=OfInstance("_check_item", "an item index in [0, n)"))
    def words(self, i: int) -> dict[str, str]:
        """The attribute words of item ``i`` (in ``[0, n)``)."""
        c, s, z = self.visual[i]
        p, t, r = self.auditory[i]
        return {"colour": list(COLOURS)[c], "shape": SHAPES[s], "size": list(SIZES)[z],
                "pitch": list(PITCHES)[p], "timbre": TIMBRES[t], "rhythm": list(RHYTHMS)[r]}  # fmt: skip


@checked(n=Int(4, 10**6))
def sample_stimuli(n: int, rng: np.random.Generator) -> Stimuli:
    """``n`` items with distinct visual combinations where possible, auditory attributes drawn independently.

    Visual combinations (48) and auditory ones (27) are each sampled without replacement
    (cycling when ``n`` exceeds the count), then paired at random: knowing an item's look says
    nothing about its sound.
    """
    n = check_int("n", n, 4)
    vis = np.array(list(itertools.product(range(len(COLOURS)), range(len(SHAPES)), range(len(SIZES)))))
    aud = np.array(list(itertools.product(range(len(PITCHES)), range(len(TIMBRES)), range(len(RHYTHMS)))))

    def draw(table: np.ndarray) -> np.ndarray:
        reps = -(-n // len(table))
        order = np.concatenate([rng.permutation(len(table)) for _ in range(reps)])[:n]
        return table[order]

    visual, auditory = draw(vis), draw(aud)
    return Stimuli(visual, auditory, rng.uniform(-0.12, 0.12, size=(n, 2)), rng.uniform(-0.03, 0.03, size=n),
                   rng.integers(0, 2**31 - 1, size=n))  # fmt: skip


@checked(skip_nested=True, phrasing=Int(0, len(PHRASINGS) - 1))
def captions(stimuli: Stimuli, phrasing: int = 0) -> list[str]:
    """The items' captions in phrasing ``phrasing`` (an index into :data:`PHRASINGS`)."""
    phrasing = check_int("phrasing", phrasing, 0, len(PHRASINGS) - 1)
    out = []
    for i in range(stimuli.n):
        text = PHRASINGS[phrasing].format(**stimuli.words(i))
        out.append(text[0].upper() + text[1:])
    return out


def cue_text(cue: str) -> str:
    """The text of a named cue (:data:`CUES`), or ``cue`` itself if it is free text (which must not be empty)."""
    if not isinstance(cue, str):
        raise ValueError(f"cue must be a string, got {cue!r}")
    if cue in CUES:
        return CUES[cue]
    if not cue.strip():
        raise ValueError(f"cue must be one of {sorted(CUES)} or a non-empty text, got {cue!r}")
    return cue


@checked(caption=Text(nonempty=True), cue=Text())
def prompt(caption: str, cue: str) -> str:
    """The user message: the caption, then the cue's instruction (eq. ``sensory-prompt``)."""
    return f"{caption} {cue_text(cue).strip()}"


@checked(cue=Text())
def opening(cue: str) -> str:
    """The opening words of the model's answer under ``cue`` (:data:`OPENINGS`; empty for a free-text cue)."""
    cue_text(cue)
    return OPENINGS.get(cue, "")


@checked(i=Int(0), size=Int(2, 2048))
def render_image(stimuli: Stimuli, i: int, size: int = IMAGE_SIZE) -> np.ndarray:
    """Item ``i``'s picture: ``(size, size, 3)`` floats in [0, 1], a coloured shape on grey, plus pixel noise."""
    _check_item(stimuli, i)
    c, s, z = stimuli.visual[i]
    rgb = np.array(list(COLOURS.values())[c])
    radius = list(SIZES.values())[z]
    yy, xx = np.mgrid[0:size, 0:size] / (size - 1) * 2 - 1  # [-1, 1]
    x = xx - 2 * stimuli.offsets[i, 0] * (1 - radius)
    y = yy - 2 * stimuli.offsets[i, 1] * (1 - radius)
    r = 2 * radius
    shape = SHAPES[s]
    if shape == "circle":
        mask = x**2 + y**2 <= r**2
    elif shape == "square":
        mask = (np.abs(x) <= 0.85 * r) & (np.abs(y) <= 0.85 * r)
    elif shape == "triangle":
        mask = (y >= -r) & (y <= r) & (np.abs(x) <= (y + r) / 2)  # apex up (rows grow downwards)
    else:  # diamond
        mask = np.abs(x) + np.abs(y) <= 1.1 * r
    noise = np.random.default_rng(stimuli.noise_seeds[i]).normal(0.0, 0.04, size=(size, size, 3))
    image = np.where(mask[..., None], rgb, 0.5) + noise
    return np.clip(image, 0.0, 1.0)


def _check_item(stimuli: Stimuli, i: int) -> None:
    if i >= stimuli.n:
        raise ValueError(f"i must be an item index in [0, {stimuli.n}), got {i}")


@checked(i=Int(0), sample_rate=Int(1000, 192_000), seconds=Float(0.0, 60.0, low_inclusive=False))
def synth_sound(stimuli: Stimuli, i: int, sample_rate: int = SAMPLE_RATE, seconds: float = SOUND_S) -> np.ndarray:
    """Item ``i``'s sound: ``sample_rate * seconds`` samples in [-1, 1].

    Pitch sets the fundamental; timbre is a sine (whistling), a sawtooth-like sum of 12 harmonics
    (buzzing) or noise band-passed around the fundamental (hissing); rhythm is an amplitude
    envelope (steady, or raised-cosine pulses at 2 or 9 per second).
    """
    _check_item(stimuli, i)
    if int(sample_rate * seconds) < 2:
        raise ValueError(f"seconds must give at least 2 samples at sample_rate {sample_rate}, got {seconds!r}")
    p, t, r = stimuli.auditory[i]
    gen = np.random.default_rng(stimuli.noise_seeds[i] + 1)
    n = int(sample_rate * seconds)
    time = np.arange(n) / sample_rate
    f0 = list(PITCHES.values())[p] * (1 + stimuli.detune[i])
    phase = gen.uniform(0, 2 * np.pi)
    timbre = TIMBRES[t]
    if timbre == "whistling":
        wave = np.sin(2 * np.pi * f0 * time + phase)
    elif timbre == "buzzing":
        harmonics = [h for h in range(1, 13) if h * f0 < sample_rate / 2]
        wave = sum(np.sin(2 * np.pi * h * f0 * time + h * phase) / h for h in harmonics)
    else:  # hissing: white noise filtered to a band around f0 (in the frequency domain)
        spectrum = np.fft.rfft(gen.standard_normal(n))
        freqs = np.fft.rfftfreq(n, 1 / sample_rate)
        spectrum *= np.exp(-0.5 * (np.log(np.maximum(freqs, 1.0) / f0) / 0.25) ** 2)
        wave = np.fft.irfft(spectrum, n)
    rate = list(RHYTHMS.values())[r]
    envelope = np.ones(n) if rate == 0 else 0.5 * (1 - np.cos(2 * np.pi * rate * time + gen.uniform(0, 0.5)))
    wave = wave * envelope + gen.normal(0.0, 0.01, size=n)
    return wave / max(np.max(np.abs(wave)), 1e-9)


@checked(modality=Choice(("visual", "auditory")))
def attribute_features(stimuli: Stimuli, modality: str) -> np.ndarray:
    """One-hot attributes of one modality (``"visual"`` or ``"auditory"``): the ground-truth space.

    Used only to check the encoders (what their neighbourhoods reflect), never by the language model.
    """
    if modality == "visual":
        table, sizes = stimuli.visual, (len(COLOURS), len(SHAPES), len(SIZES))
    elif modality == "auditory":
        table, sizes = stimuli.auditory, (len(PITCHES), len(TIMBRES), len(RHYTHMS))
    else:
        raise ValueError(f"modality must be 'visual' or 'auditory', got {modality!r}")
    return np.concatenate([np.eye(m)[table[:, j]] for j, m in enumerate(sizes)], axis=1)


#: Words that describe how an item looks: the visual attribute words and common words of sight. Fixed before
#: any continuation was read; used only to measure whether a continuation follows the cue.
VISUAL_WORDS: frozenset[str] = frozenset({
    *COLOURS, *SHAPES, *SIZES, "see", "seen", "sees", "look", "looks", "looking", "colour", "color", "colours",
    "colors", "coloured", "colored", "shape", "shapes", "bright", "dark", "light", "shiny", "shining", "glow",
    "glowing", "picture", "image", "visible", "appears", "round", "big", "tiny", "white", "black", "pink", "grey",
    "gray", "brown", "sight", "view", "shade", "vivid", "glossy", "edges", "corners", "sides",
})  # fmt: skip
#: Words that describe how an item sounds: the auditory attribute words and common words of hearing.
AUDITORY_WORDS: frozenset[str] = frozenset({
    *PITCHES, *TIMBRES, "steady", "slow", "fast", "pulsing", "hear", "heard", "hears", "hearing", "sound", "sounds",
    "noise", "noises", "loud", "quiet", "pitch", "pitched", "tone", "tones", "ring", "ringing", "hum", "humming",
    "buzz", "whistle", "hiss", "beat", "beats", "rhythm", "music", "musical", "melody", "echo", "volume", "voice",
    "silence", "silent", "listen", "listening", "audible", "whine", "drone", "chirp", "note", "notes",
})  # fmt: skip


#: The cue's own verbs. A continuation that repeats one ("only what I want to hear") echoes the instruction, it
#: does not describe a look or a sound, so :func:`_sensory_words` leaves them out wherever they stand (they stay in
#: the lexicons above only as words of their sense). Added after a review found the echo counted as a sound word.
CUE_ECHOES: frozenset[str] = frozenset({"see", "seen", "sees", "seeing", "hear", "heard", "hears", "hearing"})


def _sensory_words(text: str) -> list[str]:
    """The words of ``text`` (lower-cased, punctuation stripped, hyphenated words split into their parts), with
    every repeat of an answer opening (:data:`OPENINGS`: "I see", "I hear") and every cue verb
    (:data:`CUE_ECHOES`) left out: they echo the forced prefix or the instruction, they do not describe."""
    words = [w.strip(".,;:!?\"'()*").lower() for w in text.replace("-", " ").split()]
    words = [w for w in words if w]
    echoes = {tuple(o.lower().split()) for o in OPENINGS.values() if o}
    kept, i = [], 0
    while i < len(words):
        span = next((len(e) for e in echoes if tuple(words[i : i + len(e)]) == e), 0)
        if span:
            i += span
        else:
            kept.append(words[i])
            i += 1
    return [w for w in kept if w not in CUE_ECHOES]


def modality_shares(texts: list[str]) -> tuple[float, float]:
    """The share of the words of ``texts`` (pooled) that are visual (:data:`VISUAL_WORDS`) and auditory
    (:data:`AUDITORY_WORDS`): ``(visual, auditory)``, each in [0, 1] (0 when there are no words).
    Hyphenated words count by their parts ("slow-pulsing" is "slow" and "pulsing"). A repeat of an answer
    opening (:data:`OPENINGS`: "I see", "I hear") and a cue verb (:data:`CUE_ECHOES`) are left out: they echo the
    forced prefix or the instruction, they do not describe."""
    words = [w for t in texts for w in _sensory_words(t)]
    if not words:
        return 0.0, 0.0
    return (sum(w in VISUAL_WORDS for w in words) / len(words), sum(w in AUDITORY_WORDS for w in words) / len(words))


#: what :func:`dominant_sense` returns for a text
SENSES: tuple[str, ...] = ("visual", "auditory", "neither")


def dominant_sense(text: str) -> str:
    """The sense one text mostly describes: ``"visual"`` when it has more visual words (:data:`VISUAL_WORDS`) than
    auditory ones (:data:`AUDITORY_WORDS`), ``"auditory"`` when it has more auditory ones, ``"neither"`` on a tie
    (including none of either). Words as in :func:`modality_shares` (a repeated opening and the cue verbs left
    out). Unlike a share of all words, it does not depend on how many other words the text has."""
    words = _sensory_words(text)
    v, a = sum(w in VISUAL_WORDS for w in words), sum(w in AUDITORY_WORDS for w in words)
    return "visual" if v > a else "auditory" if a > v else "neither"


def sense_fractions(texts: list[str]) -> tuple[float, float]:
    """The fraction of ``texts`` that mostly describe a look and the fraction that mostly describe a sound
    (:func:`dominant_sense`): ``(visual, auditory)``, each in [0, 1], summing to at most 1."""
    if not texts:
        raise ValueError("texts must hold at least one text, got an empty list")
    senses = [dominant_sense(t) for t in texts]
    return senses.count("visual") / len(senses), senses.count("auditory") / len(senses)
