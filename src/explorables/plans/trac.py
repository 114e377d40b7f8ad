"""Plan of trac's ``paper`` preset (CPU code): the scaling sweep, one part per number of variables."""

from __future__ import annotations

import math

from ..core.plan import Part
from ..trac.experiment import scaling_instance

#: random SCMs per measured step (their costs vary: a step averages a few)
PER_STEP = 3


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    found = []
    grid = [n for n in cfg.n_variables_grid if n <= 10] if dry else cfg.n_variables_grid
    for n in grid:
        def step(n=n):
            return [scaling_instance(n, cfg.seed, i, cfg.max_parents, cfg.brute_max_n, cfg.pruned_max_n,
                                     cfg.ilp_max_n, cfg.ilp_max_solves, cfg.ilp_node_limit) for i in range(PER_STEP)]

        methods = ["TrAC", "baselines"] + (["pruned"] if n <= cfg.pruned_max_n else []) + (
            ["brute force"] if n <= cfg.brute_max_n else []) + (["ILP"] if n <= cfg.ilp_max_n else [])
        found.append(Part(f"scaling, n = {n}", f"{PER_STEP} random SCMs of {n} variables: {', '.join(methods)}", step,
                          steps=math.ceil(cfg.n_instances / PER_STEP), runs_on="cpu", repeat=1,
                          operations=float(PER_STEP * 2**n), note="operations: 2^n, the rows of the full "
                          "truth table (an upper bound for TrAC; the brute force visits them all)"))
    paper_scale = ("partly: random Boolean SCMs up to 26 variables and the classic examples; the paper's "
                   "benchmarks include larger real-world models")
    notes = ("CPU code at every scale; one process here (the preset spreads instances over all cores); "
             f"the agreement check ({cfg.n_agreement_instances} SCMs up to n = {cfg.agreement_max_n}) "
             "is not in the plan")
    return found, paper_scale, notes
