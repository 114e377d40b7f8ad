"""Chapter 19's verdicts and result-dependent sentences, on constructed summaries (no run needed)."""

from __future__ import annotations

import math

import pytest

from explorables.tomato_mp import claims as C
from explorables.tomato_mp.experiment import TomatoMPConfig, TomatoMPResults


def entry(k: int, ari: float, labels: int | None = None) -> dict:
    return {"n_clusters": k, "n_labels": k if labels is None else labels, "ari": ari}


def blobs_run(fraction: float, *, tomato=(3, 0.9), robust=(3, 0.9), plain=(3, 0.9), ks=(3, 3),
              control=(3, 0.9)) -> dict:
    return {
        "fraction": fraction,
        "tomato": {str(5 * (i + 1)): {"n_clusters": k, "ari": 0.5} for i, k in enumerate(ks)},
        "tomato_ref": {"k": 10, **entry(*tomato)},
        "mp_robust": entry(*robust),
        "mp_plain": entry(*plain),
        "tomato_dtm": entry(*control),
        "hdbscan": entry(3, 0.6),
        "kmeans": entry(3, 0.6),
    }


# ---------------------------------------------------------------- verdicts


UP, DOWN = [0.3, 0.31, 0.29], [0.0, 0.01, -0.01]


def test_gates_pass_and_fail():
    assert C.k_matters_gate([3, 2, 2]).startswith("pass")
    assert C.k_matters_gate([3, 1, 2]).startswith("fail")  # on one seed k changes nothing
    assert C.outliers_hurt_gate([0.5, 0.6, 0.55]).startswith("pass")
    assert C.outliers_hurt_gate([0.5, 0.0, 0.55]).startswith("fail")  # the interval reaches below 0.25
    assert C.one_not_enough_gate([0, 0, 0]).startswith("pass")
    assert C.one_not_enough_gate([0, 1, 0]).startswith("fail")  # h alone recovers on one seed
    assert C.persistence_check(0.0).startswith("pass") and C.persistence_check(1e-6).startswith("fail")


def test_wrong_count_shares_and_extra_wrong():
    runs = [blobs_run(0.0, ks=(3, 4)), blobs_run(0.1, ks=(5, 5)), blobs_run(0.2, ks=(3, 6))]
    wrong, clean = C.wrong_count_shares(runs, 3)
    assert wrong == pytest.approx(3 / 4) and clean == pytest.approx(1 / 2)
    assert C.extra_wrong([runs], 3) == [pytest.approx(1 / 4)]
    # edge case: no corrupted fraction at all gives NaN, and no extra share
    wrong, _ = C.wrong_count_shares([blobs_run(0.0)], 3)
    assert math.isnan(wrong)
    assert C.extra_wrong([[blobs_run(0.0)]], 3) == [0.0]


def test_k_matters_reads_the_independence_claims_own_fractions():
    # per seed, the most distinct counts over k at the fractions the independence claim uses
    runs = [[blobs_run(0.0, ks=(3, 3)), blobs_run(0.1, ks=(3, 5)), blobs_run(0.2, ks=(3, 3))],
            [blobs_run(0.0, ks=(3, 3)), blobs_run(0.1, ks=(4, 5)), blobs_run(0.2, ks=(4, 4))]]
    assert C.k_distinct(runs, [0.0, 0.2]) == [1, 1]  # k matters only at a fraction the claim does not use
    assert C.k_distinct(runs, [0.0, 0.1]) == [2, 2]
    assert C.k_matters_gate(C.k_distinct(runs, [0.0, 0.2])).startswith("fail")


def test_independence_verdict_reaches_every_word():
    assert C.independence_verdict([1.0, 0.99, 1.0]).startswith("yes")
    assert C.independence_verdict([0.6, 0.62, 0.61]).startswith("no")
    assert C.independence_verdict([0.9, 1.0, 0.95]).startswith("unclear")


def test_robustness_counts_labels_and_names_the_control():
    # issue 28: the right K with too few labels is not a recovery
    runs = [[blobs_run(0.0), blobs_run(0.1, robust=(3, 0.9, 2))], [blobs_run(0.0), blobs_run(0.1)]]
    rec = C.recovered_cells(runs, 3)
    assert rec["mp_robust"] == 3 and rec["tomato_dtm"] == 4
    share, gains = C.robustness_parts(runs, 3)
    assert share == [0.0, 1.0] and gains["the DTM alone"] == [0.0, 0.0]
    assert C.robustness_verdict([1, 1, 1], {"ToMATo on f": UP}).startswith("yes")
    partly = C.robustness_verdict([1, 1, 1], {"ToMATo on f": DOWN})
    assert partly.startswith("partly") and "no: above ToMATo on f" in partly
    assert C.robustness_verdict([0, 0, 0], {"ToMATo on f": DOWN}).startswith("no")
    assert C.robustness_verdict([0.5, 1.0, 0.75], {"ToMATo on f": DOWN}).startswith("unclear")
    # the DTM-alone control has its own row: a control that does as well reads no there
    assert C.control_verdict(UP).startswith("yes")
    assert C.control_verdict(DOWN).startswith("no")
    assert C.control_verdict([-0.03, -0.05, -0.01]).startswith("no")  # the control ahead
    assert C.control_verdict([0.0, 0.1, 0.05]).startswith("unclear")


def test_the_control_is_its_own_row_and_never_lifts_robustness():
    """Synthetic results through the claims: robustness reads from the recovered share and ToMATo on f
    only; the control's row reads no when the DTM alone does as well as ToMAToMP."""
    seed_runs = [[blobs_run(0.0), blobs_run(0.1, tomato=(5, 0.5), ks=(3, 5), control=(3, 0.95))]
                 for _ in range(3)]
    for j, runs in enumerate(seed_runs):  # a little seed noise
        runs[1]["tomato_ref"]["ari"] += 0.01 * j
        runs[1]["tomato_dtm"]["ari"] -= 0.005 * j
    independence = [[{"fraction": 0.0, "ari_between": 1.0}, {"fraction": 0.1, "ari_between": 1.0}]] * 3
    summary = {
        "outliers": {"true": 3, "runs": seed_runs[0], "seed_runs": seed_runs, "seeds": [0, 1, 2],
                     "independence": independence[0], "seed_independence": independence},
        "k_sweep": {"blobs": {"counts": {"5": 3, "10": 3}, "distinct_counts": 1, "true": 3}},
        "datasets": {},
        "two_functions": _tf([((4, 0.6), (4, 0.6), (3, 0.95))] * 3),
    }
    rows = {r.claim: r for r in C.claims(TomatoMPResults(TomatoMPConfig.preset("smoke"), summary))}
    robust = rows["ToMAToMP is robust to outliers"]
    control = rows["Control (ours): the robustness is the multi-parameter reading's, not the DTM's alone"]
    assert robust.outcome == "yes" and "DTM" not in robust.verdict
    assert control.outcome == "no" and control.gates == ("outliers_hurt",)
    gate = next(r for r in rows.values() if r.kind == "gate" and r.name == "k_matters")
    assert gate.outcome == "pass" and "per seed 2, 2, 2" in gate.measured


def test_improvement_verdict_is_paired_and_behind_every_baseline_reads_no():
    assert C.improvement_verdict({"A": [0.1, 0.12, 0.11], "B": UP}).startswith("yes")
    # issue 28: ahead on one seed and behind on the others is not ahead
    assert C.improvement_verdict({"A": [0.3, -0.02, -0.09], "B": UP}).startswith("partly")
    assert C.improvement_verdict({"A": [-0.1, -0.12, -0.11], "B": DOWN}).startswith("no")
    assert C.improvement_verdict({"A": [0.0, 0.1, 0.05]}).startswith("unclear")


def _tf(per_seed):
    def one(i, f, h, pair):
        return {"seed": i, "true": 3, "f": entry(*f), "h": entry(*h), "f_and_h": entry(*pair)}

    return {"spread": 0.6, "noise": 0.03, "seeds": [one(i, *p) for i, p in enumerate(per_seed)]}


def test_two_functions_claim_and_its_gate():
    bad, good = (4, 0.6), (3, 0.95)
    tf = _tf([(bad, bad, good), (bad, (4, 0.55), (3, 0.92)), (bad, bad, (3, 0.97))])
    alone, _, gain = C.two_function_values(tf)
    assert alone == [0.0, 0.0, 0.0] and gain == pytest.approx([0.35, 0.32, 0.37])
    assert C.two_functions_claim(tf).verdict.startswith("yes") and C.two_functions_claim(tf).gates == (
        "one_not_enough",)
    assert C.two_functions_verdict([0.9, 0.92, 0.91], DOWN).startswith("partly")  # reaches it, but so does one alone
    assert C.two_functions_verdict([0.5, 0.52, 0.51], DOWN).startswith("no")
    assert C.two_functions_verdict([0.7, 0.9, 0.8], DOWN).startswith("unclear")
    # fewer distinct labels than K does not count as a single function recovering
    tf = _tf([((3, 0.9, 2), bad, good)])
    assert C.two_function_values(tf)[0] == [0.0]


def test_criteria_reach_every_branch():
    from explorables.core.verdicts import drive

    assert drive(C.CRITERIA) == []


# ---------------------------------------------------------------- sentences


def test_outliers_sentence_follows_the_counts():
    text = C.outliers_sentence({"mp_robust": 10, "mp_plain": 6, "tomato_ref": 7, "tomato_dtm": 12}, 12, 3, 10)
    assert "(radius, f, DTM) recovered the blobs" in text and "in 10, ToMAToMP on (radius, f) in 6" in text
    assert "comes from the DTM coordinate" in text
    text = C.outliers_sentence({"mp_robust": 10, "mp_plain": 10, "tomato_ref": 7, "tomato_dtm": 2}, 12, 3, 10)
    assert "the DTM parameter was not needed" in text
    text = C.outliers_sentence({"mp_robust": 10, "mp_plain": 3, "tomato_ref": 7, "tomato_dtm": 2}, 12, 3, 10)
    assert "makes the difference" in text


def test_comparison_sentences_and_their_margins():
    assert "scores below ToMATo (mean ARI 0.80 against 0.85)" in C.clean_blobs_sentence(0.80, 0.85)
    assert "close or ToMAToMP is ahead" in C.clean_blobs_sentence(0.84, 0.85)  # within 0.02
    assert C.circles_sentence(0.5, 0.9).endswith("bumpy.")
    assert C.circles_sentence(0.88, 0.9).endswith("0.90.")  # within 0.05: no reason given
    # issue 28: a fixed k is not "well-tuned", and one good seed is not an improvement
    text = C.mean_ari_sentence(7, [0.9, 0.79, 0.8], [0.8, 0.81, 0.82], 10)
    assert "well-tuned" not in text and ": within the seeds' noise" in text
    assert ": ToMAToMP is ahead" in C.mean_ari_sentence(7, [0.9, 0.9, 0.91], [0.78, 0.8, 0.79], 10)
    assert ": not an improvement" in C.mean_ari_sentence(7, [0.7, 0.71, 0.7], [0.8, 0.8, 0.81], 10)


def test_findings_text_assembles_the_sentences():
    runs = [blobs_run(0.0), blobs_run(0.1, tomato=(5, 0.4))]
    tf = {"spread": 0.6, "noise": 0.03,
          "seeds": [{"seed": 0, "true": 3, "f": entry(3, 0.9), "h": entry(3, 0.9), "f_and_h": entry(3, 0.9)}]}
    summary = {
        "outliers": {"true": 3, "runs": runs, "independence": []},
        "datasets": {"circles": {**blobs_run(0.0, robust=(2, 0.3), tomato=(2, 0.9)), "n": 200, "true": 2}},
        "two_functions": tf,
        "timings": {"outliers_s": 12.34},
    }
    results = TomatoMPResults(TomatoMPConfig.preset("smoke"), summary)
    text = C.findings_text(results)
    rec = C.recovered_cells([runs], 3)
    assert text.startswith(C.outliers_sentence(rec, 2, 1, results.config.reference_k))
    assert C.circles_sentence(0.3, 0.9) in text
    assert "a single function alone recovers the clusters on 1 of 1 seeds, so this part cannot show" in text
    assert text.endswith("took 12.3 s of this run.") and "background noise" in text
    del summary["datasets"]["circles"]
    assert "circles" not in C.findings_text(results)
