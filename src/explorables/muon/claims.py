"""The chapter's claims table, with verdicts computed from the measured numbers.

Each verdict is a small function of the numbers it reads (tested on constructed values in
``tests/test_muon.py``); :func:`claims` fills the table from a run.
"""

from __future__ import annotations

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from .experiment import MuonResults


def early_verdict(ratio: float) -> str:
    """Muon runs down the river faster early: its river distance at ``early_step`` is below half of GD's."""
    return "yes" if ratio < 0.5 else "no: Muon is not clearly ahead early"


def late_verdict(final_gd: float, final_muon: float) -> str:
    """Near the bottom GD converges and Muon stalls: GD's final loss is below Muon's."""
    if final_gd < final_muon:
        return "yes: Muon stalls at a floor set by its step size; GD keeps converging"
    return "no: GD does not end below Muon here"


def overshoot_verdict(final: float, lowest: float) -> str:
    """Momentum overshoots: Muon with momentum ends more than 10× above the lowest loss it reached."""
    if final > 10 * lowest:
        return "yes (on our model; the paper's setting is general nonconvex objectives)"
    return "no: no overshoot measured"


def switch_verdict(final_switch: float, best_single: float) -> str:
    """The two-stage schedule ends more than 10× below the better of GD and Muon alone."""
    return "yes" if final_switch < 0.1 * best_single else "partly: the switch helps less than tenfold"


def lm_verdict(val_loss: dict[str, float]) -> str:
    """Language model: 'Muon, then AdamW' ends below Muon alone (at best partial evidence at this scale)."""
    if val_loss["muon_then_adamw"] < val_loss["muon"]:
        return "partly: the switch ends below Muon alone, but a run this short is weak evidence"
    return "no: at this tiny scale switching did not help"


def claims(results: MuonResults) -> list[Claim]:
    """Evaluate the abstract's claims on ``results``; each verdict's criterion is in its function above."""
    cfg, s = results.config, results.summary
    sen, sw, lm = s["sensing"], s["switch"], s["lm"]
    final, low, osc = sen["final_loss"], sen["min_loss"], sen["spike_oscillation"]
    rows = []
    ratio = sen["early_ratio_muon_over_gd"]
    rows.append(
        Claim(
            "Without momentum, Muon moves faster along the river early on",
            f"{cfg.matrix_size}×{cfg.matrix_size} mixed-spiked sensing, λ = ({cfg.lam_river:g}, {cfg.lam_spike:g}, "
            f"{cfg.lam_bulk:g}) for river/spike/bulk; η_Muon = {cfg.muon_lr:g}, η_GD = {cfg.gd_lr:.3g} "
            "(just under 2/λ_spike)",
            f"river distance at t = {cfg.early_step}: Muon {sen['river_early']['Muon']:.2f}, GD "
            f"{sen['river_early']['GD']:.2f} (from {sen['river_start']:.2f}); ratio {ratio:.2f}",
            early_verdict(ratio),
        )
    )
    rows.append(
        Claim(
            "Near the river bottom, Muon converges much more slowly than GD",
            f"same runs, {cfg.n_sensing_steps:,} steps",
            f"final loss GD {final['GD']:.1e}, Muon {final['Muon']:.1e}; Muon's spike coordinate flips direction "
            f"in {osc['Muon']:.0%} of its last steps",
            late_verdict(final["GD"], final["Muon"]),
        )
    )
    m = "Muon + momentum"
    rows.append(
        Claim(
            "With momentum, the orthogonalised update overshoots and oscillates near the target",
            f"Muon with momentum {cfg.momentum:g}",
            f"lowest loss {low[m]:.1e}, final {final[m]:.1e} ({final[m] / low[m]:.0f}× above its best)",
            overshoot_verdict(final[m], low[m]),
        )
    )
    best_single = min(final["GD"], final["Muon"])
    rows.append(
        Claim(
            "Switching to a GD-like optimiser for the final phase",
            f"Muon for {cfg.switch_step} steps, then GD",
            f"final loss {final['Muon → GD']:.1e} vs best single optimiser {best_single:.1e}; best switch step by "
            f"λ_spike: " + ", ".join(f"{r['lam_spike']:g} → {r['best_switch']}" for r in sw["rows"]),
            switch_verdict(final["Muon → GD"], best_single),
        )
    )
    v = lm["final_val_loss"]
    rows.append(
        Claim(
            "Preliminary evidence in language-model training",
            f"character-level Transformer ({cfg.n_lm_layers} layers, width {cfg.lm_d_model}), {cfg.n_lm_steps} "
            f"steps on {lm['chars']:,} characters of standard-library docstrings",
            "validation loss: " + ", ".join(f"{k} {x:.3f}" for k, x in v.items()),
            lm_verdict(v),
        )
    )
    return rows
