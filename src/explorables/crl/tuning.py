"""Choosing the causal prior's L1 weight on gate draws only (not part of the page's run).

The ``causal`` gate (:mod:`.claims`) asks the causal-prior learner to recover edge-free latents (true
influences zero, inside its class). With Gaussian noise and a near-linear parent function, a dense,
free lower-triangular ``lambda(u)`` per environment makes ``p(z | u)`` an arbitrary Gaussian per
environment, a family closed under invertible linear maps of ``z``: the ELBO then cannot prefer the
true axes. The L1 weight on the influences is what breaks that symmetry, so it is chosen here, by a
rule fixed before the grid was run:

* **draws**: the book preset's data with base seed :data:`TUNING_BASE_SEED` (seed entries
  ``0 .. n_draws - 1``), whose data seeds never coincide with those of base seeds 0-4 (the seed study);
* **rule** (:func:`choose`): the *smallest* weight of :data:`SPARSITY_GRID` whose causal prior clears
  chance + ``ABOVE_CHANCE`` on **every** edge-free draw (the gate's own rule); when none does, the
  weight with the largest smallest margin (the gate will then fail, and say so);
* the all-change draws are trained alongside and reported, not used by the rule.

Round 1 (grid 0.001 to 0.3) passed no weight: one draw of six stayed at +0.09 / +0.10 while the
others cleared the margin from 0.1 on. Round 2, decided after seeing round 1 (tuning draws only,
disclosed on the page), extends the grid by :data:`SPARSITY_EXTRA` and trains the factorised prior
on the same edge-free draws as a reference (is that draw hard for the ``ivae`` learner too?).
It was: the factorised prior also fell short on that draw (+0.06), and weights from 0.3 up only
reproduced the factorised prior's margins (their influences shrink to zero). The rule was then
restated, still on tuning draws only: the smallest weight that clears the margin on every tuning
draw **on which the factorised prior clears it** (:func:`choose` with ``reference``). That is 0.1.

``python -m explorables.crl.tuning`` prints the table behind the choice.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from .experiment import CAUSAL_CHECK, Arm, CRLConfig, chance_level, data_seed, make_arm_data
from .metrics import matched_correlations
from .model import encode_means, fit

#: the L1 weights tried, smallest first
SPARSITY_GRID: tuple[float, ...] = (1e-3, 1e-2, 3e-2, 1e-1, 3e-1)
#: round 2: larger weights (the causal prior tends to the factorised one as the weight grows)
SPARSITY_EXTRA: tuple[float, ...] = (1.0, 3.0)
#: the base seed of the tuning draws (the seed study uses base seeds 0-4)
TUNING_BASE_SEED = 100


def choose(
    margins: Mapping[float, Sequence[float]], threshold: float, reference: Sequence[float] | None = None
) -> tuple[float, bool]:
    """The smallest weight whose MCC − chance clears ``threshold`` on every draw (with ``reference``,
    the factorised prior's margins on the same draws: on every draw where the reference clears it), and
    True; when none does, the weight with the largest smallest margin, and False."""
    if not margins:
        raise ValueError("margins must hold at least one weight, got none")
    keep = [k for k, r in enumerate(reference) if r >= threshold] if reference is not None else None
    if keep is not None:
        if not keep:
            raise ValueError("the reference clears the threshold on no draw: nothing to choose on")
        margins = {w: [m[k] for k in keep] for w, m in margins.items()}
    passing = sorted(w for w, m in margins.items() if min(m) >= threshold)
    if passing:
        return passing[0], True
    return max(margins, key=lambda w: (min(margins[w]), -w)), False


def study(
    n_draws: int = 6, grid: Sequence[float] = SPARSITY_GRID, prior: str = "causal"
) -> dict[float, dict[str, list[float]]]:
    """Per weight, the ``prior``'s MCC − chance on ``n_draws`` edge-free tuning draws and on the
    all-change draws of the same seeds (book preset otherwise)."""
    cfg = CRLConfig.preset("book", seed=TUNING_BASE_SEED, seeds=tuple(range(n_draws)))
    settings = [
        ("edge-free", Arm(CAUSAL_CHECK, "causal", "independent", "none")),
        ("all", Arm("c", "causal", "synthetic")),
    ]
    data = [(tag, s, make_arm_data(cfg, arm, s)) for tag, arm in settings for s in range(n_draws)]
    x = torch.tensor(np.stack([d.x for *_, d in data]), dtype=torch.float32)
    env = torch.tensor(np.stack([d.env for *_, d in data]), dtype=torch.long)
    levels = [chance_level(d.z, cfg.n_rotations, data_seed(cfg, s))[0] for _, s, d in data]
    out: dict[float, dict[str, list[float]]] = {}
    for w in grid:
        model = fit(
            x,
            env,
            [prior] * len(data),
            cfg.n_envs,
            cfg.d_latent,
            seeds=[10_007 * cfg.seed + 101 * s + 1 for _, s, _ in data],
            n_steps=cfg.n_steps,
            batch_size=cfg.batch_size,
            lr=cfg.lr,
            width=cfg.width,
            sparsity=w,
            obs_std=cfg.obs_std,
            obs_std_start=cfg.obs_std_start,
            warmup=cfg.warmup,
            cosine=cfg.cosine,
        )
        means = encode_means(model, x, env)
        row: dict[str, list[float]] = {tag: [] for tag, _ in settings}
        for k, (tag, _, d) in enumerate(data):
            row[tag].append(float(matched_correlations(d.z, means[k]).mean() - levels[k]))
        out[w] = row
    return out


def main(argv: Sequence[str] = ()) -> None:
    from .claims import ABOVE_CHANCE

    torch.set_num_threads(1)
    n_draws = int(argv[0]) if argv else 6
    grid = tuple(float(w) for w in argv[1].split(",")) if len(argv) > 1 else SPARSITY_GRID + SPARSITY_EXTRA
    result = study(n_draws, grid)
    reference = study(n_draws, (0.0,), prior="factorised")[0.0]
    print("factorised (reference): edge-free " + " ".join(f"{v:+.2f}" for v in reference["edge-free"]))
    for w, row in result.items():
        print(
            f"L1 {w:g}: edge-free MCC − chance "
            + " ".join(f"{v:+.2f}" for v in row["edge-free"])
            + " | all-change "
            + " ".join(f"{v:+.2f}" for v in row["all"])
        )
    weight, ok = choose({w: r["edge-free"] for w, r in result.items()}, ABOVE_CHANCE, reference["edge-free"])
    print(f"chosen L1 weight {weight:g} ({'passes where the factorised prior passes' if ok else 'none passes'})")


if __name__ == "__main__":
    main(sys.argv[1:])
