"""Run the candidates of `benchmarks/omwu_horizon_rule.md` on tuning base seeds and append raw records.

Usage: ``PYTHONPATH=src python benchmarks/omwu_horizon_rule.py --base-seeds 200 201 ... [--out FILE]``.
One JSON line per (candidate, base): the random-games phase of the book preset with ``n_random_game_steps``
set to the candidate's, its CPU seconds, and every row's word (gates applied) with its measured text. The
three phases that read neither the seed nor ``n_random_game_steps`` run once and are reused.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from explorables.core.tables import apply_gates
from explorables.omwu import claims as C
from explorables.omwu import experiment as X

CANDIDATES = {"C0": 20_000, "C1": 40_000, "C2": 60_000, "C3": 80_000, "C4": 100_000, "C5": 120_000}


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-seeds", type=int, nargs="+", required=True)
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/omwu_horizon_rule.jsonl"))
    args = parser.parse_args()
    if any(not 200 <= b <= 209 for b in args.base_seeds):
        raise ValueError(f"tuning base seeds are 200-209 only, got {args.base_seeds}")
    book = X.OMWUConfig.preset("book")
    fixed = {}
    for name in ("bottleneck", "best_iterate", "mwu_vs_omwu"):
        fixed[name] = X.PHASES[name](book, X.LoopOptions(None, False, name))[0]
    for base in args.base_seeds:
        for cand in args.candidates:
            cfg = book.replace(seed=base, n_random_game_steps=CANDIDATES[cand])
            c0, t0 = cpu(), time.perf_counter()
            rg = X._random_games(cfg, X.LoopOptions(None, False, "random_games"))[0]
            cpu_s, wall_s = cpu() - c0, time.perf_counter() - t0
            summary = {**fixed, "random_games": rg}
            rows = apply_gates(C.claims(X.OMWUResults(config=cfg, summary=summary, curves={})))
            record = {
                "candidate": cand, "steps": CANDIDATES[cand], "base": base,
                "energy_ratio_median_per_seed": rg["energy_ratio_median_per_seed"],
                "fraction_linear": rg["fraction_linear"], "rate_median": rg["rate_median"],
                "random_games_cpu_s": round(cpu_s, 2), "random_games_wall_s": round(wall_s, 2),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "rows": [{"kind": r.kind, "name": r.name, "claim": r.claim[:60], "word": r.outcome,
                          "measured": r.measured} for r in rows],
                "utc": time.strftime("%H:%M:%S", time.gmtime()),
            }  # fmt: skip
            with args.out.open("a") as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
            words = " ".join(r.outcome for r in rows)
            print(f"{cand} base {base}: ratios {[round(v, 3) for v in rg['energy_ratio_median_per_seed']]} "
                  f"linear {rg['fraction_linear']} cpu {cpu_s:.1f}s | {words}", flush=True)


if __name__ == "__main__":
    main()
