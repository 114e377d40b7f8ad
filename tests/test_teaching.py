"""The teacher's kit: chapter headers, instructor notes, the course map and the two editions."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pytest

from explorables import teaching
from explorables.notebooks import Converter

from .conftest import CHAPTERS, HTML, ROOT, register_site_work, site_work

GOOD = """
topic: Causality
difficulty: advanced
reading_minutes: 40
exercise_minutes: 60
goals:
  - "state the definition"
prerequisites:
  - "structural causal models"
after: [03-omwu]
"""


def _block(text: str, name: str) -> list[str]:
    return re.findall(rf"^```\{{{name}\}}\n(.*?)^```$", text, re.S | re.M)


def test_a_valid_header_parses():
    card = teaching.parse_card(GOOD)
    assert card.topic == "Causality" and card.goals == ("state the definition",)
    assert card.after == ("03-omwu",) and card.total_minutes == 100


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (("topic: Causality", "topic: Astrology"), "topic"),
        (("difficulty: advanced", "difficulty: easy-ish"), "difficulty"),
        (("reading_minutes: 40", "reading_minutes: 0"), "reading_minutes"),
        (("reading_minutes: 40", "reading_minutes: true"), "reading_minutes"),
        (("exercise_minutes: 60", "exercise_minutes: 6000"), "exercise_minutes"),
        (('  - "state the definition"', ""), "goals"),
        (("after: [03-omwu]", "after: 03-omwu"), "after"),
        (("after: [03-omwu]", "afterwards: [03-omwu]"), "unknown field"),
    ],
)
def test_a_bad_header_names_its_field(change, field):
    old, new = change
    with pytest.raises(ValueError, match=field):
        teaching.parse_card(GOOD.replace(old, new))


def test_missing_fields_and_non_mappings_are_refused():
    with pytest.raises(ValueError, match="missing"):
        teaching.parse_card("topic: Causality\n")
    with pytest.raises(ValueError, match="field: value"):
        teaching.parse_card("- a list\n")


def test_the_edition_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("EXPLORABLES_EDITION", raising=False)
    assert teaching.edition() == "instructor"
    monkeypatch.setenv("EXPLORABLES_EDITION", "student")
    assert teaching.edition() == "student"
    monkeypatch.setenv("EXPLORABLES_EDITION", "teacher")
    with pytest.raises(ValueError, match="EXPLORABLES_EDITION"):
        teaching.edition()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_has_a_teaching_header_and_instructor_notes(chapter: Path):
    text = chapter.read_text()
    headers = _block(text, "teaching")
    assert len(headers) == 1, f"{chapter.name}: expected one {{teaching}} header, found {len(headers)}"
    card = teaching.parse_card(headers[0])
    assert text.index("```{teaching}") < text.index("## The question"), "the header goes under the title"
    for stem in card.after:
        assert (chapter.parent / f"{stem}.md").exists(), f"{chapter.name}: after names {stem}, not a chapter"
        assert stem != chapter.stem
    notes = _block(text, "instructor-notes")
    assert len(notes) == 1 and notes[0].strip(), f"{chapter.name}: expected one non-empty {{instructor-notes}}"
    assert text.index("```{instructor-notes}") < text.index("## Exercises")


def test_notebook_copies_show_the_header_and_leave_out_instructor_notes(tmp_path):
    converter = Converter(ROOT / "book" / "03-omwu.md", bib=ROOT / "book" / "references.bib", out_dir=tmp_path)
    source = f"```{{teaching}}\n{GOOD.strip()}\n```\n\ntext\n\n```{{instructor-notes}}\nsecret demo\n```\n"
    markdown = converter.markdown(source)
    assert "Learning goals and prerequisites" in markdown and "state the definition" in markdown
    assert "advanced" in markdown and "secret demo" not in markdown


def test_course_page_is_in_the_table_of_contents():
    assert "file: book/teaching" in (ROOT / "_toc.yml").read_text()


# student_site: tests/conftest.py (built in the background as soon as the website is)


@pytest.mark.book
def test_the_student_edition_drops_solutions_and_instructor_notes(built_book, student_site):
    chapter = CHAPTERS[0].stem
    instructor = (built_book / "book" / f"{chapter}.html").read_text()
    assert "instructor-notes" in instructor and 'class="solution' in instructor
    course = (built_book / "book" / "teaching.html").read_text()
    for path in CHAPTERS:
        assert f"{path.stem}.html" in course, f"the course map does not list {path.stem}"

    html = student_site / "book"
    for path in CHAPTERS:
        page = (html / f"{path.stem}.html").read_text()
        assert 'class="solution' not in page, f"{path.stem}: a solution is left in the student edition"
        assert "instructor-notes" not in page, f"{path.stem}: instructor notes left in the student edition"
        assert "Learning goals and prerequisites" in page
        assert 'class="admonition exercise' in page or "exercise" in page
    assert (html / "teaching.html").exists()


# The two longest chapter pages: printed one after another in one browser context, they used to come
# out cut short (their last third, solutions included, missing); chosen by size, not by name.
def _longest_chapter_pages(site: Path, pages: list, n: int = 2) -> list:
    chapters = [p for p in pages if p.path.startswith("book/") and p.path[5:7].isdigit()]
    return sorted(chapters, key=lambda p: (site / p.path).stat().st_size, reverse=True)[:n]


#: the PDFs of the printing test (beside the site tests' screenshots)
PRINTED = ROOT / "_build" / "test-pdfs"


def _print_edition(edition: str, site: Path) -> tuple[Path, int]:
    """``explorables.printing`` on the front page and the two longest chapters of the website (the same
    pages for either edition) of ``edition``'s built ``site``: the PDF and its number of pages."""
    from explorables import printing

    pages = printing.book_pages()
    out = PRINTED / f"{edition}.pdf"
    return out, printing.print_book(site, out, pages=[pages[0], *_longest_chapter_pages(HTML, pages)])


# each edition is printed in the background as soon as it is built (tests/conftest.py), beside the site tests
for _edition in ("instructor", "student"):
    register_site_work(f"printed_{_edition}", _edition, functools.partial(_print_edition, _edition))


def _chromium_or_skip() -> None:
    from explorables import printing

    try:
        printing.chromium_path()
    except FileNotFoundError as error:
        if os.environ.get("CI"):
            pytest.fail(str(error))
        pytest.skip(str(error))


@pytest.fixture
def printed_instructor(built_book):
    _chromium_or_skip()
    return site_work("printed_instructor", built_book)


@pytest.fixture
def printed_student(student_site):
    _chromium_or_skip()
    return site_work("printed_student", student_site)


@pytest.mark.book
def test_both_editions_print_to_pdfs_with_solutions_only_in_the_instructors(built_book, printed_instructor,
                                                                            printed_student):
    """``explorables.printing`` (what ``make book`` runs on every page) on the front page and the two
    longest chapters of each edition: bookmarks in order, every solution of the instructor edition
    printed open (as many "Solution to" as the pages have solution boxes, so no page is cut short),
    none in the student edition, the math typeset, and no fold button's text on paper. Each edition is
    printed in the background as soon as it is built (``printed_instructor``, ``printed_student``)."""
    pypdf = pytest.importorskip("pypdf")
    from explorables import printing

    pages = printing.book_pages()
    chapters = _longest_chapter_pages(built_book, pages)
    solutions = sum((built_book / p.path).read_text().count('<div class="solution') for p in chapters)
    assert solutions >= 2
    texts = {}
    for edition, (out, n) in (("instructor", printed_instructor), ("student", printed_student)):
        reader = pypdf.PdfReader(out)
        assert n == len(reader.pages) >= 6
        outline = reader.outline
        assert outline[0].title == "NeurIPS 2026 Explorables"
        titles = [item.title for item in outline[1:] if not isinstance(item, list)]
        assert titles == list(dict.fromkeys(p.part for p in chapters)), edition
        texts[edition] = "\n".join(page.extract_text() for page in reader.pages)
    assert texts["instructor"].count("Solution to") == solutions
    assert "For instructors" in texts["instructor"]
    assert "Solution to" not in texts["student"] and "For instructors" not in texts["student"]
    for edition, text in texts.items():
        assert "Click to show" not in text and "Show code cell" not in text, edition
        assert "\\(" not in text, f"{edition}: untypeset math (MathJax's inline delimiter) on paper"


def test_a_chapter_card_shows_title_bar_gates_claims_and_time_escaped():
    counts = {"check": {"pass": 1, "fail": 0}, "gate": {"pass": 2, "fail": 1},
              "claim": {"yes": 1, "partly": 0, "no": 2, "unclear": 0, "untested": 0}}  # fmt: skip
    html = teaching.chapter_card_html("3. A <b> & c", "book/03-x.html", counts, teaching.parse_card(GOOD), seed=0)
    assert html.startswith('<a class="chapter-card" href="book/03-x.html">')
    assert "3. A &lt;b&gt; &amp; c" in html and "<b>" not in html
    assert "gates 2 of 3 pass" in html and "1 yes, 2 no" in html and "(base seed 0)" in html
    assert html.count('data-word="yes"') == 1 and html.count('data-word="no"') == 1
    assert "advanced · about 40 + 60 min" in html


@pytest.mark.book
def test_the_front_page_has_a_card_for_every_chapter_grouped_by_part(built_book):
    """The cards (``{chapter-cards}``) come first on the front page, one per chapter in the order of
    ``_toc.yml``, under their part's caption, with the counts of the chapter's committed seed study."""
    from html import escape

    from explorables.core import synthesis

    index = (built_book / "book" / "intro.html").read_text()  # index.html redirects to it
    cards = re.findall(r'<a class="chapter-card" href="([^"]+)">(.*?)</a>', index, re.S)
    matrix = synthesis.verdict_matrix()
    assert [href for href, _ in cards] == [f"{v.number:02d}-{v.slug}.html" for v in matrix]
    for (_, body), v in zip(cards, matrix, strict=True):
        gates = v.counts["gate"]
        assert f"gates {gates['pass']} of {sum(gates.values())} pass" in body or not sum(gates.values())
        assert all(f"{n} {w}" in body for w, n in v.counts["claim"].items() if n), v.slug
    parts = re.findall(r'<p class="chapter-cards-part">(.*?)</p>', index)
    assert parts == list(dict.fromkeys(escape(v.part) for v in matrix))
    assert index.index('class="chapter-card"') < index.index('id="who-it-is-for"')


def test_the_pdf_prints_the_root_then_every_part_in_table_of_contents_order():
    from explorables import printing
    from explorables.core import synthesis

    pages = printing.book_pages()
    assert pages[0] == printing.PrintedPage("book/intro.html", "")
    stems = [p.path.removeprefix("book/").removesuffix(".html") for p in pages]
    chapters = [c.stem for c in synthesis.book_chapters()]
    assert [s for s in stems if s in chapters] == chapters  # every chapter, in the sidebar's order
    assert {"synthesis", "teaching", "notation"} <= set(stems) and len(stems) == len(set(stems))
    assert all(p.part for p in pages[1:])


def test_printing_refuses_a_folder_that_is_not_the_built_book(tmp_path, capsys):
    from explorables import printing

    with pytest.raises(ValueError, match="missing"):
        printing.print_book(tmp_path, tmp_path / "x.pdf")
    with pytest.raises(ValueError, match="at least one page"):
        printing.print_book(tmp_path, tmp_path / "x.pdf", pages=[])
    assert printing.main([str(tmp_path), str(tmp_path / "x.pdf")]) == 2
    assert "missing" in capsys.readouterr().err and not (tmp_path / "x.pdf").exists()
