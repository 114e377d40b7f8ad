"""Chapter 14 (trac): models, the modified-HP definition, TrAC against the oracle, responsibility."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from explorables.trac import (
    SCM,
    ac2_witness,
    brute_force_causes,
    but_for_causes,
    classic_examples,
    context_distribution,
    first_cause,
    is_actual_cause,
    minimal_sets,
    parse_formula,
    parse_outcome,
    pruned_search,
    random_boolean_scm,
    responsibility,
    trac,
    witness_map,
)
from explorables.trac.responsibility import blame

EXAMPLES = classic_examples()


def _random_instances(count: int, n_low: int, n_high: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(n_low, n_high + 1))
        yield random_boolean_scm(n, rng)


# --- the classic examples ------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(EXAMPLES))
def test_classic_examples_give_the_literatures_causes(key):
    ex = EXAMPLES[key]
    expected = set(ex.literature)
    assert trac(ex.model, ex.context, ex.outcome).sets == expected
    assert pruned_search(ex.model, ex.context, ex.outcome).sets == expected
    assert brute_force_causes(ex.model, ex.context, ex.outcome).sets == expected


def test_modified_definition_distinguishes_the_classic_cases():
    """Hand-checked consequences of AC2(a^m): disjunctive fire needs the conjunction; BT is no cause."""
    rock = EXAMPLES["rock_throwing"]
    assert not is_actual_cause(rock.model, rock.context, ["BT"], "BS")
    assert is_actual_cause(rock.model, rock.context, ["ST"], "BS")
    (st,) = [c for c in trac(rock.model, rock.context, "BS").causes if c.variables == {"ST"}]
    assert st.contingency == {"BH": 0} and st.alternative == {"ST": 0} and st.world["BS"] == 0
    fire = EXAMPLES["ff_disjunctive"]
    assert not is_actual_cause(fire.model, fire.context, ["L"], "FF")
    assert is_actual_cause(fire.model, fire.context, ["L", "MD"], "FF")
    bogus = EXAMPLES["bogus_prevention"]
    assert not is_actual_cause(bogus.model, bogus.context, ["B"], "VS")


def test_no_causes_when_the_outcome_is_false():
    ex = EXAMPLES["ff_conjunctive"]
    result = trac(ex.model, {"U_L": 1, "U_MD": 0}, "FF")
    assert not result.holds and result.causes == []
    assert brute_force_causes(ex.model, {"U_L": 1, "U_MD": 0}, "FF").causes == []


# --- TrAC against the oracle ------------------------------------------------------------------


def test_trac_equals_the_brute_force_oracle_on_300_random_scms():
    mismatches, multi = [], 0
    for i, (m, u, phi) in enumerate(_random_instances(300, 3, 8, seed=14)):
        found, oracle = trac(m, u, phi), brute_force_causes(m, u, phi)
        if found.sets != oracle.sets:
            mismatches.append(i)
        multi += len(found.sets) > 1
        # the smallest contingency is the same for both (it enters responsibility)
        k_trac = {c.variables: c.k for c in found.causes}
        assert all(k_trac[c.variables] == c.k for c in oracle.causes if c.variables in k_trac)
    assert mismatches == []
    assert multi > 50  # the instances are not trivial


def _two_variable_outcomes(count: int, seed: int):
    """Random SCMs whose outcome is a conjunction or a disjunction of literals over two variables.

    The literals are chosen so that the outcome holds in the actual world (a conjunction of
    actual values; a disjunction with at least one actual value), so that there are causes.
    """
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(4, 8))
        m, u, _ = random_boolean_scm(n, rng)
        actual = m.evaluate(u)
        later = m.order[n // 2 :]  # late variables have ancestors
        a, b = (str(v) for v in rng.choice(later, size=2, replace=False))
        if rng.random() < 0.5:
            phi = f"{a} == {actual[a]} and {b} == {actual[b]}"
        else:
            flip = int(rng.integers(0, 2))  # the second literal is actual or not
            phi = f"{a} == {actual[a]} or {b} == {actual[b] ^ flip}"
        yield m, u, phi


def test_trac_equals_the_oracle_on_outcomes_over_two_variables():
    kinds = {"and": 0, "or": 0}
    multi = 0
    for m, u, phi in _two_variable_outcomes(150, seed=21):
        found, oracle = trac(m, u, phi), brute_force_causes(m, u, phi)
        assert found.holds
        assert found.sets == oracle.sets, phi
        k_trac = {c.variables: c.k for c in found.causes}
        assert all(k_trac[c.variables] == c.k for c in oracle.causes)
        kinds["and" if " and " in phi else "or"] += 1
        multi += len(found.sets) > 1
    assert min(kinds.values()) > 40 and multi > 30  # both kinds, and not trivial


def test_pruned_search_and_baselines_against_trac():
    for m, u, phi in _random_instances(80, 4, 10, seed=5):
        full = trac(m, u, phi)
        assert pruned_search(m, u, phi).sets == full.sets
        assert but_for_causes(m, u, phi).sets <= full.sets
        first = first_cause(m, u, phi).sets
        assert first <= full.sets and len(first) == min(1, len(full.sets))


def test_every_reported_cause_passes_the_independent_checker_and_none_contains_another():
    instances = list(_random_instances(60, 3, 6, seed=7))
    instances += [(e.model, e.context, e.outcome) for e in EXAMPLES.values() if len(e.model.order) <= 6]
    for m, u, phi in instances:
        result = trac(m, u, phi)
        for c in result.causes:
            assert is_actual_cause(m, u, c.variables, phi)
            actual = m.evaluate(u)
            assert all(c.alternative[v] != actual[v] for v in c.actual)  # x' differs everywhere
            world = m.evaluate(u, {**c.alternative, **c.contingency})
            assert world == c.world and not parse_formula(phi)({**u, **world})
            assert all(actual[w] == x for w, x in c.contingency.items())  # W held at actual values
        assert not any(a < b for a in result.sets for b in result.sets)


def test_ac2_witness_falsifies_the_outcome_with_a_smallest_contingency():
    """Every cause's witness from the literal search holds W at actual values, falsifies φ, and is no
    larger than the contingency TrAC reports (both are smallest); BT in the rock story has none."""
    for ex in EXAMPLES.values():
        if len(ex.model.order) > 7:
            continue
        actual = ex.model.evaluate(ex.context)
        phi = parse_outcome(ex.model, ex.outcome)
        for c in trac(ex.model, ex.context, ex.outcome).causes:
            held, alt = ac2_witness(ex.model, ex.context, c.variables, ex.outcome)
            assert set(alt) == c.variables and all(actual[w] == x for w, x in held.items())
            assert not phi({**ex.context, **ex.model.evaluate(ex.context, {**held, **alt})})
            assert len(held) == len(c.contingency)
    rock = EXAMPLES["rock_throwing"]
    assert ac2_witness(rock.model, rock.context, ["BT"], "BS") is None


def test_parse_outcome_reads_an_event_over_endogenous_variables():
    rock = EXAMPLES["rock_throwing"]
    phi = parse_outcome(rock.model, "BS == 1 and not BH")
    assert phi.names == {"BS", "BH"}
    actual = rock.model.evaluate(rock.context)
    assert phi({**rock.context, **actual}) == 1
    assert phi({**rock.context, **rock.model.evaluate(rock.context, {"ST": 0})}) == 0  # BH = 1 then
    with pytest.raises(ValueError, match="outcome"):
        parse_outcome(rock.model, "U_ST")  # exogenous, not endogenous
    with pytest.raises(ValueError, match="outcome"):
        parse_outcome(rock.model, "1")


def test_the_checker_rejects_every_non_cause_up_to_size_two():
    for m, u, phi in _random_instances(25, 3, 6, seed=11):
        causes = trac(m, u, phi).sets
        cands = [v for v in m.order if v not in parse_formula(phi).names]
        for size in (1, 2):
            for X in itertools.combinations(cands, size):
                assert is_actual_cause(m, u, X, phi) == (frozenset(X) in causes)


def test_finite_domain_models_agree_with_the_oracle():
    # a three-valued dial: 0 off, 1 low, 2 high; the alarm sounds on high or on low with the door open
    model = SCM(
        {"Dial": "U_d", "Door": "U_o", "Hot": "Dial == 2", "Alarm": "Hot or (Dial == 1 and Door)"},
        exogenous={"U_d": (0, 1, 2), "U_o": (0, 1)},
        domains={"Dial": (0, 1, 2)},
    )
    for ctx in ({"U_d": 2, "U_o": 1}, {"U_d": 1, "U_o": 1}, {"U_d": 2, "U_o": 0}):
        assert trac(model, ctx, "Alarm").sets == brute_force_causes(model, ctx, "Alarm").sets
        for c in trac(model, ctx, "Alarm").causes:
            assert is_actual_cause(model, ctx, c.variables, "Alarm")
    assert trac(model, {"U_d": 2, "U_o": 1}, "Alarm").sets == {frozenset({"Dial"}), frozenset({"Hot"})}


def test_witness_map_holds_every_cause_with_its_smallest_contingency():
    for ex in EXAMPLES.values():
        if len(ex.model.order) > 8:
            continue
        wmap = witness_map(ex.model, ex.context, ex.outcome)
        causes = trac(ex.model, ex.context, ex.outcome).causes
        nodes = [d for _, d in wmap.nodes(data=True)]
        for c in causes:
            assert any(d["X"] == c.variables and len(d["W"]) == len(c.contingency) and d["cause"] for d in nodes)
        assert {d["X"] for d in nodes if d["cause"]} == {c.variables for c in causes}


def test_minimal_sets():
    assert minimal_sets([0b011, 0b001, 0b110, 0b100, 0b111]) == [0b001, 0b100]
    assert minimal_sets([]) == []


# --- responsibility and blame -------------------------------------------------------------------


def test_responsibility_in_voting_matches_chockler_halpern():
    ex = EXAMPLES["voting_6_5"]
    r = responsibility(trac(ex.model, ex.context, "W"))
    assert all(r[f"V{i}"] == 1.0 for i in range(1, 7)) and all(r[f"V{i}"] == 0.0 for i in range(7, 12))
    unanimous = {f"UV{i}": 1 for i in range(1, 12)}
    result = trac(ex.model, unanimous, "W")
    assert len(result.causes) == 462  # C(11, 6): any six voters
    assert all(v == pytest.approx(1 / 6) for v in responsibility(result).values())
    # a baseline that finds one cause gets 10 of 11 voters wrong
    first = responsibility(first_cause(ex.model, unanimous, "W"), list(result.candidates))
    assert sum(v == 0 for v in first.values()) == 5
    assert responsibility(but_for_causes(ex.model, unanimous, "W"), list(result.candidates)) == dict.fromkeys(
        result.candidates, 0.0
    )


@pytest.mark.parametrize("p", [0.3, 0.5])
def test_blame_in_the_disjunctive_fire_has_the_closed_form(p):
    """L is forced to 1; MD = 1 with prob. p (cause {L, MD}: 1/2), else L is but-for (1)."""
    ex = EXAMPLES["ff_disjunctive"]
    ctxs = context_distribution(ex.model, {"U_MD": p})
    assert blame(ex.model, "L", 1, "FF", ctxs) == pytest.approx(p / 2 + (1 - p))
    assert blame(ex.model, "L", 1, "FF", ctxs, but_for_causes) == pytest.approx(1 - p)


def test_blame_rejects_a_bad_distribution():
    ex = EXAMPLES["ff_disjunctive"]
    with pytest.raises(ValueError, match="contexts"):
        blame(ex.model, "L", 1, "FF", [({"U_L": 1, "U_MD": 1}, 0.5)])
    with pytest.raises(ValueError, match="prior"):
        context_distribution(ex.model, {"U_L": 1.5})
    ctxs = context_distribution(ex.model, {"U_MD": 0.5})
    with pytest.raises(TypeError, match="method must return a CauseSet"):  # a reader's method, checked before use
        blame(ex.model, "L", 1, "FF", ctxs, lambda model, context, outcome: [["L"]])


# --- models and their validation ------------------------------------------------------------------


def test_scalar_and_vectorised_formulas_agree():
    f = parse_formula("(A and not B) or (A + B + C >= 2 and C != 0) if not (A == B) else -A + 1")
    grid = np.array(list(itertools.product((0, 1), repeat=3)))
    batch = f.batch({"A": grid[:, 0], "B": grid[:, 1], "C": grid[:, 2]}, len(grid))
    assert batch.tolist() == [f({"A": a, "B": b, "C": c}) for a, b, c in grid]


def test_interventions_and_evaluation():
    ex = EXAMPLES["rock_throwing"]
    assert ex.model.evaluate(ex.context) == {"ST": 1, "BT": 1, "SH": 1, "BH": 0, "BS": 1}
    assert ex.model.evaluate(ex.context, {"ST": 0})["BH"] == 1
    assert ex.model.intervened({"ST": 0}).evaluate(ex.context)["BS"] == 1
    rows = ex.model.evaluate_batch(
        ex.context, np.array([[1, 0, 0, 0, 0], [1, 0, 0, 1, 0]], bool), np.array([[0, 0, 0, 0, 0]] * 2, np.int8)
    )
    order = ex.model.order
    assert rows[0, order.index("BS")] == 1 and rows[1, order.index("BS")] == 0
    mask = np.array([[1, 0, 0, 0, 0], [1, 0, 0, 1, 0]], bool)
    as_lists = ex.model.evaluate_batch(ex.context, mask, [[0, 0, 0, 0, 0]] * 2)  # rows as lists: the checked array
    assert as_lists.tolist() == rows.tolist()


@pytest.mark.parametrize(
    ("equations", "exogenous", "match"),
    [
        ({"A": "B", "B": "A"}, [], "cycle"),
        ({"A": "U and Z"}, ["U"], "unknown variable"),
        ({"A": "U + 1"}, ["U"], "outside the domain"),
        ({"A": "__import__('os')"}, [], "not allowed"),
        ({"A": "U.real"}, ["U"], "not allowed"),
        ({"A": "U * 2"}, ["U"], r"only \+ and -"),
        ({"A": "U and"}, ["U"], "cannot parse"),
        ({"A": "1.5"}, [], "integer and Boolean constants"),
        ({"U": "1"}, ["U"], "both exogenous and endogenous"),
        ({}, [], "non-empty"),
    ],
)
def test_bad_models_raise_clear_errors(equations, exogenous, match):
    with pytest.raises(ValueError, match=match):
        SCM(equations, exogenous)


def test_bad_contexts_outcomes_and_domains_raise_clear_errors():
    ex = EXAMPLES["rock_throwing"]
    with pytest.raises(ValueError, match=r"missing values for exogenous variable\(s\) \['U_BT'\]"):
        trac(ex.model, {"U_ST": 1}, "BS")
    with pytest.raises(ValueError, match="must be Boolean"):
        ex.model.evaluate({"U_ST": 2, "U_BT": 1})
    with pytest.raises(ValueError, match="not exogenous"):
        ex.model.evaluate({"U_ST": 1, "U_BT": 1, "ST": 1})
    with pytest.raises(ValueError, match="not endogenous"):
        trac(ex.model, ex.context, "BS and Q")
    with pytest.raises(ValueError, match="not an endogenous variable"):
        ex.model.evaluate(ex.context, {"U_ST": 0})
    with pytest.raises(ValueError, match="not occur in the outcome"):
        is_actual_cause(ex.model, ex.context, ["BS"], "BS")
    with pytest.raises(ValueError, match="domain of A"):
        SCM({"A": "U"}, ["U"], domains={"A": (1,)})
    with pytest.raises(ValueError, match="max_rows"):
        brute_force_causes(ex.model, ex.context, "BS", max_rows=10)


def test_witness_target_table_lists_the_rock_throwing_target():
    from explorables.trac.trac import witness_target_table

    rock = EXAMPLES["rock_throwing"]
    text = witness_target_table(rock.model, rock.context, "BS")
    lines = text.splitlines()[2:]
    # every configuration with BS = 0 has SH = 0 and BH = 0: four of them (ST, BT free)
    assert len(lines) == 4 and all("SH=0 BH=0" in line for line in lines)
    assert sum(line.endswith("| yes |") for line in lines) == 2
    with pytest.raises(ValueError, match="max_rows"):
        witness_target_table(rock.model, rock.context, "BS", max_rows=2)


def test_witness_worlds_match_a_scalar_reading_of_the_definitions():
    """The enumeration shown on the page, against eq. (trac-target) and (trac-witness) evaluated one
    configuration at a time with the scalar interpreter: same worlds, same N(v) and S(v)."""
    from explorables.trac.causes import _setup, candidates_of
    from explorables.trac.trac import witness_worlds

    for m, u, outcome in _random_instances(40, 3, 7, seed=21):
        phi, context, actual, _holds = _setup(m, u, outcome)
        cands = candidates_of(m, phi, ancestors_only=True)
        got = sorted(
            (int(n), int(s), int(k))
            for _codes, ns, ss, ks, _ in witness_worlds(m, context, phi, actual, cands, 1 << 20)
            for n, s, k in zip(ns, ss, ks, strict=True)
        )
        expected = []
        for values in itertools.product(*(m.domains[c] for c in cands)):
            v, env, n_mask, s_mask = dict(zip(cands, values, strict=True)), dict(context), 0, 0
            for name in m.order:
                computed = m.formulas[name](env)
                if name in v:
                    bit = 1 << cands.index(name)
                    if v[name] != computed:  # name in D(v)
                        n_mask |= bit if v[name] != actual[name] else 0
                        s_mask |= bit if v[name] == actual[name] else 0
                    env[name] = v[name]
                else:
                    env[name] = computed
            if not phi(env):
                expected.append((n_mask, s_mask, s_mask.bit_count()))
        assert got == sorted(expected)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("not " * 150 + "A", "nested at most"),
        ("-" * 400 + "A", "nested at most"),
        ("A" + " + A" * 150, "nested at most"),
        ("(" * 1500 + "A" + ")" * 1500, "at most 2000 characters"),
        ("A == " + "9" * 40, "integer constants"),
        ("A" + " or A" * 500, "at most 2000 characters"),
    ],
)
def test_oversized_formulas_are_refused_with_a_clear_error(source, message):
    """Deep, long or huge-constant formulas: a ValueError naming the limit, never RecursionError,
    MemoryError or OverflowError from the parser or the interpreters."""
    from explorables.trac.scm import parse_formula

    with pytest.raises(ValueError, match=message):
        parse_formula(source, "equation for Y")


def test_formulas_at_the_limits_still_evaluate():
    from explorables.trac.scm import MAX_FORMULA_DEPTH, parse_formula

    chain = parse_formula("A" + " + A" * (MAX_FORMULA_DEPTH - 3))
    assert chain({"A": 1}) == MAX_FORMULA_DEPTH - 2
    assert parse_formula("not " * (MAX_FORMULA_DEPTH - 2) + "A")({"A": 1}) in (0, 1)
