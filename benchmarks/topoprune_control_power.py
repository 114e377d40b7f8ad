"""Chapter 18 (TopoPrune): does averaging the control comparison over K grid offsets give the control row power?

Follows the decision rule committed before it first ran, ``benchmarks/topoprune_control_power_rule.md``:
candidates K = 1 (the book preset now), 3 and 9 offsets of the evenly spaced rule, for the control row only
(TopoPrune and the control, MLP features, highest rate), tuning base seeds 140-144 (never the seed study's 0-4,
nor base seeds used before). Per base seed it runs the book preset once with ``n_control_offsets = 9``, no
diagnosis (no verdict reads it) and one process (the same numbers for any count); the offsets nest (1 ⊂ 3 ⊂ 9),
so each candidate re-averages the per-offset accuracies (``control_by_offset``) of the same run, re-aggregated
by ``experiment.aggregate`` and read by ``claims.claims`` with the gates applied. On the first base seed it
checks, against a run with K = 1 (two seeds), that every other accuracy is the same and that the control row's
accuracies read off at K = 1 are the same. It times every training and writes, per candidate, every row's word
per base seed, the control row's intervals and half-widths, and the projected cold page time.

Usage: ``python benchmarks/topoprune_control_power.py [--base-seeds 140 141 142 143 144]
[--out benchmarks/topoprune_control_power.md]``. About two minutes per base seed under load.
"""

from __future__ import annotations

import copy
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from _tuning import cached, claims_table, timed_run, tuning_args, word_sections, write_report

HERE = Path(__file__).parent
CANDIDATES = (1, 3, 9)
PAGE_S = 18.8  # the page's latest quiet cold time, the rule's figure
FEASIBLE_S = 50.0
HALF_WIDTH = 0.005  # the rule's power threshold: median control half-width over the tuning bases
#: extra trained members per seed for each offset beyond the first: 2 methods x 1 view x 2 initialisations
EXTRA_PER_OFFSET = 2 * 1 * 2


def candidate(cfg, summary: dict, k: int) -> tuple:
    """(the config with ``n_control_offsets = k``, the run's summary with the control pair's per-offset
    accuracies cut to the ``k`` nested offsets and re-aggregated)."""
    from explorables.topoprune.experiment import aggregate
    from explorables.topoprune.selection import coverage_offsets

    every = coverage_offsets(cfg.n_control_offsets)
    pick = [every.index(u) for u in coverage_offsets(k)]
    cfg_k = cfg.replace(n_control_offsets=k)
    parts = []
    for s in cfg.seeds:
        p = copy.deepcopy(summary[f"seed_{s}"])
        p["control_by_offset"] = {m: [a[i] for i in pick] for m, a in p["control_by_offset"].items()}
        parts.append(p)
    sub = {**summary, **{f"seed_{s}": p for s, p in zip(cfg.seeds, parts, strict=True)},
           "methods": aggregate(cfg_k, parts)}  # fmt: skip
    return cfg_k, sub


def control_interval(cfg_k, sub: dict):
    """The control row's paired interval (TopoPrune − control, per seed)."""
    from explorables.core.verdicts import interval

    acc, top = sub["methods"]["control_accuracy"], str(max(cfg_k.prune_grid))
    return interval(np.asarray(acc["topoprune"][top]["values"]) - np.asarray(acc["radius"][top]["values"]))


def main() -> None:
    from explorables.topoprune import experiment
    from explorables.topoprune.experiment import TopoPruneConfig, run

    args = tuning_args(__doc__, [140, 141, 142, 143, 144], "/tmp/topoprune_control_power",
                       HERE / "topoprune_control_power.md")  # fmt: skip
    trained = {"members": 0, "seconds": 0.0}
    inner = experiment.train_on_subsets

    def timed(split, subsets, **kw):  # count every trained member and its time (this process only)
        t = time.perf_counter()
        out = inner(split, subsets, **kw)
        trained["seconds"] += time.perf_counter() - t
        trained["members"] += len(subsets)
        return out

    def costed_run(cfg) -> dict:  # the run's summary and seconds, and the training cost per member
        trained.update(members=0, seconds=0.0)
        record = timed_run(run, cfg)
        return {**record, "cost": trained["seconds"] / trained["members"]}

    experiment.train_on_subsets = timed
    words: dict[int, dict[int, list]] = {k: {} for k in CANDIDATES}
    ivs: dict[int, dict[int, object]] = {k: {} for k in CANDIDATES}
    seconds, per_member = [], []
    check = ""
    for i, base in enumerate(args.base_seeds):
        cfg = TopoPruneConfig.preset("book", seed=base, n_control_offsets=max(CANDIDATES), diagnose=False,
                                     processes=1)  # fmt: skip
        summary, secs, cost = cached(args.cache / f"base_{base}.json", lambda cfg=cfg: costed_run(cfg))
        seconds.append(secs)
        per_member.append(cost)
        if i == 0:  # the other accuracies, and the control row read off at K = 1, against a run with K = 1
            one = run(cfg.replace(n_control_offsets=1, seeds=cfg.seeds[:2])).summary
            _, read = candidate(cfg.replace(seeds=cfg.seeds[:2]), {k: v for k, v in summary.items()
                                                                     if k != "methods"}, 1)  # fmt: skip
            gap = max(abs(one[f"seed_{s}"][key][v][m][r] - summary[f"seed_{s}"][key][v][m][r])
                      for s in cfg.seeds[:2] for key in ("accuracy", "ends") for v in one[f"seed_{s}"][key]
                      for m in one[f"seed_{s}"][key][v] for r in one[f"seed_{s}"][key][v][m])  # fmt: skip
            cgap = max(abs(one["methods"]["control_accuracy"][m][r]["values"][j]
                           - read["methods"]["control_accuracy"][m][r]["values"][j])
                       for m in one["methods"]["control_accuracy"] for r in one["methods"]["control_accuracy"][m]
                       for j in range(2))  # fmt: skip
            check = (f"A run with K = 1 against the K = 9 run (base seed {base}, seeds 0-1): largest gap of every "
                     f"other accuracy (every method, view, rate, and the ends) {gap:.1e}; of the control row's "
                     f"accuracies read off at K = 1 {cgap:.1e}")  # fmt: skip
            print(check, flush=True)
        for k in CANDIDATES:
            cfg_k, sub = candidate(cfg, summary, k)
            words[k][base] = claims_table(cfg_k, sub)
            ivs[k][base] = control_interval(cfg_k, sub)
        print(
            f"base seed {base}: {secs:.0f} s, {cost * 1e3:.1f} ms per member; control at K = 1/3/9: "
            + ", ".join(ivs[k][base].format(3, True) for k in CANDIDATES),
            flush=True,
        )
    cost = float(np.median(per_member))
    n_seeds = len(TopoPruneConfig.preset("book").seeds)

    def page(k: int) -> float:
        return PAGE_S + (k - 1) * EXTRA_PER_OFFSET * cost * n_seeds / 2

    def others(rows: list) -> list[str]:  # every row's word but the control row's
        return [r.outcome for r in rows if not r.claim.startswith("Control")]

    lines = [
        "# TopoPrune: the control comparison averaged over K grid offsets, on tuning base seeds",
        "",
        "Decision rule: `topoprune_control_power_rule.md` (committed before this ran). "
        f"Written by `benchmarks/topoprune_control_power.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; base seeds "
        f"{', '.join(map(str, args.base_seeds))}; one run with K = 9 per base seed (book preset, no diagnosis, one "
        f"process), candidates read off its nested offsets. Seconds per run (2 cores shared with other helpers): "
        f"{', '.join(f'{s:.0f}' for s in seconds)}; training cost per member (median) {cost * 1e3:.1f} ms; load "
        f"average at the end {os.getloadavg()[0]:.1f}. {check}.",
        "",
        "| K | projected page s | gates pass on every base seed | control row's words | median half-width | "
        "other rows as K = 1 | meets the rule |",
        "|---|---|---|---|---|---|---|",
    ]
    met = {}
    for k in CANDIDATES:
        per_base = words[k]
        gates_ok = all(r.outcome == "pass" for b in per_base for r in per_base[b] if r.kind == "gate")
        control = [next(r for r in per_base[b] if r.claim.startswith("Control")).outcome for b in per_base]
        others_same = all(others(per_base[b]) == others(words[1][b]) for b in per_base)
        hw = float(np.median([ivs[k][b].half_width for b in per_base]))
        met[k] = gates_ok and len(set(control)) == 1 and hw <= HALF_WIDTH and others_same and page(k) <= FEASIBLE_S
        lines.append(
            f"| {k} | {page(k):.0f} | {'yes' if gates_ok else 'NO'} | {', '.join(control)} | {hw:.4f} | "
            f"{'yes' if others_same else 'NO'} | {'yes' if met[k] else 'no'} |"
        )
    chosen = [k for k in CANDIDATES[1:] if met[k]]
    lines += ["", "Rule's outcome: " + (f"K = {chosen[0]} (the smallest candidate meeting parts 1-5)" if chosen
              else "no candidate meets the rule: keep what we have (K = 1)"), "",
              "## The control row's paired intervals (TopoPrune − control, 90 %, MLP features)", "",
              "| K | " + " | ".join(f"base {b}" for b in args.base_seeds) + " |",
              "|---|" + "---|" * len(args.base_seeds)]  # fmt: skip
    for k in CANDIDATES:
        lines.append(f"| {k} | " + " | ".join(f"{ivs[k][b].format(3, True)} (±{ivs[k][b].half_width:.4f})"
                                             for b in args.base_seeds) + " |")  # fmt: skip
    lines.append("")
    lines += word_sections(words, lambda k: f"K = {k}")
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
