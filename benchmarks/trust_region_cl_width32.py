"""Chapter 12: the width-32 retuning of EWC's lambda, the penalty form's lambda and TR-CL's radius
(benchmarks/trust_region_cl_width32_rule.md, committed before this ran). One ensemble per tuning base seed 125-129
(book preset: width 32, 8 inner seeds) with fine-tuning and generative replay (references, not deciding) and every
grid value of each arm; each arm takes the value with its own lowest mean final SWD (TR-CL among the radii where its
region binds). Writes ``benchmarks/trust_region_cl_width32.json`` and prints the picks.

    PYTHONPATH=src nice -n 5 python benchmarks/trust_region_cl_width32.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from explorables.trust_region_cl.continual import Member
from explorables.trust_region_cl.experiment import TrustRegionCLConfig, _tuning_ensemble

LAMBDAS = (300.0, 1000.0, 3000.0, 10000.0, 30000.0, 100000.0)  # EWC and the penalty form (was 100-3000, pick 3000)
RADII = (0.0003, 0.001, 0.003, 0.01, 0.03, 0.1)  # TR-CL, Fisher metric (was 0.01-1 and inf, pick 0.01)
BASE_SEEDS = (125, 126, 127, 128, 129)
BIND = 0.9  # a radius binds when TR-CL's distance / radius at a task's end, averaged, is >= this
BEFORE = {"ewc": 3000.0, "trcl_penalty": 3000.0, "trcl": 0.01}  # the book preset's values before this rule (width 64)
FALLBACK_RADIUS = BEFORE["trcl"]  # if no grid radius binds
#: arm -> (method, the Member field the grid sets, grid, the book preset's field)
ARMS = {
    "ewc": ("ewc", "strength", LAMBDAS, "ewc_lambda"),
    "trcl_penalty": ("trcl_penalty", "strength", LAMBDAS, "penalty_lambda"),
    "trcl": ("trcl", "radius", RADII, "trust_radius"),
}
OUT = Path(__file__).with_suffix(".json")


def kinds() -> list[tuple[str, str, float | None]]:
    """(key, method, grid value) of every member kind of a tuning ensemble, in order."""
    out: list[tuple[str, str, float | None]] = [("finetune", "finetune", None), ("replay", "replay", None)]
    for method, _, grid, _ in ARMS.values():
        out += [(f"{method}@{v:g}", method, v) for v in grid]
    return out


def _member(method: str, value: float | None, seed: int) -> Member:
    if value is None:
        return Member(method, seed)
    field = next(f for m, f, _, _ in ARMS.values() if m == method)
    return Member(method, seed, **{field: value})


def one(base: int) -> dict:
    cfg = TrustRegionCLConfig.preset("book", seed=base)
    ks = kinds()
    t0, c0 = time.time(), time.process_time()
    record, final, forgetting, n = _tuning_ensemble(cfg, [lambda s, m=m, v=v: _member(m, v, s) for _, m, v in ks])
    wall, cpu = time.time() - t0, time.process_time() - c0
    out = {"base_seed": base, "wall_s_under_load": round(wall, 1), "cpu_s": round(cpu, 1), "kinds": {}}
    for i, (key, method, _) in enumerate(ks):
        sl = slice(i * n, (i + 1) * n)
        entry = {"final_swd": final[sl].cpu().numpy().tolist(), "forgetting": forgetting[sl].cpu().numpy().tolist()}
        if method == "trcl":
            entry["distance_ratio"] = (record.distances[1:, sl] / record.radii[sl]).mean(0).cpu().numpy().tolist()
            entry["multiplier_max"] = float(record.multiplier_max[1:, sl].max())
            entry["cap_hits"] = int(record.cap_hits[1:, sl].sum())
        out["kinds"][key] = entry
    return out


def pick(runs: list[dict]) -> tuple[dict, dict]:
    """Each arm's value with the lowest mean final SWD (mean over inner seeds, then over tuning base seeds); TR-CL only
    among the radii where its region binds. Ties at three decimals go to the looser setting (smaller lambda, larger
    radius). Returns the picks and the table they come from."""
    table = {}
    for key, method, _ in kinds():
        row = {k: float(np.mean([np.mean(r["kinds"][key][k]) for r in runs])) for k in ("final_swd", "forgetting")}
        if method == "trcl":
            row["distance_ratio"] = float(np.mean([np.mean(r["kinds"][key]["distance_ratio"]) for r in runs]))
            row["binds"] = row["distance_ratio"] >= BIND
        table[key] = row
    picks = {}
    for arm, (method, field, grid, _) in ARMS.items():
        ok = [v for v in grid if table[f"{method}@{v:g}"].get("binds", True)]
        if not ok:
            picks[arm] = FALLBACK_RADIUS
            continue
        looser = (lambda v: v) if field == "strength" else (lambda v: -v)
        picks[arm] = min(ok, key=lambda v, m=method, lo=looser: (round(table[f"{m}@{v:g}"]["final_swd"], 3), lo(v)))
    return picks, table


def main() -> None:
    data = json.loads(OUT.read_text()) if OUT.is_file() else {}
    runs = data.get("runs", [])
    head = {"rule": "benchmarks/trust_region_cl_width32_rule.md", "base_seeds": list(BASE_SEEDS),
            "lambdas": list(LAMBDAS), "radii": list(RADII), "bind": BIND,
            "criterion": "each arm's own lowest mean final SWD (TR-CL: among binding radii)"}  # fmt: skip
    for base in BASE_SEEDS:
        if not any(r["base_seed"] == base for r in runs):
            runs.append(one(base))
            OUT.write_text(json.dumps({**head, "runs": runs}, indent=1) + "\n")
        x = next(r for r in runs if r["base_seed"] == base)
        print(f"base {base} ({x['cpu_s']} s CPU, {x['wall_s_under_load']} s wall): " + "; ".join(
            f"{k} {np.mean(v['final_swd']):.4f}" for k, v in x["kinds"].items()), flush=True)  # fmt: skip
    picks, table = pick(runs)
    per_base = {str(r["base_seed"]): pick([r])[0] for r in runs}  # reported, not deciding
    bracketed = {arm: picks[arm] not in (grid[0], grid[-1]) for arm, (_, _, grid, _) in ARMS.items()}
    OUT.write_text(json.dumps({**head, "runs": runs, "table": table, "picks": picks, "bracketed": bracketed,
                               "picks_per_base_seed": per_base, "before": BEFORE}, indent=1) + "\n")  # fmt: skip
    for k, v in table.items():
        print(k, {a: round(b, 4) if isinstance(b, float) else b for a, b in v.items()})
    print("picks", picks, "bracketed", bracketed, "before", BEFORE)
    print("per base seed", per_base)


if __name__ == "__main__":
    main()
