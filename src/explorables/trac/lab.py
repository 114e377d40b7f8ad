"""The live lab: pick or edit a model, its context and the outcome; see every cause with its witness.

Editing the model, the context, the outcome or the blame prior re-runs TrAC (and blame over all
contexts); the "highlight cause" slider only recolours the graph (blitted). The graph is drawn
with matplotlib into an ``ipywidgets.Image`` so that its last state survives on the website.
"""

from __future__ import annotations

import html
import re

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.figures import PALETTE
from ..core.labs import canvas_png, interactions
from .causes import CauseSet
from .examples import classic_examples
from .figures import EDGE_COLOUR, ROLE_COLOURS, layered_positions
from .responsibility import blame, context_distribution, responsibility
from .scm import SCM, parse_formula, random_boolean_scm
from .trac import trac

MAX_BLAME_EXOGENOUS = 6
_LINE = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)\s*(.+?)\s*$")


def parse_equations(text: str) -> dict[str, str]:
    """``"X = formula"`` lines (blank lines and ``#`` comments ignored) as ``{X: formula}``."""
    out: dict[str, str] = {}
    for k, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0]
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            raise ValueError(f"equations line {k}: expected 'name = formula', got {line.strip()!r}")
        if m.group(1) in out:
            raise ValueError(f"equations line {k}: {m.group(1)} has two equations")
        out[m.group(1)] = m.group(2)
    if not out:
        raise ValueError("equations: write at least one line 'name = formula'")
    return out


def parse_context(text: str) -> dict[str, int]:
    """``"U1=1, U2=0"`` as ``{"U1": 1, "U2": 0}``."""
    out: dict[str, int] = {}
    for item in filter(None, (p.strip() for p in text.replace(";", ",").split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"context: expected 'name=value' items separated by commas, got {item!r}")
        out[name.strip()] = int(value)
    return out


def model_from_text(equations: str) -> SCM:
    """An SCM from equation lines; every name without an equation is a Boolean exogenous variable."""
    eqs = parse_equations(equations)
    names: set[str] = set()
    for v, src in eqs.items():
        names |= parse_formula(src, f"equation for {v}").names
    return SCM(eqs, sorted(names - set(eqs)))


def example_texts() -> dict[str, tuple[str, str, str, str]]:
    """``{key: (title, equations text, context text, outcome)}`` for the lab's menu."""
    out = {}
    for key, ex in classic_examples().items():
        eqs = "\n".join(f"{v} = {ex.model.formulas[v].source}" for v in ex.model.order)
        out[key] = (ex.title, eqs, ", ".join(f"{u}={x}" for u, x in ex.context.items()), ex.outcome)
    m, u, phi = random_boolean_scm(9, np.random.default_rng(3))
    eqs = "\n".join(f"{v} = {m.formulas[v].source}" for v in m.order)
    out["random"] = ("Random Boolean SCM (n = 9)", eqs, ", ".join(f"{k}={x}" for k, x in u.items()), phi)
    return out


class TracLab:
    """The panel. ``TracLab().widget`` is what the notebook displays."""

    def __init__(self, example: str = "rock_throwing"):
        self.examples = example_texts()
        style = {"description_width": "90px"}
        self.example = widgets.Dropdown(
            options=[(t[0], k) for k, t in self.examples.items()],
            value=example,
            description="example",
            style=style,
            layout=widgets.Layout(width="320px"),
        )
        self.equations = widgets.Textarea(
            description="equations",
            style=style,
            continuous_update=False,
            layout=widgets.Layout(width="520px", height="150px"),
        )
        self.context = widgets.Text(
            description="context u", style=style, continuous_update=False, layout=widgets.Layout(width="520px")
        )
        self.outcome = widgets.Text(
            description="outcome φ", style=style, continuous_update=False, layout=widgets.Layout(width="320px")
        )
        self.prior = widgets.FloatSlider(
            value=0.5, min=0.05, max=0.95, step=0.05, description="Pr(U=1)", style=style, continuous_update=False
        )
        self.cause = widgets.IntSlider(
            value=0, min=0, max=0, description="highlight cause", style={"description_width": "110px"}
        )
        self.status = widgets.HTML()
        self.table = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="640px"))
        self.result: CauseSet | None = None
        self.model: SCM | None = None
        self._fig = Figure(figsize=(8, 3.6), dpi=80)
        FigureCanvasAgg(self._fig)
        self._ax = self._fig.add_axes((0.01, 0.01, 0.98, 0.98))
        self._busy = False
        self.example.observe(self._load_example, names="value")
        for w in (self.equations, self.context, self.outcome, self.prior):
            w.observe(self.rerun, names="value")
        self.cause.observe(self.redraw, names="value")
        controls = widgets.VBox(
            [
                widgets.HBox([self.example, self.outcome], layout=widgets.Layout(flex_flow="row wrap")),
                self.equations,
                self.context,
                widgets.HBox([self.prior, self.cause], layout=widgets.Layout(flex_flow="row wrap")),
            ]
        )
        self.widget = widgets.VBox([controls, self.status, self.image, self.table])
        self._load_example()

    def _load_example(self, _change=None) -> None:
        _, eqs, ctx, phi = self.examples[self.example.value]
        self._busy = True
        try:
            self.equations.value, self.context.value, self.outcome.value = eqs, ctx, phi
        finally:
            self._busy = False
        self.rerun()

    def rerun(self, _change=None) -> None:
        """Rebuild the model from the text boxes, enumerate all causes, responsibility and blame."""
        if self._busy:
            return
        try:
            model = model_from_text(self.equations.value)
            context = model.check_context(parse_context(self.context.value))
            result = trac(model, context, self.outcome.value)
        except ValueError as exc:
            self.status.value = f"<span style='color:{PALETTE['red']}'><b>Error:</b> {html.escape(str(exc))}</span>"
            return
        self.model, self.ctx, self.result = model, context, result
        self.resp = responsibility(result)
        self.blame = None
        if len(model.exogenous) <= MAX_BLAME_EXOGENOUS:
            ctxs = context_distribution(model, default=self.prior.value)
            actual = model.evaluate(context)
            self.blame = {v: blame(model, v, actual[v], self.outcome.value, ctxs) for v in result.candidates}
        self._draw_background()
        self.table.value = self._table_html()
        with self.cause.hold_trait_notifications():
            self.cause.max = max(len(result.causes) - 1, 0)
            self.cause.value = 0
        self.redraw()

    def _draw_background(self) -> None:
        m = self.model
        nodes = list(m.order)
        edges = [[a, b] for a, b in m.graph.edges if a in m.formulas]
        self.pos = layered_positions(nodes, edges)
        ax = self._ax
        ax.clear()
        ax.set_axis_off()
        xy = np.array([self.pos[v] for v in nodes])
        ax.set_xlim(xy[:, 0].min() - 0.5, xy[:, 0].max() + 0.5)
        ax.set_ylim(xy[:, 1].min() - 0.7, xy[:, 1].max() + 0.7)
        for a, b in edges:
            ax.annotate(
                "",
                xy=self.pos[b],
                xytext=self.pos[a],
                arrowprops=dict(arrowstyle="-|>", color=EDGE_COLOUR, shrinkA=14, shrinkB=14, lw=1),
            )
        self._nodes = ax.scatter(xy[:, 0], xy[:, 1], s=900, c=ROLE_COLOURS["free"], edgecolors="black", zorder=3)
        self._labels = [ax.text(x, y, "", ha="center", va="center", fontsize=8, zorder=4) for x, y in xy]
        self._nodes.set_visible(False)
        for t in self._labels:
            t.set_visible(False)
        self._fig.canvas.draw()
        self._background = self._fig.canvas.copy_from_bbox(self._fig.bbox)
        self._nodes.set_visible(True)
        for t in self._labels:
            t.set_visible(True)

    def redraw(self, _change=None) -> None:
        """Recolour the graph for the highlighted cause (no re-run)."""
        r, m = self.result, self.model
        actual = m.evaluate(self.ctx)
        phi_vars = set(re.findall(r"[A-Za-z_]\w*", self.outcome.value)) & set(m.formulas)
        if r.causes:
            c = r.causes[self.cause.value]
            world, X, W = c.world, c.variables, set(c.contingency)
            self.status.value = (
                f"<b>{len(r.causes)} cause(s)</b> of {html.escape(self.outcome.value)}. "
                f"Cause {self.cause.value + 1}: {html.escape(c.describe())}"
            )
        else:
            world, X, W = actual, set(), set()
            why = "the outcome is false in the actual world (AC1 fails)" if not r.holds else "no cause exists"
            self.status.value = f"<b>No causes</b>: {why}."
        colours = []
        for v, label in zip(m.order, self._labels, strict=True):
            role = "cause" if v in X else "contingency" if v in W else "outcome" if v in phi_vars else "free"
            colours.append(ROLE_COLOURS[role])
            label.set_text(f"{v}\n{actual[v]}→{world[v]}")
        self._nodes.set_facecolor(colours)
        canvas = self._fig.canvas
        canvas.restore_region(self._background)
        self._ax.draw_artist(self._nodes)
        for t in self._labels:
            self._ax.draw_artist(t)
        self.image.value = canvas_png(canvas)

    def _table_html(self) -> str:
        r = self.result
        rows = "".join(
            f"<tr><td>{i + 1}</td><td>{html.escape(' ∧ '.join(f'{v}={x}' for v, x in c.actual.items()))}</td>"
            f"<td>{html.escape(', '.join(f'{v}←{x}' for v, x in c.alternative.items()))}</td>"
            f"<td>{html.escape(', '.join(f'{v}={x}' for v, x in c.contingency.items()) or '∅')}</td><td>{c.k}</td></tr>"
            for i, c in enumerate(r.causes)
        )
        causes = (
            "<table><tr><th>#</th><th>cause X = x</th><th>alternative x′</th><th>contingency W = w*</th>"
            f"<th>k = |X|+|W|</th></tr>{rows}</table>"
        )
        blame_head = "<th>blame</th>" if self.blame is not None else ""
        resp_rows = "".join(
            f"<tr><td>{v}</td><td>{self.resp[v]:.3g}</td>"
            + (f"<td>{self.blame[v]:.3g}</td>" if self.blame is not None else "")
            + "</tr>"
            for v in r.candidates
        )
        note = (
            ""
            if self.blame is not None
            else f"<p><small>Blame is computed for at most {MAX_BLAME_EXOGENOUS} exogenous variables.</small></p>"
        )
        return (
            f"{causes}<p><small>Responsibility (actual context) and blame (every context, independent "
            f"Pr(U=1) = {self.prior.value:.2f}) of each ancestor of φ at its actual value:</small></p>"
            f"<table><tr><th>variable</th><th>responsibility</th>{blame_head}</tr>{resp_rows}</table>{note}"
        )


def benchmark_interactions(lab: TracLab | None = None) -> dict[str, list]:
    """Callables that mimic a reader's interactions, for ``benchmarks/run.py``.

    ``"redraw"`` only recolours the graph (budget 150 ms); ``"rerun"`` re-enumerates the causes and
    recomputes blame (budget 1 s).
    """
    lab = lab or TracLab("voting_3_0")
    examples = ("rock_throwing", "double_prevention", "random", "voting_6_5", "ff_disjunctive", "bogus_prevention")
    return interactions(
        redraw=[(lab.cause, (1, 2, 0, 2, 1, 0) * 3)],
        rerun=[
            (lab.example, examples),
            (lab.prior, (0.3, 0.7)),
            (lab.outcome, ("VS == 1", "VS")),  # on bogus prevention, the last example
        ],
    )
