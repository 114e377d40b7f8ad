"""Choose chapter 12's trust-region radii on tuning base seeds (never the book's 0-4), the same budget for both
metrics: the same radius grid, the same runs. The grid ends at ``inf`` (no constraint: generative replay). The
record's ``best`` is the argmin over the whole grid; TR-CL's radius is that pick, but the control's is the argmin over
the FINITE radii only (``explorables.trust_region_cl.claims.control_radius``; a control of radius ``inf`` IS replay,
no control: benchmarks/trust_region_cl_stability_rule.md, part A). Writes ``data/trust_region_cl_tuning.json``, which
the chapter's folded "how criteria were set" box shows, and prints the chosen radii (then set as the book preset's
defaults).

    PYTHONPATH=src python benchmarks/tune_trust_region_cl.py           # the radii
    PYTHONPATH=src python benchmarks/tune_trust_region_cl.py lambda    # EWC's and the penalty form's lambda

The lambda rule (issue 47 item 4; written and committed before any candidate ran): on the same tuning base seeds
(100, 101; three seeds each; the book's steps), one ensemble trains EWC and the penalty form (EWC's penalty plus
replay) at every lambda of LAMBDAS; each arm takes the lambda with the lowest mean final SWD over the six runs (the
radius's criterion), whatever it is; a pick at an end of the grid is reported as not bracketed, the grid is not
extended. Writes ``data/trust_region_cl_lambda_tuning.json``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from explorables.trust_region_cl import TrustRegionCLConfig
from explorables.trust_region_cl.claims import control_radius
from explorables.trust_region_cl.experiment import tune_lambdas, tune_radii

BASE_SEEDS = (100, 101)
RADII = (0.01, 0.03, 0.1, 0.3, 1.0, float("inf"))
LAMBDAS = (100.0, 300.0, 1000.0, 3000.0)
OUT = Path(__file__).resolve().parents[1] / "data" / "trust_region_cl_tuning.json"
OUT_LAMBDA = OUT.with_name("trust_region_cl_lambda_tuning.json")


def _runs(tune: Callable[..., dict], grid: tuple[float, ...]) -> list[dict]:
    """One tuning ensemble per tuning base seed (three seeds each), with its base seed and wall time."""
    runs = []
    for base in BASE_SEEDS:
        t = time.time()
        out = tune(TrustRegionCLConfig.preset("book", seed=base, seeds=(0, 1, 2)), grid)
        out["base_seed"], out["seconds"] = base, round(time.time() - t, 1)
        runs.append(out)
        print(f"base seed {base}: {out['seconds']} s", flush=True)
    return runs


def main() -> None:
    runs = _runs(tune_radii, RADII)
    kinds = list(runs[0]["kinds"])
    mean = {k: float(np.mean([r["kinds"][k]["final_swd"]["mean"] for r in runs])) for k in kinds}
    best = {m: RADII[int(np.argmin([mean[f"{m}@{r:g}"] for r in RADII]))] for m in ("trcl", "trcl_iso")}
    setting = {k: v for k, v in runs[0].items() if k not in ("kinds", "best_trcl", "best_trcl_iso", "base_seed",
                                                               "seconds")}  # fmt: skip
    cfg = TrustRegionCLConfig.preset("book")
    record = {
        "base_seeds": list(BASE_SEEDS), "seeds_per_base": 3, "radii": list(RADII), "criterion": "lowest mean final SWD",
        "n_replay": cfg.n_replay, "n_steps_per_task": cfg.n_steps_per_task, "tasks": list(cfg.tasks),
        "setting": setting,
        "mean_final_swd": mean, "best": best, "runs": runs,
    }  # fmt: skip
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1) + "\n")  # inf is written as Infinity (Python's json reads it)
    print(json.dumps({"mean_final_swd": mean, "best": best, "control_radius": control_radius(record)}, indent=1))


def main_lambda() -> None:
    runs = _runs(tune_lambdas, LAMBDAS)
    kinds = list(runs[0]["kinds"])
    mean = {k: float(np.mean([r["kinds"][k]["final_swd"]["mean"] for r in runs])) for k in kinds}
    forgetting = {k: float(np.mean([r["kinds"][k]["forgetting"]["mean"] for r in runs])) for k in kinds}
    best = {m: LAMBDAS[int(np.argmin([mean[f"{m}@{v:g}"] for v in LAMBDAS]))] for m in ("ewc", "trcl_penalty")}
    cfg = TrustRegionCLConfig.preset("book")
    record = {
        "base_seeds": list(BASE_SEEDS), "seeds_per_base": 3, "lambdas": list(LAMBDAS),
        "criterion": "lowest mean final SWD", "n_replay": cfg.n_replay, "n_steps_per_task": cfg.n_steps_per_task,
        "tasks": list(cfg.tasks), "mean_final_swd": mean, "mean_forgetting": forgetting, "best": best,
        "bracketed": {m: best[m] not in (LAMBDAS[0], LAMBDAS[-1]) for m in best}, "runs": runs,
    }  # fmt: skip
    OUT_LAMBDA.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({"mean_final_swd": mean, "best": best}, indent=1))


if __name__ == "__main__":
    main_lambda() if sys.argv[1:] == ["lambda"] else main()
