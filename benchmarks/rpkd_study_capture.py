"""rpkd: the seed study exactly as ``python -m explorables seeds rpkd`` runs it, keeping per-arm accuracies.

The seed study keeps each row's verdict and measured text only; this wrapper records, on the way, what the
page's ``run_protocols`` returned for every base seed (teacher and every arm's accuracy per class count,
protocol and student seed) in ``rpkd_study_capture.jsonl``, then writes the study as the CLI does.

    PYTHONPATH=src python benchmarks/rpkd_study_capture.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from explorables.core.seed_study import run_study, write_study
from explorables.rpkd import claims as rpkd_claims
from explorables.rpkd.claims import per_seed

OUT = Path(__file__).parent / "rpkd_study_capture.jsonl"
_run_protocols = rpkd_claims.run_protocols


def _capturing(config, **kwargs):
    runs = _run_protocols(config, **kwargs)
    row = {"seed": config.seed, "student_width": config.student_width}
    for r in runs:
        tag = "standard" if r.config.protocol == "standard" else "few"
        grid = r.summary["class_grid"]
        row["teacher"] = {n: np.asarray(r.summary[f"C={n}"]["teacher_accuracy"]).tolist() for n in grid}
        row[f"accuracy_{tag}"] = {n: {a: per_seed(r, a, n).tolist() for a in r.config.arms} for n in grid}
    with OUT.open("a") as f:
        f.write(json.dumps(row) + "\n")
    return runs


def main() -> None:
    rpkd_claims.run_protocols = _capturing
    study = run_study("rpkd", progress=True)
    print(write_study(study))


if __name__ == "__main__":
    main()
