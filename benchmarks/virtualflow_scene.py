"""A scene where the talker is not the quieter source (issue 42, nineteenth pass): the candidates of
``benchmarks/virtualflow_scene_rule.md`` (committed before this ran) run as the package runs them, the book preset with
the candidate's scene fields, on tuning bases 162-166, every verdict read with the package's ``claims`` +
``apply_gates``. A ladder: a candidate stops at its first base with a gate other than pass, the next candidate runs
only if every earlier one failed, and the first that passes on every base is the pick.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_scene.py --cands C1 C2 C3 \
        --bases 162 163 164 165 166 --out benchmarks/virtualflow_scene.json
"""

from __future__ import annotations

import datetime as dt

from _tuning import ladder_main

#: candidate -> the book preset's fields it changes (scene only: the networks, steps and rooms stay)
CANDIDATES = {
    "C1": {"snr_range": (-5.0, 5.0)},
    "C2": {"snr_range": (1.0, 11.0)},
    "C3": {"snr_range": (1.0, 11.0), "n_mics": 3},
}
GATES = ("room", "physical", "useful", "headroom", "curved")
DEADLINE = dt.time(13, 2)


if __name__ == "__main__":
    ladder_main(CANDIDATES, GATES, floor=162, deadline=DEADLINE)
