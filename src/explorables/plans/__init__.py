"""Plans of the ``paper`` presets (``python -m explorables plan <slug>``): one module per chapter.

``explorables.plans.<slug>`` imports only its chapter's package and :mod:`explorables.core`; it lives
outside the chapter's folder so that adding it leaves the chapter's seed study fresh (the study's hash
covers ``src/explorables/<slug>/*.py`` only). Each module defines::

    parts(config, *, dry=False) -> tuple[list[Part], str, str]

the :class:`~explorables.core.plan.Part` list (one callable per training or search loop, built from
the chapter's own model and loop code at the preset's sizes), whether the preset matches the paper's
stated scale (``"yes" / "partly" / "no"``, then why) and notes. ``dry=True`` (the test suite) keeps
every tensor shape but moves steps a CPU cannot take in seconds to torch's ``meta`` device, or, for
code that torch does not run, shrinks the problem and says so in the part's note.
"""

from __future__ import annotations

import importlib

from ..core.plan import ChapterPlan, make_plan

# no __all__: nothing here is part of the checked public API (see CONTRIBUTING.md); use build_plan via the CLI


def build_plan(slug: str, scale: str = "paper", *, data_root: str = "", dry: bool = False) -> ChapterPlan:
    """Measure the plan of ``slug``'s ``scale`` preset (its parts' steps run here, on the CPU or on meta)."""
    from ..chapters import get_chapter

    chapter = get_chapter(slug)
    try:
        module = importlib.import_module(f"{__name__}.{slug}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{slug}":
            raise
        raise ValueError(f"chapter {slug!r} has no plan yet (no module explorables.plans.{slug})") from None
    overrides = {"device": "cpu"}
    if data_root:
        overrides["data_root"] = data_root
    config = chapter.module().Config.preset(scale, **overrides)
    parts, paper_scale, notes = module.parts(config, dry=dry)
    if dry:  # one step each: the suite checks that every part runs, not how long it takes
        for part in parts:
            part.repeat = 1
    return make_plan(slug, parts, paper_scale, scale=scale, notes=notes)
