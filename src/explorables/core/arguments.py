"""Checked arguments for public functions: ``@checked`` validates every argument before the body runs.

Every public function and class of a chapter is declared with :func:`checked`::

    @checked(steps=Int(1, 10**7), A=Array("k n m"), x=Array("b n"), y=Array("b m"))
    def simulate(A: torch.Tensor, x: torch.Tensor, y: torch.Tensor, eta: float, steps: int) -> ...

Before the function runs, each argument is checked

* against its **type hint** (``int``, ``float``, ``bool``, ``str``, ``Path``, arrays, tensors,
  models, ``X | None``, ``Literal[...]``, containers): a wrong type raises ``TypeError``;
* by the **rule** given for it in ``@checked(...)``: any :class:`~explorables.core.params.Rule`
  (``Int``, ``Float``, ``Positive()``, ``Choice``, ...) or :class:`Array` (shape with named
  dimensions shared across the arguments, finiteness, no empty axis); an ``Array`` rule takes
  the place of the type hint (it accepts a numpy array, a tensor or a nested list of numbers);
* by a **default rule** when none is given: an ``int`` lies in ``[0, 2**32)``, a ``float`` is
  finite, a float array or tensor holds no NaN or infinity.

Every error names the parameter and what it accepts, so bad input never becomes a traceback from
deep inside numpy or torch, nor a silent NaN. Rules normalise values (``3.0`` becomes ``3``),
and the function receives the normalised ones. ``fn.__wrapped__`` is the unchecked function (as
:func:`functools.wraps` sets it) for tools and tests; package code does not call it: a loop that
has checked its inputs runs inside a ``skip_nested`` body instead (below).

**Check once, at the boundary** (scikit-learn's ``prefer_skip_nested_validation``): a function
declared ``@checked(skip_nested=True, ...)`` runs its body with the checks of every other checked
call switched off, so the methods it calls in its loops (``Tree.step``, an optimiser's ``step``) are
checked when a reader calls them and cost nothing inside the method. The switch is a
:class:`contextvars.ContextVar`: it belongs to the running thread (and task), so a checked call
on another thread still checks. Without ``skip_nested`` a function checks its own arguments and
leaves its callees' checks on (a body that passes a reader's value on unchecked relies on them).
A function, bound method or partial handed to a ``skip_nested`` call (an oracle's ``ask``, a callback)
is the reader's code and runs with checks back on; one the package builds for its own loop (a batch loss, a
sampler's potential) is marked :func:`package_callable` and runs bare.

**What no single rule can say** (a step below the length of a schedule passed beside it, two arrays that must
broadcast) is a ``relation``: ``@checked(t=Array(integer=True), relation=_steps_in_schedule)`` calls
``_steps_in_schedule(t, schedule)`` after the rules and skips it with them, so the body holds the method only
and needs no unchecked twin for its loops.

This is the ``@validate_params`` decorator of scikit-learn and the runtime shape checks of
jaxtyping, at the size this book needs; ``tests/test_api_fuzz.py`` holds every public callable
to it.
"""

from __future__ import annotations

import collections.abc
import contextvars
import dataclasses
import functools
import inspect
import math
import os
import re
import types
import typing
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from .params import GRID_SUFFIX, Rule

F = TypeVar("F", bound=Callable[..., Any])


class ArgumentError(TypeError, ValueError):
    """A bad argument: both a ``TypeError`` and a ``ValueError``, so callers (and older tests)
    catching either one catch it. Its message names the parameter and what it accepts."""


#: the largest integer a parameter takes when its rule does not say (seeds are below it too)
DEFAULT_INT_MAX = 2**32 - 1


@dataclasses.dataclass(frozen=True, repr=False)
class Array(Rule):
    """A numpy array or torch tensor (or, for numpy, a nested list of numbers) of a given shape.

    ``shape`` names the axes: ``"b n"`` is 2-D; a name used by several parameters of one call
    must have one size (``x: "b n"`` and ``A: "k n m"`` share ``n``); an integer fixes a size;
    ``_`` is any size; a leading ``...`` allows any number of leading axes. ``shape=None`` checks
    no shape. ``finite`` refuses NaN and infinities (float data); ``finite=False`` allows
    infinities (``log 0``) but still refuses NaN unless ``allow_nan``. ``nonempty`` refuses an axis
    of size 0, ``min_size`` names a smallest size per axis name, ``integer`` asks for an integer
    dtype, ``at_most`` bounds the values from above (log-probabilities: ``at_most=0``),
    ``above``/``below`` bound them strictly, ``tensor`` asks for a torch tensor.
    """

    shape: str | None = None
    finite: bool = True
    allow_nan: bool = False
    nonempty: bool = True
    integer: bool = False
    min_size: tuple[tuple[str, int], ...] = ()
    at_most: float | None = None
    #: values strictly inside ``(above, below)`` (probabilities of a noise schedule: ``above=0, below=1``)
    above: float | None = None
    below: float | None = None
    #: a torch tensor only (the function calls torch on it; numpy arrays and lists are refused)
    tensor: bool = False

    def check(self, name: str, value: Any) -> Any:
        return self.check_dims(name, value, {})

    def check_dims(self, name: str, value: Any, dims: dict[str, tuple[int, str]]) -> Any:
        if self.tensor and not isinstance(value, torch.Tensor):
            raise ArgumentError(f"{name} must be a torch tensor, got {type(value).__name__}")
        if isinstance(value, torch.Tensor):
            shape = tuple(value.shape)
            is_float = value.is_floating_point() or value.is_complex()
            is_int = not is_float and value.dtype != torch.bool
            finite = (lambda: bool(torch.isfinite(value).all())) if is_float else (lambda: True)
            has_nan = (lambda: bool(torch.isnan(value).any())) if is_float else (lambda: False)
        else:
            if isinstance(value, (str, bytes)) or value is None:
                raise ArgumentError(f"{name} must be an array of numbers, got {type(value).__name__}")
            try:
                arr = value if isinstance(value, np.ndarray) else np.asarray(value)
            except (TypeError, ValueError) as error:
                raise ArgumentError(f"{name} must be an array of numbers: {error}") from None
            if arr.dtype.kind not in "biufc":
                raise ArgumentError(f"{name} must be an array of numbers, got dtype {arr.dtype}")
            shape = arr.shape
            is_float = arr.dtype.kind in "fc"
            is_int = arr.dtype.kind in "iu"
            finite = (lambda: bool(np.all(np.isfinite(arr)))) if is_float else (lambda: True)
            has_nan = (lambda: bool(np.isnan(arr).any())) if is_float else (lambda: False)
        if self.integer and not is_int:
            raise ArgumentError(f"{name} must hold integers, got a float array")
        if self.shape is not None:
            self._check_shape(name, shape, dims)
        if self.nonempty and any(s == 0 for s in shape):
            raise ArgumentError(f"{name} must not be empty, got shape {shape}")
        if self.finite and not finite():
            raise ArgumentError(f"{name} must hold only finite numbers (no NaN or inf)")
        if not self.allow_nan and has_nan():
            raise ArgumentError(f"{name} must not hold NaN")
        if self.at_most is not None and _numel_above(value, self.at_most):
            raise ArgumentError(f"{name} must hold values <= {self.at_most:g}")
        if (self.above is not None and not _all_above(value, self.above)) or (
            self.below is not None and _numel_above(value, self.below, strict=False)
        ):
            low = "-inf" if self.above is None else f"{self.above:g}"
            high = "inf" if self.below is None else f"{self.below:g}"
            raise ArgumentError(f"{name} must hold values in ({low}, {high})")
        return value

    def _check_shape(self, name: str, shape: tuple[int, ...], dims: dict[str, tuple[int, str]]) -> None:
        tokens = self.shape.split() if self.shape else []
        leading = bool(tokens) and tokens[0] == "..."
        if leading:
            tokens = tokens[1:]
        spec = "(" + ", ".join((["..."] if leading else []) + tokens) + ")"
        if (len(shape) < len(tokens)) if leading else (len(shape) != len(tokens)):
            raise ArgumentError(f"{name} must have shape {spec}, got {len(shape)}-D shape {shape}")
        sizes = shape[len(shape) - len(tokens) :]
        minimum = dict(self.min_size)
        for token, size in zip(tokens, sizes, strict=True):
            if token == "_":
                continue
            if re.fullmatch(r"\d+", token):
                if size != int(token):
                    raise ArgumentError(f"{name} must have shape {spec}, got {shape}")
                continue
            if token in minimum and size < minimum[token]:
                raise ArgumentError(f"{name} must have shape {spec} with {token} >= {minimum[token]}, got {shape}")
            if token in dims and dims[token][0] != size:
                seen, where = dims[token]
                raise ArgumentError(f"{name} must have shape {spec} with {token} = {seen} (from {where}), got {shape}")
            dims.setdefault(token, (size, name))

    def describe(self) -> str:
        shape = f" of shape ({', '.join(self.shape.split())})" if self.shape else ""
        return f"an array{shape}" + (", finite" if self.finite else "")

    def bad_values(self) -> list[Any]:
        return ["array", None, np.array([np.nan])]


@dataclasses.dataclass(frozen=True, repr=False)
class OfInstance(Rule):
    """A method's argument whose allowed values depend on its instance (a vertex id in ``[0, self.n)``).

    ``method`` names the instance's method that checks one value, ``(name, value) -> value`` (it
    raises ``ValueError`` naming ``name`` and the range); ``accepts`` says in words what it accepts.
    Declared like any rule, ``@checked(v=OfInstance("_check_vertex", "a vertex id"))``, so it is
    skipped with the other checks inside a ``skip_nested`` body.
    """

    method: str
    accepts: str

    def check(self, name: str, value: Any) -> Any:
        raise TypeError(f"OfInstance checks {name} through its instance: declare it on a method")

    def check_for(self, instance: Any, name: str, value: Any) -> Any:
        return getattr(instance, self.method)(name, value)

    def describe(self) -> str:
        return self.accepts

    def bad_values(self) -> list[Any]:
        return [None, -1, 2.5, float("nan")]


@dataclasses.dataclass(frozen=True, repr=False)
class RowsOf(OfInstance):
    """Row indices into one of the instance's tables: a non-empty 1-D integer array with entries in ``[0, n)``,
    ``n`` the rows of ``instance.<table>``. Declared on a method, ``@checked(rows=RowsOf(table="X"))``."""

    method: str = ""
    accepts: str = "a non-empty 1-D integer array of row indices in [0, n)"
    table: str = ""

    def __post_init__(self) -> None:
        if not self.table:
            raise ValueError("RowsOf needs the name of the instance's table, e.g. RowsOf(table='X')")

    def check_for(self, instance: Any, name: str, value: Any) -> np.ndarray:
        n = len(getattr(instance, self.table))
        rows = np.asarray(Array("r", integer=True).check(name, value))
        if rows.min() < 0 or rows.max() >= n:
            raise ArgumentError(f"{name} must hold row indices in [0, {n - 1}], got {rows.min()} to {rows.max()}")
        return rows


def _numel_above(value: Any, bound: float, strict: bool = True) -> bool:
    """Whether some value is ``> bound`` (``strict=False``: ``>= bound``)."""
    if isinstance(value, torch.Tensor):
        return bool((value > bound).any() if strict else (value >= bound).any())
    arr = np.asarray(value)
    return bool(np.any(arr > bound) if strict else np.any(arr >= bound))


def _all_above(value: Any, bound: float) -> bool:
    if isinstance(value, torch.Tensor):
        return bool((value > bound).all())
    return bool(np.all(np.asarray(value) > bound))


#: whether the running thread is inside the body of a ``@checked(skip_nested=True)`` call (its callees skip checks)
_SKIPPING: contextvars.ContextVar[bool] = contextvars.ContextVar("explorables_skip_nested_checks", default=False)


def checks_skipped() -> bool:
    """Whether a checked call made now skips its checks (it runs inside a ``skip_nested`` call's body)."""
    return _SKIPPING.get()


# The wrapper reaches the switch only through these module functions: a wrapper that a process pool pickles by
# value (cloudpickle does so when a name resolves to another object) must not carry the unpicklable ContextVar.
def _skip_checks() -> contextvars.Token:
    return _SKIPPING.set(True)


def _restore_checks(token: contextvars.Token) -> None:
    _SKIPPING.reset(token)


#: the functions :func:`package_callable` marked: the objects themselves, so that a reader's function that wraps one
#: (``functools.wraps`` copies attributes) or a method bound from one is not taken for the package's
_PACKAGE_CALLABLES: weakref.WeakSet = weakref.WeakSet()


def _is_reader_callable(value: Any) -> bool:
    """A plain function, lambda, bound method or partial: code a caller hands in (an oracle's ``ask``, a callback),
    unless the package made it (:func:`package_callable`)."""
    if not isinstance(value, (types.FunctionType, types.MethodType, functools.partial)):
        return False
    return not (isinstance(value, types.FunctionType) and value in _PACKAGE_CALLABLES)


def package_callable(fn: F) -> F:
    """Mark a function the package itself builds and hands to a ``skip_nested`` boundary (a training loop's batch
    loss, a sampler's potential): the boundary runs it bare, like its own body, instead of as a reader's callback
    with checks back on. Returns ``fn``. A reader's function handed in the same place stays checked, also one that
    wraps a marked function. (A callable *object* is not a function: a boundary runs it bare, as before.)"""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"package_callable marks a function the package builds, got {type(fn).__name__}")
    _PACKAGE_CALLABLES.add(fn)
    return fn


class _ChecksOn:
    """A callable handed into a ``skip_nested`` body, called with checks switched back on: the body's
    own callees run bare, but a reader's callback that calls a checked function is checked as at top level.
    A module-level class, so a process pool can pickle it whenever it can pickle the function."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        token = _SKIPPING.set(False)
        try:
            return self.fn(*args, **kwargs)
        finally:
            _SKIPPING.reset(token)


def checked(
    *, skip_nested: bool = False, relation: Callable[..., None] | None = None, **rules: Rule
) -> Callable[[F], F]:
    """Check a function's arguments (or a class's constructor's) before it runs; see the module doc.

    ``rules`` maps parameter names to a :class:`~explorables.core.params.Rule` or an
    :class:`Array`; every other parameter gets its type-hint check and default rule.
    ``skip_nested=True``: the checked calls made while the body runs skip their checks (the body
    passes on only values it checked or made).
    ``relation``: a check of what no single parameter's rule can say (a step index below the length of the
    schedule that is another argument). It is called after the rules with the checked arguments its own
    parameters name (``self`` included, for a method; on a class, the instance before ``__init__`` ran, so a
    class's relation reads only the arguments), raises :class:`ArgumentError` naming the parameter, returns
    nothing (it cannot normalise: that is a rule's job), and is skipped with the rules inside a
    ``skip_nested`` body: the function's body stays the method.
    """
    for key, rule in rules.items():
        if not isinstance(rule, Rule):
            raise TypeError(f"checked: the rule for {key!r} must be a Rule (Int, Float, Array, ...), got {rule!r}")
    if relation is not None and not callable(relation):
        raise TypeError(f"checked: relation must be a function of the checked arguments, got {relation!r}")

    def decorate(target: F) -> F:
        if inspect.isclass(target):
            init = target.__init__
            target.__init__ = _checked_function(  # type: ignore[misc]
                init, rules, owner=target, skip_nested=skip_nested, relation=relation
            )
            return target
        return _checked_function(target, rules, skip_nested=skip_nested, relation=relation)  # type: ignore[return-value]

    return decorate


#: ``(module, qualname, parameter)`` whose type hint names items it is not given: the container is checked by its
#: hint, its items not by default until the chapter corrects the hint (its helper owns the file; issue 53 item 5).
#: An entry whose hint is corrected must go. Empty: sensory's ``representations(groups=)`` has its rule now.
ITEMS_UNCHECKED: frozenset[tuple[str, str, str]] = frozenset()


def _container_only(hint: Any) -> Any:
    """``list[int] | None`` as ``list | None``: the containers a hint names, without their items."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = tuple(typing.get_origin(a) or a for a in typing.get_args(hint))
        return functools.reduce(lambda a, b: a | b, members)
    return typing.get_origin(hint) or hint


def _checked_function(
    fn: Callable,
    rules: dict[str, Rule],
    owner: type | None = None,
    skip_nested: bool = False,
    relation: Callable[..., None] | None = None,
) -> Callable:
    signature = inspect.signature(fn)
    unknown = sorted(set(rules) - set(signature.parameters))
    if unknown:
        raise TypeError(f"checked: {fn.__qualname__} has no parameter(s) {unknown}")
    related: tuple[str, ...] = ()
    if relation is not None:
        kinds = {p.kind for p in inspect.signature(relation).parameters.values()}
        if kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}:
            raise TypeError(
                f"checked: the relation of {fn.__qualname__} must name the parameters it reads, "
                "not take *args or **kwargs"
            )
        related = tuple(inspect.signature(relation).parameters)
        unknown = sorted(set(related) - set(signature.parameters))
        if unknown:
            raise TypeError(f"checked: the relation of {fn.__qualname__} reads parameter(s) {unknown} it does not have")
    plan: list[tuple[str, Any, Rule | None]] | None = None

    def make_plan() -> list[tuple[str, Any, Rule | None]]:
        hints = _hints(fn, owner)
        steps = []
        for pname, param in signature.parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or pname in ("self", "cls"):
                continue
            hint = hints.get(pname, inspect.Parameter.empty)
            if (fn.__module__, fn.__qualname__, pname) in ITEMS_UNCHECKED and pname not in rules:
                hint = _container_only(hint)  # the container is checked, its items are not (yet)
            steps.append((pname, hint, rules.get(pname)))
        return steps

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal plan
        if checks_skipped():  # called from a skip_nested body: its caller checked at the boundary
            return fn(*args, **kwargs)
        if plan is None:
            plan = make_plan()
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{fn.__qualname__}: {error}") from None
        arguments = bound.arguments
        dims: dict[str, tuple[int, str]] = {}
        for pname, hint, rule in plan:
            if pname not in arguments:
                continue
            value = arguments[pname]
            default = signature.parameters[pname].default
            if value is None and (default is None or _allows_none(hint)):
                continue
            if value is default and rule is None and not _is_checkable_scalar(value):
                continue  # the function's own default (an object, a callable): nothing to check
            if hint is not inspect.Parameter.empty and not isinstance(rule, Array) and not _matches(value, hint):
                raise ArgumentError(f"{pname} must be {_describe(hint)}, got {_short(value)}")
            if rule is None:
                rule = _default_rule(value, default, hint)
            if rule is None:
                continue
            if isinstance(rule, Array):
                arguments[pname] = rule.check_dims(pname, value, dims)
            elif isinstance(rule, OfInstance):
                arguments[pname] = rule.check_for(next(iter(arguments.values())), pname, value)
            else:
                arguments[pname] = rule.check(pname, value)
        if relation is not None:
            relation(**{p: arguments.get(p, signature.parameters[p].default) for p in related})
        if not skip_nested:
            return fn(*bound.args, **bound.kwargs)
        for pname, value in arguments.items():  # the reader's callbacks run checked, as at top level
            if _is_reader_callable(value):
                arguments[pname] = _ChecksOn(value)
        token = _skip_checks()
        try:
            return fn(*bound.args, **bound.kwargs)
        finally:
            _restore_checks(token)

    wrapper.__explorables_rules__ = rules  # type: ignore[attr-defined]
    wrapper.__explorables_relation__ = relation  # type: ignore[attr-defined]
    wrapper.__explorables_skip_nested__ = skip_nested  # type: ignore[attr-defined]
    return wrapper


def _is_checkable_scalar(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating))


@dataclasses.dataclass(frozen=True, repr=False)
class _DefaultInt(Rule):
    def check(self, name: str, value: Any) -> int:
        v = int(value)
        if not 0 <= v <= DEFAULT_INT_MAX:
            raise ArgumentError(f"{name} must be an integer in [0, 2**32), got {value!r}")
        return v

    def describe(self) -> str:
        return "an integer in [0, 2**32)"


@dataclasses.dataclass(frozen=True, repr=False)
class _DefaultFloat(Rule):
    allow_inf: bool = False

    def check(self, name: str, value: Any) -> float:
        v = float(value)
        if math.isnan(v) or (math.isinf(v) and not self.allow_inf):
            raise ArgumentError(f"{name} must be a finite number, got {value!r}")
        return v

    def describe(self) -> str:
        return "a finite number"


def _is_numeric_hint(name: Any) -> bool:
    """Whether one member of a hint admits a plain number (``int``, ``float``, ``Any``, numpy scalars, ...)."""
    if name in (typing.Any, object, int, float, complex):
        return True
    return isinstance(name, type) and issubclass(name, (int, float, np.number))


def _hint_names(hint: Any) -> tuple:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _default_rule(value: Any, default: Any, hint: Any = None) -> Rule | None:
    """The rule for a parameter declared without one, by its value and what its hint names."""
    if isinstance(value, (bool, np.bool_)):
        return None
    names = _hint_names(hint)
    if (
        isinstance(value, (int, float, np.integer, np.floating))
        and hint is not None
        and hint is not inspect.Parameter.empty
        and not any(map(_is_numeric_hint, names))
    ):
        return None  # a number passed where the hint names no number (a ``Hashable`` node label): not a count
    allow_inf = isinstance(default, float) and math.isinf(default)
    if isinstance(value, (int, np.integer)) and float in names and int not in names:
        return _DefaultFloat(allow_inf=allow_inf)  # a float parameter given 3: a number, not a count
    if isinstance(value, (float, np.floating)) and int in names and float not in names:
        return _DefaultInt()  # an int parameter given 3.0 (``_matches`` let only integral floats through)
    if isinstance(value, (int, np.integer)):
        return _DefaultInt()
    if isinstance(value, (float, np.floating)):
        return _DefaultFloat(allow_inf=isinstance(default, float) and math.isinf(default))
    if isinstance(value, (np.ndarray, torch.Tensor)):
        return Array()
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):  # a NamedTuple is a record, not a list
        options = _item_hint_options(hint, value)
        if len(options) == 1:
            return _DefaultItems(options[0])
        if options:  # a union of containers: the items follow one of them
            return _EitherItems(tuple(_DefaultItems(o) for o in options))
    return None


def _item_hints(hint: Any, value: list | tuple) -> tuple | None:
    """What the hint says each item of a list or tuple is: ``(X, ...)`` for ``tuple[X, ...]``, ``list[X]``,
    ``Sequence[X]``, ``Iterable[X]``; the positions' hints for a fixed ``tuple[X, Y]``; ``None`` when it says
    nothing. Of a union's containers (``Sequence[float] | Sequence[Sequence[float]]``) the first that fits."""
    options = _item_hint_options(hint, value)
    return options[0] if options else None


def _item_hint_options(hint: Any, value: list | tuple) -> list[tuple]:
    """Every item hint (as :func:`_item_hints` gives it) of the containers of ``hint`` that ``value`` is."""
    options = []
    for member in _hint_names(hint):
        origin = typing.get_origin(member)
        args = typing.get_args(member)
        if origin is None or not args or not inspect.isclass(origin) or not isinstance(value, origin):
            continue
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                options.append((args[0], ...))
            elif args != ((),):
                options.append(tuple(args))
        elif origin in _ITEM_CONTAINERS and len(args) == 1:
            options.append((args[0], ...))
    return options


_ITEM_CONTAINERS = (
    list,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Iterable,
    collections.abc.Collection,
)


@dataclasses.dataclass(frozen=True, repr=False)
class _DefaultItems(Rule):
    """The default rule of a list or tuple whose hint names its items (``tuple[int, ...]``, ``list[np.ndarray]``,
    ``tuple[float, float]``): each item has the hinted type and follows that type's default rule (an integer in
    ``[0, 2**32)``, a finite float, a finite non-empty array, recursively for nested containers); a fixed
    ``tuple[X, Y]`` has exactly its items; a parameter named ``*_grid`` repeats no point (as a
    :class:`~explorables.core.params.Tuple` setting). The value is checked, not converted: the function
    receives what it was given."""

    hints: tuple

    def check(self, name: str, value: Any) -> Any:
        variadic = len(self.hints) == 2 and self.hints[1] is Ellipsis
        if not variadic and len(value) != len(self.hints):
            raise ArgumentError(f"{name} must hold {len(self.hints)} items ({self.describe()}), got {len(value)}")
        if variadic and not _plain_numbers_ok(name, value, self.hints[0]):
            hint = self.hints[0]
            for i, item in enumerate(value):
                self._check_item(f"{name}[{i}]", item, hint)
        elif not variadic:
            for i, (item, hint) in enumerate(zip(value, self.hints, strict=True)):
                self._check_item(f"{name}[{i}]", item, hint)
        if name.endswith(GRID_SUFFIX):
            try:
                repeated = len(set(value)) != len(value)
            except TypeError:  # unhashable points: nothing to compare
                repeated = False
            if repeated:
                raise ArgumentError(f"{name} must be a grid of distinct points, got repeated items in {_short(value)}")
        return value

    @staticmethod
    def _check_item(label: str, item: Any, hint: Any) -> None:
        if hint is not Any and not isinstance(hint, TypeVar) and not _matches(item, hint):
            raise ArgumentError(f"{label} must be {_describe(hint)}, got {_short(item)}")
        rule = _default_rule(item, inspect.Parameter.empty, hint)
        if rule is not None:
            rule.check(label, item)

    def describe(self) -> str:
        if len(self.hints) == 2 and self.hints[1] is Ellipsis:
            return f"items each {_describe(self.hints[0])}"
        return "items " + ", ".join(_describe(h) for h in self.hints)


@dataclasses.dataclass(frozen=True, repr=False)
class _EitherItems(Rule):
    """The items of a union of containers (``Sequence[float] | Sequence[Sequence[float]]``): they follow one of
    them. The error is the one of the first container whose first item has the right type (the reader's
    evident intent), else of the first."""

    options: tuple[_DefaultItems, ...]

    def check(self, name: str, value: Any) -> Any:
        errors = []
        for option in self.options:
            try:
                return option.check(name, value)
            except ArgumentError as error:
                fits = bool(value) and _matches(value[0], option.hints[0])
                errors.append((not fits, len(errors), error))
        raise min(errors, key=lambda e: e[:2])[2]

    def describe(self) -> str:
        return " or ".join(o.describe() for o in self.options)


def _plain_numbers_ok(name: str, value: list | tuple, hint: Any) -> bool:
    """A fast pass over a long list of plain numbers (C loops, no per-item rule): ``True`` when every item is
    fine; ``False`` sends the list to the item-by-item check, which names the first bad item."""
    if len(value) < 32:
        return False
    kinds = set(map(type, value))
    if hint is int and kinds <= {int}:
        return min(value) >= 0 and max(value) <= DEFAULT_INT_MAX
    if hint is float and kinds <= {int, float}:
        return all(map(math.isfinite, value))
    return False


def _hints(fn: Callable, owner: type | None) -> dict[str, Any]:
    """The resolved type hints of ``fn`` (a dataclass's generated ``__init__`` reads its class's)."""
    target = getattr(fn, "__wrapped__", fn)
    try:
        return typing.get_type_hints(target)
    except Exception:
        pass
    if owner is not None and dataclasses.is_dataclass(owner):  # its __init__ takes exactly its fields
        try:
            return typing.get_type_hints(owner)
        except Exception:
            pass
    hints = {}
    globalns = getattr(target, "__globals__", {})
    for name, annotation in getattr(target, "__annotations__", {}).items():
        try:
            hints[name] = eval(annotation, globalns) if isinstance(annotation, str) else annotation
        except Exception:  # a name only imported under TYPE_CHECKING: leave that parameter to its rule
            continue
    return hints


def _allows_none(hint: Any) -> bool:
    if hint is inspect.Parameter.empty or hint is Any or hint is None or hint is type(None):
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_allows_none(a) for a in typing.get_args(hint))
    return False


_ABSTRACT = {
    collections.abc.Sequence: (list, tuple, range, np.ndarray, torch.Tensor),
}


def _matches(value: Any, hint: Any) -> bool:
    """Whether ``value`` has the type ``hint`` names (containers: the container, not every item)."""
    if isinstance(hint, TypeVar):
        bound = hint.__bound__
        return bound is None or not inspect.isclass(bound) or isinstance(value, bound)
    if hint is Any or hint is object or isinstance(hint, str):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, a) for a in typing.get_args(hint))
    if origin is typing.Literal:
        literal = (str, bytes, int, float, bool, type(None))
        return isinstance(value, literal) and any(type(value) is type(a) and value == a for a in typing.get_args(hint))
    if origin is typing.Annotated:
        return _matches(value, typing.get_args(hint)[0])
    if origin is not None:
        hint = origin
    if hint is bool:
        return isinstance(value, (bool, np.bool_))
    if hint is int:
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if hint is float:
        return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if hint is complex:
        return isinstance(value, (int, float, complex, np.number)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if hint in (Path, os.PathLike):
        return isinstance(value, (str, os.PathLike))
    if hint is np.ndarray:
        return isinstance(value, np.ndarray) or (isinstance(value, (list, tuple)) and not isinstance(value, str))
    if hint in (collections.abc.Callable, Callable):
        return callable(value)
    if hint in (collections.abc.Sequence,):
        return isinstance(value, (collections.abc.Sequence, np.ndarray, torch.Tensor)) and not isinstance(value, str)
    if hint in (collections.abc.Iterable, collections.abc.Iterator, collections.abc.Collection):
        return isinstance(value, hint) and not isinstance(value, str)
    if inspect.isclass(hint):
        if getattr(hint, "_is_protocol", False) and not getattr(hint, "_is_runtime_protocol", False):
            return True
        try:
            return isinstance(value, hint)
        except TypeError:
            return True
    return True


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    if origin is typing.Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(hint)))
    if hint is None or hint is type(None):
        return "None"
    names = {bool: "True or False", int: "an integer", float: "a number", str: "a string", Path: "a path"}
    if hint in names:
        return names[hint]
    base = origin or hint
    return f"a {getattr(base, '__name__', str(base))}"


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, (int, float, str, bool, type(None))) else type(value).__name__
    return text if len(text) < 60 else text[:57] + "..."
