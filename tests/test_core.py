"""The shared core: validation messages, tables, device choice, seeding, presets."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
import pytest
import torch

from explorables.core.config import ExperimentConfig
from explorables.core.device import resolve_device
from explorables.core.seeding import seed_everything
from explorables.core.tables import Claim, claims_table, markdown_table
from explorables.core.validation import (
    check_choice,
    check_distribution,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: check_positive("eta", 0), "eta must be a finite number > 0"),
        (lambda: check_positive("eta", float("nan")), "eta must be finite"),
        (lambda: check_positive("eta", "x"), "eta must be a number"),
        (lambda: check_in_range("p", 1.5, 0, 1), r"p must lie in \[0, 1\]"),
        (lambda: check_in_range("p", 0, 0, 1, low_inclusive=False), r"p must lie in \(0, 1\]"),
        (lambda: check_int("T", 0), "T must be an integer >= 1"),
        (lambda: check_int("T", 2.5), "T must be an integer"),
        (lambda: check_int("T", True), "T must be an integer"),
        (lambda: check_matrix("A", [[1, np.inf]]), "A must contain only finite"),
        (lambda: check_matrix("A", [1, 2]), "A must be a 2-D matrix"),
        (lambda: check_distribution("x0", [0.5, 0.6], 2), "x0 must sum to 1"),
        (lambda: check_distribution("x0", [1.0, 0.0], 2), "x0 must have strictly positive"),
        (lambda: check_choice("method", "sgd", ("omwu", "mwu")), "method must be one of 'omwu', 'mwu'"),
        (lambda: resolve_device("tpu"), "device must be one of"),
    ],
)
def test_validation_messages_name_the_parameter_and_range(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_valid_inputs_pass_through():
    assert check_int("T", 3.0) == 3 and check_positive("eta", np.float32(0.5)) == 0.5
    with pytest.raises(ValueError, match="eta must be a number"):  # a string is not a number (issue 29)
        check_positive("eta", "0.5")
    np.testing.assert_allclose(check_distribution("x", [0.25, 0.75], 2), [0.25, 0.75])
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda", "mps")


def test_markdown_table_escapes_pipes():
    table = markdown_table(("a", "b"), [("|w|", 1)])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| \\|w\\| | 1 |"]
    assert claims_table([Claim("c|d", "s", "m", "yes")]).splitlines()[-1] == "| claim | c\\|d | s | m | yes |"


def test_seed_everything_makes_runs_repeat():
    seed_everything(5)
    a = (torch.rand(2), np.random.rand(2))  # noqa: NPY002 - checks the legacy global state is seeded
    gen = seed_everything(5)
    b = (torch.rand(2), np.random.rand(2))  # noqa: NPY002
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert isinstance(gen, np.random.Generator)


@dataclass(frozen=True)
class Toy(ExperimentConfig):
    steps: int = 3
    rates: tuple[float, ...] = (0.1,)
    flag: bool = False
    PRESETS: ClassVar[dict] = {"smoke": {"steps": 1}}


def test_config_strings_and_unknown_keys():
    cfg = Toy.preset("smoke").with_strings(["rates=0.5,0.25", "flag=yes", "seed=7"])
    assert cfg.steps == 1 and cfg.rates == (0.5, 0.25) and cfg.flag and cfg.seed == 7
    with pytest.raises(ValueError, match="unknown config key 'nope'"):
        cfg.with_strings(["nope=1"])
    with pytest.raises(ValueError, match="expects int"):
        cfg.with_strings(["steps=many"])
    with pytest.raises(ValueError, match="scale must be one of"):
        Toy.preset("huge")


def test_constructing_a_config_checks_it_as_preset_and_replace_do():
    from explorables.core.config import ExperimentConfig

    assert ExperimentConfig(seed=3).seed == 3
    assert ExperimentConfig(seed=3.0).seed == 3 and isinstance(ExperimentConfig(seed=3.0).seed, int)
    for bad in (-1, 2**32, "3", 2.5):
        with pytest.raises(ValueError, match="seed"):
            ExperimentConfig(seed=bad)


# --- core.arguments.checked: the checks every public callable declares ------------------------------


def test_checked_refuses_by_hint_rule_and_default_naming_the_parameter():
    from explorables.core.arguments import ArgumentError, Array, checked
    from explorables.core.params import Int

    @checked(steps=Int(1, 100), x=Array("b n"), y=Array("b m"))
    def f(
        x: np.ndarray,
        y: np.ndarray,
        steps: int,
        eta: float = 0.1,
        kind: Literal["a", "b"] = "a",
        flag: bool = True,
        note: str | None = None,
    ) -> int:
        return steps

    x, y = np.ones((2, 3)), np.ones((2, 5))
    assert f(x, y, 3.0) == 3 and isinstance(f(x, y, 3.0), int)  # a rule normalises what the body sees
    assert f(x.tolist(), y, 3) == 3  # an Array rule takes nested lists too
    bad = [
        ({"steps": 0}, "steps"),
        ({"steps": 2.5}, "steps"),
        ({"steps": "3"}, "steps"),
        ({"eta": float("nan")}, "eta"),
        ({"eta": "0.1"}, "eta"),
        ({"kind": "c"}, "kind"),
        ({"flag": "yes"}, "flag"),
        ({"note": 3}, "note"),
        ({"x": np.ones((3, 3))}, "y"),  # b = 3 from x, but y has 2 rows
        ({"x": np.ones(3)}, "x"),
        ({"x": np.full((2, 3), np.nan)}, "x"),
        ({"x": np.ones((2, 0))}, "x"),
        ({"x": "array"}, "x"),
        ({"x": None}, "x"),
    ]
    for change, name in bad:
        kwargs = {"x": x, "y": y, "steps": 3, **change}
        with pytest.raises(ValueError, match=name):
            f(**kwargs)
    with pytest.raises(TypeError, match="note"):  # a wrong type is a TypeError and a ValueError at once
        f(x, y, 3, note=3)
    assert issubclass(ArgumentError, TypeError) and issubclass(ArgumentError, ValueError)
    assert f.__wrapped__(x, y, -5) == -5  # functools.wraps keeps the unchecked function (tools and tests use it)


def test_a_relation_checks_what_no_single_rule_can_and_is_skipped_with_the_rules():
    from explorables.core.arguments import ArgumentError, checked
    from explorables.core.params import Int

    calls = []

    def steps_below_length(t: int, length: int = 4) -> None:
        calls.append((t, length))
        if t >= length:
            raise ArgumentError(f"t must be a step in [0, {length}), got {t}")

    @checked(t=Int(0), relation=steps_below_length)
    def step(x: float, t: int, length: int = 4) -> float:
        return x * t

    assert step(2.0, 3) == 6.0 and calls[-1] == (3, 4)  # the default of an omitted argument reaches the relation
    with pytest.raises(ValueError, match=r"t must be a step in \[0, 4\), got 4"):
        step(1.0, 4)
    with pytest.raises(ValueError, match="t must be an integer"):
        step(1.0, -1)  # the rules run first: the relation sees checked values only
    assert calls[-1] == (4, 4)
    assert step(1.0, 5, length=6) == 5.0

    @checked(skip_nested=True)
    def boundary() -> float:
        return step(1.0, 9)  # nested: rules and relation both skipped

    n = len(calls)
    assert boundary() == 9.0 and len(calls) == n

    class Walk:
        def __init__(self, length: int) -> None:
            self.length = length

        def _below(self, t: int) -> None:
            if t >= self.length:
                raise ArgumentError(f"t must be below {self.length}")

        @checked(relation=lambda self, t: self._below(t))
        def at(self, t: int) -> int:
            return t

    assert Walk(3).at(2) == 2
    with pytest.raises(ValueError, match="t must be below 3"):
        Walk(3).at(3)
    with pytest.raises(TypeError, match=r"reads parameter\(s\) \['n'\]"):
        checked(relation=lambda n: None)(lambda x: x)
    with pytest.raises(TypeError, match="relation must be a function"):
        checked(relation=3)
    with pytest.raises(TypeError, match=r"must name the parameters it reads, not take \*args"):
        checked(relation=lambda **kwargs: None)(lambda x: x)


def test_a_package_callable_runs_bare_in_a_skip_nested_body_and_a_readers_function_checked():
    from explorables.core.arguments import checked, package_callable
    from explorables.core.params import Int

    @checked(n=Int(1, 10))
    def inner(n: int) -> int:
        return n

    @checked(skip_nested=True)
    def loop(step) -> int:
        return step(0)

    with pytest.raises(ValueError, match="n must be an integer in"):
        loop(lambda n: inner(n))  # the reader's callback runs checked
    assert loop(package_callable(lambda n: inner(n))) == 0  # the package's own closure runs bare
    with pytest.raises(ValueError, match="n must be an integer in"):
        package_callable(lambda n: inner(n))(0)  # outside a skip_nested body the mark changes nothing
    import functools

    marked = package_callable(lambda n: inner(n))

    @functools.wraps(marked)
    def readers(n: int) -> int:  # a reader's wrapper copies the marked function's attributes: still the reader's
        return inner(n)

    with pytest.raises(ValueError, match="n must be an integer in"):
        loop(readers)
    with pytest.raises(TypeError, match="marks a function"):
        package_callable(functools.partial(inner))


def test_checked_skip_nested_skips_the_callees_checks_only_inside_its_body():
    import threading

    from explorables.core.arguments import checked, checks_skipped
    from explorables.core.params import Int

    @checked(n=Int(1, 10))
    def inner(n: int) -> int:
        return n

    @checked(skip_nested=True, n=Int(1, 10))
    def boundary(n: int, inner_n: int) -> int:
        return inner(inner_n)  # a value the boundary made: its callee's check is skipped

    @checked(n=Int(1, 10))
    def plain(n: int, inner_n: int) -> int:
        return inner(inner_n)

    with pytest.raises(ValueError, match="n must be an integer in"):
        inner(0)  # at top level a checked call checks
    assert boundary(3, 0) == 0  # nested in a skip_nested body: skipped
    with pytest.raises(ValueError, match="n must be an integer in"):
        boundary(0, 3)  # the boundary still checks its own arguments
    with pytest.raises(ValueError, match="n must be an integer in"):
        plain(3, 0)  # without skip_nested the callee keeps its checks
    assert not checks_skipped()  # the switch is reset after the body, also after an error
    with pytest.raises(ZeroDivisionError):
        checked(skip_nested=True)(lambda: 1 / 0)()
    assert not checks_skipped()

    # the switch belongs to the thread running the body: another thread's calls still check
    inside, outside = threading.Event(), threading.Event()
    seen = {}

    def other_thread():
        inside.wait(5)
        try:
            inner(0)
            seen["other"] = "accepted"
        except ValueError:
            seen["other"] = "refused"
        outside.set()

    @checked(skip_nested=True)
    def hold() -> bool:
        inside.set()
        outside.wait(5)
        return checks_skipped()

    thread = threading.Thread(target=other_thread)
    thread.start()
    assert hold() is True
    thread.join(5)
    assert seen == {"other": "refused"}


def test_of_instance_rule_asks_the_instance_and_is_skipped_when_nested():
    from explorables.core.arguments import OfInstance, checked

    class Line:
        def __init__(self, n: int):
            self.n = n

        def _check_point(self, name: str, v: object) -> int:
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < self.n:
                raise ValueError(f"{name} must be a point in [0, {self.n - 1}], got {v!r}")
            return v

        @checked(skip_nested=True, v=OfInstance("_check_point", "a point in [0, n - 1]"))
        def right(self, v: int) -> int:
            return v + 1

        @checked(skip_nested=True, v=OfInstance("_check_point", "a point in [0, n - 1]"))
        def two_right(self, v: int) -> int:
            return self.right(self.right(v))  # right(n - 1) is off the line: skipped, as made here

    line = Line(3)
    assert line.right(1) == 2 and line.two_right(1) == 3
    for bad in (-1, 3, 2.5, None, True):
        with pytest.raises(ValueError, match="v must be"):
            line.right(bad)


def test_rows_of_checks_row_indices_against_the_instances_table():
    from explorables.core.arguments import RowsOf, checked

    with pytest.raises(ValueError, match="RowsOf needs the name"):
        RowsOf()

    class Table:
        def __init__(self, n: int):
            self.X = np.zeros((n, 2))

        @checked(rows=RowsOf(table="X"))
        def pick(self, rows: np.ndarray) -> np.ndarray:
            return self.X[rows]

    table = Table(4)
    assert table.pick([0, 3]).shape == (2, 2)
    assert table.pick(np.arange(4)).shape == (4, 2)
    for bad in ([4], [-1], [0.5], [], [[0, 1]], None):
        with pytest.raises(ValueError, match="rows"):
            table.pick(bad)


def test_a_skip_nested_body_runs_the_readers_callbacks_checked():
    """A callback handed into a skip_nested body (an oracle's ask, a progress hook) is the reader's code:
    a checked call it makes is checked as at top level, while the body's own callees stay bare."""
    import functools
    import pickle

    from explorables.core.arguments import checked, checks_skipped
    from explorables.core.params import Int

    @checked(n=Int(1, 10))
    def inner(n: int) -> int:
        return n

    @checked(skip_nested=True)
    def boundary(callback: object, made: int) -> tuple:
        return inner(made), callback(), checks_skipped()

    assert boundary(lambda: 1, 0)[0] == 0  # the body's own value: skipped
    for callback in (lambda: inner(0), functools.partial(inner, 0)):
        with pytest.raises(ValueError, match="n must be an integer in"):
            boundary(callback, 3)  # the reader's callback: checked
    seen = boundary(lambda: checks_skipped(), 3)
    assert seen[1] is False and seen[2] is True  # checks on inside the callback, off again after it
    assert not checks_skipped()

    from explorables.core import arguments

    wrapped = arguments._ChecksOn(functools.partial(divmod, 7))  # picklable whenever its function is
    assert pickle.loads(pickle.dumps(wrapped))(2) == (3, 1)


def test_a_number_given_for_a_non_numeric_hint_is_not_a_count():
    """An int passed where the hint names no number (a Hashable node label) gets no [0, 2**32) rule."""
    from collections.abc import Hashable

    from explorables.core.arguments import checked

    def label(node, count):
        return node

    label.__annotations__ = {"node": Hashable, "count": int}  # resolved objects: the hints of a module-level def
    label = checked()(label)
    assert label(-1, 3) == -1 and label(10**12, 3) == 10**12
    with pytest.raises(ValueError, match="count must be an integer in"):
        label(-1, -1)  # an int hint keeps its default rule

    def total(x):
        return float(x.sum())

    total.__annotations__ = {"x": torch.Tensor}
    total = checked()(total)
    with pytest.raises(ValueError, match="x must hold only finite numbers"):
        total(torch.tensor([1.0, float("nan")]))  # a tensor hint (no number named) keeps the array rule


def test_a_checked_function_pickled_by_value_still_pickles():
    """A process pool (joblib's cloudpickle) pickles a local checked function by value, with the globals its
    wrapper reads: the nested-skip switch (an unpicklable ContextVar) must not be one of them."""
    import pickle

    cloudpickle = pytest.importorskip("cloudpickle")  # what joblib's process pools pickle with

    from explorables.core.arguments import checked

    @checked(skip_nested=True)
    def twice(n: int) -> int:
        return 2 * n

    assert pickle.loads(cloudpickle.dumps(twice))(3) == 6


def test_checked_default_rules_cap_integers_and_keep_infinite_defaults():
    import math

    from explorables.core.arguments import checked

    @checked()
    def g(n: int, tol: float = math.inf) -> float:
        return n * 0 + tol

    assert g(5) == math.inf and g(5, math.inf) == math.inf  # an infinite default may be passed
    for n in (-1, 2**32, 10**12):
        with pytest.raises(ValueError, match="n must be an integer in"):
            g(n)
    with pytest.raises(ValueError, match="tol"):
        g(5, float("nan"))


def test_checked_default_rules_reach_the_items_of_lists_and_tuples():
    """A list or tuple whose hint names its items is checked item by item (issue 53 item 5): the item's type and
    its default rule (an int in [0, 2**32), a finite float, a finite array), a fixed tuple's length, a ``*_grid``
    without repeats; the function receives the value it was given (checked, not converted)."""
    import math

    import numpy as np

    from explorables.core.arguments import checked

    @checked()
    def g(
        counts: tuple[int, ...],
        scales: list[float] = (1.0,),  # type: ignore[assignment]
        pair: tuple[float, float] = (0.0, 1.0),
        names: tuple[str, ...] = ("a",),
        mats: list[np.ndarray] | None = None,
        edges: list[tuple[int, int]] | None = None,
        eta_grid: tuple[float, ...] = (0.1, 0.2),
    ):
        return counts

    given = (1, 2.0, 3)
    assert g(given) is given  # checked, not converted
    assert g(tuple(range(100))) == tuple(range(100))  # a long tuple takes the fast pass
    cases = [
        ({"counts": (1, "2")}, r"counts\[1\] must be an integer"),
        ({"counts": (1, True)}, r"counts\[1\] must be an integer"),
        ({"counts": (1, 2.5)}, r"counts\[1\] must be an integer"),
        ({"counts": (-1,)}, r"counts\[0\] must be an integer in \[0, 2\*\*32\)"),
        ({"counts": (*range(99), 10**12)}, r"counts\[99\]"),  # the fast pass defers to the named check
        ({"counts": (1,), "scales": [1.0, math.nan]}, r"scales\[1\] must be a finite number"),
        ({"counts": (1,), "scales": [*([1.0] * 50), math.inf]}, r"scales\[50\]"),
        ({"counts": (1,), "pair": (0.0, 1.0, 2.0)}, "pair must hold 2 items"),
        ({"counts": (1,), "names": ("a", 3)}, r"names\[1\] must be a string"),
        ({"counts": (1,), "mats": [np.eye(2), np.full(2, np.nan)]}, r"mats\[1\] must hold only finite"),
        ({"counts": (1,), "edges": [(0, 1), (0, -1)]}, r"edges\[1\]\[1\]"),
        ({"counts": (1,), "eta_grid": (0.1, 0.1)}, "eta_grid must be a grid of distinct points"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            g(**kwargs)

    @checked()
    def h(functions: Sequence[float] | Sequence[Sequence[float]]):  # a union of containers: the items follow one
        return functions

    assert h([1.0, 2.0]) == [1.0, 2.0] and h([[1.0], [2.0]]) == [[1.0], [2.0]]
    with pytest.raises(ValueError, match=r"functions\[1\]\[0\] must be a finite number"):
        h([[1.0], [math.nan]])  # the error of the container its first item fits
    with pytest.raises(ValueError, match=r"functions\[1\] must be a finite number"):
        h([1.0, math.inf])


def test_items_left_unchecked_name_real_parameters_whose_items_are_not_checked():
    """Each ITEMS_UNCHECKED entry names a parameter of a checked function (an entry left after its hint is corrected
    or its function renamed would be dead)."""
    import importlib
    import inspect

    from explorables.core.arguments import ITEMS_UNCHECKED

    for module, qualname, pname in ITEMS_UNCHECKED:
        fn = getattr(importlib.import_module(module), qualname)
        assert pname in inspect.signature(fn).parameters and hasattr(fn, "__explorables_rules__")


def test_checked_on_a_dataclass_checks_its_constructor_and_refuses_unknown_rules():
    import dataclasses

    from explorables.core.arguments import checked
    from explorables.core.params import Positive

    @checked(scale=Positive())
    @dataclasses.dataclass
    class Box:
        scale: float
        name: str = "box"

    assert Box(2).scale == 2.0
    with pytest.raises(ValueError, match="scale"):
        Box(-1.0)
    with pytest.raises(TypeError, match="name"):
        Box(1.0, name=3)
    with pytest.raises(TypeError, match="no parameter"):
        checked(nope=Positive())(lambda x: x)


def test_array_rule_bounds_values_strictly_and_can_ask_for_a_tensor():
    from explorables.core.arguments import Array

    rule = Array("t", tensor=True, above=0.0, below=1.0)
    inside = torch.tensor([0.1, 0.9])
    assert rule.check("betas", inside) is inside
    for bad, message in (
        (np.array([0.1, 0.9]), "betas must be a torch tensor"),
        (torch.tensor([0.0, 0.5]), r"betas must hold values in \(0, 1\)"),
        (torch.tensor([0.5, 1.0]), r"betas must hold values in \(0, 1\)"),
    ):
        with pytest.raises(ValueError, match=message):
            rule.check("betas", bad)


def test_the_benchmark_measures_its_own_checkout(monkeypatch, tmp_path):
    """A relative PYTHONPATH entry (``src``) would not resolve in the kernels' ``book/`` folder."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("bench_run", root / "benchmarks" / "run.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["src", "other"]))
    bench.measure_this_checkout()
    entries = os.environ["PYTHONPATH"].split(os.pathsep)
    assert entries == [str(root / "src"), str(tmp_path / "src"), str(tmp_path / "other")]


def _benchmark_module(name: str):
    """``benchmarks/<name>.py`` imported as a module (the benchmarks are scripts, not a package)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_quoted_code_counts_method_validation_and_wrappers():
    """The classifier of benchmarks/quoted_code.py on a constructed module with known counts."""
    quoted = _benchmark_module("quoted_code")
    source = '''
def _step(x):
    return x + 1

def step(x, n):
    """Doc
    string."""
    check_int("n", n, 0, 10)
    if x is None:
        raise ValueError("x")
    y = _tensor("x", x)
    return _step(y)

def body(x):
    y = x * 2  # eq. (1)
    z = (y
         + 1)
    assert z is not None
    return z
'''
    wrapper = quoted.classify(source, "step")
    assert (wrapper.method, wrapper.validation, wrapper.docstring, wrapper.wrapper) == (1, 4, 2, True)
    method = quoted.classify(source, "body")
    assert (method.method, method.validation, method.docstring, method.wrapper) == (4, 1, 0, False)
    with pytest.raises(ValueError, match="pyobject"):
        quoted.classify(source, "missing")


def test_no_page_quotes_a_checking_wrapper():
    """Issue 38: a page shows the function that holds the equations, not a wrapper around it."""
    wrappers = [f"{q.page}: {q.name}" for q in _benchmark_module("quoted_code").quoted_functions() if q.wrapper]
    assert wrappers == []


def test_figure_html_sends_float32_where_it_loses_nothing_visible_and_float64_elsewhere():
    """``core.plotting.compact_spec``: float64 typed arrays go to the page as float32 (equal to 1e-6
    relative), except arrays with magnitudes float32 cannot hold (they stay float64, bit for bit)."""
    import base64
    import json
    import re

    import plotly.graph_objects as go

    from explorables.core import plotting

    def arrays(html: str) -> list[tuple[str, np.ndarray]]:
        spec = json.loads(re.search(r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*(\[.*?\]),\s*\{", html, re.S).group(1))
        out = []
        for trace in spec:
            for key in ("x", "y"):
                dtype, data = trace[key]["dtype"], base64.b64decode(trace[key]["bdata"])
                out.append((dtype, np.frombuffer(data, dtype=f"<{dtype}")))
        return out

    rng = np.random.default_rng(0)
    y = rng.normal(size=200)
    tiny = 10.0 ** -np.arange(40, 60, dtype=float)  # below float32's range: would become zeros
    fig = go.Figure([go.Scatter(x=np.linspace(0, 1, 200), y=y), go.Scatter(x=np.arange(20.0), y=tiny)])
    (dx, _), (dy, y_sent), (dx2, _), (dtiny, tiny_sent) = arrays(plotting.figure_html(fig))
    assert (dx, dy, dx2) == ("f4", "f4", "f4") and dtiny == "f8"
    np.testing.assert_allclose(y_sent, y, rtol=1e-6)
    np.testing.assert_array_equal(tiny_sent, tiny)
    assert plotting.figure_html(fig) == plotting.figure_html(fig)  # deterministic (the div id too)
    compact = len(plotting.figure_html(fig))
    full = len(plotting.pio.to_html(fig, include_plotlyjs=False, full_html=False))
    assert compact < full


def test_a_figure_with_frames_does_not_play_them_on_load():
    """plotly.py's HTML ends a figure with frames with ``Plotly.animate(id, null)`` unless told not to:
    chapter 13's explorable ran through its 93 frames on load and stopped on the last (issue 51)."""
    import plotly.graph_objects as go

    from explorables.core import plotting

    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]), frames=[go.Frame(data=[go.Scatter(y=[k, 0])], name=str(k))
                                                            for k in range(3)])  # fmt: skip
    html = plotting.figure_html(fig)
    assert "Plotly.addFrames" in html and "Plotly.animate" not in html


def test_log_axes_label_powers_of_ten_and_other_axes_are_left_alone():
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from explorables.core import plotting

    fig = make_subplots(rows=1, cols=3)
    for col in (1, 2, 3):
        fig.add_trace(go.Scatter(x=[1, 10, 100], y=[1e-6, 1e-4, 1e-2]), row=1, col=col)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", exponentformat="e", row=1, col=2)  # an axis's own choice is kept
    out = plotting.plain_log_ticks(fig)
    assert out.layout.yaxis.exponentformat == "power" and out.layout.yaxis2.exponentformat == "e"
    assert out.layout.yaxis3.exponentformat is None and out.layout.xaxis.exponentformat is None
    assert fig.layout.yaxis.exponentformat is None  # the caller's figure is not changed


#: issue 38 item 1, "no twins, no bypasses": the checked/unchecked twins left per package (a checked ``f`` whose body
#: calls a private ``_f``), and the packages still unwrapping a checked method with ``inspect.unwrap``.
#: Both only shrink: a package that loses one must be updated here (its seed study is rerun with the change).
TWINS_LEFT = {"dcdm": 1, "muon": 2, "rpkd": 6, "stable_nde": 7, "topoprune": 2, "tree_search": 1,
              "trust_region_cl": 7, "unirap": 2, "virtualflow": 5}  # fmt: skip
UNWRAP_LEFT: frozenset[str] = frozenset()


def test_package_code_has_no_wrapped_calls_no_unwrapping_and_no_new_twins():
    """No ``fn.__wrapped__`` in package code (a loop that has checked its inputs runs inside a ``skip_nested`` body
    instead), ``inspect.unwrap`` only where still listed, and no twin beyond :data:`TWINS_LEFT`."""
    packages = _benchmark_module("boundary_census").census()
    assert {name: p.wrapped for name, p in packages.items() if p.wrapped} == {}
    unwrap = {name for name, p in packages.items() if p.unwrap}
    assert unwrap <= UNWRAP_LEFT, f"inspect.unwrap in {sorted(unwrap - UNWRAP_LEFT)}"
    assert unwrap == UNWRAP_LEFT, f"no inspect.unwrap left in {sorted(UNWRAP_LEFT - unwrap)}: unlist them"
    twins = {name: len(p.twins) for name, p in packages.items() if p.twins}
    assert twins == TWINS_LEFT, f"twins per package changed: {twins} (update TWINS_LEFT only when one went)"


def test_boundary_census_finds_bypasses_twins_and_repeated_rules(tmp_path):
    """The census of benchmarks/boundary_census.py on a constructed package with known counts."""
    census = _benchmark_module("boundary_census")
    package = tmp_path / "toy"
    package.mkdir()
    (package / "m.py").write_text('''
import inspect

def _step(x, n):
    return x + n

@checked(x=Array("b d"), n=Int(0, 10))
def step(x, n):
    """Doc."""
    if x.ndim != 2:
        raise ValueError("x")
    if n < 0:
        raise ValueError("n")
    if x.shape[0] != n:
        raise ValueError("x and n")
    return _step(x, n)

@checked(skip_nested=True)
def loop(x):
    f = inspect.unwrap(step)
    return step.__wrapped__(x, 1) + f(x, 2)
''')
    found = census.census(tmp_path)["toy"]
    assert (found.checked, found.skip_nested, found.no_rule) == (2, 1, 1)
    assert len(found.wrapped) == 1 and len(found.unwrap) == 1 and found.twins == ["toy/m.py:step"]
    assert sorted(kind for kind, _, _ in found.body_checks) == ["other", "range", "shape", "shape"]


def test_benchmark_scripts_import_only_names_the_package_has():
    """A name a chapter renames or makes private must not leave a benchmark script (cited by its page) failing on
    import: ruff cannot see a missing name in another module, and no test runs the scripts."""
    import ast
    import importlib
    import types
    from pathlib import Path

    def has(module: types.ModuleType, name: str) -> bool:
        if hasattr(module, name):
            return True
        try:  # a submodule: `from explorables.x import y` with y a module
            importlib.import_module(f"{module.__name__}.{name}")
        except ImportError:
            return False
        return True

    missing = []
    for path in sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py")):
        tree = ast.parse(path.read_text())
        modules: dict[str, types.ModuleType] = {}  # local names bound to a package module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("explorables") and alias.asname:
                        modules[alias.asname] = importlib.import_module(alias.name)
            if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("explorables")):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                if alias.name == "*":
                    continue
                if not has(module, alias.name):
                    missing.append(f"{path.name}: {node.module}.{alias.name}")
                elif isinstance(value := getattr(module, alias.name, None), types.ModuleType):
                    modules[alias.asname or alias.name] = value
        read = [  # `D._name` read on an imported module (not one the script sets itself): the name must be there
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
        ]
        stored = {(node.value.id, node.attr) for node in read if isinstance(node.ctx, ast.Store)}
        for node in read:
            if isinstance(node.ctx, ast.Load) and (node.value.id, node.attr) not in stored:
                module = modules[node.value.id]
                if not has(module, node.attr):
                    missing.append(f"{path.name}: {module.__name__}.{node.attr}")
    assert missing == []
