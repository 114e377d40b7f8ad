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

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).parent
CANDIDATES = (12, 24, 36)
PAGE_S_AT_12 = 20.0  # the page's cold time at 12 seeds (the rule's figure)
FEASIBLE_S = 50.0


def read_candidate(cfg, summary: dict, n: int) -> list:
    """The claims table (gates applied) of the first ``n`` seeds of a run's parts."""
    from explorables.core.tables import apply_gates
    from explorables.topoprune.claims import claims
    from explorables.topoprune.experiment import TopoPruneResults, aggregate

    cfg_n = cfg.replace(seeds=tuple(cfg.seeds[:n]))
    sub = {**summary, "methods": aggregate(cfg_n, [summary[f"seed_{s}"] for s in cfg_n.seeds])}
    return apply_gates(claims(TopoPruneResults(cfg_n, sub, {})))


def main() -> None:
    from explorables.topoprune.experiment import TopoPruneConfig, run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-seeds", type=int, nargs="+", default=[100, 101, 102, 103, 104])
    parser.add_argument("--seeds", type=int, default=max(CANDIDATES))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/topoprune_stability"))
    parser.add_argument("--out", type=Path, default=HERE / "topoprune_stability.md")
    args = parser.parse_args()
    if min(args.base_seeds) < 100:
        raise ValueError(f"base-seeds must be >= 100 (0-4 are the seed study's), got {args.base_seeds}")
    args.cache.mkdir(parents=True, exist_ok=True)
    words: dict[int, dict[int, list]] = {n: {} for n in CANDIDATES if n <= args.seeds}
    seconds = []
    for base in args.base_seeds:
        cfg = TopoPruneConfig.preset("book", seed=base, seeds=tuple(range(args.seeds)), diagnose=False)
        cache = args.cache / f"base_{base}_{args.seeds}.json"
        if cache.exists():
            summary, secs = json.loads(cache.read_text()).values()
        else:
            t = time.perf_counter()
            summary = run(cfg).summary
            secs = time.perf_counter() - t
            cache.write_text(json.dumps({"summary": summary, "seconds": secs}, default=float))
        seconds.append(secs)
        for n in words:
            words[n][base] = read_candidate(cfg, summary, n)
        print(f"base seed {base}: {secs:.0f} s", flush=True)
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
    outcome = {}
    for n, per_base in words.items():
        rows = list(zip(*per_base.values(), strict=True))
        gates_ok = all(r.outcome == "pass" for row in rows for r in row if r.kind == "gate")
        claim_rows = [row for row in rows if row[0].kind == "claim"]
        agree = sum(len({r.outcome for r in row}) == 1 for row in claim_rows)
        page = PAGE_S_AT_12 + (n - 12) * per_seed
        outcome[n] = (page <= FEASIBLE_S and gates_ok, agree)
        lines.append(f"| {n} | {page:.0f} | {'yes' if gates_ok else 'NO'} | {agree} of {len(claim_rows)} |")
    base_agree = outcome[CANDIDATES[0]][1]
    better = [n for n, (ok, a) in outcome.items() if ok and a > base_agree]
    best = max(better, key=lambda n: (outcome[n][1], -n)) if better else None
    lines += ["", "Rule's outcome: " + (f"{best} seeds per run ({outcome[best][1]} claims agree against "
              f"{base_agree} at 12)" if best else f"no feasible candidate has more claims agreeing than 12 seeds "
              f"({base_agree}); the book preset stays at 12 seeds"), ""]  # fmt: skip
    for n, per_base in words.items():
        lines += [f"## {n} seeds per run", "", "| row | " + " | ".join(f"base {b}" for b in per_base) + " |",
                  "|---|" + "---|" * len(per_base)]  # fmt: skip
        for row in zip(*per_base.values(), strict=True):
            lines.append(f"| {row[0].kind} {row[0].name}: {row[0].claim[:50]} | "
                         + " | ".join(r.outcome for r in row) + " |")  # fmt: skip
        lines.append("")
        for b, rows in per_base.items():
            for r in rows:
                if r.kind == "claim":
                    lines.append(f"- base {b}, {r.claim[:40]}: {r.verdict[:110]} … measured: …{r.measured[-60:]}")
        lines.append("")
    args.out.write_text("\n".join(lines))
    print("\n".join(lines[:12]))


if __name__ == "__main__":
    main()
