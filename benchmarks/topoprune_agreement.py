"""Chapter 18 (TopoPrune): would more seeds per run make the accuracy and control rows agree across base seeds?

``benchmarks/topoprune_variance.md`` showed that the width of these rows' intervals comes from seed to seed
(the split and the feature networks), not from the random draws or the initialisations. The remaining
lever inside the rules is more seeds per run. This script asks, on the tuning base seeds only (100-102,
never 0-4), what more seeds would do to the chance that five base seeds give the same verdict word: it
takes the 36 per-seed paired gains that ``topoprune_variance.md`` lists (three base seeds × the book
preset's 12 seeds; read at 8 initialisations and 16 draws, whose half-widths equal the book preset's,
see its table), fits a normal distribution (mean, sample sd), and simulates five base seeds of ``n``
seeds each, read by ``compare`` against the accuracy margin, the rows' own rule. Reading: when the
mean gain sits near the margin (the accuracy row) or about one standard error of a run below it (the
control row), narrower intervals make a *yes* (or a *no*) on some base seeds more likely before they make
every base seed agree; agreement returns only once the interval is narrow next to the distance of the
mean from the margin.

Usage: ``python benchmarks/topoprune_agreement.py [--out benchmarks/topoprune_agreement.md]``. Seconds.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
SEEDS_PER_RUN = (12, 16, 24, 48, 96, 200)
N_SIM = 4000


def tuning_gains(text: str) -> dict[str, np.ndarray]:
    """The per-seed gains of every tuning base seed in ``topoprune_variance.md``, pooled per row."""
    out: dict[str, list[float]] = {}
    for line in text.splitlines():
        if "per inner seed at" not in line:
            continue
        for part in line.split(": ", 1)[1].split("; "):
            name, values = part.split(": ")
            out.setdefault(name, []).extend(float(v) for v in values.split())
    if not out:
        raise ValueError("no per-seed gains found in topoprune_variance.md")
    return {k: np.asarray(v) for k, v in out.items()}


def agreement(mean: float, sd: float, n: int, margin: float, rng: np.random.Generator) -> dict[str, float]:
    """Simulated chance of each verdict word for one base seed of ``n`` seeds, and of five agreeing."""
    from explorables.core.verdicts import compare

    words = np.array([compare(rng.normal(mean, sd, n), margin) for _ in range(N_SIM)])
    p = {w: float(np.mean(words == w)) for w in ("yes", "unclear", "no")}
    p["five agree"] = sum(q**5 for q in p.values())
    return p


def main() -> None:
    from explorables.core.verdicts import t_multiplier
    from explorables.topoprune.claims import ACC_MARGIN

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "topoprune_agreement.md"))
    args = parser.parse_args()
    gains = tuning_gains((HERE / "topoprune_variance.md").read_text())
    rng = np.random.default_rng(0)
    lines = [
        "# TopoPrune: more seeds per run, and the chance that five base seeds agree (tuning base seeds only)",
        "",
        f"Written by `benchmarks/topoprune_agreement.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from the "
        f"per-seed gains in `topoprune_variance.md` (base seeds 100-102); {N_SIM} simulated base seeds per cell; "
        f"margin {ACC_MARGIN}.",
        "",
        "| row | mean gain | sd per seed | seeds per run | half-width | P(yes) | P(unclear) | P(no) | P(five agree) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, g in gains.items():
        mean, sd = float(g.mean()), float(g.std(ddof=1))
        for n in SEEDS_PER_RUN:
            p = agreement(mean, sd, n, ACC_MARGIN, rng)
            hw = t_multiplier(n) * sd / np.sqrt(n)
            lines.append(
                f"| {name} | {mean:+.4f} | {sd:.4f} | {n} | {hw:.4f} | {p['yes']:.2f} | {p['unclear']:.2f} "
                f"| {p['no']:.2f} | {p['five agree']:.2f} |"
            )
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
