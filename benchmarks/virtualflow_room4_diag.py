"""Chapter 06 (virtualflow), issue 42, twenty-first pass: is the supervised reference under-trained, under-sized, or is
the pseudo-target near the ceiling of this geometry? (diagnosis for the gate "room", tuning bases >= 167 only)

Trains the supervised network alone (initial weights and loop as ``virtualflow_reference_diag.py``: package loop,
fresh batch generator, not bit-identical to the package) to 1600 steps (cosine decay over 1600: the 800-step snapshot is
NOT the package's schedule; a separate 800-step run with the package's schedule is the reference). Reads per test room:
distance virtual spot -> nearest real mic, SI-SDR of pseudo-target, supervised, nearest-mic copy against the truth;
and the room value on 8 training rooms (train vs held-out).

    PYTHONPATH=src nice -n 5 python benchmarks/virtualflow_room4_diag.py --base 167 --seeds 0 1 --out /tmp/d.json
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
from explorables.virtualflow.experiment import VirtualFlowConfig, build_example, mic_distances, nearest_mic
from explorables.virtualflow.flow import Regressor
from explorables.virtualflow.pseudo import istft


def room_rows(cfg: VirtualFlowConfig, net: Regressor, rooms: list) -> list[dict]:
    hop = cfg.nfft // 2
    first = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    out = []
    for ex in rooms:
        n = ex.real.shape[1]
        ref = ex.truth_wave[first * hop :]
        with torch.no_grad():
            spec = bins_to_spec(net(torch.from_numpy(ex.cond)).numpy(), ex.scale, ex.truth.shape[0])
        sup = float(si_sdr(istft(spec, cfg.nfft, hop, n)[first * hop :], ref))
        pse = float(si_sdr(istft(ex.pseudo, cfg.nfft, hop, n)[first * hop :], ref))
        near = float(si_sdr(ex.real[nearest_mic(ex)][first * hop :], ref))
        out.append({"d": mic_distances(ex)["real"], "sup": sup, "pse": pse, "near": near, "room": sup - pse})
    return out


def train(cfg, x, c, steps, gen, snaps, on_snap):
    torch.manual_seed(cfg.seed * 7919 + 0)
    net = Regressor(cfg.n_mics, c.shape[1], cfg.d_hidden, cfg.n_layers)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    losses = []
    for step in range(steps):
        idx = torch.randint(0, x.shape[0], (cfg.batch_size,), generator=gen)
        loss = (net(c[idx]) - x[idx]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if step + 1 in snaps:
            on_snap(step + 1, net)
    return net, losses


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--base", type=int, required=True)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--out", required=True)
    p.add_argument("--n-train", type=int, default=32)
    p.add_argument("--vm", type=float, nargs=2, default=[0.2, 0.35])
    a = p.parse_args()
    if a.base < 167:
        raise SystemExit("this pass's tuning base seeds only (>= 167)")
    torch.set_num_threads(1)
    res: dict = {}
    cfg = VirtualFlowConfig(seed=a.base, n_train_scenes=a.n_train, vm_distance=tuple(a.vm))
    for s in a.seeds:
        t0 = time.perf_counter()
        train_rooms = [build_example(cfg, s, "train", i) for i in range(cfg.n_train_scenes)]
        test = [build_example(cfg, s, "test", j) for j in range(cfg.n_test_scenes)]
        x, c = supervised_data(train_rooms, "cpu")
        xt, ct = supervised_data(test, "cpu")
        rec: dict = {}

        def snap(k, net, tag, rec=rec, c=c, x=x, ct=ct, xt=xt, test=test, train_rooms=train_rooms):
            with torch.no_grad():
                rec[f"{tag}@{k}"] = {
                    "train_mse": float((net(c) - x).pow(2).mean()),
                    "test_mse": float((net(ct) - xt).pow(2).mean()),
                    "test": room_rows(cfg, net, test),
                    "train8": room_rows(cfg, net, train_rooms[:8]),
                }

        _, l800 = train(
            cfg,
            x,
            c,
            800,
            torch.Generator().manual_seed(cfg.seed * 7919 + s),
            {200, 800},
            lambda k, n: snap(k, n, "sched800"),
        )
        _, l1600 = train(
            cfg,
            x,
            c,
            1600,
            torch.Generator().manual_seed(cfg.seed * 7919 + s),
            {1600},
            lambda k, n: snap(k, n, "sched1600"),
        )
        res[f"{a.base}/{s}"] = {
            "snaps": rec,
            "loss800": [float(np.mean(l800[i : i + 100])) for i in range(0, 800, 100)],
            "loss1600": [float(np.mean(l1600[i : i + 200])) for i in range(0, 1600, 200)],
        }
        head = f"{a.base}/{s} ({time.perf_counter() - t0:.0f} s)"
        print(f"{head} loss800/100 {np.round(res[f'{a.base}/{s}']['loss800'], 3)}")
        for k, r in rec.items():
            t, tr = r["test"], r["train8"]
            print(
                f"  {k}: test room {np.mean([q['room'] for q in t]):+.2f}"
                f" train8 room {np.mean([q['room'] for q in tr]):+.2f}"
                f" mse tr/te {r['train_mse']:.3f}/{r['test_mse']:.3f}"
                f" | test sup {np.median([q['sup'] for q in t]):+.1f} pse {np.median([q['pse'] for q in t]):+.1f}"
                f" near {np.median([q['near'] for q in t]):+.1f} (medians)",
                flush=True,
            )
        t = rec["sched800@800"]["test"]
        d = np.array([q["d"] for q in t])
        rm = np.array([q["room"] for q in t])
        ps = np.array([q["pse"] for q in t])
        print(
            f"  d range {d.min():.2f}-{d.max():.2f} m; corr(d, room) {np.corrcoef(d, rm)[0, 1]:+.2f};"
            f" corr(pse, room) {np.corrcoef(ps, rm)[0, 1]:+.2f}; rooms: "
            + " ".join(f"[{q['d']:.2f} {q['pse']:+.1f}/{q['sup']:+.1f}]" for q in t),
            flush=True,
        )
        json.dump(res, open(a.out, "w"))


if __name__ == "__main__":
    main()
