"""Chapter 06 (virtualflow), issue 42: why does a supervised virtual-mic network leave the slot worse than empty?

Diagnosis on TUNING draws only (base seeds >= 100). For one draw (base, inner seed), book preset: the package's
``train_models`` (the supervised network's initial weights and its batch generator's state are recorded as it
starts training), then per test room and per extra "fixed" room: the fixed-layout gain (supervised - empty, dB), the
network's held-out loss on that room (MSE of the normalised bins, the training loss's quantity), the same loss for
the head at zero correction (the real mics' pseudo-target: the network's starting point) and for zeros. Then the
same supervised network retrained from other initial weights / batch orders, and with other training settings, on
the same rooms, to separate a bad draw of the weights from a bad draw of the training rooms.

    PYTHONPATH=src python benchmarks/virtualflow_robust_diag.py --base 106 --inner 3 --extra 12 --variants

(Run before this pass added ``n_supervised_steps``, when the package trained the supervised network for 100 steps;
its "100 steps" lines are then the package.)
"""

from __future__ import annotations

import argparse
import copy
import os
import pickle
from pathlib import Path

import numpy as np
import torch

from explorables.virtualflow import experiment as ex_mod
from explorables.virtualflow.data import first_speech_frame, spec_to_bins, supervised_data
from explorables.virtualflow.experiment import VirtualFlowConfig, beamform, build_example, speech_sisdr, train_models
from explorables.virtualflow.flow import Regressor, train_regression
from explorables.virtualflow.pseudo import stft

CACHE = Path("/tmp/vf12")


def rooms(cfg: VirtualFlowConfig, seed: int, extra: int):
    path = CACHE / f"rooms_{cfg.seed}_{seed}_{extra}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    train = [build_example(cfg, seed, "train", i) for i in range(cfg.n_train_scenes)]
    test = [build_example(cfg, seed, "test", i) for i in range(cfg.n_test_scenes)]
    test += [build_example(cfg, seed, "fixed", j) for j in range(extra)]
    path.write_bytes(pickle.dumps((train, test)))
    return train, test


def record_supervised_start():
    """Wrap the package's train_regression so the supervised network's start (weights, generator) is kept."""
    kept = {}
    orig = ex_mod.train_regression

    def wrapped(net, target, cond, *, generator, name="", **kw):
        if name.endswith("/supervised"):
            kept["state"] = copy.deepcopy(net.state_dict())
            kept["gen"] = generator.get_state()
        return orig(net, target, cond, generator=generator, name=name, **kw)

    ex_mod.train_regression = wrapped
    return kept, orig


def fixed_gain(cfg, ex, spec) -> float:
    hop = cfg.nfft // 2
    start = first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft) * hop
    physical = stft(ex.vm_recording, cfg.nfft, hop)
    ref = ex.real_speech[0]
    full = speech_sisdr(beamform(ex, spec, cfg, fit_extra=physical), ref, start)
    empty = speech_sisdr(beamform(ex, np.zeros_like(physical), cfg, fit_extra=physical), ref, start)
    return full - empty


def predict(net, ex) -> np.ndarray:
    from explorables.virtualflow.data import bins_to_spec

    with torch.no_grad():
        out = net(torch.from_numpy(ex.cond)).numpy()
    return bins_to_spec(out, ex.scale, ex.truth.shape[0])


def room_losses(net, ex) -> tuple[float, float, float]:
    """MSE of the normalised bins: the network, the head at zero correction (pseudo-target), zeros."""
    x = spec_to_bins(ex.truth, ex.scale)
    with torch.no_grad():
        out = net(torch.from_numpy(ex.cond)).numpy()
    pseudo = spec_to_bins(ex.pseudo, ex.scale)
    return float(np.mean((out - x) ** 2)), float(np.mean((pseudo - x) ** 2)), float(np.mean(x**2))


def retrain(cfg, train, start_state, gen_state, *, steps=None, lr=None, init_seed=None, batch_seed=None, wd=0.0):
    truth_x, cond_s = supervised_data(train, "cpu")
    d_cond = cond_s.shape[1]
    if init_seed is None:
        net = Regressor(cfg.n_mics, d_cond, cfg.d_hidden, cfg.n_layers)
        net.load_state_dict(start_state)
    else:
        torch.manual_seed(init_seed)
        net = Regressor(cfg.n_mics, d_cond, cfg.d_hidden, cfg.n_layers)
    gen = torch.Generator()
    if batch_seed is None:
        gen.set_state(gen_state)
    else:
        gen.manual_seed(batch_seed)
    losses = train_regression(
        net,
        truth_x,
        cond_s,
        generator=gen,
        n_steps=steps or cfg.n_supervised_steps,
        batch_size=cfg.batch_size,
        lr=lr or cfg.lr,
    )
    return net, losses


def describe(cfg, net, test, label, losses=None) -> np.ndarray:
    gains = np.array([fixed_gain(cfg, ex, predict(net, ex)) for ex in test])
    held = np.array([room_losses(net, ex)[0] for ex in test])
    extra = ""
    if losses is not None:
        q = len(losses) // 4
        extra = f"; train loss first {losses[0]:.3f}, quarters " + " ".join(
            f"{np.mean(losses[i * q : (i + 1) * q]):.3f}" for i in range(4)
        )
    print(
        f"{label}: gain 6 rooms {gains[:6].mean():+.2f}, all {gains.mean():+.2f} dB, rooms < 0: "
        f"{int((gains < 0).sum())}/{len(gains)}, min {gains.min():+.1f}; held-out MSE mean {held.mean():.3f}{extra}",
        flush=True,
    )
    return gains


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--base", type=int, default=106)
    p.add_argument("--inner", type=int, default=3)
    p.add_argument("--extra", type=int, default=12)
    p.add_argument("--variants", action="store_true")
    a = p.parse_args()
    if a.base < 100:
        raise SystemExit("tuning base seeds only (>= 100)")
    torch.set_num_threads(1)
    print(f"load at start: {os.getloadavg()}", flush=True)
    cfg = VirtualFlowConfig(seed=a.base)
    train, test = rooms(cfg, a.inner, a.extra)
    kept, orig = record_supervised_start()
    models = train_models(cfg, train, a.inner, torch.device("cpu"))
    ex_mod.train_regression = orig
    sup = models.supervised
    L = models.losses["supervised"]
    print(
        f"base {a.base} inner {a.inner}: supervised loss per step (first 5) "
        + " ".join(f"{v:.3f}" for v in L[:5])
        + " ... (last 5) "
        + " ".join(f"{v:.3f}" for v in L[-5:])
    )
    print(
        f"fixed-bin training loss before {models.loss_before['supervised']:.3f} "
        f"after {models.loss_after['supervised']:.3f}"
    )
    print("per training room (MSE net, pseudo head, zeros):")
    for i, ex in enumerate(train):
        n, ps, z = room_losses(sup, ex)
        print(
            f"  train {i}: {n:.3f} {ps:.3f} {z:.3f}  (truth/real rms ratio {np.sqrt(z):.2f}, vm dist "
            f"{np.linalg.norm(ex.scene.virtual_mic - ex.scene.real_mics.mean(0)):.2f} m)"
        )
    print(
        "per test room (gain supervised - empty dB, gain pseudo - empty dB, MSE net, pseudo head, zeros, "
        "energy ratio est/truth dB):"
    )
    for i, ex in enumerate(test):
        spec = predict(sup, ex)
        g = fixed_gain(cfg, ex, spec)
        gp = fixed_gain(cfg, ex, ex.pseudo)
        n, ps, z = room_losses(sup, ex)
        er = 10 * np.log10(np.sum(np.abs(spec) ** 2) / np.sum(np.abs(ex.truth) ** 2))
        print(f"  {'test' if i < 6 else 'fixd'} {i}: {g:+6.1f} {gp:+6.1f}  {n:.3f} {ps:.3f} {z:.3f}  {er:+.1f}")
    if not a.variants:
        return
    describe(cfg, sup, test, "package network", L)
    net, ls = retrain(cfg, train, kept["state"], kept["gen"])
    describe(cfg, net, test, "replay (must equal the package)", ls)
    for s in range(4):
        net, ls = retrain(cfg, train, kept["state"], kept["gen"], init_seed=1000 + s)
        describe(cfg, net, test, f"other init {1000 + s}, same batches", ls)
    for s in range(3):
        net, ls = retrain(cfg, train, kept["state"], kept["gen"], batch_seed=2000 + s)
        describe(cfg, net, test, f"same init, other batches {2000 + s}", ls)
    for steps in (300, 1000):
        net, ls = retrain(cfg, train, kept["state"], kept["gen"], steps=steps)
        describe(cfg, net, test, f"{steps} steps", ls)
    for lr in (5e-4, 1e-3):
        net, ls = retrain(cfg, train, kept["state"], kept["gen"], lr=lr)
        describe(cfg, net, test, f"lr {lr:g}", ls)


if __name__ == "__main__":
    main()
