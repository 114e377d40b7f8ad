"""The gate "room" (issue 42, twenty-third pass, second rule): the candidates of
``benchmarks/virtualflow_room_rule7.md`` (committed before this ran): the spot on the two real mics' axis
(``vm_on_axis``) at (0.45, 0.6) m with a wider held-out circle; the book preset with the candidate's fields, run as the
package runs it on tuning bases 181-185, every verdict read with the package's ``claims`` + ``apply_gates``. A ladder:
a candidate stops at its first base with a gate other than pass; the next candidate runs only if every earlier one
failed; the first that passes on every base is the pick.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_room7.py --cands F1 F2 \
        --bases 181 182 183 184 185 --out benchmarks/virtualflow_room7.json
"""

from __future__ import annotations

import datetime as dt

from _tuning import ladder_main

#: candidate -> the book preset's fields it changes
CANDIDATES = {
    "F1": {"vm_on_axis": True, "vm_distance": (0.45, 0.6), "aux_radius": 0.6},
    "F2": {"vm_on_axis": True, "vm_distance": (0.45, 0.6), "aux_radius": 0.45},
}
GATES = ("room", "physical", "useful", "headroom", "curved")
DEADLINE = dt.time(0, 58)


if __name__ == "__main__":
    ladder_main(CANDIDATES, GATES, floor=181, deadline=DEADLINE)
