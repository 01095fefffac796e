"""The addresses a reader follows from a work, in the order pages and CVs show them.

Invariant: one list of (label, address) per work, DOI and arXiv made by kg.iri's one
rule, so a paper's page, its CV entry and the graph's `schema:sameAs` name the same
addresses. A work is anything with `doi`, `arxiv`, `pdf`, `code`, `slides`, `video`
(a listing as written, or a resolved work).
"""

from __future__ import annotations

from typing import Any

from kg.iri import arxiv_address, doi_address


def work_addresses(work: Any) -> list[tuple[str, str | None]]:
    """(label, address or None) for the work's identifiers and media, in display order."""
    return [
        ("DOI", doi_address(work.doi) if work.doi else None),
        ("arXiv", arxiv_address(work.arxiv) if work.arxiv else None),
        ("PDF", work.pdf),
        ("Code", work.code),
        ("Slides", work.slides),
        ("Video", work.video),
    ]
