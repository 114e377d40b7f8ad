"""Chapter 06 (virtualflow), issue 42, fifth pass: the abstract's downstream, a small neural (mask-based) beamformer.

Not part of the chapter's run (its positive control "useful" failed on the tuning base seeds; see the page's folded
"How these criteria were set" box). For each base seed and inner seed of the book preset: the chapter's networks are
trained as in :func:`explorables.virtualflow.experiment.train_models`; then, per channel set (the real mics alone;
+ a random channel; + a physical mic at the virtual position; + the supervised VM; + Virtual-Flow at 8 steps;
+ reflow at 1 step), a :class:`~explorables.virtualflow.neural.MaskNet` is trained on ``--beam-rooms`` rooms that no
VM network saw (VM channels by inference there) and scored on the test rooms (and, for the real/random/physical
sets, the 24 gate rooms too). Two outputs: a mask-based MVDR over the whole channel set ("mvdr"), and one over the
real mics alone with the mask still read from every channel ("mask only": the extra channel can help only through
the mask), and a distortionless rank-1 MVDR over the whole set from the same covariances ("rank-1"). SI-SDR on the
speech part against the talker's image at the reference mic.

    PYTHONPATH=src python benchmarks/virtualflow_neural.py --base 100 101 102 --inner 0 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from explorables.virtualflow.data import first_speech_frame
from explorables.virtualflow.experiment import (
    VirtualFlowConfig,
    build_example,
    estimate,
    gate_room,
    random_channel,
    scene_seed,
    speech_sisdr,
    train_models,
)
from explorables.virtualflow.neural import MaskNet, ideal_mask, mask_mvdr, predict_mask, train_mask
from explorables.virtualflow.pseudo import istft, stft

SETS = ("real", "random", "physical", "supervised", "flow", "reflow")
KINDS = ("mvdr", "mask only", "rank-1")


def rank_one_mvdr(spec: np.ndarray, mask: np.ndarray, loading: float = 1e-3) -> np.ndarray:
    """A distortionless MVDR from the same mask-weighted covariances: the talker's relative transfer function by
    covariance whitening (the principal generalised eigenvector of ``(Phi_s, Phi_n)``, ``d_ref = 1``), then
    ``w = Phi_n^-1 d / (d^H Phi_n^-1 d)`` (no trace normalisation, unlike the Souden form)."""
    x = spec.transpose(1, 0, 2)
    c = spec.shape[0]

    def cov(w: np.ndarray) -> np.ndarray:
        return (x * w[:, None, :]) @ x.conj().transpose(0, 2, 1) / np.maximum(w.sum(1), 1e-12)[:, None, None]

    phi_s, phi_n = cov(mask), cov(1 - mask)
    diag = np.real(np.trace(phi_n, axis1=1, axis2=2)) / c
    phi_n = phi_n + (loading * diag + 1e-12)[:, None, None] * np.eye(c)
    chol = np.linalg.cholesky(phi_n)
    inv_l = np.linalg.inv(chol)
    _vals, vecs = np.linalg.eigh(inv_l @ phi_s @ inv_l.conj().transpose(0, 2, 1))
    d = chol @ vecs[:, :, -1:]
    d = d / np.where(np.abs(d[:, :1]) > 1e-12, d[:, :1], 1e-12)
    num = np.linalg.solve(phi_n, d)
    w = num / np.real(d.conj().transpose(0, 2, 1) @ num)
    return np.einsum("fc,fct->ft", w[:, :, 0].conj(), x)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=int, nargs="+", default=[100, 101, 102])
    ap.add_argument("--inner", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--beam-rooms", type=int, default=8)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--context", type=int, default=2)
    ap.add_argument("--loading", type=float, default=1e-3, help="diagonal loading of the MVDRs' noise covariance")
    ap.add_argument("--noise-feature", type=int, default=1, help="1: the noise-distance feature (the lead's frames)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    dev = torch.device("cpu")
    for base in args.base:
        cfg = VirtualFlowConfig(seed=base)
        hop = cfg.nfft // 2
        start = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft) * hop
        n_noise = int((cfg.lead_s * cfg.fs - cfg.nfft) // hop) if args.noise_feature else 0
        for seed in args.inner:
            t0 = time.perf_counter()
            train = [build_example(cfg, seed, "train", i) for i in range(cfg.n_train_scenes)]
            test = [build_example(cfg, seed, "test", i) for i in range(cfg.n_test_scenes)]
            # the beamformer's own training rooms: test-split rooms past the test rooms (no VM network sees them)
            beam = [build_example(cfg, seed, "test", 100 + i) for i in range(args.beam_rooms)]
            gates = [gate_room(cfg, seed, j) for j in range(cfg.n_gate_scenes)]
            models = train_models(cfg, train, seed, dev)

            def extra(ex, b, key, models=models, cfg=cfg, seed=seed):
                if b == "real":
                    return None
                if b == "physical":
                    return stft(ex.vm_recording, cfg.nfft, cfg.nfft // 2)
                if b == "random":
                    return random_channel(ex, np.random.default_rng(scene_seed(cfg, seed, "random", key)))
                x0 = torch.randn(ex.cond.shape[0], models.flow.d_frame, generator=torch.Generator().manual_seed(key))
                steps = 1 if b == "reflow" else cfg.n_sample_steps
                return estimate(models, ex, b, n_steps=steps, solver=cfg.solver, x0=x0, device=dev)

            def chans(ex, e):
                return ex.spec_real if e is None else np.concatenate([ex.spec_real, e[None]], 0)

            def target(ex, cfg=cfg):
                s = stft(ex.real_speech[0], cfg.nfft, cfg.nfft // 2)
                return ideal_mask(s, ex.spec_real[0] - s)

            scores: dict[tuple[str, str], list[float]] = {}
            losses = {}
            for b in SETS:
                torch.manual_seed(seed)
                specs = [chans(ex, extra(ex, b, 2000 + i)) for i, ex in enumerate(beam)]
                net = MaskNet(specs[0].shape[0], 64, 2, context=args.context, n_noise_frames=n_noise)
                curve = train_mask(
                    net,
                    specs,
                    [target(ex) for ex in beam],
                    n_steps=args.steps,
                    batch_size=1024,
                    lr=3e-3,
                    generator=torch.Generator().manual_seed(seed),
                )
                losses[b] = float(np.mean(curve[-30:]))
                rooms = [(ex, extra(ex, b, i)) for i, ex in enumerate(test)]
                if b in ("real", "random", "physical"):
                    rooms += [(r, extra(r, b, cfg.n_test_scenes + j)) for j, r in enumerate(gates)]
                for ex, e in rooms:
                    x = chans(ex, e)
                    m = predict_mask(net, x)
                    n = ex.real.shape[1]
                    outs = (
                        mask_mvdr(x, m, loading=args.loading),
                        mask_mvdr(x[: cfg.n_mics], m, loading=args.loading),
                        rank_one_mvdr(x, m, args.loading),
                    )
                    for kind, out in zip(KINDS, outs, strict=True):
                        wave = istft(out, cfg.nfft, hop, n)
                        scores.setdefault((b, kind), []).append(speech_sisdr(wave, ex.real_speech[0], start))
            k = cfg.n_test_scenes
            print(
                f"base {base} seed {seed} ({time.perf_counter() - t0:.0f} s); mask loss "
                + " ".join(f"{b} {losses[b]:.4f}" for b in SETS)
            )
            for kind in KINDS:
                test_mean = {b: float(np.mean(scores[b, kind][:k])) for b in SETS}
                all_mean = {b: float(np.mean(scores[b, kind])) for b in ("real", "random", "physical")}
                print(
                    f"  {kind:9s} test rooms: "
                    + " ".join(f"{b} {v:+.2f}" for b, v in test_mean.items())
                    + f" | physical - random on {len(scores['real', kind])} rooms "
                    f"{all_mean['physical'] - all_mean['random']:+.2f}, supervised - random (test) "
                    f"{test_mean['supervised'] - test_mean['random']:+.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
