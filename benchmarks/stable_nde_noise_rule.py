"""Chapter 08 (stable_nde), issue 46, sixth pass: the rule of ``stable_nde_noise_rule.md``.

Lorenz observation noise 0.3, 0.4, 0.5 on fresh tuning base seeds 116-120 with the chapter's unchanged gates
(through ``stable_nde_room_rule.one``); adopts the smallest noise that passes both gates on all five seeds.
Usage: ``PYTHONPATH=src python benchmarks/stable_nde_noise_rule.py``. One thread.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("room_rule", Path(__file__).with_name("stable_nde_room_rule.py"))
_mod = importlib.util.module_from_spec(_spec)
sys.modules["room_rule"] = _mod
_spec.loader.exec_module(_mod)

CANDIDATES = {"N3": 0.3, "N4": 0.4, "N5": 0.5}
SEEDS = (116, 117, 118, 119, 120)


def main() -> None:
    passed = {}
    for name, noise in CANDIDATES.items():
        _mod.CANDIDATES[name] = {"observation_noise": noise}  # Lorenz only: the harness runs the Lorenz part alone
        passed[name] = sum(_mod.one(name, b)["pass"] for b in SEEDS)
        print(f"# {name} (noise {noise}): {passed[name]}/5 seeds pass", flush=True)
    adopt = [n for n in CANDIDATES if passed[n] == len(SEEDS)]
    print(f"# RULE: ADOPT {adopt[0]} (Lorenz observation noise {CANDIDATES[adopt[0]]})" if adopt
          else "# RULE: KEEP (noise 0.1; Lorenz rows untested)", flush=True)


if __name__ == "__main__":
    main()
