"""The book's Sphinx extension: stale-chapter fingerprints, the Colab link, duplicate scripts, the scale a build
executes the chapters at."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from explorables import sphinx_ext

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]-*.md"))


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_fingerprint_follows_the_chapter_and_the_core_only(tmp_path, monkeypatch):
    _write(tmp_path / "alpha" / "method.py", "x = 1\n")
    _write(tmp_path / "beta" / "method.py", "y = 1\n")
    _write(tmp_path / "core" / "util.py", "z = 1\n")
    monkeypatch.setattr(sphinx_ext, "PACKAGE", tmp_path)
    before = sphinx_ext.chapter_fingerprint("alpha")
    _write(tmp_path / "beta" / "method.py", "y = 2\n")  # another chapter: no effect
    assert sphinx_ext.chapter_fingerprint("alpha") == before
    _write(tmp_path / "alpha" / "method.py", "x = 2\n")  # its own code: changes
    changed = sphinx_ext.chapter_fingerprint("alpha")
    assert changed != before
    _write(tmp_path / "core" / "util.py", "z = 2\n")  # the shared core: changes
    assert sphinx_ext.chapter_fingerprint("alpha") != changed


def test_colab_button_points_at_the_notebook_copy():
    url = "https://colab.research.google.com/github/org/repo/blob/main/book/03-omwu.md"
    context = {"header_buttons": [{"label": "launch-buttons", "buttons": [{"text": "Colab", "url": url}]}]}
    sphinx_ext._point_colab_at_ipynb(None, "book/03-omwu", "page.html", context, None)
    assert context["header_buttons"][0]["buttons"][0]["url"] == (
        "https://colab.research.google.com/github/org/repo/blob/main/notebooks/03-omwu.ipynb"
    )


def test_duplicate_inline_scripts_are_dropped():
    def script(filename, **attributes):
        return SimpleNamespace(filename=filename, attributes=attributes)

    first, dup, other = script(None, body="const A = 1"), script("", body="const A = 1"), script("a.js")
    context = {"script_files": [first, dup, other]}
    sphinx_ext._drop_duplicate_scripts(None, "p", "page.html", context, None)
    assert context["script_files"] == [first, other]


def test_numbered_items_count_within_each_page_after_the_chapter_number():
    """``number_within_pages``: Sphinx's book-wide numbers become per-page ones in page order,
    prefixed with the chapter's number on chapter pages; other pages count from 1 bare."""
    from explorables.sphinx_ext import number_within_pages

    numbers = {
        "book/03-omwu": {"exercise": {"b": (7,), "a": (5,)}, "displaymath": {"e2": (12,), "e1": (11,)}},
        "book/16-muon": {"displaymath": {"first": (84,)}},
        "book/notation": {"displaymath": {"n": (90,)}},
        "book/teaching": {},
    }
    changed = number_within_pages(numbers)
    assert numbers["book/03-omwu"] == {"exercise": {"a": (3, 1), "b": (3, 2)},
                                       "displaymath": {"e1": (3, 1), "e2": (3, 2)}}  # fmt: skip
    assert numbers["book/16-muon"] == {"displaymath": {"first": (16, 1)}}
    assert numbers["book/notation"] == {"displaymath": {"n": (1,)}}
    assert sorted(changed) == ["book/03-omwu", "book/16-muon", "book/notation"]
    assert number_within_pages(numbers) == []  # already numbered: nothing changes again


PAGE = """---
jupytext:
  text_representation:
    format_name: myst
---
# A page

Prose that says SCALE = "book" inside a sentence.

```{code-cell} ipython3
:tags: [parameters]

# the scale
SCALE = "book"  # "smoke": seconds
```

```{code-cell} ipython3
config = Config.preset(SCALE)
print('SCALE = "book"')
```
"""


def test_the_smoke_scale_rewrites_the_parameters_line_only():
    smoke = sphinx_ext.set_page_scale(PAGE, "smoke")
    assert smoke == PAGE.replace('SCALE = "book"  #', 'SCALE = "smoke"  #')  # its comment kept, nothing else
    assert sphinx_ext.set_page_scale(PAGE, "book") == PAGE
    for chapter in CHAPTERS:  # every chapter: one line changes, the one in its parameters cell
        text = chapter.read_text()
        before, after = text.splitlines(), sphinx_ext.set_page_scale(text, "smoke", chapter.name).splitlines()
        changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
        assert len(changed) == 1 and changed[0][1] == changed[0][0].replace('"book"', '"smoke"', 1), chapter.name
        assert sphinx_ext.set_page_scale(text, "book", chapter.name) == text


def test_a_scale_other_than_book_or_smoke_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="EXPLORABLES_BOOK_SCALE must be one of"):
        sphinx_ext.set_page_scale(PAGE, "paper")
    monkeypatch.setenv("EXPLORABLES_BOOK_SCALE", "paper")
    with pytest.raises(ValueError, match="got 'paper'"):
        sphinx_ext.book_scale()
    monkeypatch.setenv("EXPLORABLES_BOOK_SCALE", "smoke")
    assert sphinx_ext.book_scale() == "smoke"
    monkeypatch.delenv("EXPLORABLES_BOOK_SCALE")
    assert sphinx_ext.book_scale() == "book"


@pytest.mark.parametrize(
    "page, problem",
    [
        (PAGE.replace('SCALE = "book"  #', 'SCALE = "smoke"  #'), '0 lines `SCALE = "book"`'),
        (PAGE.replace("config = ", 'SCALE = "book"\nconfig = '), '2 lines `SCALE = "book"`'),
        (PAGE.replace(":tags: [parameters]\n", ""), "not in a code cell tagged parameters"),
        (PAGE.replace("```{code-cell} ipython3\n:tags: [parameters]\n", ""), "not in a code cell tagged parameters"),
    ],
    ids=["no-line", "two-lines", "untagged-cell", "outside-any-cell"],
)
def test_a_page_without_exactly_one_tagged_scale_line_fails(page, problem):
    for scale in ("smoke", "book"):
        with pytest.raises(ValueError, match=re.escape(problem)):
            sphinx_ext.set_page_scale(page, scale, "page.md")


def test_the_source_read_handler_sets_the_scale_of_chapter_pages_only():
    app = SimpleNamespace(
        config=SimpleNamespace(explorables_book_scale="smoke"),
        env=SimpleNamespace(doc2path=lambda docname: f"{docname}.md"),
    )
    chapter, other = [PAGE], [PAGE.replace('SCALE = "book"  #', "#")]
    sphinx_ext._set_scale(app, "book/03-omwu", chapter)
    sphinx_ext._set_scale(app, "book/intro", other)
    assert 'SCALE = "smoke"' in chapter[0] and other[0] == PAGE.replace('SCALE = "book"  #', "#")
    with pytest.raises(ValueError, match=r"book/04-rashomon\.md: 0 lines"):
        sphinx_ext._set_scale(app, "book/04-rashomon", other)


def test_the_two_scales_never_share_an_execution_cache_record(tmp_path):
    """jupyter-cache keys a notebook on its code: the smoke and the book source of a chapter differ in the
    scale line, so neither build can take the other's outputs."""
    import jupytext
    from jupyter_cache import get_cache

    cache = get_cache(str(tmp_path / "cache"))
    text = CHAPTERS[0].read_text()
    keys = {
        scale: cache.create_hashed_notebook(jupytext.reads(sphinx_ext.set_page_scale(text, scale), fmt="md"))[1]
        for scale in sphinx_ext.BOOK_SCALES
    }
    assert keys["smoke"] != keys["book"]
    assert keys["book"] == cache.create_hashed_notebook(jupytext.reads(text, fmt="md"))[1]
