"""Chapter 12: the isotropic control's radius by equal relative tightness (benchmarks/trust_region_cl_control_rule.md,
committed before this ran). One ensemble per tuning base seed 115-119: a Fisher-metric and an isotropic-metric member
of radius inf per inner seed (both are generative replay to the bit), book preset otherwise; the distances each
records at the end of tasks 2..K give the ratio d_I / d_F on replay's own update. Writes
``benchmarks/trust_region_cl_control.json`` and prints the calibrated radius.

    PYTHONPATH=src:benchmarks nice -n 5 python benchmarks/trust_region_cl_control.py
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

from explorables.trust_region_cl.continual import Member
from explorables.trust_region_cl.experiment import TrustRegionCLConfig, _tuning_ensemble

BASE_SEEDS = (115, 116, 117, 118, 119)
TRUST_RADIUS = 0.01  # TR-CL's radius (book preset), unchanged
OUT = Path(__file__).with_suffix(".json")


def calibrated_radius(record: dict) -> float:
    """The rule's r_I from the record: r_F x the median over every (base seed, inner seed, task 2..K) of d_I / d_F,
    rounded to two significant digits."""
    ratios = np.concatenate([np.asarray(r["d_iso"]) / np.asarray(r["d_fisher"]) for r in record["runs"]], axis=None)
    value = record["trust_radius"] * float(np.median(ratios))
    return float(f"{value:.2g}")


def one(base: int) -> dict:
    cfg = TrustRegionCLConfig.preset("book", seed=base)
    inf = math.inf
    t0 = time.process_time()
    record, _, _, n = _tuning_ensemble(cfg, [lambda s: Member("trcl", s, inf), lambda s: Member("trcl_iso", s, inf)])
    d = record.distances[1:].cpu().numpy()  # (tasks 2..K, members)
    return {"base_seed": base, "d_fisher": d[:, :n].tolist(), "d_iso": d[:, n:].tolist(),
            "cpu_s": time.process_time() - t0}  # fmt: skip


def main() -> None:
    record = json.loads(OUT.read_text()) if OUT.is_file() else {"trust_radius": TRUST_RADIUS, "runs": []}
    for base in BASE_SEEDS:
        if not any(r["base_seed"] == base for r in record["runs"]):
            record["runs"].append(one(base))
            OUT.write_text(json.dumps(record, indent=1))
        r = next(r for r in record["runs"] if r["base_seed"] == base)
        ratio = np.asarray(r["d_iso"]) / np.asarray(r["d_fisher"])
        print(f"base {base}: median d_I/d_F {np.median(ratio):.4g}, median d_F/r_F "
              f"{np.median(r['d_fisher']) / TRUST_RADIUS:.3g} ({r['cpu_s']:.0f} s CPU)", flush=True)
    ratios = np.concatenate([np.asarray(r["d_iso"]) / np.asarray(r["d_fisher"]) for r in record["runs"]], axis=None)
    fisher = np.concatenate([np.asarray(r["d_fisher"]) for r in record["runs"]], axis=None)
    record["median_ratio"] = float(np.median(ratios))
    record["ratio_p5_p95"] = [float(np.percentile(ratios, 5)), float(np.percentile(ratios, 95))]
    record["median_fisher_over_radius"] = float(np.median(fisher) / TRUST_RADIUS)
    record["iso_radius"] = calibrated_radius(record)
    OUT.write_text(json.dumps(record, indent=1))
    print(f"median d_I/d_F {record['median_ratio']:.4g} (5-95%: {record['ratio_p5_p95'][0]:.3g}-"
          f"{record['ratio_p5_p95'][1]:.3g}); replay travels {record['median_fisher_over_radius']:.3g} Fisher radii; "
          f"iso_radius = {record['iso_radius']:g}")


if __name__ == "__main__":
    main()
