"""Markdown tables for results printed by notebooks (rendered by MyST on the site and by Jupyter)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table; ``|`` inside a cell is escaped so it cannot split the cell."""

    def line(cells: Sequence[object]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(r) for r in rows)])


VERDICTS: tuple[str, ...] = ("yes", "partly", "no")


@dataclass(frozen=True)
class Claim:
    """One row of a chapter's claims table: the paper's claim, our setting, our number, a verdict.

    ``verdict`` starts with "yes", "partly" or "no", then the reason; chapters compute it from the
    measured numbers with the criteria written next to each claim.
    """

    claim: str
    setting: str
    measured: str
    verdict: str

    @property
    def outcome(self) -> str:
        """The verdict's first word, lower-cased and stripped of punctuation: "yes", "partly" or "no"."""
        words = self.verdict.split()
        return words[0].strip(".,:;!*()").lower() if words else ""

    def as_row(self) -> list[str]:
        return [self.claim, self.setting, self.measured, self.verdict]


CLAIMS_HEADER = ("paper's claim", "our setting", "our measured number", "reproduced?")


def claims_table(claims: Iterable[Claim]) -> str:
    """The claims as a Markdown table (notebooks display it with ``IPython.display.Markdown``)."""
    return markdown_table(CLAIMS_HEADER, [c.as_row() for c in claims])
