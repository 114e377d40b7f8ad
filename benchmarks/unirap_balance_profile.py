"""Where run()'s two processes spend their CPU (benchmarks/unirap_balance.md).

``PYTHONPATH=src python benchmarks/unirap_balance_profile.py [BASE_SEED]``: runs the book preset once with every
training chunk, the scoring, the separate arm and the worker's warm-up wrapped in a timer; prints each task's wall
span (from the script's start) and the CPU time of the process that ran it (M: this process, W: the worker). Wrapped
functions nest in the worker (a train inside a chunk shows twice). Numbers are not changed (the wrappers only time)."""

import json
import os
import sys
import time

LOG = os.environ.get("UNIRAP_PROFILE_LOG", "/tmp/unirap_profile.jsonl")


def _log(name, t0, c0):
    with open(LOG, "a") as f:
        f.write(
            json.dumps({"pid": os.getpid(), "name": name, "t0": t0, "t1": time.time(), "cpu": time.process_time() - c0})
            + "\n"
        )


def timed(name, fn):
    def w(*a, **k):
        t0, c0 = time.time(), time.process_time()
        try:
            return fn(*a, **k)
        finally:
            _log(name, t0, c0)

    return w


def patch():
    from explorables.unirap import experiment as E

    if getattr(E, "_profiled", False):
        return
    E._profiled = True

    E.train = timed("train", E.train)
    E.score = timed("score", E.score)
    E.reference = timed("reference", E.reference)
    E.datasets = timed("datasets", E.datasets)


def w_train_chunk(*a, **k):
    patch()
    from explorables.unirap import experiment as E

    return timed("W_train_chunk", E._train_chunk)(*a, **k)


def w_separate(*a, **k):
    patch()
    from explorables.unirap import experiment as E

    return timed("W_separate", E._separate)(*a, **k)


def w_warm(*a, **k):
    t0, c0 = time.time(), time.process_time()
    from explorables.unirap import experiment as E

    r = E._warm(*a, **k)
    _log("W_warm(imports+pool)", t0, c0)
    return r


if __name__ == "__main__":
    open(LOG, "w").close()
    T0, C0 = time.time(), time.process_time()
    from explorables.unirap import experiment as E

    _log("M_import", T0, C0)
    patch()
    E._train_chunk, E._separate, E._warm = w_train_chunk, w_separate, w_warm
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    t0, c0 = time.time(), time.process_time()
    res = E.run(E.UniRAPConfig.preset("book", seed=seed))
    _log("M_run", t0, c0)
    print(res.summary["timings"])
    rows = [json.loads(line) for line in open(LOG)]
    for r in rows:
        who = "M" if r["pid"] == os.getpid() else "W"
        span = f"{r['t0'] - T0:7.1f} -> {r['t1'] - T0:7.1f}"
        print(f"{who} {r['name']:24s} {span}  wall {r['t1'] - r['t0']:6.1f}  cpu {r['cpu']:6.1f}")
