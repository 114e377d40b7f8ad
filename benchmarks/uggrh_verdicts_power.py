"""What a larger sample buys for uggrh's six unstable rows (numbers of benchmarks/uggrh_verdicts_rule.md).

    python benchmarks/uggrh_verdicts_power.py

Effects and per-inner-seed sds of every deciding part are read from the S4 records on tuning base seeds 100-102
(benchmarks/uggrh_seeds.jsonl; sd = interval half-width x sqrt(4) / t(3), pooled as the rms over the three).
Each row's word is simulated with the chapter's own verdict functions on normal per-seed values (parts drawn
independently; the real training noise is heavy-tailed, so the probabilities are optimistic). Page projection:
the previous rule's cost model (11.05 s per inner seed, 1.2 s speed check, page = run + 3.4 s).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import stats

from explorables.uggrh.claims import gain_verdict, imbalance_verdict, module_verdict, robustness_verdict

IV = r"([+-]\d\.\d+) \[([+-]\d\.\d+), ([+-]\d\.\d+)\]"
LABELS = {
    "UGGRH is more accurate": ["gain16", "gain32", "gain64"],
    "UGGRH is more robust": ["rob16", "start16", "rob32", "start32", "rob64", "start64"],
    "Control: UGGRH falls less": ["robctl", "startctl"],
    "More robust than the control": ["robctl", "startctl"],
    "Each module matters: discriminator": ["ref", "ref_ctl"],
    "Each module matters: hash-aware": ["ga", "ga_ctl"],
    "UGGRH is robust to modality": ["imb0", "imb0_ctl", "imb50", "imb50_ctl", "imb100", "imb100_ctl"],
}


def parts() -> dict[str, tuple[float, float]]:
    found: dict[str, list[tuple[float, float]]] = {}
    t3 = stats.t.ppf(0.975, 3)
    for line in Path(__file__).with_name("uggrh_seeds.jsonl").read_text().splitlines():
        d = json.loads(line)
        if d["candidate"] != "S4":
            continue
        for r in d["rows"]:
            labels = next((v for k, v in LABELS.items() if r["claim"].startswith(k)), None)
            if labels:
                for lab, (m, lo, hi) in zip(labels, re.findall(IV, r["measured"]), strict=False):
                    found.setdefault(lab, []).append((float(m), (float(hi) - float(lo)) / t3))
    return {
        k: (float(np.mean([m for m, _ in v])), float(np.sqrt(np.mean([s**2 for _, s in v])))) for k, v in found.items()
    }


def draw(rng, p, name, n):
    m, s = p[name]
    return rng.normal(m, s, n)


ROWS = {
    "gain": lambda r, p, n: gain_verdict({b: draw(r, p, f"gain{b}", n) for b in (16, 32, 64)}),
    "robustness": lambda r, p, n: robustness_verdict(
        {b: (draw(r, p, f"rob{b}", n), np.zeros(n), draw(r, p, f"start{b}", n)) for b in (16, 32, 64)}),
    "robustness vs control": lambda r, p, n: robustness_verdict(
        {32: (draw(r, p, "robctl", n), np.zeros(n), draw(r, p, "startctl", n))}),
    "refinement": lambda r, p, n: module_verdict(draw(r, p, "ref", n), np.zeros(n)),
    "graph attention": lambda r, p, n: module_verdict(draw(r, p, "ga", n), np.zeros(n)),
    "imbalance": lambda r, p, n: imbalance_verdict({s: draw(r, p, f"imb{s}", n) for s in (0, 50, 100)}),
}  # fmt: skip


def main(sims: int = 4000) -> None:
    p = parts()
    for k, (m, s) in p.items():
        print(f"{k:10s} effect {m:+.3f} sd {s:.3f}")
    ns = (4, 5, 6, 8, 12, 20)
    print("\n| row | " + " | ".join(f"n = {n}" for n in ns) + " |")
    print("|---" * (len(ns) + 1) + "|")
    for name, f in ROWS.items():
        rng = np.random.default_rng(0)
        cells = []
        for n in ns:
            c = Counter(f(rng, p, n).split(":")[0] for _ in range(sims))
            cells.append(", ".join(f"{w} {k / sims:.2f}" for w, k in c.most_common(2)))
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| projected quiet cold page | " + " | ".join(f"{n * 11.05 + 1.2 + 3.4:.1f} s" for n in ns) + " |")


if __name__ == "__main__":
    main()
