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

import os
import re
from datetime import UTC, datetime
from pathlib import Path

from _tuning import agreement, seeds_per_run_study, tuning_args, word_sections, write_report

HERE = Path(__file__).parent
CANDIDATES = (12, 24, 36)
PAGE_S_AT_12 = 19.3  # the page's latest cold time at 12 seeds (benchmarks/README.md)
FEASIBLE_S = 50.0
#: claim rows (by their order among the claims) whose pooled 60-seed interval excludes the margin (the rule)
MUST_DECIDE = ("Robust to noise", "Transfers across")
_FIRST_IV = re.compile(r"[^;:]{0,60}?[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]")


def judge(per_base: dict, must_decide: tuple[str, ...]) -> tuple[bool, list[str]]:
    """Parts 1-3 of the rule for one candidate: (met, the reasons it is not)."""
    rows = list(zip(*per_base.values(), strict=True))
    why = []
    if not agreement(per_base)[0]:
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


def first_interval(base: int, r) -> str:
    """A claim's detail line: its verdict's start and the first interval its measured text gives."""
    first = _FIRST_IV.search(r.measured)
    return f"- base {base}, {r.claim[:40]}: {r.verdict[:150]} … first interval measured: " + (
        first.group(0).strip() if first else "-"
    )


def main() -> None:
    args = tuning_args(__doc__, [130, 131, 132, 133, 134], "/tmp/topoprune_power", HERE / "topoprune_power.md",
                       seeds=max(CANDIDATES))  # fmt: skip
    words, seconds = seeds_per_run_study(args, CANDIDATES, processes=1)
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
        gates_ok, agree, _ = agreement(per_base)
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
    lines += word_sections(words, lambda n: f"{n} seeds per run", first_interval)
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
