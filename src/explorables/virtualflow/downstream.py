"""Scores: SI-SDR, per-band errors of a virtual-mic estimate, MVDR beamforming, STOI.

* SI-SDR, eq. (vf-sisdr), in numpy.
* Per frequency band: the complex error (normalised MSE, dB), the *energy ratio*
  ``10 log10(sum |X_hat|^2 / sum |X|^2)``, which is 0 dB when the band's total energy is right and
  negative when an estimate loses energy there (what regression toward the mean does where the
  phase is unpredictable), and the bin-by-bin *magnitude error*
  ``10 log10(sum (|X_hat| - |X|)^2 / sum |X|^2)``, which ignores the phase but not where the energy sits.
* MVDR in the STFT domain, eq. (vf-mvdr), with the noise covariance from the leading noise-only
  frames (no oracle) and the steering vector either by covariance whitening (blind) or, given the
  talker's clean image at the reference microphone, by each channel's cross-correlation with it
  (the simulator's oracle; the chapter's downstream uses it, the same for every channel set), cross-fitted
  (``steer_split``): each half of the clip is filtered with weights fitted on the other half. Fitted on the
  frames it filters, the steering vector would hold any extra channel's chance correlation with the talker
  there, and a channel of pure noise would seem to help.
* STOI from :mod:`pystoi` (it resamples to 10 kHz itself). PESQ is not installed; we do not report it.
"""

from __future__ import annotations

import numpy as np
from pystoi import stoi as _stoi

from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Float, Int

#: sample rates (Hz) the scores take
FS_RULE = Int(1000, 192_000)


@checked(estimate=Array("n"), reference=Array("n"))
def si_sdr(estimate: np.ndarray, reference: np.ndarray) -> float:
    """Scale-invariant SDR in dB, eq. (vf-sisdr): ``10 log10(|a s|^2 / |a s - x|^2)``, ``a = <x, s> / |s|^2``."""
    est, ref = np.asarray(estimate, float), np.asarray(reference, float)
    if est.shape != ref.shape or est.ndim != 1 or est.size == 0:
        raise ValueError(
            f"estimate and reference must be 1-D arrays of the same length, got {est.shape} and {ref.shape}"
        )
    alpha = est @ ref / max(ref @ ref, 1e-20)
    target = alpha * ref
    return float(10 * np.log10(max(target @ target, 1e-20) / max((target - est) @ (target - est), 1e-20)))


def band_edges(fs: int, n_bands: int) -> np.ndarray:
    """``n_bands + 1`` equal-width band edges from 0 Hz to Nyquist."""
    return np.linspace(0, fs / 2, n_bands + 1)


@checked(estimate=Array("f t"), reference=Array("f t"), fs=FS_RULE, n_bands=Int(1, 1024), first_frame=Int(0))
def band_errors(
    estimate: np.ndarray, reference: np.ndarray, fs: int, n_bands: int, first_frame: int = 0
) -> dict[str, list[float]]:
    """Per band, on STFTs ``(F, T)`` from frame ``first_frame`` on: ``"nmse_db"`` (complex error over the
    reference's energy), ``"energy_ratio_db"`` (the estimate's energy over the reference's) and ``"mag_nmse_db"``
    (the error of the magnitudes, bin by bin, over the reference's energy)."""
    if first_frame >= np.shape(reference)[1]:
        raise ArgumentError(f"first_frame must be below the {np.shape(reference)[1]} frames, got {first_frame}")
    est, ref = np.asarray(estimate)[:, first_frame:], np.asarray(reference)[:, first_frame:]
    freqs = np.linspace(0, fs / 2, ref.shape[0])
    edges = band_edges(fs, n_bands)
    nmse, ratio, mag = [], [], []
    for b in range(n_bands):
        sel = (freqs >= edges[b]) & ((freqs < edges[b + 1]) if b < n_bands - 1 else (freqs <= edges[b + 1]))
        e_ref = np.sum(np.abs(ref[sel]) ** 2) + 1e-20
        nmse.append(float(10 * np.log10(np.sum(np.abs(est[sel] - ref[sel]) ** 2) / e_ref + 1e-20)))
        ratio.append(float(10 * np.log10(np.sum(np.abs(est[sel]) ** 2) / e_ref + 1e-20)))
        mag.append(float(10 * np.log10(np.sum((np.abs(est[sel]) - np.abs(ref[sel])) ** 2) / e_ref + 1e-20)))
    return {"nmse_db": nmse, "energy_ratio_db": ratio, "mag_nmse_db": mag}


@checked(
    spec=Array("c f t"),
    n_noise_frames=Int(1),
    ref=Int(0),
    loading=Float(0.0, 1e3),
    reference=Array("f t"),
    steer_split=Int(2),
    fit=Array("c f t"),
)
def mvdr(
    spec: np.ndarray,
    n_noise_frames: int,
    ref: int = 0,
    loading: float = 1e-3,
    reference: np.ndarray | None = None,
    steer_split: int | None = None,
    fit: np.ndarray | None = None,
) -> np.ndarray:
    """MVDR, eq. (vf-mvdr), on the channels' STFT ``(C, F, T)``; returns the output STFT ``(F, T)``.

    ``Phi_n`` is the covariance of the first ``n_noise_frames`` frames (noise only: the talker starts
    later), ``Phi_x`` that of all frames. The relative transfer function ``d`` (``d_ref = 1``) is the
    principal generalised eigenvector of ``(Phi_x, Phi_n)`` mapped back by ``Phi_n`` (covariance
    whitening), and ``w = Phi_n^-1 d / (d^H Phi_n^-1 d)``: unit gain for the talker's image at the
    reference mic, least noise power. ``loading`` adds that fraction of ``Phi_n``'s mean diagonal (a
    channel that is a linear function of the others would make ``Phi_n`` singular).

    With ``reference`` (the STFT ``(F, T)`` of the talker's clean image at the reference microphone, an
    oracle of the simulation), ``d_c = sum_t X_c S^* / sum_t |S|^2`` instead: each channel's transfer
    function relative to the reference image, whatever the channel is (a virtual channel included), summed over
    all frames, or cross-fitted with ``steer_split``: the frames before ``steer_split`` are filtered with ``d``
    fitted on the frames from ``steer_split + 1`` on, the others with ``d`` fitted on the frames before
    ``steer_split - 1`` (a guard frame each side: frames overlap by half). No output frame is then filtered with
    weights that saw its own samples of the talker's image: on the frames it was fitted to, ``d`` holds each
    channel's chance correlation with the talker there, and a channel of pure noise would seem to help.

    With ``fit`` (an STFT of the shape of ``spec``), the covariances and the steering vector come from ``fit`` and
    the weights are applied to ``spec``: a *fixed layout*, a beamformer calibrated on one set of channels (say with a
    physical microphone in the last slot) that is then fed another set (that slot filled with an estimate, or left
    empty) without refitting. ``fit=None`` (the default) fits on ``spec`` itself, the adaptive beamformer.
    """
    spec = np.asarray(spec)
    c, _f, t = spec.shape
    if not 1 <= n_noise_frames < t:
        raise ValueError(f"n_noise_frames must lie in [1, {t - 1}], got {n_noise_frames}")
    if not 0 <= ref < c:
        raise ValueError(f"ref must lie in [0, {c - 1}], got {ref}")
    if steer_split is not None and not 2 <= steer_split <= t - 3:
        raise ValueError(f"steer_split must lie in [2, {t - 3}], got {steer_split}")
    x = spec.transpose(1, 0, 2)  # (F, C, T): the channels the weights are applied to
    x_fit = x if fit is None else np.asarray(fit).transpose(1, 0, 2)  # the channels the weights are fitted on
    noise = x_fit[:, :, :n_noise_frames]
    phi_n = noise @ noise.conj().transpose(0, 2, 1) / n_noise_frames
    phi_x = x_fit @ x_fit.conj().transpose(0, 2, 1) / t
    diag = np.real(np.trace(phi_n, axis1=1, axis2=2)) / c
    phi_n = phi_n + (loading * diag + 1e-12)[:, None, None] * np.eye(c)

    def weights(d: np.ndarray) -> np.ndarray:
        num = np.linalg.solve(phi_n, d)
        return num / np.real(d.conj().transpose(0, 2, 1) @ num)  # (F, C, 1)

    def steer(frames: slice) -> np.ndarray:
        s = np.asarray(reference)[:, frames]
        return (x_fit[:, :, frames] @ s.conj()[:, :, None]) / (np.sum(np.abs(s) ** 2, 1)[:, None, None] + 1e-20)

    if reference is None:
        chol = np.linalg.cholesky(phi_n)  # Phi_n = L L^H
        inv_l = np.linalg.inv(chol)
        whitened = inv_l @ phi_x @ inv_l.conj().transpose(0, 2, 1)
        _vals, vecs = np.linalg.eigh(whitened)
        d = chol @ vecs[:, :, -1:]  # (F, C, 1): the talker's relative transfer function, up to scale
        d = d / np.where(np.abs(d[:, ref : ref + 1]) > 1e-12, d[:, ref : ref + 1], 1e-12)
    elif steer_split is None:
        d = steer(slice(None))
    else:  # cross-fitted: each half filtered with the steering vector of the other
        k = steer_split
        w_a, w_b = weights(steer(slice(k + 1, None))), weights(steer(slice(0, k - 1)))
        return np.concatenate(
            [
                np.einsum("fc,fct->ft", w_a[:, :, 0].conj(), x[:, :, :k]),
                np.einsum("fc,fct->ft", w_b[:, :, 0].conj(), x[:, :, k:]),
            ],
            1,
        )
    w = weights(d)
    return np.einsum("fc,fct->ft", w[:, :, 0].conj(), x)


@checked(estimate=Array("n"), reference=Array("n"), fs=FS_RULE)
def stoi(estimate: np.ndarray, reference: np.ndarray, fs: int) -> float:
    """Short-time objective intelligibility (pystoi, the classical STOI of Taal et al.), in [0, 1]-ish."""
    return float(_stoi(np.asarray(reference, float), np.asarray(estimate, float), fs, extended=False))


@checked(channel=Array("f t"), real=Array("m f t"), first_frame=Int(0))
def outside_span(channel: np.ndarray, real: np.ndarray, first_frame: int = 0) -> np.ndarray:
    """The part of an extra STFT channel ``(F, T)`` that no fixed combination of the real channels ``(M, F, T)``
    reproduces: per frequency, the residual of its least-squares fit by the real channels over the frames from
    ``first_frame`` on, ``(F, T - first_frame)``. A per-frequency linear beamformer (MVDR included) can already form
    any fixed combination of the real channels, so this residual is all that an extra channel can add to it."""
    chan, real = np.asarray(channel), np.asarray(real)
    if not 0 <= first_frame < chan.shape[1] - real.shape[0]:
        raise ArgumentError(
            f"first_frame must leave more frames than the {real.shape[0]} real channels (below "
            f"{chan.shape[1] - real.shape[0]}), got {first_frame}"
        )
    a = real[:, :, first_frame:].transpose(1, 2, 0)  # (F, T', M)
    v = chan[:, first_frame:, None]  # (F, T', 1)
    coef = np.linalg.pinv(a) @ v  # (F, M, 1): the least-squares fit per frequency
    return (v - a @ coef)[:, :, 0]


@checked(estimate=Array("f t"), truth=Array("f t"), real=Array("m f t"), first_frame=Int(0))
def new_information(
    estimate: np.ndarray, truth: np.ndarray, real: np.ndarray, first_frame: int = 0
) -> dict[str, float]:
    """How much of what the true extra channel adds beyond the real channels an estimate carries.

    ``"outside_db"``: the estimate's energy outside the real channels' span (:func:`outside_span`) over its whole
    energy, dB (a fixed combination of the real channels: very negative; independent noise: about 0 dB).
    ``"captured"``: the share of the truth's outside-span energy that the estimate's outside-span part explains,
    per frequency with the best complex gain, in [0, 1] (the truth itself: 1; a channel with nothing new, or new
    content unrelated to the truth's: near 0, by chance about ``1 / (T' - M)`` for independent noise over ``T'``
    frames). ``"outside_db"`` is floored at -100 dB (a combination of the real channels, up to rounding)."""
    est_out = outside_span(estimate, real, first_frame)
    true_out = outside_span(truth, real, first_frame)
    est_e = np.sum(np.abs(est_out) ** 2, 1)
    explained = np.abs(np.sum(est_out * true_out.conj(), 1)) ** 2 / np.maximum(est_e, 1e-30)
    total = float(np.sum(np.abs(np.asarray(estimate)[:, first_frame:]) ** 2))
    return {
        "outside_db": float(max(10 * np.log10(max(float(est_e.sum()), 1e-30) / max(total, 1e-30)), -100.0)),
        "captured": float(explained.sum() / max(float(np.sum(np.abs(true_out) ** 2)), 1e-30)),
    }
