"""kg.publish.links: pages and CVs link a work's DOI and arXiv id exactly as the graph's
`schema:sameAs` names them (one rule, kg.iri)."""

from __future__ import annotations

from types import SimpleNamespace

from kg.graph.namespaces import SCHEMA
from kg.publish.links import work_addresses


def _work(**given: str | None) -> SimpleNamespace:
    fields = dict.fromkeys(("doi", "arxiv", "pdf", "code", "slides", "video"))
    return SimpleNamespace(**{**fields, **given})


def test_a_doi_with_a_hash_stays_one_doi_in_the_link():
    # "#" would start a fragment: doi.org would receive "10.1000/x" only
    (label, address), *_ = work_addresses(_work(doi="10.1000/x#1"))
    assert (label, address) == ("DOI", "https://doi.org/10.1000/x%231")


def test_every_seed_page_link_is_the_graphs_same_as(seed_build):
    resolution, mapped = seed_build
    same = {str(o) for o in mapped.graph.objects(None, SCHEMA.sameAs)}
    linked = [
        address
        for pub in resolution.publications.values()
        for label, address in work_addresses(pub)
        if label in ("DOI", "arXiv") and address
    ]
    assert linked  # the seeds print one arXiv id (Hanyu Zhao: "arXiv preprint (2408.08586)")
    assert not [a for a in linked if a not in same]
