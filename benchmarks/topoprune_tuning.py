"""Chapter 18 (TopoPrune): the book preset's verdicts on base seeds kept apart from the seed study.

The seed study (``python -m explorables seeds topoprune``) reads base seeds 0-4. Settings of the book
preset that change how noisy a verdict is (seeds per run, the test set's size) and the verdict rules were
decided on base seeds 100, 101 and 102 with this script, never on 0-4: it runs the ``book`` preset (without
the diagnosis, which leaves every claim's number as it is) at each base seed and writes each row's verdict
and measured interval next to each other, with the run time and the machine's load.

Usage: ``python benchmarks/topoprune_tuning.py [--base-seeds 100 101 102] [--set key=value ...]
[--out benchmarks/topoprune_tuning.md]``. About a minute per base seed on a quiet 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path


def verdicts(base_seed: int, overrides: dict) -> tuple[list, float]:
    """One book-preset run (no diagnosis): every claim row's (kind, name, claim, verdict) and the seconds."""
    from explorables.topoprune import TopoPruneConfig, run
    from explorables.topoprune.claims import claims

    cfg = TopoPruneConfig.preset("book", seed=base_seed, diagnose=False, **overrides)
    start = time.perf_counter()
    res = run(cfg)
    seconds = time.perf_counter() - start
    return [(c.kind, c.name, c.claim, c.verdict) for c in claims(res)], seconds


def main() -> None:
    from explorables.core.verdicts import first_word

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-seeds", type=int, nargs="+", default=[100, 101, 102])
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config field (JSON value), e.g. --set n_inits=4")  # fmt: skip
    parser.add_argument("--out", default=str(Path(__file__).with_name("topoprune_tuning.md")))
    args = parser.parse_args()
    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    runs = {}
    for b in args.base_seeds:
        runs[b] = verdicts(b, overrides)
        print(f"base seed {b}: {runs[b][1]:.0f} s, load {os.getloadavg()[0]:.1f}", flush=True)
    first = runs[args.base_seeds[0]][0]
    lines = [
        "# TopoPrune: the book preset on base seeds 100-102 (kept apart from the seed study's 0-4)",
        "",
        f"Written by `benchmarks/topoprune_tuning.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; overrides of the "
        f"book preset: {overrides or 'none'} (and no diagnosis). Load average after the last run: "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; seconds per run: "
        + ", ".join(f"{runs[b][1]:.0f}" for b in args.base_seeds)
        + ".",
        "",
        "| row | " + " | ".join(f"base seed {b}" for b in args.base_seeds) + " | agree |",
        "|---|" + "---|" * (len(args.base_seeds) + 1),
    ]
    for i, (kind, name, claim, _) in enumerate(first):
        words = [first_word(runs[b][0][i][3]) for b in args.base_seeds]
        label = f"{kind} {name}".strip() + f": {claim[:60]}"
        lines.append(f"| {label} | " + " | ".join(words) + f" | {'yes' if len(set(words)) == 1 else 'NO'} |")
    lines += ["", "## Verdicts in full", ""]
    for b in args.base_seeds:
        lines += [f"### base seed {b}", ""] + [f"- {kind} {name}: {verdict}" for kind, name, _, verdict in
                                                runs[b][0]] + [""]  # fmt: skip
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[: len(first) + 6]))


if __name__ == "__main__":
    main()
