"""Book preset of topoprune on tuning base seed 300, pickled: ``python topoprune_same_numbers_run.py OUT PROCESSES``.

Prints this process's and the worker's CPU seconds, and the CPU of this process's threads other than the main one.
"""

from __future__ import annotations

import os
import pickle
import resource
import sys
import time

from explorables.topoprune import TopoPruneConfig, run


def other_threads_cpu() -> tuple[float, float]:
    """CPU seconds of this process's main thread and of all its other threads."""
    tick, main, other = os.sysconf("SC_CLK_TCK"), 0.0, 0.0
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / tick
        if int(tid) == os.getpid():
            main = cpu
        else:
            other += cpu
    return main, other


if __name__ == "__main__":
    out, processes = sys.argv[1], int(sys.argv[2])
    cfg = TopoPruneConfig.preset("book", seed=300, processes=processes)
    start, wall = time.process_time(), time.perf_counter()
    results = run(cfg)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"self cpu {time.process_time() - start:.1f}s children cpu {children.ru_utime + children.ru_stime:.1f}s "
          f"wall {time.perf_counter() - wall:.1f}s")  # fmt: skip
    main, other = other_threads_cpu()
    print(f"main thread cpu {main:.1f}s, other threads {other:.1f}s")
    with open(out, "wb") as f:
        pickle.dump({"summary": results.summary, "curves": results.curves}, f)
