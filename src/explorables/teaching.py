"""The teacher's kit: each chapter's teaching header, the course map, and the two editions.

A chapter states, right under its title, what a course page needs to list it::

    ```{teaching}
    topic: Games and optimisation
    difficulty: intermediate
    reading_minutes: 35
    exercise_minutes: 45
    goals:
      - state the energy that OMWU dissipates ...
    prerequisites:
      - "{doc}`03-omwu` (the energy view)"
      - "softmax and KL divergence"
    after: [03-omwu]
    ```

``goals`` and ``prerequisites`` are MyST (roles, links, math); ``after`` names the chapters
(file stems) this one builds on, and feeds the dependency column of the course map.
:func:`parse_card` validates a header (a clear ``ValueError`` naming the field), the Sphinx
directive renders it as a box, and ``{course-map}`` lists every chapter's header by topic.

Editions: the website is the *instructor edition* (solutions folded, ``{instructor-notes}`` boxes
shown). ``EXPLORABLES_EDITION=student`` (``make student``) builds the *student edition*: every
solution and every instructor note is removed from the pages.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml
from docutils import nodes

TOPICS = (
    "Games and optimisation",
    "Learning theory and interpretability",
    "Generative models",
    "Representation learning",
    "Causality",
    "Topology and geometry",
    "Language models and transformers",
    "Dynamics and continual learning",
    "Algorithms with predictions",
    "Perception: audio and vision",
)
DIFFICULTIES = ("introductory", "intermediate", "advanced")
EDITIONS = ("instructor", "student")
FIELDS = ("topic", "difficulty", "reading_minutes", "exercise_minutes", "goals", "prerequisites", "after")


@dataclass(frozen=True)
class TeachingCard:
    """One chapter's teaching header (see the module docstring)."""

    topic: str
    difficulty: str
    reading_minutes: int
    exercise_minutes: int
    goals: tuple[str, ...]
    prerequisites: tuple[str, ...] = ()
    after: tuple[str, ...] = field(default_factory=tuple)

    @property
    def total_minutes(self) -> int:
        return self.reading_minutes + self.exercise_minutes


def _strings(value: Any, name: str, *, allow_empty: bool) -> tuple[str, ...]:
    if value is None:
        value = []
    if isinstance(value, str) or not isinstance(value, list):
        raise ValueError(f"teaching header: {name} must be a list of strings, got {value!r}")
    if not allow_empty and not value:
        raise ValueError(f"teaching header: {name} must list at least one item")
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"teaching header: every item of {name} must be a non-empty string, got {value!r}")
    return tuple(v.strip() for v in value)


def _minutes(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 5 <= value <= 600:
        raise ValueError(f"teaching header: {name} must be a whole number of minutes in [5, 600], got {value!r}")
    return value


def parse_card(text: str) -> TeachingCard:
    """The :class:`TeachingCard` written as YAML in a ``{teaching}`` block; ``ValueError`` names
    the field that is missing, unknown or out of range."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"teaching header: not valid YAML ({error})") from None
    if not isinstance(data, dict):
        raise ValueError("teaching header: expected 'field: value' lines")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise ValueError(f"teaching header: unknown field(s) {unknown}; allowed: {', '.join(FIELDS)}")
    missing = [f for f in ("topic", "difficulty", "reading_minutes", "exercise_minutes", "goals") if f not in data]
    if missing:
        raise ValueError(f"teaching header: missing field(s) {missing}")
    if data["topic"] not in TOPICS:
        raise ValueError(f"teaching header: topic must be one of {TOPICS}, got {data['topic']!r}")
    if data["difficulty"] not in DIFFICULTIES:
        raise ValueError(f"teaching header: difficulty must be one of {DIFFICULTIES}, got {data['difficulty']!r}")
    return TeachingCard(
        topic=data["topic"],
        difficulty=data["difficulty"],
        reading_minutes=_minutes(data["reading_minutes"], "reading_minutes"),
        exercise_minutes=_minutes(data["exercise_minutes"], "exercise_minutes"),
        goals=_strings(data["goals"], "goals", allow_empty=False),
        prerequisites=_strings(data.get("prerequisites"), "prerequisites", allow_empty=True),
        after=_strings(data.get("after"), "after", allow_empty=True),
    )


def card_markdown(card: TeachingCard) -> str:
    """The header as plain MyST (the directive parses it; the notebook copies convert it further)."""
    lines = ["**You will learn to**", ""]
    lines += [f"- {goal}" for goal in card.goals]
    lines += [""]
    if card.prerequisites:
        lines += ["**Before you start:** " + "; ".join(card.prerequisites) + ".", ""]
    lines += [
        f"**Level:** {card.difficulty} · **Time:** about {card.reading_minutes} min to read and run, "
        f"{card.exercise_minutes} min for the exercises · **Topic:** {card.topic}"
    ]
    return "\n".join(lines)


def edition() -> str:
    """The edition being built: ``EXPLORABLES_EDITION`` (default ``instructor``)."""
    value = os.environ.get("EXPLORABLES_EDITION", "instructor").strip() or "instructor"
    if value not in EDITIONS:
        raise ValueError(f"EXPLORABLES_EDITION must be one of {EDITIONS}, got {value!r}")
    return value


# --- Sphinx ---------------------------------------------------------------------------------------


class course_map(nodes.General, nodes.Element):
    """Placeholder for the ``{course-map}`` table, filled once every chapter has been read."""


class chapter_cards(nodes.General, nodes.Element):
    """Placeholder for the ``{chapter-cards}`` grid (the front page), filled once every chapter has been read."""


def chapter_card_html(title: str, href: str, counts: dict[str, dict[str, int]], card: TeachingCard | None,
                      seed: int) -> str:  # fmt: skip
    """One front-page card: the chapter's title (a link), its claims as a verdict bar, its
    gates and claims counted on base seed ``seed`` of its seed study, and its level and time.

    ``counts`` is :attr:`explorables.core.synthesis.ChapterVerdicts.counts`; every text is escaped.
    """
    from html import escape

    from .core.synthesis import verdict_bar_svg
    from .core.verdicts import CLAIM_WORDS

    gates, claims = counts["gate"], counts["claim"]
    n_gates = sum(gates.values())
    gate_text = f"gates {gates['pass']} of {n_gates} pass" if n_gates else "no gates"
    claim_text = ", ".join(f"{claims[w]} {w}" for w in CLAIM_WORDS if claims[w]) or "no claims"
    meta = (f"{card.difficulty} · about {card.reading_minutes} + {card.exercise_minutes} min"
            if card is not None else "")  # fmt: skip
    return (f'<a class="chapter-card" href="{escape(href, quote=True)}">'
            f'<span class="chapter-card-title">{escape(title)}</span>'
            f"{verdict_bar_svg(claims)}"
            f'<span class="chapter-card-verdicts">{escape(gate_text)} · claims: {escape(claim_text)} '
            f"(base seed {seed})</span>"
            f'<span class="chapter-card-meta">{escape(meta)}</span></a>')  # fmt: skip


def setup(app: Any) -> dict[str, Any]:
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective

    class TeachingDirective(SphinxDirective):
        has_content = True

        def run(self) -> list[Any]:
            try:
                card = parse_card("\n".join(self.content))
            except ValueError as error:
                raise self.error(str(error)) from None
            known = {name.removeprefix("book/") for name in self.env.found_docs}
            for stem in card.after:
                if stem not in known:
                    raise self.error(f"teaching header: after names {stem!r}, which is not a page of the book")
            store = self.env.__dict__.setdefault("explorables_teaching", {})
            store[self.env.docname] = card
            box = nodes.admonition(classes=["teaching", "tip"])
            box += nodes.title(text="Learning goals and prerequisites")
            self.state.nested_parse(StringList(card_markdown(card).split("\n")), self.content_offset, box)
            return [box]

    class InstructorNotesDirective(SphinxDirective):
        has_content = True

        def run(self) -> list[Any]:
            if self.env.app.config.explorables_edition == "student":
                return []
            box = nodes.admonition(classes=["instructor-notes", "note", "dropdown"])
            box += nodes.title(text="For instructors")
            self.state.nested_parse(self.content, self.content_offset, box)
            return [box]

    class CourseMapDirective(SphinxDirective):
        def run(self) -> list[Any]:
            return [course_map()]

    class ChapterCardsDirective(SphinxDirective):
        """The front page's chapter cards, grouped by the parts of ``_toc.yml``; the page is read again
        when the table of contents or any chapter's seed study changes."""

        def run(self) -> list[Any]:
            from .core.seed_study import study_path
            from .core.synthesis import TOC, book_chapters

            self.env.note_dependency(str(TOC))
            for chapter in book_chapters():
                self.env.note_dependency(str(study_path(chapter.slug)))
            return [chapter_cards()]

    def purge(app: Any, env: Any, docname: str) -> None:
        env.__dict__.setdefault("explorables_teaching", {}).pop(docname, None)

    def merge(app: Any, env: Any, docnames: Any, other: Any) -> None:
        env.__dict__.setdefault("explorables_teaching", {}).update(getattr(other, "explorables_teaching", {}))

    def resolve(app: Any, doctree: Any, fromdocname: str) -> None:
        if app.config.explorables_edition == "student":
            _drop_solutions(doctree)
        store: dict[str, TeachingCard] = getattr(app.env, "explorables_teaching", {})
        for placeholder in list(doctree.findall(course_map)):
            placeholder.replace_self(_course_map_nodes(app, store, fromdocname))
        for placeholder in list(doctree.findall(chapter_cards)):
            placeholder.replace_self(_chapter_cards_nodes(app, store, fromdocname))

    def _link(app: Any, fromdocname: str, docname: str) -> Any:
        title = app.env.titles[docname].astext() if docname in app.env.titles else docname
        uri = app.builder.get_relative_uri(fromdocname, docname)
        paragraph = nodes.paragraph()
        paragraph += nodes.reference("", title, refuri=uri, internal=True)
        return paragraph

    def _course_map_nodes(app: Any, store: dict[str, TeachingCard], fromdocname: str) -> list[Any]:
        """One table, chapters grouped by topic (in :data:`TOPICS` order), the topic named once."""
        by_stem = {name.removeprefix("book/"): name for name in store}
        table = nodes.table(classes=["course-map"])
        group = nodes.tgroup(cols=5)
        table += group
        for width in (20, 40, 14, 10, 16):
            group += nodes.colspec(colwidth=width)
        head, row = nodes.thead(), nodes.row()
        for label in ("Topic", "Chapter", "Level", "Time (min)", "Builds on"):
            row += nodes.entry("", nodes.paragraph(text=label))
        head += row
        group += head
        body = nodes.tbody()
        for topic in TOPICS:
            chapters = sorted(name for name, card in store.items() if card.topic == topic)
            for k, name in enumerate(chapters):
                card = store[name]
                row = nodes.row()
                row += nodes.entry("", nodes.paragraph(text=topic if k == 0 else ""))
                row += nodes.entry("", _link(app, fromdocname, name))
                row += nodes.entry("", nodes.paragraph(text=card.difficulty))
                row += nodes.entry("", nodes.paragraph(text=f"{card.reading_minutes} + {card.exercise_minutes}"))
                after = nodes.entry()
                for stem in card.after:
                    after += _link(app, fromdocname, by_stem[stem]) if stem in by_stem else nodes.paragraph(text=stem)
                if not card.after:
                    after += nodes.paragraph(text="-")
                row += after
                body += row
        group += body
        return [table]

    def _chapter_cards_nodes(app: Any, store: dict[str, TeachingCard], fromdocname: str) -> list[Any]:
        """Per part of the book, its caption and a grid of :func:`chapter_card_html` cards (HTML
        builders); other builders get a plain list of links."""
        from html import escape

        from .core.synthesis import verdict_matrix

        matrix = verdict_matrix()
        if app.builder.format != "html":
            return [_link(app, fromdocname, f"book/{v.number:02d}-{v.slug}") for v in matrix]
        html, part = ['<div class="chapter-cards">'], None
        for v in matrix:
            docname = f"book/{v.number:02d}-{v.slug}"
            if v.part != part:
                if part is not None:
                    html.append("</div>")
                html.append(f'<p class="chapter-cards-part">{escape(v.part)}</p><div class="chapter-cards-grid">')
                part = v.part
            title = app.env.titles[docname].astext() if docname in app.env.titles else docname
            html.append(chapter_card_html(title, app.builder.get_relative_uri(fromdocname, docname),
                                          v.counts, store.get(docname), v.seed))  # fmt: skip
        html.append("</div>" if part is not None else "")
        html.append("</div>")
        return [nodes.raw("", "".join(html), format="html")]

    def _drop_solutions(doctree: Any) -> None:
        from sphinx_exercise import nodes as exercise_nodes

        kinds = tuple(
            getattr(exercise_nodes, name)
            for name in ("solution_node", "solution_start_node", "solution_end_node")
            if hasattr(exercise_nodes, name)
        )
        for node in list(doctree.findall(lambda n: isinstance(n, kinds))):
            node.parent.remove(node)

    def config_inited(app: Any, config: Any) -> None:
        config.explorables_edition = edition()
        if config.explorables_edition == "student" and not config.nb_execution_cache_path:
            # the student edition is written elsewhere (make student) but shows the same executed
            # chapters: reuse the website's execution cache instead of running every chapter again
            config.nb_execution_cache_path = os.path.join(app.srcdir, "_build", ".jupyter_cache")

    app.add_config_value("explorables_edition", "instructor", "env")
    app.add_node(course_map)
    app.add_node(chapter_cards)
    app.add_directive("teaching", TeachingDirective)
    app.add_directive("instructor-notes", InstructorNotesDirective)
    app.add_directive("course-map", CourseMapDirective)
    app.add_directive("chapter-cards", ChapterCardsDirective)
    app.connect("config-inited", config_inited, priority=100)  # before myst-nb reads its config
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("doctree-resolved", resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
