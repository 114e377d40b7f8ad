"""The chapter's reduced-scale reproduction, one code path for every scale.

For every seed in ``seeds`` (each: its own rooms, speech, noise, initial weights and batches):

1. **Scenes.** ``n_train_scenes`` and ``n_test_scenes`` random shoebox rooms (pyroomacoustics),
   ``n_mics`` real microphones on a circle, ``n_aux`` held-out microphones on a wider circle (the
   training array: the network never sees them, the training pseudo-targets are built with them), one
   virtual position next to the array where no microphone stands, a talker and an interferer; every
   scene runs the unsupervised pipeline (DOA, delays, pseudo-targets).
2. **Training.** Virtual-Flow (conditional flow matching toward the held-out-mic pseudo-targets, no truth);
   its reflow (retrained on its own noise-to-sample couplings); the *supervised* regression
   baseline, trained on the true virtual signals (the upper reference); and the *control*, the
   same regression network trained on the pseudo-targets (is it the flow, or just a network
   fitted to pseudo-targets?).
3. **Evaluation** on the test rooms: every virtual-mic estimate (and two trivial ones: a copy of the nearest
   real mic, noise at the real mics' level) against the true virtual signal (SI-SDR, per-band error and energy
   ratio), steps vs quality for the base and the reflowed flow, and MVDR beamforming, scored on the speech part,
   with the real microphones alone or with one channel added: a virtual one, a physical microphone at the
   virtual position (the oracle virtual channel), Virtual-Flow's own training target (built with the held-out
   microphones: information the real ones lack, reported as a diagnostic, not a gate), or a random channel
   that carries no information (the control); and a *fixed-layout* MVDR, its weights fitted with a physical
   microphone at the virtual position and not refitted when that microphone's slot is filled with an estimate,
   a copy, a random channel or nothing (the use case of a virtual microphone: a downstream calibrated for one
   more microphone than the array has).
"""

from __future__ import annotations

import copy
import itertools
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, ClassVar

import numpy as np
import torch
from tqdm.auto import tqdm

from ..core.arguments import ArgumentError, checked
from ..core.checkpoint import Checkpointer
from ..core.config import ExperimentConfig
from ..core.device import resolve_device
from ..core.experiment import Results, run_parts_timed, start_run
from ..core.params import Bool, Choice, Float, Int, Seeds, Tuple, param
from ..core.threads import one_cpu_thread, worker_count
from ..core.verdicts import fmt_pm, mean_sd
from .audio import SAMPLE_RATES, source_kind, speech_corpus
from .data import (
    Example,
    bins_to_spec,
    first_speech_frame,
    make_example,
    nearest_mic,
    supervised_data,
    unsupervised_data,
)
from .downstream import band_errors, mvdr, new_information, si_sdr, stoi
from .flow import (
    SOLVERS,
    Regressor,
    VelocityNet,
    _solve,
    evaluations_per_sample,
    first_velocity,
    fixed_loss,
    parameter_count,
    reflow_pairs,
    sample,
    train_flow,
    train_regression,
)
from .pseudo import DOA_METHODS, istft, stft, true_azimuth
from .scenes import Scene, random_scene, simulate

#: the virtual-mic estimators compared against the truth, in table order
METHODS: tuple[str, ...] = ("nearest", "noise", "pseudo", "pseudo_train", "control", "flow", "reflow", "supervised")
METHOD_LABELS: dict[str, str] = {
    "nearest": "nearest real mic (a copy)",
    "noise": "noise at the real mics' level (no information)",
    "pseudo": "pseudo-target from the real mics (no learning)",
    "pseudo_train": "pseudo-target with the held-out mics (the training targets; not available at test)",
    "control": "regression on pseudo-targets (control)",
    "flow": "Virtual-Flow",
    "reflow": "Virtual-Flow + reflow, 1 step",
    "supervised": "supervised with the truth (reference)",
}
#: channel sets of the beamforming comparison: the real mics alone, or with one more channel
BEAMFORMING: tuple[str, ...] = (
    "real",
    "random",
    "pseudo",
    "control",
    "flow",
    "reflow",
    "supervised",
    "pseudo_train",
    "physical",
)
#: what fills the last slot of the fixed-layout beamformer, whose weights were fitted with a physical microphone
#: there (in the same room: an oracle calibration) and are not refitted: the physical mic itself, an estimate, a
#: copy of the nearest real mic, nothing (zeros: the slot left empty, the honest control) or a random channel
FIXED_LAYOUT: tuple[str, ...] = ("physical", "supervised", "flow", "reflow", "control", "nearest", "empty", "random")
FIXED_LABELS: dict[str, str] = {
    "physical": "the physical mic (its calibration)",
    "supervised": "supervised VM",
    "flow": "Virtual-Flow",
    "reflow": "reflow (1 step)",
    "control": "control (regression on pseudo-targets)",
    "nearest": "a copy of the nearest real mic",
    "empty": "nothing (the slot left empty: zeros)",
    "random": "a random channel",
}
#: the estimates the gate "room" compares (supervised minus pseudo-target), on the test rooms and the gate rooms
ROOM_GATE: tuple[str, ...] = ("supervised", "pseudo")
#: channel sets of the beamformer's positive control, also run on the extra gate rooms
GATE_BEAMS: tuple[str, ...] = ("real", "random", "physical")
BEAM_LABELS: dict[str, str] = {
    "real": "real mics only",
    "random": "+ a random channel (control: no information)",
    "pseudo": "+ pseudo-target",
    "control": "+ control",
    "flow": "+ Virtual-Flow",
    "reflow": "+ reflow (1 step)",
    "supervised": "+ supervised VM",
    "pseudo_train": "+ the flow's training target (held-out physical mics: a diagnostic, not available at test)",
    "physical": "+ a physical mic there",
}


@dataclass(frozen=True)
class VirtualFlowConfig(ExperimentConfig):
    """Settings of :func:`run`. Field defaults are the ``book`` preset."""

    seeds: tuple[int, ...] = param(
        (0, 1, 2, 3, 4), Seeds(), "seeds (rooms, speech, weights, batches) the verdicts are taken over"
    )
    fs: int = param(8000, Int(8000, 16000), "sample rate in Hz (8000 or 16000)")
    clip_s: float = param(1.3, Float(0.3, 10.0), "length of every clip in seconds (the first lead_s are noise only)")
    lead_s: float = param(0.5, Float(0.05, 1.0), "seconds before the talker starts (the beamformer's noise frames)")
    nfft: int = param(256, Int(32, 2048), "STFT size (hop nfft/2, Hann window)")
    n_mics: int = param(2, Int(2, 8), "real microphones on a circle (the network's input)")
    array_radius: float = param(0.05, Float(0.01, 0.5), "radius of the real array in metres")
    n_aux: int = param(
        4,
        Int(0, 8),
        "held-out microphones of the training array (pseudo-targets only; 0: none, targets from the real mics)",
    )
    aux_radius: float = param(0.3, Float(0.01, 0.9), "radius of the held-out microphones' circle in metres")
    vm_distance: tuple[float, ...] = param(
        (0.2, 0.35),
        Tuple(Float(0.0, 1.0), min_len=2, max_len=2, increasing=True),
        "range of the virtual mic's distance from the array centre, metres",
    )
    rt60_range: tuple[float, ...] = param(
        (0.15, 0.25), Tuple(Float(0.05, 2.0), min_len=2, max_len=2, increasing=True), "range of the rooms' RT60, s"
    )
    snr_range: tuple[float, ...] = param(
        (-10.0, 0.0),
        Tuple(Float(-20.0, 40.0), min_len=2, max_len=2, increasing=True),
        "range of the talker-to-interferer ratio at the real mics, dB",
    )
    sensor_snr_db: float = param(30.0, Float(0.0, 80.0), "white sensor noise level, dB below the talker")
    max_order: int = param(12, Int(0, 100), "cap on the image-source order (speed; shortens the late tail)")
    doa_method: str = param(
        "NormMUSIC", Choice(DOA_METHODS), "pyroomacoustics DOA method for the pseudo-target's direction"
    )
    use_espeak: bool = param(True, Bool(), "speech from espeak-ng when installed (else the harmonic fallback)")
    n_train_scenes: int = param(
        32,
        Int(1),
        "training rooms per seed (book 32: with 8 the supervised reference overfits its rooms; picked on tuning seeds "
        "by benchmarks/virtualflow_room_rule.md)",
    )
    n_test_scenes: int = param(
        12,
        Int(1),
        "test rooms per seed (book 12: a per-room difference of SI-SDRs is heavy-tailed, six rooms read it noisily; "
        "picked on tuning seeds by benchmarks/virtualflow_room_rule.md)",
    )
    n_fixed_scenes: int = param(
        0,
        Int(0, 1000),
        'more rooms per seed for the fixed-layout downstream alone (the gate "useful" and the downstream claim): '
        "simulated like the test rooms and read by the trained networks, after the test rooms (evaluation only)",
    )
    n_gate_scenes: int = param(
        24,
        Int(0),
        "more rooms per seed for the beamformer's positive control (real mics, + a physical mic, + a random channel) "
        'and the gate "room" (the supervised network against the pseudo-target; no network is trained on them)',
    )
    d_hidden: int = param(64, Int(8, 8192), "width of every network")
    n_layers: int = param(2, Int(1, 32), "residual blocks of every network")
    n_train_steps: int = param(250, Int(1), "Adam steps of Virtual-Flow (flow matching)")
    n_regression_steps: int = param(100, Int(1), "Adam steps of the control (regression on the pseudo-targets)")
    n_supervised_steps: int = param(
        800,
        Int(1),
        "Adam steps of the supervised reference (regression on the truth; 200 by benchmarks/virtualflow_robust_rule.md "
        "on 8 training rooms, 800 with 32 rooms by benchmarks/virtualflow_room_rule.md)",
    )
    n_reflow_steps: int = param(100, Int(1), "Adam steps of the reflow retraining (from the base weights)")
    n_reflow_pairs: int = param(
        6_000, Int(1), "time-frequency bins (random training bins) reflow's couplings are made for"
    )
    batch_size: int = param(512, Int(1), "time-frequency bins per training step")
    lr: float = param(2e-3, Float(0.0, 1.0, low_inclusive=False), "Adam learning rate (cosine decay)")
    solver: str = param("euler", Choice(SOLVERS), "ODE solver of the sampler, eq. (vf-ode)")
    n_sample_steps: int = param(8, Int(1, 1024), "solver steps of Virtual-Flow in the comparison")
    steps_grid: tuple[int, ...] = param(
        (1, 2, 8), Tuple(Int(1, 1024), increasing=True), "solver steps of the steps-vs-quality curves"
    )
    reflow_teacher_steps: int = param(8, Int(1, 1024), "solver steps of the base model when it makes reflow's pairs")
    n_bands: int = param(4, Int(1, 64), "equal-width frequency bands of the per-band errors")
    explorable_distances: tuple[float, ...] = param(
        (0.2, 0.275, 0.35),
        Tuple(Float(0.0, 1.0, low_inclusive=False), increasing=True),
        "virtual-mic distances of the explorable figure (one test room, first seed)",
    )
    processes: int = param(
        0,
        Int(0, 64),
        "processes: with 2 or more a spawned worker computes the odd-indexed seeds while this one computes the "
        "others, each on one torch thread (0: every CPU available); the numbers never depend on it",
    )

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(
            seeds=(0, 1),
            clip_s=1.0,
            n_train_scenes=2,
            n_test_scenes=1,
            n_fixed_scenes=1,
            n_gate_scenes=1,
            d_hidden=16,
            n_layers=1,
            n_train_steps=40,
            n_regression_steps=20,
            n_supervised_steps=20,
            n_reflow_pairs=2000,
            n_reflow_steps=20,
            batch_size=512,
            steps_grid=(1, 4),
            n_sample_steps=4,
            reflow_teacher_steps=4,
            explorable_distances=(0.25,),
            processes=1,
        ),
        "book": {},
        "paper": dict(
            device="auto",
            fs=16000,
            clip_s=4.0,
            nfft=512,
            n_mics=4,
            n_train_scenes=5000,
            n_test_scenes=200,
            n_gate_scenes=0,
            d_hidden=512,
            n_layers=4,
            n_train_steps=200_000,
            n_reflow_steps=50_000,
            batch_size=65_536,
            n_regression_steps=200_000,
            n_supervised_steps=200_000,
            n_reflow_pairs=5_000_000,
            max_order=40,
            seeds=(0, 1, 2),
            steps_grid=(1, 2, 4, 8, 16, 32),
            n_sample_steps=16,
            reflow_teacher_steps=32,
        ),
    }
    DATA_ROOT_SCALES: ClassVar[tuple[str, ...]] = ("paper",)
    DATA_DESCRIPTION: ClassVar[str] = (
        "a folder of clean-speech WAV files for the talkers, any layout (searched recursively); optional at the "
        "other scales (espeak-ng speaks without it)"
    )

    def cross_checks(self) -> None:
        if self.fs not in SAMPLE_RATES:
            raise ValueError(f"fs must be one of {SAMPLE_RATES}, got {self.fs}")
        if self.lead_s >= self.clip_s:
            raise ValueError(f"lead_s must be < clip_s ({self.clip_s}), got {self.lead_s}")
        if self.nfft % 2 or self.lead_s * self.fs < 2 * self.nfft:
            raise ValueError(f"nfft must be even and lead_s * fs >= 2 * nfft (noise frames), got nfft={self.nfft}")
        if self.n_aux and self.aux_radius <= self.array_radius:
            raise ValueError(
                f"aux_radius must exceed array_radius ({self.array_radius}) (held-out mics around the real ones), "
                f"got {self.aux_radius}"
            )
        if self.vm_distance[0] <= 0:
            raise ValueError(
                f"vm_distance must start above 0 (a virtual mic at the array centre), got {self.vm_distance}"
            )


class VirtualFlowResults(Results[VirtualFlowConfig]):
    """What :func:`run` returns: per-seed summaries, their aggregate, and the arrays the figures draw."""


def scene_seed(cfg: VirtualFlowConfig, seed: int, split: str, index: int) -> int:
    """One integer seed per scene, derived from the base seed, the entry of ``seeds``, the split and the index."""
    offset = {
        "train": 0,
        "test": 5_000_000,
        "random": 7_000_000,
        "gate": 9_000_000,
        "fixed": 11_000_000,
        "fixed_random": 13_000_000,
        "gate_noise": 15_000_000,
    }[split]
    return 1_000_003 * cfg.seed + 10_007 * seed + offset + index


def _config_scene(cfg: VirtualFlowConfig, rng: np.random.Generator, **overrides: Any) -> Scene:
    """:func:`random_scene` with the config's sampling rate, array and room ranges (``overrides``: any other
    argument, or one of these replaced)."""
    settings = dict(
        fs=cfg.fs,
        n_mics=cfg.n_mics,
        array_radius=cfg.array_radius,
        vm_distance=cfg.vm_distance,
        rt60_range=cfg.rt60_range,
    )
    return random_scene(rng, **{**settings, **overrides})


def build_example(
    cfg: VirtualFlowConfig,
    seed: int,
    split: str,
    index: int,
    *,
    vm_distance: float | None = None,
    vm_angle: float | None = None,
) -> Example:
    """Scene number ``index`` of ``split`` for ``seed``: simulated, then through the unsupervised pipeline."""
    rng = np.random.default_rng(scene_seed(cfg, seed, split, index))
    dist = cfg.vm_distance if vm_distance is None else (vm_distance, vm_distance)
    scene = _config_scene(cfg, rng, vm_distance=dist, vm_angle=vm_angle, n_aux=cfg.n_aux, aux_radius=cfg.aux_radius)
    snr = float(rng.uniform(*cfg.snr_range))
    sim = simulate(
        scene,
        round(cfg.clip_s * cfg.fs),
        rng,
        snr_db=snr,
        sensor_snr_db=cfg.sensor_snr_db,
        lead_s=cfg.lead_s,
        max_order=cfg.max_order,
        use_espeak=cfg.use_espeak,
        corpus=speech_corpus(cfg.data_root) if cfg.data_root else (),
    )
    return make_example(scene, sim, nfft=cfg.nfft, lead_s=cfg.lead_s, doa_method=cfg.doa_method)


def gate_room(cfg: VirtualFlowConfig, seed: int, index: int) -> Example:
    """Room ``index`` of the split ``"gate"`` for ``seed``: drawn and simulated as the test rooms are (without
    held-out microphones, which only the training targets use), then through the unsupervised pipeline (direction,
    pseudo-target, condition) as a test room is: the beamformer's positive control and the gate "room" read it; no
    network is trained on it."""
    rng = np.random.default_rng(scene_seed(cfg, seed, "gate", index))
    scene = _config_scene(cfg, rng)
    sim = simulate(
        scene,
        round(cfg.clip_s * cfg.fs),
        rng,
        snr_db=float(rng.uniform(*cfg.snr_range)),
        sensor_snr_db=cfg.sensor_snr_db,
        lead_s=cfg.lead_s,
        max_order=cfg.max_order,
        use_espeak=cfg.use_espeak,
        corpus=speech_corpus(cfg.data_root) if cfg.data_root else (),
    )
    return make_example(scene, sim, nfft=cfg.nfft, lead_s=cfg.lead_s, doa_method=cfg.doa_method)


def relocate(cfg: VirtualFlowConfig, seed: int, index: int, distance: float) -> Example:
    """Test scene ``index`` with its virtual mic moved to ``distance`` (same room, speech, noise, angle)."""
    rng = np.random.default_rng(scene_seed(cfg, seed, "test", index))
    base = _config_scene(cfg, rng)
    d = base.virtual_mic - base.real_mics.mean(0)
    angle = float(np.arctan2(d[1], d[0]))
    return build_example(cfg, seed, "test", index, vm_distance=distance, vm_angle=angle)


@dataclass
class Models:
    """The trained networks of one seed."""

    flow: VelocityNet
    reflow: VelocityNet
    supervised: Regressor
    control: Regressor
    losses: dict[str, list[float]]
    loss_before: dict[str, float]  # training loss on fixed bins and draws, before training
    loss_after: dict[str, float]  # the same, after training


def train_models(
    cfg: VirtualFlowConfig,
    train: list[Example],
    seed: int,
    device: torch.device,
    progress: bool = False,
    checkpoint: Checkpointer | None = None,
) -> Models:
    """Virtual-Flow (pseudo-targets only), its reflow, the supervised reference and the control.

    With a ``checkpoint``, each training loop stores its state under ``seed_<seed>/<network>``, so a
    resumed run continues inside the seed's training and ends with the same weights."""
    torch.manual_seed(cfg.seed * 7919 + seed)
    gen = torch.Generator().manual_seed(cfg.seed * 7919 + seed)
    pseudo_x, cond = unsupervised_data(train, device)
    d_cond = cond.shape[1]
    kw = dict(batch_size=cfg.batch_size, lr=cfg.lr)
    flow = VelocityNet(cfg.n_mics, d_cond, cfg.d_hidden, cfg.n_layers).to(device)
    control = Regressor(cfg.n_mics, d_cond, cfg.d_hidden, cfg.n_layers).to(device)
    supervised = Regressor(cfg.n_mics, d_cond, cfg.d_hidden, cfg.n_layers).to(device)
    truth_x, cond_s = supervised_data(train, device)  # the only place the truth is read in training
    probes = {
        "flow": (flow, pseudo_x, cond),
        "control": (control, pseudo_x, cond),
        "supervised": (supervised, truth_x, cond_s),
    }
    before = {m: fixed_loss(net, x, c, n=20_000, seed=seed) for m, (net, x, c) in probes.items()}
    bar = tqdm(total=cfg.n_train_steps, desc=f"seed {seed}: Virtual-Flow", disable=not progress)
    ckpt = dict(checkpoint=checkpoint)
    flow_loss = train_flow(
        flow,
        pseudo_x,
        cond,
        generator=gen,
        on_step=lambda _k: bar.update(),
        n_steps=cfg.n_train_steps,
        name=f"seed_{seed}/flow",
        **ckpt,
        **kw,
    )
    bar.close()
    # reflow, eq. (vf-reflow): couplings (x0, ODE(x0)) from the base model, retrained from its weights
    keep = torch.randperm(cond.shape[0], generator=gen)[: cfg.n_reflow_pairs].to(device)
    x0, x1 = reflow_pairs(flow, cond[keep], n_steps=cfg.reflow_teacher_steps, generator=gen, solver=cfg.solver)
    reflow = copy.deepcopy(flow)
    reflow_loss = train_flow(
        reflow,
        x1,
        cond[keep],
        generator=gen,
        x0=x0,
        n_steps=cfg.n_reflow_steps,
        batch_size=cfg.batch_size,
        lr=cfg.lr / 2,
        name=f"seed_{seed}/reflow",
        **ckpt,
    )
    n_reg = cfg.n_regression_steps
    control_loss = train_regression(
        control, pseudo_x, cond, generator=gen, n_steps=n_reg, name=f"seed_{seed}/control", **ckpt, **kw
    )
    sup_loss = train_regression(
        supervised,
        truth_x,
        cond_s,
        generator=gen,
        n_steps=cfg.n_supervised_steps,
        name=f"seed_{seed}/supervised",
        **ckpt,
        **kw,
    )
    losses = {"flow": flow_loss, "reflow": reflow_loss, "control": control_loss, "supervised": sup_loss}
    after = {m: fixed_loss(net, x, c, n=20_000, seed=seed) for m, (net, x, c) in probes.items()}
    return Models(flow, reflow, supervised, control, losses, before, after)


def estimate(
    models: Models,
    ex: Example,
    method: str,
    *,
    n_steps: int,
    solver: str,
    x0: torch.Tensor,
    device: torch.device,
    v0: torch.Tensor | None = None,
) -> np.ndarray:
    """The virtual-mic STFT ``(F, T)`` of one estimator on one scene (flows start from the given ``x0``).

    ``v0`` (flows only): that flow's first network evaluation from ``x0`` in this scene (:func:`first_velocities`),
    shared by its solves at several step counts (:func:`~.flow._solve`; the numbers are the same)."""
    if method == "nearest":
        return ex.spec_real[nearest_mic(ex)]
    if method == "noise":
        raise ValueError("the noise channel is drawn per scene: use random_channel(ex, rng)")
    if method == "pseudo":
        return ex.pseudo
    if method == "pseudo_train":
        return ex.pseudo_train
    cond = torch.from_numpy(ex.cond).to(device)
    with torch.no_grad():
        if method in ("supervised", "control"):
            frames = getattr(models, method)(cond)
        elif method in ("flow", "reflow"):
            if v0 is None:
                frames = sample(getattr(models, method), cond, x0, n_steps, solver)
            else:
                frames = _solve(getattr(models, method), cond, x0, n_steps, solver, v0)
        else:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return bins_to_spec(frames.cpu().numpy(), ex.scale, ex.truth.shape[0])


def first_velocities(
    models: Models, ex: Example, x0: torch.Tensor, device: torch.device, names: tuple[str, ...] = ("flow", "reflow")
) -> dict[str, torch.Tensor]:
    """Each flow's first network evaluation from ``x0`` in scene ``ex`` (:func:`estimate`'s ``v0``), made once for
    all its solves there."""
    cond = torch.from_numpy(ex.cond).to(device)
    return {name: first_velocity(getattr(models, name), cond, x0) for name in names}


def beam_split(cfg: VirtualFlowConfig, n_frames: int) -> int:
    """The frame where the beamformer's steering vector is cross-fitted (:func:`~.downstream.mvdr`'s
    ``steer_split``): the middle of the speech part."""
    first = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    return min(max(first + (n_frames - first) // 2, 2), n_frames - 3)


def beamform(
    ex: Example, extra: np.ndarray | None, cfg: VirtualFlowConfig, fit_extra: np.ndarray | None = None
) -> np.ndarray:
    """MVDR output waveform from the real channels, plus ``extra`` (an STFT ``(F, T)``) when given.

    With ``fit_extra`` (an STFT ``(F, T)``; ``extra`` must then be given too), the beamformer has a *fixed layout*:
    its weights are fitted on the real channels plus ``fit_extra`` (in the chapter, a physical microphone at the
    virtual position, in the same room: an oracle calibration) and applied, unchanged, to the real channels plus
    ``extra`` (an estimate in that microphone's slot, or zeros for an empty slot). Without it, the weights are
    fitted on the very channels they filter (the adaptive beamformer).

    The noise covariance comes from the noise-only lead; the steering vector from every channel's
    cross-correlation with the talker's clean image at the first real mic (the simulator's oracle, the same
    for every channel set: it stands in for the mask-estimating network of a neural beamformer), cross-fitted:
    each half of the speech part is filtered with the steering vector fitted on the other half
    (:func:`beam_split`), so that no channel's chance correlation with the talker on the scored frames enters
    the weights. Blind steering (covariance whitening) does much worse at this scene's noise levels."""
    hop = cfg.nfft // 2
    if fit_extra is not None and extra is None:
        raise ArgumentError("extra must be given with fit_extra (the channel that fills the calibrated slot)")
    chans = ex.spec_real if extra is None else np.concatenate([ex.spec_real, _slot(extra, ex, "extra")[None]], 0)
    fit = None if fit_extra is None else np.concatenate([ex.spec_real, _slot(fit_extra, ex, "fit_extra")[None]], 0)
    n_noise = int((cfg.lead_s * cfg.fs - cfg.nfft) // hop)
    reference = stft(ex.real_speech[0], cfg.nfft, hop)
    split = beam_split(cfg, reference.shape[1])
    out = mvdr(chans, n_noise, reference=reference, steer_split=split, fit=fit)
    return istft(out, cfg.nfft, hop, ex.real.shape[1])


def _slot(channel: np.ndarray, ex: Example, name: str) -> np.ndarray:
    """``channel`` as one extra STFT channel of ``ex``'s shape ``(F, T)``, with finite values (else a clear error)."""
    arr = np.asarray(channel)
    if arr.shape != ex.spec_real.shape[1:]:
        raise ArgumentError(f"{name} must be an STFT of one channel's shape {ex.spec_real.shape[1:]}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ArgumentError(f"{name} must hold finite values")
    return arr


def beam_score(ex: Example, out: np.ndarray, cfg: VirtualFlowConfig) -> tuple[float, float]:
    """SI-SDR and STOI of a :func:`beamform` output on the speech part, against the talker's image at the
    reference mic (sample-aligned with the MVDR output, which is distortionless toward it)."""
    start = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft) * (cfg.nfft // 2)
    ref = ex.real_speech[0]
    return beam_sisdr(ex, out, cfg), stoi(out[start:], ref[start:], cfg.fs)


def beam_sisdr(ex: Example, out: np.ndarray, cfg: VirtualFlowConfig) -> float:
    """The SI-SDR of :func:`beam_score` alone (what the gate rooms read: their STOI is never read)."""
    start = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft) * (cfg.nfft // 2)
    return speech_sisdr(out, ex.real_speech[0], start)


def random_channel(ex: Example, rng: np.random.Generator) -> np.ndarray:
    """An extra STFT channel ``(F, T)`` that carries no information: independent complex Gaussian noise with,
    per frequency, the mean power of the real microphones. A beamformer that gains from it gains from the extra
    dimension alone (finite-sample covariance estimates), not from anything recorded."""
    power = np.mean(np.abs(ex.spec_real) ** 2, axis=(0, 2))[:, None]
    shape = ex.spec_real.shape[1:]
    return np.sqrt(power / 2) * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))


def speech_sisdr(estimate: np.ndarray, reference: np.ndarray, start: int) -> float:
    """SI-SDR, eq. (vf-sisdr), of the two waveforms from sample ``start`` on (the speech part): what the estimate
    does in the noise-only lead, where the reference is silent, neither raises nor lowers the score."""
    if not 0 <= start < len(reference) or len(estimate) != len(reference):
        raise ValueError(f"start must lie in [0, {len(reference)}) and the lengths agree, got {start}, {len(estimate)}")
    return si_sdr(estimate[start:], reference[start:])


def dominant_source(ex: Example, start: int) -> np.ndarray:
    """The position of the source with more energy at the real mics from sample ``start`` on: the talker (its
    image ``real_speech``) or the interferer (the rest of the recording, sensor noise included)."""
    talker = float(np.sum(ex.real_speech[:, start:] ** 2))
    rest = float(np.sum((ex.real[:, start:] - ex.real_speech[:, start:]) ** 2))
    return ex.scene.source if talker >= rest else ex.scene.interferer


def mic_distances(ex: Example) -> dict[str, float]:
    """Metres from the virtual position to the nearest real mic (``"real"``) and to the nearest held-out mic of the
    training array (``"aux"``; NaN without any): a held-out mic near the VM would make the training target nearly
    the truth."""
    vm = ex.scene.virtual_mic
    real = float(np.min(np.linalg.norm(ex.scene.real_mics - vm, axis=1)))
    aux = float(np.min(np.linalg.norm(ex.scene.aux_mics - vm, axis=1))) if ex.scene.n_aux else float("nan")
    return {"real": real, "aux": aux}


def _mean_sd(values: list[float]) -> dict[str, float]:
    """Mean and sample sd over seeds (:func:`~explorables.core.verdicts.mean_sd`: sd is NaN for one seed)."""
    mean, sd = mean_sd(values)
    return {"mean": mean, "sd": sd}


#: the fills of the fixed layout an estimator computes (the rest: the physical mic, zeros, a random channel)
FIXED_FILLS: tuple[str, ...] = ("supervised", "flow", "reflow", "control", "nearest")


#: the fixed layout's scores that are the adaptive beamformer's (:func:`fixed_scores`' ``known``)
ADAPTIVE_SAME: tuple[str, ...] = ("real", "physical")


def fixed_scores(
    cfg: VirtualFlowConfig,
    ex: Example,
    fills: dict[str, np.ndarray],
    noise: np.ndarray,
    known: dict[str, float] | None = None,
) -> dict:
    """Output SI-SDR (speech part) of the fixed-layout MVDR in one room: weights fitted once on [real mics, the
    physical mic at the virtual position] and applied unchanged with that mic's slot filled by each of
    ``FIXED_LAYOUT`` (``fills``: the estimators' channels, ``FIXED_FILLS``; ``noise``: the random channel), and
    ``"real"``: the real mics' own refitted MVDR in the same room (the line every fill-in is read against).

    The physical mic in its own calibrated slot *is* the adaptive MVDR with that mic, and ``"real"`` the adaptive
    MVDR of the real mics (the same computation, the same numbers): ``known``, when given, holds those two scores
    (``ADAPTIVE_SAME``) already computed by :func:`beam_score` in this room, and they are not computed again."""
    hop = cfg.nfft // 2
    start = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft) * hop
    known = known or {}
    if set(known) - set(ADAPTIVE_SAME):
        raise ArgumentError(f"known may hold only {ADAPTIVE_SAME}, got {sorted(known)}")
    physical = stft(ex.vm_recording, cfg.nfft, hop)
    chans = {**fills, "physical": physical, "empty": np.zeros_like(physical), "random": noise}
    out = {"real": known["real"]} if "real" in known else {}
    if not out:
        out["real"] = speech_sisdr(beamform(ex, None, cfg), ex.real_speech[0], start)
    for b in FIXED_LAYOUT:
        if b in known:
            out[b] = known[b]
        else:
            out[b] = speech_sisdr(beamform(ex, chans[b], cfg, fit_extra=physical), ex.real_speech[0], start)
    return out


def fixed_layout_rooms(
    cfg: VirtualFlowConfig,
    models: Models,
    test: list[Example],
    device: torch.device,
    seed: int,
    specs: list[dict[str, np.ndarray]] | None = None,
    known: list[dict[str, float]] | None = None,
) -> dict[str, list[float]]:
    """:func:`fixed_scores` per room, on the test rooms and then ``cfg.n_fixed_scenes`` more rooms of the split
    ``"fixed"`` (simulated like the test rooms; no network is trained on them). The flows' starting noise comes
    from the generator :func:`evaluate_seed` uses, in the same order (one draw per test room, then one per extra
    room), and each test room's random channel is the one :func:`evaluate_seed` draws, so the test rooms' scores
    are those of the evaluation (``specs``, when given: the test rooms' ``FIXED_FILLS`` channels already computed
    from those draws; ``known``, when given: the test rooms' adaptive-beamformer scores, :func:`fixed_scores`'
    ``known``). Returns ``{fill: [score per room]}`` with ``"real"`` among the fills."""
    if specs is not None and len(specs) != len(test):
        raise ArgumentError(f"specs must hold one dict per test room ({len(test)}), got {len(specs)}")
    if known is not None and len(known) != len(test):
        raise ArgumentError(f"known must hold one dict per test room ({len(test)}), got {len(known)}")
    gen = torch.Generator().manual_seed(cfg.seed * 104_729 + seed)
    rooms = itertools.chain(test, (build_example(cfg, seed, "fixed", j) for j in range(cfg.n_fixed_scenes)))
    out: dict[str, list[float]] = {}
    for i, ex in enumerate(rooms):
        x0 = torch.randn(ex.cond.shape[0], models.flow.d_frame, generator=gen).to(device)
        if i < len(test):
            noise = random_channel(ex, np.random.default_rng(scene_seed(cfg, seed, "random", i)))
        else:
            noise = random_channel(ex, np.random.default_rng(scene_seed(cfg, seed, "fixed_random", i - len(test))))
        if specs is not None and i < len(test):
            fills = specs[i]
        else:
            fills = {
                m: estimate(
                    models,
                    ex,
                    m,
                    n_steps=1 if m == "reflow" else cfg.n_sample_steps,
                    solver=cfg.solver,
                    x0=x0,
                    device=device,
                )
                for m in FIXED_FILLS
            }
        room_known = known[i] if known is not None and i < len(test) else None
        for b, value in fixed_scores(cfg, ex, fills, noise, room_known).items():
            out.setdefault(b, []).append(value)
    return out


#: gate rooms per seed the reflow claim's row also reads (the first of the ``n_gate_scenes``): 12 test rooms and 12 of
#: them give 24 rooms per seed; all 24 cost more network evaluations than the page's time allows
#: (``benchmarks/virtualflow_reflow_rooms_rule2.md``)
REFLOW_GATE_ROOMS = 12


def reflow_gate_rooms(cfg: VirtualFlowConfig) -> int:
    """How many of the gate rooms the reflow row reads: ``REFLOW_GATE_ROOMS``, or all of them when fewer."""
    return min(REFLOW_GATE_ROOMS, cfg.n_gate_scenes)


def reflow_row_solves(cfg: VirtualFlowConfig) -> tuple[tuple[str, int], ...]:
    """The solves the reflow claim's row reads, as ``(network, Euler steps)``: the base flow at one step and at
    ``n_sample_steps``, and reflow at one step."""
    return ("flow", 1), ("flow", cfg.n_sample_steps), ("reflow", 1)


def reflow_row_scores(
    cfg: VirtualFlowConfig,
    ex: Example,
    solved: Callable[[str, int], np.ndarray],
    scored: Callable[[str, int], tuple[float, Any]] | None = None,
) -> dict:
    """What the reflow claim's row reads in one room: per solve of :func:`reflow_row_solves` (``solved(name, k)``
    returns its STFT, every solve from one noise draw), SI-SDR against the true virtual signal on the speech part and
    the per-band energy ratio (:func:`~.downstream.band_errors`), under ``reflow_row/sisdr/<name>/<k>`` and
    ``reflow_row/energy/<name>/<k>``. :func:`evaluate_seed` scores the test rooms (the solves it makes anyway) and the
    first :func:`reflow_gate_rooms` gate rooms with it, so the row's per-seed means are over both
    (``benchmarks/virtualflow_reflow_rooms_rule2.md``). ``scored(name, k)``, when given, returns that solve's two
    numbers already computed (:func:`solve_scores` of the same STFT; the test rooms score their solves once)."""
    out: dict[str, Any] = {}
    for name, k in reflow_row_solves(cfg):
        sisdr, energy = solve_scores(cfg, ex, solved(name, k)) if scored is None else scored(name, k)
        out[f"reflow_row/sisdr/{name}/{k}"] = sisdr
        out[f"reflow_row/energy/{name}/{k}"] = energy
    return out


def solve_scores(cfg: VirtualFlowConfig, ex: Example, spec: np.ndarray) -> tuple[float, Any]:
    """A virtual-mic STFT's SI-SDR against the true virtual signal on the speech part and its per-band energy ratio
    (:func:`~.downstream.band_errors`), the two numbers the steps curves and the reflow row read."""
    hop = cfg.nfft // 2
    first = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    wave = istft(spec, cfg.nfft, hop, ex.real.shape[1])
    sisdr = si_sdr(wave[first * hop :], ex.truth_wave[first * hop :])
    return sisdr, band_errors(spec, ex.truth, cfg.fs, cfg.n_bands, first)["energy_ratio_db"]


def gate_room_noise(cfg: VirtualFlowConfig, models: Models, room: Example, seed: int, index: int) -> torch.Tensor:
    """The flows' starting noise in gate room ``index``: one draw per room from its own generator (the split
    ``"gate_noise"``), shared by the base flow and reflow, so no other draw of the run moves."""
    gen = torch.Generator().manual_seed(scene_seed(cfg, seed, "gate_noise", index))
    return torch.randn(room.cond.shape[0], models.flow.d_frame, generator=gen)


def evaluate_seed(
    cfg: VirtualFlowConfig, models: Models, test: list[Example], device: torch.device, seed: int
) -> tuple[dict, dict]:
    """Scores of every estimator on the test scenes of one seed (means over scenes), and one scene's audio."""
    hop = cfg.nfft // 2
    first = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    gen = torch.Generator().manual_seed(cfg.seed * 104_729 + seed)
    per: dict[str, list] = {}
    compute: dict[str, list[float]] = {}

    def add(key: str, value: Any) -> None:
        per.setdefault(key, []).append(value)

    audio: dict[str, np.ndarray] = {}
    gate_beams: dict[str, list[float]] = {}
    fixed_specs: list[dict[str, np.ndarray]] = []
    fixed_known: list[dict[str, float]] = []  # the adaptive scores the fixed layout reads too (ADAPTIVE_SAME)
    for j, ex in enumerate(test):
        n = ex.real.shape[1]
        x0 = torch.randn(ex.cond.shape[0], models.flow.d_frame, generator=gen).to(device)
        specs = {}
        v0: dict[str, torch.Tensor] = {}  # each flow's first evaluation from x0, made once (timed with its solve)
        scores: dict[tuple[str, int], tuple[float, Any]] = {}  # (SI-SDR, band energy ratios) per solve, made once
        for m in METHODS:
            steps = 1 if m == "reflow" else cfg.n_sample_steps
            start = time.perf_counter()
            if m == "noise":  # the level-matched channel without information (also the beamformer's control)
                specs[m] = random_channel(ex, np.random.default_rng(scene_seed(cfg, seed, "random", j)))
            else:
                if m in ("flow", "reflow"):
                    v0.update(first_velocities(models, ex, x0, device, (m,)))
                specs[m] = estimate(models, ex, m, n_steps=steps, solver=cfg.solver, x0=x0, device=device, v0=v0.get(m))
            compute.setdefault(m, []).append((time.perf_counter() - start) / (n / cfg.fs))
            wave = istft(specs[m], cfg.nfft, hop, n)
            add(f"sisdr/{m}", si_sdr(wave[first * hop :], ex.truth_wave[first * hop :]))
            bands = band_errors(specs[m], ex.truth, cfg.fs, cfg.n_bands, first)
            if m in ("flow", "reflow"):  # the steps curves and the reflow row read these two again
                scores[m, steps] = (per[f"sisdr/{m}"][-1], bands["energy_ratio_db"])
            add(f"nmse/{m}", bands["nmse_db"])
            add(f"energy/{m}", bands["energy_ratio_db"])
            add(f"magerr/{m}", bands["mag_nmse_db"])
            # what the channel adds beyond the real mics (all a linear beamformer can use), and how much of the
            # physical mic's own addition it carries
            new = new_information(specs[m], ex.truth, ex.spec_real, first)
            add(f"outside/{m}", new["outside_db"])
            add(f"captured/{m}", new["captured"])
            if j == 0:
                audio[m] = wave
        fixed_specs.append({m: specs[m] for m in FIXED_FILLS})
        # steps vs quality, base and reflow, from the same noise; distance to the base's teacher solve
        # (a solve already made above, from the same x0, is reused: it is the same deterministic ODE solve)
        solved = {("flow", cfg.n_sample_steps): specs["flow"], ("reflow", 1): specs["reflow"]}

        def solve(
            name: str, k: int, ex: Example = ex, x0: torch.Tensor = x0, solved: dict = solved, v0: dict = v0
        ) -> np.ndarray:
            if (name, k) not in solved:
                solved[name, k] = estimate(
                    models, ex, name, n_steps=k, solver=cfg.solver, x0=x0, device=device, v0=v0[name]
                )
            return solved[name, k]

        def score(name: str, k: int, ex: Example = ex, solve: Callable = solve, scores: dict = scores) -> tuple:
            if (name, k) not in scores:
                scores[name, k] = solve_scores(cfg, ex, solve(name, k))
            return scores[name, k]

        teacher = solve("flow", cfg.reflow_teacher_steps)
        for name in ("flow", "reflow"):
            for k in cfg.steps_grid:
                spec = solve(name, k)
                sisdr, energy = score(name, k)
                add(f"steps/{name}/{k}", sisdr)
                gap = np.mean(np.abs(spec - teacher) ** 2) / np.mean(np.abs(teacher) ** 2)
                add(f"to_teacher/{name}/{k}", float(10 * np.log10(gap + 1e-20)))
                add(f"steps_energy/{name}/{k}", energy)
        for key, value in reflow_row_scores(cfg, ex, solve, score).items():
            add(key, value)
        # downstream: MVDR with the real mics, or with one extra channel: an estimate, a physical mic there, or a
        # random channel that carries no information (the control every extra channel is measured against)
        # scored on the speech part only (from the first frame after the lead), against the talker's image at the
        # reference mic, sample-aligned with the MVDR output (distortionless toward that image): the noise-only lead,
        # where the reference is silent, must not weigh in
        # (the steering vector is cross-fitted: each half of the speech part is filtered with the other half's)
        extras = {"real": None, "physical": stft(ex.vm_recording, cfg.nfft, hop), "random": specs["noise"]}
        add("outside/physical", new_information(extras["physical"], ex.truth, ex.spec_real, first)["outside_db"])
        known_here: dict[str, float] = {}
        fixed_known.append(known_here)
        for b in BEAMFORMING:
            out = beamform(ex, extras[b] if b in extras else specs[b], cfg)
            beam_si, beam_st = beam_score(ex, out, cfg)
            if b in ADAPTIVE_SAME:
                known_here[b] = beam_si
            add(f"beam_sisdr/{b}", beam_si)
            add(f"beam_stoi/{b}", beam_st)
            if b in GATE_BEAMS:
                gate_beams.setdefault(b, []).append(beam_si)
            if j == 0 and b in ("real", "flow", "physical"):
                audio[f"beam_{b}"] = out
        for key, d in mic_distances(ex).items():
            add(f"dist/{key}", d)
        # the direction estimate against the source that dominates the real mics' speech part (the interferer, in
        # most rooms: that is the source the pseudo-target steers to) and against the talker
        loud = dominant_source(ex, first * hop)
        for key, pos in (("doa_error_deg", loud), ("doa_error_talker_deg", ex.scene.source)):
            err = np.angle(np.exp(1j * (ex.azimuth - true_azimuth(pos, ex.scene.real_mics))))
            add(key, float(np.degrees(abs(err))))
        add("talker_dominant", float(np.array_equal(loud, ex.scene.source)))
        if j == 0:
            audio["truth"] = ex.truth_wave
            audio["mic0"] = ex.real[0]
    # the fixed layout, on the test rooms (their channels above, the same noise) and n_fixed_scenes more rooms
    for b, values in fixed_layout_rooms(cfg, models, test, device, seed, fixed_specs, fixed_known).items():
        per[f"fixed_sisdr/{b}"] = values
    # the beamformer's positive control on more rooms (the test rooms and the gate rooms, on which no network is
    # trained), and the gate "room"'s quantity on the same rooms: the supervised network and the real mics'
    # pseudo-target, SI-SDR against the true virtual signal (a larger room sample per seed than the test rooms alone:
    # benchmarks/virtualflow_room_rule8.md)
    room_si = {m: list(per["sisdr/" + m]) for m in ROOM_GATE}
    for j in range(cfg.n_gate_scenes):
        room = gate_room(cfg, seed, j)
        noise = random_channel(room, np.random.default_rng(scene_seed(cfg, seed, "random", cfg.n_test_scenes + j)))
        extras = {"real": None, "physical": stft(room.vm_recording, cfg.nfft, hop), "random": noise}
        for b in GATE_BEAMS:
            gate_beams[b].append(beam_sisdr(room, beamform(room, extras[b], cfg), cfg))
        n = room.real.shape[1]
        for m in ROOM_GATE:
            spec = estimate(models, room, m, n_steps=1, solver=cfg.solver, x0=torch.zeros(0), device=device)
            room_si[m].append(si_sdr(istft(spec, cfg.nfft, hop, n)[first * hop :], room.truth_wave[first * hop :]))
        # the reflow row's solves on the first gate rooms too (one noise draw of its own, shared by both networks):
        # the row's per-seed means are over the test rooms and these (benchmarks/virtualflow_reflow_rooms_rule2.md)
        if j >= reflow_gate_rooms(cfg):
            continue
        x0 = gate_room_noise(cfg, models, room, seed, j).to(device)
        v0_gate = first_velocities(models, room, x0, device)

        def solve_gate(name: str, k: int, room: Example = room, x0: torch.Tensor = x0, v0: dict = v0_gate):
            return estimate(models, room, name, n_steps=k, solver=cfg.solver, x0=x0, device=device, v0=v0[name])

        for key, value in reflow_row_scores(cfg, room, solve_gate).items():
            add(key, value)
    summary: dict[str, Any] = {}
    for key, values in per.items():
        arr = np.asarray(values, float)
        summary[key] = arr.mean(0).tolist()
    for b, values in gate_beams.items():
        summary[f"gate_beam/{b}"] = float(np.mean(values))
    summary["n_gate_rooms"] = len(gate_beams["real"])
    for m, values in room_si.items():
        summary[f"room_sisdr/{m}"] = float(np.mean(values))
    summary["compute_seconds"] = {m: float(np.mean(v)) for m, v in compute.items()}
    return summary, {k: np.asarray(v, np.float32) for k, v in audio.items()}


def explorable_frames(cfg: VirtualFlowConfig, models: Models, seed: int, device: torch.device) -> dict:
    """The first test room with the VM at each of ``explorable_distances``: dB spectrograms of the truth,
    the pseudo-target and Virtual-Flow at each step count of ``steps_grid`` (and reflow at one step)."""
    hop = cfg.nfft // 2
    first = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    out: dict[str, Any] = {"distances": list(cfg.explorable_distances), "steps": list(cfg.steps_grid)}
    for i, dist in enumerate(cfg.explorable_distances):
        ex = relocate(cfg, seed, 0, dist)
        n = ex.real.shape[1]
        x0 = torch.randn(
            ex.cond.shape[0], models.flow.d_frame, generator=torch.Generator().manual_seed(cfg.seed + 17)
        ).to(device)
        peak = np.abs(ex.truth).max()

        def db(spec: np.ndarray, peak: float = peak) -> np.ndarray:
            return np.round(np.clip(20 * np.log10(np.abs(spec) / peak + 1e-6), -60, 0)).astype(np.int8)

        def score(spec: np.ndarray, ex: Example = ex, n: int = n) -> float:
            return si_sdr(istft(spec, cfg.nfft, hop, n)[first * hop :], ex.truth_wave[first * hop :])

        out[f"{i}/truth"] = db(ex.truth)
        out[f"{i}/pseudo"] = db(ex.pseudo)
        out[f"{i}/pseudo_sisdr"] = score(ex.pseudo)
        nearest = ex.spec_real[nearest_mic(ex)]
        out[f"{i}/nearest_sisdr"] = score(nearest)
        sis = []
        v0 = first_velocities(models, ex, x0, device, ("flow",))["flow"]  # shared by the flow's step counts
        for k in cfg.steps_grid:
            spec = estimate(models, ex, "flow", n_steps=k, solver=cfg.solver, x0=x0, device=device, v0=v0)
            out[f"{i}/flow/{k}"] = db(spec)
            sis.append(score(spec))
        out[f"{i}/flow_sisdr"] = sis
        spec = estimate(models, ex, "reflow", n_steps=1, solver=cfg.solver, x0=x0, device=device)
        out[f"{i}/reflow"] = db(spec)
        out[f"{i}/reflow_sisdr"] = score(spec)
    return out


def _train_part(
    cfg: VirtualFlowConfig, seed: int, progress: bool = False, checkpoint: Checkpointer | None = None
) -> tuple[Models, float, int]:
    """One seed's training rooms simulated and its networks trained: the models, the training's seconds and the
    number of training bins."""
    train = [build_example(cfg, seed, "train", i) for i in range(cfg.n_train_scenes)]
    start = time.perf_counter()
    models = train_models(cfg, train, seed, resolve_device(cfg.device), progress, checkpoint)
    return models, time.perf_counter() - start, sum(e.cond.shape[0] for e in train)


def _seed_part(
    cfg: VirtualFlowConfig,
    k: int,
    seed: int,
    progress: bool,
    checkpoint: Checkpointer | None = None,
    trained: Callable[[], tuple[Models, float, int]] | None = None,
) -> tuple[dict, dict]:
    """One seed's part; ``trained``, when given, returns what :func:`_train_part` returns for this seed (trained in
    a worker process, the same deterministic function of the config and the seed)."""
    device = resolve_device(cfg.device)
    if trained is None:
        models, train_seconds, n_train_bins = _train_part(cfg, seed, progress, checkpoint)
    test = [build_example(cfg, seed, "test", i) for i in range(cfg.n_test_scenes)]
    if trained is not None:
        models, train_seconds, n_train_bins = trained()
    summary, audio = evaluate_seed(cfg, models, test, device, seed)
    summary["train_seconds"] = train_seconds
    summary["loss_before"] = models.loss_before
    summary["loss_after"] = models.loss_after
    summary["n_parameters"] = {"flow": parameter_count(models.flow), "supervised": parameter_count(models.supervised)}
    summary["rt60"] = float(np.mean([e.scene.rt60 for e in test]))
    summary["flow_epochs"] = cfg.n_train_steps * cfg.batch_size / n_train_bins
    # has the flow's loss flattened? mean minibatch loss over the third and the last quarter of its steps
    quarter = max(cfg.n_train_steps // 4, 1)
    summary["flow_loss_q3"] = float(np.mean(models.losses["flow"][-2 * quarter : -quarter] or [np.nan]))
    summary["flow_loss_q4"] = float(np.mean(models.losses["flow"][-quarter:]))
    curves: dict[str, Any] = {"losses": {m: np.asarray(v, np.float32) for m, v in models.losses.items()}}
    if k == 0:
        curves["audio"] = audio
        curves["explorable"] = explorable_frames(cfg, models, seed, device)
        ex = test[0]
        curves["scene"] = {
            "room_dim": np.asarray(ex.scene.room_dim),
            "source": ex.scene.source,
            "interferer": ex.scene.interferer,
            "real_mics": ex.scene.real_mics,
            "virtual_mic": ex.scene.virtual_mic,
            "aux_mics": ex.scene.aux_mics if ex.scene.n_aux else np.zeros((0, 3)),
            "azimuth": ex.azimuth,
        }
    return summary, curves


def aggregate(cfg: VirtualFlowConfig, per_seed: list[dict]) -> dict[str, Any]:
    """Mean and sd over seeds of every per-seed number (lists element-wise)."""
    out: dict[str, Any] = {}
    for key, first in per_seed[0].items():
        if isinstance(first, dict):
            out[key] = {m: _mean_sd([p[key][m] for p in per_seed]) for m in first}
        elif isinstance(first, list):
            arr = np.asarray([p[key] for p in per_seed], float)
            out[key] = {
                "mean": arr.mean(0).tolist(),
                "sd": (arr.std(0, ddof=1) if len(per_seed) > 1 else np.full(arr.shape[1], np.nan)).tolist(),
            }
        else:
            out[key] = _mean_sd([p[key] for p in per_seed])
    out["nfe"] = {m: 0 for m in ("nearest", "noise", "pseudo", "pseudo_train")}
    out["nfe"].update(
        control=1,
        supervised=1,
        reflow=evaluations_per_sample(1, cfg.solver),
        flow=evaluations_per_sample(cfg.n_sample_steps, cfg.solver),
    )
    out["source"] = source_kind(cfg.use_espeak, cfg.data_root)
    return out


def _worker_seed_part(cfg: VirtualFlowConfig, k: int, seed: int, threads: int) -> tuple[dict, dict]:
    """One seed's part in a worker process, on ``threads`` torch threads (the count the calling process uses, one
    on the CPU: the numbers depend on it) and without a checkpoint (the calling process stores the part)."""
    torch.set_num_threads(threads)
    return _seed_part(cfg, k, seed, False, None)


def _worker_train_part(cfg: VirtualFlowConfig, seed: int, threads: int) -> tuple[Models, float, int]:
    """One seed's :func:`_train_part` in a worker process, on ``threads`` torch threads, without a checkpoint."""
    torch.set_num_threads(threads)
    return _train_part(cfg, seed)


@checked()
def run(
    config: VirtualFlowConfig | None = None, *, checkpoint: Checkpointer | None = None, progress: bool = False
) -> VirtualFlowResults:
    """Simulate, train and evaluate every seed (one checkpointed part each), then aggregate over seeds.

    With ``cfg.processes`` (0: every CPU available) of 2 or more, the CPU as device and no part in the
    checkpoint yet, a spawned worker process computes the odd-indexed seeds (those with no training state in
    the checkpoint) while this process computes the others; when this process has one seed more (an odd count),
    the worker first simulates that last seed's training rooms and trains its networks (:func:`_train_part`),
    which this process then evaluates, so that the two processes share the work evenly. A part (and a training)
    is the same deterministic function of the config and its seed wherever it runs. On the CPU every process
    computes on one torch thread, in a serial run too (:func:`~explorables.core.threads.one_cpu_thread`): the
    networks are small, a second thread per process cost about 15% more CPU time on this book's 2-core host with
    the two processes each running two threads (``benchmarks/virtualflow_threads.md``), and the numbers then do not
    depend on the host's core count (one thread instead of two changes the last digits only). The parts are stored
    in the same order as serially; a worker part's time is the time this process waited for it (plus the next own
    part it computed meanwhile)."""
    cfg, checkpoint = start_run(VirtualFlowConfig, config, checkpoint)
    with one_cpu_thread(resolve_device(cfg.device)):
        return _run(cfg, checkpoint, progress)


def _run(cfg: VirtualFlowConfig, checkpoint: Checkpointer, progress: bool) -> VirtualFlowResults:
    """:func:`run` after its config and checkpoint are set up, on the thread count it set."""
    names = [f"seed_{s}" for s in cfg.seeds]
    parts = {
        name: (lambda k=k, s=s: _seed_part(cfg, k, s, progress, checkpoint))
        for k, (name, s) in enumerate(zip(names, cfg.seeds, strict=True))
    }
    away = [k for k in range(1, len(names), 2) if not any(e.startswith(f"{names[k]}/") for e in checkpoint.entries)]
    parallel = (
        resolve_device(cfg.device).type == "cpu"
        and worker_count(cfg.processes, len(names)) > 1
        and bool(away)
        and all(checkpoint.get(f"part/{name}") is None for name in names)
    )
    with ExitStack() as stack:
        if parallel:
            pool = stack.enter_context(ProcessPoolExecutor(1, mp_context=get_context("spawn")))
            threads = torch.get_num_threads()
            own = [k for k in range(len(names)) if k not in away]
            # with more seeds here than there (an odd count), the worker first trains this process's last seed
            # (its training rooms and networks), which this process then evaluates: the two share the work evenly
            lent = own[-1] if len(own) > len(away) else None
            if lent is not None and any(e.startswith(f"{names[lent]}/") for e in checkpoint.entries):
                lent = None  # its training resumes from the checkpoint, here
            trained = None if lent is None else pool.submit(_worker_train_part, cfg, cfg.seeds[lent], threads)
            futures: dict[int, Future] = {
                k: pool.submit(_worker_seed_part, cfg, k, cfg.seeds[k], threads) for k in away
            }
            ahead: dict[int, tuple[dict, dict]] = {}
            serial = dict(parts)
            if trained is not None:
                serial[names[lent]] = lambda k=lent: _seed_part(
                    cfg, k, cfg.seeds[k], progress, checkpoint, trained=trained.result
                )

            def here(k: int) -> tuple[dict, dict]:
                return ahead.pop(k) if k in ahead else serial[names[k]]()

            def there(k: int) -> tuple[dict, dict]:
                later = [j for j in own if j > k]
                if later and not futures[k].done() and later[0] not in ahead:
                    ahead[later[0]] = serial[names[later[0]]]()  # this process's next seed while the worker runs
                return futures[k].result()

            for k, name in enumerate(names):
                parts[name] = (lambda k=k: there(k)) if k in futures else (lambda k=k: here(k))
        summary, curves = run_parts_timed(checkpoint, parts, progress)
    summary["aggregate"] = aggregate(cfg, [summary[f"seed_{s}"] for s in cfg.seeds])
    return VirtualFlowResults(cfg, summary, curves)


@checked()
def headline(results: VirtualFlowResults) -> list[str]:
    """Key numbers for the end-of-run summary of the command line."""
    a = results.summary["aggregate"]
    return (
        [
            f"SI-SDR vs the true VM, {METHOD_LABELS[m]}: {fmt_pm(a[f'sisdr/{m}']['mean'], a[f'sisdr/{m}']['sd'])} dB"
            for m in METHODS
        ]
        + [f"MVDR SI-SDR, {BEAM_LABELS[b]}: {a[f'beam_sisdr/{b}']['mean']:.2f} dB" for b in BEAMFORMING]
        + [
            f"fixed-layout MVDR SI-SDR, slot filled with {FIXED_LABELS[b]}: {a[f'fixed_sisdr/{b}']['mean']:.2f} dB"
            for b in FIXED_LAYOUT
        ]
    )
