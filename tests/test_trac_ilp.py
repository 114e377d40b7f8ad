"""Chapter 14 (trac): the ILP single-cause baseline (Ibrahim & Pretschner, reconstructed) against the oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from explorables.trac import (
    SCM,
    ac2_witness,
    brute_force_causes,
    classic_examples,
    ilp_check,
    ilp_enumerate,
    ilp_minimal_cause,
    is_actual_cause,
    parse_outcome,
    random_boolean_scm,
    trac,
)


def _random_instances(count: int, n_low: int, n_high: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(n_low, n_high + 1))
        yield random_boolean_scm(n, rng)


def test_ilp_enumeration_equals_the_oracle_and_every_cause_is_a_true_cause():
    for m, u, phi in _random_instances(25, 3, 7, seed=501):
        oracle = brute_force_causes(m, u, phi)
        run = ilp_enumerate(m, u, phi, details=True)
        assert run.complete
        assert run.causes.sets == oracle.sets
        assert run.solves == len(oracle.causes) + (1 if oracle.holds else 0)  # one per cause, one to prove the end
        assert run.found_at == sorted(run.found_at)
        sizes = [len(c.actual) for c in run.causes.causes]
        assert sizes == sorted(sizes)  # smallest causes first
        smallest_w = {c.variables: len(c.contingency) for c in oracle.causes}
        for c in run.causes.causes:
            world = m.evaluate(u, {**c.contingency, **c.alternative})  # the witness falsifies the outcome
            assert not parse_outcome(m, phi)({**u, **world})
            assert len(c.contingency) == smallest_w[c.variables]  # a smallest contingency for its X
            assert all(c.alternative[v] != c.actual[v] for v in c.actual)


def test_ilp_minimal_cause_is_a_smallest_true_cause():
    for m, u, phi in _random_instances(25, 3, 7, seed=502):
        oracle = brute_force_causes(m, u, phi)
        one = ilp_minimal_cause(m, u, phi)
        if not oracle.causes:
            assert one.causes == []
            continue
        assert len(one.causes) == 1
        (found,) = one.sets
        assert found in oracle.sets
        assert is_actual_cause(m, u, found, phi)
        assert len(found) == min(len(s) for s in oracle.sets)


def test_ilp_checking_mode_agrees_with_the_definition_on_every_candidate():
    checked = 0
    for m, u, phi in _random_instances(12, 3, 6, seed=503):
        truth = brute_force_causes(m, u, phi)
        cands = truth.candidates
        for size in range(1, len(cands) + 1):
            for X in itertools.combinations(cands, size):
                got = ilp_check(m, u, X, phi)
                assert got.is_cause == (frozenset(X) in truth.sets)
                assert got.is_cause == is_actual_cause(m, u, X, phi)
                checked += 1
                if got.reason == "no witness":
                    assert ac2_witness(m, u, X, phi) is None
                elif got.reason == "not minimal":  # the solver's smaller cause lies inside X and is a cause
                    assert got.smaller < frozenset(X)
                    assert got.smaller in truth.sets
                elif got.reason == "cause":
                    assert got.smaller == frozenset(X)
    assert checked > 100


@pytest.mark.parametrize("key", sorted(classic_examples()))
def test_ilp_on_the_classic_examples(key):
    ex = classic_examples()[key]
    assert ilp_enumerate(ex.model, ex.context, ex.outcome).sets == trac(ex.model, ex.context, ex.outcome).sets


def test_solver_status_is_a_clear_result():
    # ¬φ is infeasible: the outcome cannot be made false by any intervention, so no cause and a complete list
    m = SCM({"A": "U", "Y": "A or not A"}, ["U"])
    run = ilp_enumerate(m, {"U": 1}, "Y", details=True)
    assert run.complete and run.causes.causes == [] and run.solves == 1
    assert ilp_check(m, {"U": 1}, ["A"], "Y").reason == "no witness"
    # the outcome is false in the actual world (AC1): no program is solved
    rock = classic_examples()["rock_throwing"]
    run = ilp_enumerate(rock.model, {"U_ST": 0, "U_BT": 0}, "BS", details=True)
    assert run.complete and run.solves == 0 and not run.causes.holds
    assert ilp_check(rock.model, {"U_ST": 0, "U_BT": 0}, ["ST"], "BS").reason == "outcome false"
    # a budget that runs out: an incomplete list, never an error or a wrong cause
    vote = classic_examples()["voting_6_5"]
    ctx = {f"UV{i}": 1 for i in range(1, 12)}
    cut = ilp_enumerate(vote.model, ctx, vote.outcome, max_causes=3, details=True)
    assert not cut.complete and len(cut.causes.causes) == 3
    assert cut.causes.sets <= trac(vote.model, ctx, vote.outcome).sets
    tiny = ilp_enumerate(vote.model, ctx, vote.outcome, max_solves=2, details=True)
    assert not tiny.complete and tiny.solves == 2 and tiny.causes.sets <= trac(vote.model, ctx, vote.outcome).sets
    # a budget counted in solves and nodes: the same call twice gives the same list, solves and nodes
    again = ilp_enumerate(vote.model, ctx, vote.outcome, max_solves=2, details=True)
    assert (again.causes.sets, again.complete, again.solves, again.nodes) == (
        tiny.causes.sets,
        tiny.complete,
        tiny.solves,
        tiny.nodes,
    )
    # the node count is recorded: each solve that finds a cause explores at least the root node
    # (the example's own context, 6 of 11 yes: 6 causes; all 11 yes would have C(11, 6) = 462 of them)
    full = ilp_enumerate(vote.model, vote.context, vote.outcome, details=True)
    assert full.complete and full.nodes >= len(full.causes.causes) >= 1 and full.max_nodes >= 1
    assert full.nodes <= full.solves * full.max_nodes
    # a non-ancestor in the candidate: no minimal cause contains it
    m = SCM({"A": "U", "B": "U", "Y": "A"}, ["U"])
    got = ilp_check(m, {"U": 1}, ["A", "B"], "Y")
    assert got.reason == "not minimal" and got.smaller == frozenset({"A"})


def test_ilp_bad_input_raises_clear_errors():
    rock = classic_examples()["rock_throwing"]
    m, u, phi = rock.model, rock.context, rock.outcome
    with pytest.raises(ValueError, match="max_solves"):
        ilp_enumerate(m, u, phi, max_solves=0)
    with pytest.raises(ValueError, match="max_solves"):
        ilp_enumerate(m, u, phi, max_solves=float("nan"))
    with pytest.raises(ValueError, match="node_limit"):
        ilp_enumerate(m, u, phi, node_limit=-1)
    with pytest.raises(ValueError, match="max_causes"):
        ilp_enumerate(m, u, phi, max_causes=0)
    with pytest.raises(ValueError, match="at least one"):
        ilp_check(m, u, [], phi)
    with pytest.raises(ValueError, match="endogenous"):
        ilp_check(m, u, ["nope"], phi)
    with pytest.raises(ValueError, match="outcome"):
        ilp_check(m, u, ["ST"], "nope")
    wide = SCM({"A": "U", "Y": "A >= 1"}, ["U"], domains={"A": (0, 1, 2)})
    with pytest.raises(ValueError, match="Boolean"):
        ilp_enumerate(wide, {"U": 1}, "Y")
