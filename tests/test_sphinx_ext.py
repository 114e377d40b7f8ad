"""The book's Sphinx extension: stale-chapter fingerprints, the Colab link, duplicate scripts."""

from __future__ import annotations

from types import SimpleNamespace

from explorables import sphinx_ext


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
