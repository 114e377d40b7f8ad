"""The book's verdict matrix: every chapter's checks, gates and claims, read from its seed study.

Each chapter commits a seed study (:mod:`explorables.core.seed_study`, ``data/seed_studies/<slug>.json``):
its claims table rerun on base seeds 0–4, with every row's kind and verdict word per base seed. The
closing chapter of the book (``book/synthesis.md``) reads those files, not the chapters' pages, so it
shows exactly what the studies recorded:

* :func:`chapter_verdicts` counts one study's rows by kind and verdict word on one base seed, and the
  rows whose word differs between base seeds;
* :func:`verdict_matrix` does so for every chapter in the book's order (:func:`book_chapters`, from
  ``_toc.yml``), :func:`matrix_totals` adds the columns up, and :func:`totals_per_seed` shows how the
  totals move when only the base seed changes;
* :func:`part_totals` groups the claims by part of the book;
* :func:`matrix_table`, :func:`outlook_table` and :func:`matrix_figure` present them.

Nothing here decides a verdict: the words are the chapters' own (:mod:`explorables.core.verdicts`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import plotly.graph_objects as go
import yaml

from .figures import PALETTE, style
from .seed_study import ROOT, load_study
from .tables import markdown_table
from .verdicts import CLAIM_WORDS, GATE_WORDS, KINDS, WORDS

#: the book's table of contents, whose parts order the matrix
TOC = ROOT / "_toc.yml"
#: a chapter's page: ``book/NN-slug``
_CHAPTER_FILE = re.compile(r"^book/(\d\d)-(\w+)$")
#: the colour of each claim word in :func:`matrix_figure` (good to bad, then the two "could not tell")
WORD_COLOURS: dict[str, str] = {
    "yes": PALETTE["green"],
    "partly": PALETTE["light_blue"],
    "no": PALETTE["red"],
    "unclear": PALETTE["gold"],
    "untested": PALETTE["light_grey"],
}


@dataclass(frozen=True)
class BookChapter:
    """A chapter as the table of contents places it."""

    number: int
    slug: str
    part: str

    @property
    def stem(self) -> str:
        return f"{self.number:02d}-{self.slug}"


@dataclass(frozen=True)
class ChapterVerdicts:
    """One chapter's rows counted by kind and verdict word, on one base seed of its seed study.

    ``counts[kind][word]`` holds every word a row of that kind may take (zeros included);
    ``unstable[kind]`` is how many rows of that kind read different words on different base seeds.
    """

    slug: str
    seed: int
    seeds: tuple[int, ...]
    counts: dict[str, dict[str, int]]
    unstable: dict[str, int]
    number: int = 0
    part: str = ""
    failed_gates: tuple[str, ...] = field(default=())

    def rows(self, kind: str | None = None) -> int:
        """How many rows (of one kind, or of all kinds)."""
        kinds = KINDS if kind is None else (kind,)
        return sum(sum(self.counts[k].values()) for k in kinds)


def book_chapters(toc: Path = TOC) -> list[BookChapter]:
    """The numbered chapters in the order of ``_toc.yml``, each with the caption of its part."""
    data = yaml.safe_load(toc.read_text())
    found = []
    for part in data.get("parts", []):
        for entry in part.get("chapters", []):
            match = _CHAPTER_FILE.match(str(entry.get("file", "")))
            if match:
                found.append(BookChapter(int(match.group(1)), match.group(2), str(part.get("caption", ""))))
    return found


def chapter_verdicts(study: Mapping, seed: int | None = None) -> ChapterVerdicts:
    """Count a seed study's rows by kind and verdict word on base seed ``seed`` (default: the first).

    Raises ``ValueError`` for a seed the study did not run, a row of an unknown kind, a verdict word
    its kind may not take, or a row with fewer or more words than the study has seeds.
    """
    seeds = tuple(int(s) for s in study["seeds"])
    seed = seeds[0] if seed is None else int(seed)
    if seed not in seeds:
        raise ValueError(f"seed must be one of the study's base seeds {list(seeds)}, got {seed!r}")
    column = seeds.index(seed)
    counts = {kind: dict.fromkeys(WORDS[kind], 0) for kind in KINDS}
    unstable = dict.fromkeys(KINDS, 0)
    failed = []
    for row in study["rows"]:
        kind, words = row["kind"], row["verdicts"]
        if kind not in WORDS:
            raise ValueError(f"{study.get('slug')}: a row's kind must be one of {KINDS}, got {kind!r}")
        if len(words) != len(seeds):
            raise ValueError(f"{study.get('slug')}: row {row['claim']!r} has {len(words)} verdicts for "
                             f"{len(seeds)} seeds")  # fmt: skip
        bad = [w for w in words if w not in WORDS[kind]]
        if bad:
            raise ValueError(f"{study.get('slug')}: a {kind} reads one of {WORDS[kind]}, got {bad[0]!r}")
        counts[kind][words[column]] += 1
        unstable[kind] += len(set(words)) > 1
        if kind == "gate" and words[column] == "fail":
            failed.append(row.get("name") or row["claim"])
    return ChapterVerdicts(str(study.get("slug", "")), seed, seeds, counts, unstable, failed_gates=tuple(failed))


def verdict_matrix(
    chapters: Sequence[BookChapter] | None = None, seed: int | None = None, folder: Path | None = None
) -> list[ChapterVerdicts]:
    """Every chapter's :func:`chapter_verdicts`, from its committed study, in the book's order."""
    chapters = book_chapters() if chapters is None else chapters
    matrix = []
    for chapter in chapters:
        v = chapter_verdicts(load_study(chapter.slug, folder), seed)
        matrix.append(replace(v, number=chapter.number, part=chapter.part))
    return matrix


def matrix_totals(matrix: Iterable[ChapterVerdicts]) -> dict[str, dict[str, int]]:
    """The matrix's columns summed: per kind, rows per verdict word, plus ``"unstable"`` per kind."""
    totals: dict[str, dict[str, int]] = {kind: dict.fromkeys(WORDS[kind], 0) for kind in KINDS}
    totals["unstable"] = dict.fromkeys(KINDS, 0)
    for v in matrix:
        for kind in KINDS:
            for word, n in v.counts[kind].items():
                totals[kind][word] += n
            totals["unstable"][kind] += v.unstable[kind]
    return totals


def part_totals(matrix: Iterable[ChapterVerdicts]) -> dict[str, dict[str, int]]:
    """Claims per verdict word for each part of the book (in the order the parts first appear)."""
    parts: dict[str, dict[str, int]] = {}
    for v in matrix:
        counts = parts.setdefault(v.part, dict.fromkeys(CLAIM_WORDS, 0))
        for word, n in v.counts["claim"].items():
            counts[word] += n
    return parts


def totals_per_seed(
    chapters: Sequence[BookChapter] | None = None, folder: Path | None = None
) -> dict[int, dict[str, int]]:
    """The book's claim totals (rows per claim word) on each base seed that every study ran."""
    chapters = book_chapters() if chapters is None else chapters
    studies = [load_study(c.slug, folder) for c in chapters]
    common = sorted(set.intersection(*(set(int(s) for s in st["seeds"]) for st in studies))) if studies else []
    out = {}
    for seed in common:
        counter: Counter[str] = Counter()
        for study in studies:
            counter.update(chapter_verdicts(study, seed).counts["claim"])
        out[seed] = {word: counter[word] for word in CLAIM_WORDS}
    return out


def _cell(counts: Mapping[str, int], words: Sequence[str]) -> str:
    return " / ".join(str(counts[w]) for w in words)


def matrix_table(matrix: Sequence[ChapterVerdicts]) -> str:
    """Markdown: one row per chapter (a link to it), its counts, and the rows that differ between seeds."""
    header = ["chapter", "part", "checks pass / fail", "gates pass / fail",
              "claims yes / partly / no / unclear / untested", "rows that differ across seeds"]  # fmt: skip
    rows = []
    for v in matrix:
        unstable = sum(v.unstable.values())
        rows.append([f"{{ref}}`{v.number:02d} <chapter-{v.slug}>`", v.part, _cell(v.counts["check"], GATE_WORDS),
                     _cell(v.counts["gate"], GATE_WORDS), _cell(v.counts["claim"], CLAIM_WORDS),
                     f"{unstable} of {v.rows()}" if unstable else f"none of {v.rows()}"])  # fmt: skip
    totals = matrix_totals(matrix)
    n_rows = sum(v.rows() for v in matrix)
    rows.append(["**all**", "", _cell(totals["check"], GATE_WORDS), _cell(totals["gate"], GATE_WORDS),
                 _cell(totals["claim"], CLAIM_WORDS), f"{sum(totals['unstable'].values())} of {n_rows}"])  # fmt: skip
    return markdown_table(header, rows)


def outlook_table(matrix: Sequence[ChapterVerdicts], notes: Mapping[str, str]) -> str:
    """Markdown: per chapter, its failing gates, its claims that are not "yes", and what a larger run must show.

    ``notes`` maps every chapter's slug to one sentence; a chapter without a note, or a note for a
    chapter not in the matrix, is a ``ValueError`` (the page must speak for every chapter).
    """
    slugs = [v.slug for v in matrix]
    missing, extra = [s for s in slugs if s not in notes], [s for s in notes if s not in slugs]
    if missing or extra:
        raise ValueError(f"notes must cover exactly the matrix's chapters: missing {missing}, not chapters {extra}")
    header = ["chapter", "gates that fail", "claims not yes", "what a paper-scale run would have to show"]
    rows = []
    for v in matrix:
        claims = v.counts["claim"]
        not_yes = ", ".join(f"{claims[w]} {w}" for w in CLAIM_WORDS if w != "yes" and claims[w]) or "none"
        failed = ", ".join(f"`{g}`" for g in v.failed_gates) or "none"
        rows.append([f"{{ref}}`{v.number:02d} <chapter-{v.slug}>`", failed, not_yes, notes[v.slug]])
    return markdown_table(header, rows)


def matrix_figure(matrix: Sequence[ChapterVerdicts]) -> go.Figure:
    """Stacked bars: each chapter's claims by verdict word (one bar per chapter, in the book's order)."""
    labels = [f"{v.number:02d} {v.slug}" for v in matrix]
    fig = go.Figure()
    for word in CLAIM_WORDS:
        fig.add_trace(go.Bar(y=labels, x=[v.counts["claim"][word] for v in matrix], name=word, orientation="h",
                             marker_color=WORD_COLOURS[word],
                             hovertemplate=f"%{{y}}: %{{x}} {word}<extra></extra>"))  # fmt: skip
    seed = f" (base seed {matrix[0].seed})" if matrix else ""
    fig.update_layout(barmode="stack", xaxis_title=f"claims{seed}", yaxis=dict(autorange="reversed"))
    style(fig, height=60 + 24 * len(matrix), legend_below=True)
    fig.update_layout(legend_traceorder="normal")  # yes ... untested, as in the tables (stacked bars reverse it)
    return fig


def verdict_bar_svg(counts: Mapping[str, int], width: int = 240, height: int = 12) -> str:
    """An inline SVG: one bar split by claim word, each segment's width proportional to its count.

    ``counts`` maps claim words (:data:`CLAIM_WORDS`) to row counts; the segments run in the order of
    :data:`CLAIM_WORDS` in :data:`WORD_COLOURS`, and their widths add up to ``width``. A chapter
    without claims gets one empty (outlined) bar. The ``<title>`` names every count, so a screen
    reader and a hovering mouse read the same numbers as the bar shows.
    """
    unknown = sorted(set(counts) - set(CLAIM_WORDS))
    if unknown:
        raise ValueError(f"counts must map claim words {CLAIM_WORDS}, got {unknown}")
    if any(int(n) < 0 for n in counts.values()):
        raise ValueError(f"counts must be ≥ 0, got {dict(counts)}")
    if width < 1 or height < 1:
        raise ValueError(f"width and height must be ≥ 1 pixel, got {width} × {height}")
    total = sum(int(counts.get(w, 0)) for w in CLAIM_WORDS)
    label = ", ".join(f"{counts.get(w, 0)} {w}" for w in CLAIM_WORDS if counts.get(w, 0)) or "no claims"
    parts = [
        f'<svg class="verdict-bar" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg"><title>claims: {label}</title>'
    ]
    if total == 0:
        parts.append(f'<rect x="0.5" y="0.5" width="{width - 1}" height="{height - 1}" fill="none" '
                     f'stroke="{WORD_COLOURS["untested"]}"/>')  # fmt: skip
    x = 0.0
    for word in CLAIM_WORDS:
        n = int(counts.get(word, 0))
        if total and n:
            w = width * n / total
            parts.append(f'<rect data-word="{word}" x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" '
                         f'fill="{WORD_COLOURS[word]}"/>')  # fmt: skip
            x += w
    parts.append("</svg>")
    return "".join(parts)
