"""From simulated recordings to the time-frequency bins the networks see.

:func:`make_example` runs the unsupervised pipeline on one scene: STFT of the real microphones,
the talker's direction (DOA on the real microphones), the real channels shifted to the virtual
position (eq. vf-delay) and the pseudo-target (eq. vf-pseudo). Where the scene has *held-out*
microphones (the training array), the training pseudo-target ``pseudo_train`` is built the same way
from the real *and* the held-out microphones, with the direction found on all of them; the network's
condition is built from the real microphones alone, so the target carries information the input
lacks. The true virtual signal (what a microphone at the virtual position would record: the talker,
the interferer and sensor noise there, as the real microphones record them) is kept in the separate
field ``truth``: only the supervised baseline
and the evaluation read it, and :func:`unsupervised_data` (what Virtual-Flow trains on) is built
without it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..core.arguments import ArgumentError, Array, checked
from ..core.device import resolve_device
from ..core.params import Choice, Float, Int
from .pseudo import (
    DOA_METHODS,
    MAX_NFFT,
    align_channels,
    estimate_azimuth,
    inverse_distance_weights,
    plane_wave_delays,
    stft,
)
from .scenes import Scene

#: the arrays :func:`~.scenes.simulate` returns that :func:`make_example` reads
SIM_KEYS: tuple[str, ...] = ("real", "real_speech", "vm_speech", "vm_recording")


@checked(
    real=Array("m n"),
    spec_real=Array("m f t"),
    aligned=Array("m f t"),
    pseudo=Array("f t"),
    pseudo_train=Array("f t"),
    scale=Float(0.0, low_inclusive=False),
    cond=Array("bins d_cond"),
    truth=Array("f t"),
    truth_wave=Array("n"),
    vm_recording=Array("n"),
    real_speech=Array("m n"),
)
@dataclass
class Example:
    """One scene, ready for the networks. ``truth`` is for the supervised baseline and scoring only."""

    scene: Scene
    real: np.ndarray  # (M, N) recordings
    spec_real: np.ndarray  # (M, F, T)
    azimuth: float  # estimated from the real mics
    aligned: np.ndarray  # (M, F, T), eq. (vf-delay)
    pseudo: np.ndarray  # (F, T), eq. (vf-pseudo) from the real mics (what a deployed array can build)
    pseudo_train: np.ndarray  # (F, T), eq. (vf-pseudo) from the real and the held-out mics (training targets)
    scale: float  # rms of the real STFT: every network input and output is divided by it
    cond: np.ndarray  # (T * F, d_cond) float32, one row per time-frequency bin
    truth: np.ndarray  # (F, T): STFT of what a mic at the VM records (NOT used by Virtual-Flow)
    truth_wave: np.ndarray  # (N,)
    vm_recording: np.ndarray  # (N,): a physical microphone at the VM (beamforming reference)
    real_speech: np.ndarray  # (M, N): the talker's image at the real mics (beamforming reference)
    azimuth_train: float = 0.0  # direction found on the real and held-out mics (``azimuth`` when none are held out)

    def __post_init__(self) -> None:
        m, (n_freq, t) = self.real.shape[0], self.pseudo.shape
        if self.scene.real_mics.shape[0] != m:
            raise ArgumentError(
                f"real must have one row per real mic of scene ({self.scene.real_mics.shape[0]}), got {m}"
            )
        if self.pseudo_train.shape != self.pseudo.shape:
            raise ArgumentError(
                f"pseudo_train must have the pseudo-target's shape {self.pseudo.shape}, got {self.pseudo_train.shape}"
            )
        if self.cond.shape[0] != n_freq * t:
            raise ArgumentError(
                f"cond must have one row per time-frequency bin (F x T = {n_freq * t}), got {self.cond.shape}"
            )


def spec_to_bins(spec: np.ndarray, scale: float) -> np.ndarray:
    """``(F, T)`` complex -> ``(T * F, 2)`` float32 (real, imaginary) divided by ``scale``, frame by frame."""
    s = np.asarray(spec).T.reshape(-1) / scale
    return np.stack([s.real, s.imag], 1).astype(np.float32)


def bins_to_spec(bins: np.ndarray, scale: float, n_freq: int) -> np.ndarray:
    """Inverse of :func:`spec_to_bins`: ``(T * F, 2)`` -> ``(F, T)`` complex."""
    b = np.asarray(bins, dtype=np.float64)
    return (b[:, 0] + 1j * b[:, 1]).reshape(-1, n_freq).T * scale


def frequency_features(n_freq: int) -> np.ndarray:
    """Per bin: ``f / f_Nyquist`` and ``sin, cos(pi k f / f_Nyquist)``, ``k = 1, 2, 3``: ``(F, 7)``."""
    r = np.linspace(0, 1, n_freq)
    return np.stack([r, *[fn(np.pi * k * r) for k in (1, 2, 3) for fn in (np.sin, np.cos)]], 1)


def condition_bins(aligned: np.ndarray, weights: np.ndarray, scale: float) -> np.ndarray:
    """The condition ``c`` of every time-frequency bin: the aligned real channels (real, imaginary) in that
    bin and in the previous and next frame, the bin's frequency features, and the geometric weights
    ``w_m`` of eq. (vf-pseudo) (last): ``(T * F, 6 M + 7 + M)`` float32."""
    m, n_freq, t = aligned.shape
    a = aligned / scale
    padded = np.pad(a, ((0, 0), (0, 0), (1, 1)))
    ctx = [padded[:, :, k : k + t] for k in (1, 0, 2)]  # this frame, previous, next
    parts = [np.stack([c.real, c.imag], 1).reshape(2 * m, n_freq, t) for c in ctx]
    chans = np.concatenate(parts, 0).transpose(2, 1, 0).reshape(t * n_freq, 6 * m)  # frame-major bins
    freq = np.tile(frequency_features(n_freq), (t, 1))
    geo = np.repeat(np.asarray(weights, float)[None], t * n_freq, 0)
    return np.concatenate([chans, freq, geo], 1).astype(np.float32)


@checked(nfft=Int(2, MAX_NFFT), lead_s=Float(0.0), doa_method=Choice(DOA_METHODS))
def make_example(
    scene: Scene,
    sim: dict[str, np.ndarray],
    *,
    nfft: int,
    lead_s: float,
    doa_method: str = "NormMUSIC",
    azimuth: float | None = None,
) -> Example:
    """The pipeline on one simulated scene (``sim`` from :func:`~.scenes.simulate`).

    ``azimuth=None`` estimates the direction from the real microphones (the method); a given
    azimuth is only for tests and the "oracle direction" illustration. The direction is estimated on
    the frames after the ``lead_s`` seconds of noise only. When the scene has held-out microphones
    (``sim["aux"]`` non-empty), ``pseudo_train`` is eq. (vf-pseudo) over the real and held-out
    microphones together, its direction found on all of them (or the given ``azimuth``); otherwise
    it equals ``pseudo``. The condition ``cond`` never reads the held-out microphones.
    """
    missing = [k for k in SIM_KEYS if k not in sim]
    if missing:
        raise ArgumentError(f"sim must be what simulate returns (arrays {SIM_KEYS}); it lacks {missing}")
    m = scene.real_mics.shape[0]
    for key in SIM_KEYS:
        arr = np.asarray(sim[key])
        ndim = 2 if key in ("real", "real_speech") else 1
        if arr.ndim != ndim or arr.shape[-1] < nfft or (ndim == 2 and arr.shape[0] != m):
            shape = f"({m}, N)" if ndim == 2 else "(N,)"
            raise ArgumentError(f"sim[{key!r}] must have shape {shape} with N >= nfft = {nfft}, got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ArgumentError(f"sim[{key!r}] must hold only finite numbers")
    hop = nfft // 2
    spec_real = stft(sim["real"], nfft, hop)
    first = first_speech_frame(lead_s, scene.fs, nfft)
    if azimuth is None and first >= spec_real.shape[2]:
        raise ArgumentError(f"lead_s must leave frames of the clip after it to estimate the direction, got {lead_s}")
    az = (
        estimate_azimuth(spec_real[:, :, first:], scene.real_mics, scene.fs, nfft, method=doa_method)
        if azimuth is None
        else azimuth
    )
    delays = plane_wave_delays(scene.real_mics, scene.virtual_mic, az)
    aligned = align_channels(spec_real, delays, scene.fs, nfft)
    weights = inverse_distance_weights(scene.real_mics, scene.virtual_mic)
    pseudo = np.tensordot(weights, aligned, axes=1)
    scale = float(np.sqrt(np.mean(np.abs(spec_real) ** 2)) + 1e-12)
    pseudo_train, az_train = pseudo, az
    aux = np.asarray(sim.get("aux", np.zeros((0, sim["real"].shape[1]))))
    if scene.n_aux:
        if aux.shape != (scene.n_aux, sim["real"].shape[1]) or not np.all(np.isfinite(aux)):
            raise ArgumentError(
                f"sim['aux'] must hold the {scene.n_aux} held-out mics' finite recordings "
                f"({scene.n_aux}, {sim['real'].shape[1]}), got {aux.shape}"
            )
        all_mics = np.concatenate([scene.real_mics, scene.aux_mics], 0)
        spec_all = np.concatenate([spec_real, stft(aux, nfft, hop)], 0)
        az_train = (
            estimate_azimuth(spec_all[:, :, first:], all_mics, scene.fs, nfft, method=doa_method)
            if azimuth is None
            else azimuth
        )
        delays_all = plane_wave_delays(all_mics, scene.virtual_mic, az_train)
        weights_all = inverse_distance_weights(all_mics, scene.virtual_mic)
        pseudo_train = np.tensordot(weights_all, align_channels(spec_all, delays_all, scene.fs, nfft), axes=1)
    return Example(
        scene=scene,
        real=sim["real"],
        spec_real=spec_real,
        azimuth=az,
        aligned=aligned,
        pseudo=pseudo,
        pseudo_train=pseudo_train,
        scale=scale,
        cond=condition_bins(aligned, weights, scale),
        truth=stft(sim["vm_recording"], nfft, hop),
        truth_wave=sim["vm_recording"],
        vm_recording=sim["vm_recording"],
        real_speech=sim["real_speech"],
        azimuth_train=az_train,
    )


def first_speech_frame(lead_s: float, fs: int, nfft: int) -> int:
    """The first STFT frame (hop ``nfft / 2``) that may hold the talker (the clip starts with ``lead_s`` of noise)."""
    return int(np.ceil(lead_s * fs / (nfft // 2)))


def _check_examples(examples: list[Example]) -> None:
    if not examples:
        raise ArgumentError("examples must hold at least one Example")
    for i, e in enumerate(examples):
        if not isinstance(e, Example):
            raise ArgumentError(f"examples[{i}] must be an Example, got {type(e).__name__}")
    widths = {e.cond.shape[1] for e in examples}
    if len(widths) > 1:
        raise ArgumentError(f"examples must share one condition width (the same n_mics), got {sorted(widths)}")


@checked()
def unsupervised_data(examples: list[Example], device: str | torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """What Virtual-Flow trains on: ``(training pseudo-target bins, condition bins)``; no field of the truth is
    read. The targets are ``pseudo_train`` (built with the held-out microphones where the scene has them)."""
    _check_examples(examples)
    device = resolve_device(device)
    target = np.concatenate([spec_to_bins(e.pseudo_train, e.scale) for e in examples])
    cond = np.concatenate([e.cond for e in examples])
    return torch.from_numpy(target).to(device), torch.from_numpy(cond).to(device)


@checked()
def supervised_data(examples: list[Example], device: str | torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """What the supervised baseline trains on: ``(true VM bins, condition bins)``."""
    _check_examples(examples)
    device = resolve_device(device)
    target = np.concatenate([spec_to_bins(e.truth, e.scale) for e in examples])
    cond = np.concatenate([e.cond for e in examples])
    return torch.from_numpy(target).to(device), torch.from_numpy(cond).to(device)


def nearest_mic(example: Example) -> int:
    """Index of the real microphone closest to the virtual position."""
    return int(np.argmin(np.linalg.norm(example.scene.real_mics - example.scene.virtual_mic, axis=1)))
