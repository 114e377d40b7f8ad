"""Every page of the book executes at the smoke scale, each from a cold kernel (``make test``'s page check).

This is the check the website build's ``tests/test_book.py::test_chapter_executed_without_error`` makes, without the
website: ``make test`` executes each page (``tests/page_runs.py``); ``make test-site`` and CI's book step
(``EXPLORABLES_BOOK_SCALE=book pytest -m book``) build the website, executing every page there, and run the
browser tests on it.
"""

from __future__ import annotations

import pytest

from .page_runs import PAGES, executed_page, is_chapter


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_page_executes_at_the_smoke_scale_without_error(page):
    record = executed_page(page.stem)  # raises the failing cell's error (nbclient's CellExecutionError)
    assert not record["tracebacks"], f"{page.name}: a cell printed a traceback"
    if is_chapter(page.stem):
        assert record["smoke_preset"], f"{page.name}: its run is not the smoke preset at SCALE = 'smoke'"
        assert record["figures"], f"{page.name}: the page drew no figure"
