"""A scene where the talker is not the quieter source (issue 42, nineteenth pass): the candidates of
``benchmarks/virtualflow_scene_rule.md`` (committed before this ran) run as the package runs them, the book preset with
the candidate's scene fields, on tuning bases 162-166, every verdict read with the package's ``claims`` +
``apply_gates``. A ladder: a candidate stops at its first base with a gate other than pass, the next candidate runs
only if every earlier one failed, and the first that passes on every base is the pick.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_scene.py --cands C1 C2 C3 \
        --bases 162 163 164 165 166 --out benchmarks/virtualflow_scene.json
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from _tuning import load_record, record_run, room_text, save_record

from explorables.virtualflow.experiment import VirtualFlowConfig

#: candidate -> the book preset's fields it changes (scene only: the networks, steps and rooms stay)
CANDIDATES = {
    "C1": {"snr_range": (-5.0, 5.0)},
    "C2": {"snr_range": (1.0, 11.0)},
    "C3": {"snr_range": (1.0, 11.0), "n_mics": 3},
}
GATES = ("room", "physical", "useful", "headroom", "curved")
DEADLINE = dt.time(13, 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cands", nargs="+", required=True, choices=sorted(CANDIDATES))
    ap.add_argument("--bases", type=int, nargs="+", required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if min(args.bases) < 162:
        raise SystemExit("this pass's tuning bases only (>= 162)")
    out = load_record(args.out)
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
                out[key] = record_run(cfg, measured_chars=300, stamp=True)[0]
                save_record(args.out, out)
            r = out[key]["rows"]
            print(
                f"{key} cpu {out[key]['cpu_s']:.0f} s wall {out[key]['wall_s']:.0f} s room {room_text(out[key])}; "
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
