"""The gate "room" (issue 42, twenty-second pass): the candidates of ``benchmarks/virtualflow_room_rule5.md`` (committed
before this ran), the book preset with the candidate's fields, run as the package runs them on tuning bases 173-177,
every verdict read with the package's ``claims`` + ``apply_gates``. A ladder: a candidate stops at its first base with
a gate other than pass; the next candidate runs only if every earlier one failed; the first that passes on every base
is the pick (if its projected page time allows). Its candidates set the config field ``vm_on_axis``, which the
package had at d13e3bc only (removed when no candidate passed): rerun it against that commit's ``src``.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_room5.py --cands C1 C2 \
        --bases 173 174 175 176 177 --out benchmarks/virtualflow_room5.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path

from _tuning import cpu_seconds

from explorables.core.tables import apply_gates
from explorables.virtualflow import claims as vc
from explorables.virtualflow.experiment import VirtualFlowConfig, run

#: candidate -> the book preset's fields it changes
CANDIDATES = {
    "C1": {"vm_on_axis": True},
    "C2": {"vm_on_axis": True, "vm_distance": (0.35, 0.5)},
}
GATES = ("room", "physical", "useful", "headroom", "curved")
DEADLINE = dt.time(18, 17)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cands", nargs="+", required=True, choices=sorted(CANDIDATES))
    ap.add_argument("--bases", type=int, nargs="+", required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if min(args.bases) < 173:
        raise SystemExit("this pass's tuning bases only (>= 173)")
    out = json.loads(args.out.read_text()) if args.out.exists() else {}
    for cand in args.cands:
        passed = True
        for base in args.bases:
            key = f"{cand}/{base}"
            if key not in out:
                if dt.datetime.now(dt.UTC).time() > DEADLINE:
                    print(f"{key}: past the rule's deadline, the candidate counts as not passed", flush=True)
                    passed = False
                    break
                cfg = VirtualFlowConfig.preset("book", seed=base).replace(**CANDIDATES[cand])
                c0, t0 = cpu_seconds(), time.perf_counter()
                res = run(cfg)
                cpu, wall = cpu_seconds() - c0, time.perf_counter() - t0
                rows = apply_gates(vc.claims(res))
                sup, pse = vc.per_seed(res, "sisdr/supervised"), vc.per_seed(res, "sisdr/pseudo")
                out[key] = {
                    "cpu_s": round(cpu, 1),
                    "wall_s": round(wall, 1),
                    "finished_utc": dt.datetime.now(dt.UTC).strftime("%H:%M:%S"),
                    "room_per_seed": [a - b for a, b in zip(sup, pse, strict=True)],
                    "pseudo_per_seed": pse,
                    "rows": {(r.name or r.claim[:40]): [r.outcome, r.measured[:300]] for r in rows},
                }
                args.out.write_text(json.dumps(out, indent=1) + "\n")
            r = out[key]["rows"]
            print(
                f"{key} cpu {out[key]['cpu_s']:.0f} s wall {out[key]['wall_s']:.0f} s room "
                f"[{', '.join(f'{v:+.2f}' for v in out[key]['room_per_seed'])}]; "
                + "; ".join(f"{g} {r[g][0]}" for g in GATES)
                + " | claims: "
                + "; ".join(f"{k[:30]} {v[0]}" for k, v in r.items() if k not in GATES),
                flush=True,
            )
            if any(r[g][0] != "pass" for g in GATES):
                passed = False
                break
        print(f"{cand}: {'PASSES on every base' if passed else 'not passed'}", flush=True)
        if passed:
            print(f"Rule picks {cand}: {CANDIDATES[cand]}", flush=True)
            return
    print("No candidate passes: the rule keeps what we have", flush=True)


if __name__ == "__main__":
    main()
