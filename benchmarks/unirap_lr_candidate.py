"""Issue 41, ninth pass, second candidate (``benchmarks/unirap_rule3.md``): phase 1's peak learning rate.

The eighth pass's harness (``unirap_steps_candidate.py``) at the book preset's 400 steps with only ``lr`` (phase 1's
peak) changed: curriculum models at 512 labels, member seeds 0-9, on the given tuning base seeds.

Usage: ``PYTHONPATH=src python benchmarks/unirap_lr_candidate.py LR [BASE_SEEDS ...]``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import unirap_steps_candidate as H

from explorables.core.threads import one_cpu_thread
from explorables.unirap import experiment as X

if __name__ == "__main__":
    lr = float(sys.argv[1])
    bases = tuple(int(a) for a in sys.argv[2:]) or H.TUNING_BASE_SEEDS
    book = X.UniRAPConfig.preset("book")
    X.UniRAPConfig.PRESETS["book"] = {"lr": lr}  # the harness builds its config from the book preset
    assert X.UniRAPConfig.preset("book") == replace(book, lr=lr)
    rows: list = []
    with one_cpu_thread("cpu"):
        for base in bases:
            start = time.perf_counter()
            got = H.models(book.n_steps, base)
            rows += got
            print(json.dumps({"base": base, "lr": lr, "seconds": round(time.perf_counter() - start, 1),
                              "models": got, "so_far": H.report(rows)}), flush=True)
    print(json.dumps({"lr": lr, "n_steps": book.n_steps, "bases": list(bases), **H.report(rows)}), flush=True)
