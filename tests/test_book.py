"""The book builds, and every chapter executes without error (a failing cell fails this suite).

One session-wide build (``jupyter-book build``, the same as ``make book``) executes every
chapter from a cold kernel through jupyter-cache; the per-chapter tests (marked ``book``) then inspect
its output. Rebuilding with an unchanged chapter reuses the cache, so ``make book`` then
``make test-site`` pays for execution once. ``make test`` builds no website: it runs this file's
other tests and executes every page itself (``tests/test_pages.py``); ``make test-site`` and CI's
book step (``.ci/run``) run the build.
"""

from __future__ import annotations

import re

import pytest

from .conftest import CHAPTERS, ROOT


def test_every_chapter_is_in_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text()
    for chapter in CHAPTERS:
        assert f"book/{chapter.stem}" in toc, f"{chapter.name} is not listed in _toc.yml"


def test_the_clone_commands_use_the_configured_repository():
    """The repository's address is configured once (``_config.yml``); the pages that spell it agree."""
    url = re.search(r"^repository:\n  url: (\S+)", (ROOT / "_config.yml").read_text(), re.M).group(1)
    for page in (ROOT / "book" / "intro.md", ROOT / "README.md"):
        clones = re.findall(r"git clone (\S+)", page.read_text())
        assert all(c == url for c in clones), f"{page.name} clones {clones}, _config.yml says {url}"
    assert re.findall(r"git clone (\S+)", (ROOT / "book" / "intro.md").read_text()), "intro.md shows no clone command"


def test_chapters_have_no_outputs_and_a_jupytext_header():
    for chapter in CHAPTERS:
        text = chapter.read_text()
        assert text.startswith("---\njupytext:"), f"{chapter.name} lacks the jupytext header"
        assert "format_name: myst" in text


@pytest.mark.book
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_executed_without_error(built_book, chapter):
    page = built_book / "book" / f"{chapter.stem}.html"
    assert page.exists(), f"{page} was not built"
    reports = built_book / "reports"
    failed = sorted(reports.glob(f"*{chapter.stem}*")) if reports.exists() else []
    assert not failed, f"execution of {chapter.name} failed: see {failed}"
    html = page.read_text()
    assert "Traceback (most recent call last)" not in html
    assert 'class="output traceback' not in html and "ansi-red-fg" not in html
    # every code cell produced its outputs: the chapter shows at least one figure
    assert re.search(r"Plotly\.newPlot|<img", html)
