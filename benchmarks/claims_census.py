"""The book's claims census, read from the committed seed studies (issue 37's book-wide counts).

For every chapter it counts the rows of each kind (check, gate, claim) and, over the study's base seeds,
how the verdict words fall: gates that pass on every seed, fail on every seed or change with the seed;
claims by verdict word (counted once per row and seed) and the claims whose word is the same on every
seed. Nothing is rerun: the numbers are those of ``data/seed_studies/<slug>.json``, and a stale study
(its source hash differs from the package's) is marked.

Usage::

    python benchmarks/claims_census.py              # prints the markdown tables
    python benchmarks/claims_census.py --out benchmarks/claims_census.md
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from explorables.chapters import CHAPTERS
from explorables.core.seed_study import load_study, source_hash

CLAIM_WORDS = ("yes", "partly", "no", "unclear", "untested")
#: the words that decide a claim: a row reading ``unclear`` (or ``untested``) on every seed agrees, but says nothing
DEFINITE = ("yes", "partly", "no")


def chapter_census(slug: str) -> dict:
    """Counts for one chapter's committed study."""
    study = load_study(slug)
    rows = study["rows"]
    out: dict = {"slug": slug, "seeds": len(study["seeds"]), "fresh": study["source_hash"] == source_hash(slug)}
    kinds = collections.Counter(r["kind"] for r in rows)
    out.update(checks=kinds["check"], gates=kinds["gate"], claims=kinds["claim"])
    gates = [r for r in rows if r["kind"] == "gate"]
    out["gates_pass"] = sum(set(r["verdicts"]) == {"pass"} for r in gates)
    out["gates_fail"] = sum(set(r["verdicts"]) == {"fail"} for r in gates)
    out["gates_vary"] = len(gates) - out["gates_pass"] - out["gates_fail"]
    claims = [r for r in rows if r["kind"] == "claim"]
    words = collections.Counter(w for r in claims for w in r["verdicts"])
    out["words"] = {w: words[w] for w in CLAIM_WORDS}
    out["claims_agree"] = sum(len(set(r["verdicts"])) == 1 for r in claims)
    out["claims_agree_definite"] = sum(len(set(r["verdicts"])) == 1 and r["verdicts"][0] in DEFINITE for r in claims)
    out["claims_untested_everywhere"] = sum(set(r["verdicts"]) == {"untested"} for r in claims)
    return out


def markdown(census: list[dict]) -> str:
    head = (
        "| chapter | fresh | checks | gates pass / fail / vary | claims | claims agreeing on all seeds "
        "(of which on yes / partly / no) | " + " / ".join(CLAIM_WORDS) + " (row × seed) |"
    )
    lines = [head, "|" + "---|" * 7]
    total: collections.Counter = collections.Counter()
    for c in census:
        words = " / ".join(str(c["words"][w]) for w in CLAIM_WORDS)
        lines.append(
            f"| {c['slug']} | {'yes' if c['fresh'] else '**stale**'} | {c['checks']} | "
            f"{c['gates_pass']} / {c['gates_fail']} / {c['gates_vary']} | {c['claims']} | "
            f"{c['claims_agree']} of {c['claims']} ({c['claims_agree_definite']}) | {words} |"
        )
        for key in (
            "checks",
            "gates_pass",
            "gates_fail",
            "gates_vary",
            "claims",
            "claims_agree",
            "claims_agree_definite",
        ):
            total[key] += c[key]
        for w in CLAIM_WORDS:
            total[w] += c["words"][w]
    words = " / ".join(str(total[w]) for w in CLAIM_WORDS)
    lines.append(
        f"| **book** | | {total['checks']} | {total['gates_pass']} / {total['gates_fail']} / {total['gates_vary']} | "
        f"{total['claims']} | {total['claims_agree']} of {total['claims']} ({total['claims_agree_definite']}) | "
        f"{words} |"
    )
    chapters_agree = sum(c["claims_agree"] == c["claims"] and c["gates_vary"] == 0 for c in census)
    chapters_definite = sum(
        c["claims_agree_definite"] == c["claims"] and c["gates_vary"] == 0 and c["gates_fail"] == 0 for c in census
    )
    lines += [
        "",
        f"Chapters whose every gate and claim reads the same word on all of their study's base seeds: "
        f"{chapters_agree} of {len(census)}. Of these, every claim reading one of yes / partly / no (none unclear "
        f"or untested on every seed) and every gate passing: {chapters_definite} of {len(census)}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the tables to this markdown file")
    args = parser.parse_args()
    text = markdown([chapter_census(slug) for slug in CHAPTERS])
    if args.out:
        args.out.write_text(
            "# Claims census (`benchmarks/claims_census.py`, from the committed seed studies)\n\n" + text
        )
    print(text)


if __name__ == "__main__":
    main()
