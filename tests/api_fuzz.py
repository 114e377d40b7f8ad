"""A generated fuzz of every public function and class of every package (issue 29).

How the inputs are generated
----------------------------
Valid calls are not written by hand: while the test suite runs, :class:`Recorder` wraps every
callable that a package lists in ``__all__`` (functions, and the ``__init__`` of classes) and
keeps a deep copy of the first calls that *returned normally*. Calls a test makes inside
``pytest.raises`` fail and are not kept, so every kept call is a valid one.

:func:`fuzz_callable` then replays each kept call once per (parameter, hostile value), also for
the parameters the call left at their default: one argument is replaced, the others stay valid.
The hostile values follow the recorded value's type (:func:`hostile_values`): ``None``, a string
or a number of the wrong kind, a bool where an int is meant, an array where a string is, NaN and
infinities, ``-1``, ``0``, ``10**12``, an empty array, an array with an extra or missing axis, an
array holding NaN or an infinity (refused unless the parameter's ``Array`` rule allows it); never
the parameter's own default, a call documented as valid. Each value is marked *must refuse* (it
can never be meant: a string where a model is expected, NaN as a step size) or *may accept* (it
might be meant: ``0`` steps, an empty list).

Items (issue 53 item 5): a list or tuple argument is fuzzed item by item too (:func:`item_hostile_values`):
its first item replaced by a wrong type, NaN, an infinity, a bool, a fraction, ``-1`` or ``1e12`` (numbers), an
int or an unknown string (strings), an array holding NaN or inf (arrays), one level down for nested lists; its
second item made a repeat of its first (must refuse in a grid: a ``*_grid`` parameter or a ``distinct`` rule)
and its order reversed (must refuse under an ``increasing`` rule). The report counts these ``(items)`` apart.

Every mutated call ends in one of five outcomes:

``refused``  ``ValueError`` or ``TypeError`` raised by the package (not from inside numpy or torch)
             whose message names the parameter as a word;
``accepted`` a *may accept* value that returned a result with no NaN or infinity the valid call
             did not have;
``other``   any other exception, or a ``ValueError``/``TypeError`` that does not name it;
``silent``  a *must refuse* value that was accepted, or a result with new NaN or infinity;
``hang``    a call past its limit: ``max(60 s, 20 x`` the valid call) of the process's *CPU time*
             (a busy machine slows the wall clock, not the work a call does), or ten minutes of wall
             time for a call that blocks without computing. A normal slow path (the language
             model's first conversion, about 30 s of CPU) stays well under both;
``skipped`` never: every generated input gets one of the five.

The fuzz passes when ``other``, ``silent`` and ``hang`` are all zero.
"""

from __future__ import annotations

import collections.abc
import contextlib
import copy
import dataclasses
import functools
import importlib
import inspect
import itertools
import math
import os
import pickle
import pkgutil
import re
import signal
import time
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cloudpickle
import numpy as np
import torch

import explorables
from explorables.core.arguments import Array, _hint_names, _item_hints
from explorables.core.params import GRID_SUFFIX, field_rule

#: how many valid calls are kept per callable
CALLS_KEPT = 2
#: a deep copy above this size (bytes, roughly) is not kept: replaying it would be slow
MAX_RECORD_BYTES = 64 * 2**20
OUTCOMES = ("refused", "accepted", "other", "silent", "hang")
#: the outcomes that are findings (the fuzz passes when there are none)
FINDINGS = ("other", "silent", "hang")
#: the smallest CPU-time limit of a mutated call, and the smallest wall-clock limit of any call (s)
MIN_CPU_LIMIT_S = 60.0
#: float parameters whose documented valid values include an infinity although their default is finite
#: (``inf`` is meant, so it may be accepted): a trust-region radius of ``inf`` is "no constraint", and
#: ``tests/test_trust_region_cl.py`` checks that it gives generative replay's weights exactly
INF_MEANT: dict[str, frozenset[str]] = {
    "Strengths": frozenset({"trust_radius", "iso_radius"}),
    # the config's radii share that rule (``Radius``): the tuning grid ends at inf, and an isotropic radius
    # of inf makes the control generative replay itself
    "TrustRegionCLConfig": frozenset({"trust_radius", "iso_radius"}),
}
WALL_LIMIT_S = 600.0

#: the session's recorder (installed by ``conftest.pytest_configure``)
RECORDER: Recorder | None = None
#: per package: {"callables": n, "cases": {outcome: count}}, printed at the end of the session
REPORT: dict[str, dict] = {}
#: per chapter: {outcome: count} of the command-line fuzz (tests/test_cli_fuzz.py)
CLI_REPORT: dict[str, dict] = {}


def packages() -> list[str]:
    """The chapter packages and ``core``, by name."""
    return ["core", *sorted(m.name for m in pkgutil.iter_modules(explorables.__path__) if m.ispkg and m.name != "core")]


def public_callables(package: str) -> dict[str, Any]:
    """``{"package.name": object}`` for every function and class in the package's ``__all__``."""
    module = importlib.import_module(f"explorables.{package}")
    found = {}
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if inspect.isclass(obj):
            if _fuzzable_class(obj):
                found[f"{package}.{name}"] = obj
        elif callable(obj) and not isinstance(obj, (int, float, str, tuple, dict, list)):
            found[f"{package}.{name}"] = obj
    return found


def _fuzzable_class(cls: type) -> bool:
    """Classes whose constructor takes arguments written in this project (not enums or exceptions)."""
    if issubclass(cls, BaseException) or getattr(cls, "_is_protocol", False):
        return False
    init = cls.__dict__.get("__init__")
    if init is None:
        # a dataclass or NamedTuple defines its own; an inherited torch/nn __init__ is fine too
        init = getattr(cls, "__init__", None)
    return init is not None and init is not object.__init__ and hasattr(init, "__code__")


#: methods left out of the method fuzz, and why
METHOD_EXCLUDED = {
    # a network's forward is its training loop's hot path, called through ``__call__`` with tensors the package
    # made; a reader's inputs enter through ``run``, the configs and the labs, which are checked
    "forward",
}


def public_methods(package: str) -> dict[str, tuple[type, str]]:
    """``{"package.Class.method": (class, name)}``: the public methods (and classmethods) that each public
    class of the package defines itself (an inherited method is fuzzed on the class that defines it)."""
    found = {}
    for qualname, obj in public_callables(package).items():
        if not inspect.isclass(obj):
            continue
        for name, member in vars(obj).items():
            if name.startswith("_") or name in METHOD_EXCLUDED or isinstance(member, (property, staticmethod)):
                continue
            fn = member.__func__ if isinstance(member, classmethod) else member
            if inspect.isfunction(fn) and f"{qualname}.{name}" not in found:
                found[f"{qualname}.{name}"] = (obj, name)
    return found


def method_function(cls: type, name: str) -> Any:
    """The plain function behind a method or classmethod (its first parameter is ``self`` or ``cls``)."""
    member = inspect.getattr_static(cls, name)
    return original(member.__func__ if isinstance(member, classmethod) else member)


# --------------------------------------------------------------------------------------------
# recording valid calls


#: key of the dump listing callables whose every valid call held an object that does not survive pickling
UNSHIPPABLE = "<unshippable>"


@dataclasses.dataclass
class Record:
    """One valid call: its arguments (deep-copied before the call), how long it took, its result's health.

    ``copied=False``: an argument cannot be deep-copied (a compiled extension's object, such as a
    multipers module); the arguments are then kept as they were passed, and replayed as they are.
    """

    args: tuple
    kwargs: dict
    cpu_seconds: float  # the process's CPU time during the call (all threads)
    nonfinite_result: bool
    copied: bool = True


class Recorder:
    """Wraps the public callables of every package and keeps their first valid calls."""

    def __init__(self) -> None:
        self.records: dict[str, list[Record]] = {}
        self.callables: dict[str, Any] = {}
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        for package in packages():
            for qualname, obj in public_callables(package).items():
                self.callables[qualname] = obj
                self.records.setdefault(qualname, [])
                if inspect.isclass(obj):
                    self._wrap_init(qualname, obj)
                else:
                    self._wrap_function(qualname, obj, package)
            for qualname, (cls, name) in public_methods(package).items():
                self.callables[qualname] = (cls, name)
                self.records.setdefault(qualname, [])
                self._wrap_method(qualname, cls, name)

    def uninstall(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    def dump(self, path: Path) -> None:
        """Pickle the kept calls that survive a pickle round trip (for a fuzz run in another process).

        Some extension objects pickle but cannot be unpickled (a multipers module that stores a list
        where its ``__setstate__`` wants bytes): such a call is left out, not allowed to break the load.
        A method's call ships its instance, which may hold a closure (stable_nde's ``System`` keeps its
        vector fields as local functions): method calls are pickled by value (``cloudpickle``, which
        joblib, a scikit-learn dependency, installs), function calls by plain pickle as before.
        """
        kept: dict[str, Any] = {}
        unshippable = []
        for qualname, records in self.records.items():
            dumps = cloudpickle.dumps if isinstance(self.callables.get(qualname), tuple) else pickle.dumps
            good = []
            for record in records:
                try:
                    pickle.loads(dumps(record))
                except Exception:
                    continue
                good.append(record)
            kept[qualname] = good
            if records and not good:
                unshippable.append(qualname)
        kept[UNSHIPPABLE] = unshippable
        path.write_bytes(cloudpickle.dumps(kept))

    def _recording(self, qualname: str, fn: Callable, args: tuple, kwargs: dict, skip_first: bool = False) -> Any:
        kept = self.records[qualname]
        if len(kept) >= CALLS_KEPT:
            return fn(*args, **kwargs)
        stored = args[1:] if skip_first else args
        if _approx_bytes((stored, kwargs)) > MAX_RECORD_BYTES:
            return fn(*args, **kwargs)  # too big to replay quickly: left to a smaller call
        copied = True
        try:
            saved = copy.deepcopy((stored, kwargs))
        except Exception:  # an extension object, a tensor inside an autograd graph: keep the arguments as passed
            saved, copied = (stored, dict(kwargs)), False
        start = time.process_time()
        result = fn(*args, **kwargs)
        if saved is not None:
            made = args[0] if skip_first else result  # a class's call makes the instance
            kept.append(Record(saved[0], saved[1], time.process_time() - start, _has_nonfinite(made), copied))
        return result

    def _wrap_function(self, qualname: str, fn: Callable, package: str) -> None:
        recorder = self

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return recorder._recording(qualname, fn, args, kwargs)

        wrapper.__explorables_fuzz_original__ = fn  # type: ignore[attr-defined]
        # ``fn.__wrapped__`` stays the unchecked function (for tools; package code runs bare in skip_nested bodies)
        wrapper.__wrapped__ = getattr(fn, "__wrapped__", fn)  # type: ignore[attr-defined]
        module_names = {f"explorables.{package}", getattr(fn, "__module__", "")}
        for module_name in module_names:
            module = importlib.import_module(module_name) if module_name.startswith("explorables") else None
            if module is None:
                continue
            for attr, value in list(vars(module).items()):
                if value is fn:
                    setattr(module, attr, wrapper)
                    self._undo.append(functools.partial(setattr, module, attr, fn))

    def _wrap_init(self, qualname: str, cls: type) -> None:
        original = cls.__dict__.get("__init__")
        init = cls.__init__
        recorder = self

        @functools.wraps(init)
        def wrapper(self_: Any, *args: Any, **kwargs: Any) -> None:
            if type(self_) is not cls:  # a subclass constructing through super(): not this class's call
                return init(self_, *args, **kwargs)
            return recorder._recording(qualname, init, (self_, *args), kwargs, skip_first=True)

        cls.__init__ = wrapper  # type: ignore[misc]
        if original is None:
            self._undo.append(lambda: delattr(cls, "__init__"))
        else:
            self._undo.append(functools.partial(setattr, cls, "__init__", original))

    def _wrap_method(self, qualname: str, cls: type, name: str) -> None:
        """Record a method's calls with a copy of the instance (``self`` or ``cls`` is the first argument)."""
        member = cls.__dict__[name]
        is_class_method = isinstance(member, classmethod)
        fn = member.__func__ if is_class_method else member
        recorder = self

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return recorder._recording(qualname, fn, args, kwargs)

        wrapper.__explorables_fuzz_original__ = fn  # type: ignore[attr-defined]
        setattr(cls, name, classmethod(wrapper) if is_class_method else wrapper)
        self._undo.append(functools.partial(setattr, cls, name, member))


def original(obj: Any) -> Any:
    """The unwrapped callable (the fuzz calls it directly, so it records nothing)."""
    return getattr(obj, "__explorables_fuzz_original__", obj)


def _approx_bytes(value: Any, _seen: set | None = None) -> int:
    seen = _seen if _seen is not None else set()
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, torch.Tensor):
        return value.element_size() * value.nelement()
    if isinstance(value, torch.nn.Module):
        return sum(_approx_bytes(t, seen) for t in value.state_dict().values())
    if isinstance(value, dict):
        return sum(_approx_bytes(v, seen) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_approx_bytes(v, seen) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(_approx_bytes(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    return 64


def _has_nonfinite(value: Any, depth: int = 0, nan_only: bool = False) -> bool:
    """Whether a result holds NaN or an infinity (``nan_only``: NaN) anywhere: numbers, arrays, tensors, containers."""
    if depth > 6 or isinstance(value, bool):
        return False
    bad = math.isnan if nan_only else (lambda v: not math.isfinite(v))
    if isinstance(value, (float, np.floating)):
        return bad(float(value))
    if isinstance(value, complex):
        return bad(value.real) or bad(value.imag)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "fc" or value.size == 0:
            return False
        return bool(np.isnan(value).any()) if nan_only else not bool(np.all(np.isfinite(value)))
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point() or value.numel() == 0:
            return False
        v = value.detach()
        return bool(torch.isnan(v).any()) if nan_only else not bool(torch.isfinite(v).all())
    items: list = []
    if isinstance(value, dict):
        items = list(value.values())[:200]
    elif isinstance(value, (list, tuple)):
        items = list(value)[:200]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [getattr(value, f.name, None) for f in dataclasses.fields(value)]
    return any(_has_nonfinite(v, depth + 1, nan_only) for v in items)


# --------------------------------------------------------------------------------------------
# hostile values


@dataclasses.dataclass(frozen=True)
class Hostile:
    label: str
    value: Any
    must_refuse: bool
    #: what an accepted value's result must not hold: "NaN or inf" (new ones), "no NaN", "nothing"
    judge: str = "NaN or inf"


def _none_allowed(param: inspect.Parameter, hint: Any) -> bool:
    if param.default is None:
        return True
    if hint is None:
        return False
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return type(None) in typing.get_args(hint)
    return hint is type(None) or hint is Any or hint is object


def hostile_values(param: inspect.Parameter, value: Any, hint: Any = None, rule: Any = None) -> list[Hostile]:
    """Hostile replacements for ``value`` (a valid argument of ``param``), by its type.

    ``rule``, the parameter's declared rule, says whether NaN or infinities are meant: an array
    holding them must be refused unless its ``Array`` rule allows them.
    """
    out: list[Hostile] = []
    none_ok = _none_allowed(param, hint)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and _means_float(hint):
        value = float(value)  # a float parameter called with 30: fuzz it as the float it is
    if value is not None:
        out.append(Hostile("None", None, must_refuse=not none_ok))
    if value is None:  # the type is the hint's: an object of no type a hint names
        typed = hint is not None and hint is not Any and hint is not object and not isinstance(hint, typing.TypeVar)
        out.append(Hostile("object", object(), must_refuse=typed))
        return out
    if isinstance(value, bool):
        out.append(Hostile("str", "yes", must_refuse=True))
        return out
    if isinstance(value, (int, np.integer)):
        negative_meant = value < 0 or (isinstance(param.default, int) and param.default < 0)
        out += [
            Hostile("str", "3", must_refuse=True),
            Hostile("bool", True, must_refuse=True),
            Hostile("fraction", 2.5, must_refuse=True),
            Hostile("nan", math.nan, must_refuse=True),
            Hostile("-1", -1, must_refuse=not negative_meant),
            Hostile("0", 0, must_refuse=False),
            Hostile("1e12", 10**12, must_refuse=False),
        ]
        return out
    if isinstance(value, (float, np.floating)):
        inf_meant = math.isinf(value) or (isinstance(param.default, float) and math.isinf(param.default))
        out += [
            Hostile("str", "0.5", must_refuse=True),
            Hostile("nan", math.nan, must_refuse=True),
            # an infinity that is meant may come out again (a radius of inf kept in the object)
            Hostile("inf", math.inf, must_refuse=not inf_meant, judge="no NaN" if inf_meant else "NaN or inf"),
            Hostile("-inf", -math.inf, must_refuse=not inf_meant, judge="no NaN" if inf_meant else "NaN or inf"),
            Hostile("-1", -1.0, must_refuse=False),
            Hostile("0", 0.0, must_refuse=False),
            Hostile("1e12", 1e12, must_refuse=False),
        ]
        return out
    if isinstance(value, str):
        out += [
            Hostile("int", 3, must_refuse=True),
            Hostile("array", np.array([1.0, 2.0]), must_refuse=True),
            Hostile("unknown str", "no-such-value", must_refuse=False),
        ]
        return out
    if isinstance(value, Path):
        out += [
            Hostile("int", 3, must_refuse=True),
            Hostile("missing path", Path("no-such-folder/x"), must_refuse=False),
        ]
        return out
    if isinstance(value, (np.ndarray, torch.Tensor)):
        out.append(Hostile("str", "array", must_refuse=True))
        if value.ndim >= 1 and _numel(value) > 0:
            out.append(Hostile("0-d", value.reshape(-1)[:1].reshape(()), must_refuse=False))
        if value.ndim >= 1:
            out.append(Hostile("empty", value[:0], must_refuse=False))
            out.append(Hostile("extra axis", value[None], must_refuse=False))
        if value.ndim >= 2:
            out.append(Hostile("flattened", value.reshape(-1), must_refuse=False))
        if _is_float_array(value) and value.ndim >= 1 and _numel(value) > 0:
            custom = rule is not None and not isinstance(rule, Array)  # a rule of the chapter's own: it decides
            nan_meant = custom or (isinstance(rule, Array) and rule.allow_nan)
            inf_meant = custom or (isinstance(rule, Array) and not rule.finite)
            for label, bad_number, meant in (("holds NaN", math.nan, nan_meant), ("holds inf", math.inf, inf_meant)):
                # a contiguous copy: reshape(-1) of a strided view would be a copy, and the write lost
                bad = value.contiguous().clone() if isinstance(value, torch.Tensor) else np.array(value, order="C")
                bad.reshape(-1)[0] = bad_number
                # a NaN the rule allows may come out again; an infinity it allows may make an infinite result
                judge = "nothing" if label == "holds NaN" else "no NaN"
                out.append(Hostile(label, bad, must_refuse=not meant, judge=judge))
        return out
    if isinstance(value, (list, tuple)):
        out += [
            Hostile("int", 3, must_refuse=True),
            Hostile("empty", type(value)() if type(value) in (list, tuple) else [], must_refuse=False),
        ]
        return out
    if isinstance(value, dict):
        out += [Hostile("int", 3, must_refuse=True), Hostile("empty", {}, must_refuse=False)]
        return out
    # models, graphs, configs, results, trees, generators, callables ...
    out += [
        Hostile("str", "not-an-object", must_refuse=True),
        Hostile("int", 3, must_refuse=not isinstance(value, np.random.Generator)),
    ]
    return out


#: the labels of item-level cases begin so (the report counts them apart from the whole-argument cases)
ITEM = "item"


def _is_list(value: Any) -> bool:
    """A list or tuple setting (a NamedTuple is a record, not a list of items)."""
    return isinstance(value, (list, tuple)) and not hasattr(value, "_fields")


def _replaced(value: list | tuple, index: int, new: Any) -> list | tuple:
    items = list(value)
    items[index] = new
    return tuple(items) if isinstance(value, tuple) else items


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def item_hostile_values(
    pname: str, value: Any, rule: Any = None, inf_meant: bool = False, depth: int = 0, hint: Any = None
) -> list[Hostile]:
    """Hostile replacements of one item of a list or tuple argument (issue 53 item 5), the other items kept.

    Its first item becomes: for numbers, a string, NaN, an infinity (for floats), a bool, a fraction, ``-1``
    (integers) and ``1e12`` (out of range), ``-1`` and ``0`` (floats, which may be meant); for strings, an int
    and an unknown string; for arrays and tensors, one holding NaN or an infinity and a string; for a nested
    list or tuple, the same one level down; for any other object, a string. Two more cases change the order:
    its second item repeats its first (refused in a grid, a parameter named ``*_grid`` or a rule with
    ``distinct``) and its items reversed (refused when its rule asks for increasing items). ``rule`` is the
    declared rule of the parameter (a ``Tuple``'s ``item``, ``distinct`` and ``increasing`` say what is meant).
    """
    if not _is_list(value) or not value or depth > 1:
        return []
    out: list[Hostile] = []
    first = value[0]
    item_rule = getattr(rule, "item", None)
    label = f"{ITEM}{'[0]' * (depth + 1)}"
    item_hints = _item_hints(hint, value) if hint is not None else None
    # an item hinted as any hashable label (``Sequence[Hashable]``) or any object: no item is wrong by its type
    anything = item_hints is not None and any(
        h in (Any, object, collections.abc.Hashable) for h in _hint_names(item_hints[0])
    )

    def put(tag: str, new: Any, must_refuse: bool, judge: str = "NaN or inf") -> None:
        must = must_refuse and not anything
        out.append(Hostile(f"{label} {tag}", _replaced(value, 0, new), must, judge))

    if isinstance(first, (bool, np.bool_)):
        put("str", "yes", must_refuse=True)
    elif _is_number(first) and isinstance(first, (int, np.integer)):
        minimum = getattr(item_rule, "minimum", 0)
        negative_meant = any(_is_number(v) and v < 0 for v in value) or (isinstance(minimum, int) and minimum < 0)
        put("str", "3", must_refuse=True)
        put("bool", True, must_refuse=not isinstance(rule, Array))  # an Array rule takes boolean data (0/1 flags)
        put("fraction", 2.5, must_refuse=True)
        put("nan", math.nan, must_refuse=True)
        put("-1", -1, must_refuse=not negative_meant)
        put("1e12", 10**12, must_refuse=False)
    elif _is_number(first):
        meant = inf_meant or any(_is_number(v) and math.isinf(v) for v in value)
        put("str", "0.5", must_refuse=True)
        put("nan", math.nan, must_refuse=True)
        put("inf", math.inf, must_refuse=not meant, judge="no NaN" if meant else "NaN or inf")
        put("-1", -1.0, must_refuse=False)
        put("0", 0.0, must_refuse=False)
        put("1e12", 1e12, must_refuse=False)
    elif isinstance(first, str):
        put("int", 3, must_refuse=True)
        put("unknown str", "no-such-value", must_refuse=False)
    elif isinstance(first, (np.ndarray, torch.Tensor)):
        put("str", "array", must_refuse=True)
        if _is_float_array(first) and _numel(first) > 0:
            meant = item_rule is not None and not isinstance(item_rule, Array)  # a rule of the chapter's own decides
            for tag, bad_number in (("holds NaN", math.nan), ("holds inf", math.inf)):
                put(
                    tag,
                    _holding(first, bad_number),
                    must_refuse=not meant,
                    judge="nothing" if tag == "holds NaN" else "no NaN",
                )
    elif _is_list(first):
        inner_hint = item_hints[0] if item_hints is not None else None
        for inner in item_hostile_values(pname, first, item_rule, inf_meant, depth + 1, inner_hint):
            if not inner.label.endswith(("repeated", "reversed")):
                out.append(Hostile(inner.label, _replaced(value, 0, inner.value), inner.must_refuse, inner.judge))
    elif first is not None and not isinstance(first, (dict, type)) and not callable(first):
        put("str", "not-an-object", must_refuse=True)
    if len(value) >= 2:
        grid = pname.endswith(GRID_SUFFIX) or bool(getattr(rule, "distinct", False))
        try:
            distinct = len(set(value)) == len(value)
        except TypeError:
            distinct = False
        if distinct and (_is_number(first) or isinstance(first, str)):
            out.append(Hostile(f"{label[:-3]} repeated", _replaced(value, 1, first), must_refuse=grid))
        if all(map(_is_number, value)) and all(b > a for a, b in itertools.pairwise(value)):
            increasing = bool(getattr(rule, "increasing", False))
            reversed_value = type(value)(reversed(value)) if isinstance(value, tuple) else list(reversed(value))
            out.append(Hostile(f"{label[:-3]} reversed", reversed_value, must_refuse=increasing))
    return out


def _holding(value: Any, number: float) -> Any:
    """A copy of an array or tensor whose first entry is ``number``, of the same kind: a parameter stays a leaf
    parameter (an optimiser takes only leaves), a tensor keeps whether it asks for gradients."""
    if not isinstance(value, torch.Tensor):
        bad = np.array(value, order="C")
        bad.reshape(-1)[0] = number
        return bad
    bad = value.detach().contiguous().clone()
    bad.reshape(-1)[0] = number
    if isinstance(value, torch.nn.Parameter):
        return torch.nn.Parameter(bad, requires_grad=value.requires_grad)
    return bad.requires_grad_(value.requires_grad)


def _means_float(hint: Any) -> bool:
    """Whether the hint names a float and not an int (``float``, ``float | None``, ...)."""
    if hint is float:
        return True
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        return float in args and int not in args
    return False


def _is_default(param: inspect.Parameter, value: Any) -> bool:
    default = param.default
    if default is inspect.Parameter.empty:
        return False
    if value is default:
        return True
    scalar = (int, float, str, bool)
    return type(value) is type(default) and isinstance(value, scalar) and value == default


def _is_float_array(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_floating_point()
    return value.dtype.kind == "f"


def _numel(value: Any) -> int:
    return value.numel() if isinstance(value, torch.Tensor) else value.size


# --------------------------------------------------------------------------------------------
# replaying with one argument replaced


class FuzzTimeout(BaseException):
    """Raised by the alarm in a call past its limit (a BaseException: ``except Exception`` cannot swallow it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise FuzzTimeout


@contextlib.contextmanager
def time_bound(cpu_limit_s: float) -> Iterator[None]:
    """Raise :class:`FuzzTimeout` in the block past ``cpu_limit_s`` of the process's CPU time, or
    past ``max(WALL_LIMIT_S, 5 x cpu_limit_s)`` of wall time (a block that waits without computing).

    CPU time, not wall time, is the hang bound: a machine busy with other processes slows the wall
    clock, not the work a call does, so the verdict does not depend on the machine's load.
    """
    old_prof = signal.signal(signal.SIGPROF, _on_alarm)
    old_alarm = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, cpu_limit_s)
    signal.setitimer(signal.ITIMER_REAL, max(WALL_LIMIT_S, 5 * cpu_limit_s))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old_prof)
        signal.signal(signal.SIGALRM, old_alarm)


@dataclasses.dataclass
class Case:
    callable: str
    parameter: str
    value: str
    outcome: str
    detail: str


def _names(message: str, name: str) -> bool:
    """The message names the parameter as a word (``x`` is not named by ``x_star`` or by ``max``)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None


def _raised_by_a_library(error: BaseException) -> str | None:
    """The file of the innermost frame, when it lies outside this package (numpy, torch, ...)."""
    tb = error.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last is None or f"{os.sep}explorables{os.sep}" in last or last.endswith("api_fuzz.py"):
        return None
    return last


def _hints(fn: Any) -> dict[str, Any]:
    target = fn.__init__ if inspect.isclass(fn) else fn
    try:
        return typing.get_type_hints(target)
    except Exception:
        return {}


def fuzz_callable(
    qualname: str, fn: Any, record: Record, min_limit_s: float = MIN_CPU_LIMIT_S, items: bool = True
) -> Iterator[Case]:
    """Every (parameter, hostile value) case of one recorded call, with its outcome; ``items``: also the cases
    that replace one item of a list or tuple argument (:func:`item_hostile_values`; labels begin ``item``)."""
    fn = original(fn)
    target = fn
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return
    try:
        bound = signature.bind(*record.args, **record.kwargs)
    except TypeError:
        return
    bound.apply_defaults()  # a parameter the recorded call left at its default is fuzzed too
    hints = _hints(fn)
    rules = declared_rules(fn)
    fields = field_rules(fn)
    limit = max(min_limit_s, 20 * record.cpu_seconds)
    for pname, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or pname not in bound.arguments:
            continue
        if pname in ("self", "cls"):
            continue  # a method's instance (a copy of the recorded one) or class is not an argument to fuzz
        value = bound.arguments[pname]
        if pname in INF_MEANT.get(getattr(fn, "__name__", ""), ()) and isinstance(value, float):
            value = math.inf  # fuzzed as a parameter whose valid values include inf (see INF_MEANT)
        for hostile in hostile_values(param, value, hints.get(pname), rules.get(pname)):
            if _is_default(param, hostile.value):
                continue  # the declared default is a documented valid call, not a hostile one
            yield _one_case(qualname, fn, signature, record, pname, hostile, limit)
        if not items:
            continue
        inf_meant = pname in INF_MEANT.get(getattr(fn, "__name__", ""), ())
        rule = rules.get(pname) or fields.get(pname)
        for hostile in item_hostile_values(pname, value, rule, inf_meant, hint=hints.get(pname)):
            yield _one_case(qualname, fn, signature, record, pname, hostile, limit)


def declared_rules(fn: Any) -> dict[str, Any]:
    """The rules the callable declared with ``@checked`` (a class: its constructor's)."""
    target = fn.__init__ if inspect.isclass(fn) else fn
    return dict(getattr(target, "__explorables_rules__", {}))


def field_rules(fn: Any) -> dict[str, Any]:
    """A config class's field rules (``param(default, rule, doc)``): its constructor checks them."""
    if not (inspect.isclass(fn) and dataclasses.is_dataclass(fn)):
        return {}
    return {f.name: field_rule(f) for f in dataclasses.fields(fn) if field_rule(f) is not None}


def _one_case(
    qualname: str, fn: Any, signature: inspect.Signature, record: Record, pname: str, hostile: Hostile, limit: float
) -> Case:
    args, kwargs = copy.deepcopy((record.args, record.kwargs)) if record.copied else (record.args, dict(record.kwargs))
    bound = signature.bind(*args, **kwargs)
    bound.arguments[pname] = hostile.value
    outcome, detail = "refused", ""
    try:
        with time_bound(limit):
            result = fn(*bound.args, **bound.kwargs)
    except FuzzTimeout:
        outcome, detail = "hang", f"still running after {limit:.1f} s of CPU time (or far more wall time)"
    except (ValueError, TypeError) as error:
        message = str(error)
        library = _raised_by_a_library(error)
        if not _names(message, pname):
            outcome, detail = "other", f"{type(error).__name__} not naming {pname!r}: {message[:160]}"
        elif library is not None:
            outcome, detail = "other", f"{type(error).__name__} from {Path(library).name}, not a check: {message[:120]}"
    except Exception as error:  # every other exception is a finding
        outcome, detail = "other", f"{type(error).__name__}: {str(error)[:160]}"
    else:
        if hostile.must_refuse:
            outcome, detail = "silent", "accepted"
        elif hostile.judge == "NaN or inf" and _has_nonfinite(result) and not record.nonfinite_result:
            outcome, detail = "silent", "result holds NaN or inf"
        elif hostile.judge == "no NaN" and _has_nonfinite(result, nan_only=True) and not record.nonfinite_result:
            outcome, detail = "silent", "result holds NaN"
        else:
            outcome, detail = "accepted", "a value that may be meant, with a healthy result"
    return Case(qualname, pname, hostile.label, outcome, detail)


def cli_report_lines() -> list[str]:
    """The command-line fuzz's per-chapter table."""
    lines = [f"{'chapter':<16} {'inputs':>7} " + " ".join(f"{o:>8}" for o in OUTCOMES)]
    total: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    for slug, counts in CLI_REPORT.items():
        for o in OUTCOMES:
            total[o] += counts.get(o, 0)
        lines.append(f"{slug:<16} {sum(counts.values()):>7} " + " ".join(f"{counts.get(o, 0):>8}" for o in OUTCOMES))
    lines.append(f"{'all':<16} {sum(total.values()):>7} " + " ".join(f"{total[o]:>8}" for o in OUTCOMES))
    return lines


def report_lines() -> list[str]:
    """The per-package table printed at the end of the session: whole arguments, then (rows ``(items)``) one
    item of a list or tuple argument replaced, each with its total; callables with item cases are counted
    again in the items rows."""
    width = max([16, *(len(p) for p in REPORT)])
    lines = [f"{'package':<{width}} {'callables':>9} {'inputs':>7} " + " ".join(f"{o:>8}" for o in OUTCOMES)]
    totals = {kind: (dict.fromkeys(OUTCOMES, 0), [0, 0]) for kind in ("all", "all items")}
    for package, row in REPORT.items():
        counts = row["cases"]
        inputs = sum(counts.values())
        total, sizes = totals["all items" if package.endswith("items)") else "all"]
        sizes[0] += row["callables"]
        sizes[1] += inputs
        for o in OUTCOMES:
            total[o] += counts.get(o, 0)
        lines.append(
            f"{package:<{width}} {row['callables']:>9} {inputs:>7} "
            + " ".join(f"{counts.get(o, 0):>8}" for o in OUTCOMES)
        )
    for kind, (total, (n_callables, n_inputs)) in totals.items():
        if n_inputs or kind == "all":
            lines.append(
                f"{kind:<{width}} {n_callables:>9} {n_inputs:>7} " + " ".join(f"{total[o]:>8}" for o in OUTCOMES)
            )
    return lines
