"""The gate "room" (issue 42, twenty-first pass): the candidates of ``benchmarks/virtualflow_room_rule4.md`` (committed
before this ran), the book preset with the candidate's fields, run as the package runs them on tuning bases 168-172,
every verdict read with the package's ``claims`` + ``apply_gates``. A ladder: a candidate stops at its first base with
a gate other than pass; the next candidate runs only if every earlier one failed; the first that passes on every base
is the pick (if its projected page time allows).

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_room4.py --cands C1 C2 \
        --bases 168 169 170 171 172 --out benchmarks/virtualflow_room4.json
"""

from __future__ import annotations

import datetime as dt

from _tuning import ladder_main

#: candidate -> the book preset's fields it changes
CANDIDATES = {
    "C0": {},  # today's book preset: run after the rule's decision, on base 168 only, reported beside (not deciding)
    "C1": {"vm_distance": (0.35, 0.5)},
    "C2": {"vm_distance": (0.35, 0.5), "n_supervised_steps": 1600},
}
GATES = ("room", "physical", "useful", "headroom", "curved")
DEADLINE = dt.time(15, 37)


if __name__ == "__main__":
    ladder_main(CANDIDATES, GATES, floor=168, deadline=DEADLINE)
