"""The two specialist encoders: one sees only the pictures, the other hears only the sounds.

No pretrained vision or audio network ships offline with the book's dependencies, so both are
small and fixed, chosen so that their neighbourhoods reflect the perceptual attributes of their
own modality and nothing else:

* :func:`vision_features`: a **random-feature CNN** (three 3×3 convolutions with ReLU and
  pooling, He-initialised from a fixed seed, never trained) on the 32×32 renders, global-average-
  and max-pooled. Random convolutional features are a known strong baseline for texture and
  colour similarity; here they separate colour, size and (less) shape.
* :func:`audio_features`: **spectral statistics**: the log power in 24 log-spaced bands (pitch
  and timbre) and the modulation spectrum of the amplitude envelope (rhythm), standardised.

``tests/test_sensory.py`` checks that each encoder aligns with the one-hot attributes of its own
modality well above chance, and with those of the other modality only at chance.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch
from torch import nn

from ..core.arguments import checked
from ..core.device import resolve_device
from ..core.params import Int
from .stimuli import SAMPLE_RATE, Stimuli, render_image, synth_sound

VISION_SEED = 1234  # the random CNN is the same in every run: an encoder, not a seed-dependent draw


@checked(width=Int(1, 512))
def random_cnn(seed: int = VISION_SEED, width: int = 32) -> nn.Module:
    """The fixed random-feature CNN (He-initialised from ``seed``, never trained)."""
    gen = torch.Generator().manual_seed(seed)
    net = nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(2 * width, 4 * width, 3, padding=1), nn.ReLU(),
    )  # fmt: skip
    with torch.no_grad():
        for layer in net:
            if isinstance(layer, nn.Conv2d):
                fan_in = layer.in_channels * 9
                layer.weight.copy_(torch.randn(layer.weight.shape, generator=gen) * np.sqrt(2.0 / fan_in))
                layer.bias.zero_()
    return net.eval()


@checked(skip_nested=True)  # render_image, resolve_device and random_cnn run bare: stimuli and device checked here
def vision_features(stimuli: Stimuli, *, device: str | torch.device = "cpu") -> np.ndarray:
    """``(n, 256)``: average- and max-pooled maps of :func:`random_cnn` on each item's picture."""
    device = resolve_device(device)
    images = np.stack([render_image(stimuli, i) for i in range(stimuli.n)])  # (n, H, W, 3)
    x = torch.as_tensor(images, dtype=torch.float32, device=device).permute(0, 3, 1, 2) - 0.5
    net = random_cnn().to(device)
    with torch.no_grad():
        maps = net(x)
        feats = torch.cat([maps.mean(dim=(2, 3)), maps.amax(dim=(2, 3))], dim=1)
    return feats.cpu().numpy().astype(np.float64)


def _band_edges(n_bands: int, low: float = 60.0, high: float = SAMPLE_RATE / 2) -> np.ndarray:
    return np.geomspace(low, high, n_bands + 1)


@checked(skip_nested=True, n_bands=Int(1, 1024), n_modulation=Int(1, 1024))  # synth_sound in its loop runs bare
def audio_features(stimuli: Stimuli, n_bands: int = 24, n_modulation: int = 16) -> np.ndarray:
    """``(n, n_bands + n_modulation)``: log band powers and the envelope's modulation spectrum, standardised.

    Band powers come from the sound's power spectrum (pitch, timbre); the modulation spectrum is
    the power spectrum of the frame-wise RMS envelope (10 ms frames) up to 25 Hz (rhythm).
    """
    edges = _band_edges(n_bands)
    rows = []
    masks: dict[int, tuple[np.ndarray, list[np.ndarray]]] = {}  # per wave length: the window and the bands' bins
    for i in range(stimuli.n):
        wave = synth_sound(stimuli, i)
        if wave.size not in masks:
            freqs = np.fft.rfftfreq(wave.size, 1 / SAMPLE_RATE)
            masks[wave.size] = (np.hanning(wave.size),
                                [(freqs >= lo) & (freqs < hi) for lo, hi in itertools.pairwise(edges)])  # fmt: skip
        window, band_bins = masks[wave.size]
        power = np.abs(np.fft.rfft(wave * window)) ** 2
        bands = [power[b].sum() for b in band_bins]
        frame = SAMPLE_RATE // 100
        env = np.sqrt(np.mean(wave[: wave.size // frame * frame].reshape(-1, frame) ** 2, axis=1))
        env = env - env.mean()
        mod = np.abs(np.fft.rfft(env, n=2 * n_modulation * 4)) ** 2  # 100 frames/s: bins of 100/128 Hz
        mod_bins = np.add.reduceat(mod[1 : 1 + 2 * n_modulation], np.arange(0, 2 * n_modulation, 2))
        rows.append(np.concatenate([np.log(np.asarray(bands) + 1e-8), np.log(mod_bins + 1e-6)]))
    feats = np.asarray(rows)
    return (feats - feats.mean(0)) / np.maximum(feats.std(0), 1e-9)
