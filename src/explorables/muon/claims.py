"""The chapter's claims table, with verdicts computed from the measured numbers.

Each verdict is a small function of the numbers it reads (tested on constructed values in
``tests/test_muon.py``); :func:`claims` fills the table from a run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from .experiment import MuonResults


def _spread(values: Sequence[float], fmt: str = ".2g") -> str:
    """``mean ± sd (min–max)`` of per-seed values (the criteria read every seed)."""
    v = np.asarray(values, dtype=float)
    return f"{v.mean():{fmt}} ± {v.std():.1g} (min–max {v.min():{fmt}}–{v.max():{fmt}})"


def early_verdict(ratios: Sequence[float]) -> str:
    """Muon runs down the river faster early: its river distance at ``early_step`` is below half of GD's
    on every seed (the largest ratio < 0.5)."""
    return "yes" if max(ratios) < 0.5 else "no: Muon is not clearly ahead early on every seed"


def late_verdict(tail_gd: Sequence[float], tail_muon: Sequence[float]) -> str:
    """Near the bottom GD converges and Muon stalls: GD's tail loss (median over the last steps) is below
    Muon's on every seed."""
    if all(g < m for g, m in zip(tail_gd, tail_muon, strict=True)):
        return "yes: Muon stalls at a floor set by its step size; GD keeps converging"
    return "no: GD does not end below Muon on every seed"


def overshoot_verdict(tail: Sequence[float], lowest: Sequence[float]) -> str:
    """Momentum overshoots: Muon with momentum's tail loss is more than 10× above the lowest loss it
    reached, on every seed."""
    if all(f > 10 * low for f, low in zip(tail, lowest, strict=True)):
        return "yes (on our model; the paper's setting is general nonconvex objectives)"
    return "no: no overshoot on every seed"


SWITCH_MARGIN = 3.0  # the switch must end this many times below the better single optimiser, on every seed


def switch_verdict(tail_switch: Sequence[float], best_single: Sequence[float]) -> str:
    """The two-stage schedule helps: per seed, the ratio (better of GD's and Muon's tail loss) / (the
    switch's tail loss). "yes" if the smallest ratio over seeds exceeds ``SWITCH_MARGIN`` (3×),
    "partly" if the switch ends below the better single optimiser on every seed, else "no"."""
    ratios = [b / s for s, b in zip(tail_switch, best_single, strict=True)]
    if min(ratios) > SWITCH_MARGIN:
        return f"yes: more than {SWITCH_MARGIN:g}× below the better single optimiser on every seed"
    if min(ratios) > 1:
        return f"partly: below the better single optimiser on every seed, but not by {SWITCH_MARGIN:g}× on all"
    return "no: the switch does not end below both single optimisers on every seed"


def lm_verdict(val_loss: dict[str, Sequence[float]]) -> str:
    """Language model: 'Muon, then AdamW' ends below Muon alone on every seed (at best partial evidence
    at this scale); "no" otherwise."""
    if all(a < b for a, b in zip(val_loss["muon_then_adamw"], val_loss["muon"], strict=True)):
        return "partly: the switch ends below Muon alone on every seed, but a run this short is weak evidence"
    return "no: at this tiny scale switching did not beat Muon alone on every seed"


def claims(results: MuonResults) -> list[Claim]:
    """Evaluate the abstract's claims on ``results``; each verdict's criterion is in its function above.

    Every number is per seed of ``config.seeds`` (mean ± sd, min–max); a run's "tail loss" is its median
    loss over the last ``n_tail_steps`` steps, since Muon's last iterate is one sample of a chaotic orbit.
    """
    cfg, s = results.config, results.summary
    sen, sw, lm = s["sensing"], s["switch"], s["lm"]
    by = sen["by_seed"]
    tail, low = by["tail_loss"], by["min_loss"]
    seeds = f"seeds {', '.join(map(str, cfg.seeds))}"
    tail_of = f"median over the last {cfg.n_tail_steps:,} steps"
    rows = []
    ratios = by["early_ratio_muon_over_gd"]
    rows.append(
        Claim(
            "Without momentum, Muon moves faster along the river early on",
            f"{cfg.matrix_size}×{cfg.matrix_size} mixed-spiked sensing, λ = ({cfg.lam_river:g}, {cfg.lam_spike:g}, "
            f"{cfg.lam_bulk:g}) for river/spike/bulk; η_Muon = {cfg.muon_lr:g}, η_GD = {cfg.gd_lr:.3g} "
            f"(just under 2/λ_spike); {seeds}",
            f"Muon/GD river distance at t = {cfg.early_step}: {_spread(ratios)}",
            early_verdict(ratios),
        )
    )
    rows.append(
        Claim(
            "Near the river bottom, Muon converges much more slowly than GD",
            f"same runs, {cfg.n_sensing_steps:,} steps; tail loss = {tail_of}",
            f"tail loss GD {_spread(tail['GD'])}, Muon {_spread(tail['Muon'])}; Muon's spike coordinate flips "
            f"direction in {sen['spike_oscillation']['Muon']:.0%} of its last steps (seed {cfg.seeds[0]})",
            late_verdict(tail["GD"], tail["Muon"]),
        )
    )
    m = "Muon + momentum"
    rows.append(
        Claim(
            "With momentum, the orthogonalised update overshoots and oscillates near the target",
            f"Muon with momentum {cfg.momentum:g}",
            "tail loss / lowest loss: " + _spread([f / x for f, x in zip(tail[m], low[m], strict=True)]),
            overshoot_verdict(tail[m], low[m]),
        )
    )
    best_single = [min(g, u) for g, u in zip(tail["GD"], tail["Muon"], strict=True)]
    switch_ratio = [b / x for b, x in zip(best_single, tail["Muon → GD"], strict=True)]
    rows.append(
        Claim(
            "Switching to a GD-like optimiser for the final phase",
            f"Muon for {cfg.switch_step} steps, then GD",
            f"tail loss {_spread(tail['Muon → GD'])}; better single optimiser / switch: {_spread(switch_ratio)}; "
            f"best switch step by λ_spike (seed {cfg.seeds[0]}): "
            + ", ".join(f"{r['lam_spike']:g} → {r['best_switch']}" for r in sw["rows"]),
            switch_verdict(tail["Muon → GD"], best_single),
        )
    )
    v = lm["final_val_loss_by_seed"]
    rows.append(
        Claim(
            "Preliminary evidence in language-model training",
            f"character-level Transformer ({cfg.n_lm_layers} layers, width {cfg.lm_d_model}), {cfg.n_lm_steps} "
            f"steps on {lm['chars']:,} characters of standard-library docstrings; {seeds}",
            "validation loss: " + ", ".join(f"{k} {_spread(x, '.3f')}" for k, x in v.items()),
            lm_verdict(v),
        )
    )
    return rows
