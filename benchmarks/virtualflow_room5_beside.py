"""Beside rule 5, not deciding (run after the decision): C1 (vm_on_axis) on bases 174 and 175. Needs the package at
d13e3bc (the field vm_on_axis): PYTHONPATH=<that src> python benchmarks/virtualflow_room5_beside.py
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _tuning import cpu_seconds

from explorables.core.tables import apply_gates
from explorables.virtualflow import claims as vc
from explorables.virtualflow.experiment import VirtualFlowConfig, run


def main():
    out = {}
    for base in (174, 175):
        cfg = VirtualFlowConfig.preset("book", seed=base).replace(vm_on_axis=True)
        c0 = cpu_seconds()
        res = run(cfg)
        cpu = cpu_seconds() - c0
        rows = apply_gates(vc.claims(res))
        sup, pse = vc.per_seed(res, "sisdr/supervised"), vc.per_seed(res, "sisdr/pseudo")
        out[f"C1/{base}"] = {
            "cpu_s": round(cpu, 1),
            "room_per_seed": [a - b for a, b in zip(sup, pse, strict=True)],
            "pseudo_per_seed": pse,
            "rows": {(r.name or r.claim[:40]): [r.outcome, r.measured[:300]] for r in rows},
        }
        json.dump(out, open(Path(__file__).with_suffix(".json"), "w"), indent=1)
        print(base, {k: v[0] for k, v in out[f"C1/{base}"]["rows"].items()}, flush=True)


if __name__ == "__main__":
    main()
