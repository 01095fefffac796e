"""The pages' per-process memos (decision 0065) give the bytes a fresh render gives.

On a generated corpus where works have several profiled authors: each person's BibTeX
file, page and CV with the memos shared by every person, against the same made
without them (`bibtex_entry` for each citable; a new `SiteBuilder` per page); a memo
bounded to two entries gives the same files; a tampered memo shows in the output (the
files do come from it); a pickled site starts with empty memos.
"""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from kg.bench.synth import generate
from kg.config import SiteConfig, load_config
from kg.pipeline import build_graph
from kg.publish import citation, site
from kg.publish.citation import Citations, bibtex_entry
from kg.publish.cv.build import cv_of
from kg.publish.cv.render import environment as cv_environment
from kg.publish.cv.render import render_text
from kg.publish.entries import KG_TEMPLATES
from kg.publish.site import SiteBuilder, SiteSettings


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("memos")
    generate(root, 30, seed=5)
    config = load_config(root)
    resolution, mapped = build_graph(config, cache=False)
    return config, resolution, mapped


def _fresh_bibtex(resolution, slug: str) -> str:
    """A person's BibTeX file without the memo: each entry written again."""
    fresh = Citations(resolution)
    name = resolution.persons[slug].name if slug in resolution.persons else slug
    head = f"% Publications of {name}, exported by kg (UTF-8).\n"
    return head + "".join("\n" + bibtex_entry(c) for c in fresh.of(slug))


def test_bibtex_files_from_the_memo_are_written_afresh(corpus, monkeypatch):
    _, resolution, _ = corpus
    profiles = resolution.dataset.profiles
    shared = Citations(resolution)
    files = {p.slug: shared.bibtex(p.slug) for p in profiles}
    written = sum(len(shared.of(p.slug)) for p in profiles)
    assert len(shared.entries) < written  # works shown in several files were written once
    for p in profiles:
        assert files[p.slug] == _fresh_bibtex(resolution, p.slug)
    monkeypatch.setattr(citation, "ENTRIES_KEPT", 2)
    small = Citations(resolution)
    assert {p.slug: small.bibtex(p.slug) for p in profiles} == files
    assert len(small.entries) <= 2


def test_a_bibtex_file_takes_its_entries_from_the_memo(corpus):
    _, resolution, _ = corpus
    slug = max(resolution.dataset.profiles, key=lambda p: len(p.publications)).slug
    shared = Citations(resolution)
    first = shared.of(slug)[0]
    shared.entries[first.key] = (first, "@misc{tampered}\n")
    assert "@misc{tampered}" in shared.bibtex(slug)
    assert pickle.loads(pickle.dumps(shared)).entries == {}


def test_person_pages_with_kgs_entry_are_jinjas(corpus, tmp_path):
    """kg's entry written in Python (kg.publish.entries) gives the pages Jinja gives
    with the same template as a project's own; a project's changed entry is used."""
    config, resolution, mapped = corpus
    same, changed = tmp_path / "same", tmp_path / "changed"
    same.mkdir(), changed.mkdir()
    (same / "person-entry.html.j2").write_text((KG_TEMPLATES / "person-entry.html.j2").read_text())
    (changed / "person-entry.html.j2").write_text("<li>{{ pub.title }} (mine)</li>\n")
    ours = SiteBuilder(resolution, mapped.triples, config.base_iri)
    jinja = SiteBuilder(resolution, mapped.triples, config.base_iri, SiteSettings(templates=same))
    for profile in resolution.dataset.profiles:
        assert ours.person_page(profile) == jinja.person_page(profile)
    mine = SiteBuilder(resolution, mapped.triples, config.base_iri, SiteSettings(templates=changed))
    profile = max(resolution.dataset.profiles, key=lambda p: len(p.publications))
    assert "(mine)</li>" in mine.person_page(profile)


def test_views_from_the_memo_make_the_pages_made_afresh(corpus, monkeypatch):
    """A work's view is made once per process; every person page and publication page
    is the one a site without the memo makes (its views forgotten before each page), also with
    a memo of one view; a tampered view shows (the pages come from the memo)."""
    config, resolution, mapped = corpus
    shared = SiteBuilder(resolution, mapped.triples, config.base_iri)
    pubs = sorted(resolution.publications.values(), key=lambda p: p.key)

    def pages(site_of) -> list[str]:
        people = [site_of().person_page(p) for p in resolution.dataset.profiles]
        return people + [site_of().publication_page(pub) for pub in pubs]

    made = pages(lambda: shared)
    assert 0 < len(shared.views) < sum(len(p.publications) for p in resolution.dataset.profiles)
    fresh = SiteBuilder(resolution, mapped.triples, config.base_iri)
    assert made == pages(lambda: fresh.views.clear() or fresh)  # no view kept between pages
    monkeypatch.setattr(site, "VIEWS_KEPT", 1)
    small = SiteBuilder(resolution, mapped.triples, config.base_iri)
    assert made == pages(lambda: small)
    assert len(small.views) == 1
    pub = pubs[0]
    view = shared._common_view(pub, "../")
    shared.views[(pub.key, "../")] = replace(view, title="Tampered")
    assert "Tampered" in shared.publication_page(pub)
    assert pickle.loads(pickle.dumps(shared)).views == {}


def _jinja_copy(folder, *names: str):
    """A project's templates/ holding copies of kg's `names`: Jinja renders them."""
    folder.mkdir()
    for name in names:
        (folder / name).write_text((KG_TEMPLATES / name).read_text("utf-8"), "utf-8")
    return folder


@pytest.mark.parametrize("which", ["seeds", "corpus"])
def test_pages_in_python_are_jinjas(which, corpus, seed_build, repo_config, tmp_path):
    """kg's person and publication pages and CVs written in Python (kg.publish.personpage,
    kg.publish.pubpage, kg.publish.cv.html) are Jinja's pages from kg's templates, for
    every profile and work, with the site's settings varied (a logo, dark mode off,
    other navigation, text to escape); a project's own template is Jinja's."""
    if which == "seeds":
        (resolution, mapped), base = seed_build, repo_config.base_iri
    else:
        _, resolution, mapped = corpus
        base = corpus[0].base_iri
    names = ("person.html.j2", "publication.html.j2", "base.html.j2")
    copies = _jinja_copy(tmp_path / "t", *names)
    looks = [
        SiteSettings(),
        SiteSettings(
            title="A & B <lab> \u202eX",
            description='"quoted" & more',
            logo="static/logo.png",
            look=SiteConfig(nav=("people", "search"), accent="#123456", dark_mode="off"),
        ),
    ]
    pubs = sorted(resolution.publications.values(), key=lambda p: p.key)
    for look in looks:
        ours = SiteBuilder(resolution, mapped.triples, base, look)
        jinja = SiteBuilder(resolution, mapped.triples, base, replace(look, templates=copies))
        assert ours._kg_publication_page and not jinja._kg_publication_page
        assert ours._kg_person_page and not jinja._kg_person_page
        for profile in resolution.dataset.profiles:
            assert ours.person_page(profile) == jinja.person_page(profile)
        for pub in pubs:
            assert ours.publication_page(pub) == jinja.publication_page(pub)
        photo = replace(resolution.dataset.profiles[0], photo="https://example.org/a&b.jpg")
        assert ours.person_page(photo) == jinja.person_page(photo)
        assert 'class="photo"' in ours.person_page(photo)
    (copies / "cv").mkdir()
    (copies / "cv" / "cv.html.j2").write_text((KG_TEMPLATES / "cv/cv.html.j2").read_text())
    cv_jinja = cv_environment("html", copies).get_template("cv/cv.html.j2")
    for profile in resolution.dataset.profiles:
        cv = cv_of(resolution, profile)
        ours_cv = render_text(cv, "html", loader=ours.env.loader, back="../p&q.html")
        assert ours_cv == cv_jinja.render(cv=cv, back="../p&q.html")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "base.html.j2").write_text("mine")
    site = SiteBuilder(resolution, mapped.triples, base, SiteSettings(templates=mine))
    assert not site._kg_publication_page and not site._kg_person_page
