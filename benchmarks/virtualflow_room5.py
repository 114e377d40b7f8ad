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

import datetime as dt

from _tuning import ladder_main

#: candidate -> the book preset's fields it changes
CANDIDATES = {
    "C1": {"vm_on_axis": True},
    "C2": {"vm_on_axis": True, "vm_distance": (0.35, 0.5)},
}
GATES = ("room", "physical", "useful", "headroom", "curved")
DEADLINE = dt.time(18, 17)


if __name__ == "__main__":
    ladder_main(CANDIDATES, GATES, floor=173, deadline=DEADLINE)
