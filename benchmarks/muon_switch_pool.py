"""Chapter 16's switch row pooled over base seeds: the per-draw log10(decayed baseline / switch) tail-loss ratios of
the book preset's ``switch_draws`` on each base seed, each base seed's 95% t-interval, and the pooled interval.

A check of the seed study, not part of the chapter's run: it reruns only the switch and the baseline (the same
functions the run calls, so the same numbers) and writes ``benchmarks/muon_switch_pool.md``. About 2.5 minutes of
CPU for eight base seeds.

    PYTHONPATH=src python benchmarks/muon_switch_pool.py 0,1,2,3,4 7,8,9
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from explorables.core.verdicts import interval
from explorables.muon.experiment import (
    BASELINE,
    TUNED,
    MuonConfig,
    _problem,
    _tuned_run,
    run_seed,
    switch_draws,
    tail_loss,
)


def log_ratios(base_seed: int) -> list[float]:
    """Per draw of the book preset at ``base_seed``: log10(baseline's tail loss / the switch's)."""
    cfg = MuonConfig.preset("book", seed=base_seed)
    out = []
    for s in switch_draws(cfg):
        p = _problem(cfg, seed=run_seed(cfg, s))
        t = {n: tail_loss(_tuned_run(cfg, p, n, getattr(cfg, TUNED[n])).loss, cfg.n_tail_steps)
             for n in ("Muon → GD", BASELINE)}  # fmt: skip
        out.append(float(np.log10(t[BASELINE] / t["Muon → GD"])))
    return out


def main(groups: list[list[int]]) -> str:
    lines = ["| base seeds | draws | log10(baseline / switch), 95% interval | ratio mean ± sd |", "|---|---|---|---|"]
    for group in groups:
        per = {b: log_ratios(b) for b in group}
        for b, v in per.items():
            r = 10 ** np.asarray(v)
            lines.append(f"| {b} | {len(v)} | {interval(v)} | {r.mean():.2f} ± {r.std(ddof=1):.2f} |")
        pool = [x for v in per.values() for x in v]
        r = 10 ** np.asarray(pool)
        name = ", ".join(map(str, group))
        lines.append(f"| pooled {name} | {len(pool)} | {interval(pool)} | {r.mean():.2f} ± {r.std(ddof=1):.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    args = sys.argv[1:] or ["0,1,2,3,4", "7,8,9"]
    table = main([[int(x) for x in a.split(",")] for a in args])
    Path(__file__).with_suffix(".md").write_text(table, encoding="utf-8")
    print(table)
