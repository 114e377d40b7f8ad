"""Chapter 06 (virtualflow): geometry, the pseudo-target, flow matching, reflow, beamforming, claims, leaks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyroomacoustics as pra
import pytest
import torch

from explorables.core.verdicts import compare, interval
from explorables.virtualflow import audio, claims, neural
from explorables.virtualflow.data import (
    bins_to_spec,
    condition_bins,
    make_example,
    spec_to_bins,
    supervised_data,
    unsupervised_data,
)
from explorables.virtualflow.downstream import band_errors, mvdr, si_sdr, stoi
from explorables.virtualflow.experiment import VirtualFlowConfig, build_example, headline, run, train_models
from explorables.virtualflow.flow import (
    Regressor,
    VelocityNet,
    _solve,
    cfm_loss,
    evaluations_per_sample,
    first_velocity,
    mix_channels,
    reflow_pairs,
    sample,
    train_flow,
    train_regression,
)
from explorables.virtualflow.pseudo import (
    estimate_azimuth,
    istft,
    plane_wave_delays,
    pseudo_target,
    stft,
)
from explorables.virtualflow.scenes import SPEED_OF_SOUND, Scene, circular_array, random_scene, simulate

from .trees import assert_same_tree, without_timings

FS = 8000


@pytest.fixture(scope="module")
def smoke_results():
    return run(VirtualFlowConfig.preset("smoke"))


def far_field_scene(azimuth: float, distance: float = 40.0) -> Scene:
    center = np.array([50.0, 50.0, 1.5])
    real = circular_array(center, 3, 0.05)
    vm = center + np.array([0.08, 0.03, 0.0])
    src = center + distance * np.array([np.cos(azimuth), np.sin(azimuth), 0.0])
    return Scene((100.0, 100.0, 10.0), 0.0, src, src, real, vm, FS)


def test_delays_match_the_geometry_of_the_simulated_room():
    """pyroomacoustics' direct-path arrival times differ between mics as the geometry says, and the
    plane-wave delays tend to those differences for a far source."""
    scene = far_field_scene(0.7)
    room = pra.AnechoicRoom(dim=3, fs=FS, air_absorption=False)
    room.add_source(scene.source)
    mics = np.concatenate([scene.real_mics, scene.virtual_mic[None]])
    room.add_microphone_array(mics.T)
    room.compute_rir()
    peaks = []
    for m in range(4):
        rir = np.asarray(room.rir[m][0])
        up = np.fft.irfft(np.fft.rfft(rir), 64 * rir.size)  # 64x band-limited upsampling to find the peak
        peaks.append(np.argmax(up) / 64)
    dist = np.linalg.norm(mics - scene.source, axis=1)
    np.testing.assert_allclose(np.diff(peaks), np.diff(dist) / SPEED_OF_SOUND * FS, atol=0.05)
    tau = plane_wave_delays(scene.real_mics, scene.virtual_mic, 0.7)
    exact = (dist[3] - dist[:3]) / SPEED_OF_SOUND  # the VM hears the wave this much later than mic m
    np.testing.assert_allclose(tau, exact, atol=2e-7)


@pytest.mark.parametrize("azimuth", [0.7, 2.5, -1.9])
def test_anechoic_far_field_pseudo_target_equals_the_true_vm(azimuth):
    """Anechoic, one far source: the pseudo-target (true or estimated direction) is the true VM signal within
    25 dB SI-SDR (fractional delays in the STFT are approximate; 25 dB is a 0.3% error energy)."""
    scene = far_field_scene(azimuth)
    sim = simulate(scene, 9600, np.random.default_rng(0), snr_db=30.0, sensor_snr_db=80.0, anechoic=True)
    spec = stft(sim["real"], 128, 64)
    estimated = estimate_azimuth(spec, scene.real_mics, FS, 128, method="NormMUSIC")
    assert abs(np.angle(np.exp(1j * (estimated - azimuth)))) < np.radians(3)
    for az in (azimuth, estimated):
        p = istft(pseudo_target(spec, scene.real_mics, scene.virtual_mic, az, FS, 128), 128, 64, 9600)
        assert si_sdr(p[500:-500], sim["vm_speech"][500:-500]) > 25
    nearest = sim["real"][np.argmin(np.linalg.norm(scene.real_mics - scene.virtual_mic, axis=1))]
    if azimuth == 0.7:  # the test is not trivial: here the nearest mic is clearly off
        assert si_sdr(nearest, sim["vm_speech"]) < 15


def test_bad_geometry_rates_and_empty_arrays_are_refused():
    scene = far_field_scene(0.3)
    outside = dataclasses.replace(scene, real_mics=scene.real_mics + np.array([60.0, 0, 0]))
    with pytest.raises(ValueError, match="real_mics"):
        simulate(outside, 4000, np.random.default_rng(0), snr_db=10, anechoic=True)
    with pytest.raises(ValueError, match="virtual_mic"):
        simulate(
            dataclasses.replace(scene, virtual_mic=np.array([1.0, 1.0, -2.0])),
            4000,
            np.random.default_rng(0),
            snr_db=10,
            anechoic=True,
        )
    with pytest.raises(ValueError, match="real_mics"):
        simulate(dataclasses.replace(scene, real_mics=np.zeros((0, 3))), 4000, np.random.default_rng(0), snr_db=10)
    with pytest.raises(ValueError, match="real_mics"):
        plane_wave_delays(np.zeros((0, 3)), np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="fs"):
        simulate(dataclasses.replace(scene, fs=11025), 4000, np.random.default_rng(0), snr_db=10, anechoic=True)
    with pytest.raises(ValueError, match="fs"):
        audio.harmonic_source(100, 44100, np.random.default_rng(0))
    with pytest.raises(ValueError, match="spec_real"):
        estimate_azimuth(np.zeros((1, 65, 10), complex), scene.real_mics[:1], FS, 128)
    with pytest.raises(ValueError, match="rt60"):
        room = Scene(
            (30.0, 30.0, 10.0),
            0.06,
            np.array([5.0, 5, 1.5]),
            np.array([9.0, 5, 1.5]),
            circular_array(np.array([7.0, 7, 1.5]), 2, 0.05),
            np.array([7.2, 7, 1.5]),
            FS,
        )
        simulate(room, 4000, np.random.default_rng(0), snr_db=10)


def test_harmonic_fallback_when_espeak_is_missing(monkeypatch):
    monkeypatch.setattr(audio, "espeak_path", lambda: None)
    assert audio.source_kind() == "harmonic"
    x = audio.speech_signal(4000, FS, np.random.default_rng(1))
    assert x.shape == (4000,) and np.all(np.isfinite(x)) and 0.5 < np.abs(x).max() <= 0.9 + 1e-9
    spectrum = np.abs(np.fft.rfft(x)) ** 2
    assert spectrum[: spectrum.size // 4].sum() > spectrum[spectrum.size // 2 :].sum()  # speech-like tilt


def test_bins_round_trip_and_the_head_starts_at_the_pseudo_target():
    rng = np.random.default_rng(0)
    aligned = rng.standard_normal((3, 9, 5)) + 1j * rng.standard_normal((3, 9, 5))
    w = np.array([0.5, 0.3, 0.2])
    spec = np.tensordot(w, aligned, axes=1)
    np.testing.assert_allclose(bins_to_spec(spec_to_bins(spec, 2.0), 2.0, 9), spec, atol=1e-5)
    cond = torch.from_numpy(condition_bins(aligned, w, 2.0))
    head = mix_channels(torch.zeros(cond.shape[0], 8), cond, 3)  # no correction: the pseudo-target, eq. (vf-pseudo)
    np.testing.assert_allclose(head.numpy(), spec_to_bins(spec, 2.0), atol=1e-5)


def test_si_sdr_and_band_errors_closed_forms():
    rng = np.random.default_rng(0)
    s = rng.standard_normal(2000)
    assert si_sdr(3.0 * s, s) > 100
    noise = rng.standard_normal(2000)
    noise -= noise @ s / (s @ s) * s  # orthogonal to s: SI-SDR = 10 log10(|s|^2 / |n|^2)
    assert si_sdr(s + 0.5 * noise, s) == pytest.approx(10 * np.log10((s @ s) / (0.25 * noise @ noise)), abs=1e-9)
    spec = rng.standard_normal((65, 20)) + 1j * rng.standard_normal((65, 20))
    out = band_errors(0.5 * spec, spec, FS, 4)
    np.testing.assert_allclose(out["energy_ratio_db"], 20 * np.log10(0.5), atol=1e-9)
    np.testing.assert_allclose(out["nmse_db"], 20 * np.log10(0.5), atol=1e-9)


def test_magnitude_error_ignores_the_phase_and_energy_ratio_ignores_the_bins():
    rng = np.random.default_rng(1)
    spec = rng.standard_normal((65, 20)) + 1j * rng.standard_normal((65, 20))
    scrambled = spec * np.exp(2j * np.pi * rng.random(spec.shape))  # right magnitudes, random phases
    out = band_errors(scrambled, spec, FS, 4)
    assert max(out["mag_nmse_db"]) < -100 and max(np.abs(out["energy_ratio_db"])) < 1e-9
    assert min(out["nmse_db"]) > 1.0  # random phases: the complex error is about twice the energy (+3 dB)
    shuffled = rng.permutation(spec.ravel()).reshape(spec.shape)  # energy moved between bins of a band
    out = band_errors(shuffled, spec, FS, 1)
    assert out["mag_nmse_db"][0] > -10 and abs(out["energy_ratio_db"][0]) < 1e-9


def test_a_linear_extra_channel_does_not_change_the_mvdr_output():
    """The first exercise's claim: a channel that is a fixed linear combination of the real ones (per frequency),
    like the pseudo-target of eq. (vf-pseudo), leaves MVDR's output unchanged (up to the diagonal loading)."""
    rng = np.random.default_rng(2)
    c, f, t, n0 = 3, 17, 600, 200
    d = rng.standard_normal((c, f)) + 1j * rng.standard_normal((c, f))
    s = rng.standard_normal((f, t)) + 1j * rng.standard_normal((f, t))
    s[:, :n0] = 0
    x = d[:, :, None] * s[None] + 0.5 * (rng.standard_normal((c, f, t)) + 1j * rng.standard_normal((c, f, t)))
    mix = rng.standard_normal((c, f)) + 1j * rng.standard_normal((c, f))
    extra = np.einsum("cf,cft->ft", mix, x)
    y_real = mvdr(x, n0, loading=1e-9)
    y_more = mvdr(np.concatenate([x, extra[None]], 0), n0, loading=1e-9)
    rel = np.mean(np.abs(y_more - y_real) ** 2) / np.mean(np.abs(y_real) ** 2)
    assert rel < 1e-4


def test_endpoint_loss_is_the_velocity_loss_weighted_by_one_minus_t_squared():
    """Eqs. (vf-cfm) and (vf-velocity): on the path of eq. (vf-path), (1 - t) (v - (x1 - x0)) = x1_hat - x1."""
    torch.manual_seed(0)
    net = VelocityNet(2, 2 * 6 + 7 + 2, 16, 1)
    cond = torch.randn(50, net.d_cond)
    x0, x1, t = torch.randn(50, 2), torch.randn(50, 2), 0.9 * torch.rand(50)
    x_t = (1 - t[:, None]) * x0 + t[:, None] * x1
    lhs = (1 - t[:, None]) * (net(x_t, t, cond) - (x1 - x0))
    torch.testing.assert_close(lhs, net.endpoint(x_t, t, cond) - x1, atol=1e-5, rtol=1e-5)
    # so cfm_loss, eq. (vf-cfm), is the mean squared velocity error weighted by (1 - t)^2
    torch.testing.assert_close(cfm_loss(net, x1, cond, x0, t), lhs.pow(2).mean(), atol=1e-5, rtol=1e-5)


def test_a_flow_that_predicts_the_pseudo_target_lands_on_it_in_one_step_from_any_noise():
    """The second exercise's claim: if x1_hat(x_t, t | c) = F(c) (here the pseudo-target: the head with zero
    corrections), the ODE's paths are straight and one Euler step from any x0 lands exactly on F(c)."""
    rng = np.random.default_rng(3)
    aligned = rng.standard_normal((3, 9, 5)) + 1j * rng.standard_normal((3, 9, 5))
    w = np.array([0.5, 0.3, 0.2])
    cond = torch.from_numpy(condition_bins(aligned, w, 1.0))
    net = VelocityNet(3, cond.shape[1], 16, 1)
    with torch.no_grad():
        net.mlp.out.weight.zero_()
    target = torch.from_numpy(spec_to_bins(np.tensordot(w, aligned, axes=1), 1.0))
    for seed in (0, 1):
        x0 = torch.randn(cond.shape[0], 2, generator=torch.Generator().manual_seed(seed))
        torch.testing.assert_close(sample(net, cond, x0, 1), target, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(sample(net, cond, x0, 8), target, atol=1e-5, rtol=1e-5)


def test_mvdr_is_distortionless_and_one_channel_is_the_identity():
    rng = np.random.default_rng(0)
    c, f, t, n0 = 4, 33, 400, 100
    d = rng.standard_normal((c, f)) + 1j * rng.standard_normal((c, f))
    d /= d[:1]
    s = rng.standard_normal((f, t)) + 1j * rng.standard_normal((f, t))
    s[:, :n0] = 0  # the talker starts after the noise-only frames
    noise = 0.3 * (rng.standard_normal((c, f, t)) + 1j * rng.standard_normal((c, f, t)))
    x = d[:, :, None] * s[None] + noise
    y = mvdr(x, n0)
    speech = slice(n0, None)
    err_mvdr = np.mean(np.abs(y[:, speech] - s[:, speech]) ** 2)
    err_mic = np.mean(np.abs(x[0][:, speech] - s[:, speech]) ** 2)
    assert err_mvdr < err_mic / 2.5  # four mics in white noise: close to a 6 dB gain
    np.testing.assert_allclose(mvdr(x[:1], n0), x[0], rtol=1e-6, atol=1e-9)


def _noisy_array(rng, c=3, f=9, t=40, n0=12):
    d = rng.standard_normal((c, f)) + 1j * rng.standard_normal((c, f))
    d /= d[:1]
    s = rng.standard_normal((f, t)) + 1j * rng.standard_normal((f, t))
    s[:, :n0] = 0
    noise = 0.5 * (rng.standard_normal((c, f, t)) + 1j * rng.standard_normal((c, f, t)))
    return d[:, :, None] * s[None] + noise, s, n0


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("steer", ["blind", "oracle", "cross-fitted"])
def test_mvdr_fit_on_itself_is_bit_identical_and_fixed_weights_are_linear(seed, steer):
    """``fit=spec`` is the adaptive MVDR bit for bit; with ``fit`` given, the weights do not depend on ``spec`` (the
    output is linear in it: filtering a sum is the sum of the filtered), and the fit's own channels give the fit's
    adaptive output."""
    rng = np.random.default_rng(seed)
    x, s, n0 = _noisy_array(rng)
    kw = {"blind": {}, "oracle": dict(reference=s), "cross-fitted": dict(reference=s, steer_split=25)}[steer]
    adaptive = mvdr(x, n0, **kw)
    np.testing.assert_array_equal(mvdr(x, n0, fit=x, **kw), adaptive)
    np.testing.assert_array_equal(mvdr(x, n0, fit=x.copy(), **kw), adaptive)
    other = x.copy()
    other[-1] = rng.standard_normal(other[-1].shape) + 1j * rng.standard_normal(other[-1].shape)
    fixed = mvdr(other, n0, fit=x, **kw)
    assert not np.allclose(fixed, adaptive)  # the slot's content reaches the output through its fixed weight
    zero = x.copy()
    zero[-1] = 0
    np.testing.assert_allclose(
        mvdr(other, n0, fit=x, **kw) + mvdr(zero, n0, fit=x, **kw),
        mvdr(other + zero, n0, fit=x, **kw),
        atol=1e-10,
    )
    assert fixed.shape == x.shape[1:]


def test_mvdr_refuses_a_fit_of_another_shape():
    x, s, n0 = _noisy_array(np.random.default_rng(0))
    for bad in (x[:2], x[:, :5], x[:, :, :30]):
        with pytest.raises(ValueError, match="fit"):
            mvdr(x, n0, reference=s, fit=bad)
    nan = x.copy()
    nan[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="fit"):
        mvdr(x, n0, fit=nan)


@pytest.fixture(scope="module")
def smoke_room():
    cfg = VirtualFlowConfig.preset("smoke")
    return cfg, build_example(cfg, 0, "test", 0)


def test_supervised_and_control_train_for_their_own_step_counts(smoke_room):
    """The supervised reference trains for ``n_supervised_steps`` and the control for ``n_regression_steps``: raising
    the supervised network's steps leaves the control (and the flows) bit-identical."""
    cfg, ex = smoke_room
    small = cfg.replace(n_train_steps=6, n_reflow_steps=3, n_reflow_pairs=300, n_regression_steps=5)
    a = train_models(small.replace(n_supervised_steps=7), [ex], 0, torch.device("cpu"))
    b = train_models(small.replace(n_supervised_steps=11), [ex], 0, torch.device("cpu"))
    assert (len(a.losses["supervised"]), len(b.losses["supervised"])) == (7, 11)
    assert len(a.losses["control"]) == len(b.losses["control"]) == 5
    for name in ("flow", "reflow", "control"):
        assert a.losses[name] == b.losses[name], name
    for bad in (0, -3):
        with pytest.raises(ValueError, match=r"n_supervised_steps.*>= 1"):
            cfg.replace(n_supervised_steps=bad)


def test_fixed_layout_beamform_equals_the_adaptive_physical_and_checks_its_input(smoke_room):
    """Weights fitted on [real, physical] and applied to [real, physical] are the adaptive 3-mic MVDR; the empty
    slot is zeros in that slot (its output equals the real channels filtered by the physical layout's weights);
    ``fit_extra`` without ``extra``, or of a wrong shape or not finite, is refused by name."""
    from explorables.core.arguments import ArgumentError
    from explorables.virtualflow.experiment import beamform
    from explorables.virtualflow.pseudo import stft

    cfg, ex = smoke_room
    phys = stft(ex.vm_recording, cfg.nfft, cfg.nfft // 2)
    np.testing.assert_array_equal(beamform(ex, phys, cfg, fit_extra=phys), beamform(ex, phys, cfg))
    empty = beamform(ex, np.zeros_like(phys), cfg, fit_extra=phys)
    assert empty.shape == ex.real[0].shape and np.all(np.isfinite(empty))
    assert not np.allclose(empty, beamform(ex, phys, cfg))  # the missing mic costs something
    assert not np.allclose(empty, beamform(ex, None, cfg))  # and is not the refitted 2-mic MVDR
    with pytest.raises(ArgumentError, match="extra"):
        beamform(ex, None, cfg, fit_extra=phys)
    with pytest.raises(ArgumentError, match="fit_extra"):
        beamform(ex, phys, cfg, fit_extra=phys[:, :-1])
    bad = phys.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ArgumentError, match="fit_extra"):
        beamform(ex, phys, cfg, fit_extra=bad)
    with pytest.raises(ArgumentError, match="extra"):
        beamform(ex, phys[:-1], cfg, fit_extra=phys)


def test_the_smoke_run_scores_every_fixed_layout_fill_in(smoke_results):
    """Every fill-in of the fixed layout (and the refitted real mics in the same rooms) is scored on every seed."""
    from explorables.virtualflow.experiment import FIXED_LAYOUT

    assert smoke_results.config.n_fixed_scenes >= 1  # the smoke run reads the extra rooms too
    for s in smoke_results.config.seeds:
        p = smoke_results.summary[f"seed_{s}"]
        for b in (*FIXED_LAYOUT, "real"):
            assert np.isfinite(p[f"fixed_sisdr/{b}"])


def test_fixed_scores_on_a_room_match_the_adaptive_beamformer(smoke_room):
    """In one room: the physical mic in its own calibrated slot is the adaptive 3-mic MVDR exactly, and "real" is the
    refitted 2-mic MVDR exactly (both scored as the beamforming rows are)."""
    from explorables.virtualflow.experiment import FIXED_FILLS, beam_score, beamform, fixed_scores, random_channel
    from explorables.virtualflow.pseudo import stft

    cfg, ex = smoke_room
    phys = stft(ex.vm_recording, cfg.nfft, cfg.nfft // 2)
    fills = {m: ex.spec_real[0] for m in FIXED_FILLS}
    noise = random_channel(ex, np.random.default_rng(0))
    out = fixed_scores(cfg, ex, fills, noise)
    assert out["physical"] == beam_score(ex, beamform(ex, phys, cfg), cfg)[0]
    assert out["real"] == beam_score(ex, beamform(ex, None, cfg), cfg)[0]
    assert len({out[m] for m in FIXED_FILLS}) == 1  # the same channel in the slot scores the same


def test_fixed_scores_reuse_the_adaptive_scores_they_equal(smoke_room):
    """The evaluation passes the adaptive beamformer's scores of "real" and "physical" to the fixed layout (the same
    computation): given the true values, every fixed-layout score is what it computes itself; a given value is used
    as it is, not recomputed; any other key is refused."""
    from explorables.core.arguments import ArgumentError
    from explorables.virtualflow.experiment import ADAPTIVE_SAME, FIXED_FILLS, fixed_scores, random_channel

    cfg, ex = smoke_room
    fills = {m: ex.spec_real[i % 2] for i, m in enumerate(FIXED_FILLS)}
    noise = random_channel(ex, np.random.default_rng(0))
    own = fixed_scores(cfg, ex, fills, noise)
    known = {b: own[b] for b in ADAPTIVE_SAME}
    assert fixed_scores(cfg, ex, fills, noise, known) == own
    marked = fixed_scores(cfg, ex, fills, noise, {"real": -99.0})
    assert marked["real"] == -99.0 and {b: v for b, v in marked.items() if b != "real"} == {
        b: v for b, v in own.items() if b != "real"
    }
    with pytest.raises(ArgumentError, match="known"):
        fixed_scores(cfg, ex, fills, noise, {"flow": 0.0})


def test_the_reflow_row_reads_given_scores_instead_of_scoring_again(smoke_room):
    """:func:`reflow_row_scores` with ``scored`` (the evaluation's scores of solves it already scored) returns what
    it computes itself from the solves when those scores are :func:`solve_scores` of the same solves."""
    from explorables.virtualflow.experiment import reflow_row_scores, solve_scores

    cfg, ex = smoke_room
    rng = np.random.default_rng(3)
    specs = {}

    def solved(name, k):
        if (name, k) not in specs:
            specs[name, k] = ex.pseudo * (1 + 0.1 * rng.standard_normal(ex.pseudo.shape))
        return specs[name, k]

    own = reflow_row_scores(cfg, ex, solved)
    given = reflow_row_scores(cfg, ex, solved, lambda name, k: solve_scores(cfg, ex, solved(name, k)))
    assert given.keys() == own.keys()
    for key, value in own.items():
        assert np.array_equal(given[key], value), key
    marked = reflow_row_scores(cfg, ex, solved, lambda name, k: (float(k), [0.0]))
    assert marked["reflow_row/sisdr/reflow/1"] == 1.0 and marked["reflow_row/energy/flow/1"] == [0.0]


def test_extra_fixed_rooms_leave_the_test_rooms_unchanged(smoke_results):
    """The fixed layout's extra rooms (evaluation only) come after the test rooms: with ``n_fixed_scenes`` rooms
    more, the test rooms' per-room scores are bit-identical to those without, the run's per-seed value is the mean
    over all the rooms, and the extra rooms are new rooms (their scores differ)."""
    from explorables.core.arguments import ArgumentError
    from explorables.virtualflow.experiment import fixed_layout_rooms

    cfg = smoke_results.config
    seed = cfg.seeds[0]
    device = torch.device("cpu")
    train = [build_example(cfg, seed, "train", i) for i in range(cfg.n_train_scenes)]
    test = [build_example(cfg, seed, "test", i) for i in range(cfg.n_test_scenes)]
    models = train_models(cfg, train, seed, device)
    alone = fixed_layout_rooms(dataclasses.replace(cfg, n_fixed_scenes=0), models, test, device, seed)
    more = fixed_layout_rooms(dataclasses.replace(cfg, n_fixed_scenes=2), models, test, device, seed)
    n = cfg.n_test_scenes
    for b, values in alone.items():
        assert len(values) == n and len(more[b]) == n + 2
        assert more[b][:n] == values
    assert more["empty"][n] != more["empty"][0]
    p = smoke_results.summary[f"seed_{seed}"]
    assert p["fixed_sisdr/supervised"] == pytest.approx(np.mean(more["supervised"][: n + cfg.n_fixed_scenes]))
    assert p["fixed_sisdr/real"] == pytest.approx(np.mean(more["real"][: n + cfg.n_fixed_scenes]))
    with pytest.raises(ArgumentError, match="specs"):
        fixed_layout_rooms(cfg, models, test, device, seed, specs=[])
    with pytest.raises(ArgumentError, match="known"):
        fixed_layout_rooms(cfg, models, test, device, seed, known=[])


def test_n_fixed_scenes_is_validated_by_name():
    for bad in (-1, 1001, 2.5):
        with pytest.raises((ValueError, TypeError), match="n_fixed_scenes"):
            VirtualFlowConfig(n_fixed_scenes=bad)


def test_flow_matching_loss_decreases_on_the_smoke_run(smoke_results):
    s = smoke_results.summary
    for seed in smoke_results.config.seeds:
        p = s[f"seed_{seed}"]
        assert p["loss_after"]["flow"] < p["loss_before"]["flow"]  # eq. (vf-cfm) on fixed bins and draws


def test_reflow_one_step_is_closer_to_many_steps_than_the_base_one_step():
    """A conditional flow toward a two-point target (+-1 with the sign a coin flip) is curved; after reflow its
    one-step samples are much closer to the base model's many-step samples than the base's own one step."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    n = 4000
    cond = torch.randn(n, 3, generator=gen)  # [a_real, a_imag, w]: one "mic"
    cond[:, 2] = 1.0
    sign = torch.where(torch.rand(n, generator=gen) < 0.5, -1.0, 1.0)
    target = torch.stack([sign, 0.3 * cond[:, 0]], 1)
    base = VelocityNet(1, 3, d_hidden=64, n_layers=2)
    losses = train_flow(base, target, cond, n_steps=400, batch_size=256, lr=3e-3, generator=gen)
    assert np.mean(losses[-40:]) < np.mean(losses[:40])
    x0, x1 = reflow_pairs(base, cond, n_steps=32, generator=gen)
    reflowed = VelocityNet(1, 3, d_hidden=64, n_layers=2)
    reflowed.load_state_dict(base.state_dict())
    train_flow(reflowed, x1, cond, x0=x0, n_steps=400, batch_size=256, lr=1.5e-3, generator=gen)
    test_x0 = torch.randn(500, 2, generator=gen)
    c = cond[:500]
    many = sample(base, c, test_x0, 32)
    base_gap = (sample(base, c, test_x0, 1) - many).pow(2).mean()
    reflow_gap = (sample(reflowed, c, test_x0, 1) - many).pow(2).mean()
    assert reflow_gap < 0.5 * base_gap


def test_virtual_flow_never_receives_the_truth():
    """Replacing every true VM signal of the training rooms by loud garbage changes nothing in Virtual-Flow, its
    reflow or the control (their weights are identical); only the supervised reference, which is meant to use it,
    changes. (An Example refuses NaN, so the garbage is finite: 1e3 times the rms of each signal.)"""
    cfg = VirtualFlowConfig.preset("smoke")
    train = [build_example(cfg, 0, "train", i) for i in range(cfg.n_train_scenes)]
    gen = np.random.default_rng(0)

    def garbage(a):
        scale = 1e3 * np.sqrt(np.mean(np.abs(a) ** 2))
        noise = gen.standard_normal(a.shape) * scale
        return noise + 1j * gen.standard_normal(a.shape) * scale if np.iscomplexobj(a) else noise

    blind = [
        dataclasses.replace(
            e, truth=garbage(e.truth), truth_wave=garbage(e.truth_wave), vm_recording=garbage(e.vm_recording)
        )
        for e in train
    ]
    target, cond = unsupervised_data(blind, torch.device("cpu"))
    assert torch.isfinite(target).all() and torch.isfinite(cond).all()
    a = train_models(cfg, train, 0, torch.device("cpu"))
    b = train_models(cfg, blind, 0, torch.device("cpu"))
    for name in ("flow", "reflow", "control"):
        for (k, v), w in zip(
            getattr(a, name).state_dict().items(), getattr(b, name).state_dict().values(), strict=True
        ):
            assert torch.equal(v, w), f"{name}.{k} changed when the truth was hidden"
    assert not all(torch.equal(v, w) for v, w in zip(a.supervised.parameters(), b.supervised.parameters(), strict=True))


def test_regressor_and_velocity_net_shapes():
    cond = torch.randn(7, 3 * 6 + 7 + 3)
    assert Regressor(3, cond.shape[1], 16, 1)(cond).shape == (7, 2)
    net = VelocityNet(3, cond.shape[1], 16, 1)
    assert sample(net, cond, torch.randn(7, 2), 3, "heun").shape == (7, 2)


ABOVE, BELOW, NOISY = [2.0, 2.5, 2.2], [-1.0, -0.5, -0.8], [-3.0, 4.0, 1.0]


def test_every_criterion_reaches_every_branch():
    from explorables.core.verdicts import drive

    assert drive(claims.CRITERIA) == []


def test_gates_on_constructed_numbers():
    assert claims.room_gate(ABOVE).startswith("pass") and claims.room_gate([0.9, 1.1, 1.0]).startswith("fail")
    assert claims.physical_gate([-0.1, -0.12, -0.08]).startswith("fail")  # what the first version's MVDR got
    assert claims.physical_gate([1.5, 1.6, 1.4]).startswith("pass")
    # useful: in the fixed layout the supervised VM must beat the empty slot by 0.5 dB on EVERY seed
    assert claims.useful_gate([-0.17, 0.28, 0.05]).startswith("fail")
    assert claims.useful_gate([1.0, 1.2, 0.9]).startswith("pass")
    assert claims.useful_gate([0.5, 0.5, 0.5]).startswith("pass")  # the margin itself clears it
    # a mean far above the margin with one seed below it fails (the rule is every seed, not the interval)
    assert claims.useful_gate([9.0, 8.0, 0.45, 9.5, 8.5]).startswith("fail")
    with pytest.raises(ValueError):
        claims.useful_gate([1.0, float("nan")])
    assert claims.headroom_gate([5.0, 4.0, 6.0]).startswith("pass")
    assert claims.headroom_gate([0.5, 0.2, 0.4]).startswith("fail")
    # curved: the one-step sample is >= -10 dB (NMSE) away from the many-step one; a straight flow is far below
    assert claims.curved_gate([-4.0, -5.0, -4.5]).startswith("pass")
    assert claims.curved_gate([-40.0, -38.0, -41.0]).startswith("fail")
    assert claims.curved_gate([-9.0, -12.0, -10.5]).startswith("fail")  # an interval straddling -10 dB fails
    assert claims.compute_check(1, 8, 1).startswith("pass") and claims.compute_check(2, 2, 1).startswith("fail")


def test_verdicts_on_constructed_numbers():
    # learning: beats the real mics' pseudo-target by 1 dB SI-SDR; a copy of the nearest mic is a floor (behind it
    # no, within noise of it at best unclear, clearing it earns nothing); the control is not a part of it (a sampler
    # scores below the mean on SI-SDR), it is judged on band energy (magnitude)
    assert claims.learning_verdict(ABOVE, ABOVE).startswith("yes")
    assert claims.learning_verdict([0.1, -0.1, 0.0], ABOVE).startswith("no")  # clearing the floor earns nothing
    assert claims.learning_verdict(ABOVE, BELOW).startswith("no")  # behind the floor
    assert claims.learning_verdict(BELOW, BELOW).startswith("no")
    assert claims.learning_verdict(NOISY, ABOVE).startswith("unclear")
    assert claims.learning_verdict(ABOVE, NOISY).startswith("unclear")  # within noise of the floor: never yes
    # magnitude: first a copy of the nearest mic and level-matched noise (bin by bin), then energy and bin-by-bin
    # error vs supervised, energy vs regression on the same targets, each 1 dB
    base = (ABOVE, ABOVE)
    assert claims.magnitude_verdict(ABOVE, ABOVE, ABOVE, *base).startswith("yes")
    assert claims.magnitude_verdict(ABOVE, BELOW, BELOW, *base).startswith("partly")
    assert claims.magnitude_verdict(BELOW, BELOW, BELOW, *base).startswith("no")
    assert claims.magnitude_verdict(NOISY, BELOW, BELOW, *base).startswith("unclear")
    # keeping no more band energy than a regression on the same targets is not a yes
    assert claims.magnitude_verdict(ABOVE, ABOVE, [0.01, -0.01, 0.0], *base).startswith("partly")
    # beating the supervised model everywhere but not a copy of the nearest mic, or not level-matched noise: no
    assert claims.magnitude_verdict(ABOVE, ABOVE, ABOVE, BELOW, ABOVE).startswith("no")
    assert claims.magnitude_verdict(ABOVE, ABOVE, ABOVE, ABOVE, NOISY).startswith("no")
    assert "nearest mic" in claims.magnitude_verdict(ABOVE, ABOVE, ABOVE, BELOW, ABOVE)
    # beamforming (fixed layout): reflow minus supervised against 0 dB on the interval; never partly
    assert claims.beamforming_verdict(ABOVE).startswith("yes")
    assert claims.beamforming_verdict(BELOW).startswith("no")
    assert claims.beamforming_verdict(NOISY).startswith("unclear")
    assert claims.beamforming_verdict([0.2, 0.3, 0.25]).startswith("yes")  # any clear lead beats: the margin is 0
    assert claims.beamforming_verdict([0.2]).startswith("unclear")  # one seed decides nothing
    # reflow: one step within 0.5 dB SI-SDR of many steps (or above) and its top-band energy within 1 dB
    close = [0.2, 0.4, 0.3]
    assert claims.reflow_verdict([-0.1, 0.1, 0.0], close).startswith("yes")
    assert claims.reflow_verdict([1.5, 1.7, 1.6], close).startswith("yes")  # above many steps is not "no"
    # a one-step model that collapsed to the conditional mean keeps the SI-SDR but loses the energy: partly
    assert claims.reflow_verdict([1.5, 1.7, 1.6], [6.0, 5.5, 6.2]).startswith("partly")
    assert claims.reflow_verdict([-3.0, -2.5, -2.8], [6.0, 5.5, 6.2]).startswith("no")
    assert claims.reflow_verdict(NOISY, [0.9, 1.4, 1.1]).startswith("unclear")
    assert claims.reflow_verdict([-0.1], [0.2]).startswith("unclear")  # one seed decides nothing


def _with_beams(results, physical: float, random: float):
    """``results`` with every seed's MVDR SI-SDR set: real 0, physical and random as given (± 0.05 dB)."""
    summary = dict(results.summary)
    for i, s in enumerate(results.config.seeds):
        jitter = 0.05 * (-1) ** i
        summary[f"seed_{s}"] = {
            **summary[f"seed_{s}"],
            "beam_sisdr/real": 0.0,
            "beam_sisdr/supervised": 0.3,
            "beam_sisdr/pseudo_train": physical - 0.5,
            "beam_sisdr/physical": physical + jitter,
            "beam_sisdr/random": random - jitter,
            "gate_beam/real": 0.0,
            "gate_beam/physical": physical + jitter,
            "gate_beam/random": random - jitter,
        }
    return dataclasses.replace(results, summary=summary)  # fmt: skip


def _with_fixed(
    results,
    supervised_minus_empty: list[float],
    real: float = 0.0,
    control_minus_supervised: list[float] | None = None,
    reflow_minus_control: list[float] | None = None,
):
    """``results`` with every seed's fixed-layout SI-SDR set: empty slot at -8 dB, the supervised channel at -8 plus
    the given per-seed lead, the rest in between, the physical mic at +2; the real mics' refitted MVDR at ``real``;
    optionally the regression on the pseudo-targets and reflow set per seed relative to the supervised channel and
    to that regression; the aggregate recomputed from them."""
    from explorables.virtualflow.experiment import FIXED_LAYOUT, aggregate

    values = {"physical": 2.0, "flow": -6.0, "control": -5.5, "nearest": -7.0, "random": -10.0}
    summary = dict(results.summary)
    for lead, s in zip(supervised_minus_empty, results.config.seeds, strict=True):
        seed = {**summary[f"seed_{s}"], "fixed_sisdr/empty": -8.0, "fixed_sisdr/supervised": -8.0 + lead}
        seed.update({f"fixed_sisdr/{b}": v for b, v in values.items()})
        seed["fixed_sisdr/reflow"] = -9.0 + lead  # 1 dB below the supervised channel
        i = list(results.config.seeds).index(s)
        if control_minus_supervised is not None:
            seed["fixed_sisdr/control"] = seed["fixed_sisdr/supervised"] + control_minus_supervised[i]
        if reflow_minus_control is not None:
            seed["fixed_sisdr/reflow"] = seed["fixed_sisdr/control"] + reflow_minus_control[i]
        seed["beam_sisdr/real"] = real
        seed["fixed_sisdr/real"] = real
        assert set(FIXED_LAYOUT) <= {k.split("/")[1] for k in seed if k.startswith("fixed_sisdr/")}
        summary[f"seed_{s}"] = seed
    summary["aggregate"] = aggregate(results.config, [summary[f"seed_{s}"] for s in results.config.seeds])
    return dataclasses.replace(results, summary=summary)  # fmt: skip


def _with_top_band_energy(results, reflow_one_step: float):
    """``results`` with every seed's top-band energy as the reflow row reads it (its test and gate rooms): the base
    flow's many steps at -4 dB (± 0.05), reflow's one step at ``reflow_one_step`` dB, and SI-SDR equal for both."""
    cfg = results.config
    top = cfg.n_bands - 1
    many = f"reflow_row/energy/flow/{cfg.n_sample_steps}"
    many_si = f"reflow_row/sisdr/flow/{cfg.n_sample_steps}"
    summary = dict(results.summary)
    for i, s in enumerate(cfg.seeds):
        seed = dict(summary[f"seed_{s}"])
        for key, value in ((many, -4.0 + 0.05 * (-1) ** i), ("reflow_row/energy/reflow/1", reflow_one_step)):
            bands = list(seed[key])
            bands[top] = value
            seed[key] = bands
        seed["reflow_row/sisdr/reflow/1"] = seed[many_si]
        summary[f"seed_{s}"] = seed
    return dataclasses.replace(results, summary=summary)  # fmt: skip


def test_reflow_sentence_says_which_way_the_energy_is_off(smoke_results):
    """A one-step model with more top-band energy than the sampler overshoots; with less, it moves toward the
    conditional mean: the sentence must not call an overshoot a collapse."""
    over = claims.reflow_sentence(_with_top_band_energy(smoke_results, +2.0))
    under = claims.reflow_sentence(_with_top_band_energy(smoke_results, -10.0))
    assert "overshoots" in over and "toward the conditional mean" not in over
    assert "toward the conditional mean" in under and "overshoots" not in under


def test_physical_sentence_follows_the_gate(smoke_results):
    """The gate is the physical mic's lead over a random channel, not over the real mics alone: a physical mic
    3 dB above the real mics fails when a random channel gets 2.5 dB of that."""
    assert "cannot be made" in claims.physical_sentence(_with_beams(smoke_results, 3.0, 2.5))
    assert "does use information" in claims.physical_sentence(_with_beams(smoke_results, 3.0, 0.5))
    assert "+3.00 dB" in claims.physical_sentence(_with_beams(smoke_results, 3.0, 0.5))


def test_span_sentence_reads_the_adaptive_mvdr_as_a_diagnostic(smoke_results):
    """The adaptive MVDR's supervised channel (0.3 dB over the real mics here) against a random channel is a
    diagnostic now (the gate "useful" reads the fixed layout): not clearly 0.5 dB above it when the random channel gets
    0.5 dB, however far the flow's training target clears it; clearly above when the random channel costs 1 dB."""
    short = claims.span_sentence(_with_beams(smoke_results, 3.0, 0.5))  # target 2 dB above random: still short
    assert "not clearly 0.5 dB" in short and "refits its weights" in short
    above = claims.span_sentence(_with_beams(smoke_results, 0.0, -1.0))
    assert "clearly 0.5 dB above it" in above and "not clearly" not in above
    for said in (short, above):
        assert "A diagnostic, not a gate" in said and "physical* microphones" in said
        assert "untested" not in said  # the adaptive reading decides no claim


def test_fixed_sentence_and_rows_follow_the_every_seed_gate(smoke_results):
    """The gate "useful" reads the fixed layout's supervised minus empty slot on every seed: one seed short of
    0.5 dB fails it (and makes the downstream claim untested), however large the mean; the claim reads the fixed
    layout's reflow minus supervised."""
    from explorables.core.tables import apply_gates

    n = len(smoke_results.config.seeds)
    ok = _with_fixed(smoke_results, [3.0 + 0.1 * i for i in range(n)])
    short = _with_fixed(smoke_results, [6.0] * (n - 1) + [0.4])
    assert "reads pass" in claims.fixed_sentence(ok) and "reads fail" in claims.fixed_sentence(short)
    for res, word in ((ok, "pass"), (short, "fail")):
        rows = claims.claims(res)
        useful = next(r for r in rows if r.name == "useful")
        assert useful.outcome == word, useful.verdict
        beam = next(r for r in rows if r.claim.startswith("With reflow"))
        assert beam.outcome == "no"  # reflow at least 1 dB below the supervised channel on every seed
        gated = next(r for r in apply_gates(rows) if r.claim == beam.claim)
        physical = next(r for r in rows if r.name == "physical")
        if word == "fail" or physical.outcome == "fail":
            assert gated.outcome == "untested"
    # every fill-in below the refitted real mics: the sentence says a substitute, not new information
    assert "brings no information" in claims.fixed_sentence(ok)
    above = _with_fixed(smoke_results, [3.0] * n, real=-9.0)
    assert "brings no information" not in claims.fixed_sentence(above)
    table = claims.fixed_table(ok)
    assert "refitted" in table and "slot left empty" in table and table.count("\n") >= 9


def test_fixed_sentence_names_sampling_only_when_the_two_intervals_say_so(smoke_results):
    """The regression on the pseudo-targets (no truth) against the supervised channel, and reflow against that
    regression: the gap is called sampling only when the first interval straddles 0 and the second lies below 0;
    a regression clearly behind the supervised channel, or reflow not clearly behind the regression, gets the
    neutral phrase."""
    n = len(smoke_results.config.seeds)
    lead = [3.0] * n
    straddle = [0.5 * (-1) ** i for i in range(n)]
    behind = [-2.0 - 0.1 * i for i in range(n)]
    sampling = claims.fixed_sentence(_with_fixed(smoke_results, lead, -1.0, straddle, behind))
    assert "sampling, not the missing ground truth" in sampling and "see the two intervals" not in sampling
    for c, r in ((behind, behind), (straddle, [-b for b in behind])):
        neutral = claims.fixed_sentence(_with_fixed(smoke_results, lead, -1.0, c, r))
        assert "see the two intervals" in neutral and "sampling, not" not in neutral
        assert "without the truth" in neutral and neutral.count("[") >= 6  # both intervals are printed


def test_failed_useful_gate_says_untested_with_the_interval_and_the_intro_clause_follows_below_real(smoke_results):
    """A failing gate "useful" makes the sentence say the downstream claim reads untested and still give reflow
    minus the supervised channel's interval; a passing gate says nothing of the kind. The intro's clause on the
    refitted real mics follows :func:`claims._below_real`."""
    n = len(smoke_results.config.seeds)
    ok = _with_fixed(smoke_results, [3.0 + 0.1 * i for i in range(n)])
    short = _with_fixed(smoke_results, [6.0] * (n - 1) + [0.4])
    said = claims.fixed_sentence(short)
    assert 'reads "untested", although reflow minus the supervised channel lies' in said
    assert "untested" not in claims.fixed_sentence(ok)
    assert "adds no information" in claims.below_real_clause(ok)
    above = claims.below_real_clause(_with_fixed(smoke_results, [3.0] * n, real=-9.0))
    assert "adds no information" not in above and "not every virtual channel" in above
    beam = next(r for r in claims.claims(ok) if r.claim.startswith("With reflow"))
    assert beam.outcome == "no" and "linear fixed layout" in beam.verdict
    assert "conditional mean, not a sample" in beam.setting


def test_smoke_claims_read_the_measured_numbers(smoke_results):
    from explorables.core.tables import apply_gates

    rows = claims.claims(smoke_results)
    a = smoke_results.summary["aggregate"]
    learning = next(r for r in rows if r.claim.startswith("Virtual-Flow generates"))
    beam = next(r for r in rows if r.claim.startswith("With reflow"))
    assert f"{a['sisdr/flow']['mean']:.2f}" in learning.measured
    assert f"{a['fixed_sisdr/real']['mean']:.2f}" in beam.measured
    assert f"{a['fixed_sisdr/reflow']['mean']:.2f}" in beam.measured
    assert [r.kind for r in rows].count("gate") == 5 and beam.gates == ("physical", "useful")
    physical = next(r for r in rows if r.name == "physical")
    if physical.outcome == "fail":  # a gate that fails makes its claim untested, never no
        assert next(r for r in apply_gates(rows) if r.claim == beam.claim).outcome == "untested"


def test_an_interrupted_training_loop_resumes_to_the_same_weights(tmp_path):
    """The loop state stored by train_flow (weights, optimiser, schedule, generator, losses) lets a killed run
    continue and end exactly where an uninterrupted one does (the paper preset trains for hours per seed)."""
    from explorables.core.checkpoint import Checkpointer

    cond = torch.randn(300, 3, generator=torch.Generator().manual_seed(0))
    cond[:, 2] = 1.0
    target = torch.stack([cond[:, 0], -cond[:, 1]], 1)

    def fresh():
        torch.manual_seed(5)
        return VelocityNet(1, 3, d_hidden=16, n_layers=1), torch.Generator().manual_seed(1)

    net, gen = fresh()
    kw = dict(n_steps=20, batch_size=32, lr=1e-2)
    whole = train_flow(net, target, cond, generator=gen, **kw)

    class Killed(Exception):
        pass

    def kill_at(k):
        def on_step(step):
            if step == k:
                raise Killed

        return on_step

    first, gen_a = fresh()
    with pytest.raises(Killed):
        train_flow(
            first,
            target,
            cond,
            generator=gen_a,
            on_step=kill_at(11),
            **kw,
            checkpoint=Checkpointer(tmp_path, every_s=0.0),
            name="seed_0/flow",
        )
    resumed, gen_b = fresh()
    again = train_flow(
        resumed, target, cond, generator=gen_b, **kw, checkpoint=Checkpointer(tmp_path, resume=True), name="seed_0/flow"
    )
    assert again == whole
    for a, b in zip(net.state_dict().values(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert torch.equal(gen.get_state(), gen_b.get_state())  # what the next phase (reflow's pairs) draws from
    # a finished loop is stored too: resuming it trains nothing and returns the same losses and weights
    done, gen_c = fresh()
    assert (
        train_flow(
            done,
            target,
            cond,
            generator=gen_c,
            **kw,
            checkpoint=Checkpointer(tmp_path, resume=True),
            name="seed_0/flow",
        )
        == whole
    )
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), done.state_dict().values(), strict=True))


def test_paper_speech_is_read_from_the_data_root(tmp_path):
    """The paper preset's talkers come from clean-speech WAV files under --data-root (any layout, any rate,
    int or float, mono or stereo), cut to the clip; an empty folder or a broken file is a clear error."""
    from scipy.io import wavfile

    rng = np.random.default_rng(0)
    t = np.arange(16000) / 16000
    (tmp_path / "spk1").mkdir()
    wavfile.write(tmp_path / "spk1" / "a.wav", 16000, (0.5 * np.sin(2 * np.pi * 220 * t) * 32767).astype(np.int16))
    stereo = np.stack([np.sin(2 * np.pi * 330 * t[:8000]), np.sin(2 * np.pi * 440 * t[:8000])], 1)
    wavfile.write(tmp_path / "b.WAV", 8000, (0.3 * stereo).astype(np.float32))
    files = audio.speech_corpus(str(tmp_path))
    assert [f.rsplit("/", 1)[-1] for f in files] == ["b.WAV", "a.wav"]
    utterances = [audio.corpus_utterance(f, FS) for f in files]
    assert all(np.isclose(np.abs(u).max(), 0.9) for u in utterances)
    assert utterances[1].size == pytest.approx(8000, abs=2)  # 1 s at 16 kHz resampled to 8 kHz
    cut = audio.speech_signal(3000, FS, rng, corpus=files)
    assert any(
        any(np.allclose(cut, u[s : s + 3000]) for s in range(u.size - 3000 + 1)) for u in utterances
    )  # a contiguous piece of one of the files, not espeak-ng
    cfg = VirtualFlowConfig.preset("smoke", data_root=str(tmp_path))
    ex = build_example(cfg, 0, "train", 0)
    assert np.all(np.isfinite(ex.real)) and audio.source_kind(True, cfg.data_root) == "WAV files from --data-root"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="data_root"):
        audio.speech_corpus(str(empty))
    (empty / "broken.wav").write_bytes(b"not a wav file")
    audio.speech_corpus.cache_clear()
    with pytest.raises(ValueError, match="data_root"):
        audio.corpus_utterance(audio.speech_corpus(str(empty))[0], FS)
    assert "paper" in VirtualFlowConfig.DATA_ROOT_SCALES


def test_band_sentence_follows_the_pseudo_targets_band_errors(smoke_results):
    a = smoke_results.summary["aggregate"]
    n = smoke_results.config.n_bands

    def with_nmse(values):
        agg = {**a, "nmse/pseudo": {"mean": values, "sd": [0.0] * n}}
        return claims.band_sentence(dataclasses.replace(smoke_results, summary={"aggregate": agg}))

    assert "error grows with frequency" in with_nmse(list(np.linspace(-5, 1, n)))
    assert "does not grow" in with_nmse(list(np.linspace(1, -5, n)))


def test_random_scene_geometry_and_a_given_angle_leaves_the_other_draws_alone():
    """Every position lies inside the room, the array on its circle, the VM at a distance from the drawn range;
    fixing ``vm_angle`` moves only the VM (the angle is drawn either way)."""
    kw = dict(fs=FS, n_mics=3, array_radius=0.1, vm_distance=(0.12, 0.25), rt60_range=(0.15, 0.3))
    scene = random_scene(np.random.default_rng(4), **kw)
    dims = np.asarray(scene.room_dim)
    for p in (scene.source, scene.interferer, scene.virtual_mic, *scene.real_mics):
        assert np.all(p > 0) and np.all(p < dims)
    center = scene.real_mics.mean(0)
    np.testing.assert_allclose(np.linalg.norm(scene.real_mics - center, axis=1), 0.1, atol=1e-12)
    assert 0.12 <= np.linalg.norm(scene.virtual_mic - center) <= 0.25 and 0.15 <= scene.rt60 <= 0.3
    fixed = random_scene(np.random.default_rng(4), **kw, vm_angle=1.0)
    for field in ("room_dim", "rt60", "source", "interferer", "real_mics"):
        np.testing.assert_array_equal(getattr(fixed, field), getattr(scene, field))
    direction = (fixed.virtual_mic - center)[:2]
    assert np.isclose(np.arctan2(direction[1], direction[0]), 1.0)


def test_random_scene_refuses_a_range_given_high_first_and_takes_a_pinned_one():
    """``vm_distance`` and ``rt60_range`` are (low, high) ranges: a pair given high first is refused with a
    ValueError naming the parameter (not numpy's 'high - low < 0'); ``low == high`` pins the value, as the lab and
    ``relocate`` use it, and draws as before."""
    kw = dict(fs=FS, n_mics=3, array_radius=0.1)
    for name, bad, ok in (("vm_distance", (0.25, 0.12), (0.15, 0.3)), ("rt60_range", (0.3, 0.15), (0.12, 0.25))):
        other = "rt60_range" if name == "vm_distance" else "vm_distance"
        with pytest.raises(ValueError, match=rf"^{name} must be a \(low, high\) range with low <= high.*high first"):
            random_scene(np.random.default_rng(4), **kw, **{name: bad, other: ok})
        with pytest.raises(ValueError, match=rf"^{name} must be"):
            random_scene(np.random.default_rng(4), **kw, **{name: (0.2,), other: ok})
    pinned = random_scene(np.random.default_rng(4), **kw, vm_distance=(0.2, 0.2), rt60_range=(0.25, 0.25))
    assert np.isclose(np.linalg.norm(pinned.virtual_mic - pinned.real_mics.mean(0)), 0.2) and pinned.rt60 == 0.25


def test_make_example_builds_the_pseudo_target_and_the_data_split_the_truth_off():
    """make_example's pseudo-target is eq. (vf-pseudo) of its aligned channels; unsupervised_data and
    supervised_data share the condition and differ only in the target (pseudo vs truth), one row per bin."""
    scene = random_scene(
        np.random.default_rng(5), fs=FS, n_mics=3, array_radius=0.1, vm_distance=(0.12, 0.25), rt60_range=(0.15, 0.3)
    )
    sim = simulate(scene, 4000, np.random.default_rng(6), snr_db=10.0, use_espeak=False)
    ex = make_example(scene, sim, nfft=128, lead_s=0.2, azimuth=0.4)
    assert ex.azimuth == 0.4
    pseudo = pseudo_target(ex.spec_real, scene.real_mics, scene.virtual_mic, 0.4, FS, 128)
    np.testing.assert_allclose(ex.pseudo, pseudo, atol=1e-10)
    n_bins = ex.pseudo.size
    assert ex.cond.shape == (n_bins, 6 * 3 + 7 + 3) and ex.truth.shape == ex.pseudo.shape
    (ut, uc), (st, sc) = unsupervised_data([ex], "cpu"), supervised_data([ex], torch.device("cpu"))
    assert torch.equal(uc, sc) and ut.shape == st.shape == (n_bins, 2)
    np.testing.assert_allclose(st.numpy(), spec_to_bins(ex.truth, ex.scale))
    np.testing.assert_allclose(ut.numpy(), spec_to_bins(ex.pseudo, ex.scale))
    estimated = make_example(scene, sim, nfft=128, lead_s=0.2)  # the direction from the real mics
    assert np.isfinite(estimated.azimuth) and estimated.cond.shape == ex.cond.shape


def test_stoi_is_one_for_the_reference_itself_and_falls_with_noise():
    rng = np.random.default_rng(7)
    ref = audio.harmonic_source(2 * FS, FS, rng)
    assert stoi(ref, ref, FS) == pytest.approx(1.0, abs=1e-6)
    noisy = ref + 3.0 * rng.standard_normal(ref.size) * ref.std()
    assert stoi(noisy, ref, FS) < 0.9


def test_regression_fits_a_linear_target():
    """train_regression's loss falls on a target the head can represent (a fixed filter of the channels)."""
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    cond = torch.randn(800, 3, generator=gen)  # [a_real, a_imag, w]: one "mic"
    cond[:, 2] = 1.0
    target = 0.5 * cond[:, :2]
    net = Regressor(1, 3, d_hidden=16, n_layers=1)
    losses = train_regression(net, target, cond, n_steps=150, batch_size=128, lr=1e-2, generator=gen)
    assert len(losses) == 150 and np.mean(losses[-15:]) < 0.2 * np.mean(losses[:15])


def test_headline_reports_every_method_and_channel_set(smoke_results):
    lines = headline(smoke_results)
    a = smoke_results.summary["aggregate"]
    from explorables.virtualflow.experiment import BEAMFORMING, FIXED_LAYOUT, METHODS

    assert len(lines) == len(METHODS) + len(BEAMFORMING) + len(FIXED_LAYOUT)
    assert f"{a['sisdr/flow']['mean']:.2f}" in lines[METHODS.index("flow")]
    last_adaptive = lines[len(METHODS) + len(BEAMFORMING) - 1]
    assert last_adaptive.startswith("MVDR SI-SDR") and f"{a['beam_sisdr/physical']['mean']:.2f}" in last_adaptive
    assert lines[-1].startswith("fixed-layout MVDR") and f"{a['fixed_sisdr/random']['mean']:.2f}" in lines[-1]


class GaussianFlow(VelocityNet):
    """The exact endpoint E[x1 | x_t] of the straight path from N(0, I) to N(mu, sig^2 I) (independent coupling):
    its ODE maps x0 to mu + sig x0, a closed form to measure solvers against."""

    def __init__(self, mu: float, sig: float):
        super().__init__(1, 3, 8, 1)
        self.mu, self.sig = mu, sig
        self.times: list[float] = []

    def _endpoint(self, x_t, t, cond):  # what forward calls (the public endpoint checks, then calls it)
        self.times.append(float(t.max()))
        t = t[:, None]
        var = (1 - t) ** 2 + t**2 * self.sig**2
        return self.mu + t * self.sig**2 / var * (x_t - t * self.mu)


@pytest.mark.parametrize(("mu", "sig"), [(2.0, 0.3), (1.0, 1.0), (0.0, 0.1), (0.5, 3.0)])
def test_heun_is_no_worse_than_euler_at_equal_network_evaluations(mu, sig):
    """Issue 42: Heun's second evaluation of its last step fell on t = 1, where the velocity divides by 1 - t
    (clamped at 1e-3), so its error was multiplied by 1000. Now Heun never evaluates at t = 1 and, against the
    closed-form ODE solution, is at least as accurate as Euler with the same number of network evaluations."""
    net = GaussianFlow(mu, sig).double()
    cond = torch.randn(500, 3, dtype=torch.float64)
    x0 = torch.randn(500, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    exact = mu + sig * x0
    for n in (3, 4, 8):
        net.times.clear()
        heun = sample(net, cond, x0, n, "heun")
        assert len(net.times) == evaluations_per_sample(n, "heun") == 2 * n
        assert max(net.times) < 1.0
        euler = sample(net, cond, x0, evaluations_per_sample(n, "heun"), "euler")
        assert (heun - exact).abs().mean() <= (euler - exact).abs().mean()


def test_heun_stays_bounded_on_an_untrained_network():
    """The issue's example: an untrained network sampled with one Heun step gave mean |x| = 17.6 against 0.08 for
    Euler; now both stay of the order of the noise they start from."""
    torch.manual_seed(0)
    net = VelocityNet(1, 4)
    cond, x0 = torch.randn(2000, 4), torch.randn(2000, 2)
    for n in (1, 2, 4):
        heun, euler = sample(net, cond, x0, n, "heun"), sample(net, cond, x0, 2 * n, "euler")
        assert heun.abs().mean() < 3 * x0.abs().mean()
        assert (heun - euler).abs().mean() < x0.abs().mean()


@pytest.mark.parametrize("solver", ["euler", "heun"])
def test_solves_sharing_their_first_evaluation_are_the_plain_solves_bit_for_bit(solver):
    """Solves from one x0 at several step counts share the first network evaluation v(x0, 0 | c) (the evaluation
    computes it once): every solve is the plain :func:`sample` bit for bit, and the network is called once less per
    solve after the first."""
    torch.manual_seed(1)
    net = VelocityNet(2, 21, 32, 2)
    cond, x0 = torch.randn(3000, 21), torch.randn(3000, 2)
    calls = []
    net.register_forward_hook(lambda *_: calls.append(1))
    v0 = first_velocity(net, cond, x0)
    shared = {k: _solve(net, cond, x0, k, solver, v0) for k in (8, 1, 2)}
    n_shared = len(calls)
    for k, x in shared.items():
        assert torch.equal(x, sample(net, cond, x0, k, solver)), k
    assert n_shared == sum(evaluations_per_sample(k, solver) for k in (8, 1, 2)) - 3 + 1


def test_held_out_mics_shape_the_training_target_but_never_the_condition():
    """The held-out microphones' recordings enter the training pseudo-target (eq. vf-pseudo over all mics) and
    nothing the network reads: replacing them by other sound leaves the condition and the real mics'
    pseudo-target bit-identical and changes the training target; without held-out mics the two targets agree."""
    kw = dict(fs=FS, n_mics=2, array_radius=0.05, vm_distance=(0.2, 0.35), rt60_range=(0.15, 0.25))
    scene = random_scene(np.random.default_rng(8), **kw, n_aux=4, aux_radius=0.3)
    assert scene.n_aux == 4
    centre = scene.real_mics.mean(0)
    np.testing.assert_allclose(np.linalg.norm(scene.aux_mics - centre, axis=1), 0.3, atol=1e-12)
    plain = random_scene(np.random.default_rng(8), **kw)  # held-out mics are drawn last: nothing else moves
    for field in ("room_dim", "rt60", "source", "interferer", "real_mics", "virtual_mic"):
        np.testing.assert_array_equal(getattr(plain, field), getattr(scene, field))
    sim = simulate(scene, 6000, np.random.default_rng(9), snr_db=0.0, lead_s=0.3, use_espeak=False)
    assert sim["aux"].shape == (4, 6000)
    ex = make_example(scene, sim, nfft=128, lead_s=0.3)
    other = dict(sim, aux=np.random.default_rng(10).standard_normal(sim["aux"].shape))
    ex2 = make_example(scene, other, nfft=128, lead_s=0.3, azimuth=ex.azimuth_train)
    ex1 = make_example(scene, sim, nfft=128, lead_s=0.3, azimuth=ex.azimuth_train)
    np.testing.assert_array_equal(ex1.cond, ex2.cond)
    np.testing.assert_array_equal(ex1.pseudo, ex2.pseudo)
    assert np.mean(np.abs(ex1.pseudo_train - ex2.pseudo_train) ** 2) > 0.01 * np.mean(np.abs(ex1.pseudo_train) ** 2)
    target, _ = unsupervised_data([ex], "cpu")
    np.testing.assert_allclose(target.numpy(), spec_to_bins(ex.pseudo_train, ex.scale))
    no_aux = make_example(plain, {k: v for k, v in sim.items() if k != "aux"}, nfft=128, lead_s=0.3)
    np.testing.assert_array_equal(no_aux.pseudo_train, no_aux.pseudo)


def test_flow_keeps_the_spread_that_regression_averages_away():
    """When the target is not a function of the condition (a coin-flip sign), regression learns the conditional
    mean (energy lost) while the flow's samples keep the target's spread and energy: the property the
    high-band magnitude claim rests on."""
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(1)
    n = 4000
    cond = torch.randn(n, 3, generator=gen)
    cond[:, 2] = 1.0
    sign = torch.where(torch.rand(n, generator=gen) < 0.5, -1.0, 1.0)
    target = torch.stack([sign, 0.3 * cond[:, 0]], 1)
    flow = VelocityNet(1, 3, d_hidden=64, n_layers=2)
    train_flow(flow, target, cond, n_steps=400, batch_size=256, lr=3e-3, generator=gen)
    reg = Regressor(1, 3, d_hidden=64, n_layers=2)
    train_regression(reg, target, cond, n_steps=300, batch_size=256, lr=3e-3, generator=gen)
    c = cond[:1000]
    x = sample(flow, c, torch.randn(1000, 2, generator=gen), 16)
    with torch.no_grad():
        y = reg(c)
    assert y[:, 0].pow(2).mean() < 0.2  # the mean of a coin flip: energy lost
    assert x[:, 0].pow(2).mean() > 0.6  # samples near +-1: energy kept
    assert (x[:, 0].abs() - 1).abs().mean() < 0.35


def test_bad_held_out_mics_are_refused():
    scene = far_field_scene(0.3)
    with pytest.raises(ValueError, match="aux_mics"):
        dataclasses.replace(scene, aux_mics=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="aux_mics"):
        simulate(dataclasses.replace(scene, aux_mics=np.array([[1.0, 1.0, -1.0]])), 4000, np.random.default_rng(0),
                 snr_db=10, anechoic=True)  # fmt: skip
    with pytest.raises(ValueError, match="aux_radius"):
        VirtualFlowConfig.preset("smoke", aux_radius=0.04, array_radius=0.05)
    sim = simulate(dataclasses.replace(scene, aux_mics=scene.real_mics + 0.01), 4000, np.random.default_rng(0),
                   snr_db=10, anechoic=True)  # fmt: skip
    with pytest.raises(ValueError, match="aux"):
        make_example(dataclasses.replace(scene, aux_mics=scene.real_mics + 0.01), dict(sim, aux=sim["aux"][:1]),
                     nfft=128, lead_s=0.1)  # fmt: skip


def test_the_random_channel_has_the_real_mics_power_and_no_information():
    """The beamforming control: per frequency, the mean power of the real mics, and no correlation with them."""
    from explorables.virtualflow.experiment import random_channel

    rng = np.random.default_rng(11)
    spec = rng.standard_normal((2, 65, 400)) * np.linspace(0.1, 3.0, 65)[None, :, None] + 0j
    ex = type("Ex", (), {"spec_real": spec})()
    z = random_channel(ex, np.random.default_rng(0))
    assert z.shape == (65, 400) and np.iscomplexobj(z)
    ratio = np.mean(np.abs(z) ** 2, 1) / np.mean(np.abs(spec) ** 2, (0, 2))
    np.testing.assert_allclose(ratio, 1.0, atol=0.25)
    corr = np.abs(np.sum(z * spec[0].conj(), 1)) / np.sqrt(np.sum(np.abs(z) ** 2, 1) * np.sum(np.abs(spec[0]) ** 2, 1))
    assert corr.max() < 0.25  # 400 frames: chance correlations are about 0.05
    np.testing.assert_array_equal(z, random_channel(ex, np.random.default_rng(0)))  # seeded


def test_oracle_steered_mvdr_is_distortionless_and_a_linear_channel_changes_nothing():
    """With the talker's clean image at the reference mic, the steering vector is each channel's transfer function
    relative to it: the output keeps the talker and removes noise, and a channel that is a fixed linear
    combination of the others leaves the output unchanged (up to the diagonal loading)."""
    rng = np.random.default_rng(12)
    c, f, t, n0 = 3, 17, 600, 200
    d = rng.standard_normal((c, f)) + 1j * rng.standard_normal((c, f))
    d /= d[:1]
    s = rng.standard_normal((f, t)) + 1j * rng.standard_normal((f, t))
    s[:, :n0] = 0
    noise = 0.5 * (rng.standard_normal((c, f, t)) + 1j * rng.standard_normal((c, f, t)))
    x = d[:, :, None] * s[None] + noise
    y = mvdr(x, n0, reference=s)
    speech = slice(n0, None)
    assert np.mean(np.abs(y[:, speech] - s[:, speech]) ** 2) < np.mean(np.abs(x[0][:, speech] - s[:, speech]) ** 2) / 2
    a = rng.standard_normal((c, f)) + 1j * rng.standard_normal((c, f))
    extra = np.einsum("cf,cft->ft", a.conj(), x)
    y2 = mvdr(np.concatenate([x, extra[None]]), n0, reference=s, loading=1e-6)
    np.testing.assert_allclose(y2, y, atol=0.05 * np.abs(y).max())
    with pytest.raises(ValueError, match="reference"):
        mvdr(x, n0, reference=s[:, :10])


def test_cross_fitted_steering_never_sees_the_frames_it_filters():
    """Review of the first issue-42 revision: the oracle steering vector was fitted on the frames that were scored,
    so an extra channel's chance correlation with the talker there entered the weights. Cross-fitted, the output
    of each half is the same whatever the clean reference (and the extra channel) holds on that half's frames and
    the guard frame next to it, and with ``steer_split=None`` it is not."""
    rng = np.random.default_rng(21)
    c, f, t, n0, k = 3, 9, 120, 30, 75

    def cg(*shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    s = cg(f, t)
    s[:, :n0] = 0
    x = cg(c, 1)[:, :, None] * s[None] + cg(c, f, t)
    s2 = s.copy()
    s2[:, k - 1 :] = cg(f, t - k + 1)  # the reference on the second half (and its guard frame) redrawn
    x2 = x.copy()
    x2[-1, :, k:] = cg(f, t - k)  # and the extra channel on the frames the second half filters
    for xx in (x, x2):
        np.testing.assert_allclose(
            mvdr(xx, n0, reference=s2, steer_split=k)[:, k:], mvdr(xx, n0, reference=s, steer_split=k)[:, k:]
        )
        assert not np.allclose(mvdr(xx, n0, reference=s2)[:, k:], mvdr(xx, n0, reference=s)[:, k:])  # in-sample
    s3 = s.copy()
    s3[:, : k + 1] = cg(f, k + 1)  # the reference on the first half (and its guard frame) redrawn: the same
    s3[:, :n0] = 0
    np.testing.assert_allclose(
        mvdr(x, n0, reference=s3, steer_split=k)[:, :k], mvdr(x, n0, reference=s, steer_split=k)[:, :k]
    )
    with pytest.raises(ValueError, match="steer_split"):
        mvdr(x, n0, reference=s, steer_split=t - 1)


def test_the_direction_error_is_taken_against_the_louder_source():
    """Review: the pseudo-target steers to the source that dominates the real mics, in most rooms the interferer, so
    the direction error is reported against that source (and against the talker apart)."""
    from explorables.virtualflow.experiment import dominant_source

    talker, interferer = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    scene = type("Scene", (), {"source": talker, "interferer": interferer})()
    rng = np.random.default_rng(3)
    speech = rng.standard_normal((2, 1000))
    for gain, want in ((3.0, interferer), (0.3, talker)):
        real = speech + gain * rng.standard_normal((2, 1000))
        ex = type("Ex", (), {"scene": scene, "real_speech": speech, "real": real})()
        np.testing.assert_array_equal(dominant_source(ex, 100), want)


def test_held_out_mics_stand_as_far_from_the_virtual_position_as_their_circle_allows():
    """Review of issue 42: a held-out mic next to the VM would make the training target nearly the truth. The
    held-out circle is turned so that the VM's direction falls midway between two of its mics: no other turn puts
    the nearest one farther away, and the other draws of the scene are those of the same scene without them."""
    from explorables.virtualflow.experiment import mic_distances

    kw = dict(fs=FS, n_mics=2, array_radius=0.05, vm_distance=(0.2, 0.35), rt60_range=(0.15, 0.25))
    for seed in range(5):
        scene = random_scene(np.random.default_rng(seed), **kw, n_aux=4, aux_radius=0.3)
        plain = random_scene(np.random.default_rng(seed), **kw)
        for field in ("room_dim", "rt60", "source", "interferer", "real_mics", "virtual_mic"):
            np.testing.assert_array_equal(getattr(scene, field), getattr(plain, field))
        center = scene.real_mics.mean(0)
        nearest = np.min(np.linalg.norm(scene.aux_mics - scene.virtual_mic, axis=1))
        for turn in np.linspace(0, 2 * np.pi, 37):
            other = circular_array(center, 4, 0.3, rotation=turn)
            assert nearest >= np.min(np.linalg.norm(other - scene.virtual_mic, axis=1)) - 1e-12
    ex = build_example(VirtualFlowConfig.preset("smoke"), 0, "test", 0)
    d = mic_distances(ex)
    assert d["aux"] == pytest.approx(np.min(np.linalg.norm(ex.scene.aux_mics - ex.scene.virtual_mic, axis=1)))
    assert d["real"] == pytest.approx(np.min(np.linalg.norm(ex.scene.real_mics - ex.scene.virtual_mic, axis=1)))
    assert np.isnan(
        mic_distances(build_example(VirtualFlowConfig.preset("smoke").replace(n_aux=0), 0, "test", 0))["aux"]
    )


def test_beam_score_ignores_the_noise_only_lead_and_needs_the_alignment():
    """Review of issue 42: the MVDR output is scored on the speech part only. Whatever the output does in the lead
    (where the reference is silent) leaves the score unchanged; a one-sample shift of the output lowers it."""
    from explorables.virtualflow.experiment import speech_sisdr

    rng = np.random.default_rng(0)
    n, start = 4000, 1000
    ref = np.concatenate([np.zeros(start), np.sin(np.linspace(0, 300, n - start)) * rng.uniform(0.5, 1, n - start)])
    out = ref + 0.05 * rng.standard_normal(n)
    loud_lead = out.copy()
    loud_lead[:start] += 10 * rng.standard_normal(start)
    assert speech_sisdr(loud_lead, ref, start) == pytest.approx(speech_sisdr(out, ref, start))
    assert si_sdr(loud_lead, ref) < speech_sisdr(loud_lead, ref, start) - 10  # the whole clip would count the lead
    assert speech_sisdr(np.roll(out, 1), ref, start) < speech_sisdr(out, ref, start)
    with pytest.raises(ValueError, match="start"):
        speech_sisdr(out, ref, n)


def test_the_noise_estimator_is_scored_and_level_matched_on_the_smoke_run(smoke_results):
    """The magnitude claim's trivial baselines are measured: a copy of the nearest mic and noise at the real mics'
    level (the same channel the beamformer gets as its control); neither learns anything, both are in every table."""
    a = smoke_results.summary["aggregate"]
    for m in ("nearest", "noise"):
        assert len(a[f"magerr/{m}"]["mean"]) == smoke_results.config.n_bands and a["nfe"][m] == 0
    row = next(r for r in claims.claims(smoke_results) if r.claim.startswith("Pseudo-target training"))
    assert f"{a['magerr/noise']['mean'][-1]:.2f}" in row.measured
    assert f"{a['magerr/nearest']['mean'][-1]:.2f}" in row.measured
    assert "dist/aux" in a and "dist/real" in a and a["flow_epochs"]["mean"] > 0


def test_room_sentence_follows_the_gate(smoke_results):
    """The page's sentence on the gate "room" says what the gate function says, with the interval it read, and when
    the gate fails it tells a mean that clears the margin (too wide an interval) from one that does not: over random
    per-seed differences whose leads and spreads reach all three branches."""
    from explorables.core.verdicts import interval

    rng = np.random.default_rng(0)
    seeds = smoke_results.config.seeds
    seen = set()
    for _ in range(60):
        lead = float(rng.uniform(-1.0, 4.0))
        spread = float(rng.choice([0.01, 0.3, 3.0, 10.0]))
        room = [lead + spread * float(z) for z in rng.standard_normal(len(seeds))]
        summary = dict(smoke_results.summary)
        for s, r in zip(seeds, room, strict=True):
            lead = {"room_sisdr/pseudo": -10.0, "room_sisdr/supervised": -10.0 + r}  # what the gate reads
            summary[f"seed_{s}"] = {**summary[f"seed_{s}"], **lead}
        said = claims.room_sentence(dataclasses.replace(smoke_results, summary=summary))
        iv = interval(room)
        assert iv.format(2, signed=True) in said
        if claims.room_gate(room).startswith("pass"):
            branch = "pass"
            assert "the learning claim is compared" in said and "untested" not in said
        elif iv.mean >= claims.LEARNING_MARGIN:
            branch = "wide"
            assert "the mean clears" in said and "too wide" in said and "untested" in said
            assert "not even supervision" not in said  # the measured mean contradicts that reading
        else:
            branch = "low"
            assert "nor does the mean" in said and "not even supervision" in said and "untested" in said
        seen.add(branch)
    assert seen == {"pass", "wide", "low"}


def test_room_tally_counts_the_study_rows():
    """The page's tally of the gate "room" from a seed study names exactly the base seeds the rows give: failing and
    passing seeds of the gate, the learning claim's untested seeds, and whether the failing seeds' means cleared
    the margin (the check row "room_mean"'s words, never its measured text), over random studies."""
    rng = np.random.default_rng(1)
    base = [0, 1, 2, 3, 4]
    for _ in range(40):
        gate_words = [str(w) for w in rng.choice(["pass", "fail"], size=len(base))]
        means = [float(rng.uniform(-1.0, 4.0)) for _ in base]
        learn = ["untested" if w == "fail" else str(rng.choice(["yes", "no", "unclear"])) for w in gate_words]
        mean_words = [claims.room_mean_check([m]).split(":")[0] for m in means]
        study = {
            "seeds": base,
            "rows": [
                {"kind": "gate", "name": "room", "claim": "x", "verdicts": gate_words, "measured": ["?"] * 5},
                # a measured text that says nothing: the tally must read the words alone
                {"kind": "check", "name": "room_mean", "claim": "y", "verdicts": mean_words, "measured": ["?"] * 5},
                {"kind": "claim", "name": "", "claim": claims.LEARNING_CLAIM, "verdicts": learn, "measured": []},
            ],
        }
        said = claims.room_tally(study)
        failed = [s for s, w in zip(base, gate_words, strict=True) if w == "fail"]
        passed = [s for s, w in zip(base, gate_words, strict=True) if w == "pass"]
        if not failed:
            assert "passed on all 5" in said and "untested" not in said
            continue
        assert f"failed on {len(failed)} of 5 base seeds ({claims._seeds_list(failed)};" in said
        assert (f"passed on {claims._seeds_list(passed)}" in said) == bool(passed)
        assert f'"untested" on {len(failed)} of 5 ({claims._seeds_list(failed)})' in said
        cleared = [m >= claims.LEARNING_MARGIN for s, m in zip(base, means, strict=True) if s in failed]
        if all(cleared):
            assert "its mean cleared" in said and "stayed below" not in said
        elif not any(cleared):
            assert "stayed below" in said and "cleared" not in said
        else:
            assert f"on {sum(cleared)} of them its mean cleared" in said
    with pytest.raises(ValueError, match="room"):
        claims.room_tally({"seeds": base, "rows": []})
    with pytest.raises(ValueError, match="room_mean"):  # a study without the check row (an older one)
        claims.room_tally(
            {
                "seeds": base,
                "rows": [
                    {
                        "kind": "gate",
                        "name": "room",
                        "claim": "x",
                        "verdicts": ["fail"] * 5,
                        "measured": ["+2.0 dB"] * 5,
                    },
                    {"kind": "claim", "name": "", "claim": claims.LEARNING_CLAIM, "verdicts": ["untested"] * 5},
                ],
            }
        )


def test_learning_verdict_is_never_kinder_than_both_parts():
    """The floor can only make the learning row harsher than reading both comparisons as parts of its scope: it reads
    yes exactly when both intervals clear the margin, never partly, and no whenever either reads no."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        pseudo, nearest = (list(rng.normal(rng.uniform(-2, 4), rng.uniform(0.05, 3), size=5)) for _ in range(2))
        word = claims.learning_verdict(pseudo, nearest).split(":")[0]
        parts = {compare(pseudo, claims.LEARNING_MARGIN), compare(nearest, claims.LEARNING_MARGIN)}
        assert word != "partly"
        assert (word == "yes") == (parts == {"yes"})
        if "no" in parts:
            assert word == "no"


def test_learning_room_sentence_reads_its_intervals(smoke_results):
    """The sentence after the gate "room" gives the flow, the regression control and the sample's penalty as the
    per-seed intervals of the results, and says the row is near its ceiling exactly when a mean estimator would need
    to beat the pseudo-target by more than the supervised network does."""
    said = claims.learning_room_sentence(smoke_results)
    si = {m: claims.per_seed(smoke_results, f"sisdr/{m}") for m in ("flow", "pseudo", "control", "supervised")}
    for a, b in (("flow", "pseudo"), ("control", "pseudo"), ("flow", "control")):
        assert claims._iv(claims._diff(si[a], si[b])) in said
    needed = claims.LEARNING_MARGIN - interval(claims._diff(si["flow"], si["control"])).mean
    lead = interval(claims._diff(si["supervised"], si["pseudo"])).mean
    assert ("can hardly read yes" in said) == (needed >= lead)
    # move the flow far below the control: the ceiling branch must be taken
    summary = {k: dict(v) if k.startswith("seed_") else v for k, v in smoke_results.summary.items()}
    for s in smoke_results.config.seeds:
        summary[f"seed_{s}"]["sisdr/flow"] = summary[f"seed_{s}"]["sisdr/control"] - 30.0
    assert "can hardly read yes" in claims.learning_room_sentence(dataclasses.replace(smoke_results, summary=summary))
    for s in smoke_results.config.seeds:  # and a flow far above it: there is room
        summary[f"seed_{s}"]["sisdr/flow"] = summary[f"seed_{s}"]["sisdr/control"] + 30.0
    assert "room for a sampler" in claims.learning_room_sentence(dataclasses.replace(smoke_results, summary=summary))


def test_room_mean_check_reads_the_mean_alone():
    """The check "room_mean" passes exactly when the mean of its values clears the learning margin, whatever their
    spread (a spread that fails the gate "room" does not fail it), and refuses an empty input."""
    rng = np.random.default_rng(2)
    for _ in range(50):
        values = list(rng.normal(rng.uniform(-2, 4), rng.uniform(0.1, 5), size=int(rng.integers(2, 11))))
        word = claims.room_mean_check(values).split(":")[0]
        assert word == ("pass" if np.mean(values) >= claims.LEARNING_MARGIN else "fail")
    noisy = [-3.0, 6.0, 1.5]
    assert claims.room_gate(noisy).startswith("fail") and claims.room_mean_check(noisy).startswith("pass")
    with pytest.raises(ValueError, match="supervised_minus_pseudo"):
        claims.room_mean_check([])


def test_the_gate_room_and_the_learning_claim_read_no_downstream(smoke_results):
    """The gate "room" (supervised minus pseudo-target, SI-SDR against the true virtual signal) and the learning claim
    it gates read no beamformer: replacing every downstream reading of a result (adaptive MVDR on the test and gate
    rooms, the fixed layout, STOI) leaves both rows identical, while the downstream gates do move. So no change of the
    downstream (say the abstract's mask-based neural beamformer) can lift that gate (issue 42, twentieth pass,
    `benchmarks/virtualflow_downstream_rule.md`)."""
    from explorables.core.tables import apply_gates

    downstream = ("beam_sisdr/", "beam_stoi/", "gate_beam/", "fixed_sisdr/")
    rng = np.random.default_rng(0)
    summary = dict(smoke_results.summary)
    changed = 0
    for s in smoke_results.config.seeds:
        part = dict(summary[f"seed_{s}"])
        for key in part:
            if key.startswith(downstream):
                part[key] = float(rng.uniform(-30.0, 30.0))
                changed += 1
        summary[f"seed_{s}"] = part
    assert changed > 0
    other = dataclasses.replace(smoke_results, summary=summary)

    def rows(results):
        return {r.name or r.claim: r for r in apply_gates(claims.claims(results))}

    before, after = rows(smoke_results), rows(other)
    for key in ("room", claims.LEARNING_CLAIM):
        assert (before[key].measured, before[key].verdict) == (after[key].measured, after[key].verdict)
    assert before["physical"].measured != after["physical"].measured
    assert before["useful"].measured != after["useful"].measured


def test_outside_span_removes_fixed_combinations_and_keeps_independent_noise():
    """What a linear beamformer cannot form from the real channels: nothing of a fixed per-frequency combination of
    them (the pseudo-target's kind), nearly all of independent noise; the truth carries all of its own new part."""
    from explorables.virtualflow.downstream import new_information, outside_span

    rng = np.random.default_rng(3)
    m, f, t = 2, 17, 60

    def cnoise(*shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    real = cnoise(m, f, t)
    combo = np.einsum("mf,mft->ft", cnoise(m, f), real)
    assert np.max(np.abs(outside_span(combo, real, 5))) < 1e-9 * np.max(np.abs(combo))
    assert outside_span(combo, real, 5).shape == (f, t - 5)
    noise = cnoise(f, t)
    truth = combo + 0.5 * cnoise(f, t)
    assert new_information(combo, truth, real)["outside_db"] == -100.0
    assert new_information(noise, truth, real)["outside_db"] > -1.0
    assert new_information(truth, truth, real)["captured"] == pytest.approx(1.0)
    assert new_information(noise, truth, real)["captured"] < 0.2
    assert new_information(combo + 0.1 * (truth - combo), truth, real)["captured"] == pytest.approx(1.0)


def test_outside_span_refuses_bad_input_naming_the_parameter():
    from explorables.virtualflow.downstream import outside_span

    real = np.ones((2, 5, 10), complex)
    with pytest.raises(ValueError, match="first_frame"):
        outside_span(np.ones((5, 10), complex), real, 8)
    with pytest.raises(ValueError, match="real"):
        outside_span(np.ones((5, 9), complex), real, 0)


def test_gate_rooms_are_seeded_and_count_toward_the_physical_and_room_gates(smoke_results):
    from explorables.virtualflow.experiment import gate_room

    cfg = smoke_results.config
    a, b = gate_room(cfg, 0, 0), gate_room(cfg, 0, 0)
    np.testing.assert_array_equal(a.real, b.real)
    assert not np.array_equal(a.real, gate_room(cfg, 0, 1).real)
    assert a.spec_real.shape[0] == a.real.shape[0] == cfg.n_mics
    # through the test rooms' pipeline, from the real mics alone (no held-out mics in a gate room)
    np.testing.assert_array_equal(a.pseudo_train, a.pseudo)
    assert a.cond.shape[0] == a.pseudo.size and np.all(np.isfinite(a.cond))
    for seed in cfg.seeds:
        p = smoke_results.summary[f"seed_{seed}"]
        assert p["n_gate_rooms"] == cfg.n_test_scenes + cfg.n_gate_scenes
        for key in ("real", "random", "physical"):
            assert np.isfinite(p[f"gate_beam/{key}"])
        assert p["outside/pseudo"] == -100.0  # a fixed combination of the real channels
        assert 0.0 <= p["captured/supervised"] <= 1.0


# --- the neural (mask-based) beamformer: issue 42, fifth pass (measured, not wired into the chapter) ----------------


def _two_source_scene(rng, n_ch=3, f=9, t=60, speech_frames=slice(30, 60), noise_until=None):
    """Speech from a steering vector ``d`` on ``speech_frames`` only, directional noise (on the frames before
    ``noise_until``, all by default) plus a little white noise everywhere: ``(spec, speech image at channel 0, noise
    at channel 0)``."""
    d = np.exp(1j * rng.uniform(-np.pi, np.pi, (f, n_ch)))
    d[:, 0] = 1
    g = np.exp(1j * rng.uniform(-np.pi, np.pi, (f, n_ch)))
    s = np.zeros((f, t), complex)
    s[:, speech_frames] = rng.standard_normal((f, 30)) + 1j * rng.standard_normal((f, 30))
    v = rng.standard_normal((f, t)) + 1j * rng.standard_normal((f, t))
    v[:, slice(noise_until, None) if noise_until else slice(0, 0)] = 0
    white = 0.05 * (rng.standard_normal((n_ch, f, t)) + 1j * rng.standard_normal((n_ch, f, t)))
    speech = d.T[:, :, None] * s[None]
    noise = g.T[:, :, None] * v[None] + white
    return speech + noise, speech[0], noise[0]


def test_a_perfect_mask_gives_the_clean_reference_and_one_channel_is_the_identity():
    rng = np.random.default_rng(0)
    spec, s_ref, n_ref = _two_source_scene(rng, noise_until=30)  # the talker and the noise never overlap
    out = neural.mask_mvdr(spec, neural.ideal_mask(s_ref, n_ref))
    # on the speech frames the output is the talker's image at the reference channel; the directional noise is nulled
    err = np.sum(np.abs(out[:, 30:] - s_ref[:, 30:]) ** 2) / np.sum(np.abs(s_ref[:, 30:]) ** 2)
    assert err < 0.01
    assert np.sum(np.abs(out[:, :30]) ** 2) < 0.05 * np.sum(np.abs(n_ref[:, :30]) ** 2)
    one = neural.mask_mvdr(spec[:1], neural.ideal_mask(s_ref, n_ref))
    np.testing.assert_allclose(one, spec[0], rtol=1e-9, atol=1e-12)


def test_features_and_masks_have_the_documented_shapes_and_ranges():
    rng = np.random.default_rng(1)
    spec, s_ref, n_ref = _two_source_scene(rng, n_ch=3, f=9, t=60)
    for noise_frames in (0, 20):
        feats = neural.mask_features(spec, 2, noise_frames)
        assert feats.shape == (60 * 9, neural.n_features(3, 2, noise_frames > 0)) and feats.dtype == np.float32
        net = neural.MaskNet(3, 16, 1, context=2, n_noise_frames=noise_frames)
        m = neural.predict_mask(net, spec)
        assert m.shape == (9, 60) and np.all((m >= 0) & (m <= 1))
    m = neural.ideal_mask(s_ref, n_ref)
    assert m.shape == s_ref.shape and np.all((m >= 0) & (m <= 1))
    assert np.all(m[:, :30] == 0)  # no talker in the lead


def test_the_noise_distance_is_low_on_the_noise_and_high_where_the_talker_speaks():
    rng = np.random.default_rng(2)
    spec, _s, _n = _two_source_scene(rng)
    q = neural.noise_distance(spec, 30)
    assert np.median(q[:, 30:]) > np.median(q[:, :30]) + 0.5


def test_an_informative_channel_does_not_raise_the_mask_networks_training_loss():
    rng = np.random.default_rng(3)
    scenes = [_two_source_scene(rng, n_ch=2, f=17, t=60) for _ in range(6)]
    losses = {}
    for name in ("real", "random", "speech"):
        specs, masks = [], []
        for spec, s_ref, n_ref in scenes:
            if name == "random":
                extra = rng.standard_normal(s_ref.shape) + 1j * rng.standard_normal(s_ref.shape)
            else:
                extra = s_ref + 0.01 * (rng.standard_normal(s_ref.shape) + 1j * rng.standard_normal(s_ref.shape))
            specs.append(spec if name == "real" else np.concatenate([spec, extra[None]]))
            masks.append(neural.ideal_mask(s_ref, n_ref))
        torch.manual_seed(0)
        net = neural.MaskNet(specs[0].shape[0], 32, 1)
        curve = neural.train_mask(
            net, specs, masks, n_steps=150, batch_size=256, lr=3e-3, generator=torch.Generator().manual_seed(0)
        )
        assert np.mean(curve[-20:]) < np.mean(curve[:5])
        losses[name] = float(np.mean(curve[-20:]))
    assert losses["speech"] <= losses["real"]
    assert losses["speech"] <= losses["random"]


def test_the_neural_beamformer_refuses_bad_input_naming_the_parameter():
    rng = np.random.default_rng(4)
    spec, s_ref, n_ref = _two_source_scene(rng)
    m = neural.ideal_mask(s_ref, n_ref)
    with pytest.raises(ValueError, match="mask"):
        neural.mask_mvdr(spec, m + 1)
    with pytest.raises(ValueError, match="mask"):
        neural.mask_mvdr(spec, m[:, :10])
    with pytest.raises(ValueError, match="ref"):
        neural.mask_mvdr(spec, m, ref=3)
    with pytest.raises(ValueError, match="n_channels"):
        neural.MaskNet(0)
    net = neural.MaskNet(2, 8, 1)
    with pytest.raises(ValueError, match="spec"):
        neural.predict_mask(net, spec)
    with pytest.raises(ValueError, match="spec"):
        neural.mask_features(np.abs(spec))
    with pytest.raises(ValueError, match="specs and masks"):
        neural.train_mask(net, [spec[:2]], [], n_steps=1, batch_size=4, lr=1e-3, generator=torch.Generator())
    with pytest.raises(ValueError, match="each spec"):
        neural.train_mask(net, [spec], [m], n_steps=1, batch_size=4, lr=1e-3, generator=torch.Generator())
    with pytest.raises(ValueError, match="feats"):
        net(torch.zeros(3, 5))


def test_seeds_in_a_worker_process_give_the_serial_numbers_and_resume(tmp_path):
    from explorables.core.checkpoint import Checkpointer

    cfg = VirtualFlowConfig.preset("smoke").replace(
        seeds=(0, 1, 2),
        n_train_steps=8,
        n_reflow_steps=4,
        n_regression_steps=4,
        n_supervised_steps=4,
        n_reflow_pairs=500,
    )
    serial = run(cfg.replace(processes=1))
    parallel = run(cfg.replace(processes=2), checkpoint=Checkpointer(tmp_path))
    assert list(parallel.summary) == list(serial.summary)
    assert_same_tree(without_timings(parallel.summary), without_timings(serial.summary), ordered=True)
    for seed in ("seed_0", "seed_1", "seed_2"):
        for name, losses in serial.curves[seed]["losses"].items():
            assert np.array_equal(losses, parallel.curves[seed]["losses"][name]), (seed, name)
    # every part, the worker's too, is in the checkpoint: a resumed run recomputes none and reads the same numbers
    resumed = run(cfg.replace(processes=2), checkpoint=Checkpointer(tmp_path, resume=True))
    assert resumed.summary["timings"] == parallel.summary["timings"]
    assert_same_tree(without_timings(resumed.summary), without_timings(serial.summary), ordered=True)


def test_a_run_computes_on_one_torch_thread_whatever_the_callers_count(monkeypatch):
    """On the CPU :func:`run` computes every part on one torch thread (the worker process too: it is handed this
    process's count), so its numbers do not depend on the caller's thread count or the host's cores; the caller's
    count is restored afterwards."""
    from explorables.virtualflow import experiment

    cfg = VirtualFlowConfig.preset("smoke").replace(
        seeds=(0,), n_train_steps=6, n_reflow_steps=3, n_regression_steps=3, n_supervised_steps=3, n_reflow_pairs=300
    )
    seen = []
    part = experiment._seed_part

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return part(*args, **kwargs)

    monkeypatch.setattr(experiment, "_seed_part", spy)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        two = run(cfg)
        assert torch.get_num_threads() == 2
        torch.set_num_threads(1)
        one = run(cfg)
    finally:
        torch.set_num_threads(before)
    assert seen == [1, 1]
    assert_same_tree(without_timings(two.summary), without_timings(one.summary), ordered=True)


# --- the scene's talker-to-interferer ratio (`snr_range`): what it means, and bad values (issue 42, scene pass) ---


@pytest.mark.parametrize("draw", range(6))
def test_talker_to_interferer_ratio_at_the_real_mics_is_the_drawn_value(draw):
    """Property over random rooms and levels on both sides of 0 dB: at the real microphones the talker's power on the
    speech part over the interferer's power is exactly ``snr_db`` (so a positive value makes the talker the louder
    source there), whatever the room, the array size and the virtual position."""
    rng = np.random.default_rng(4200 + draw)
    snr_db = float(rng.uniform(-20.0, 40.0))
    scene = random_scene(
        rng, fs=FS, n_mics=int(rng.integers(2, 5)), array_radius=0.05, vm_distance=(0.2, 0.35), rt60_range=(0.15, 0.3)
    )
    lead_s = 0.1
    sim = simulate(scene, 3200, rng, snr_db=snr_db, sensor_snr_db=120.0, lead_s=lead_s, max_order=3, use_espeak=False)
    lead = round(lead_s * FS)
    interferer = sim["real"] - sim["real_speech"]  # sensor noise 120 dB down: the interferer's image alone
    measured = 10 * np.log10(np.mean(sim["real_speech"][:, lead:] ** 2) / np.mean(interferer**2))
    assert measured == pytest.approx(snr_db, abs=1e-4)
    assert (measured > 0) == (snr_db > 0)


@pytest.mark.parametrize("low, high", [(-10.0, 0.0), (-5.0, 5.0), (1.0, 11.0)])
def test_every_room_draws_its_ratio_inside_snr_range(low, high, monkeypatch):
    """Property: every room of every split draws its talker-to-interferer ratio uniformly from the preset's
    ``snr_range`` (read off what :func:`simulate` is handed), so the range is the scene's setting as stated."""
    from explorables.virtualflow import experiment

    seen: list[float] = []
    real_simulate = experiment.simulate

    def spy(*args, **kwargs):
        seen.append(kwargs["snr_db"])
        return real_simulate(*args, **kwargs)

    monkeypatch.setattr(experiment, "simulate", spy)
    cfg = VirtualFlowConfig.preset("smoke").replace(snr_range=(low, high), max_order=2, use_espeak=False)
    for index in range(4):
        build_example(cfg, 0, "test", index)
        experiment.gate_room(cfg, 1, index)
    assert len(seen) == 8 and all(low <= s <= high for s in seen)
    assert len(set(seen)) == 8  # drawn per room, not one level for all


@pytest.mark.parametrize(
    "bad, match",
    [
        ((5.0, -5.0), "strictly increasing"),
        ((0.0, 0.0), "strictly increasing"),
        ((-30.0, 0.0), r"snr_range\[0\].*\[-20, 40\]"),
        ((0.0, 50.0), r"snr_range\[1\].*\[-20, 40\]"),
        ((0.0, float("nan")), r"snr_range\[1\]"),
        ((1.0,), "2 to 2 item"),
        ("loud", "snr_range"),
    ],
)
def test_snr_range_refuses_bad_values_naming_the_setting(bad, match):
    with pytest.raises(ValueError, match=match):
        VirtualFlowConfig.preset("book").replace(snr_range=bad)
    with pytest.raises(ValueError, match="snr_db"):
        simulate(far_field_scene(0.3), 4000, np.random.default_rng(0), snr_db=-40.0, anechoic=True)


def test_the_gate_room_reads_the_test_and_the_gate_rooms(smoke_results):
    """The gate "room" reads each seed's supervised-minus-pseudo-target lead over its test rooms AND its gate rooms
    (a larger room sample than the test rooms alone; ``benchmarks/virtualflow_room_rule8.md``): its values are the
    ``room_sisdr/`` means, and its row says over how many rooms."""
    from explorables.core.tables import apply_gates

    cfg = smoke_results.config
    values = claims.room_values(smoke_results)
    k = cfg.n_test_scenes + cfg.n_gate_scenes
    for s, v in zip(cfg.seeds, values, strict=True):
        p = smoke_results.summary[f"seed_{s}"]
        assert v == pytest.approx(p["room_sisdr/supervised"] - p["room_sisdr/pseudo"])
        assert all(np.isfinite(p[f"room_sisdr/{m}"]) for m in ("supervised", "pseudo"))
    row = next(r for r in apply_gates(claims.claims(smoke_results)) if r.name == "room")
    assert f"on {k} rooms per seed" in row.setting
    assert row.measured.startswith(claims._iv(values))


def test_the_reflow_row_reads_the_test_rooms_and_the_gate_rooms(monkeypatch):
    """The reflow row's numbers (base flow at one and ``n_sample_steps`` steps, reflow at one step) are per-seed means
    over the test rooms and the gate rooms (``benchmarks/virtualflow_reflow_rooms_rule2.md``). Without gate rooms they
    are exactly the test rooms' numbers the rest of the chapter reads (the same solves); with them, the mean of those
    and of each gate room's own scores (one noise draw per gate room, shared by both networks), and no other number
    of the seed moves but the gate rooms' own."""
    from explorables.virtualflow.experiment import (
        evaluate_seed,
        gate_room,
        gate_room_noise,
        reflow_row_scores,
        reflow_row_solves,
    )
    from explorables.virtualflow.flow import sample as solve_ode

    cfg = VirtualFlowConfig.preset("smoke").replace(seeds=(0,), n_test_scenes=2, n_gate_scenes=2, n_fixed_scenes=0)
    cpu = torch.device("cpu")
    models = train_models(cfg, [build_example(cfg, 0, "train", i) for i in range(cfg.n_train_scenes)], 0, cpu)
    test = [build_example(cfg, 0, "test", i) for i in range(cfg.n_test_scenes)]
    alone, _ = evaluate_seed(cfg.replace(n_gate_scenes=0), models, test, cpu, 0)
    both, _ = evaluate_seed(cfg, models, test, cpu, 0)
    k = cfg.n_sample_steps
    assert reflow_row_solves(cfg) == (("flow", 1), ("flow", k), ("reflow", 1))
    assert alone["reflow_row/sisdr/reflow/1"] == alone["steps/reflow/1"] == alone["sisdr/reflow"]
    assert alone[f"reflow_row/sisdr/flow/{k}"] == alone["sisdr/flow"]
    assert alone["reflow_row/sisdr/flow/1"] == alone["steps/flow/1"]
    assert alone["reflow_row/energy/reflow/1"] == alone["steps_energy/reflow/1"] == alone["energy/reflow"]
    assert alone[f"reflow_row/energy/flow/{k}"] == alone["energy/flow"]
    gate_keys = ("reflow_row/", "gate_beam/", "room_sisdr/", "n_gate_rooms", "compute_seconds")
    for key, value in alone.items():
        if not key.startswith(gate_keys):
            assert both[key] == value, key
    # each gate room scored on its own, from its own noise draw (the same for both networks and every call)
    n_t, n_g = cfg.n_test_scenes, cfg.n_gate_scenes
    scores = []
    for j in range(n_g):
        room = gate_room(cfg, 0, j)
        x0 = gate_room_noise(cfg, models, room, 0, j)
        assert torch.equal(x0, gate_room_noise(cfg, models, room, 0, j))
        cond = torch.from_numpy(room.cond)

        def solved(name, steps, room=room, x0=x0, cond=cond):
            frames = solve_ode(getattr(models, name), cond, x0, steps, cfg.solver)
            return bins_to_spec(frames.numpy(), room.scale, room.truth.shape[0])

        scores.append(reflow_row_scores(cfg, room, solved))
    for key, value in both.items():
        if key.startswith("reflow_row/"):
            expected = (n_t * np.asarray(alone[key]) + sum(np.asarray(s[key]) for s in scores)) / (n_t + n_g)
            np.testing.assert_allclose(value, expected, rtol=1e-9, atol=1e-9, err_msg=key)
    # only the first REFLOW_GATE_ROOMS gate rooms count (the page's budget), the rest of the seed unchanged
    from explorables.virtualflow import experiment

    monkeypatch.setattr(experiment, "REFLOW_GATE_ROOMS", 1)
    assert experiment.reflow_gate_rooms(cfg) == 1
    first, _ = evaluate_seed(cfg, models, test, cpu, 0)
    for key, value in first.items():
        if key.startswith("reflow_row/"):
            expected = (n_t * np.asarray(alone[key]) + np.asarray(scores[0][key])) / (n_t + 1)
            np.testing.assert_allclose(value, expected, rtol=1e-9, atol=1e-9, err_msg=key)
        elif key != "compute_seconds":
            assert value == both[key], key


def test_the_reflow_row_reads_its_rooms_and_says_how_many(smoke_results):
    """The reflow row decides on :func:`claims.reflow_row_values` (the ``reflow_row/`` means) and says over how
    many rooms per seed; its sentence reads the same numbers."""
    from explorables.core.tables import apply_gates
    from explorables.virtualflow.experiment import reflow_gate_rooms

    cfg = smoke_results.config
    si, gap, signed = claims.reflow_row_values(smoke_results)
    k = cfg.n_sample_steps
    for s, v, g in zip(cfg.seeds, si, gap, strict=True):
        p = smoke_results.summary[f"seed_{s}"]
        assert v == pytest.approx(p["reflow_row/sisdr/reflow/1"] - p[f"reflow_row/sisdr/flow/{k}"])
        top = cfg.n_bands - 1
        assert g == pytest.approx(abs(p["reflow_row/energy/reflow/1"][top] - p[f"reflow_row/energy/flow/{k}"][top]))
    assert [abs(x) for x in signed] == gap
    row = next(r for r in apply_gates(claims.claims(smoke_results)) if r.claim.startswith("Reflow distillation"))
    n = cfg.n_test_scenes + reflow_gate_rooms(cfg)
    assert f"mean over {n} rooms" in row.setting
    assert claims._iv(si) in row.measured
    if not row.verdict.startswith("untested"):
        assert row.verdict == claims.reflow_verdict(si, gap)
    assert f"mean over {n} rooms" in claims.reflow_sentence(smoke_results)
