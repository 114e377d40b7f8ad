"""The bibliography's links: DOIs and URLs in ``book/references.bib`` (no book build).

Every identifier in the file was checked against a public record of the paper (title and
authors); these tests keep their form honest and say which kinds of entry must carry one.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

from pybtex.database import parse_string

BIB = Path(__file__).resolve().parents[1] / "book" / "references.bib"

DOI = re.compile(r"^10\.\d{4,9}/\S+$")
ARXIV_ID = re.compile(r"arXiv:(\d{4}\.\d{4,5})")

#: journals and proceedings that give their papers a DOI or a stable page (ACM, IEEE, Springer,
#: Elsevier, PMLR, JMLR, NeurIPS, OpenReview, CVF, ...), matched against ``journal``/``booktitle``
LINKABLE_VENUE = re.compile(
    r"ACM|IEEE|Neural Information Processing|Machine Learning Research|Conference on Machine Learning"
    r"|Learning Representations|Artificial Intelligence and Statistics|Computer Vision|Journal|Joint Conference on"
    r"|Theoretical Computer Science|Information Processing Letters|Information and Computation|Discrete \\& Comput"
    r"|Foundations of Computational Mathematics|Mathematical Imaging|Meccanica|SIAM|PLoS|Biometrika"
    r"|Econometrica|Proceedings of the National Academy|Neural Computation|Knowledge Discovery"
)

#: linkable venues whose DOI we could not confirm in a public record: left without rather than guessed
NOT_VERIFIED = {
    "onak2006generalization": "FOCS 2006 (IEEE): DOI not found in a record naming the paper",
    "mozes2008finding": "SODA 2008 (ACM-SIAM): no DOI found",
}


@cache
def _entries():
    return parse_string(BIB.read_text(), "bibtex").entries


def _linked(fields) -> bool:
    return any(f in fields for f in ("doi", "url", "eprint"))


def test_keys_are_unique():
    keys = re.findall(r"^@\w+\{([^,\s]+),", BIB.read_text(), flags=re.MULTILINE)
    repeated = [k for k, n in Counter(k.lower() for k in keys).items() if n > 1]
    assert not repeated, f"keys used twice: {repeated}"
    assert len(keys) == len(_entries())


def test_dois_are_bare():
    for key, entry in _entries().items():
        doi = entry.fields.get("doi")
        if doi is not None:
            assert DOI.match(doi), f"{key}: {doi!r} is not a bare DOI (10.NNNN/suffix, no https://doi.org/)"


def test_urls_are_https_and_not_doi_links():
    for key, entry in _entries().items():
        url = entry.fields.get("url")
        if url is not None:
            assert url.startswith("https://"), f"{key}: {url!r} is not https"
            assert " " not in url, f"{key}: {url!r} has a space"
            assert "doi.org/" not in url, f"{key}: a DOI belongs in the doi field, not as a URL ({url})"


def test_no_identifier_is_shared_and_one_link_per_entry():
    seen: dict[str, str] = {}
    for key, entry in _entries().items():
        fields = entry.fields
        assert not ("doi" in fields and "url" in fields), f"{key}: both a doi and a url (the doi is enough)"
        assert not ("eprint" in fields and "url" in fields), f"{key}: the eprint already links to arXiv"
        for name in ("doi", "url", "eprint"):
            if name in fields:
                value = fields[name].lower()
                assert value not in seen, f"{key} and {seen[value]} share the {name} {fields[name]}"
                seen[value] = key


def test_arxiv_numbers_in_the_text_are_links():
    """An entry that names its arXiv number (note, howpublished, journal) links to that abstract."""
    for key, entry in _entries().items():
        fields = entry.fields
        text = " ".join(fields.get(f, "") for f in ("note", "howpublished", "journal"))
        for number in ARXIV_ID.findall(text):
            assert fields.get("url") == f"https://arxiv.org/abs/{number}" or fields.get("eprint") == number, (
                f"{key} names arXiv:{number} but does not link to it"
            )


def test_papers_from_linkable_venues_have_a_link():
    entries = _entries()
    missing = []
    for key, entry in entries.items():
        venue = entry.fields.get("journal", "") + " " + entry.fields.get("booktitle", "")
        if entry.type in {"article", "inproceedings", "incollection"} and LINKABLE_VENUE.search(venue):
            if entry.fields.get("year") == "2026" and not ARXIV_ID.search(entry.fields.get("note", "")):
                continue  # a NeurIPS 2026 chapter paper without an arXiv number: no public page yet
            if key not in NOT_VERIFIED and not _linked(entry.fields):
                missing.append(key)
    linked = sum(_linked(e.fields) for e in entries.values())
    print(f"\nreferences.bib: {linked} of {len(entries)} entries link to a DOI, URL or arXiv eprint")
    assert not missing, f"entries from venues with DOIs or proceedings pages but no doi/url: {missing}"
    for key in NOT_VERIFIED:  # the list stays true: an entry that gains a link leaves it
        assert key in entries and not _linked(entries[key].fields), f"{key} is in NOT_VERIFIED but has a link"
