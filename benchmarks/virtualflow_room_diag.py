"""Chapter 06 (virtualflow), issue 42, fourteenth pass: what the gate "room" reads and why it fails (diagnosis).

The gate "room" reads, per inner seed, the mean over the test rooms of SI-SDR(supervised) - SI-SDR(pseudo-target)
against the true virtual signal, and asks the 95% t-interval over the 5 inner seeds to lie above 1 dB. Only the
supervised network and the pseudo-target enter it, so this script trains the supervised network alone (its initial
weights as in ``train_models``: the same torch seed and creation order; its batch generator fresh from the same seed,
so not bit-identical to the package's, which draws the flows' batches first) and reads it on up to ``--rooms`` test
rooms (the first 6 are the package's test rooms), for a grid of (training rooms, supervised Adam steps).
Tuning base seeds only (>= 100). Beside it (not deciding), the gate "useful"'s quantity per room: fixed-layout MVDR with
the supervised channel in the physical mic's slot minus the slot left empty. The fourteenth pass's rule
(benchmarks/virtualflow_room_rule.md) reads this script's output on bases 131-133 with the default grid.

    PYTHONPATH=src python benchmarks/virtualflow_room_diag.py --base 130 --out /tmp/x.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from explorables.virtualflow.data import bins_to_spec, first_speech_frame, supervised_data
from explorables.virtualflow.downstream import si_sdr
from explorables.virtualflow.experiment import VirtualFlowConfig, beamform, build_example, speech_sisdr
from explorables.virtualflow.flow import Regressor, VelocityNet, train_regression
from explorables.virtualflow.pseudo import istft, stft


def room_values(cfg: VirtualFlowConfig, net: Regressor, rooms: list) -> tuple[list[float], list[float]]:
    """Per room: SI-SDR of the supervised estimate minus that of the pseudo-target (speech part, as evaluate_seed),
    and the fixed-layout MVDR's SI-SDR with the supervised channel in the slot minus the empty slot."""
    hop = cfg.nfft // 2
    first = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    out, useful = [], []
    for ex in rooms:
        n = ex.real.shape[1]
        with torch.no_grad():
            spec = bins_to_spec(net(torch.from_numpy(ex.cond)).numpy(), ex.scale, ex.truth.shape[0])
        sup = si_sdr(istft(spec, cfg.nfft, hop, n)[first * hop :], ex.truth_wave[first * hop :])
        pse = si_sdr(istft(ex.pseudo, cfg.nfft, hop, n)[first * hop :], ex.truth_wave[first * hop :])
        out.append(float(sup - pse))
        physical = stft(ex.vm_recording, cfg.nfft, hop)
        ref, start = ex.real_speech[0], first * hop
        full = speech_sisdr(beamform(ex, spec, cfg, fit_extra=physical), ref, start)
        empty = speech_sisdr(beamform(ex, np.zeros_like(physical), cfg, fit_extra=physical), ref, start)
        useful.append(float(full - empty))
    return out, useful


def supervised(cfg: VirtualFlowConfig, train: list, seed: int, n_steps: int, d_hidden: int) -> Regressor:
    torch.manual_seed(cfg.seed * 7919 + seed)
    gen = torch.Generator().manual_seed(cfg.seed * 7919 + seed)
    x, c = supervised_data(train, "cpu")
    VelocityNet(cfg.n_mics, c.shape[1], d_hidden, cfg.n_layers)  # the package creates these first (same init)
    Regressor(cfg.n_mics, c.shape[1], d_hidden, cfg.n_layers)
    net = Regressor(cfg.n_mics, c.shape[1], d_hidden, cfg.n_layers)
    train_regression(net, x, c, generator=gen, n_steps=n_steps, batch_size=cfg.batch_size, lr=cfg.lr)
    return net


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--base", type=int, nargs="+", required=True)
    p.add_argument("--rooms", type=int, default=24)
    p.add_argument("--grid", default="8:200:64,16:800:64,32:800:64", help="train_rooms:steps:width,...")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if min(a.base) < 100:
        raise SystemExit("tuning base seeds only (>= 100)")
    torch.set_num_threads(a.threads)
    grid = [tuple(int(v) for v in g.split(":")) for g in a.grid.split(",")]
    res: dict = {}
    for b in a.base:
        cfg = VirtualFlowConfig(seed=b)
        for s in cfg.seeds:
            t0 = time.perf_counter()
            n_train = max(g[0] for g in grid)
            train = [build_example(cfg, s, "train", i) for i in range(n_train)]
            test = [build_example(cfg, s, "test", j) for j in range(a.rooms)]
            for tr, steps, width in grid:
                net = supervised(cfg, train[:tr], s, steps, width)
                res[f"{b}/{s}/{tr}:{steps}:{width}"], res[f"useful/{b}/{s}/{tr}:{steps}:{width}"] = room_values(
                    cfg, net, test
                )
            dt = time.perf_counter() - t0
            line = " ".join(
                f"{tr}:{st}:{w} {np.mean(res[f'{b}/{s}/{tr}:{st}:{w}'][:6]):+.2f}"
                f"/{np.mean(res[f'{b}/{s}/{tr}:{st}:{w}']):+.2f}"
                for tr, st, w in grid
            )
            print(f"{b}/{s} ({dt:.0f} s): {line}", flush=True)
        json.dump(res, open(a.out, "w"))


if __name__ == "__main__":
    main()
