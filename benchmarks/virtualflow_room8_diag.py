"""The gate "room"'s spread (issue 42, twenty-fourth pass): which part of the per-seed spread is room sampling and
which is training. Per inner seed of one tuning base (>= 186), the book preset as the package trains it; per room the
gate's quantity d = SI-SDR(supervised) - SI-SDR(real mics' pseudo-target), both against the true virtual signal, on
the seed's 12 test rooms AND on its 24 gate rooms (the beamformer control's rooms, simulated as the package does,
then through the same pipeline: direction, pseudo-target, condition; no network is trained on them).

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_room8_diag.py --base 186 \
        --out benchmarks/virtualflow_room8_diag186.json
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np


def gate_example(cfg, seed, index):
    from explorables.virtualflow.data import make_example
    from explorables.virtualflow.experiment import _config_scene, scene_seed, speech_corpus
    from explorables.virtualflow.scenes import simulate

    rng = np.random.default_rng(scene_seed(cfg, seed, "gate", index))
    scene = _config_scene(cfg, rng)
    sim = simulate(scene, round(cfg.clip_s * cfg.fs), rng, snr_db=float(rng.uniform(*cfg.snr_range)),
                   sensor_snr_db=cfg.sensor_snr_db, lead_s=cfg.lead_s, max_order=cfg.max_order,
                   use_espeak=cfg.use_espeak, corpus=speech_corpus(cfg.data_root) if cfg.data_root else ())  # fmt: skip
    return make_example(scene, sim, nfft=cfg.nfft, lead_s=cfg.lead_s, doa_method=cfg.doa_method)


def one_seed(base: int, seed: int) -> dict:
    import torch

    torch.set_num_threads(1)
    from explorables.virtualflow.data import first_speech_frame
    from explorables.virtualflow.downstream import si_sdr
    from explorables.virtualflow.experiment import VirtualFlowConfig, build_example, estimate, train_models
    from explorables.virtualflow.pseudo import istft

    cfg = VirtualFlowConfig.preset("book", seed=base)
    dev = torch.device("cpu")
    train = [build_example(cfg, seed, "train", i) for i in range(cfg.n_train_scenes)]
    test = [build_example(cfg, seed, "test", i) for i in range(cfg.n_test_scenes)]
    models = train_models(cfg, train, seed, dev)
    hop, first = cfg.nfft // 2, first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    out: dict = {}
    t0 = time.perf_counter()
    gates = [gate_example(cfg, seed, j) for j in range(cfg.n_gate_scenes)]
    out["gate_build_s"] = time.perf_counter() - t0
    x0 = torch.zeros(1)
    for name, rooms in (("test", test), ("gate", gates)):
        for ex in rooms:
            n = ex.real.shape[1]
            s = {}
            for m in ("supervised", "pseudo"):
                spec = estimate(models, ex, m, n_steps=1, solver=cfg.solver, x0=x0, device=dev)
                s[m] = si_sdr(istft(spec, cfg.nfft, hop, n)[first * hop :], ex.truth_wave[first * hop :])
            out.setdefault(f"{name}/d", []).append(s["supervised"] - s["pseudo"])
            out.setdefault(f"{name}/pseudo", []).append(s["pseudo"])
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--base", type=int, required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if a.base < 186:
        raise SystemExit("tuning bases >= 186 only")
    with ProcessPoolExecutor(2) as pool:
        res = list(pool.map(one_seed, [a.base] * 5, range(5)))
    json.dump({"base": a.base, "seeds": res}, open(a.out, "w"), indent=1)
    from scipy import stats

    t = stats.t.ppf(0.975, 4)
    for key in ("test", "gate", "all"):
        per = [np.asarray(r["test/d"] + r["gate/d"]) if key == "all" else np.asarray(r[f"{key}/d"]) for r in res]
        means = np.array([x.mean() for x in per])
        within = np.mean([x.var(ddof=1) for x in per])
        k = len(per[0])
        half = t * means.std(ddof=1) / np.sqrt(5)
        print(f"{key} ({k} rooms/seed): seed means {np.round(means, 2)}; interval {means.mean():+.2f} "
              f"[{means.mean() - half:+.2f}, {means.mean() + half:+.2f}]; sd of seed means {means.std(ddof=1):.2f}; "
              f"room-sampling sd expected sqrt(within/k) {np.sqrt(within / k):.2f} (within-seed room sd "
              f"{np.sqrt(within):.2f})")  # fmt: skip
    for r in res:
        print("test d", np.round(r["test/d"], 1), "| gate d", np.round(r["gate/d"], 1), f"| {r['gate_build_s']:.1f}s")
