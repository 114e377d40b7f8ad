"""Experiment configurations with ``smoke``/``book``/``paper`` presets.

Every chapter's experiment is a frozen dataclass deriving from :class:`ExperimentConfig`. The
notebook, the tests and the command line all build it the same way
(``Config.preset("book")``), so one code path serves every scale.
"""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from typing import Any, ClassVar, TypeVar

from .arguments import ArgumentError
from .params import Device, Folder, Int, field_doc, field_rule, param
from .resources import check_memory
from .validation import check_choice

SCALES: tuple[str, ...] = ("smoke", "book", "paper")
#: integer settings that count processes: never more than the CPUs this process may use
WORKER_FIELDS: tuple[str, ...] = ("workers",)
#: integer settings exempt from :meth:`ExperimentConfig.outsized`: identifiers and process counts, not work
NOT_WORK: tuple[str, ...] = ("seed", *WORKER_FIELDS)
#: a setting more than this many times its largest preset value (and above :data:`OUTSIZED_FLOOR`) is outsized
OUTSIZED_FACTOR = 100
OUTSIZED_FLOOR = 100_000


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS says so)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)

C = TypeVar("C", bound="ExperimentConfig")


@dataclasses.dataclass(frozen=True)
class ExperimentConfig:
    """Base class: subclasses add fields and fill :attr:`PRESETS`.

    ``PRESETS[scale]`` holds the field values that differ from the dataclass defaults at that
    scale. What the ``paper`` preset needs is measured by ``explorables plan`` (:mod:`.core.plan`), not typed here.
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}
    #: whether the ``paper`` preset is meant for a GPU (the runner warns when it finds none)
    PAPER_WANTS_GPU: ClassVar[bool] = True
    #: scales whose data is not generated but read from ``--data-root`` (e.g. CIFAR at "paper")
    DATA_ROOT_SCALES: ClassVar[tuple[str, ...]] = ()
    #: what lies under ``--data-root`` (for the error message when it is missing)
    DATA_DESCRIPTION: ClassVar[str] = ""

    seed: int = param(0, Int(0, 2**32 - 1), "base seed of the run; every random draw derives from it")
    device: str = param("cpu", Device(), "torch device ('auto' picks CUDA, then MPS, then the CPU)")
    data_root: str = param("", Folder(), "folder with external data (the paper-scale datasets); empty: none")

    def __post_init__(self) -> None:
        """Constructing a config checks it (``Config(n=-1)`` fails as ``preset``/``replace`` do)."""
        for f in dataclasses.fields(self):
            rule = field_rule(f)
            value = getattr(self, f.name)
            if rule is not None:
                checked = rule.check(f.name, value)
                if checked is not value:
                    object.__setattr__(self, f.name, checked)
        for name in WORKER_FIELDS:  # results never depend on the count: more processes than CPUs only fork
            value = getattr(self, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > usable_cpus():
                object.__setattr__(self, name, usable_cpus())
        self.cross_checks()
        check_memory(self.memory_estimate())

    @classmethod
    def preset(cls: type[C], scale: str = "book", **overrides: Any) -> C:
        """The configuration for ``scale`` (``smoke``, ``book`` or ``paper``), with overrides."""
        check_choice("scale", scale, SCALES)
        values = {**cls.PRESETS.get(scale, {}), **overrides}
        return cls(**values).validated()

    def validated(self: C) -> C:
        """The config, checked: every field by its declared rule (:mod:`~explorables.core.params`),
        then :meth:`cross_checks` and the memory estimate.

        Construction already checks (``__post_init__``), normalising values by their rules (a list
        becomes a tuple, ``3.0`` an ``int``); a bad value raises ``ValueError`` naming the field
        and what it accepts. This re-check is for a config changed behind the dataclass's back.
        """
        return dataclasses.replace(self)

    def cross_checks(self) -> None:
        """Rules that involve several fields; subclasses raise ``ValueError`` naming the fields."""

    def memory_estimate(self) -> dict[str, float]:
        """Bytes the run's largest arrays need, keyed by what they are and the fields that size them.

        ``validated()`` refuses a configuration whose total exceeds the machine's memory
        (:func:`~explorables.core.resources.check_memory`). Chapters whose sizes are settings
        override this; the default (no estimate) checks nothing.
        """
        return {}

    @classmethod
    def describe_fields(cls, scale: str = "book") -> list[tuple[str, Any, str, str]]:
        """``(name, value at scale, what it accepts, what it means)`` for every field."""
        config = cls.preset(scale)
        rows = []
        for f in dataclasses.fields(cls):
            rule = field_rule(f)
            rows.append((f.name, getattr(config, f.name), rule.describe() if rule else "(unchecked)", field_doc(f)))
        return rows

    def replace(self: C, **changes: Any) -> C:
        """A copy with ``changes`` applied and validated; unknown keys are an error."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"unknown config key(s) {unknown}; allowed: {sorted(known)}")
        return dataclasses.replace(self, **changes).validated()

    def with_strings(self: C, assignments: list[str]) -> C:
        """Apply ``key=value`` strings (from ``--set``), parsing each value as the field's type."""
        if isinstance(assignments, (list, tuple)):
            bad = [type(item).__name__ for item in assignments if not isinstance(item, str)]
            got = f"a {type(assignments).__name__} holding a {bad[0]}" if bad else ""
        else:
            got = f"a {type(assignments).__name__}"
        if got:
            raise ArgumentError(f"assignments must be a list of 'key=value' strings (as --set gives), got {got}")
        hints = typing.get_type_hints(type(self))
        fields = {f.name for f in dataclasses.fields(self)}
        changes: dict[str, Any] = {}
        for item in assignments:
            key, sep, raw = item.partition("=")
            if not sep:
                raise ValueError(f"assignments must be key=value strings (--set expects key=value), got {item!r}")
            if key not in fields:
                raise ValueError(
                    f"unknown config key {key!r} in assignments (--set); allowed: {', '.join(sorted(fields))}"
                )
            changes[key] = _parse_value(key, raw, hints[key])
        return self.replace(**changes)

    def outsized(self) -> list[str]:
        """A cheap estimate of runaway work: each integer setting (not a seed or a process count) that
        exceeds :data:`OUTSIZED_FACTOR` times its largest preset value (and :data:`OUTSIZED_FLOOR`),
        as ``"name=value (N x the largest preset, P)"``. The command line asks for ``--yes`` before
        starting such a run (``n_lm_steps=4294967295`` would start years of work without a word)."""
        out = []
        presets = [type(self).preset(scale) for scale in SCALES] if type(self).PRESETS else [type(self)()]
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in NOT_WORK or isinstance(value, bool) or not isinstance(value, int):
                continue
            largest = max(abs(int(getattr(p, f.name))) for p in presets)
            if value > OUTSIZED_FLOOR and value > OUTSIZED_FACTOR * max(largest, 1):
                out.append(f"{f.name}={value} ({value / max(largest, 1):.3g} x the largest preset, {largest})")
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON dictionary of the fields."""
        return json.loads(json.dumps(dataclasses.asdict(self)))

    def identity(self) -> dict[str, Any]:
        """The fields that determine the results (all but ``device``): what a checkpoint is bound to."""
        return {k: v for k, v in self.to_dict().items() if k != "device"}


def _parse_value(key: str, raw: str, hint: Any) -> Any:
    origin = typing.get_origin(hint)
    try:
        if hint is bool:
            if raw.lower() in ("1", "true", "yes"):
                return True
            if raw.lower() in ("0", "false", "no"):
                return False
            raise ValueError
        if hint in (int, float, str):
            return hint(raw)
        if origin is tuple:
            (item_type, *_rest) = typing.get_args(hint)
            return tuple(item_type(p) for p in raw.split(",") if p.strip())
    except ValueError:
        pass
    else:
        raise ValueError(f"config key {key!r} has unsupported type {hint}")
    raise ValueError(f"config key {key!r} expects {getattr(hint, '__name__', hint)}, got {raw!r}")
