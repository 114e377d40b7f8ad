"""Speech sources: espeak-ng utterances where the program is installed, a harmonic fallback otherwise.

The book runs offline, so speech cannot be downloaded. espeak-ng (a formant speech synthesiser,
``/usr/bin/espeak-ng``) writes a WAV file for a sentence; we call it with :mod:`subprocess` into a
temporary folder and resample to the chapter's rate with :func:`scipy.signal.resample_poly`.
Where espeak-ng is missing, :func:`harmonic_source` makes a speech-like signal in numpy: a
harmonic series with a gliding pitch, shaped by three formant resonators and a syllable envelope.
"""

from __future__ import annotations

import functools
import itertools
import math
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from scipy.io import wavfile
from scipy.signal import lfilter, resample_poly

from ..core.arguments import checked
from ..core.params import Int, Text, Tuple
from ..core.validation import check_positive

#: sample rates the chapter supports (the STFT sizes and the DOA band are set for these)
SAMPLE_RATES: tuple[int, ...] = (8000, 16000)

SENTENCES: tuple[str, ...] = (
    "the birch canoe slid on the smooth planks",
    "glue the sheet to the dark blue background",
    "it is easy to tell the depth of a well",
    "these days a chicken leg is a rare dish",
    "rice is often served in round bowls",
    "the juice of lemons makes fine punch",
    "the box was thrown beside the parked truck",
    "four hours of steady work faced us",
)
#: espeak-ng pitch settings (0-99) that give the bank several speakers
PITCHES: tuple[int, ...] = (25, 45, 65, 85)
#: the longest signal the chapter makes (samples: 10 minutes at 16 kHz)
MAX_SAMPLES = 10**7


def check_sample_rate(fs: int) -> int:
    """``fs`` if it is one of :data:`SAMPLE_RATES`, else a ``ValueError`` naming ``fs``."""
    if isinstance(fs, bool) or not isinstance(fs, (int, np.integer)) or int(fs) not in SAMPLE_RATES:
        raise ValueError(f"fs must be one of {SAMPLE_RATES} Hz, got {fs!r}")
    return int(fs)


def espeak_path() -> str | None:
    """The espeak-ng executable, or ``None`` where it is not installed."""
    return shutil.which("espeak-ng") or ("/usr/bin/espeak-ng" if Path("/usr/bin/espeak-ng").exists() else None)


@functools.lru_cache(maxsize=64)
def espeak_utterance(text: str, fs: int, pitch: int = 50, speed: int = 150) -> np.ndarray:
    """The sentence ``text`` spoken by espeak-ng, resampled to ``fs``, peak-normalised to 0.9.

    Raises ``RuntimeError`` when espeak-ng is missing (callers fall back to :func:`harmonic_source`).
    """
    fs = check_sample_rate(fs)
    exe = espeak_path()
    if exe is None:
        raise RuntimeError("espeak-ng is not installed")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "utterance.wav"
        subprocess.run(
            [exe, "-v", "en", "-p", str(pitch), "-s", str(speed), "-w", str(path), text],
            check=True,
            capture_output=True,
            timeout=30,
        )
        rate, data = wavfile.read(path)
    x = data.astype(np.float64)
    g = math.gcd(int(rate), fs)
    x = resample_poly(x, fs // g, int(rate) // g)
    x = _trim_silence(x)
    return x / (np.abs(x).max() + 1e-12) * 0.9


def _trim_silence(x: np.ndarray, threshold: float = 0.02) -> np.ndarray:
    loud = np.flatnonzero(np.abs(x) > threshold * np.abs(x).max())
    return x[loud[0] : loud[-1] + 1] if loud.size else x


@checked(n_samples=Int(1, MAX_SAMPLES))
def harmonic_source(n_samples: int, fs: int, rng: np.random.Generator) -> np.ndarray:
    """A speech-like signal without a synthesiser: harmonics of a gliding pitch through formants.

    Pitch glides between two random values in 90-220 Hz; harmonics up to ``fs/2`` with a -6 dB
    per octave tilt; three second-order resonators at random formant frequencies (vowel-like,
    changing every syllable); a syllable envelope of 4-6 Hz. Peak-normalised to 0.9.
    """
    fs = check_sample_rate(fs)
    f0 = np.linspace(*rng.uniform(90, 220, size=2), n_samples)
    phase = 2 * np.pi * np.cumsum(f0) / fs
    n_harm = int(fs / 2 / 90)
    x = sum(np.sin(k * phase) / k * (k * f0 < fs / 2) for k in range(1, n_harm + 1))
    syll = rng.uniform(4, 6)
    n_syll = max(1, int(n_samples / fs * syll))
    out = np.zeros(n_samples)
    bounds = np.linspace(0, n_samples, n_syll + 1).astype(int)
    for a, b in itertools.pairwise(bounds):
        seg = x[a:b]
        for formant in rng.uniform([300, 900, 2200], [800, 2000, min(3400, 0.45 * fs)]):
            r = math.exp(-math.pi * 120 / fs)
            w = 2 * math.pi * formant / fs
            seg = lfilter([1 - r], [1, -2 * r * math.cos(w), r * r], seg)
        out[a:b] = seg * np.sin(np.pi * np.linspace(0, 1, b - a)) ** 2
    out += 0.01 * rng.standard_normal(n_samples) * np.abs(out).max()
    return out / (np.abs(out).max() + 1e-12) * 0.9


@functools.lru_cache(maxsize=8)
def speech_corpus(root: str) -> tuple[str, ...]:
    """The clean-speech WAV files under the folder ``root`` (searched recursively, sorted): the paper
    preset's talkers, read from ``--data-root`` (never downloaded). ``ValueError`` when there are none."""
    folder = Path(root)
    if not folder.is_dir():
        raise ValueError(f"data_root must be a folder of clean-speech WAV files, got {root!r}")
    files = tuple(sorted(str(f) for f in folder.rglob("*") if f.suffix.lower() == ".wav" and f.is_file()))
    if not files:
        raise ValueError(f"data_root {root!r} holds no .wav files (clean speech, any layout, searched recursively)")
    return files


@functools.lru_cache(maxsize=256)
def corpus_utterance(path: str, fs: int) -> np.ndarray:
    """One WAV file of the corpus as float, mono (channels averaged), resampled to ``fs``, leading and
    trailing silence trimmed, peak-normalised to 0.9."""
    fs = check_sample_rate(fs)
    try:
        rate, data = wavfile.read(path)
    except (ValueError, OSError) as err:
        raise ValueError(f"could not read the WAV file {path!r} of data_root: {err}") from None
    x = np.asarray(data)
    if np.issubdtype(x.dtype, np.integer):
        x = x / float(np.iinfo(x.dtype).max)
    x = x.astype(np.float64)
    if x.ndim == 2:
        x = x.mean(1)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"the WAV file {path!r} of data_root must hold finite, non-empty audio")
    g = math.gcd(int(rate), fs)
    x = _trim_silence(resample_poly(x, fs // g, int(rate) // g))
    return x / (np.abs(x).max() + 1e-12) * 0.9


def _cut(x: np.ndarray, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    if x.size >= n_samples:
        start = int(rng.integers(0, x.size - n_samples + 1))
        return x[start : start + n_samples].copy()
    return np.pad(x, (0, n_samples - x.size))


@checked(n_samples=Int(1, MAX_SAMPLES), corpus=Tuple(Text(nonempty=True), min_len=0))
def speech_signal(
    n_samples: int, fs: int, rng: np.random.Generator, *, use_espeak: bool = True, corpus: tuple[str, ...] = ()
) -> np.ndarray:
    """One source signal of ``n_samples``: a random file of ``corpus`` (WAV paths, from :func:`speech_corpus`)
    when given, else a random espeak-ng sentence (random pitch), cut or padded to length, or the harmonic
    fallback when ``use_espeak`` is false or espeak-ng is missing."""
    fs = check_sample_rate(fs)
    if corpus:
        return _cut(corpus_utterance(corpus[int(rng.integers(len(corpus)))], fs), n_samples, rng)
    if use_espeak and espeak_path() is not None:
        text = SENTENCES[int(rng.integers(len(SENTENCES)))]
        pitch = PITCHES[int(rng.integers(len(PITCHES)))]
        return _cut(espeak_utterance(text, fs, pitch), n_samples, rng)
    return harmonic_source(n_samples, fs, rng)


@checked()
def source_kind(use_espeak: bool = True, data_root: str = "") -> str:
    """Which source :func:`speech_signal` uses here: WAV files from ``data_root``, ``"espeak-ng"`` or
    ``"harmonic"``."""
    if data_root:
        return "WAV files from --data-root"
    return "espeak-ng" if use_espeak and espeak_path() is not None else "harmonic"


def babble_noise(n_samples: int, fs: int, rng: np.random.Generator) -> np.ndarray:
    """The interferer: pink-ish noise (white noise through a one-pole low-pass), unit variance."""
    fs = check_sample_rate(fs)
    check_positive("n_samples", n_samples)
    x = lfilter([1.0], [1.0, -0.7], rng.standard_normal(int(n_samples)))
    return x / x.std()
