"""Rooms, arrays and the simulated recordings (pyroomacoustics' image-source method).

A *scene* is a shoebox room with a reverberation time, a talker, a noise source (the
interferer), ``n_mics`` real microphones on a small circle and one virtual microphone (VM) next to
them, all at the talker's height. :func:`simulate` renders every microphone *and* the virtual
position with :class:`pyroomacoustics.ShoeBox` (wall absorption from the RT60 by Sabine's formula,
:func:`pyroomacoustics.inverse_sabine`), and keeps the talker's and the noise's images apart:

* ``real``: what the real microphones record (talker + interferer + sensor noise);
* ``vm_speech``: the talker's image at the VM position (kept for diagnostics);
* ``vm_recording``: what a physical microphone at the VM would record (talker, interferer and sensor
  noise there). This is the *truth* that the supervised estimator trains on and that the evaluation
  scores against (and the beamformer's oracle extra channel); Virtual-Flow never sees it;
* ``aux``: what the *held-out* microphones record (when the scene has any): microphones of the
  training array that the network never sees, from which the training pseudo-targets are built.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyroomacoustics as pra

from ..core.arguments import Array, checked
from ..core.params import Float, Int, Positive, Text, Tuple
from ..core.validation import check_in_range
from .audio import MAX_SAMPLES, babble_noise, check_sample_rate, speech_signal

SPEED_OF_SOUND = 343.0
HEIGHT = 1.5  # metres: talker, interferer and every microphone (a horizontal plane, azimuth-only DOA)


@checked(
    room_dim=Tuple(Positive(), min_len=3, max_len=3),
    rt60=Float(0.0, 2.0),
    source=Array("3"),
    interferer=Array("3"),
    real_mics=Array("m 3"),
    virtual_mic=Array("3"),
)
@dataclass(frozen=True)
class Scene:
    """Geometry of one simulated scene (metres, seconds, Hz; ``fs`` one of :data:`~.audio.SAMPLE_RATES`)."""

    room_dim: tuple[float, float, float]
    rt60: float
    source: np.ndarray  # (3,)
    interferer: np.ndarray  # (3,)
    real_mics: np.ndarray  # (M, 3)
    virtual_mic: np.ndarray  # (3,)
    fs: int
    aux_mics: np.ndarray | None = None  # (K, 3): held-out mics of the training array (pseudo-targets only)

    def __post_init__(self) -> None:
        check_sample_rate(self.fs)
        if self.aux_mics is not None and (np.ndim(self.aux_mics) != 2 or np.shape(self.aux_mics)[1] != 3):
            raise ValueError(f"aux_mics must be None or a (K, 3) array of positions, got {np.shape(self.aux_mics)}")

    @property
    def n_aux(self) -> int:
        """Number of held-out microphones (0 without any)."""
        return 0 if self.aux_mics is None else int(np.shape(self.aux_mics)[0])


def check_points_in_room(name: str, points: np.ndarray, room_dim: tuple[float, float, float]) -> np.ndarray:
    """``points`` as an ``(n, 3)`` array if every point lies strictly inside the room, else ``ValueError``."""
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim == 1:
        pts = pts[None]
    if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty (n, 3) array of positions, got shape {np.shape(points)}")
    if not np.all(np.isfinite(pts)):
        raise ValueError(f"{name} must hold finite coordinates")
    dims = np.asarray(room_dim, dtype=np.float64)
    outside = np.any((pts <= 0) | (pts >= dims), axis=1)
    if outside.any():
        bad = pts[np.argmax(outside)]
        raise ValueError(f"{name} must lie inside the room (0, {tuple(dims)}), got {tuple(np.round(bad, 3))}")
    return pts


@dataclasses.dataclass(frozen=True, repr=False)
class Range(Tuple):
    """A ``(low, high)`` pair of items that each follow ``item``, with ``low <= high``: the range a value is drawn
    from uniformly. ``low == high`` pins the value (the lab and :func:`~.experiment.relocate` place the virtual mic
    at one distance so); a pair given high first is refused, naming the parameter, before numpy draws from it."""

    min_len: int = 2
    max_len: int | None = 2

    def check(self, name: str, value: Any) -> tuple:
        low, high = super().check(name, value)
        if high < low:
            raise ValueError(f"{name} must be {self.describe()}, got {(low, high)!r} (high first)")
        return (low, high)

    def describe(self) -> str:
        return f"a (low, high) range with low <= high, each {self.item.describe()}"


@checked(center=Array("3"), n_mics=Int(1, 16), radius=Float(0.0, 1.0, low_inclusive=False))
def circular_array(center: np.ndarray, n_mics: int, radius: float, rotation: float = 0.0) -> np.ndarray:
    """``n_mics`` positions on a horizontal circle of ``radius`` around ``center``: ``(n_mics, 3)``."""
    angles = rotation + 2 * np.pi * np.arange(n_mics) / n_mics
    return np.asarray(center, float) + radius * np.stack([np.cos(angles), np.sin(angles), np.zeros(n_mics)], 1)


@checked(
    n_mics=Int(1, 16),
    array_radius=Float(0.0, 1.0, low_inclusive=False),
    vm_distance=Range(Float(0.0, 1.0)),
    rt60_range=Range(Float(0.0, 2.0)),
    n_aux=Int(0, 16),
    aux_radius=Float(0.0, 1.0, low_inclusive=False),
)
def random_scene(
    rng: np.random.Generator,
    *,
    fs: int,
    n_mics: int,
    array_radius: float,
    vm_distance: tuple[float, float],
    rt60_range: tuple[float, float],
    vm_angle: float | None = None,
    n_aux: int = 0,
    aux_radius: float = 0.3,
) -> Scene:
    """A random shoebox (4-7 m by 3-6 m by 2.5-3.5 m), RT60 drawn from ``rt60_range``, the array
    somewhere in the middle, the talker 1-2.5 m away, the interferer elsewhere, and the VM at a
    distance drawn from ``vm_distance`` from the array centre (at ``vm_angle`` if given). With ``n_aux``,
    that many held-out microphones on a circle of ``aux_radius`` around the same centre, turned so that the
    VM's direction falls midway between two of them: they stand as far from the virtual position as their
    circle allows, so no held-out mic records (nearly) what the VM would (a rotation is still drawn last, so
    every other draw is the same with or without them)."""
    fs = check_sample_rate(fs)
    dims = (float(rng.uniform(4, 7)), float(rng.uniform(3, 6)), float(rng.uniform(2.5, 3.5)))
    center = np.array([rng.uniform(1.5, dims[0] - 1.5), rng.uniform(1.5, dims[1] - 1.5), HEIGHT])
    real = circular_array(center, n_mics, array_radius, rotation=float(rng.uniform(0, 2 * np.pi)))
    drawn = float(rng.uniform(0, 2 * np.pi))  # always drawn, so a given angle leaves every later draw unchanged
    angle = drawn if vm_angle is None else float(vm_angle)
    dist = float(rng.uniform(*vm_distance))
    virtual = center + dist * np.array([np.cos(angle), np.sin(angle), 0.0])

    def place(min_r: float, max_r: float) -> np.ndarray:
        for _ in range(1000):
            r, a = rng.uniform(min_r, max_r), rng.uniform(0, 2 * np.pi)
            p = center + r * np.array([np.cos(a), np.sin(a), 0.0])
            if np.all(p[:2] > 0.3) and np.all(p[:2] < np.asarray(dims[:2]) - 0.3):
                return p
        raise RuntimeError("could not place a source in the room")  # pragma: no cover

    source = place(1.0, 2.5)
    interferer = place(1.0, 2.5)
    rt60 = float(rng.uniform(*rt60_range))
    aux = None
    if n_aux:
        rng.uniform(0, 2 * np.pi)  # the circle's former random turn, still drawn: the draw stream stays the same
        aux = circular_array(center, n_aux, aux_radius, rotation=angle + np.pi / n_aux)
    return Scene(dims, rt60, source, interferer, real, virtual, fs, aux)


@checked(
    n_samples=Int(64, MAX_SAMPLES),
    snr_db=Float(-30.0, 60.0),
    sensor_snr_db=Float(-30.0, 120.0),
    lead_s=Float(0.0),
    max_order=Int(0, 100),
    speech=Array("n"),
    corpus=Tuple(Text(nonempty=True), min_len=0),
)
def simulate(
    scene: Scene,
    n_samples: int,
    rng: np.random.Generator,
    *,
    snr_db: float,
    sensor_snr_db: float = 30.0,
    lead_s: float = 0.2,
    max_order: int = 20,
    use_espeak: bool = True,
    speech: np.ndarray | None = None,
    anechoic: bool = False,
    corpus: tuple[str, ...] = (),
) -> dict[str, np.ndarray]:
    """Render ``scene``: speech that starts after ``lead_s`` seconds of silence (so the first frames
    hold noise only, which the beamformer uses), an interferer at ``snr_db`` (talker-to-interferer
    ratio at the real mics) and white sensor noise at ``sensor_snr_db``.

    The image-source order is capped at ``max_order`` (speed); ``anechoic`` keeps the direct path
    only and no interferer. The talker is ``speech`` when given, else drawn by
    :func:`~.audio.speech_signal` (from the WAV files of ``corpus`` when given). Returns float arrays of
    ``n_samples``: ``real`` (M, N), ``real_speech`` (M, N), ``vm_speech`` (N,), ``vm_recording`` (N,),
    ``aux`` (K, N) (the held-out mics' recordings; K = 0 without any), ``source`` (N,).
    """
    fs = check_sample_rate(scene.fs)
    check_in_range("rt60", scene.rt60, 0.0, 2.0)
    real = check_points_in_room("real_mics", scene.real_mics, scene.room_dim)
    virtual = check_points_in_room("virtual_mic", scene.virtual_mic, scene.room_dim)
    src = check_points_in_room("source", scene.source, scene.room_dim)[0]
    lead = round(lead_s * fs)
    if lead >= n_samples:
        raise ValueError(f"lead_s must be shorter than the clip ({n_samples / fs:.2f} s), got {lead_s}")
    dry = (
        speech if speech is not None else speech_signal(n_samples - lead, fs, rng, use_espeak=use_espeak, corpus=corpus)
    )
    dry = np.concatenate([np.zeros(lead), np.asarray(dry, float)[: n_samples - lead]])
    if anechoic:
        room = pra.AnechoicRoom(dim=3, fs=fs, air_absorption=False)
    else:
        try:
            absorption, order = pra.inverse_sabine(scene.rt60, list(scene.room_dim), c=SPEED_OF_SOUND)
        except ValueError:
            raise ValueError(
                f"rt60 {scene.rt60:.3f} s is too short for a room of {scene.room_dim} m "
                "(Sabine's formula would need walls absorbing more than all the sound)"
            ) from None
        room = pra.ShoeBox(
            list(scene.room_dim), fs=fs, materials=pra.Material(absorption), max_order=min(order, max_order)
        )
    room.add_source(src, signal=dry)
    if not anechoic:
        itf = check_points_in_room("interferer", scene.interferer, scene.room_dim)[0]
        room.add_source(itf, signal=babble_noise(n_samples, fs, rng))
    aux = check_points_in_room("aux_mics", scene.aux_mics, scene.room_dim) if scene.n_aux else np.zeros((0, 3))
    mics = np.concatenate([real, virtual, aux], 0)
    room.add_microphone_array(mics.T)
    premix = room.simulate(return_premix=True)[..., :n_samples]
    if premix.shape[-1] < n_samples:
        premix = np.pad(premix, ((0, 0), (0, 0), (0, n_samples - premix.shape[-1])))
    speech_img = premix[0]
    m = real.shape[0]
    p_speech = np.mean(speech_img[:m, lead:] ** 2)
    noise = np.zeros_like(speech_img)
    if not anechoic:
        itf_img = premix[1]
        noise += itf_img * np.sqrt(p_speech / np.mean(itf_img[:m] ** 2) / 10 ** (snr_db / 10))
    noise += rng.standard_normal(noise.shape) * np.sqrt(p_speech / 10 ** (sensor_snr_db / 10))
    mixture = speech_img + noise
    return {
        "real": mixture[:m],
        "real_speech": speech_img[:m],
        "vm_speech": speech_img[m],
        "vm_recording": mixture[m],
        "aux": mixture[m + 1 :],
        "source": dry,
    }
