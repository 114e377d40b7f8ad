"""Claims kit 3: the book-wide verdict rules, rows of three kinds, gates, criteria and seed studies."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.stats
import torch

from explorables.cli import main
from explorables.core import seed_study
from explorables.core.tables import Claim, apply_gates, checks_table, claims_table, outcome_counts
from explorables.core.verdicts import (
    Criterion,
    combine,
    compare,
    drive,
    fmt_mean_sd,
    gate,
    interval,
    mean_sd,
    scope_verdict,
    t_multiplier,
)

# --- spread and intervals -------------------------------------------------------------------------


def test_mean_sd_is_the_sample_sd_and_undefined_for_one_value():
    x = np.random.default_rng(0).normal(size=7)
    mean, sd = mean_sd(x)
    assert mean == pytest.approx(x.mean()) and sd == pytest.approx(np.std(x, ddof=1))
    assert math.isnan(mean_sd([0.3])[1])
    assert fmt_mean_sd([1.0, 2.0, 3.0]) == "2.00 ± 1.00"
    assert "one seed" in fmt_mean_sd([0.5])
    with pytest.raises(ValueError, match="values"):
        mean_sd([])


def test_interval_is_the_student_t_interval():
    x = np.array([0.1, 0.4, 0.2, 0.7, 0.3])
    iv = interval(x)
    low, high = scipy.stats.t.interval(0.95, x.size - 1, loc=x.mean(), scale=scipy.stats.sem(x))
    assert (iv.low, iv.high) == pytest.approx((low, high))
    # the tabulated 0.975 quantiles of Student's t with 2 and 4 degrees of freedom
    assert t_multiplier(3) == pytest.approx(4.3027, abs=1e-4) and t_multiplier(5) == pytest.approx(2.7764, abs=1e-4)
    assert interval([0.5]).low == -math.inf  # one seed decides nothing
    with pytest.raises(ValueError, match="finite"):
        interval([0.1, float("nan")])


@pytest.mark.parametrize("n", [3, 5])
def test_interval_covers_the_true_mean_95_percent_of_the_time(n):
    """The reason for t rather than 2 se: at 3 seeds, mean ± 2 se covers about 82% only."""
    rng = np.random.default_rng(n)
    draws = rng.normal(0.3, 1.0, size=(20_000, n))
    hits = [interval(row).low <= 0.3 <= interval(row).high for row in draws[:4000]]
    assert 0.93 <= np.mean(hits) <= 0.97
    se = draws.std(axis=1, ddof=1) / np.sqrt(n)
    two_se = np.mean(np.abs(draws.mean(axis=1) - 0.3) <= 2 * se)
    assert two_se < 0.93 if n == 3 else two_se < 0.95


@pytest.mark.parametrize("seed", range(20))
def test_compare_agrees_with_the_interval_brute_force(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(rng.normal(), rng.uniform(0.01, 1), size=rng.integers(2, 8))
    threshold = float(rng.normal())
    iv = interval(x)
    expected = "yes" if iv.low >= threshold else "no" if iv.high < threshold else "unclear"
    assert compare(x, threshold) == expected
    mirrored = "yes" if iv.high <= threshold else "no" if iv.low > threshold else "unclear"
    assert compare(x, threshold, "below") == mirrored


def test_compare_reaches_every_word_and_one_seed_is_unclear():
    assert compare([0.30, 0.31, 0.29], 0.1) == "yes"
    assert compare([0.01, 0.02, 0.00], 0.1) == "no"
    assert compare([0.0, 0.2, 0.1], 0.1) == "unclear"  # the interval straddles the threshold
    assert compare([0.9], 0.1) == "unclear"
    with pytest.raises(ValueError, match="direction"):
        compare([1.0, 2.0], 0.0, "sideways")


def test_gate_by_interval_and_on_every_seed():
    assert gate([0.8, 0.82, 0.81], 0.7) == "pass"
    assert gate([0.8, 0.5, 0.9], 0.7) == "fail"  # mean above, interval not
    assert gate([0.71, 0.75, 0.9], 0.7, rule="every seed") == "pass"
    assert gate([0.69, 0.95, 0.9], 0.7, rule="every seed") == "fail"
    assert gate([0.1, 0.12, 0.11], 0.2, "below") == "pass"
    with pytest.raises(ValueError, match="rule"):
        gate([1.0, 2.0], 0.0, rule="mean")


def test_combine_every_branch_and_behind_every_baseline_reads_no():
    assert combine({"a": "yes", "b": "yes"}) == "yes"
    assert combine({"a": "yes", "b": "no"}) == "partly"
    assert combine({"a": "yes", "b": "unclear"}) == "partly"
    assert combine({"a": "unclear", "b": "no"}) == "unclear"
    assert combine({"random": "no", "KD": "no"}) == "no"  # behind every named baseline: no, never partly
    assert scope_verdict({"KD": "yes", "OFA": "no"}).startswith("partly: yes: KD; no: OFA")
    with pytest.raises(ValueError, match="parts"):
        combine({})
    with pytest.raises(ValueError, match="parts"):
        combine({"a": "maybe"})


# --- rows, gates and tables -----------------------------------------------------------------------


def _rows(gate_word: str = "pass") -> list[Claim]:
    return [
        Claim("identity holds", "closed form", "error 1e-12", "pass: below 1e-9", kind="check"),
        Claim("claim A", "setting", "gain 0.3 [0.2, 0.4]", "yes: interval above 0.1", gates=("teacher",)),
        Claim("teacher beats student", "CE student", "gap 0.05", f"{gate_word}: gap vs 0.02", kind="gate",
              name="teacher"),
        Claim("claim B", "setting", "gain 0.0", "no: below 0.1"),
    ]


def test_rows_refuse_words_of_another_kind_and_unnamed_gates():
    with pytest.raises(ValueError, match="verdict"):
        Claim("c", "s", "1", "pass: x")  # a claim cannot pass
    with pytest.raises(ValueError, match="verdict"):
        Claim("c", "s", "1", "yes: x", kind="gate", name="g")
    with pytest.raises(ValueError, match="name"):
        Claim("c", "s", "1", "pass: x", kind="gate")
    with pytest.raises(ValueError, match="kind"):
        Claim("c", "s", "1", "yes", kind="fact")
    with pytest.raises(ValueError, match="gates"):
        Claim("c", "s", "1", "pass", kind="check", gates=("g",))


def test_a_failed_gate_makes_its_claims_untested_naming_it():
    rows = apply_gates(_rows("fail"))
    a = next(r for r in rows if r.claim == "claim A")
    assert a.outcome == "untested" and "'teacher'" in a.verdict and "gap 0.05" in a.verdict
    assert next(r for r in rows if r.claim == "claim B").outcome == "no"  # no gate: unchanged
    assert [r.outcome for r in apply_gates(_rows("pass"))] == ["pass", "yes", "pass", "no"]
    missing = apply_gates([Claim("c", "s", "1", "yes", gates=("nowhere",))])
    assert missing[0].outcome == "untested" and "did not run" in missing[0].verdict


def test_tables_put_gates_first_and_checks_apart():
    table = claims_table(_rows("fail")).splitlines()
    assert table[2].startswith("| gate | teacher beats student") and "**fail**" in table[2]
    assert "**untested**" in table[3] and "identity holds" not in "\n".join(table)
    checks = checks_table(_rows())
    assert "identity holds" in checks and "claim A" not in checks
    counts = outcome_counts(_rows("fail"))
    assert counts["gate"]["fail"] == 1 and counts["claim"]["untested"] == 1 and counts["check"]["pass"] == 1


# --- criteria: verdict functions driven through every branch --------------------------------------


def _verdict(gain: list[float], threshold: float = 0.1) -> str:
    return f"{compare(gain, threshold)}: paired gain vs {threshold}"


def _cannot_say_no(gain: list[float], threshold: float = 0.1) -> str:
    word = compare(gain, threshold)
    return f"{'unclear' if word == 'no' else word}: the branch that says no was deleted"


EXAMPLES = {"yes": (([0.3, 0.31, 0.29],), {}), "no": (([0.0, 0.01, 0.02],), {}), "unclear": (([0.0, 0.3],), {})}


def test_drive_accepts_a_criterion_that_reaches_every_branch():
    assert drive([Criterion("gain", "claim", _verdict, 0.1, "interval above 0.1", EXAMPLES)]) == []


def test_drive_fails_a_verdict_function_with_a_deleted_branch():
    problems = drive([Criterion("gain", "claim", _cannot_say_no, 0.1, "interval above 0.1", EXAMPLES)])
    assert problems == ["gain: example 'no' returned 'unclear'"]
    missing = drive([Criterion("gain", "claim", _verdict, 0.1, "r", {"yes": EXAMPLES["yes"]}, scoped=True)])
    assert missing and "['no', 'partly', 'unclear']" in missing[0]
    gate_missing = drive([Criterion("g", "gate", lambda x: gate(x, 0.5), 0.5, "r", {"pass": (([0.9, 0.9],), {})})])
    assert gate_missing == ["g: no example for ['fail']"]


# --- seed studies ---------------------------------------------------------------------------------


def test_a_seed_study_records_verdicts_per_base_seed_and_knows_when_it_is_stale(tmp_path):
    assert main(["seeds", "omwu", "--seeds", "0,1", "--scale", "smoke", "--out", str(tmp_path)]) == 0
    study = json.loads((tmp_path / "omwu.json").read_text())
    assert study["seeds"] == [0, 1] and study["rows"]
    assert all(len(r["verdicts"]) == 2 for r in study["rows"])
    assert seed_study.is_fresh("omwu", tmp_path)
    assert "seed 1" in seed_study.study_table("omwu", tmp_path)
    # where it ran is recorded and shown, since trained numbers depend on the CPU
    assert study["machine"]["cpu"] and study["machine"]["torch"] == torch.__version__
    assert study["machine"]["cpu"] in seed_study.study_table("omwu", tmp_path)
    del study["machine"]  # an older study without the record still renders, without a guessed machine
    (tmp_path / "omwu.json").write_text(json.dumps(study))
    assert "Computed on" not in seed_study.study_table("omwu", tmp_path)
    study["source_hash"] = "0" * 64
    (tmp_path / "omwu.json").write_text(json.dumps(study))
    assert not seed_study.is_fresh("omwu", tmp_path)
    with pytest.raises(ValueError, match="seeds"):
        seed_study.load_study("rpkd", tmp_path)


def test_the_seeds_command_refuses_bad_seeds(capsys):
    assert main(["seeds", "omwu", "--seeds", "0,0"]) == 2
    assert "--seeds" in capsys.readouterr().err
    assert main(["seeds", "omwu", "--seeds", "a,b"]) == 2
