"""The reflow row on more rooms per seed (issue 42, twenty-sixth pass): the candidates of
``benchmarks/virtualflow_reflow_rooms_rule.md`` (R1: all 24 gate rooms; run at ``ba622f2``'s parent, bases 192-194,
cost on 2 threads) and ``benchmarks/virtualflow_reflow_rooms_rule2.md`` (R2: the first 12; this version, bases 195-197,
cost on 1 thread), each committed before its candidate ran. Per tuning base, the package's ``run()`` on the book
preset with ``seed=base`` (the page's code path), read by the package's ``reflow_verdict`` on R0 (main's reading: the
12 test rooms) and the candidate (the 12 test rooms and the gate rooms it reads); the gate rooms alone beside. Then the
candidate's added CPU (the gate rooms' flow and reflow solves and their scoring) on the first base's inner seed 0.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_reflow_rooms.py --bases 195 196 197 \
        --out benchmarks/virtualflow_reflow_rooms2.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path

import numpy as np

DEADLINE = dt.time(10, 37)  # rule 2 (rule 1: 10:40)
CPU_BOUND = 6.0  # CPU-s for the page's 5 inner seeds
CAND = "R2"  # rule 2: 12 of the gate rooms (rule 1's R1 read all 24: its record says "R1")
THREADS = 1  # rule 2 times the cost on one torch thread (rule 1: the page's count, 2)


def read(summary: dict, cfg) -> dict:
    from explorables.core.verdicts import compare, interval
    from explorables.virtualflow.claims import MAGNITUDE_MARGIN, REFLOW_TOL, reflow_verdict
    from explorables.virtualflow.experiment import reflow_gate_rooms

    top, k = cfg.n_bands - 1, cfg.n_sample_steps
    n_test, n_all = cfg.n_test_scenes, cfg.n_test_scenes + reflow_gate_rooms(cfg)
    seeds = [summary[f"seed_{s}"] for s in cfg.seeds]
    r0_si = [p["steps/reflow/1"] - p[f"steps/flow/{k}"] for p in seeds]
    r0_en = [abs(p["steps_energy/reflow/1"][top] - p[f"steps_energy/flow/{k}"][top]) for p in seeds]
    r1_si = [p["reflow_row/sisdr/reflow/1"] - p[f"reflow_row/sisdr/flow/{k}"] for p in seeds]
    r1_en = [abs(p["reflow_row/energy/reflow/1"][top] - p[f"reflow_row/energy/flow/{k}"][top]) for p in seeds]
    # the gate rooms alone, from the two means (36-room mean times 36 less the 12 test rooms' sum)
    gate_si = [(n_all * b - n_test * a) / (n_all - n_test) for a, b in zip(r0_si, r1_si, strict=True)]
    out = {}
    for name, si, en in (("R0", r0_si, r0_en), (CAND, r1_si, r1_en), ("gate_only", gate_si, None)):
        row = {
            "seed_means_si": [round(v, 3) for v in si],
            "si_interval": interval(si).format(2, signed=True),
            "si_part": compare(si, -REFLOW_TOL),
            "si_sd": round(float(np.std(si, ddof=1)), 3),
        }
        if en is not None:
            row["energy_interval"] = interval(en).format(2)
            row["energy_part"] = compare(en, MAGNITUDE_MARGIN, "below")
            row["word"] = reflow_verdict(si, en).split(":")[0]
        out[name] = row
    return out


def cost(base: int) -> dict:
    import torch

    from explorables.virtualflow.experiment import (
        VirtualFlowConfig,
        build_example,
        estimate,
        first_velocities,
        gate_room,
        gate_room_noise,
        reflow_gate_rooms,
        reflow_row_scores,
        train_models,
    )

    torch.set_num_threads(THREADS)

    cfg = VirtualFlowConfig.preset("book", seed=base)
    dev = torch.device("cpu")
    seed = cfg.seeds[0]
    train = [build_example(cfg, seed, "train", i) for i in range(cfg.n_train_scenes)]
    models = train_models(cfg, train, seed, dev)
    rooms = [gate_room(cfg, seed, j) for j in range(reflow_gate_rooms(cfg))]
    t0, w0 = time.process_time(), time.perf_counter()
    for j, room in enumerate(rooms):
        x0 = gate_room_noise(cfg, models, room, seed, j).to(dev)
        firsts = first_velocities(models, room, x0, dev)

        def solve(name, k, room=room, x0=x0, firsts=firsts):
            return estimate(models, room, name, n_steps=k, solver=cfg.solver, x0=x0, device=dev, v0=firsts[name])

        reflow_row_scores(cfg, room, solve)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    return {
        "torch_threads": torch.get_num_threads(),
        "cpu_s_one_seed": round(cpu, 2),
        "wall_s_one_seed": round(wall, 2),
        "cpu_s_page_estimate": round(cpu * len(cfg.seeds), 2),
    }


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--bases", type=int, nargs="+", required=True)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    if min(a.bases) < 195:
        raise SystemExit("rule 2's tuning bases only (>= 195; 192-194 were rule 1's)")
    from explorables.virtualflow.experiment import VirtualFlowConfig, run

    record = json.loads(a.out.read_text()) if a.out.exists() else {}
    for base in a.bases:
        key = str(base)
        if key not in record:
            if dt.datetime.now(dt.UTC).time() > DEADLINE:
                print(f"base {base}: past the rule's deadline, not run (R1 counts as not passed)", flush=True)
                break
            cfg = VirtualFlowConfig.preset("book", seed=base)
            t, c = time.perf_counter(), time.process_time()
            res = run(cfg)
            record[key] = {
                "wall_s": round(time.perf_counter() - t, 1),
                "cpu_s_this_process": round(time.process_time() - c, 1),
                "finished_utc": dt.datetime.now(dt.UTC).strftime("%H:%M:%S"),
                "read": read(res.summary, cfg),
            }
            a.out.write_text(json.dumps(record, indent=1) + "\n")
        r = record[key]["read"]
        print(
            f"base {base} ({record[key]['wall_s']:.0f} s under load, done {record[key]['finished_utc']}): "
            + "; ".join(
                f"{c}: SI-SDR part {r[c]['si_interval']} dB {r[c]['si_part']} (seed means "
                f"{', '.join(f'{v:+.2f}' for v in r[c]['seed_means_si'])}; sd {r[c]['si_sd']:.2f})"
                + (f", energy {r[c]['energy_interval']} dB {r[c]['energy_part']} -> row {r[c]['word']}"
                   if "word" in r[c] else "")
                for c in ("R0", CAND, "gate_only")
            ),
            flush=True,
        )  # fmt: skip
    if "cost" not in record:
        record["cost"] = cost(a.bases[0])
        a.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"cost (under load): {record['cost']}", flush=True)
    done = [record[str(b)]["read"][CAND] for b in a.bases if str(b) in record]
    words = {r["word"] for r in done}
    decided = all(r["si_part"] != "unclear" for r in done)
    ok = len(done) == len(a.bases) and decided and len(words) == 1
    cheap = record["cost"]["cpu_s_page_estimate"] <= CPU_BOUND
    print(
        f"{CAND}: words {[r['word'] for r in done]}, SI-SDR part decided on every base: {decided}; "
        f"cost {record['cost']['cpu_s_page_estimate']} CPU-s (bound {CPU_BOUND}): "
        f"{'PASSES' if ok and cheap else 'not passed'}",
        flush=True,
    )
