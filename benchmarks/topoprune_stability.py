"""Chapter 18 (TopoPrune): do more seeds per run make the claims' verdicts agree across base seeds?

Follows the decision rule committed before it first ran, ``benchmarks/topoprune_stability_rule.md``:
candidates 12, 24 and 36 seeds per run (everything else the book preset), tuning base seeds 100-104
(never the seed study's 0-4). Per base seed it runs the book preset once with seeds 0..35 and no
diagnosis (no verdict reads it); each seed is the same deterministic function of (base seed, seed), so a
candidate of n seeds reads the first n seeds' parts, re-aggregated by ``experiment.aggregate`` and read
by ``claims.claims`` with the gates applied. It writes, per candidate, every row's word per base seed,
how many of the four claims agree on all five base seeds, the claims' paired intervals, and the projected
cold page time (20 s at 12 seeds plus the measured seconds per seed; under load on a shared 2-core
machine: a feasibility bound, not a tuning target).

Usage: ``python benchmarks/topoprune_stability.py [--base-seeds 100 101 102 103 104] [--seeds 36]
[--out benchmarks/topoprune_stability.md]``. About a minute per 12 seeds and base seed.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from _tuning import seeds_per_run_study, summary_rows, tuning_args, word_sections, write_report

HERE = Path(__file__).parent
CANDIDATES = (12, 24, 36)
PAGE_S_AT_12 = 20.0  # the page's cold time at 12 seeds (the rule's figure)
FEASIBLE_S = 50.0


def main() -> None:
    args = tuning_args(__doc__, [100, 101, 102, 103, 104], "/tmp/topoprune_stability",
                       HERE / "topoprune_stability.md", seeds=max(CANDIDATES))  # fmt: skip
    words, seconds = seeds_per_run_study(args, CANDIDATES)
    per_seed = sorted(seconds)[len(seconds) // 2] / args.seeds
    lines = [
        "# TopoPrune: more seeds per run, on tuning base seeds (decision rule: `topoprune_stability_rule.md`)",
        "",
        f"Written by `benchmarks/topoprune_stability.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; base seeds "
        f"{', '.join(map(str, args.base_seeds))}; one run of {args.seeds} seeds per base seed (book preset, no "
        f"diagnosis), candidates read off its first n seeds. Seconds per run (under load, 2 cores shared): "
        f"{', '.join(f'{s:.0f}' for s in seconds)}; load average at the end {os.getloadavg()[0]:.1f}.",
        "",
        "| seeds per run | projected page s | gates pass on every base seed | claims agreeing on every base seed |",
        "|---|---|---|---|",
    ]
    rows, stats = summary_rows(words, lambda n: PAGE_S_AT_12 + (n - 12) * per_seed)
    lines += rows
    outcome = {n: (page <= FEASIBLE_S and gates_ok, agree) for n, (page, gates_ok, agree, _) in stats.items()}
    base_agree = outcome[CANDIDATES[0]][1]
    better = [n for n, (ok, a) in outcome.items() if ok and a > base_agree]
    best = max(better, key=lambda n: (outcome[n][1], -n)) if better else None
    lines += ["", "Rule's outcome: " + (f"{best} seeds per run ({outcome[best][1]} claims agree against "
              f"{base_agree} at 12)" if best else f"no feasible candidate has more claims agreeing than 12 seeds "
              f"({base_agree}); the book preset stays at 12 seeds"), ""]  # fmt: skip
    lines += word_sections(words, lambda n: f"{n} seeds per run")
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
