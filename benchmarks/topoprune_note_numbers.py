"""Chapter 18 (TopoPrune): the numbers issue 40's closing note asks for, from executed code.

1. The score's rank stability before -> after: Spearman of the first version's score (displacement under the
   descent, rescaled neighbourhoods, UMAP layout) and of TopoPrune's score now (total persistence of the
   neighbourhoods in the latent features, averaged over memberships) with itself under feature noise, another
   UMAP seed and the CNN's instead of the MLP's features. The diagnosis (``experiment.diagnose``) measures both
   on a run's first seed: this script runs the book preset's first seed on each of the seed study's base seeds
   0-4 (one seed per run, diagnosis on) and gives mean ± sd over the five. The committed seed study's gate
   rows give TopoPrune's Spearman over all 60 seeds (noise, extractor).
2. Accuracy at 70 % and 90 % pruning for every method, mean ± sd over seeds: read off the committed seed
   study's measured texts (per base seed: mean ± sd over its 12 seeds), pooled over the 5 × 12 seeds (the
   pooled sd from the per-base means and sds, the law of total variance) and per base seed.

It reads the seed study and runs no candidate: no verdict, threshold or preset reads its output.

Usage: ``PYTHONPATH=src python benchmarks/topoprune_note_numbers.py [--out benchmarks/topoprune_note_numbers.md]``
(about a minute under load).
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
#: the accuracy row's method names as its measured text writes them, then the control (its own rows)
NAMES = ("TopoPrune", "random", "distance to class centre", "D2-style graph", "coverage-centric (CCS)")
CONTROL = "averaged kNN radius (control)"
PERTURBATIONS = ("noise", "umap_seed", "extractor")


def mean_sd(text: str, name: str) -> tuple[float, float]:
    """``name 0.905 ± 0.015`` in ``text``, as (mean, sd)."""
    found = re.search(rf"{re.escape(name)} (\d\.\d+) ± (\d\.\d+)", text)
    if found is None:
        raise ValueError(f"{name!r} not found in {text[:120]!r}…")
    return float(found.group(1)), float(found.group(2))


def pooled(per_base: list[tuple[float, float]], n: int) -> tuple[float, float]:
    """Mean and sample sd over every seed, from each base seed's mean and sample sd over its ``n`` seeds."""
    means, sds = np.array([m for m, _ in per_base]), np.array([s for _, s in per_base])
    grand = float(means.mean())
    ss = float(((n - 1) * sds**2).sum() + (n * (means - grand) ** 2).sum())
    return grand, (ss / (n * len(per_base) - 1)) ** 0.5


def accuracy_table(study: dict) -> list[str]:
    """Accuracy at every rate and method, pooled over the study's seeds and per base seed (Markdown)."""
    acc, ctrl = (next(r for r in study["rows"] if r["claim"].startswith(w)) for w in ("High accuracy", "Control"))
    n = int(re.search(r"(\d+) seed\(s\)", acc["setting"]).group(1))
    cells: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for text, ctext in zip(acc["measured"], ctrl["measured"], strict=True):
        high, low = text.split("at 70% pruning")
        for name in NAMES:
            cells.setdefault((name, "90%"), []).append(mean_sd(high, name))
            cells.setdefault((name, "70%"), []).append(mean_sd(low, name))
        cells.setdefault((CONTROL, "70%"), []).append(mean_sd(low, CONTROL))
        own = low.split("its own kept set")[1]  # the control's own kept set at the highest rate
        cells.setdefault((CONTROL, "90%"), []).append(mean_sd(own, "pruning (no verdict reads it):"))
        cells.setdefault((CONTROL + ", control row", "90%"), []).append(mean_sd(ctext, "control"))
        cells.setdefault(("TopoPrune, control row", "90%"), []).append(mean_sd(ctext, "TopoPrune"))
        cells.setdefault(("full pool", "0%"), []).append(mean_sd(high, "full pool"))
    grid = "offset mean" if "offsets of the evenly spaced rule" in ctrl["setting"] else "centre offset"
    lines = [f"| method | pruning | pooled over {n * len(study['seeds'])} seeds | "
             + " | ".join(f"base {b}" for b in study["seeds"]) + " |",
             "|---|---|---|" + "---|" * len(study["seeds"])]  # fmt: skip
    for (name, rate), per in cells.items():
        m, s = pooled(per, n)
        note = f" ({grid})" if name.endswith("control row") else ""
        lines.append(f"| {name}{note} | {rate} | {m:.3f} ± {s:.3f} | "
                     + " | ".join(f"{a:.3f} ± {b:.3f}" for a, b in per) + " |")  # fmt: skip
    return lines


def gate_lines(study: dict) -> list[str]:
    """TopoPrune's (and the control's, the centre distance's) Spearman over every seed, from the gate rows."""
    lines = []
    for name, where in (("stable", "feature noise"), ("extractors", "MLP vs CNN features")):
        row = next(r for r in study["rows"] if r.get("name") == name)
        n = int(re.search(r"(\d+) seed\(s\)", row["setting"]).group(1))
        parts = []
        for label, pat in (("TopoPrune", "Spearman"), ("control", "control"), ("centre distance", "centre distance")):
            per = [mean_sd(text.split("within classes")[0].replace("control, averaged kNN radius", "control"), pat)
                   for text in row["measured"]]  # fmt: skip
            m, s = pooled(per, n)
            parts.append(f"{label} {m:.3f} ± {s:.3f}")
        lines.append(f"- {where} (gate `{name}`, pooled over {n * len(row['measured'])} seeds): " + "; ".join(parts))
    return lines


def diagnosis_lines(bases: list[int]) -> list[str]:
    """The first version's score and TopoPrune's, Spearman under each perturbation, on each base seed's first
    seed (book preset, diagnosis on)."""
    from explorables.topoprune.experiment import TopoPruneConfig, run

    found = {v: {p: [] for p in PERTURBATIONS} for v in ("first", "topoprune")}
    for base in bases:
        cfg = TopoPruneConfig.preset("book", seed=base)
        d = run(cfg.replace(seeds=cfg.seeds[:1], processes=1)).summary["methods"]["diagnosis"]
        for v in found:
            for p in PERTURBATIONS:
                found[v][p].append(d[v][p])
        print(
            f"base seed {base}: " + ", ".join(f"{v} {p} {d[v][p]:.3f}" for v in found for p in PERTURBATIONS),
            flush=True,
        )
    names = {"noise": "feature noise", "umap_seed": "another UMAP seed", "extractor": "CNN instead of MLP features"}
    lines = ["| perturbation | first version (before) | TopoPrune now (after) | per base seed, before -> after |",
             "|---|---|---|---|"]  # fmt: skip
    for p in PERTURBATIONS:
        b, a = np.array(found["first"][p]), np.array(found["topoprune"][p])
        lines.append(f"| {names[p]} | {b.mean():.3f} ± {b.std(ddof=1):.3f} | {a.mean():.3f} ± {a.std(ddof=1):.3f} | "
                     + ", ".join(f"{x:.3f} -> {y:.3f}" for x, y in zip(b, a, strict=True)) + " |")  # fmt: skip
    return lines


def main() -> None:
    from explorables.core.seed_study import load_study, source_hash

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "topoprune_note_numbers.md")
    args = parser.parse_args()
    study = load_study("topoprune")
    fresh = study["source_hash"] == source_hash("topoprune")
    lines = [
        "# TopoPrune: the numbers for issue 40's closing note",
        "",
        f"Written by `benchmarks/topoprune_note_numbers.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from the "
        f"committed seed study `data/seed_studies/topoprune.json` (base seeds {study['seeds']}; "
        f"{'fresh' if fresh else 'STALE'} against the package) and from the book preset's first seed on each "
        "base seed (diagnosis).",
        "",
        "## Rank stability of the score, before -> after (Spearman with itself; first seed of each base seed)",
        "",
        *diagnosis_lines(list(study["seeds"])),
        "",
        "TopoPrune's score now reads no UMAP layout, so another UMAP seed cannot move it (1 by construction).",
        "",
        "Over every seed of the study (the gates' figures):",
        "",
        *gate_lines(study),
        "",
        "## Accuracy at 70 % and 90 % pruning (MLP features select; mean ± sd over seeds)",
        "",
        *accuracy_table(study),
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
