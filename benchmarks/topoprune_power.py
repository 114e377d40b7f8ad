"""Chapter 18 (TopoPrune): do more paired repeats (seeds per run) per base seed decide every row's word?

Follows the decision rule committed before it first ran, ``benchmarks/topoprune_power_rule.md``: candidates
12, 24 and 36 seeds per run (everything else the book preset), fresh tuning base seeds 130-134 (never the seed
study's 0-4). Per base seed it runs the book preset once with seeds 0..35, no diagnosis and one process; each
seed is the same deterministic function of (base seed, seed), so a candidate of n seeds reads the first n
seeds' parts, re-aggregated by ``experiment.aggregate`` and read by ``claims.claims`` with the gates applied.
A candidate meets the rule's parts 1-3 when every gate passes on every base seed, every claim row reads one
word on all of them, and that word is not ``unclear`` for the rows whose pooled 60-seed interval excludes its
margin (robustness and transfer, stated in the rule). The page time (part 4) is measured separately, by the
notebook test, for a candidate that meets 1-3; this script reports a projection for each.

Usage: ``python benchmarks/topoprune_power.py [--base-seeds 130 131 132 133 134] [--seeds 36]
[--out benchmarks/topoprune_power.md]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).parent
CANDIDATES = (12, 24, 36)
PAGE_S_AT_12 = 19.3  # the page's latest cold time at 12 seeds (benchmarks/README.md)
FEASIBLE_S = 50.0
#: claim rows (by their order among the claims) whose pooled 60-seed interval excludes the margin (the rule)
MUST_DECIDE = ("Robust to noise", "Transfers across")
_FIRST_IV = re.compile(r"[^;:]{0,60}?[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]")


def read_candidate(cfg, summary: dict, n: int) -> list:
    """The claims table (gates applied) of the first ``n`` seeds of a run's parts."""
    from explorables.core.tables import apply_gates
    from explorables.topoprune.claims import claims
    from explorables.topoprune.experiment import TopoPruneResults, aggregate

    cfg_n = cfg.replace(seeds=tuple(cfg.seeds[:n]))
    sub = {**summary, "methods": aggregate(cfg_n, [summary[f"seed_{s}"] for s in cfg_n.seeds])}
    return apply_gates(claims(TopoPruneResults(cfg_n, sub, {})))


def judge(per_base: dict, must_decide: tuple[str, ...]) -> tuple[bool, list[str]]:
    """Parts 1-3 of the rule for one candidate: (met, the reasons it is not)."""
    rows = list(zip(*per_base.values(), strict=True))
    why = []
    if not all(r.outcome == "pass" for row in rows for r in row if r.kind == "gate"):
        why.append("a gate fails")
    for row in rows:
        if row[0].kind != "claim":
            continue
        words = {r.outcome for r in row}
        if len(words) > 1:
            why.append(f"“{row[0].claim[:30]}” splits ({', '.join(r.outcome for r in row)})")
        elif words == {"unclear"} and row[0].claim.startswith(must_decide):
            why.append(f"“{row[0].claim[:30]}” reads unclear (its pooled interval excludes the margin)")
    return not why, why


def main() -> None:
    from explorables.topoprune.experiment import TopoPruneConfig, run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-seeds", type=int, nargs="+", default=[130, 131, 132, 133, 134])
    parser.add_argument("--seeds", type=int, default=max(CANDIDATES))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/topoprune_power"))
    parser.add_argument("--out", type=Path, default=HERE / "topoprune_power.md")
    args = parser.parse_args()
    if min(args.base_seeds) < 100:
        raise ValueError(f"base-seeds must be >= 100 (0-4 are the seed study's), got {args.base_seeds}")
    args.cache.mkdir(parents=True, exist_ok=True)
    words: dict[int, dict[int, list]] = {n: {} for n in CANDIDATES if n <= args.seeds}
    seconds = []
    for base in args.base_seeds:
        cfg = TopoPruneConfig.preset("book", seed=base, seeds=tuple(range(args.seeds)), diagnose=False,
                                     processes=1)  # fmt: skip
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
    per_seed = sorted(seconds)[len(seconds) // 2] / args.seeds / 2  # the book preset splits seeds over 2
    lines = [
        "# TopoPrune: more paired repeats per base seed, on tuning base seeds (decision rule: "
        "`topoprune_power_rule.md`)",
        "",
        f"Written by `benchmarks/topoprune_power.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; base seeds "
        f"{', '.join(map(str, args.base_seeds))}; one run of {args.seeds} seeds per base seed (book preset, no "
        f"diagnosis, one process), candidates read off its first n seeds. Seconds per run (under load, 2 cores "
        f"shared by several helpers): {', '.join(f'{s:.0f}' for s in seconds)}; load average at the end "
        f"{os.getloadavg()[0]:.1f}.",
        "",
        "| seeds per run | projected page s | gates pass on every base seed | claim rows agreeing on every base "
        "seed | meets parts 1-3 | (information: parts 1-2 with only robustness required to decide) |",
        "|---|---|---|---|---|---|",
    ]
    met = {}
    for n, per_base in words.items():
        rows = list(zip(*per_base.values(), strict=True))
        gates_ok = all(r.outcome == "pass" for row in rows for r in row if r.kind == "gate")
        agree = sum(len({r.outcome for r in row}) == 1 for row in rows if row[0].kind == "claim")
        ok, why = judge(per_base, MUST_DECIDE)
        ok_info, _ = judge(per_base, MUST_DECIDE[:1])
        met[n] = (ok, why)
        page = PAGE_S_AT_12 + (n - 12) * per_seed
        lines.append(f"| {n} | {page:.0f} | {'yes' if gates_ok else 'NO'} | {agree} of 4 | "
                     f"{'yes' if ok else 'no: ' + '; '.join(why)} | {'yes' if ok_info else 'no'} |")  # fmt: skip
    fit = [n for n in CANDIDATES[1:] if n in met and met[n][0]]
    lines += ["", "Rule's outcome (parts 1-3): " + (
        f"the cheapest candidate meeting them is {fit[0]} seeds per run; part 4 (cold page ≤ {FEASIBLE_S:.0f} s, "
        f"measured by the notebook test) decides whether it is adopted" if fit else
        "no candidate with more seeds than 12 meets them; the book preset stays at 12 seeds"), ""]  # fmt: skip
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
                    first = _FIRST_IV.search(r.measured)
                    lines.append(
                        f"- base {b}, {r.claim[:40]}: {r.verdict[:150]} … first interval measured: "
                        f"{first.group(0).strip() if first else '-'}"
                    )
        lines.append("")
    args.out.write_text("\n".join(lines))
    print("\n".join(lines[:12]))


if __name__ == "__main__":
    main()
