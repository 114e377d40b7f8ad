"""The downstream of the abstract: a small *neural* (mask-based) beamformer over any channel set.

A per-bin network (:class:`MaskNet`) reads, at every time-frequency bin and its neighbouring frames, every given
channel's log power (relative to the reference channel's mean) and each channel's phase difference to the reference
channel (cos, sin), plus the bin's frequency, and predicts the talker's mask at the reference channel (the ideal ratio
mask ``|S|^2 / (|S|^2 + |N|^2)`` is its target, :func:`ideal_mask`). The mask weights the speech and noise
covariances of a Souden MVDR (:func:`mask_mvdr`), ``w = Phi_n^-1 Phi_s u / tr(Phi_n^-1 Phi_s)``, over the same
channel set. Unlike the oracle-steered linear MVDR, the mask is a *nonlinear* function of every channel: an extra
channel can help through the mask even where it adds nothing outside the real channels' linear span.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Float, Int
from .flow import FrameMLP

#: frames each side of a bin that the mask network reads
CONTEXT = 1


def noise_distance(spec: np.ndarray, n_noise_frames: int, loading: float = 1e-2) -> np.ndarray:
    """Per bin, ``log10(x^H Phi_n^-1 x / C) / 2`` with ``Phi_n`` the covariance of the first ``n_noise_frames``
    (noise-only) frames: how unlike the noise the bin's channel vector is, ``(F, T)``."""
    c = spec.shape[0]
    x = spec.transpose(1, 0, 2)  # (F, C, T)
    noise = x[:, :, :n_noise_frames]
    phi_n = noise @ noise.conj().transpose(0, 2, 1) / n_noise_frames
    diag = np.real(np.trace(phi_n, axis1=1, axis2=2)) / c
    phi_n = phi_n + (loading * diag + 1e-12)[:, None, None] * np.eye(c)
    q = np.real(np.sum(x.conj() * np.linalg.solve(phi_n, x), 1)) / c
    return np.log10(np.maximum(q, 1e-10)) / 2


@checked(spec=Array("c f t"), context=Int(0, 16))
def mask_features(spec: np.ndarray, context: int = CONTEXT, n_noise_frames: int = 0) -> np.ndarray:
    """Per-bin features of a channel set's STFT ``(C, F, T)``: ``(T * F, (3C - 2) * (2 context + 1) + 1)`` float32,
    frame by frame. Per channel: log power in dB / 20 relative to the reference channel's (channel 0) mean log power;
    per channel after the first: cos and sin of its phase difference to channel 0; then the frame's neighbours
    (edge frames repeated), and the bin's frequency in [0, 1]."""
    spec = np.asarray(spec)
    if not np.iscomplexobj(spec):
        raise ArgumentError(f"spec must be a complex STFT (C, F, T), got {spec.dtype} {spec.shape}")
    c, f, t = spec.shape
    logp = 10 * np.log10(np.abs(spec) ** 2 + 1e-10)
    logp = (logp - logp[0].mean()) / 20
    feats = [logp]
    if c > 1:
        cross = spec[1:] * spec[:1].conj()
        phase = cross / np.maximum(np.abs(cross), 1e-12)
        feats += [phase.real, phase.imag]
    if n_noise_frames:
        feats.append(noise_distance(spec, n_noise_frames)[None])
    h = np.concatenate(feats, 0)  # (3C - 2, F, T)
    padded = np.pad(h, ((0, 0), (0, 0), (context, context)), mode="edge")
    stacked = np.concatenate([padded[:, :, k : k + t] for k in range(2 * context + 1)], 0)
    freq = np.broadcast_to(np.linspace(0, 1, f)[None, :, None], (1, f, t))
    out = np.concatenate([stacked, freq], 0)  # (D, F, T)
    return np.ascontiguousarray(out.transpose(2, 1, 0).reshape(t * f, -1)).astype(np.float32)


def n_features(n_channels: int, context: int = CONTEXT, noise: bool = False) -> int:
    """Width of :func:`mask_features` for ``n_channels`` channels."""
    return (3 * n_channels - 2 + noise) * (2 * context + 1) + 1


@checked(speech=Array("f t"), noise=Array("f t"))
def ideal_mask(speech: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """The ideal ratio mask ``|S|^2 / (|S|^2 + |N|^2)`` in [0, 1], ``(F, T)``: the mask network's target."""
    ps, pn = np.abs(speech) ** 2, np.abs(noise) ** 2
    return ps / np.maximum(ps + pn, 1e-20)


class MaskNet(nn.Module):
    """Per-bin mask estimator for ``n_channels`` channels: a residual MLP (:class:`~.flow.FrameMLP`) and a sigmoid."""

    def __init__(
        self, n_channels: int, d_hidden: int = 64, n_layers: int = 2, context: int = CONTEXT, n_noise_frames: int = 0
    ) -> None:
        super().__init__()
        if n_channels < 1:
            raise ArgumentError(f"n_channels must be >= 1, got {n_channels}")
        self.n_channels, self.context, self.n_noise_frames = n_channels, context, n_noise_frames
        self.d_in = n_features(n_channels, context, n_noise_frames > 0)
        self.mlp = FrameMLP(self.d_in, 1, d_hidden, n_layers)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        if feats.ndim != 2 or feats.shape[1] != self.d_in:
            raise ArgumentError(
                f"feats must have shape (B, {self.d_in}) for {self.n_channels} channels, got {tuple(feats.shape)}"
            )
        return torch.sigmoid(self.mlp(feats))[:, 0]


@checked(n_steps=Int(1), batch_size=Int(1, 10**7), lr=Float(0.0, 1.0, low_inclusive=False))
def train_mask(
    net: MaskNet,
    specs: list[np.ndarray],
    masks: list[np.ndarray],
    *,
    n_steps: int,
    batch_size: int,
    lr: float,
    generator: torch.Generator,
) -> list[float]:
    """Adam (cosine decay) on the mean squared mask error over the bins of the training channel sets ``specs``
    (each ``(C, F, T)``) against their target masks ``masks`` (each ``(F, T)``); returns the minibatch losses."""
    if len(specs) != len(masks) or not specs:
        raise ArgumentError(f"specs and masks must be non-empty lists of equal length, got {len(specs)}, {len(masks)}")
    for s, m in zip(specs, masks, strict=True):
        if np.shape(s)[1:] != np.shape(m) or np.shape(s)[0] != net.n_channels:
            raise ArgumentError(
                f"each spec must be ({net.n_channels}, F, T) with its mask (F, T), got {np.shape(s)} and {np.shape(m)}"
            )
    dev = next(net.parameters()).device
    x = torch.from_numpy(np.concatenate([mask_features(s, net.context, net.n_noise_frames) for s in specs])).to(dev)
    y = torch.from_numpy(np.concatenate([np.asarray(m).T.reshape(-1) for m in masks]).astype(np.float32)).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, n_steps)
    losses = []
    for _ in range(n_steps):
        idx = torch.randint(0, x.shape[0], (batch_size,), generator=generator).to(dev)
        loss = (net(x[idx]) - y[idx]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    return losses


@checked(spec=Array("c f t"))
@torch.no_grad()
def predict_mask(net: MaskNet, spec: np.ndarray) -> np.ndarray:
    """The network's mask ``(F, T)`` for one channel set's STFT ``(C, F, T)``."""
    spec = np.asarray(spec)
    if spec.shape[0] != net.n_channels:
        raise ArgumentError(f"spec must hold the network's {net.n_channels} channels, got {spec.shape[0]}")
    dev = next(net.parameters()).device
    m = net(torch.from_numpy(mask_features(spec, net.context, net.n_noise_frames)).to(dev)).cpu().numpy()
    return m.reshape(spec.shape[2], spec.shape[1]).T


@checked(spec=Array("c f t"), mask=Array("f t"), ref=Int(0), loading=Float(0.0, 1e3))
def mask_mvdr(spec: np.ndarray, mask: np.ndarray, ref: int = 0, loading: float = 1e-3) -> np.ndarray:
    """Mask-based (Souden) MVDR on a channel set's STFT ``(C, F, T)``; returns the output STFT ``(F, T)``.

    ``Phi_s = sum_t m X X^H / sum_t m``, ``Phi_n = sum_t (1 - m) X X^H / sum_t (1 - m)`` (``loading``: that fraction
    of ``Phi_n``'s mean diagonal added), ``w = Phi_n^-1 Phi_s u_ref / tr(Phi_n^-1 Phi_s)``. With one channel the
    weight is 1 (the reference channel unchanged)."""
    spec, mask = np.asarray(spec), np.asarray(mask, float)
    c = spec.shape[0]
    if np.any(mask < 0) or np.any(mask > 1):
        raise ArgumentError("mask must hold values in [0, 1]")
    if not 0 <= ref < c:
        raise ArgumentError(f"ref must lie in [0, {c - 1}], got {ref}")
    x = spec.transpose(1, 0, 2)  # (F, C, T)

    def cov(w: np.ndarray) -> np.ndarray:
        return (x * w[:, None, :]) @ x.conj().transpose(0, 2, 1) / np.maximum(w.sum(1), 1e-12)[:, None, None]

    phi_s, phi_n = cov(mask), cov(1 - mask)
    diag = np.real(np.trace(phi_n, axis1=1, axis2=2)) / c
    phi_n = phi_n + (loading * diag + 1e-12)[:, None, None] * np.eye(c)
    num = np.linalg.solve(phi_n, phi_s)  # (F, C, C)
    tr = np.trace(num, axis1=1, axis2=2)
    w = num[:, :, ref] / np.where(np.abs(tr) > 1e-20, tr, 1e-20)[:, None]  # (F, C)
    return np.einsum("fc,fct->ft", w.conj(), x)
