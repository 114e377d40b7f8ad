"""Each chapter's smoke run (``run(Config.preset("smoke"))``), computed once per test session.

The contract tests (tests/test_contract.py) and the chapters' own tests read the same seeded smoke run;
it is deterministic (``test_same_seed_gives_identical_summaries`` compares it with the chapter page's run), so
one run per pytest process serves them all. (``make test`` runs the contract tests in its second pytest process,
``tests/conftest.py`` SECOND_PROCESS_FILES: there they compute every chapter's run, and the chapters' own tests
in the first process compute those they read.) Each caller gets its own deep copy: a test that changes what it
got changes nothing another test reads.
"""

from __future__ import annotations

import copy
from typing import Any

from explorables.chapters import CHAPTERS

_RUNS: dict[str, Any] = {}


def smoke_run(slug: str) -> Any:
    """A copy of chapter ``slug``'s smoke run, run on the first call of the session."""
    if slug not in _RUNS:
        module = CHAPTERS[slug].module()
        _RUNS[slug] = module.run(module.Config.preset("smoke"))
    return copy.deepcopy(_RUNS[slug])
