"""Chapter 08 (stable_nde), issue 46, fifth pass: the pre-registered rule of ``stable_nde_room_rule.md``.

Screens four Lorenz settings (a coarser ``lorenz_dt`` with lower observation noise) on tuning base seeds
100-102 with the chapter's unchanged gates (``claims.reference_gate``, ``claims.stability_gate``) through the
Lorenz harness ``run_one`` of ``stable_nde_lyapunov_rule.py``, then confirms the survivors in order on fresh
tuning base seeds 111-115 (at most two), and prints the decision. Base seeds below 100 are refused.

Usage: ``PYTHONPATH=src python benchmarks/stable_nde_room_rule.py`` (``--stage screen`` or ``--stage confirm
--candidate B`` to run one stage). One thread.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np

from explorables.stable_nde.claims import reference_gate, stability_gate

_spec = importlib.util.spec_from_file_location("lyap_rule", Path(__file__).with_name("stable_nde_lyapunov_rule.py"))
_mod = importlib.util.module_from_spec(_spec)
sys.modules["lyap_rule"] = _mod
_spec.loader.exec_module(_mod)
run_one = _mod.run_one

CANDIDATES = {
    "A": {"lorenz_dt": 0.04, "observation_noise": 0.02},
    "B": {"lorenz_dt": 0.05, "observation_noise": 0.02},
    "C": {"lorenz_dt": 0.04, "observation_noise": 0.05},
    "D": {"lorenz_dt": 0.05, "observation_noise": 0.05},
}
SCREEN, CONFIRM = (100, 101, 102), (111, 112, 113, 114, 115)


def one(name: str, base_seed: int) -> dict:
    if base_seed < 100:
        raise ValueError(f"base_seed must be >= 100 (tuning seeds), got {base_seed}")
    r = run_one(base_seed, {"cfg": CANDIDATES[name]})
    u, o = r["unrolled"], r["one_step"]
    ref = reference_gate(u["held"], o["held"])
    stab = stability_gate(u["blow"], o["blow"], u["w1z"], o["w1z"])
    logr = [math.log(a / b) for a, b in zip(u["w1z"], o["w1z"], strict=True) if a > 0 and b > 0 and
            math.isfinite(a) and math.isfinite(b)]
    row = {
        "candidate": name, "base_seed": base_seed, "reference": ref, "stability": stab,
        "pass": ref.startswith("pass") and stab.startswith("pass"),
        "blow_diff": float(np.mean(np.asarray(u["blow"]) - np.asarray(o["blow"]))),
        "log_w1_ratio": float(np.mean(logr)) if logr else math.nan,
        "u": {k: u[k] for k in ("blow", "held", "w1z", "lyap", "zmean", "zsd")},
        "o": {k: o[k] for k in ("blow", "held", "w1z", "lyap", "zmean", "zsd")},
        "truth": r["truth"], "z_floor": r["z_floor"], "secs": r["secs"], "t_eval": r["t_eval"],
    }
    print(json.dumps(row), flush=True)
    print(f"# {name} seed {base_seed}: {'PASS' if row['pass'] else 'FAIL'} | reference {ref} | stability {stab} | "
          f"lyap U {np.mean(u['lyap']):.2f} O {np.mean(o['lyap']):.2f} truth {r['truth']['lyap']:.2f} | "
          f"blow U {np.mean(u['blow']):.2f} O {np.mean(o['blow']):.2f}", flush=True)
    return row


def screen(names) -> list[str]:
    rows = {n: [one(n, b) for b in SCREEN] for n in names}
    keep = []
    for n, rs in rows.items():
        passes = sum(r["pass"] for r in rs)
        blow = float(np.mean([r["blow_diff"] for r in rs]))
        key = (-passes, blow, float(np.nanmean([r["log_w1_ratio"] for r in rs])))
        print(f"# screen {n}: {passes}/3 pass, key {key}", flush=True)
        if passes >= 2:
            keep.append((key, n))
    order = [n for _, n in sorted(keep)]
    print(f"# SCREEN survivors in order: {order}", flush=True)
    return order


def confirm(name: str) -> bool:
    ok = all([one(name, b)["pass"] for b in CONFIRM])
    print(f"# CONFIRM {name}: {'PASS (5/5)' if ok else 'FAIL'}", flush=True)
    return ok


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--stage", choices=("all", "screen", "confirm"), default="all")
    p.add_argument("--candidate", choices=tuple(CANDIDATES), nargs="+", help="candidates of the stage")
    args = p.parse_args()
    if args.stage == "screen":
        screen(args.candidate or CANDIDATES)
        return
    if args.stage == "confirm":
        for n in args.candidate:
            if confirm(n):
                print(f"# RULE: ADOPT {n} {CANDIDATES[n]}", flush=True)
                return
        print("# RULE: confirmation failed", flush=True)
        return
    for n in screen(CANDIDATES)[:2]:
        if confirm(n):
            print(f"# RULE: ADOPT {n} {CANDIDATES[n]}", flush=True)
            return
    print("# RULE: KEEP (noise 0.1, lorenz_dt 0.02; Lorenz rows untested)", flush=True)


if __name__ == "__main__":
    main()
