"""rpkd: the claims rows of each base seed from the study capture's rows (``rpkd_study_capture*.jsonl``).

The seed study writes its verdicts only when every base seed has finished; the capture wrapper
(``rpkd_study_capture.py``) writes each seed's per-arm, per-seed accuracies, probe accuracies and teacher numbers as
it finishes. This rebuilds the two results of each captured seed (the summary fields the claims read) and prints the
package's own rows: the verdicts the study will write for that seed.

    PYTHONPATH=src python benchmarks/rpkd_study_verdicts.py rpkd_study_capture_bnfix.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from explorables.core.tables import apply_gates
from explorables.rpkd.claims import claims
from explorables.rpkd.experiment import RPKDConfig, RPKDResults, standard_protocol


def results_of(row: dict) -> tuple[RPKDResults, RPKDResults]:
    cfg = RPKDConfig.preset("book", seed=row["seed"])
    out = []
    for tag, c in (("few", cfg), ("standard", standard_protocol(cfg))):
        acc = row[f"accuracy_{tag}"]
        summary = {
            "class_grid": list(c.class_grid),
            "arms": list(c.arms),
            "control": "feature_match",
            "protocol": c.protocol,
            "n_labelled": c.n_labelled if tag == "standard" else cfg.n_labelled,
        }
        for n in c.class_grid:
            k = str(n)
            probe = row["probe_per_seed"][k]
            summary[f"C={n}"] = {
                "n_classes": n,
                "teacher_accuracy": row["teacher"][k],
                "probe": {t: float(np.mean(v)) for t, v in probe.items()},
                "probe_per_seed": probe,
                "dead_channels": row["teacher_extra"][k]["dead_channels"],
                "teacher_channels": 16,
                "teacher_train_accuracy": row["teacher_extra"][k]["teacher_train_accuracy"],
                "teacher_soft_max": row["teacher_extra"][k]["teacher_soft_max"],
                "accuracy": {
                    a: {"per_seed": v, "mean": float(np.mean(v)), "sd": float(np.std(v, ddof=1))}
                    for a, v in acc[k].items()
                },
            }
        out.append(RPKDResults(c, summary, {}))
    return out[0], out[1]


def main(path: str) -> None:
    for line in (Path(__file__).parent / path).read_text().splitlines():
        row = json.loads(line)
        few, std = results_of(row)
        print(f"base seed {row['seed']}:")
        for r in apply_gates(claims(few, std)):
            print(f"  [{r.kind}] {r.name or r.claim[:70]}: {r.verdict.split(':')[0]}")


if __name__ == "__main__":
    main(sys.argv[1])
