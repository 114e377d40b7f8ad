"""A more informative network input for the gate "room" (issue 42, eighteenth pass): candidates run as the package
runs them, the book preset with one field changed (that field, ``direction_hypotheses``, exists at commit 6204570 of
``ch/virtualflow18`` only: it was removed when not adopted), on tuning bases, every verdict read with the package's
``claims`` + ``apply_gates``. Rule: ``benchmarks/virtualflow_input_rule.md`` (committed before this ran).

The process CPU time of ``run`` (this process plus its spawned worker) is recorded for the cost projection.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_input.py --cand C1 --bases 157 158 \
        --out benchmarks/virtualflow_input.json  (bases 157-161 in the rule)
"""

from __future__ import annotations

from _tuning import candidate_main

#: candidate -> the book preset's fields it changes (every network: flow, reflow, control, supervised)
CANDIDATES = {"C0": {}, "C1": {"direction_hypotheses": True}}


def main() -> None:
    candidate_main(CANDIDATES, floor=157)


if __name__ == "__main__":
    main()
