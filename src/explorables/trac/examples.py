"""The classic examples of the actual-causality literature, with the causes the literature gives.

Every example gives a model, the actual context, the outcome φ and the causes of φ under the
*modified* HP definition as stated in Halpern (2015, "A modification of the Halpern–Pearl
definition of causality", IJCAI) and Halpern (2016, *Actual Causality*, MIT Press), chapter 2;
responsibility values follow Chockler & Halpern (2004). The tests assert that our enumerators
return exactly these causes.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from ..core.arguments import checked
from .scm import SCM


@checked()
@dataclass(frozen=True)
class Example:
    """A named model with its actual context, outcome, and the literature's causes."""

    key: str
    title: str
    model: SCM
    context: dict[str, int]
    outcome: str
    literature: tuple[frozenset[str], ...]  # the causes the literature gives (variable sets)
    source: str
    note: str


def _voting(n_voters: int, yes: int, key: str, title: str, note: str) -> Example:
    voters = [f"V{i + 1}" for i in range(n_voters)]
    need = n_voters // 2 + 1
    model = SCM({**{v: f"U{v}" for v in voters}, "W": " + ".join(voters) + f" >= {need}"}, [f"U{v}" for v in voters])
    context = {f"U{v}": int(i < yes) for i, v in enumerate(voters)}
    yes_voters = voters[:yes]
    if yes == need:  # every yes voter is pivotal
        literature = tuple(frozenset([v]) for v in yes_voters)
    else:  # a cause is a smallest set of yes voters whose flip loses the vote: yes - need + 1 of them
        literature = tuple(frozenset(c) for c in combinations(yes_voters, yes - need + 1))
    return Example(
        key, title, model, context, "W", literature, "Chockler & Halpern (2004); Halpern (2016), ch. 6", note
    )


@checked()
def classic_examples() -> dict[str, Example]:
    """The examples of the chapter, keyed by a short name (insertion order is the book's)."""
    ex: list[Example] = [
        Example(
            "ff_conjunctive",
            "Forest fire, conjunctive",
            SCM({"L": "U_L", "MD": "U_MD", "FF": "L and MD"}, ["U_L", "U_MD"]),
            {"U_L": 1, "U_MD": 1},
            "FF",
            (frozenset({"L"}), frozenset({"MD"})),
            "Halpern (2016), ch. 2",
            "Lightning and a dropped match are both needed: each is a but-for cause.",
        ),
        Example(
            "ff_disjunctive",
            "Forest fire, disjunctive",
            SCM({"L": "U_L", "MD": "U_MD", "FF": "L or MD"}, ["U_L", "U_MD"]),
            {"U_L": 1, "U_MD": 1},
            "FF",
            (frozenset({"L", "MD"}),),
            "Halpern (2015); Halpern (2016), ch. 2",
            "Either suffices. Under the modified definition neither alone is a cause (W may only be "
            "held at actual values); their conjunction is.",
        ),
        Example(
            "rock_throwing",
            "Suzy and Billy throw rocks (preemption)",
            SCM(
                {"ST": "U_ST", "BT": "U_BT", "SH": "ST", "BH": "BT and not SH", "BS": "SH or BH"},
                ["U_ST", "U_BT"],
            ),
            {"U_ST": 1, "U_BT": 1},
            "BS",
            (frozenset({"ST"}), frozenset({"SH"})),
            "Halpern & Pearl (2005); Halpern (2016), ch. 2",
            "Suzy's rock hits first. ST = 1 is a cause (hold BH at its actual 0); Billy's throw is not.",
        ),
        _voting(
            11,
            6,
            "voting_6_5",
            "Voting, 11 voters, 6–5",
            "Every yes voter is pivotal: six but-for causes, responsibility 1 each.",
        ),
        _voting(
            3,
            3,
            "voting_3_0",
            "Voting, 3 voters, 3–0",
            "No single voter is pivotal: the causes are the pairs of voters, responsibility 1/2 each.",
        ),
        Example(
            "double_prevention",
            "Double prevention (Billy shoots the enemy fighter)",
            SCM(
                {"BPT": "U_B", "EU": "not BPT", "ESS": "EU and U_E", "SBT": "U_S and not ESS", "TD": "SBT"},
                ["U_B", "U_E", "U_S"],
            ),
            {"U_B": 1, "U_E": 1, "U_S": 1},
            "TD",
            (frozenset({"BPT"}), frozenset({"EU"}), frozenset({"ESS"}), frozenset({"SBT"})),
            "Hall (2004); Halpern (2016), ch. 2",
            "Billy prevents the enemy from preventing Suzy's bombing: Billy's shot is a (but-for) cause.",
        ),
        Example(
            "bogus_prevention",
            "Bogus prevention (antidote, no poison)",
            SCM({"A": "U_A", "B": "U_B", "VS": "not A or B"}, ["U_A", "U_B"]),
            {"U_A": 0, "U_B": 1},
            "VS",
            (frozenset({"A", "B"}),),
            "Hitchcock (2007); Halpern (2015)",
            "The bodyguard's antidote B = 1 is not a cause on its own under the modified definition; "
            "only A = 0 ∧ B = 1 together is.",
        ),
    ]
    return {e.key: e for e in ex}
