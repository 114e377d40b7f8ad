"""Plan of omwu's ``paper`` preset: the four batched simulations (OMWU / MWU steps, float64, torch)."""

from __future__ import annotations

import numpy as np

from ..core.plan import Part
from ..omwu.dynamics import simulate
from ..omwu.games import hard_game, matching_pennies, random_interior_game


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    etas = sorted(set(cfg.eta_grid) | {cfg.eta})
    sweep = np.stack([hard_game(d) for _ in etas for d in cfg.delta_grid])
    sweep_eta = np.repeat(np.asarray(etas, dtype=float), len(cfg.delta_grid))
    worst = np.stack([hard_game(d) for d in np.geomspace(cfg.worst_case_delta_min, 0.5, cfg.n_worst_case_deltas)])
    n_games = cfg.n_random_games * cfg.n_game_seeds
    size = 64 if dry else cfg.random_game_size
    rng = np.random.default_rng(0)
    random_games = np.stack([random_interior_game(size, rng)[0] for _ in range(4)])

    def random_step(b: int):
        return lambda: simulate(random_games[:b], cfg.eta, 1, device="cpu")

    found = [
        Part("bottleneck", f"one OMWU step of {len(sweep)} hard games (delta x eta)",
             lambda: simulate(sweep, sweep_eta, 1, device="cpu"), steps=cfg.n_sweep_steps, precision="fp64",
             note="every step is recorded (the energy curves)"),
        Part("best iterate", f"one OMWU step of {len(worst)} hard games", lambda: simulate(worst, cfg.eta, 1),
             steps=max(cfg.horizon_grid), precision="fp64"),
        Part("random games", f"one OMWU step of {n_games} games of {cfg.random_game_size} x {cfg.random_game_size}",
             None, step_at=random_step, batch=n_games, small_batches=(2, 4), steps=cfg.n_random_game_steps,
             precision="fp64", resident_bytes=8 * n_games * cfg.random_game_size**2,
             note="extrapolated in the number of games; the games' matrices count as resident memory"
             + (f"; dry: games of {size} x {size}" if dry else "")),
        Part("MWU contrast", "one MWU / OMWU step on matching pennies",
             lambda: simulate(matching_pennies(), cfg.eta, 1), steps=2 * cfg.n_mwu_steps, precision="fp64"),
    ]
    paper_scale = ("yes: the paper's hard family over delta and eta, and 1,000 x 1,000 random games with interior "
                   "equilibria (342 per seed); the theorem's bounds are checked, not a benchmark")
    return found, paper_scale, "each step is a simulate() call with steps=1 (it also builds the trajectory record)"
