"""Chapter 06 (virtualflow), issue 42, seventeenth pass: why a supervised network's per-seed mean lands low (diagnosis).

The gate "room" reads, per inner seed, the mean over the 12 test rooms of SI-SDR(supervised) - SI-SDR(pseudo-target).
This trains the supervised network alone (initial weights as in ``train_models``; batch generator fresh from the same
seed, so not bit-identical to the package) with the package's loop (Adam, lr 2e-3, cosine decay, clip 1, batch 512,
800 steps, 32 training rooms), and at snapshots reads: full-batch MSE on the training bins and on the test bins,
the per-room room value on the 12 test rooms and on 8 training rooms (train vs test SI-SDR), and the step losses.
Tuning base seeds only (>= 145 in this pass).

    PYTHONPATH=src python benchmarks/virtualflow_reference_diag.py --base 145 146 --out /tmp/x.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from torch import nn

from explorables.virtualflow.data import bins_to_spec, first_speech_frame, supervised_data
from explorables.virtualflow.downstream import si_sdr
from explorables.virtualflow.experiment import VirtualFlowConfig, build_example
from explorables.virtualflow.flow import Regressor, VelocityNet
from explorables.virtualflow.pseudo import istft

SNAPS = (100, 200, 400, 600, 800)


def room_diffs(cfg: VirtualFlowConfig, net: Regressor, rooms: list) -> list[float]:
    hop = cfg.nfft // 2
    first = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    out = []
    for ex in rooms:
        n = ex.real.shape[1]
        with torch.no_grad():
            spec = bins_to_spec(net(torch.from_numpy(ex.cond)).numpy(), ex.scale, ex.truth.shape[0])
        sup = si_sdr(istft(spec, cfg.nfft, hop, n)[first * hop :], ex.truth_wave[first * hop :])
        pse = si_sdr(istft(ex.pseudo, cfg.nfft, hop, n)[first * hop :], ex.truth_wave[first * hop :])
        out.append(float(sup - pse))
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--base", type=int, nargs="+", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if min(a.base) < 145:
        raise SystemExit("this pass's tuning base seeds only (>= 145)")
    torch.set_num_threads(1)
    res: dict = {}
    for b in a.base:
        cfg = VirtualFlowConfig(seed=b)
        for s in cfg.seeds:
            t0 = time.perf_counter()
            train = [build_example(cfg, s, "train", i) for i in range(cfg.n_train_scenes)]
            test = [build_example(cfg, s, "test", j) for j in range(cfg.n_test_scenes)]
            torch.manual_seed(cfg.seed * 7919 + s)
            gen = torch.Generator().manual_seed(cfg.seed * 7919 + s)
            x, c = supervised_data(train, "cpu")
            xt, ct = supervised_data(test, "cpu")
            VelocityNet(cfg.n_mics, c.shape[1], cfg.d_hidden, cfg.n_layers)
            Regressor(cfg.n_mics, c.shape[1], cfg.d_hidden, cfg.n_layers)
            net = Regressor(cfg.n_mics, c.shape[1], cfg.d_hidden, cfg.n_layers)
            opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.n_supervised_steps)
            losses, gnorms, rec = [], [], {}
            for step in range(cfg.n_supervised_steps):
                idx = torch.randint(0, x.shape[0], (cfg.batch_size,), generator=gen)
                loss = (net(c[idx]) - x[idx]).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                gnorms.append(float(nn.utils.clip_grad_norm_(net.parameters(), 1.0)))
                opt.step()
                sched.step()
                losses.append(float(loss))
                if step + 1 in SNAPS:
                    with torch.no_grad():
                        tr_mse = float((net(c) - x).pow(2).mean())
                        te_mse = float((net(ct) - xt).pow(2).mean())
                    rec[step + 1] = {
                        "train_mse": tr_mse,
                        "test_mse": te_mse,
                        "test_rooms": room_diffs(cfg, net, test),
                        "train_rooms": room_diffs(cfg, net, train[:8]),
                    }
            res[f"{b}/{s}"] = {"losses": losses, "gnorms": gnorms, "snaps": rec}
            last = rec[SNAPS[-1]]
            print(
                f"{b}/{s} ({time.perf_counter() - t0:.0f} s) "
                + " ".join(
                    f"@{k}: te {np.mean(r['test_rooms']):+.2f} tr {np.mean(r['train_rooms']):+.2f} "
                    f"mse {r['train_mse']:.3f}/{r['test_mse']:.3f}"
                    for k, r in rec.items()
                    if k in (200, 400, 800)
                )
                + f" | clip frac {np.mean(np.array(gnorms) > 1):.2f} loss last100 sd {np.std(losses[-100:]):.3f}"
                f" min room {min(last['test_rooms']):+.1f}",
                flush=True,
            )
            json.dump(res, open(a.out, "w"))


if __name__ == "__main__":
    main()
