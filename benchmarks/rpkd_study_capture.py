"""rpkd: the seed study exactly as ``python -m explorables seeds rpkd`` runs it, keeping per-arm accuracies.

The seed study keeps each row's verdict and measured text only; this wrapper records, on the way, what the
page's ``run_protocols`` returned for every base seed (teacher and every arm's accuracy per class count,
protocol and student seed) in ``rpkd_study_capture.jsonl``, then writes the study as the CLI does.

    PYTHONPATH=src python benchmarks/rpkd_study_capture.py
    PYTHONPATH=src python benchmarks/rpkd_study_capture.py --before 8   # the same runs at the old width, no study
    PYTHONPATH=src python benchmarks/rpkd_study_capture.py --summary    # per-arm table, before and after
    PYTHONPATH=src python benchmarks/rpkd_study_capture.py --out rpkd_study_capture_bnfix.jsonl   # rows elsewhere
    PYTHONPATH=src python benchmarks/rpkd_study_capture.py --compare A.jsonl B.jsonl   # mean ± sd table, A -> B

``--before W`` reruns the page's ``run_protocols`` on the base seeds with ``student_width = W`` (the preset
before ``rpkd_width_rule.md`` decided; run after the decision, it reads nothing back into it) into
``rpkd_study_before.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from explorables.core.seed_study import run_study, write_study
from explorables.rpkd import claims as rpkd_claims
from explorables.rpkd.claims import per_seed

OUT = Path(__file__).parent / "rpkd_study_capture.jsonl"
BEFORE = Path(__file__).parent / "rpkd_study_before.jsonl"
#: the study with 3 student seeds per run (before ``rpkd_seeds_rule.md``), kept for the before -> after table
THREE_SEEDS = Path(__file__).parent / "rpkd_study_capture_3seeds.jsonl"
ARMS = ("ce", "kd", "ofa", "rpkd", "feature_match")
_run_protocols = rpkd_claims.run_protocols


def _capturing(config, out: Path = OUT, **kwargs):
    runs = _run_protocols(config, **kwargs)
    row = {"seed": config.seed, "student_width": config.student_width, "n_seeds": len(config.seeds)}
    for r in runs:
        tag = "standard" if r.config.protocol == "standard" else "few"
        grid = r.summary["class_grid"]
        row["teacher"] = {n: np.asarray(r.summary[f"C={n}"]["teacher_accuracy"]).tolist() for n in grid}
        row["teacher_extra"] = {n: {k: r.summary[f"C={n}"].get(k) for k in (
            "dead_channels", "teacher_train_accuracy", "teacher_soft_max")} for n in grid}
        row["probe_per_seed"] = {n: r.summary[f"C={n}"]["probe_per_seed"] for n in grid}
        row[f"accuracy_{tag}"] = {n: {a: per_seed(r, a, n).tolist() for a in r.config.arms} for n in grid}
    with out.open("a") as f:
        f.write(json.dumps(row) + "\n")
    return runs


def summary() -> None:
    print("| protocol | C | width | teacher | CE | KD | OFA | RPKD | control |\n|---|---|---|---|---|---|---|---|---|")
    rows = [json.loads(line) for p in (BEFORE, THREE_SEEDS, OUT) if p.exists() for line in p.read_text().splitlines()]
    for r in rows:
        r.setdefault("n_seeds", 3)
    for tag in ("standard", "few"):
        for n in ("10", "5", "2"):
            for w, k in sorted({(r["student_width"], r["n_seeds"]) for r in rows}):
                rs = [r for r in rows if (r["student_width"], r["n_seeds"]) == (w, k)]
                cells = [np.array([np.mean(r["teacher"][n]) for r in rs])]
                cells += [np.array([np.mean(r[f"accuracy_{tag}"][n][a]) for r in rs])
                          if a in rs[0][f"accuracy_{tag}"][n] else None for a in ARMS]
                print(f"| {tag} | {n} | {w} ({k} seeds) | " + " | ".join(
                    "—" if c is None else f"{c.mean():.3f} ± {c.std(ddof=1):.3f}" for c in cells) + " |")


def compare(before: Path, after: Path) -> None:
    """Per protocol and C: teacher and every arm, mean ± sd over base seeds of the per-seed mean, before -> after."""
    runs = [[json.loads(line) for line in p.read_text().splitlines()] for p in (before, after)]
    print("| protocol | C | teacher | CE | KD | OFA | RPKD | control |\n|---|---|---|---|---|---|---|---|")
    for tag in ("standard", "few"):
        for n in ("10", "5", "2"):
            cells = []
            for arm in ("teacher", *ARMS):
                parts = []
                for rs in runs:
                    if arm == "teacher":
                        v = np.array([np.mean(r["teacher"][n]) for r in rs])
                    elif arm in rs[0][f"accuracy_{tag}"][n]:
                        v = np.array([np.mean(r[f"accuracy_{tag}"][n][arm]) for r in rs])
                    else:
                        v = None
                    parts.append("—" if v is None else f"{v.mean():.3f} ± {v.std(ddof=1):.3f}")
                cells.append(" → ".join(parts))
            print(f"| {tag} | {n} | " + " | ".join(cells) + " |")


def main() -> None:
    import dataclasses
    import sys

    from explorables.rpkd.experiment import RPKDConfig

    if "--summary" in sys.argv:
        summary()
        return
    if "--compare" in sys.argv:
        i = sys.argv.index("--compare")
        compare(*(Path(__file__).parent / a for a in sys.argv[i + 1: i + 3]))
        return
    if "--before" in sys.argv:
        width = int(sys.argv[sys.argv.index("--before") + 1])
        for seed in (0, 1, 2, 3, 4):
            _capturing(dataclasses.replace(RPKDConfig.preset("book", seed=seed), student_width=width), out=BEFORE)
            print("before: base seed", seed, "done", flush=True)
        return
    if "--out" in sys.argv:  # e.g. rpkd_study_capture_bnfix.jsonl: keep each study's rows apart
        global OUT
        OUT = Path(__file__).parent / sys.argv[sys.argv.index("--out") + 1]
    rpkd_claims.run_protocols = lambda config, **kw: _capturing(config, out=OUT, **kw)
    study = run_study("rpkd", progress=True)
    print(write_study(study))


if __name__ == "__main__":
    main()
