"""Degree of responsibility and blame (Chockler & Halpern 2004), over a full set of causes.

**Responsibility** (Halpern 2016, *Actual Causality*, Def. 6.2.1, for the modified definition):
the degree of responsibility of X = x for φ in (M, u) is 0 if X = x is not a conjunct of any
actual cause, and otherwise 1/k with

    k = min { |X⃗| + |W⃗| : X⃗ = x⃗ a cause of φ containing X = x, (W⃗, w⃗*, x⃗′) a witness for it }.

So a but-for cause has responsibility 1; each of 11 voters in an 11–0 majority vote has 1/6.
The minimum runs over *all* causes containing X: a method that misses causes over-states k
(or reports 0), which is why completeness matters.

**Blame** (Chockler & Halpern 2004, Def. 3.3): given a probability over contexts, the blame of
the action X = x for φ is the expected degree of responsibility of X = x for φ in the model where
X is set to x, (M_{X←x}, u), over the contexts u.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

import numpy as np

from ..core.arguments import checked
from ..core.params import Int, Probability
from ..core.validation import check_in_range
from .causes import CauseSet
from .scm import BOOL, SCM
from .trac import trac


@checked()
def responsibility(cause_set: CauseSet, variables: list[str] | None = None) -> dict[str, float]:
    """``{variable: degree of responsibility}`` from the causes in ``cause_set`` (0 if in none)."""
    names = list(variables if variables is not None else cause_set.candidates)
    out = dict.fromkeys(names, 0.0)
    for cause in cause_set.causes:
        for v in cause.variables:
            if v in out:
                out[v] = max(out[v], 1.0 / cause.k)
    return out


@checked(default=Probability())
def context_distribution(
    model: SCM, prior: Mapping[str, float] | None = None, default: float = 0.5
) -> list[tuple[dict[str, int], float]]:
    """Every context with its probability, exogenous variables independent Bernoulli(``prior[u]``).

    Only for Boolean exogenous variables (give explicit ``(context, probability)`` pairs to
    :func:`blame` otherwise). ``default`` is used for variables missing from ``prior``.
    """
    prior = dict(prior or {})
    unknown = sorted(set(prior) - set(model.exogenous))
    if unknown:
        raise ValueError(f"prior names {unknown}, which are not exogenous variables")
    names = sorted(model.exogenous)
    if any(model.exogenous[u] != BOOL for u in names):
        raise ValueError("context_distribution needs Boolean exogenous variables; pass explicit contexts")
    if len(names) > 16:
        raise ValueError(f"too many exogenous variables ({len(names)} > 16) to enumerate contexts")
    p = {u: check_in_range(f"prior[{u}]", prior.get(u, default), 0.0, 1.0) for u in names}
    out = []
    for bits in itertools.product(BOOL, repeat=len(names)):
        ctx = dict(zip(names, bits, strict=True))
        prob = float(np.prod([p[u] if b else 1 - p[u] for u, b in ctx.items()]))
        if prob > 0:
            out.append((ctx, prob))
    return out


@checked(skip_nested=True, value=Int(-128, 127))  # responsibility runs bare; a method passed in runs checked
def blame(
    model: SCM,
    variable: str,
    value: int,
    outcome: str,
    contexts: list[tuple[dict[str, int], float]],
    method: Callable[[SCM, Mapping[str, int], str], CauseSet] = trac,
) -> float:
    """Blame of ``variable = value`` for ``outcome``: Σ_u Pr(u) · dr((M_{X←x}, u), X = x, φ)."""
    for item in contexts:
        if not (isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[0], Mapping)):
            raise ValueError(f"contexts must hold (context dict, probability) pairs, got {item!r}")
        p = item[1]
        if isinstance(p, bool) or not isinstance(p, int | float | np.integer | np.floating) or not 0 <= p <= 1:
            raise ValueError(f"contexts must hold probabilities in [0, 1], got {p!r}")
    total = sum(p for _, p in contexts)
    if not contexts or abs(total - 1.0) > 1e-9:
        raise ValueError(f"contexts must be (context, probability) pairs summing to 1, got total {total:g}")
    if variable not in model.formulas:
        raise ValueError(f"variable must be an endogenous variable of the model ({model.order}), got {variable!r}")
    if value not in model.domains[variable]:
        raise ValueError(f"value must be in the domain {model.domains[variable]} of {variable}, got {value!r}")
    forced = model.intervened({variable: value})
    total_blame = 0.0
    for ctx, p in contexts:
        causes = method(forced, ctx, outcome)
        if not isinstance(causes, CauseSet):  # a reader's method: its result is checked before it is used
            raise TypeError(f"method must return a CauseSet, got {type(causes).__name__}")
        total_blame += p * responsibility(causes, [variable])[variable]
    return float(total_blame)
