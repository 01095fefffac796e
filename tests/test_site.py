"""kg site / kg embed: valid HTML, JSON-LD that is a subset of the graph, checked in Chromium."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import html5lib
import pytest
from browser import serve, visitor
from conftest import MINI, REPO, VOCAB, mini_copy, write
from rdflib import Graph, Literal, URIRef

from kg.cli import main
from kg.config import load_config
from kg.model import STATUSES_WITH_DATE, STATUSES_WITH_VENUE
from kg.pipeline import build, embed_markup
from kg.publish.citation import bibtex_file
from kg.publish.markup import escape_json_for_html
from kg.publish.site import COPY_SCRIPT

SCREENSHOTS = REPO / ".artifacts" / "screenshots"
OFFICIAL_CONTEXT = json.loads((VOCAB / "schemaorgcontext.jsonld").read_text())["@context"]
JSONLD_BLOCK = re.compile(r'<script type="application/ld\+json">\n(.*?)\n</script>', re.S)


SCHEMA_DATE = URIRef("http://schema.org/Date")
XSD_NS = "http://www.w3.org/2001/XMLSchema#"


def as_xsd_date(term):
    """A plain ISO date the official context reads as schema:Date, as the graph's XSD
    literal (gYear, gYearMonth or date by its form): the same fact (decision 0014)."""
    if not isinstance(term, Literal) or term.datatype != SCHEMA_DATE:
        return term
    kind = {4: "gYear", 7: "gYearMonth", 10: "date"}[len(str(term))]
    return Literal(str(term), datatype=URIRef(XSD_NS + kind))


def expand_offline(document: dict) -> Graph:
    """Parse page JSON-LD with the official schema.org context, never the network."""
    assert document["@context"] == "https://schema.org"
    local = {**document, "@context": OFFICIAL_CONTEXT}
    parsed = Graph().parse(data=json.dumps(local), format="json-ld")
    graph = Graph()
    for s, p, o in parsed:
        graph.add((s, p, as_xsd_date(o)))
    return graph


@pytest.fixture(scope="module", params=["seeds", "mini"])
def built(request, tmp_path_factory):
    where = tmp_path_factory.mktemp(request.param)
    root = REPO if request.param == "seeds" else mini_copy(where)
    out = where / "dist"
    result = build(load_config(root), out=out)
    return request.param, out, Graph().parse(out / "graph.nt", format="nt"), result


def pages(out: Path) -> list[Path]:
    return sorted((out / "site").rglob("*.html"))


MARKED_UP = ("person", "publication", "profile")  # pages with JSON-LD for search engines


def marked_up(out: Path) -> list[Path]:
    """The profiled people's pages (under person/ and profile/) and the publication pages
    (the other pages are simple pages without JSON-LD)."""
    profiled = {p.name for p in (out / "site" / "profile").glob("*.html")}
    return [
        p
        for p in pages(out)
        if p.parent.name == "publication"
        or (p.parent.name in ("person", "profile") and p.name in profiled)
    ]


def browser_sample(out: Path) -> list[Path]:
    """Every marked-up page, the index, and the first page of every other kind (the
    simple pages share one template)."""
    site = out / "site"
    lists = ["publications.html", "publications-by-venue.html", "network.html", "search.html"]
    sample = [site / "index.html", *(site / name for name in lists), *marked_up(out)]
    for folder in sorted(p for p in site.iterdir() if p.is_dir()):
        if folder.name not in MARKED_UP and any(folder.rglob("*.html")):
            sample.append(sorted(folder.rglob("*.html"))[0])
    return sample


def test_site_has_index_person_and_publication_pages(built):
    _, out, _, result = built
    names = {p.relative_to(out / "site").as_posix() for p in pages(out)}
    assert "index.html" in names
    for profile in result.resolution.dataset.profiles:
        assert f"person/{profile.slug}.html" in names
        assert f"profile/{profile.slug}.html" in names
        for ext in ("ttl", "jsonld", "nt"):
            assert (out / "site" / "person" / f"{profile.slug}.{ext}").is_file()
        bib = (out / "people" / f"{profile.slug}.bib").read_text(encoding="utf-8")
        assert bib == bibtex_file(result.resolution, profile.slug)
        site_bib = out / "site" / "bib" / f"{profile.slug}.bib"
        assert site_bib.read_text(encoding="utf-8") == bib
    assert len([n for n in names if n.startswith("publication/")]) == len(
        result.resolution.publications
    )
    for kind in ("org", "venue", "topic"):
        assert any(n.startswith(f"{kind}/") for n in names), kind
    assert "dataset.html" in names


def test_every_page_parses_as_html_without_errors(built):
    _, out, _, _ = built
    for page in pages(out):
        parser = html5lib.HTMLParser(strict=True)
        parser.parse(page.read_text(encoding="utf-8"))
        assert parser.errors == [], page


def test_page_jsonld_gives_only_triples_of_the_graph(built):
    _, out, graph, _ = built
    checked = 0
    for page in pages(out):
        for block in JSONLD_BLOCK.findall(page.read_text(encoding="utf-8")):
            triples = set(expand_offline(json.loads(block)))
            assert triples, page
            assert not triples - set(graph), (page, sorted(triples - set(graph))[:5])
            checked += 1
    assert checked == len(marked_up(out))


def test_person_markup_has_profile_page_person_and_ordered_authors(built):
    name, out, graph, result = built
    profile = result.resolution.dataset.profiles[0]
    text = (out / "site" / "person" / f"{profile.slug}.html").read_text(encoding="utf-8")
    document = json.loads(JSONLD_BLOCK.findall(text)[0])
    page, *articles = document["@graph"]
    assert page["@type"] == "ProfilePage" and "dateModified" in page
    assert page["mainEntity"]["@type"] == "Person"
    assert page["mainEntity"]["name"] == profile.name
    pubs = [
        p
        for p in result.resolution.publications.values()
        if any(a.person == profile.slug for a in p.authors)
    ]
    assert len(articles) == len(pubs)
    for article in articles:
        pub = next(p for p in pubs if p.title == article["name"])
        names = [a["name"] for a in article["author"]]
        expected = [
            graph.value(
                URIRef(
                    load_config(REPO if name == "seeds" else MINI).base_iri + f"person/{a.person}"
                ),
                URIRef("http://schema.org/name"),
            )
            for a in pub.authors
            if a.person
        ]
        assert [n for n in names if n in {str(e) for e in expected}] == [str(e) for e in expected]


def test_publication_pages_have_highwire_tags_in_order(built):
    _, out, _, result = built
    for pub in result.resolution.publications.values():
        text = (out / "site" / "publication" / f"{pub.key}.html").read_text(encoding="utf-8")
        authors = re.findall(r'<meta name="citation_author" content="([^"]*)">', text)
        assert authors == [html_escape(a.printed[0]) for a in pub.authors]
        assert f'<meta name="citation_title" content="{html_escape(pub.title)}">' in text
        if pub.year and pub.status in STATUSES_WITH_DATE:  # not the year of a submission
            assert f'<meta name="citation_publication_date" content="{pub.year}">' in text
        else:
            assert "citation_publication_date" not in text
        if pub.status not in STATUSES_WITH_VENUE:  # no venue claimed before publication
            assert "citation_conference_title" not in text
            assert "citation_journal_title" not in text


def html_escape(text: str) -> str:
    from markupsafe import escape

    return str(escape(text))


def test_embed_round_trips_to_the_person_graph(capsys):
    config = load_config(REPO)
    slug = sorted(p.stem for p in (REPO / "data" / "profiles").glob("*.yaml"))[0]
    assert main(["--project", str(REPO), "embed", slug]) == 0
    printed = capsys.readouterr().out
    block = JSONLD_BLOCK.findall(printed)[0]
    triples = set(expand_offline(json.loads(block)))
    person = expand_offline(embed_markup(config, slug))
    assert triples == set(person)
    assert main(["--project", str(REPO), "embed", slug, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["@graph"][0]["@type"] == "ProfilePage"


def test_json_in_script_is_escaped():
    text = escape_json_for_html(
        json.dumps({"x": "</script><!-- & \u2028\u2029"}, ensure_ascii=False)
    )
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text)["x"] == "</script><!-- & \u2028\u2029"


# ------------------------------------------------------------------ hostile data

HOSTILE = "</script><script>window.__pwned=1</script><!-- \"quotes' <b>bold</b> \u202eevil\u200b"


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile") / "project"
    shutil.copytree(MINI, root)
    path = root / "data" / "profiles" / "a-b.yaml"
    text = path.read_text(encoding="utf-8")
    img = '<img src=x onerror="window.__pwned=2">'
    text = text.replace(
        "name: Ann Bee\n",
        f"name: Ann Bee\nbio: {json.dumps(HOSTILE)}\nheadline: {json.dumps(img)}\n",
        1,
    )
    text = text.replace('title: "Paper: One"', f"title: {json.dumps('Paper ' + HOSTILE)}")
    text = text.replace("interests: [Distributed systems]", f"interests: [{json.dumps(img)}]")
    write(path, text)
    c_d = root / "data" / "profiles" / "c-d.yaml"
    c_d.write_text(
        c_d.read_text().replace('title: "paper one"', f"title: {json.dumps('Paper ' + HOSTILE)}")
    )
    out = root / "dist"
    build(load_config(root), out=out)
    return out


def test_hostile_profile_renders_harmlessly_with_valid_jsonld(hostile_site):
    page = (hostile_site / "site" / "person" / "a-b.html").read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in page
    assert "<img src=x onerror" not in page
    blocks = JSONLD_BLOCK.findall(page)
    assert len(blocks) == 1
    document = json.loads(blocks[0])
    assert document["@graph"][0]["mainEntity"]["description"] == HOSTILE
    parser = html5lib.HTMLParser(strict=True)
    parser.parse(page)
    assert parser.errors == []


# ------------------------------------------------------------------ in a real browser


OWN_SCRIPTS = (
    COPY_SCRIPT,
    '<script src="search-index.js"></script>',
    '<script src="search.js"></script>',
)


def test_hostile_titles_stay_text_in_search(chromium, hostile_site):
    with serve(hostile_site / "site") as origin:
        context = chromium.new_context()
        page = context.new_page()
        page.goto(origin + "search.html?q=paper", wait_until="load")
        page.wait_for_function("() => document.querySelectorAll('#results li').length > 0")
        titles = page.evaluate(
            "() => Array.from(document.querySelectorAll('#results bdi')).map(b => b.textContent)"
        )
        pwned = page.evaluate("() => window.__pwned === undefined ? null : window.__pwned")
        context.close()
    assert "Paper " + HOSTILE in titles and pwned is None


def _check_site_in_browser(instance, out: Path, tag: str) -> list[dict]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    reports = []
    shot_folders: set[str] = set()  # one screenshot per kind of page: they cost most
    with serve(out / "site") as origin, visitor(instance, origin) as visit:
        for page in browser_sample(out):
            rel = page.relative_to(out / "site").as_posix()
            folder = rel.rsplit("/", 1)[0] if "/" in rel else rel
            shot = None
            if folder not in shot_folders:
                shot_folders.add(folder)
                shot = SCREENSHOTS / f"{tag}-{rel.replace('/', '-')}.png"
            report = visit(origin + rel, shot)
            assert report["errors"] == [], (rel, report["errors"])
            assert report["outside"] == [], (rel, report["outside"])
            assert report["pwned"] is None, rel
            # the only scripts allowed are kg's own: the copy button on publication
            # pages, and the search page's index and script (files of the site)
            assert all(s in OWN_SCRIPTS for s in report["plain_scripts"]), rel
            assert shot is None or shot.stat().st_size > 1000
            reports.append({"page": rel, **report})
    return reports


def test_every_page_in_chromium(chromium, built):
    name, out, _, _ = built
    reports = _check_site_in_browser(chromium, out, name)
    assert {out / "site" / r["page"] for r in reports} >= set(marked_up(out))
    for report in reports:
        if out / "site" / report["page"] in marked_up(out):
            assert len(report["jsonld"]) == 1
            assert report["jsonld"][0]["@context"] == "https://schema.org"


def test_hostile_profile_cannot_run_script_in_chromium(chromium, hostile_site):
    reports = _check_site_in_browser(chromium, hostile_site, "hostile")
    person = next(r for r in reports if r["page"] == "person/a-b.html")
    assert person["jsonld"][0]["@graph"][0]["mainEntity"]["description"] == HOSTILE


def test_embed_snippet_is_in_the_graph_and_its_works_are_linked_from_the_download(built):
    """The snippet says nothing the published graph lacks; the person's own download
    links every work the snippet lists (by IRI: decision 0027's lean person files)."""
    name, out, _, result = built
    whole = set(Graph().parse(out / "graph.nt", format="nt"))
    config = load_config(REPO if name == "seeds" else out.parent / "mini")
    for profile in result.resolution.dataset.profiles:
        # the snippet's ProfilePage is the person's homepage (where it is pasted), which
        # stands for kg's profile page of the person
        page = URIRef(f"{config.base_iri}profile/{profile.slug}")
        home = URIRef(profile.homepage) if profile.homepage else page
        snippet = {
            (page if s == home else s, p, o)
            for s, p, o in expand_offline(embed_markup(config, profile.slug))
            if not (s == home and p == URIRef("http://schema.org/url"))
        }
        person = Graph().parse(out / "people" / f"{profile.slug}.ttl", format="turtle")
        assert snippet, profile.slug
        assert not snippet - whole, sorted(snippet - whole)[:5]
        works = {o for s, p, o in snippet if p == URIRef("http://xmlns.com/foaf/0.1/made")}
        assert works <= set(person.objects()), sorted(works - set(person.objects()))[:5]


def test_cite_block_copy_button_puts_the_bibtex_on_the_clipboard(chromium, built):
    _, out, _, result = built
    key = sorted(result.resolution.publications)[0]
    path = next(p for p in pages(out) if p.name == f"{key}.html" and "people" not in p.parts)
    html = path.read_text(encoding="utf-8")
    assert '<h2 id="cite-title">Cite</h2>' in html and 'id="cite-text"' in html
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(origin):
            return r.continue_()
        outside.append(r.request.url)
        return r.abort()

    with serve(out / "site") as origin:
        context = chromium.new_context(permissions=["clipboard-read", "clipboard-write"])
        page = context.new_page()
        page.route("**/*", route)
        page.goto(origin + path.relative_to(out / "site").as_posix())
        expected = page.text_content("#cite-bibtex")
        page.click("button[data-copy=cite-bibtex]")
        page.wait_for_function(
            "() => document.querySelector('button[data-copy=cite-bibtex]').textContent === 'Copied'"
        )
        copied = page.evaluate("() => navigator.clipboard.readText()")
        context.close()
    assert outside == []
    assert copied == expected and copied.startswith("@") and "author = {" in copied


def test_the_search_index_json_is_json_dumps_with_indent_0():
    """`indented_json` (decision 0059) gives json.dumps(..., indent=0)'s very text for
    lists of flat string objects: quotes, backslashes, controls, non-ASCII, bidi
    controls, line separators, empty objects and lists."""
    from kg.publish.site import indented_json

    texts = ['a "quoted" \\ path', "tab\tnew\nline\x00\x1f\x7f", "Zoë 張 \u202e\u2028\u2029", ""]
    cases = [
        [],
        [{}],
        [{"title": t, "href": f"p/{i}.html", "kind": "paper"} for i, t in enumerate(texts)],
        [{"z": "1", "a": "2"}, {}, {"m": texts[2]}],
    ]
    for items in cases:
        assert indented_json(items) == json.dumps(
            items, ensure_ascii=False, sort_keys=True, indent=0
        )
