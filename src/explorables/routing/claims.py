"""The chapter's claims table, with verdicts computed from the measured numbers."""

from __future__ import annotations

from ..core.tables import Claim
from ..core.tables import claims_table as markdown_table  # noqa: F401 - what the notebook imports
from .experiment import BERT_BASE, RoutingResults


def claims(results: RoutingResults) -> list[Claim]:
    """Evaluate the abstract's claims on ``results``; each verdict's criterion sits next to it."""
    cfg, s = results.config, results.summary
    col, single, multi, over = s["collisions"], s["single"], s["multi"], s["overhead"]
    n, d = col["n"], col["d_head"]
    rows = []
    # 1. Collisions with different dominant sources exist when rank V <= n - 2 (LP residual at rounding level).
    low_beta = col["by_beta"][0]
    residual = max(r["max_residual"] for r in col["by_beta"] + col["by_d_head"])
    rows.append(
        Claim(
            "When rank(V) ≤ n − 2, weightings with different dominant sources collide on a set of positive measure",
            f"random heads, n = {n}, d_head = {d} (rank {d} ≤ n − 2), α = softmax(β z); LP (HiGHS) per α",
            f"collision set of dimension {col['example']['fibre_dimension']}; a colliding α′ with another "
            f"dominant source for {low_beta['fraction']:.0%} of α at β = {low_beta['beta']:g}, "
            + ", ".join(f"{r['fraction']:.0%} at β = {r['beta']:g}" for r in col["by_beta"][1:])
            + f"; largest ‖Vα − Vα′‖∞ = {residual:.0e}",
            (
                "yes: exact collisions exist"
                + (
                    " (and get rarer as attention sharpens)"
                    if col["by_beta"][-1]["fraction"] < low_beta["fraction"]
                    else ""
                )
            )
            if low_beta["fraction"] > 0 and residual < 1e-9
            else "no: the LP found no harmful collision",
        )
    )
    # 2. 97% of BERT-Base heads: not measurable here.
    survey = single["survey"] + multi["survey"]
    frac = min(r["fraction_rank_le_n_minus_2"] for r in survey)
    rows.append(
        Claim(
            "rank(V) ≤ n − 2 in over 97% of BERT-Base heads",
            "BERT-Base weights cannot be downloaded here; instead the value matrices V = W_V X of our own trained "
            f"models on {cfg.survey_sequences} test sequences each",
            f"our heads: rank(V) ≤ n − 2 on {frac:.0%} of sequences (d_head = {d} < n − 1 = {n - 1} by design)",
            "partly: not measured on BERT-Base (the command in 'Going to full scale' does it from a local "
            "checkpoint); our heads satisfy the condition by construction",
        )
    )
    # 3. Suppressed routing dimensions.
    mean_supp = survey[0]["mean_suppressed"]
    rows.append(
        Claim(
            "Value-rank deficiency suppresses k ≥ 107 routing dimensions (> 84% of the degrees of freedom) "
            "in BERT-Base",
            f"our trained heads, n = {n} source tokens (n − 1 = {n - 1} degrees of freedom)",
            f"k = n − rank[V; 1ᵀ] = {mean_supp:.0f} of {n - 1} ({mean_supp / (n - 1):.0%})",
            "partly: the same count on our small heads, not on BERT-Base",
        )
    )
    # 4. The RRT gap.
    a1 = single["accuracy"]
    rows.append(
        Claim(
            "RRT: standard Transformers 31.4% source identification, oracle routing statistics 94.6%",
            f"our RRT reconstruction: {n} tokens, vocabulary {cfg.vocab}, reference head with β = {cfg.beta:g}; "
            f"read-out Transformer (d = {cfg.d_model}, d_head = {d}), {cfg.steps} steps × {cfg.batch}",
            f"single hop: standard {a1['standard']:.1%}, oracle {a1['oracle']:.1%} (chance {single['chance']:.1%})",
            "yes: a large gap (the numbers are from our own task, which only resembles the paper's)"
            if single["gap"] >= 0.4
            else "no: the gap is small in our run",
        )
    )
    # 5. RA-FFN closes > 75% of the gap.
    g1, g2 = single["gap_closed"], multi["gap_closed"]
    rows.append(
        Claim(
            "RA-FFN recovers over 75% of the oracle gain",
            "RA-FFN with our four statistics (max weight, top-2 margin, two attention centroids), same training",
            f"RA-FFN {a1['route_aware']:.1%}: {g1:.0%} of the gap closed (single hop), {g2:.0%} (two hops)",
            "yes"
            if min(g1, g2) > 0.75
            else (
                "partly: RA-FFN lands between standard and oracle but closes less than 75% of the gap"
                if min(g1, g2) > 0.1
                else "no: RA-FFN does not close the gap"
            ),
        )
    )
    # 6. Parameter overhead.
    rows.append(
        Claim(
            "RA-FFN costs under 1.1% additional parameters",
            f"counted on the modules: ours (d_ff = {cfg.d_ff}, one head per layer), and a BERT-Base-shaped "
            f"FFN (768 → 3072, {BERT_BASE['heads']} heads, 4 statistics per head)",
            f"ours: +{over['ours_extra']} parameters ({over['ours_fraction']:.1%} of a tiny model); BERT-Base "
            f"shape: +{over['bert_extra_per_layer']:,} per layer = {over['bert_fraction_of_model']:.2%} of 110M",
            "yes"
            if over["bert_fraction_of_model"] < 0.011
            else "partly: per-head statistics cost more than 1.1% at BERT-Base shape; statistics pooled over "
            "heads would cost 12× less (the paper's exact layout is not public)",
        )
    )
    # 7. Multi-hop gains about 6x single-hop.
    ratio = s["multi_over_single_gain"]
    rows.append(
        Claim(
            "Gains are about 6× larger on multi-hop than on single-hop tasks",
            "RA-FFN's gain over the standard FFN, two hops vs single hop (our pointer-chasing RRT)",
            f"gain {multi['ra_gain']:+.3f} (two hops) vs {single['ra_gain']:+.3f} (single hop): ratio {ratio:.2f}",
            "yes" if ratio >= 3 else "no: in our task the two gains are comparable",
        )
    )
    return rows
