"""Declarative rules for config fields: each field says what it means and what it accepts.

A chapter's config declares every field with :func:`param`::

    n_sweep_steps: int = param(20_000, Int(10), "OMWU steps per run of the bottleneck sweep")

and :meth:`~explorables.core.config.ExperimentConfig.validated` applies every rule, so no chapter
writes its own imperative validation; cross-field rules stay as a small ``cross_checks`` method.
A rule:

* checks one value and returns it normalised (``3.0`` becomes ``3`` for an :class:`Int`, a list
  becomes a tuple for a :class:`Tuple`), or raises ``ValueError`` that names the field and the
  allowed range;
* describes itself in words (``explorables show <slug>`` prints it);
* proposes values it must refuse (:meth:`Rule.bad_values`), which the chapter contract test
  feeds to every field of every chapter.

This is scikit-learn's ``_parameter_constraints`` idea, at the size this book needs.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

_INF = math.inf
#: the implicit upper bound of an integer with no declared maximum: the largest seed. No count,
#: size or step number in this book comes near it, and ``10**12`` steps is refused, not run for ever.
INT_CAP = 2**32 - 1


class Rule:
    """What one config field accepts. Subclasses implement :meth:`check` and :meth:`describe`."""

    def check(self, name: str, value: Any) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def bad_values(self) -> list[Any]:
        """Values this rule must refuse (wrong type, out of range, NaN where numeric)."""
        return [object()]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"


def _interval(low: float, high: float, low_inclusive: bool, high_inclusive: bool) -> str:
    lb = "[" if low_inclusive else "("
    rb = "]" if high_inclusive else ")"
    lo = "-inf" if low == -_INF else f"{low:g}"
    hi = "inf" if high == _INF else f"{high:g}"
    return f"{lb}{lo}, {hi}{rb}"


@dataclasses.dataclass(frozen=True, repr=False)
class Int(Rule):
    """An integer in ``[minimum, maximum]`` (booleans are refused; ``3.0`` is read as ``3``)."""

    minimum: int = 0
    maximum: int | None = None

    def check(self, name: str, value: Any) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        value = int(value)
        if value < self.minimum or (self.maximum is not None and value > self.maximum):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        if self.maximum is None and value > INT_CAP:
            raise ValueError(f"{name} must be {self.describe()} and <= {INT_CAP}, got {value!r}")
        return value

    def describe(self) -> str:
        if self.maximum is None:
            return f"an integer >= {self.minimum}"
        return f"an integer in [{self.minimum}, {self.maximum}]"

    def bad_values(self) -> list[Any]:
        bad: list[Any] = ["seven", 2.5, True, self.minimum - 1]
        bad.append(self.maximum + 1 if self.maximum is not None else INT_CAP + 1)
        return bad


@dataclasses.dataclass(frozen=True, repr=False)
class Float(Rule):
    """A finite real number in an interval (``Float(0, 1)`` is ``[0, 1]``; bounds may be open)."""

    low: float = -_INF
    high: float = _INF
    low_inclusive: bool = True
    high_inclusive: bool = True

    def check(self, name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        v = float(value)
        ok_low = v >= self.low if self.low_inclusive else v > self.low
        ok_high = v <= self.high if self.high_inclusive else v < self.high
        if not (math.isfinite(v) and ok_low and ok_high):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        return v

    def describe(self) -> str:
        if self.low == -_INF and self.high == _INF:
            return "a finite number"
        if self.high == _INF:
            return f"a finite number {'>=' if self.low_inclusive else '>'} {self.low:g}"
        if self.low == -_INF:
            return f"a finite number {'<=' if self.high_inclusive else '<'} {self.high:g}"
        return f"a finite number in {_interval(self.low, self.high, self.low_inclusive, self.high_inclusive)}"

    def bad_values(self) -> list[Any]:
        bad: list[Any] = ["seven", float("nan"), float("inf"), True]
        if self.low != -_INF:
            bad.append(self.low - 1.0 if self.low_inclusive else self.low)
        if self.high != _INF:
            bad.append(self.high + 1.0 if self.high_inclusive else self.high)
        return bad


def Positive() -> Float:
    """A finite number ``> 0``."""
    return Float(0.0, _INF, low_inclusive=False)


def Probability(*, open_low: bool = False, open_high: bool = False) -> Float:
    """A number in ``[0, 1]`` (either end may be excluded)."""
    return Float(0.0, 1.0, low_inclusive=not open_low, high_inclusive=not open_high)


@dataclasses.dataclass(frozen=True, repr=False)
class Bool(Rule):
    """``True`` or ``False`` (not 0/1, not a string)."""

    def check(self, name: str, value: Any) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        return bool(value)

    def describe(self) -> str:
        return "True or False"

    def bad_values(self) -> list[Any]:
        return ["yes", 2, float("nan")]


@dataclasses.dataclass(frozen=True, repr=False)
class Choice(Rule):
    """One of a fixed set of strings."""

    options: tuple[str, ...]

    def check(self, name: str, value: Any) -> str:
        if not isinstance(value, str) or value not in self.options:
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        return value

    def describe(self) -> str:
        return "one of " + ", ".join(map(repr, self.options))

    def bad_values(self) -> list[Any]:
        return ["no-such-option", 3, float("nan")]


@dataclasses.dataclass(frozen=True, repr=False)
class Text(Rule):
    """Any string (``nonempty=True``: at least one character)."""

    nonempty: bool = False

    def check(self, name: str, value: Any) -> str:
        if not isinstance(value, str) or (self.nonempty and not value):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        return value

    def describe(self) -> str:
        return "a non-empty string" if self.nonempty else "a string"

    def bad_values(self) -> list[Any]:
        return [3, float("nan"), *([""] if self.nonempty else [])]


@dataclasses.dataclass(frozen=True, repr=False)
class Folder(Rule):
    """The path of an existing folder, or ``""`` (the field's documented default: none, or a default place).

    A folder that does not exist is refused rather than created: a mistyped path gets a clear
    error instead of a new folder (and, for a model cache, a long conversion written into it).
    """

    def check(self, name: str, value: Any) -> str:
        if not isinstance(value, str) or (value and not Path(value).is_dir()):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        return value

    def describe(self) -> str:
        return "an existing folder, or empty"

    def bad_values(self) -> list[Any]:
        return [3, float("nan"), "/no-such-folder/explorables"]


@dataclasses.dataclass(frozen=True, repr=False)
class Device(Rule):
    """A torch device name: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` (availability is checked at run time)."""

    def check(self, name: str, value: Any) -> str:
        from .device import DEVICE_CHOICES

        base, _, index = value.partition(":") if isinstance(value, str) else ("", "", "")
        if base not in DEVICE_CHOICES or (index and not (base == "cuda" and index.isdigit())):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        return value

    def describe(self) -> str:
        return "one of 'auto', 'cpu', 'cuda', 'cuda:N', 'mps'"

    def bad_values(self) -> list[Any]:
        return ["tpu", "cpu:1", 0]


#: a tuple setting whose name ends so is a grid of points to sweep: a repeated point is refused whatever
#: its rule says (``horizon_grid=10,10,10`` would fit a slope through one point)
GRID_SUFFIX = "_grid"


@dataclasses.dataclass(frozen=True, repr=False)
class Tuple(Rule):
    """A tuple whose items all follow ``item``; a list is accepted and stored as a tuple.

    ``min_len``/``max_len`` bound its length; ``distinct`` refuses repeats; ``increasing`` asks
    for strictly increasing items (grids that a figure draws in order). A field named ``*_grid``
    (:data:`GRID_SUFFIX`) refuses repeats even without ``distinct``.
    """

    item: Rule
    min_len: int = 1
    max_len: int | None = None
    distinct: bool = False
    increasing: bool = False

    def check(self, name: str, value: Any) -> tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        items = tuple(self.item.check(f"{name}[{i}]", v) for i, v in enumerate(value))
        if len(items) < self.min_len or (self.max_len is not None and len(items) > self.max_len):
            raise ValueError(f"{name} must be {self.describe()}, got {len(items)} item(s)")
        if (self.distinct or name.endswith(GRID_SUFFIX)) and len(set(items)) != len(items):
            what = self.describe() + ("" if self.distinct else " (a grid: no repeated points)")
            raise ValueError(f"{name} must be {what}, got repeated items in {items!r}")
        if self.increasing and any(b <= a for a, b in itertools.pairwise(items)):
            raise ValueError(f"{name} must be {self.describe()}, got {items!r}")
        return items

    def describe(self) -> str:
        size = f"{self.min_len}" + ("+" if self.max_len is None else f" to {self.max_len}")
        extra = ", distinct" if self.distinct else ""
        extra += ", strictly increasing" if self.increasing else ""
        return f"a tuple of {size} item(s){extra}, each {self.item.describe()}"

    def bad_values(self) -> list[Any]:
        bad: list[Any] = ["not-a-tuple", 3.5]
        bad += [(v,) * max(self.min_len, 1) for v in self.item.bad_values()[:3]]
        if self.min_len > 0:
            bad.append(())
        return bad


@dataclasses.dataclass(frozen=True, repr=False)
class Seeds(Tuple):
    """A tuple of distinct seeds (integers >= 0): the seeds a verdict is taken over."""

    item: Rule = dataclasses.field(default_factory=lambda: Int(0))
    min_len: int = 1
    distinct: bool = True


def param(default: Any, rule: Rule, doc: str) -> Any:
    """A config field with its rule and a one-line doc (a ``dataclasses.field``).

    ``default`` is the ``book`` preset's value; lists and tuples are stored as tuples (hashable,
    frozen). The doc says what the field means in the chapter's words, with its unit.
    """
    if not isinstance(rule, Rule):
        raise TypeError(f"param's rule must be a Rule (Int, Float, ...), got {rule!r}")
    if not doc or not doc.strip():
        raise ValueError("param needs a one-line doc saying what the field means")
    if isinstance(default, list):
        default = tuple(default)
    return dataclasses.field(default=default, metadata={"rule": rule, "doc": doc.strip()})


def field_rule(f: dataclasses.Field) -> Rule | None:
    """The rule a field was declared with (``None`` if it has none)."""
    return f.metadata.get("rule")


def field_doc(f: dataclasses.Field) -> str:
    """The one-line doc a field was declared with (``""`` if none)."""
    return f.metadata.get("doc", "")
