"""The whole-list pages from rows kept by publication (kg.publish.lists, decision 0074):
the pages and the search index made from rows, kept or made, are the ones made from
every view through the templates' own loops; a row is taken only under its key."""

from __future__ import annotations

from markupsafe import Markup

from kg.publish.fingerprint import record_digest
from kg.publish.lists import ListRows, Row, pair_text
from kg.publish.site import SiteBuilder

LISTS = ("publications.html", "publications-by-venue.html", "publications-by-type.html")
SHOWN = (*LISTS, "search-index.js")


def _site(seed_build, repo_config) -> SiteBuilder:
    resolution, mapped = seed_build
    return SiteBuilder(resolution, mapped.triples, repo_config.base_iri)


def _rows(site: SiteBuilder, kept: object = None, records: dict | None = None) -> ListRows:
    found = records or {k: record_digest(p) for k, p in site.r.publications.items()}
    return ListRows(kept, "settings", found.get, site.r.persons)


def test_pages_from_rows_are_the_pages_from_views(seed_build, repo_config):
    site = _site(seed_build, repo_config)
    assert site.kg_lists
    whole = site.site_files([], keyed=False)  # every view, Jinja's loops
    first = _rows(site)
    made = site.site_files([], keyed=False, rows=first)
    assert {p: made[p] for p in SHOWN} == {p: whole[p] for p in SHOWN}
    assert first.new == len(site.r.publications) and first.changed()
    again = _rows(site, first.made)  # the next build: every row kept
    assert {p: site.site_files([], keyed=False, rows=again)[p] for p in SHOWN} == {
        p: whole[p] for p in SHOWN
    }
    assert again.new == 0 and not again.changed()
    marked = {k: r._replace(entry="KEPT:" + r.entry) for k, r in first.made.items()}
    shown = site.site_files([], keyed=False, rows=_rows(site, marked))["publications.html"]
    assert shown.count("KEPT:") == len(site.r.publications)  # the kept text is what shows


def test_a_row_is_made_again_when_its_record_or_authors_differ(seed_build, repo_config):
    site = _site(seed_build, repo_config)
    first = _rows(site)
    for pub in site.r.publications.values():
        first.row(pub, lambda: Row("k", "t", None, False, "", "", ""))
    pub = next(p for p in site.r.publications.values() if any(s.person for s in p.authors))
    records = {k: record_digest(p) for k, p in site.r.publications.items()}
    records[pub.key] = bytes(16)  # the record changed
    edited = _rows(site, first.made, records)
    assert edited.key(pub) not in first.made
    persons = dict(site.r.persons)
    del persons[next(s.person for s in pub.authors if s.person)]  # a page went
    gone = ListRows(first.made, "settings", records.get, persons)
    assert gone.key(pub) not in first.made
    foreign = _rows(site, {key: tuple(row) for key, row in first.made.items()})  # not rows
    made = foreign.row(pub, lambda: Row("made", "t", None, False, "", "", ""))
    assert made.key == "made" and foreign.new == 1
    assert ListRows(None, "other settings", records.get, site.r.persons).key(pub) != first.key(pub)


def test_the_network_pairs_in_python_are_the_templates_loop(seed_build, repo_config):
    site = _site(seed_build, repo_config)
    names = ["Ada <Lovelace>", "B & \u202eC", "Ünal"]
    pairs = [(0, 1, 1), (0, 2, 2), (1, 2, 12)]
    page = site._network_page(names, pairs, ["a.html", "b.html", "c.html"])
    named = [(names[a], names[b], n) for a, b, n in pairs]
    assert pair_text(named) in page
    jinja = site.render(
        "network.html.j2",
        "network.html",
        figure=Markup(page.split("<figure>")[1].split("<figcaption>")[0]),
        people=3,
        pairs=named,
    )
    assert page == jinja
