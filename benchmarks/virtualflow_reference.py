"""A stronger supervised reference for the gate "room" (issue 42, seventeenth pass): candidates run as the package
runs them, the book preset with one field changed, on tuning bases, every verdict read with the package's ``claims``
+ ``apply_gates``. Rule: ``benchmarks/virtualflow_reference_rule.md`` (committed before this ran).

The process CPU time of ``run`` (this process plus its spawned worker) is recorded for the cost projection.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_reference.py --cand C1 --bases 150 151 \
        --out benchmarks/virtualflow_reference.json  (bases 150-154 in the rule)
"""

from __future__ import annotations

from _tuning import candidate_main

#: candidate -> the book preset's fields it changes (every network: flow, reflow, control, supervised)
CANDIDATES = {"C0": {}, "C1": {"d_hidden": 128}, "C2": {"n_layers": 3}}


def main() -> None:
    candidate_main(CANDIDATES, floor=145)


if __name__ == "__main__":
    main()
