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

    games_measured = len(random_games)

    def record(steps: int, games: int, n: int, every: int = 1) -> int:
        """Bytes of the trajectory simulate() allocates up front on the device (float64 log-strategies)."""
        return 8 * (steps // every + 1 + (steps % every != 0)) * games * 2 * n

    def loop(*args, **kwargs):  # k steps of simulate(), for the difference of two loop lengths
        return lambda k: (lambda: simulate(*args, k, device="cpu", **kwargs))

    found = [
        Part("bottleneck", f"one OMWU step of {len(sweep)} hard games (delta x eta)", None,
             step_loop=loop(sweep, sweep_eta), steps=cfg.n_sweep_steps, precision="fp64",
             resident_bytes=record(cfg.n_sweep_steps, len(sweep), 2),
             note="every step is recorded (the energy curves): the record of all steps counts as resident memory"),
        Part("best iterate", f"one OMWU step of {len(worst)} hard games", None, step_loop=loop(worst, cfg.eta),
             steps=max(cfg.horizon_grid), precision="fp64", resident_bytes=record(max(cfg.horizon_grid), len(worst), 2),
             note="the record of every step counts as resident memory"),
        Part("random games", f"one OMWU step of {n_games} games of {cfg.random_game_size} x {cfg.random_game_size}",
             None, step_loop=loop(random_games, cfg.eta, record_every=cfg.random_record_every),
             loop_steps=(1, 1 + cfg.random_record_every), steps=cfg.n_random_game_steps, precision="fp64",
             scale=n_games / games_measured, memory_scale=n_games / games_measured,
             resident_bytes=record(cfg.n_random_game_steps, n_games, cfg.random_game_size, cfg.random_record_every),
             note=f"measured on {games_measured} games and scaled by the number of games (every count is per game: "
             "the games' matrices on the device grow with them; their numpy copies stay in host memory)"
             + (f"; dry: games of {size} x {size}" if dry else "")),
        Part("MWU contrast", "one MWU / OMWU step on matching pennies", None,
             step_loop=loop(matching_pennies(), cfg.eta), steps=2 * cfg.n_mwu_steps, precision="fp64",
             resident_bytes=record(cfg.n_mwu_steps, 1, 2)),
    ]
    paper_scale = ("yes: the paper's hard family over delta and eta, and 1,000 x 1,000 random games with interior "
                   "equilibria (342 per seed); the theorem's bounds are checked, not a benchmark")
    return found, paper_scale, ("one step is the difference of simulate() calls of two lengths (what a call builds "
                                "once cancels)")
