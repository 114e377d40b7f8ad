"""Chapter 14 (trac): the experiment, its resume, the runner, the claims, the figures and the lab."""

from __future__ import annotations

import json

import pytest

from explorables.cli import main
from explorables.core.checkpoint import Checkpointer
from explorables.trac import TracConfig, run
from explorables.trac import experiment as trac_experiment
from explorables.trac.claims import claims, examples_table, responsibility_table, scaling_table
from explorables.trac.figures import all_figures

from .smoke_runs import smoke_run


def _untimed(value):
    """Results without wall-clock measurements (keys starting with time_, ending in _s or _seconds: what is read
    off a clock, such as the ILP-to-TrAC time ratio and the ILP's recall within TrAC's time; timings)."""
    if isinstance(value, dict):
        clocked = {k for k in value if k.startswith("time") or k.endswith(("_s", "_seconds")) or k == "timings"}
        return {k: _untimed(v) for k, v in value.items() if k not in clocked}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


@pytest.fixture(scope="module")
def smoke():
    return smoke_run("trac")


def test_smoke_run_shows_the_claimed_directions(smoke):
    s = smoke.summary
    assert all(e["matches_literature"] for e in s["examples"].values())
    assert all(e["every_cause_in_map"] for e in s["examples"].values())
    a = s["agreement"]
    assert a["equal_oracle"] == a["instances"] == a["equal_pruned"]
    assert a["recheck_failed"] == 0 and a["superset_pairs"] == 0 and a["rechecked_causes"] > 0
    per_n = s["scaling"]["per_n"]
    assert all(p["brute_agree"] for p in per_n if p["brute_agree"] is not None)
    # the claimed direction on the seeded run: each single-cause baseline misses causes at some n
    assert min(p["recall_first"] for p in per_n) < 1 and min(p["recall_but_for"] for p in per_n) < 1
    assert max(p["resp_wrong_but_for"] for p in per_n) > 0  # and then gets some responsibility wrong
    # restricting the oracle to the ancestors never enlarges its search; TrAC's is smaller still
    for p in per_n:
        if p["rows_brute_mean"] is not None:
            assert p["rows_trac_mean"] <= p["rows_brute_anc_mean"] <= p["rows_brute_mean"]
    rows = {c.claim: c for c in claims(smoke)}
    assert rows["TrAC is sound and complete for enumerating all actual causes"].outcome in ("yes", "unclear")
    assert next(c for c in claims(smoke) if c.name == "multiple causes").outcome == "pass"
    assert "n ≥ 15" in rows["Practical for graphs of up to 15 nodes"].setting
    assert all(len(p["per_instance"]["causes"]) == p["instances"] for p in per_n)
    # the ILP baseline ran at every n, returned only true causes, and (unbudgeted in practice) all of them
    assert all(p["ilp_sound"] and p["ilp_agree"] for p in per_n)
    assert all(0 <= r <= 1 for p in per_n for r in p["per_instance"]["recall_ilp_within_trac_s"] if r is not None)
    # the ILP's solves and nodes are recorded per instance, and its budget is counted in solves
    for p in per_n:
        solves, nodes = p["per_instance"]["ilp_solves"], p["per_instance"]["ilp_nodes"]
        assert all(1 <= k <= smoke.config.ilp_max_solves for k in solves)
        assert all(0 <= v for v in nodes) and p["ilp_max_nodes"] >= 1 and p["ilp_nodes_per_solve"] >= 0
    assert "solver_floor_seconds" not in s["scaling"]


def test_ilp_fields_depend_on_the_seed_alone():
    # the ILP's budget is counted in solves and nodes, so completeness, solves, nodes and recall within the
    # budget are the same on two runs of the same instance (only the _s / _seconds fields are read off a clock)
    rows = [trac_experiment.scaling_instance(10, 7, 0, 3, 0, 0, ilp_max_n=10, ilp_max_solves=3) for _ in range(2)]
    keys = ("ilp_complete", "ilp_solves", "ilp_nodes", "ilp_max_nodes", "ilp_sound", "ilp_equal", "recall_ilp")
    assert all(k in rows[0] for k in keys)
    assert [r[k] for k in keys for r in rows[:1]] == [r[k] for k in keys for r in rows[1:]]
    assert _untimed(rows[0]) == _untimed(rows[1])


def test_parallel_workers_give_the_same_results():
    cfg = TracConfig.preset("smoke", n_variables_grid=(4, 6), n_instances=3)
    assert _untimed(run(cfg.replace(workers=2)).summary) == _untimed(run(cfg).summary)


def test_resume_after_a_crash_in_the_scaling_sweep_matches_an_uninterrupted_run(tmp_path, monkeypatch):
    cfg = TracConfig.preset("smoke")
    reference = run(cfg)
    original = trac_experiment.scaling_instance

    def crash_at_8(n, *args):
        if n == 8:
            raise KeyboardInterrupt
        return original(n, *args)

    monkeypatch.setattr(trac_experiment, "scaling_instance", crash_at_8)
    with pytest.raises(KeyboardInterrupt):
        run(cfg, checkpoint=Checkpointer(tmp_path, every_s=0))
    stored = Checkpointer(tmp_path, resume=True)
    assert stored.get("scaling/n=4") is not None and stored.get("scaling/n=8") is None
    monkeypatch.setattr(trac_experiment, "scaling_instance", original)
    resumed = run(cfg, checkpoint=Checkpointer(tmp_path, resume=True))
    assert _untimed(resumed.summary) == _untimed(reference.summary)
    # finished parts are reused as they are
    again = run(cfg, checkpoint=Checkpointer(tmp_path, resume=True))
    assert again.summary["scaling"] == resumed.summary["scaling"]


def test_cli_smoke_run_writes_results(tmp_path):
    assert main(["run", "trac", "--scale", "smoke", "--out", str(tmp_path), "--no-figures", "--quiet"]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["agreement"]["equal_oracle"] == results["agreement"]["instances"]


def test_tables_and_figures_build(smoke):
    assert "Suzy and Billy" in examples_table(smoke) and "✗" not in examples_table(smoke)
    assert "blame" in responsibility_table(smoke) and "recall" in scaling_table(smoke)
    figs = all_figures(smoke)
    explorable = figs["explorable"]
    examples = smoke.summary["examples"]
    buttons = explorable.layout.updatemenus[0].buttons
    assert len(buttons) == len(examples)
    steps = explorable.layout.sliders[0].steps
    assert len(steps) == sum(len(e["causes"]) for e in examples.values())  # every cause of every example
    assert sum(bool(t.visible) for t in explorable.data) == 2  # edges + one cause's nodes
    for button in buttons:  # a button shows its example's first cause: the slider's step of that cause
        step = steps[button.args[1]["sliders[0].active"]]
        assert button.args[0]["visible"] == step.args[0]["visible"] and sum(button.args[0]["visible"]) == 2
        assert button.args[1]["title.text"] == step.args[1]["title.text"] and "cause 1 of" in step.args[1]["title.text"]


# --- the verdicts on constructed summaries ---------------------------------------------------------


def _per_instance(causes=(2, 3, 1, 2), recall_but_for=(0.5, 0.3, 1.0, 0.5), recall_first=(0.5, 0.3, 1.0, 0.5),
                  resp_wrong_but_for=(1, 1, 0, 1), resp_wrong_first=(1, 1, 0, 1), time=0.01):  # fmt: skip
    return {"causes": list(causes), "time_trac_seconds": [time] * len(causes),
            "recall_but_for": list(recall_but_for), "recall_first": list(recall_first),
            "resp_wrong_but_for": list(resp_wrong_but_for), "resp_wrong_first": list(resp_wrong_first)}  # fmt: skip


def _claims_results(per_instance: dict | None = None, **changes):
    """A constructed summary with every entry ``claims`` reads; ``changes`` override entries of the last n,
    ``per_instance`` the values of every instance (synthetic numbers, both n alike)."""
    from explorables.trac import TracResults

    values = _per_instance(**(per_instance or {}))
    example = {"matches_literature": True, "every_cause_in_map": True, "witness_map_nodes": 5}
    agreement = {"instances": 100, "max_n": 6, "equal_oracle": 100, "recheck_failed": 0, "superset_pairs": 0,
                 "rechecked_causes": 12}  # fmt: skip
    small = {"n": 8, "brute_agree": True, "frac_multiple_causes": 0.5, "recall_but_for": 0.8, "recall_first": 0.7,
             "time_trac_max_seconds": 0.01, "ancestors_mean": 5.0, "time_trac_median_seconds": 0.001,
             "resp_wrong_but_for": 0.3, "resp_wrong_first": 0.2, "resp_err_but_for": 0.1, "resp_err_first": 0.1,
             "time_brute_median_seconds": 0.1, "time_brute_anc_median_seconds": 0.01, "rows_brute_mean": 16384.0,
             "rows_brute_anc_mean": 900.0, "rows_trac_mean": 32.0, "per_instance": values}  # fmt: skip
    large = {**small, "n": 16, "brute_agree": None, "time_brute_median_seconds": None,
             "time_brute_anc_median_seconds": None, "rows_brute_mean": None, "rows_brute_anc_mean": None,
             **changes}  # fmt: skip
    summary = {"examples": {"a": example, "b": dict(example)}, "agreement": agreement,
               "scaling": {"per_n": [small, large]}}  # fmt: skip
    return TracResults(TracConfig(), summary)


def test_claims_verdicts_follow_their_criteria_on_constructed_summaries():
    from explorables.core.tables import apply_gates

    def outcomes(results):
        return [c.outcome for c in claims(results)]

    assert [c.kind for c in claims(_claims_results())] == ["check", "check", "check", "check", "gate", "claim", "claim"]
    assert outcomes(_claims_results()) == ["pass", "pass", "pass", "pass", "pass", "yes", "yes"]
    # the gate: few instances with two causes or more; completeness is not tested, the claim turns untested
    rare = _claims_results({"causes": (1, 1, 2, 1)})
    assert outcomes(rare)[4] == "fail"
    assert [c.outcome for c in apply_gates(claims(rare))][5:] == ["untested", "yes"]
    # feasibility: every instance at n >= 15 under 5 s; slow everywhere: no; one slow instance: unclear
    assert outcomes(_claims_results({"time": 6.0}))[6] == "no"
    mixed = _claims_results()
    mixed.summary["scaling"]["per_n"][1]["per_instance"] = {**_per_instance(), "time_trac_seconds": [0.1, 0.1, 9, 0.1]}
    assert outcomes(mixed)[6] == "unclear"
    assert claims(_claims_results(n=14))[6].verdict.startswith("unclear: the sweep stopped below n = 15")
    assert "largest n checked" in claims(_claims_results())[6].setting
    # the baseline checks (true by construction): full recall, or no wrong responsibility, for one baseline fails
    full = (1.0, 1.0, 1.0, 1.0)
    assert outcomes(_claims_results({"recall_first": full}))[2] == "fail"
    never = (0, 0, 0, 0)
    assert outcomes(_claims_results({"resp_wrong_first": never}))[3] == "fail"
    # soundness and completeness: any mismatch, failed recheck or nested pair of causes is a "no"
    for key, value in (("equal_oracle", 99), ("recheck_failed", 1), ("superset_pairs", 1)):
        broken = _claims_results()
        broken.summary["agreement"][key] = value
        assert outcomes(broken)[5] == "no", key
    broken = _claims_results()
    broken.summary["scaling"]["per_n"][0]["brute_agree"] = False
    assert outcomes(broken)[5] == "no" and "(sweep: not all)" in claims(broken)[5].measured
    few = _claims_results()
    few.summary["agreement"].update(instances=10, equal_oracle=10)
    assert outcomes(few)[5] == "unclear"  # no mismatch, but too few instances to tell
    broken = _claims_results()
    broken.summary["examples"]["b"]["every_cause_in_map"] = False
    assert outcomes(broken)[0] == "fail"
    # speed: TrAC not faster than the ancestors-only oracle fails; without an oracle run the row is absent
    slow = _claims_results()
    slow.summary["scaling"]["per_n"][0]["time_trac_median_seconds"] = 0.02
    assert outcomes(slow)[1] == "fail"
    no_oracle = _claims_results()
    no_oracle.summary["scaling"]["per_n"][0].update(time_brute_median_seconds=None, time_brute_anc_median_seconds=None)
    assert len(claims(no_oracle)) == 6


def test_criteria_reach_every_branch():
    from explorables.core.verdicts import drive
    from explorables.trac.claims import CRITERIA

    assert drive(CRITERIA) == []
    assert {c.kind for c in CRITERIA} == {"check", "gate", "claim"}


# --- the live lab -----------------------------------------------------------------------------


def test_lab_shows_every_cause_and_redraws_without_rerunning():
    from explorables.trac.lab import TracLab

    lab = TracLab("voting_3_0")
    assert lab.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "3 cause(s)" in lab.status.value and lab.cause.max == 2
    result, image = lab.result, lab.image.value
    lab.cause.value = 1
    assert lab.result is result and lab.image.value != image
    lab.example.value = "rock_throwing"
    assert lab.result is not result and "ST=1" in lab.table.value and "blame" in lab.table.value


def test_lab_reports_bad_models_instead_of_failing():
    from explorables.trac.lab import TracLab, parse_context, parse_equations

    lab = TracLab("ff_conjunctive")
    lab.equations.value = "A = B\nB = A"
    assert "cycle" in lab.status.value
    lab.equations.value = "FF = L and MD\nL = U_L\nMD = U_MD"
    lab.context.value = "U_L=1"
    assert "missing" in lab.status.value
    with pytest.raises(ValueError, match="line 1"):
        parse_equations("A == B")
    with pytest.raises(ValueError, match="context"):
        parse_context("U_L")
