"""Chapter 12: after the control's calibration (benchmarks/trust_region_cl_control_rule.md) and the projection fix (only
coordinates with Fisher information move), one book-preset run per tuning base seed 115-119 records every gate's,
check's and claim's word, the control's and TR-CL's distance / radius and the dual bound's hits. Reported, not
deciding (the rule adopts the calibrated radius whatever these read). Writes
``benchmarks/trust_region_cl_control_check.json``.

    PYTHONPATH=src:benchmarks nice -n 5 python benchmarks/trust_region_cl_control_check.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from explorables.core.tables import apply_gates
from explorables.trust_region_cl import experiment as ex
from explorables.trust_region_cl.claims import claims
from explorables.trust_region_cl.experiment import TrustRegionCLConfig

BASE_SEEDS = (115, 116, 117, 118, 119)
OUT = Path(__file__).with_suffix(".json")


def one(base: int) -> dict:
    cfg = TrustRegionCLConfig.preset("book", seed=base)
    t0, c0 = time.time(), time.process_time()
    results = ex.run(cfg)
    wall, cpu = time.time() - t0, time.process_time() - c0
    rows = apply_gates(claims(results))
    seq = results.summary["sequence"]["methods"]
    return {
        "base_seed": base, "iso_radius": cfg.iso_radius, "wall_s_under_load": round(wall, 1), "cpu_s": round(cpu, 1),
        "words": {r.claim: r.outcome for r in rows}, "kinds": {r.claim: r.kind for r in rows},
        "measured": {r.claim: r.measured for r in rows},
        **{f"{m}_{key}": seq[m][key] for m in ("trcl", "trcl_iso") for key in
           ("distance_ratio", "multiplier", "multiplier_max", "cap_hits", "cap_hit_tasks", "dual_steps", "final_swd")},
        "replay_final_swd": seq["replay"]["final_swd"], "ewc_final_swd": seq["ewc"]["final_swd"],
    }  # fmt: skip


def main() -> None:
    runs = json.loads(OUT.read_text())["runs"] if OUT.is_file() else []
    for base in BASE_SEEDS:
        if not any(r["base_seed"] == base for r in runs):
            runs.append(one(base))
            OUT.write_text(json.dumps({"runs": runs}, indent=1))
        r = next(r for r in runs if r["base_seed"] == base)
        print(f"base {base} ({r['cpu_s']} s CPU): control d/r {r['trcl_iso_distance_ratio']['mean']:.3f}, TR-CL d/r "
              f"{r['trcl_distance_ratio']['mean']:.3f}, cap hits {r['trcl_cap_hits']}/{r['trcl_dual_steps']} "
              f"(control {r['trcl_iso_cap_hits']}); final SWD TR-CL {r['trcl_final_swd']['mean']:.3f} EWC "
              f"{r['ewc_final_swd']['mean']:.3f} control {r['trcl_iso_final_swd']['mean']:.3f} replay "
              f"{r['replay_final_swd']['mean']:.3f}; " + ", ".join(f"{c[:28]}:{w.split(':')[0]}"
                                                                     for c, w in r["words"].items()), flush=True)


if __name__ == "__main__":
    main()
