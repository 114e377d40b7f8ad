"""Markdown tables for results printed by notebooks (rendered by MyST on the site and by Jupyter)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from .verdicts import CLAIM_WORDS, WORDS, first_word


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table; ``|`` inside a cell is escaped so it cannot split the cell."""

    def line(cells: Sequence[object]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(r) for r in rows)])


VERDICTS: tuple[str, ...] = CLAIM_WORDS


@dataclass(frozen=True)
class Claim:
    """One row of a chapter's tables: what is claimed, our setting, our number, a verdict.

    ``kind`` (Claims kit 3, :mod:`explorables.core.verdicts`): ``"check"`` (our own verification,
    shown in "What we verified"), ``"gate"`` (a positive control: the setup can show the effect;
    ``name`` it so claims can cite it) or ``"claim"`` (the paper's). ``verdict`` starts with a word of
    its kind (pass / fail; yes / partly / no / unclear / untested), then the reason; it comes from the
    chapter's tested verdict functions. ``gates`` names the gates a claim depends on: when one fails,
    :func:`apply_gates` makes the claim ``untested``.
    """

    claim: str
    setting: str
    measured: str
    verdict: str
    kind: str = "claim"
    name: str = ""
    gates: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in WORDS:
            raise ValueError(f"kind must be one of {tuple(WORDS)}, got {self.kind!r}")
        if self.outcome not in WORDS[self.kind]:
            raise ValueError(f"a {self.kind}'s verdict must start with one of {WORDS[self.kind]}, got {self.verdict!r}")
        if self.kind == "gate" and not self.name:
            raise ValueError("a gate needs a name (claims cite it in their gates)")
        if self.gates and self.kind != "claim":
            raise ValueError(f"only a claim depends on gates, got gates on a {self.kind}")

    @property
    def outcome(self) -> str:
        """The verdict's first word: "yes", "partly", "no", "unclear", "untested", "pass" or "fail"."""
        return first_word(self.verdict)

    def as_row(self) -> list[str]:
        verdict = self.verdict
        if self.outcome in ("untested", "fail"):  # a defect of the chapter: shown as one
            verdict = f"**{self.outcome}**{verdict[len(self.outcome):]}" if verdict.lower().startswith(
                self.outcome) else verdict  # fmt: skip
        return [self.kind, self.claim, self.setting, self.measured, verdict]


def apply_gates(rows: Iterable[Claim]) -> list[Claim]:
    """The rows with every claim whose gate failed (or did not run) turned ``untested``, naming the gate."""
    rows = list(rows)
    gates = {r.name: r for r in rows if r.kind == "gate"}
    out = []
    for r in rows:
        failed = [g for g in r.gates if g not in gates or gates[g].outcome == "fail"]
        if r.kind == "claim" and failed:
            why = "; ".join(
                f"gate '{g}' failed ({gates[g].measured})" if g in gates else f"gate '{g}' did not run" for g in failed
            )
            r = replace(r, verdict=f"untested: {why}; was {r.verdict}")
        out.append(r)
    return out


CLAIMS_HEADER = ("row", "paper's claim", "our setting", "our measured number", "reproduced?")
CHECKS_HEADER = ("what we verified", "how", "our number", "holds?")


def claims_table(claims: Iterable[Claim]) -> str:
    """Gates, then the paper's claims, as a Markdown table (checks go to :func:`checks_table`)."""
    rows = apply_gates(claims)
    ordered = [r for r in rows if r.kind == "gate"] + [r for r in rows if r.kind == "claim"]
    return markdown_table(CLAIMS_HEADER, [r.as_row() for r in ordered])


def checks_table(claims: Iterable[Claim]) -> str:
    """The checks ("What we verified") as a Markdown table."""
    return markdown_table(CHECKS_HEADER, [r.as_row()[1:] for r in claims if r.kind == "check"])


def outcome_counts(claims: Iterable[Claim]) -> dict[str, dict[str, int]]:
    """Per kind, how many rows read each word (after :func:`apply_gates`)."""
    counts: dict[str, dict[str, int]] = {k: dict.fromkeys(WORDS[k], 0) for k in WORDS}
    for r in apply_gates(claims):
        counts[r.kind][r.outcome] += 1
    return counts
