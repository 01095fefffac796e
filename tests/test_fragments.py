"""Entries kept between builds by their views' digests (kg.publish.fragments, decision
0062): a kept text is used only for an equal view, and a page or BibTeX file made with
kept entries is the one made without."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from kg.publish.fragments import Fragments, view_digest
from kg.publish.site import SiteBuilder, SiteSettings

TEMPLATES = Path(__file__).parent.parent / "kg" / "publish" / "templates"


@pytest.fixture(scope="module")
def site(seed_build, repo_config) -> SiteBuilder:
    resolution, mapped = seed_build
    return SiteBuilder(resolution, mapped.triples, repo_config.base_iri)


def _never() -> str:
    raise AssertionError("rendered although an equal view's text was kept")


def test_a_kept_text_is_used_only_for_an_equal_view(site):
    pub = next(iter(site.r.publications.values()))
    view = site.publication_view(pub, None, "")
    kept = Fragments({view_digest(view): "kept text"})
    assert kept.text(replace(view), _never) == "kept text"  # equal, another object
    other = replace(view, title=view.title + " ")  # one space more: another view
    assert kept.text(other, lambda: "made") == "made"
    assert kept.rendered == 1
    assert kept.made == {view_digest(view): "kept text", view_digest(other): "made"}
    assert kept.changed()
    again = Fragments(kept.made)
    again.text(other, _never)
    again.text(view, _never)
    assert not again.changed()  # the same views: nothing to write


def test_kept_entries_give_the_same_pages_and_bibtex(site):
    """Each seed profile's page and BibTeX file, and the list page, with no kept
    entries, then with the entries of that first pass: the same text, nothing
    rendered again; a changed kept text shows that the kept one is what is used."""
    for profile in site.r.dataset.profiles:
        first = Fragments()
        page = site.person_page(profile, first)
        bib = site.citations.bibtex(profile.slug, first)
        assert page == site.person_page(profile)
        assert bib == site.citations.bibtex(profile.slug)
        second = Fragments(first.made)
        assert site.person_page(profile, second) == page
        assert site.citations.bibtex(profile.slug, second) == bib
        assert second.rendered == 0 and not second.changed()
    views = {p.key: site.publication_view(p, None, "") for p in site.r.publications.values()}
    made = Fragments()
    page = site.list_page("Publications by year", views, site.by_year, site.list_entries(made))
    assert made.rendered == len(views)
    kept = Fragments({k: v.replace("<li>", "<li>KEPT", 1) for k, v in made.made.items()})
    again = site.list_page("Publications by year", views, site.by_year, site.list_entries(kept))
    assert kept.rendered == 0
    assert again.count("<li>KEPT") == len(views)
    assert again.replace("<li>KEPT", "<li>") == page


def test_entries_kept_by_their_works_digests_give_the_same_page_and_bibtex(site):
    """Decision 0078: a person page's and BibTeX file's entries kept under a digest of
    each work (`work`, here the record's) give the texts made without; a kept text is
    what is used, and a work whose digest changed is rendered again."""
    from kg.publish.fingerprint import record_digest

    digests = {k: record_digest(p) for k, p in site.r.publications.items()}

    def work(pub, changed: str = "") -> bytes:
        return bytes(16) if pub.key == changed else digests[pub.key]

    for profile in site.r.dataset.profiles:
        first = Fragments()
        page = site.person_page(profile, first, work)
        bib = site.citations.bibtex(profile.slug, first, work)
        assert page == site.person_page(profile)
        assert bib == site.citations.bibtex(profile.slug)
        assert first.made and all(len(k) == 17 for k in first.made)  # never a view's 16
        marked = {k: v.replace("title", "KEPT", 1) for k, v in first.made.items()}
        second = Fragments(marked)
        works = len(site.citations.works[profile.slug])
        assert site.citations.bibtex(profile.slug, second, work).count("KEPT") == works
        assert second.rendered == 0
        changed = partial(work, changed=site.citations.works[profile.slug][0][0].key)
        third = Fragments(marked)
        assert site.citations.bibtex(profile.slug, third, changed).count("KEPT") == works - 1
        assert third.rendered == 1  # that work's entry only


def test_a_project_person_template_that_loops_itself_gives_the_same_page(
    seed_build, repo_config, site, tmp_path
):
    """`person.html.j2` with the entry written in its loop (as before decision 0062, and
    as a project's own template may still be): the very page kg's template makes."""
    entry = (TEMPLATES / "person-entry.html.j2").read_text(encoding="utf-8")
    body = entry.split("\n", 1)[1]  # without the comment line
    text = (TEMPLATES / "person.html.j2").read_text(encoding="utf-8")
    assert text.count("{{ entry(pub) }}") == 1
    (tmp_path / "person.html.j2").write_text(
        text.replace("{{ entry(pub) }}", body), encoding="utf-8"
    )
    resolution, mapped = seed_build
    settings = SiteSettings(templates=tmp_path)
    own = SiteBuilder(resolution, mapped.triples, repo_config.base_iri, settings)
    for profile in resolution.dataset.profiles:
        assert own.person_page(profile) == site.person_page(profile)


def test_a_digest_names_every_field_and_refuses_other_values(site):
    """`Citable` inherits `PrintedDetails`' fields (whose pickling names only those):
    the digest names the inherited and the own fields; a `Markup` is not a plain
    string, so a view holding one is rendered, not kept."""
    from markupsafe import Markup

    slug = site.r.dataset.profiles[0].slug
    citable = site.citations.of(slug)[0]
    digests = {
        view_digest(citable),
        view_digest(replace(citable, title=citable.title + "!")),
        view_digest(replace(citable, pages="1--2" if citable.pages != "1--2" else "3")),
        view_digest(replace(citable, year=(citable.year or 0) + 1)),
    }
    assert len(digests) == 4 and None not in digests
    pub = next(iter(site.r.publications.values()))
    view = replace(site.publication_view(pub, None, ""), title=Markup("<b>x</b>"))
    assert view_digest(view) is None
    kept = Fragments()
    assert kept.text(view, lambda: "made") == "made" and kept.made == {}


def test_kept_partial_nodes_give_the_same_description_files(seed_build, repo_config):
    """A person's description files (every RDF format) made with the partial nodes'
    texts of an earlier pass, by their N-Triples lines: the same texts, none formatted
    again; a changed kept text shows that the kept one is what is used."""
    from rdflib import URIRef

    from kg import scheme
    from kg.publish.export import NodeBlocks, described, description_texts, person_nodes

    resolution, mapped = seed_build
    graph = mapped.triples

    def blocks() -> NodeBlocks:
        made = NodeBlocks(graph)
        made.collision_free = True  # the seeds' IRIs collide with no context prefix
        return made

    for profile in resolution.dataset.profiles[:3]:
        person = URIRef(scheme.person(repo_config.base_iri, profile.slug))
        subset = described(graph, person_nodes(graph, person, [person]))
        want = description_texts(subset, blocks())
        first = Fragments()
        assert description_texts(subset, blocks(), {}, first) == want
        assert first.rendered > 0
        second = Fragments(first.made)
        assert description_texts(subset, blocks(), {}, second) == want
        assert second.rendered == 0 and not second.changed()
        marked = {k: (t + "#", u, j) for k, (t, u, j) in first.made.items()}
        got = description_texts(subset, blocks(), {}, Fragments(marked))
        assert got["nt"] == want["nt"] and got["ttl"] != want["ttl"]
