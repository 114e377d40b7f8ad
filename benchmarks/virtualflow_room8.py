"""The gate "room" on more rooms per seed (issue 42, twenty-fourth pass): the candidates of
``benchmarks/virtualflow_room_rule8.md`` (committed before this ran). Per tuning base (>= 187), the book preset's
inner seeds trained as the package trains them, then per room d = SI-SDR(supervised) - SI-SDR(real mics'
pseudo-target) on the 12 test rooms and on 48 gate rooms (``gate_room``: the rooms the gate "physical" reads, put
through the test rooms' pipeline); read by the package's ``room_gate`` on G0 (main: test rooms), G1 (test + 24 gate
rooms) and G2 (test + 48).

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_room8.py --bases 187 188 189 190 191 \
        --out benchmarks/virtualflow_room8.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

N_GATE = 48
DEADLINE = dt.time(4, 15)
READS = {"G0": 0, "G1": 24, "G2": 48}  # gate rooms read besides the 12 test rooms


def one_seed(base: int, seed: int) -> dict:
    import torch

    torch.set_num_threads(1)
    from explorables.virtualflow.data import first_speech_frame
    from explorables.virtualflow.downstream import si_sdr
    from explorables.virtualflow.experiment import VirtualFlowConfig, build_example, estimate, gate_room, train_models
    from explorables.virtualflow.pseudo import istft

    cfg = VirtualFlowConfig.preset("book", seed=base)
    dev = torch.device("cpu")
    t0 = time.process_time()
    train = [build_example(cfg, seed, "train", i) for i in range(cfg.n_train_scenes)]
    test = [build_example(cfg, seed, "test", i) for i in range(cfg.n_test_scenes)]
    models = train_models(cfg, train, seed, dev)
    hop, first = cfg.nfft // 2, first_speech_frame(cfg.lead_s, cfg.fs, cfg.nfft)
    out: dict = {"cpu_s": 0.0}
    rooms = [("test", ex) for ex in test] + [("gate", gate_room(cfg, seed, j)) for j in range(N_GATE)]
    for name, ex in rooms:
        n = ex.real.shape[1]
        s = {}
        for m in ("supervised", "pseudo"):
            spec = estimate(models, ex, m, n_steps=1, solver=cfg.solver, x0=torch.zeros(0), device=dev)
            s[m] = si_sdr(istft(spec, cfg.nfft, hop, n)[first * hop :], ex.truth_wave[first * hop :])
        out.setdefault(f"{name}/d", []).append(s["supervised"] - s["pseudo"])
        out.setdefault(f"{name}/pseudo", []).append(s["pseudo"])
    out["cpu_s"] = time.process_time() - t0
    return out


def read(res: list[dict]) -> dict:
    from explorables.core.verdicts import interval
    from explorables.virtualflow.claims import room_gate

    t975 = 2.7764451051977987  # scipy.stats.t.ppf(0.975, 4)
    rows = {}
    for cand, k in READS.items():
        per = [np.asarray(r["test/d"] + r["gate/d"][:k]) for r in res]
        means = [float(x.mean()) for x in per]
        within = float(np.mean([x.var(ddof=1) for x in per]))
        iv = interval(means)
        rows[cand] = {
            "rooms": len(per[0]),
            "seed_means": [round(v, 3) for v in means],
            "interval": iv.format(2, signed=True),
            "word": room_gate(means).split(":")[0],
            "sd_seed_means": round(float(np.std(means, ddof=1)), 3),
            "sd_expected_room_sampling": round(float(np.sqrt(within / len(per[0]))), 3),
            "within_room_sd": round(float(np.sqrt(within)), 3),
            "half_width_expected": round(float(t975 * np.sqrt(within / len(per[0])) / np.sqrt(len(res))), 3),
        }
    rows["pseudo_mean_test"] = round(float(np.mean([np.mean(r["test/pseudo"]) for r in res])), 3)
    return rows


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--bases", type=int, nargs="+", required=True)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    if min(a.bases) < 187:
        raise SystemExit("this pass's tuning bases only (>= 187)")
    record = json.loads(a.out.read_text()) if a.out.exists() else {}
    for base in a.bases:
        key = str(base)
        if key not in record:
            if dt.datetime.now(dt.UTC).time() > DEADLINE:
                print(f"base {base}: past the rule's deadline, not run (its candidates count as not passed)")
                break
            t = time.perf_counter()
            with ProcessPoolExecutor(2) as pool:
                res = list(pool.map(one_seed, [base] * 5, range(5)))
            record[key] = {"wall_s": round(time.perf_counter() - t, 1), "finished_utc": dt.datetime.now(dt.UTC)
                           .strftime("%H:%M:%S"), "cpu_s_per_seed": [round(r["cpu_s"], 1) for r in res],
                           "read": read(res), "per_room": res}  # fmt: skip
            a.out.write_text(json.dumps(record, indent=1) + "\n")
        r = record[key]["read"]
        print(f"base {base} ({record[key]['wall_s']:.0f} s, done {record[key]['finished_utc']}): "
              + "; ".join(f"{c} ({r[c]['rooms']} rooms) {r[c]['interval']} {r[c]['word']} [seed means "
                          f"{', '.join(f'{v:+.2f}' for v in r[c]['seed_means'])}; sd {r[c]['sd_seed_means']:.2f}, "
                          f"room-sampling {r[c]['sd_expected_room_sampling']:.2f}]" for c in READS)
              + f"; pseudo {r['pseudo_mean_test']:+.2f} dB", flush=True)  # fmt: skip
    done = [record[str(b)]["read"] for b in a.bases if str(b) in record]
    for c in ("G1", "G2"):
        ok = len(done) == len(a.bases) and all(r[c]["word"] == "pass" for r in done)
        print(f"{c}: {'PASSES on every base' if ok else 'not passed'}", flush=True)
