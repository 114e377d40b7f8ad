"""The gate "room" (issue 42, twenty-third pass): the candidates of ``benchmarks/virtualflow_room_rule6.md`` (committed
before this ran): the spot on the two real mics' axis (``vm_on_axis``) farther out, or with fewer held-out mics; the
book preset with the candidate's fields, run as the package runs it on tuning bases 176-180, every verdict read with the
package's ``claims`` + ``apply_gates``. A ladder: a candidate stops at its first base with a gate other than pass; the
next candidate runs only if every earlier one failed; the first that passes on every base is the pick.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_room6.py --cands E1 E2 E3 \
        --bases 176 177 178 179 180 --out benchmarks/virtualflow_room6.json
"""

from __future__ import annotations

import datetime as dt

from _tuning import ladder_main

#: candidate -> the book preset's fields it changes
CANDIDATES = {
    "E1": {"vm_on_axis": True, "vm_distance": (0.45, 0.6)},
    "E2": {"vm_on_axis": True, "vm_distance": (0.55, 0.7)},
    "E3": {"vm_on_axis": True, "vm_distance": (0.35, 0.5), "n_aux": 2},
}
GATES = ("room", "physical", "useful", "headroom", "curved")
DEADLINE = dt.time(0, 57)


if __name__ == "__main__":
    ladder_main(CANDIDATES, GATES, floor=176, deadline=DEADLINE)
