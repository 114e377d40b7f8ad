"""The pseudo virtual-microphone target: a delayed, weighted superposition of the real recordings.

Only the abstract is public; the construction below is our reconstruction of its one sentence on
"time-delayed superpositions of real recordings". For a plane wave from the unit direction
:math:`u`, a microphone at :math:`p` hears the wave :math:`p\\cdot u / c` seconds earlier than the
origin, so the virtual microphone's signal is each real one shifted by
:math:`\\tau_m = (p_m - p_v)\\cdot u / c`, eq. (vf-delay), and the pseudo-target averages the shifted
real channels with inverse-distance weights, eq. (vf-pseudo). The direction :math:`u` is estimated
from the real microphones by a grid search of :mod:`pyroomacoustics.doa` (NormMUSIC in the book; SRP-PHAT,
MUSIC and TOPS are the alternatives).
"""

from __future__ import annotations

import numpy as np
import pyroomacoustics as pra
from scipy.signal import istft as _istft
from scipy.signal import stft as _stft

from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Choice, Float, Int, Tuple
from .audio import MAX_SAMPLES
from .scenes import SPEED_OF_SOUND

DOA_METHODS: tuple[str, ...] = ("SRP", "MUSIC", "NormMUSIC", "TOPS")
#: the largest STFT size
MAX_NFFT = 2**16
#: sample rates (Hz) the geometry functions take
FS_RULE = Int(1000, 192_000)


def _check_hop(nfft: int, hop: int) -> None:
    """A Hann-window STFT is invertible (NOLA) for hops up to ``nfft / 2``."""
    if hop > nfft // 2:
        raise ArgumentError(f"hop must be an integer in [1, nfft // 2 = {nfft // 2}] (Hann window), got {hop}")


def _check_bins(name: str, spec: np.ndarray, nfft: int) -> None:
    """The frequency axis (second to last) of an STFT has ``nfft // 2 + 1`` bins."""
    if spec.shape[-2] != nfft // 2 + 1:
        raise ArgumentError(
            f"{name} must have nfft // 2 + 1 = {nfft // 2 + 1} frequency bins (axis -2) for nfft={nfft}, "
            f"got shape {tuple(spec.shape)}"
        )


@checked(x=Array("... n"), nfft=Int(2, MAX_NFFT), hop=Int(1, MAX_NFFT))
def stft(x: np.ndarray, nfft: int, hop: int) -> np.ndarray:
    """Hann-window STFT along the last axis: ``(..., nfft // 2 + 1, frames)`` (scipy.signal.stft).

    ``hop`` is at most ``nfft / 2`` (so that :func:`istft` inverts it), ``x`` holds at least ``nfft`` samples.
    """
    _check_hop(nfft, hop)
    if np.shape(x)[-1] < nfft:
        raise ArgumentError(f"x must hold at least nfft = {nfft} samples along its last axis, got {np.shape(x)}")
    return _stft(x, nperseg=nfft, noverlap=nfft - hop, window="hann", boundary="zeros", padded=True)[2] * nfft / 2


@checked(spec=Array("... f t"), nfft=Int(2, MAX_NFFT), hop=Int(1, MAX_NFFT), length=Int(1, MAX_SAMPLES))
def istft(spec: np.ndarray, nfft: int, hop: int, length: int) -> np.ndarray:
    """Inverse of :func:`stft`, cut to ``length`` samples."""
    _check_hop(nfft, hop)
    _check_bins("spec", spec, nfft)
    x = _istft(spec / (nfft / 2), nperseg=nfft, noverlap=nfft - hop, window="hann", boundary=True)[1]
    x = x[..., :length]
    if x.shape[-1] < length:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, length - x.shape[-1])])
    return x


@checked(
    spec_real=Array("m f t", min_size=(("m", 2),)),
    real_mics=Array("m d"),
    fs=FS_RULE,
    nfft=Int(2, MAX_NFFT),
    method=Choice(DOA_METHODS),
    freq_range=Tuple(Float(0.0), min_len=2, max_len=2, increasing=True),
)
def estimate_azimuth(
    spec_real: np.ndarray,
    real_mics: np.ndarray,
    fs: int,
    nfft: int,
    *,
    method: str = "SRP",
    freq_range: tuple[float, float] = (300.0, 3500.0),
) -> float:
    """Azimuth (radians) of the strongest source from the real microphones' STFT ``(M, F, T)``.

    pyroomacoustics' DOA grid search (``method``: SRP-PHAT, MUSIC, NormMUSIC or TOPS) over 360 directions in
    the horizontal plane; the band ``freq_range`` is clipped to below Nyquist.
    """
    spec_real = np.asarray(spec_real)
    _check_bins("spec_real", spec_real, nfft)
    if np.shape(real_mics)[1] not in (2, 3):
        raise ArgumentError(f"real_mics must have shape (M, 3) or (M, 2) (positions), got {np.shape(real_mics)}")
    if freq_range[0] >= 0.45 * fs:
        raise ArgumentError(f"freq_range must start below 0.45 fs = {0.45 * fs:g} Hz, got {freq_range}")
    locations = np.asarray(real_mics, float)[:, :2].T
    doa = pra.doa.algorithms[method](
        locations - locations.mean(1, keepdims=True), fs, nfft, c=SPEED_OF_SOUND, num_src=1, n_grid=360
    )
    hi = min(freq_range[1], 0.45 * fs)
    doa.locate_sources(spec_real, freq_range=[freq_range[0], hi])
    return float(doa.azimuth_recon[0])


def true_azimuth(source: np.ndarray, real_mics: np.ndarray) -> float:
    """The azimuth of the talker seen from the array centre (what the geometry says; for tests and plots)."""
    d = np.asarray(source, float)[:2] - np.asarray(real_mics, float)[:, :2].mean(0)
    return float(np.arctan2(d[1], d[0]))


@checked(real_mics=Array("m 3"), virtual_mic=Array("3"))
def plane_wave_delays(real_mics: np.ndarray, virtual_mic: np.ndarray, azimuth: float) -> np.ndarray:
    """Eq. (vf-delay): ``tau_m = (p_m - p_v) . u / c`` in seconds, ``u`` the unit vector toward the source."""
    real = np.asarray(real_mics, float)
    if real.ndim != 2 or real.shape[0] == 0:
        raise ValueError(f"real_mics must be a non-empty (M, 3) array, got shape {real.shape}")
    u = np.array([np.cos(azimuth), np.sin(azimuth), 0.0])
    return (real - np.asarray(virtual_mic, float)) @ u / SPEED_OF_SOUND


@checked(real_mics=Array("m 3"), virtual_mic=Array("3"))
def inverse_distance_weights(real_mics: np.ndarray, virtual_mic: np.ndarray) -> np.ndarray:
    """Weights ``w_m`` proportional to ``1 / |p_m - p_v|``, summing to one."""
    d = np.linalg.norm(np.asarray(real_mics, float) - np.asarray(virtual_mic, float), axis=1)
    w = 1.0 / np.maximum(d, 1e-3)
    return w / w.sum()


def align_channels(spec_real: np.ndarray, delays: np.ndarray, fs: int, nfft: int) -> np.ndarray:
    """Each real channel shifted to the virtual position: ``X_m(f, t) exp(-j w tau_m)``, shape ``(M, F, T)``."""
    omega = 2 * np.pi * np.fft.rfftfreq(nfft, 1 / fs)
    return spec_real * np.exp(-1j * omega[None, :, None] * np.asarray(delays)[:, None, None])


@checked(
    spec_real=Array("m f t"),
    real_mics=Array("m 3"),
    virtual_mic=Array("3"),
    fs=FS_RULE,
    nfft=Int(2, MAX_NFFT),
)
def pseudo_target(
    spec_real: np.ndarray, real_mics: np.ndarray, virtual_mic: np.ndarray, azimuth: float, fs: int, nfft: int
) -> np.ndarray:
    """Eq. (vf-pseudo): ``sum_m w_m X_m(f, t) exp(-j w tau_m)``, the pseudo-VM STFT ``(F, T)``.

    Built from the real recordings and the geometry only; the azimuth is an estimate
    (:func:`estimate_azimuth`) in the method, the truth only in tests.
    """
    delays = plane_wave_delays(real_mics, virtual_mic, azimuth)
    weights = inverse_distance_weights(real_mics, virtual_mic)
    return np.tensordot(weights, align_channels(spec_real, delays, fs, nfft), axes=1)
