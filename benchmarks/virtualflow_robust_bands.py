"""Chapter 06 (virtualflow), robust pass diagnosis on tuning draw 106/3: which band does the damage; ensembles; steps.

PYTHONPATH=src python benchmarks/virtualflow_robust_bands.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from virtualflow_robust_diag import (
    VirtualFlowConfig,
    ex_mod,
    fixed_gain,
    predict,
    record_supervised_start,
    retrain,
    rooms,
    train_models,
)

BASE, INNER, EXTRA = 106, 3, 12


def nmse_db(est: np.ndarray, truth: np.ndarray, band: slice) -> float:
    e = est[band, 4:] - truth[band, 4:]
    return float(10 * np.log10(np.sum(np.abs(e) ** 2) / np.sum(np.abs(truth[band, 4:]) ** 2)))


def main() -> None:
    torch.set_num_threads(1)
    cfg = VirtualFlowConfig(seed=BASE)
    train, test = rooms(cfg, INNER, EXTRA)
    kept, orig = record_supervised_start()
    models = train_models(cfg, train, INNER, torch.device("cpu"))
    ex_mod.train_regression = orig
    sup = models.supervised
    n_freq = test[0].truth.shape[0]
    edges = np.linspace(0, n_freq, 9).astype(int)
    b0 = slice(0, edges[1])
    for i in (4, 15, 5, 1):
        ex = test[i]
        est = predict(sup, ex)
        print(
            f"room {i}: gain sup {fixed_gain(cfg, ex, est):+.1f}, truth {fixed_gain(cfg, ex, ex.truth):+.1f}, "
            f"0.55 truth {fixed_gain(cfg, ex, 0.55 * ex.truth):+.1f}"
        )
        rows: list[list[float]] = [[], [], []]
        for b in range(8):
            band = slice(edges[b], edges[b + 1])
            hybrid = ex.truth.copy()
            hybrid[band] = est[band]  # the truth, band b from the estimate
            rows[0].append(fixed_gain(cfg, ex, hybrid))
            hybrid = est.copy()
            hybrid[band] = ex.pseudo[band]  # the estimate, band b from the pseudo-target
            rows[1].append(fixed_gain(cfg, ex, hybrid))
            rows[2].append(nmse_db(est, ex.truth, band))
        for label, row in zip(
            ("truth but band b = sup", "sup but band b = pseudo", "NMSE sup per band dB"), rows, strict=True
        ):
            print(f"  {label:24s}: " + " ".join(f"{v:+.1f}" for v in row))
    print("pseudo band-0 NMSE per room:", " ".join(f"{nmse_db(ex.pseudo, ex.truth, b0):+.1f}" for ex in test))
    nets = [
        retrain(cfg, train, kept["state"], kept["gen"], init_seed=1000 + s, batch_seed=3000 + s)[0] for s in range(6)
    ]
    for k, net in enumerate(nets):
        g = np.array([fixed_gain(cfg, ex, predict(net, ex)) for ex in test])
        n0 = np.array([nmse_db(predict(net, ex), ex.truth, b0) for ex in test])
        print(
            f"net {k}: gain 6 rooms {g[:6].mean():+.2f}, all {g.mean():+.2f}; room 4 {g[4]:+.1f}, its band-0 NMSE "
            f"{n0[4]:+.1f}; corr(gain, band-0 NMSE) over rooms {np.corrcoef(g, n0)[0, 1]:+.2f}"
        )
    for k in (2, 3, 6):
        g = np.array([fixed_gain(cfg, ex, np.mean([predict(n, ex) for n in nets[:k]], 0)) for ex in test])
        print(f"ensemble of {k}: gain 6 rooms {g[:6].mean():+.2f}, all {g.mean():+.2f}, min {g.min():+.1f}")
    for steps in (100, 400, 1000):
        out = []
        for s in range(4):
            net, _ = retrain(
                cfg, train, kept["state"], kept["gen"], steps=steps, init_seed=1000 + s, batch_seed=3000 + s
            )
            g = np.array([fixed_gain(cfg, ex, predict(net, ex)) for ex in test])
            out.append((g[:6].mean(), g.mean(), g[4]))
        print(
            f"{steps} steps, 4 inits (6 rooms; all; room 4): "
            + "  ".join(f"{a:+.2f}; {b:+.2f}; {c:+.1f}" for a, b, c in out)
        )


if __name__ == "__main__":
    main()
