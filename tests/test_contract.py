"""The chapter contract, checked once for every registered chapter (see ``explorables.chapters``).

A new chapter gets all of these checks by registering in ``CHAPTERS``: its smoke run is JSON-able
and deterministic (this process's run and the chapter page's give the same summary), its claims carry
verdicts and measured numbers, its figures and lab build, and every config field refuses bad values
with an error that names the field.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import typing
from typing import Any

import matplotlib.figure
import plotly.graph_objects as go
import pytest

from explorables.chapters import CHAPTERS
from explorables.cli import _jsonable
from explorables.core import seed_study
from explorables.core.config import SCALES
from explorables.core.experiment import Results
from explorables.core.params import Rule, field_doc, field_rule
from explorables.core.tables import Claim
from explorables.core.verdicts import WORDS, drive

from .page_runs import chapter_page, executed_page
from .smoke_runs import smoke_run

SLUGS = sorted(CHAPTERS)


def smoke(slug: str) -> Results:
    """The chapter's smoke run, computed once per pytest process (shared with the chapters' own tests there)."""
    return smoke_run(slug)


def without_timings(value: Any) -> Any:
    """A summary with wall-clock entries removed (the only part allowed to differ between runs).

    Wall-clock keys are ``timings`` and names ending in ``_s`` or ``_seconds`` (the naming table).
    """
    if isinstance(value, dict):
        wall_clock = ("_s", "_seconds")
        return {k: without_timings(v) for k, v in value.items() if k != "timings" and not k.endswith(wall_clock)}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def type_bad_values(hint: Any) -> list[Any]:
    """Values of the wrong type for a field's annotation: every field must refuse these."""
    origin = typing.get_origin(hint)
    if hint is bool:
        return ["yes", 2]
    if hint is int:
        return ["seven", 2.5]
    if hint is float:
        return ["seven", float("nan")]
    if hint is str:
        return [3]
    if origin is tuple:
        return ["not-a-tuple", 3.5]
    return []


@pytest.mark.parametrize("slug", SLUGS)
def test_smoke_run_returns_results_with_a_json_summary(slug):
    results = smoke(slug)
    assert isinstance(results, Results), f"{slug}.run must return a core.experiment.Results"
    assert isinstance(results.config, CHAPTERS[slug].module().Config)
    text = json.dumps(_jsonable(results.summary), allow_nan=False)
    assert len(text) > 2


@pytest.mark.parametrize("slug", SLUGS)
def test_claims_have_verdicts_and_measured_numbers(slug):
    claims = CHAPTERS[slug].submodule("claims").claims(smoke(slug))
    assert claims, f"{slug} has no claims"
    gates = {c.name for c in claims if c.kind == "gate"}
    for claim in claims:
        assert isinstance(claim, Claim)
        assert claim.outcome in WORDS[claim.kind], f"{slug}: {claim.kind} verdict {claim.verdict!r}"
        assert re.search(r"\d", claim.measured), f"{slug}: claim {claim.claim!r} has no measured number"
        assert claim.claim.strip() and claim.setting.strip()
        assert set(claim.gates) <= gates, f"{slug}: {claim.claim!r} depends on gates it does not report"


@pytest.mark.parametrize("slug", SLUGS)
def test_criteria_are_declared_and_every_verdict_branch_is_reached(slug):
    """Claims kit 3: each verdict function, driven with synthetic numbers, reaches every word its kind needs."""
    criteria = getattr(CHAPTERS[slug].submodule("claims"), "CRITERIA", None)
    assert criteria, f"{slug}: claims.py declares no CRITERIA (one Criterion per verdict function)"
    assert any(c.kind == "gate" for c in criteria), f"{slug}: no gate among its criteria"
    problems = drive(criteria)
    assert not problems, f"{slug}: " + "; ".join(problems)


@pytest.mark.parametrize("slug", SLUGS)
def test_seed_study_is_committed_and_made_from_the_current_source(slug):
    """The page's verdict-per-base-seed table comes from a study of the code as it is now."""
    study = seed_study.load_study(slug)
    assert study["seeds"] == list(seed_study.STUDY_SEEDS) and study["scale"] == "book"
    assert seed_study.is_fresh(slug), (
        f"{slug}: the seed study is stale (the package changed): run `python -m explorables seeds {slug}`"
    )


@pytest.mark.parametrize("slug", SLUGS)
def test_figure_builders_return_figures(slug):
    figures = CHAPTERS[slug].submodule("figures").all_figures(smoke(slug))
    assert figures and all(isinstance(k, str) for k in figures)
    for name, fig in figures.items():
        assert isinstance(fig, (go.Figure, matplotlib.figure.Figure)), f"{slug}: figure {name!r} is {type(fig)}"
        if isinstance(fig, go.Figure):
            assert len(fig.data) > 0, f"{slug}: figure {name!r} has no traces"
            # WebGL traces draw nothing where WebGL is missing, and a page gets ~16 WebGL contexts
            webgl = sorted({t.type for t in fig.data if t.type.endswith("gl")})
            assert not webgl, f"{slug}: figure {name!r} uses WebGL traces {webgl}; use their SVG versions"


@pytest.mark.parametrize("slug", SLUGS)
def test_lab_builds_and_its_benchmark_interactions_run(slug):
    interactions = CHAPTERS[slug].submodule("lab").benchmark_interactions()
    assert set(interactions) == {"redraw", "rerun"}
    for kind in ("redraw", "rerun"):
        calls = interactions[kind]
        assert calls and all(callable(c) for c in calls), f"{slug}: no {kind} interactions"
        calls[0]()  # one of each: the benchmark runs them all
        calls[-1]()


@pytest.mark.parametrize("slug", SLUGS)
def test_every_field_is_declared_with_a_rule_and_a_doc(slug):
    config_cls = CHAPTERS[slug].module().Config
    for f in dataclasses.fields(config_cls):
        assert isinstance(field_rule(f), Rule), f"{slug}: field {f.name!r} has no rule (declare it with param)"
        assert field_doc(f), f"{slug}: field {f.name!r} has no doc"
    for scale in SCALES:
        config_cls.preset(scale)  # every preset passes its own rules


def _bad_value_cases() -> list[tuple[str, str]]:
    cases = []
    for slug in SLUGS:
        for f in dataclasses.fields(CHAPTERS[slug].module().Config):
            cases.append((slug, f.name))
    return cases


@pytest.mark.parametrize(("slug", "name"), _bad_value_cases())
def test_every_field_refuses_bad_values_naming_the_field(slug, name):
    config_cls = CHAPTERS[slug].module().Config
    f = next(f for f in dataclasses.fields(config_cls) if f.name == name)
    hints = typing.get_type_hints(config_cls)
    rule = field_rule(f)
    bad = type_bad_values(hints[name]) + (rule.bad_values() if rule is not None else [])
    assert bad, f"{slug}: no bad values could be generated for {name!r}"
    base = config_cls.preset("smoke")
    for value in bad:
        with pytest.raises(ValueError, match=re.escape(name)):
            base.replace(**{name: value})
            pytest.fail(f"{slug}: {name}={value!r} was accepted")


@pytest.mark.parametrize("slug", SLUGS)
def test_same_seed_gives_identical_summaries(slug):
    """Two runs of the smoke preset give the same summary: this process's (``smoke``) and the chapter page's, executed
    from a cold kernel at the smoke scale (``tests/page_runs.py``; ``tests/test_pages.py`` checks the page executes and
    ran the smoke preset). Both are the first run in their process: a run that changes state another run in the same
    process reads (a cached array written to) is :func:`test_a_second_run_in_one_process_gives_the_same_summary`'s."""
    page = executed_page(chapter_page(slug))
    assert page["smoke_preset"], f"{slug}: the page's run at SCALE = 'smoke' is not the smoke preset"
    first = without_timings(_jsonable(smoke(slug).summary))
    assert without_timings(page["summary"]) == json.loads(json.dumps(first))


@pytest.mark.parametrize("slug", SLUGS)
def test_a_second_run_in_one_process_gives_the_same_summary(slug):
    """A rerun in the process that already ran the smoke preset gives the same summary, as a live lab's rerun in one
    kernel must: several chapters hand out cached arrays to treat as read-only, and a run that wrote to one would
    change the next run's numbers (the page comparison above runs each side once per process, so it cannot see that)."""
    first = without_timings(_jsonable(smoke(slug).summary))
    module = CHAPTERS[slug].module()
    again = module.run(module.Config.preset("smoke"))
    assert without_timings(_jsonable(again.summary)) == first


def test_nan_floats_are_refused_as_numbers():
    """The bad-value generator covers NaN for floats (a sanity check of this file's own helper)."""
    assert any(isinstance(v, float) and math.isnan(v) for v in type_bad_values(float))
