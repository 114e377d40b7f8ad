"""The closing chapter's verdict matrix (explorables.core.synthesis): counts that add up, on built studies."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from explorables.chapters import CHAPTERS as REGISTRY
from explorables.core import synthesis
from explorables.core.verdicts import CLAIM_WORDS, KINDS, WORDS

from .conftest import CHAPTERS, ROOT


def _row(kind: str, words: list[str], name: str = "") -> dict:
    return {"kind": kind, "claim": f"a {kind}", "name": name, "setting": "", "verdicts": words,
            "measured": [""] * len(words), "agree": len(set(words)) == 1}  # fmt: skip


def _study(slug: str, rows: list[dict], seeds: list[int]) -> dict:
    return {"slug": slug, "scale": "book", "seeds": seeds, "source_hash": "", "run_seconds": [], "rows": rows}


def _random_study(rng: random.Random, slug: str, seeds: list[int]) -> dict:
    rows = []
    for _ in range(rng.randint(0, 12)):
        kind = rng.choice(KINDS)
        rows.append(_row(kind, [rng.choice(WORDS[kind]) for _ in seeds], name=f"g{len(rows)}"))
    return _study(slug, rows, seeds)


def test_a_constructed_study_gives_the_expected_counts():
    study = _study("demo", [
        _row("check", ["pass", "pass", "pass"]),
        _row("check", ["fail", "pass", "fail"]),
        _row("gate", ["pass", "pass", "pass"], "room"),
        _row("gate", ["fail", "fail", "fail"], "horizon"),
        _row("claim", ["yes", "yes", "yes"]),
        _row("claim", ["untested", "untested", "untested"]),
        _row("claim", ["unclear", "yes", "no"]),
    ], [0, 1, 2])  # fmt: skip
    v = synthesis.chapter_verdicts(study)
    assert v.seed == 0 and v.seeds == (0, 1, 2)
    assert v.counts["check"] == {"pass": 1, "fail": 1}
    assert v.counts["gate"] == {"pass": 1, "fail": 1}
    assert v.counts["claim"] == {"yes": 1, "partly": 0, "no": 0, "unclear": 1, "untested": 1}
    assert v.unstable == {"check": 1, "gate": 0, "claim": 1}
    assert v.failed_gates == ("horizon",)
    on_two = synthesis.chapter_verdicts(study, seed=2)
    assert on_two.counts["claim"]["no"] == 1 and on_two.counts["claim"]["unclear"] == 0
    assert on_two.counts["check"] == {"pass": 1, "fail": 1} and on_two.unstable == v.unstable


@pytest.mark.parametrize("draw", range(40))
def test_counts_sum_to_the_rows_on_every_seed(draw: int):
    rng = random.Random(draw)
    seeds = rng.sample(range(10), rng.randint(1, 5))
    study = _random_study(rng, "demo", seeds)
    for seed in seeds:
        v = synthesis.chapter_verdicts(study, seed)
        for kind in KINDS:
            rows = [r for r in study["rows"] if r["kind"] == kind]
            assert sum(v.counts[kind].values()) == len(rows) == v.rows(kind)
            assert set(v.counts[kind]) == set(WORDS[kind])
            assert 0 <= v.unstable[kind] <= len(rows)
            assert v.unstable[kind] == sum(not r["agree"] for r in rows)
        assert v.rows() == len(study["rows"])
        assert len(v.failed_gates) == v.counts["gate"]["fail"]
    if len(seeds) == 1:  # one seed: nothing can differ between seeds
        assert sum(synthesis.chapter_verdicts(study).unstable.values()) == 0


@pytest.mark.parametrize("draw", range(10))
def test_the_totals_are_the_columns_summed_and_each_seed_counts_every_claim(tmp_path: Path, draw: int):
    rng = random.Random(100 + draw)
    seeds = [0, 1, 2]
    chapters = [synthesis.BookChapter(i + 1, f"demo{i}", rng.choice(["part A", "part B"]))
                for i in range(rng.randint(1, 6))]  # fmt: skip
    studies = [_random_study(rng, c.slug, seeds) for c in chapters]
    for study in studies:
        (tmp_path / f"{study['slug']}.json").write_text(json.dumps(study))
    matrix = synthesis.verdict_matrix(chapters, folder=tmp_path)
    totals = synthesis.matrix_totals(matrix)
    assert [v.slug for v in matrix] == [c.slug for c in chapters]
    assert [v.number for v in matrix] == [c.number for c in chapters]
    for kind in KINDS:
        assert sum(totals[kind].values()) == sum(v.rows(kind) for v in matrix)
        assert totals["unstable"][kind] == sum(v.unstable[kind] for v in matrix)
    parts = synthesis.part_totals(matrix)
    assert {w: sum(p[w] for p in parts.values()) for w in CLAIM_WORDS} == totals["claim"]
    per_seed = synthesis.totals_per_seed(chapters, folder=tmp_path)
    assert list(per_seed) == seeds
    n_claims = sum(v.rows("claim") for v in matrix)
    assert all(sum(counts.values()) == n_claims for counts in per_seed.values())
    assert per_seed[0] == totals["claim"]
    table = synthesis.matrix_table(matrix)
    assert table.count("\n") == len(matrix) + 2  # header, rule, one line per chapter, the totals
    assert "**all**" in table


def test_bad_studies_are_refused_naming_the_problem():
    good = _study("demo", [_row("claim", ["yes", "no"])], [0, 1])
    with pytest.raises(ValueError, match="seed must be one of"):
        synthesis.chapter_verdicts(good, seed=7)
    with pytest.raises(ValueError, match="kind"):
        synthesis.chapter_verdicts(_study("demo", [_row("claim", ["yes", "no"]) | {"kind": "lemma"}], [0, 1]))
    with pytest.raises(ValueError, match="reads one of"):
        synthesis.chapter_verdicts(_study("demo", [_row("gate", ["yes", "pass"])], [0, 1]))
    with pytest.raises(ValueError, match="2 verdicts for 3 seeds"):
        synthesis.chapter_verdicts(_study("demo", [_row("claim", ["yes", "no"])], [0, 1, 2]))


def test_the_outlook_needs_a_note_for_every_chapter_and_no_other():
    matrix = [synthesis.chapter_verdicts(_study("demo", [_row("gate", ["fail"], "room"),
                                                          _row("claim", ["untested"])], [0]))]  # fmt: skip
    table = synthesis.outlook_table(matrix, {"demo": "a gate that passes"})
    assert "`room`" in table and "1 untested" in table and "a gate that passes" in table
    with pytest.raises(ValueError, match="missing"):
        synthesis.outlook_table(matrix, {})
    with pytest.raises(ValueError, match="not chapters"):
        synthesis.outlook_table(matrix, {"demo": "x", "other": "y"})


def test_the_figure_stacks_one_bar_per_chapter_and_word():
    matrix = [synthesis.chapter_verdicts(_study(f"demo{i}", [_row("claim", [w])], [0]))
              for i, w in enumerate(CLAIM_WORDS)]  # fmt: skip
    fig = synthesis.matrix_figure(matrix)
    assert isinstance(fig, go.Figure) and len(fig.data) == len(CLAIM_WORDS)
    assert all(sum(trace.x) == 1 for trace in fig.data)  # each word on exactly one chapter's bar


def test_the_book_order_covers_every_chapter_once():
    """The table of contents places every chapter page in one part, and the registry knows each slug."""
    chapters = synthesis.book_chapters()
    assert sorted(c.stem for c in chapters) == sorted(p.stem for p in CHAPTERS)
    assert all(c.part for c in chapters)
    assert {c.slug for c in chapters} == set(REGISTRY)
    assert all(REGISTRY[c.slug].number == c.number for c in chapters)


def test_the_committed_studies_give_a_complete_matrix():
    matrix = synthesis.verdict_matrix()
    assert len(matrix) == len(CHAPTERS)
    assert all(v.seed == 0 and 0 in v.seeds for v in matrix)
    totals = synthesis.matrix_totals(matrix)
    assert sum(totals["claim"].values()) == sum(v.rows("claim") for v in matrix) > 0


def test_the_closing_chapter_is_in_the_table_of_contents_after_the_chapters():
    toc = (ROOT / "_toc.yml").read_text()
    assert "file: book/synthesis" in toc
    assert all(toc.index(f"book/{p.stem}") < toc.index("book/synthesis") for p in CHAPTERS)


def test_the_intro_links_the_closing_chapter_and_the_notation_page():
    intro = (ROOT / "book" / "intro.md").read_text()
    assert "{ref}`chapter-synthesis`" in intro and "{doc}`notation`" in intro
    assert "file: book/notation" in (ROOT / "_toc.yml").read_text()
    assert (ROOT / "book" / "synthesis.md").read_text().count("(chapter-synthesis)=") == 1


def test_every_chapter_reference_names_a_chapter_label():
    """A typo in {ref}`chapter-<slug>` would only show in a full build; check it here, for every page."""
    import re

    pages = sorted((ROOT / "book").glob("*.md"))
    labels = {m for p in pages for m in re.findall(r"^\((chapter-\w+)\)=$", p.read_text(), re.M)}
    assert {f"chapter-{c.slug}" for c in synthesis.book_chapters()} | {"chapter-synthesis"} <= labels
    for page in pages:
        for target in re.findall(r"\{ref\}`(?:[^`<]*<)?(chapter-\w+)>?`", page.read_text()):
            assert target in labels, f"{page.name} refers to {target}, which no page defines"


@pytest.mark.parametrize("draw", range(5))
def test_the_verdict_bar_splits_its_width_in_proportion_to_the_counts(draw: int):
    rng = np.random.default_rng(draw)
    counts = {w: int(n) for w, n in zip(CLAIM_WORDS, rng.integers(0, 5, len(CLAIM_WORDS)), strict=True)}
    counts["yes"] += 1  # at least one claim
    svg = synthesis.verdict_bar_svg(counts, width=300)
    segments = re.findall(r'data-word="(\w+)" x="([\d.]+)" y="0" width="([\d.]+)"', svg)
    assert [w for w, _, _ in segments] == [w for w in CLAIM_WORDS if counts[w]]  # the words' order, zeros left out
    total = sum(counts.values())
    right = 0.0
    for word, x, width in segments:
        assert float(x) == pytest.approx(right, abs=0.01)  # each segment starts where the last ended
        assert float(width) == pytest.approx(300 * counts[word] / total, abs=0.01)
        right = float(x) + float(width)
    assert right == pytest.approx(300, abs=0.02)
    title = re.search(r"<title>(.*)</title>", svg).group(1)
    assert all(f"{counts[w]} {w}" in title for w in CLAIM_WORDS if counts[w])


def test_a_chapter_without_claims_gets_an_empty_bar_and_bad_counts_are_refused():
    svg = synthesis.verdict_bar_svg(dict.fromkeys(CLAIM_WORDS, 0))
    assert "data-word" not in svg and "no claims" in svg and 'fill="none"' in svg
    with pytest.raises(ValueError, match="claim words"):
        synthesis.verdict_bar_svg({"pass": 2})
    with pytest.raises(ValueError, match="≥ 0"):
        synthesis.verdict_bar_svg({"yes": -1})
    with pytest.raises(ValueError, match="width"):
        synthesis.verdict_bar_svg({"yes": 1}, width=0)
