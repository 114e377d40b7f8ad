"""Chapter 18 (TopoPrune): how noisy is the gate ``room``, and what each noise reduction buys.

The gate asks whether the D2-style graph beats random selection at the highest pruning rate by the
accuracy margin (paired 95% t-interval over the run's seeds, ``claims.room_gate``). Its reference,
random selection, is itself a random draw, and every subset's MLP starts from a random
initialisation. This script runs the ``book`` preset (without the diagnosis, which does not touch
these numbers) at one base seed three times: one random draw and one initialisation, each subset its
own (the settings under which the gate first failed on base seeds 0, 2 and 3); four draws and two
initialisations, each subset its own; the same with paired initialisations (every method's subset
starts from the same weights, the book preset). It reports for each: the per-seed sd of random
selection's accuracy, the sd of the paired gain D2 − random, and the gate's interval over the first
five seeds and over all ten.

Usage: ``python benchmarks/topoprune_room.py [--base-seed 2] [--out benchmarks/topoprune_room.md]``.
It takes about two minutes of CPU per setting on a quiet 2-core machine (both processes busy).
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np


def measure(base_seed: int, draws: int, inits: int, paired: bool) -> dict:
    """One book-preset run (no diagnosis): per-seed accuracies of random and D2 at the highest rate."""
    from explorables.topoprune import TopoPruneConfig, run

    cfg = TopoPruneConfig.preset("book", seed=base_seed, diagnose=False, n_random_draws=draws, n_inits=inits,
                                 paired_inits=paired)  # fmt: skip
    start = time.perf_counter()
    res = run(cfg)
    top = str(max(cfg.prune_grid))
    acc = res.summary["methods"]["accuracy"]["mlp"]
    return {
        "random": np.asarray(acc["random"][top]["values"]),
        "d2": np.asarray(acc["d2"][top]["values"]),
        "seconds": time.perf_counter() - start,
        "top": top,
        "n_seeds": len(cfg.seeds),
    }


def main() -> None:
    from explorables.core.verdicts import interval
    from explorables.topoprune.claims import ACC_MARGIN, room_gate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-seed", type=int, default=2, help="a base seed on which the gate failed")
    parser.add_argument("--out", default=str(Path(__file__).with_name("topoprune_room.md")))
    args = parser.parse_args()
    rows, gains = [], []
    for draws, inits, paired in ((1, 1, False), (4, 2, False), (4, 2, True)):
        r = measure(args.base_seed, draws, inits, paired)
        gain = r["d2"] - r["random"]
        rows.append(
            f"| {draws} | {inits} | {'yes' if paired else 'no'} | {np.std(r['random'], ddof=1):.4f} | "
            f"{np.std(gain, ddof=1):.4f} | "
            f"{interval(gain[:5]).format(3, signed=True)}: {room_gate(gain[:5]).split(':')[0]} | "
            f"{interval(gain).format(3, signed=True)}: {room_gate(gain).split(':')[0]} | {r['seconds']:.0f} |"
        )
        print(rows[-1], flush=True)
        per_seed = " ".join(f"{g:+.3f}" for g in gain)
        gains.append(f"| {draws} | {inits} | {'yes' if paired else 'no'} | {per_seed} |")
    load = os.getloadavg()
    text = [
        "# TopoPrune: the noise of the gate `room`",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `benchmarks/topoprune_room.py`, book preset, "
        f"base seed {args.base_seed}, pruning {float(r['top']):.0%}, MLP features; margin {ACC_MARGIN}; load "
        f"average at the end {load[0]:.1f}. Columns: random draws averaged, initialisations per subset at the "
        "highest rate, whether every method's subset starts from the same initialisations, the sd over seeds "
        "of random selection's accuracy and of the paired gain D2 − random, "
        "the gate's 95% t-interval and verdict on the first five seeds and on all ten, wall seconds of the run.",
        "",
        "| random draws | initialisations | paired | sd of random's accuracy | sd of D2 − random | gate, 5 seeds "
        "| gate, 10 seeds | run (s) |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Per-seed paired gains D2 − random (seeds in order):",
        "",
        "| random draws | initialisations | paired | D2 − random per seed |",
        "|---|---|---|---|",
        *gains,
        "",
        "The settings of the second row were chosen after the gate had failed on base seeds 0, 2 and 3 with "
        "those of the first (and five seeds), the pairing of the third after it had failed on base seeds 1 "
        "and 2 with those of the second; the chapter discloses both in its criteria box. Reading: averaging "
        "draws and initialisations shrinks the part of the gain's spread that comes from one draw and one "
        "initialisation; pairing removes the part that comes from two methods starting from different weights; "
        "what remains changes from seed to seed with the split (hence the test set) and the networks. All rows "
        "run the code of this commit (CCS's shared strata seed, the CNN and noisy views trained at the highest "
        "rate only), so they differ from the chapter's earlier numbers.",
        "",
    ]
    Path(args.out).write_text("\n".join(text))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
