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


def test_k_dependence_verdict():
    moving = {"moons": {"distinct_counts": 2}, "blobs": {"distinct_counts": 1}}
    assert C.k_dependence_verdict(moving) == "yes: the count changes with k on 1 of 2 data sets"
    assert C.k_dependence_verdict({"blobs": {"distinct_counts": 1}}).startswith("no")


def test_wrong_count_shares_and_outlier_verdict():
    runs = [blobs_run(0.0, ks=(3, 4)), blobs_run(0.1, ks=(5, 5)), blobs_run(0.2, ks=(3, 6))]
    wrong, clean = C.wrong_count_shares(runs, 3)
    assert wrong == pytest.approx(3 / 4) and clean == pytest.approx(1 / 2)
    assert C.outlier_sensitivity_verdict(wrong, clean).startswith("no")  # 0.75 is not > 0.5 + 0.25
    assert C.outlier_sensitivity_verdict(0.76, 0.5) == "yes"
    # edge case: no corrupted fraction at all gives NaN and an explicit "no", not a comparison with NaN
    wrong, _ = C.wrong_count_shares([blobs_run(0.0)], 3)
    assert math.isnan(wrong)
    assert C.outlier_sensitivity_verdict(wrong, 0.0) == "no: no outlier fraction above 0 was run"


def test_graph_independence_verdict_is_never_a_plain_yes():
    assert C.graph_independence_verdict([{"ari_between": 1.0}, {"ari_between": 0.95}]).startswith("partly")
    assert C.graph_independence_verdict([{"ari_between": 1.0}, {"ari_between": 0.94}]).startswith("no")


def test_robustness_verdict_counts_labels_and_names_the_control():
    # issue 28: the right K with too few labels is not a recovery
    runs = [[blobs_run(0.0), blobs_run(0.1, robust=(3, 0.9, 2))], [blobs_run(0.0), blobs_run(0.1)]]
    rec = C.recovered_cells(runs, 3)
    assert rec["mp_robust"] == 3 and rec["tomato_dtm"] == 4
    assert C.robustness_verdict(rec, 4).startswith("partly")
    assert C.robustness_verdict(rec, 4).endswith("the robustness is the DTM's")
    assert C.robustness_verdict({"mp_robust": 4, "tomato_ref": 1, "tomato_dtm": 2}, 4) == "yes"
    assert C.robustness_verdict({"mp_robust": 4, "tomato_ref": 4, "tomato_dtm": 2}, 4).endswith("f recovers as often")
    assert C.robustness_verdict({"mp_robust": 1, "tomato_ref": 0, "tomato_dtm": 0}, 4).startswith("no")


def test_improvement_verdict_needs_every_seed():
    assert C.improvement_verdict([0.9, 0.9, 0.9], {"A": [0.8, 0.8, 0.8], "B": [0.5, 0.5, 0.5]}) == "yes"
    # issue 28: ahead on one seed and behind on the others is not ahead
    assert C.improvement_verdict([0.9, 0.79, 0.76], {"A": [0.6, 0.81, 0.85], "B": [0.5, 0.5, 0.5]}) == (
        "partly: ahead of B; not clearly ahead of A")
    assert C.improvement_verdict([0.5], {"A": [0.6], "B": [0.55]}) == "no: not clearly ahead of any baseline (A, B)"
    assert C.improvement_verdict([0.85], {"A": [0.8]}).startswith("no")  # exactly the margin is not ahead


@pytest.mark.parametrize(
    ("wins", "verdict"),
    [
        ((0, 2, 3, 3), "yes"),
        ((0, 0, 0, 1), "no: f and h alone"),  # nobody recovers: both "match" the pair
        ((1, 1, 2, 3), "partly"),
        ((3, 0, 3, 3), "no: f alone"),
        ((1, 2, 2, 3), "no: h alone"),
    ],
)
def test_two_functions_verdict(wins, verdict):
    assert C.two_functions_verdict(*wins).startswith(verdict)


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
    text = C.mean_ari_sentence(7, [0.9, 0.79], [0.8, 0.81], 10)
    assert "well-tuned" not in text and text.endswith("not ahead by more than 0.05 on every seed).")
    assert C.mean_ari_sentence(7, [0.9, 0.9], [0.78, 0.8], 10).endswith("ahead by more than 0.05 on every seed.")


def test_findings_text_assembles_the_sentences():
    runs = [blobs_run(0.0), blobs_run(0.1, tomato=(5, 0.4))]
    tf = {"fraction": 0.1, "bandwidths": [0.4, 0.8],
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
    assert 'the verdict is "no: f and h alone recovers the blobs as often as the pair"' in text
    assert text.endswith("took 12.3 s of this run.") and "background noise" in text
    del summary["datasets"]["circles"]
    assert "circles" not in C.findings_text(results)
