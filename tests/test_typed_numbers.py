"""No number measured by a page's code is typed into its prose (issue 37; CONTRIBUTING.md,
"Numbers in the prose").

Fast, no page execution: each ``book/NN-*.md`` is parsed as text. What is not prose is dropped:
the front matter, code cells and other literal blocks (math, teaching metadata, includes,
bibliography), inline math, inline code and every role (``{glue:text}`key```, ``{eq}``,
``{cite:p}``, ...), link targets, HTML comments, and the folded "How these criteria were set"
box, where the history of earlier runs belongs (with its source named). Every decimal number
left (``0.5``, ``−0.02``, ``+0.19``; dotted versions such as ``2.2.3`` and ``arXiv:`` ids are
citations, not results) must be in ``ALLOWED`` below with its reason: constants of the method
or the setup that are not results. Anything measured is glued from the executed results.

Run as a script (``python tests/test_typed_numbers.py``) it lists every hit, prose and box.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
PAGES = sorted(BOOK.glob("[0-9][0-9]-*.md"))

# Directives whose body is not prose (code, math, metadata, other files).
LITERAL = {"code-cell", "code-block", "code", "math", "teaching", "include", "literalinclude",
           "bibliography", "raw", "glue:figure", "glue:any", "glue:math", "glue"}
# The folded criteria box: an admonition titled "How these ... were set", class dropdown.
CRITERIA_TITLE = re.compile(r"^How these\b.*\bwere set\s*$")

# A decimal number: digits, a point, digits; not part of a word, a dotted version (2.2.3), an
# arXiv id or a label; an optional sign (ASCII or the typographic minus) is kept with it.
DECIMAL = re.compile(r"(?<![\w.\-/{:])[-−+]?\d+\.\d+(?![\w.]*\d)(?!\.\d)")
ARXIV = re.compile(r"arXiv:\s*\d+\.\d+(v\d+)?", re.I)

# Inline spans dropped from prose (replaced by blanks of the same length; newlines kept).
INLINE = [
    re.compile(r"<!--.*?-->", re.S),                     # HTML comments
    re.compile(r"\{[\w:-]+\}`[^`]*`"),                   # roles: {glue:text}`k:.2f`, {eq}`x`, ...
    re.compile(r"``[^`]+``|`[^`\n]*`"),                  # inline code
    re.compile(r"\$\$.*?\$\$", re.S),                    # display math inline in a paragraph
    re.compile(r"(?<![\\$])\$(?!\$)[^$]+?(?<!\\)\$", re.S),  # inline math
    re.compile(r"\]\([^)\s]*\)"),                        # link targets (the link text stays)
    re.compile(r"<https?://[^>]*>|https?://\S+"),        # bare URLs
    ARXIV,
]


@dataclass(frozen=True)
class Hit:
    page: str      # "08-stable_nde"
    line: int      # 1-based line in the file
    number: str
    text: str      # the line, stripped
    where: str     # "prose" or "criteria box"


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group())


FENCE = re.compile(r"^\s*(`{3,}|:{3,})\s*(\{([^}]+)\})?\s*(.*)$")


def scan(path: Path) -> list[Hit]:
    """Every decimal number in the page's prose and in its criteria box."""
    lines = path.read_text(encoding="utf-8").split("\n")
    start = 0
    if lines and lines[0].strip() == "---":            # front matter
        start = next(i for i in range(1, len(lines)) if lines[i].strip() == "---") + 1
    # keep[i]: None (not prose) or the region of line i ("prose" / "criteria box")
    keep: list[str | None] = [None] * len(lines)
    stack: list[tuple[str, str | None]] = []           # (fence, region of its body)
    for i in range(start, len(lines)):
        line = lines[i]
        m = FENCE.match(line)
        if m:
            fence, name, arg = m.group(1), m.group(3), m.group(4).strip()
            if stack and name is None and not arg and fence[0] == stack[-1][0][0] \
                    and len(fence) >= len(stack[-1][0]):
                stack.pop()                              # closing fence
                continue
            outer = stack[-1][1] if stack else "prose"
            if outer is None or name is None or name in LITERAL:
                region = None                            # literal block (or inside one)
            elif name == "admonition" and CRITERIA_TITLE.match(arg):
                region = "criteria box"
            else:
                region = outer
            stack.append((fence, region))
            keep[i] = None if region is None else region  # a directive's title is prose too
            if keep[i] is not None:
                lines[i] = arg
            continue
        region = stack[-1][1] if stack else "prose"
        if region is not None and re.match(r"^\s*:[\w-]+:", line) and i > 0 and \
                (FENCE.match(lines[i - 1]) or keep[i - 1] == "option"):
            keep[i] = "option"                           # a directive's options
            continue
        if region is not None and line.strip() == "+++":
            continue
        keep[i] = region
    regions = ["prose", "criteria box"]
    hits: list[Hit] = []
    for region in regions:
        text = "\n".join(lines[i] if keep[i] == region else "" for i in range(len(lines)))
        # display math as $$...$$ blocks on their own lines
        for pattern in INLINE:
            text = pattern.sub(_blank, text)
        for i, line in enumerate(text.split("\n")):
            for m in DECIMAL.finditer(line):
                hits.append(Hit(path.stem, i + 1, m.group(), lines[i].strip(), region))
    return sorted(hits, key=lambda h: (h.line, h.where))


def prose_hits(path: Path) -> list[Hit]:
    return [h for h in scan(path) if h.where == "prose"]


PENDING = "pending: edited in parallel"

# page -> [(number, a phrase of its line, reason)]; one entry allows one occurrence. Constants of
# the method or the setup only (or pages being edited by someone else: PENDING).
ALLOWED: dict[str, list[tuple[str, str, str]]] = {
    "04-rashomon": [
        ("0.4", "move $\\rho$ from 0 to 0.4", "a setting the exercise asks the reader to try in the lab"),
    ],
    "05-routing": [
        ("1.1", "paper's threshold is 1.1%", "the paper's own number (its abstract): a citation"),
        ("31.4", "its 31.4% against 94.6%", "the paper's own number (its abstract): a citation"),
        ("94.6", "its 31.4% against 94.6%", "the paper's own number (its abstract): a citation"),
    ],
    "07-dcdm": [
        ("0.999", "the usual 0.999", "the literature's clamp of the cosine schedule (Nichol and Dhariwal): a citation"),
    ],
    "11-uggrh": [
        ("0.8", "raise the missing rate to 0.8", "a lab setting the instructor's demo asks for"),
    ],
    "18-topoprune": [
        ("0.5", "at noise 0 and 0.5", "a setting the exercise asks the reader to try in the lab"),
    ],
}


def _match(hits: list[Hit], allowed: list[tuple[str, str, str]]):
    """(hits not allowed, allowlist entries that match nothing)."""
    left = list(hits)
    unused = []
    for number, phrase, reason in allowed:
        for h in left:
            if h.number == number and phrase in h.text:
                left.remove(h)
                break
        else:
            unused.append((number, phrase, reason))
    return left, unused


def test_the_scanner_finds_the_pages_and_their_criteria_boxes():
    assert len(PAGES) >= 19
    boxes = [p.stem for p in PAGES if any(h.where == "criteria box" for h in scan(p))]
    assert boxes, "no criteria box found: has its title changed (CRITERIA_TITLE)?"


def test_the_scanner_catches_a_planted_number(tmp_path):
    page = tmp_path / "99-planted.md"
    page.write_text(
        "---\njupytext:\n  format_version: 0.13\n---\n\n# 99. Planted\n\n"
        "The gap is {glue:text}`gap:.2f`, $\\alpha = 0.5$, `x = 0.25`, see [v](https://a.b/1.5).\n"
        "```{code-cell} ipython3\nx = 0.75\n```\n\n"
        "```{math}\ny = 0.125\n```\n\n"
        "```{admonition} How these criteria were set\n:class: dropdown\n"
        "Tuning seed 100 gave 0.66 (benchmarks/tune_x.py).\n```\n\n"
        "````{exercise} Try\n:label: ex\nMove $\\rho$ to 0.4.\n````\n\n"
        "Cited as arXiv:2403.15711v2; multipers 2.2.3. On seed 0 the ratio was −0.02 and 1.9×.\n",
        encoding="utf-8")
    found = scan(page)
    assert [(h.number, h.where) for h in found] == [
        ("0.66", "criteria box"), ("0.4", "prose"), ("−0.02", "prose"), ("1.9", "prose")]
    left, _ = _match(prose_hits(page), [("0.4", "Move", "a setting the reader tries")])
    assert [h.number for h in left] == ["−0.02", "1.9"]


@pytest.mark.parametrize("path", PAGES, ids=[p.stem for p in PAGES])
def test_no_typed_number_in_the_prose(path):
    allowed = ALLOWED.get(path.stem, [])
    left, unused = _match(prose_hits(path), allowed)
    assert not left, (
        f"{path.name}: numbers typed into the prose (glue them from the executed results, move the "
        "history of an earlier run into the folded criteria box with its source, or, for a "
        "constant of the setup, add it to ALLOWED in tests/test_typed_numbers.py with a reason):\n"
        + "\n".join(f"  line {h.line}: {h.number}  | {h.text[:120]}" for h in left))
    stale = [u for u in unused if u[2] != PENDING]
    assert not stale, f"{path.name}: ALLOWED entries that match nothing (remove them): {stale}"


def test_every_allowance_has_a_reason():
    for page, entries in ALLOWED.items():
        assert (BOOK / f"{page}.md").exists(), page
        for number, phrase, reason in entries:
            assert DECIMAL.fullmatch(number) and phrase and len(reason) > 10, (page, number)


if __name__ == "__main__":
    total = Counter()
    for p in PAGES:
        hits = scan(p)
        c = Counter(h.where for h in hits)
        total.update(c)
        print(f"## {p.stem}: prose {c['prose']}, criteria box {c['criteria box']}")
        for h in hits:
            print(f"   {h.where[:5]} {h.line:4d} {h.number:>8} | {h.text[:130]}")
    print("total", dict(total))
