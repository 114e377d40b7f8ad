"""Which stage makes UGGRH's bad runs (diagnosis, tuning base seed 104, inner seed 0, 70 % missing, 32 bits).

    PYTHONPATH=src nice -n 5 python benchmarks/uggrh_noise_stage.py

Crosses the seed of ``prepare`` (generative completion + similarity target) with the seed of ``train_hashing``
(the hash network), network seeds 0 (the book's) and 10000 (benchmarks/uggrh_noise.py's rep 1). Prints mAP.
"""

from __future__ import annotations

import numpy as np

from explorables.uggrh import UGGRHConfig
from explorables.uggrh.experiment import ABLATIONS, evaluate, incomplete, load_data
from explorables.uggrh.method import prepare, train_hashing

if __name__ == "__main__":
    import torch

    torch.set_num_threads(1)
    cfg = UGGRHConfig.preset("book", seed=104)
    s, rate, bits, mods = 0, cfg.missing_rate_grid[-1], cfg.ablation_bits, ABLATIONS["uggrh"]
    train, query, database = load_data(cfg, s)
    pairs = incomplete(cfg, train, rate, s)
    settings = cfg.settings()
    for ps in (0, 10_000):
        prepared = prepare(pairs, mods, settings, seed=ps, device="cpu")
        for hs in (0, 10_000):
            r = evaluate(train_hashing(prepared, bits, mods, settings, seed=hs, device="cpu"), query, database)
            print(f"prepare seed {ps:5d}, hashing seed {hs:5d}: mAP {np.mean([r['i2t'], r['t2i']]):.3f}", flush=True)
