"""Book-wide verdict rules (Claims kit 3): decided on an interval over seeds, never on a mean alone.

Three kinds of rows (see :class:`~explorables.core.tables.Claim`):

* a **check** is our own verification (an identity, agreement with a reference library, a fact
  true by construction): ``pass`` or ``fail``;
* a **gate** is a positive control: the setup can show the paper's effect at all (a teacher better
  than the student, a model that does the task). Its threshold is fixed before any comparison;
  ``pass`` or ``fail``;
* a **claim** is the paper's: ``yes``, ``partly`` (it holds in part of its stated scope), ``no``,
  ``unclear`` (the interval over seeds straddles the threshold) or ``untested`` (a gate it depends on
  failed: our setup could not tell, which is a defect of the chapter, not evidence against the paper).

The rules, tested once here and used by every chapter:

* :func:`interval` is the 95% Student-t interval of per-seed values, ``mean ± t·se`` with se the
  sample sd (ddof = 1) over sqrt(n) and t the 0.975 quantile of Student's t with n − 1 degrees of
  freedom (4.30 for 3 seeds, 2.78 for 5): with few seeds, ``mean ± 2 se`` would cover the true mean
  far less often than 95% (about 82% at n = 3), and verdicts would flip between base seeds;
* :func:`compare` reads ``yes`` when the whole interval clears the threshold, ``no`` when the whole
  interval falls short of it, ``unclear`` otherwise; one seed decides nothing (its interval is
  unbounded), so a single-seed run reads ``unclear``;
* :func:`gate` passes when the interval clears its threshold (``rule="interval"``) or when every
  seed does (``rule="every seed"``);
* :func:`combine` joins the parts of a claim's scope (one per baseline, per component, per setting):
  ``yes`` when every part reads yes, ``no`` when every part reads no, ``partly`` when some read yes
  and the rest no or unclear, ``unclear`` otherwise. A method behind every named baseline reads
  ``no``, never ``partly``.

A chapter declares its criteria in one place, ``CRITERIA`` in its ``claims.py``: one
:class:`Criterion` per verdict function, with its threshold and synthetic inputs that reach every
branch; the contract test drives them (:func:`drive`), so a verdict function that cannot say
``no`` fails the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy.stats import t as student_t

KINDS: tuple[str, ...] = ("check", "gate", "claim")
CLAIM_WORDS: tuple[str, ...] = ("yes", "partly", "no", "unclear", "untested")
GATE_WORDS: tuple[str, ...] = ("pass", "fail")
#: the words a row of each kind may start with
WORDS: dict[str, tuple[str, ...]] = {"check": GATE_WORDS, "gate": GATE_WORDS, "claim": CLAIM_WORDS}
#: the coverage of :func:`interval`
LEVEL = 0.95


def t_multiplier(n: int) -> float:
    """Half-width of the :data:`LEVEL` Student-t interval in standard errors, for ``n`` values (inf for n < 2)."""
    if n < 2:
        return math.inf
    return float(student_t.ppf(0.5 + LEVEL / 2, n - 1))


def first_word(verdict: str) -> str:
    """A verdict's first word, lower-cased and stripped of punctuation and Markdown emphasis."""
    words = verdict.split()
    return words[0].strip(".,:;!*()_").lower() if words else ""


def mean_sd(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Mean and **sample** standard deviation (ddof = 1) of per-seed values; sd is NaN for one value."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("values must hold at least one number, got an empty sequence")
    return float(x.mean()), (float(x.std(ddof=1)) if x.size > 1 else math.nan)


def fmt_pm(mean: float, sd: float, digits: int = 2) -> str:
    """``mean ± sd`` with ``digits`` decimals (``mean`` alone when sd is NaN: a single seed)."""
    if math.isnan(sd):
        return f"{mean:.{digits}f} (one seed)"
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def fmt_mean_sd(values: Sequence[float] | np.ndarray, digits: int = 2) -> str:
    """``mean ± sd`` (sample sd) of per-seed values: the book's one way to write a spread over seeds."""
    return fmt_pm(*mean_sd(values), digits=digits)


@dataclass(frozen=True)
class Interval:
    """``mean ± t·se`` of per-seed values, the 95% Student-t interval (``low``/``high`` infinite for one value)."""

    mean: float
    se: float
    n: int

    @property
    def half_width(self) -> float:
        """``t·se``: t the Student-t quantile for ``n − 1`` degrees of freedom (inf for one value)."""
        return t_multiplier(self.n) * self.se if self.n > 1 else math.inf

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def __str__(self) -> str:
        return self.format()

    def format(self, digits: int = 2, signed: bool = False) -> str:
        """``mean [low, high]`` over ``n`` seeds."""
        sign = "+" if signed else ""
        if self.n < 2:
            return f"{self.mean:{sign}.{digits}f} (one seed: no interval)"
        return f"{self.mean:{sign}.{digits}f} [{self.low:{sign}.{digits}f}, {self.high:{sign}.{digits}f}]"


def interval(values: Sequence[float] | np.ndarray) -> Interval:
    """The 95% Student-t interval of per-seed values (se = sample sd / sqrt(n)); one value is unbounded."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("values must hold at least one number, got an empty sequence")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"values must be finite, got {x.tolist()!r:.120}")
    se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.inf
    return Interval(float(x.mean()), se, int(x.size))


Direction = Literal["above", "below"]


def compare(values: Sequence[float] | np.ndarray, threshold: float, direction: Direction = "above") -> str:
    """``yes`` / ``no`` / ``unclear``: where the interval of ``values`` lies against ``threshold``.

    ``direction="above"``: yes when the interval's low end is at least the threshold, no when its
    high end is below it; ``"below"`` mirrors it (for a quantity that should be small).
    """
    if direction not in ("above", "below"):
        raise ValueError(f"direction must be 'above' or 'below', got {direction!r}")
    iv = interval(values)
    if direction == "above":
        return "yes" if iv.low >= threshold else "no" if iv.high < threshold else "unclear"
    return "yes" if iv.high <= threshold else "no" if iv.low > threshold else "unclear"


def gate(
    values: Sequence[float] | np.ndarray,
    threshold: float,
    direction: Direction = "above",
    rule: Literal["interval", "every seed"] = "interval",
) -> str:
    """``pass`` / ``fail`` of a positive control: the interval (or every seed) clears ``threshold``."""
    if rule == "every seed":
        x = np.asarray(values, dtype=float).ravel()
        if x.size == 0 or not np.all(np.isfinite(x)):
            raise ValueError(f"values must be a non-empty array of finite numbers, got {x.tolist()!r:.120}")
        ok = bool(np.all(x >= threshold)) if direction == "above" else bool(np.all(x <= threshold))
        return "pass" if ok else "fail"
    if rule != "interval":
        raise ValueError(f"rule must be 'interval' or 'every seed', got {rule!r}")
    return "pass" if compare(values, threshold, direction) == "yes" else "fail"


def combine(parts: Mapping[str, str]) -> str:
    """One word for a claim from the words of its parts (see the module docstring)."""
    words = list(parts.values())
    if not words:
        raise ValueError("parts must name at least one part of the claim's scope")
    bad = [w for w in words if w not in ("yes", "no", "unclear")]
    if bad:
        raise ValueError(f"parts must read 'yes', 'no' or 'unclear', got {bad!r}")
    if all(w == "yes" for w in words):
        return "yes"
    if all(w == "no" for w in words):
        return "no"
    if "yes" in words:
        return "partly"
    return "unclear"


def scope_verdict(parts: Mapping[str, str], what: str = "") -> str:
    """``word: reason`` for a claim with parts, naming which part reads what."""
    word = combine(parts)
    groups = {w: [p for p, v in parts.items() if v == w] for w in ("yes", "unclear", "no")}
    said = "; ".join(f"{w}: {', '.join(ps)}" for w, ps in groups.items() if ps)
    return f"{word}: {what + ' — ' if what else ''}{said}"


@dataclass(frozen=True)
class Criterion:
    """One verdict function of a chapter, its threshold, and synthetic inputs that reach each branch.

    ``examples`` maps each outcome word to the ``(args, kwargs)`` of a call that must return a
    verdict starting with that word. :func:`drive` checks every example and that every outcome the
    kind requires is reached (a claim: yes, no and unclear, and partly when ``scoped``; a gate or a
    check: pass and fail).
    """

    name: str
    kind: str
    verdict: Callable[..., str]
    threshold: float | str
    rule: str
    examples: Mapping[str, tuple[tuple[Any, ...], Mapping[str, Any]]] = field(default_factory=dict)
    scoped: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")


def required_outcomes(criterion: Criterion) -> set[str]:
    """The outcome words a criterion's verdict function must be able to return."""
    if criterion.kind == "claim":
        return {"yes", "no", "unclear"} | ({"partly"} if criterion.scoped else set())
    return set(GATE_WORDS)


def drive(criteria: Sequence[Criterion]) -> list[str]:
    """Run every criterion's examples; the problems found (empty: every branch is reached as declared)."""
    problems: list[str] = []
    for c in criteria:
        missing = required_outcomes(c) - set(c.examples)
        if missing:
            problems.append(f"{c.name}: no example for {sorted(missing)}")
        for word, (args, kwargs) in c.examples.items():
            try:
                got = first_word(c.verdict(*args, **kwargs))
            except Exception as error:  # a broken example is a problem to report, not a crash
                problems.append(f"{c.name}: example {word!r} raised {type(error).__name__}: {error}")
                continue
            if got != word:
                problems.append(f"{c.name}: example {word!r} returned {got!r}")
    return problems
