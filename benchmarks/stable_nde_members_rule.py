"""Chapter 08 (stable_nde), issue 46, seventh pass: more members per run (``stable_nde_members_rule.md``).

``--diagnose``: the book preset with ``--members`` members on tuning base seeds; per stability row, the
per-member log ratio of the metric (complete over the baseline), its mean, sd, the 95% t-interval's half-width and
where the interval's high end sits against log(STABILITY_RATIO); for the first 5 members and for all of them.
``--rule``: the pre-registered rule of ``stable_nde_members_rule.md`` (candidates x fresh tuning base seeds).
One JSON line per run; base seeds below 100 are refused.
Usage: ``PYTHONPATH=src python benchmarks/stable_nde_members_rule.py --diagnose --members 10 --base-seeds 100 101``.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from explorables.core.tables import apply_gates
from explorables.core.verdicts import interval
from explorables.stable_nde import StableNDEConfig, run
from explorables.stable_nde.claims import STABILITY_RATIO, claims, secondary_metric
from explorables.stable_nde.experiment import CONTROL

#: the rule's candidates: members per run (the config's ``seeds`` = 0 .. M-1); 5 is the book preset today
CANDIDATES = (5, 8, 10, 12)
RULE_SEEDS = (130, 131, 132, 133, 134, 135)
MOVING = {  # the four rows that moved over base seeds 0-4 in the committed study: (system, baseline)
    "one-step (pendulum)": ("pendulum", "one_step"),
    "one-step (lorenz)": ("lorenz", "one_step"),
    "3x control (pendulum)": ("pendulum", CONTROL),
    "3x control (lorenz)": ("lorenz", CONTROL),
}


def one(base_seed: int, members: int) -> dict:
    if base_seed < 100:
        raise ValueError(f"base_seed must be >= 100 (tuning seeds), got {base_seed}")
    cfg = StableNDEConfig.preset("book", seed=base_seed, seeds=tuple(range(members)))
    start = time.perf_counter()
    res = run(cfg)
    secs = time.perf_counter() - start
    table = apply_gates(claims(res))
    words = {(r.name if r.kind == "gate" else r.claim)[:90]: r.outcome for r in table}
    logs = {}
    for label, (system, base) in MOVING.items():
        key = secondary_metric(system)[0]
        st = res.summary[system]["stability"]
        logs[label] = [math.log(a / b) for a, b in zip(st["complete"][key]["per_seed"], st[base][key]["per_seed"],
                                                       strict=True)]
    return {"base_seed": base_seed, "members": members, "seconds": round(secs, 1), "words": words, "log_ratio": logs}


def describe(logs: list[float]) -> str:
    iv = interval(logs)
    half = iv.high - iv.mean
    return (f"n {len(logs)} mean {iv.mean:+.2f} (ratio {math.exp(iv.mean):.2f}) sd {np.std(logs, ddof=1):.2f} "
            f"half-width {half:.2f} high {iv.high:+.2f} vs log(0.9) {math.log(STABILITY_RATIO):+.2f} "
            f"-> {'yes' if iv.high <= math.log(STABILITY_RATIO) else 'unclear/no'}")


def diagnose(seeds, members: int) -> None:
    for b in seeds:
        row = one(b, members)
        print(json.dumps(row), flush=True)
        for label, logs in row["log_ratio"].items():
            print(f"# seed {b} {label}: first 5: {describe(logs[:5])} | all {members}: {describe(logs)}", flush=True)


def rule() -> None:
    moving_words = {}
    for m in CANDIDATES:
        rows = []
        for b in RULE_SEEDS:
            row = one(b, m)
            print(json.dumps(row), flush=True)
            rows.append(row)
        names = list(rows[0]["words"])
        moving = [n for n in names if len({r["words"][n] for r in rows}) > 1]
        gates_fail = [n for n in names if any(r["words"][n] == "fail" for r in rows)]
        passed = not moving and not gates_fail
        moving_words[m] = len(moving)
        print(f"# M={m}: {'PASS' if passed else 'FAIL'}; mean seconds {np.mean([r['seconds'] for r in rows]):.1f}; "
              f"rows that move over seeds {list(RULE_SEEDS)}: {moving or 'none'}; gates failing: {gates_fail or 'none'}",
              flush=True)
        for n in moving:
            print(f"#   {n}: {[r['words'][n] for r in rows]}", flush=True)
        if passed:
            print(f"# RULE: ADOPT M={m} (the cheapest candidate that passes)", flush=True)
            return
    best = min(moving_words, key=lambda k: (moving_words[k], k))
    if moving_words[best] < moving_words[5]:
        print(f"# RULE: none passes; ADOPT M={best} (fewest moving rows, {moving_words[best]})", flush=True)
    else:
        print("# RULE: none passes and none moves fewer rows than M=5; KEEP M=5", flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--diagnose", action="store_true")
    p.add_argument("--rule", action="store_true")
    p.add_argument("--members", type=int, default=10)
    p.add_argument("--base-seeds", type=int, nargs="+", default=[100, 101, 102, 103, 104])
    a = p.parse_args()
    if a.diagnose:
        diagnose(a.base_seeds, a.members)
    if a.rule:
        rule()
