"""A more informative network input for the gate "room" (issue 42, eighteenth pass): candidates run as the package
runs them, the book preset with one field changed (that field, ``direction_hypotheses``, exists at commit 6204570 of
``ch/virtualflow18`` only: it was removed when not adopted), on tuning bases, every verdict read with the package's
``claims`` + ``apply_gates``. Rule: ``benchmarks/virtualflow_input_rule.md`` (committed before this ran).

The process CPU time of ``run`` (this process plus its spawned worker) is recorded for the cost projection.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_input.py --cand C1 --bases 157 158 \
        --out benchmarks/virtualflow_input.json  (bases 157-161 in the rule)
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from explorables.core.tables import apply_gates
from explorables.virtualflow import claims as vc
from explorables.virtualflow.experiment import VirtualFlowConfig, run

#: candidate -> the book preset's fields it changes (every network: flow, reflow, control, supervised)
CANDIDATES = {"C0": {}, "C1": {"direction_hypotheses": True}}


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cand", required=True, choices=sorted(CANDIDATES))
    ap.add_argument("--bases", type=int, nargs="+", required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if min(args.bases) < 157:
        raise SystemExit("this pass's tuning bases only (>= 157)")
    out = json.loads(args.out.read_text()) if args.out.exists() else {}
    for base in args.bases:
        key = f"{args.cand}/{base}"
        if key in out:
            continue
        cfg = VirtualFlowConfig.preset("book", seed=base).replace(**CANDIDATES[args.cand])
        c0, t0 = cpu_seconds(), time.perf_counter()
        res = run(cfg)
        cpu, wall = cpu_seconds() - c0, time.perf_counter() - t0
        rows = apply_gates(vc.claims(res))
        sup = vc.per_seed(res, "sisdr/supervised")
        pse = vc.per_seed(res, "sisdr/pseudo")
        out[key] = {
            "cpu_s": round(cpu, 1),
            "wall_s": round(wall, 1),
            "room_per_seed": [a - b for a, b in zip(sup, pse, strict=True)],
            "rows": {(r.name or r.claim[:40]): [r.outcome, r.measured[:200]] for r in rows},
        }
        args.out.write_text(json.dumps(out, indent=1) + "\n")
        r = out[key]["rows"]
        print(
            f"{key} cpu {cpu:.0f} s wall {wall:.0f} s room {r['room'][0]} "
            f"[{', '.join(f'{v:+.2f}' for v in out[key]['room_per_seed'])}]; "
            + "; ".join(f"{g} {r[g][0]}" for g in ("physical", "useful", "headroom", "curved")),
            flush=True,
        )


if __name__ == "__main__":
    main()
