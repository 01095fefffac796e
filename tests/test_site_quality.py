"""The site as visitors and search engines see it (issue 20): visible links, Google
Scholar tags, ProfilePage fields (read with extruct), site-wide files, and in Chromium:
nothing overflows at 375 and 1280 px, figures keep their labels inside and apart, axe-core
finds no serious violation, search works from file:// without requests."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import extruct
import html5lib
import pytest
from browser import MEASURE, serve
from conftest import MINI, REPO, write

from kg.config import load_config
from kg.pipeline import build, embed_markup

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
SCREENSHOTS = REPO / ".artifacts" / "screenshots"
WIDTHS = (375, 1280)
BASE = "https://lab.example.org/"
PAPER = "publication/paper-one"
PHOTO = "https://lab.example.org/img/ann.jpg"

RICH_PAPER = """  - title: "Paper: One"
    authors:
      [{name: Ann Bee, equal_contribution: true}, Xin Jin, {name: ROLL Team, group: true}, Cee Dee]
    venue: "OSDI '24"
    doi: 10.1145/1234567.7654321
    arxiv: "2408.08586"
    pdf: https://lab.example.org/papers/one.pdf
    code: https://github.com/annb/one
    slides: https://lab.example.org/slides/one.pdf
    video: https://www.youtube.com/watch?v=abc
    abstract: |-
      We show that one paper is enough.

      A second paragraph.
"""


def rich_project(root: Path) -> Path:
    """The mini project with everything a page can show: links, photo, accounts,
    a right-to-left native name, kg.toml settings and a template override."""
    shutil.copytree(MINI, root)
    write(
        root / "kg.toml",
        f'[kg]\nbase_iri = "{BASE}"\ntitle = "Bee Lab"\n'
        'description = "People and papers of the Bee Lab."\n'
        'sparql_endpoint = "https://lab.example.org/sparql"\n',
    )
    ab = root / "data/profiles/a-b.yaml"
    text = ab.read_text(encoding="utf-8")
    start = text.index('  - title: "Paper: One"')
    end = text.index("awards:")
    text = text[:start] + RICH_PAPER + text[end:]
    text = text.replace(
        "accounts: [{service: github, username: annb}]",
        "photo: https://lab.example.org/img/ann.jpg\n"
        "homepage: https://ann.example.org/\n"
        "accounts:\n  - {service: github, username: annb}\n"
        "  - {service: google-scholar, username: AbCdEfGAAAAJ}\n"
        "  - {service: dblp, username: 123/4567}\n"
        "  - {service: linkedin, username: annbee}\n"
        "links:\n  - {label: Old homepage}\n"
        "  - {label: Semantic Scholar, url: 'https://www.semanticscholar.org/author/1'}",
    )
    ab.write_text(text, encoding="utf-8")
    cd = root / "data/profiles/c-d.yaml"
    cd.write_text(
        cd.read_text(encoding="utf-8").replace(
            "name: Cee Dee\n", "name: Cee Dee\nnative_names: [{name: سي دي, lang: ar}]\n"
        ),
        encoding="utf-8",
    )
    write(
        root / "templates/network.html.j2",
        '{% extends "base.html.j2" %}{% block title %}Network{% endblock %}'
        "{% block main %}<h1>Our own network page</h1>{{ figure }}{% endblock %}\n",
    )
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, Path]:
    root = rich_project(tmp_path_factory.mktemp("rich") / "project")
    out = root / "dist"
    assert build(load_config(root), out=out).out_dir == out
    return root, out / "site"


def read(site_dir: Path, path: str) -> str:
    return (site_dir / path).read_text(encoding="utf-8")


def metadata(site_dir: Path, path: str) -> dict:
    return extruct.extract(
        read(site_dir, path),
        base_url=BASE + path,
        syntaxes=["json-ld", "opengraph"],
        uniform=True,
    )


def meta_tags(html: str) -> dict[str, list[str]]:
    document = html5lib.parse(html, namespaceHTMLElements=False)
    tags: dict[str, list[str]] = {}
    for meta in document.iter("meta"):
        if meta.get("name"):
            tags.setdefault(meta.get("name"), []).append(meta.get("content"))
    return tags


# ------------------------------------------------------------------ links and citing


def test_publication_page_shows_every_link_and_the_abstract(site):
    _, site_dir = site
    html = read(site_dir, f"{PAPER}.html")
    for label, href in (
        ("DOI", "https://doi.org/10.1145/1234567.7654321"),
        ("arXiv", "https://arxiv.org/abs/2408.08586"),
        ("PDF", "https://lab.example.org/papers/one.pdf"),
        ("Code", "https://github.com/annb/one"),
        ("Slides", "https://lab.example.org/slides/one.pdf"),
        ("Video", "https://www.youtube.com/watch?v=abc"),
    ):
        assert f'<a href="{href}">{label}</a>' in html, label
    assert '<h2 id="abstract-title">Abstract</h2>' in html
    assert '<p dir="auto">A second paragraph.</p>' in html
    person = read(site_dir, "person/a-b.html")
    assert '<a href="https://doi.org/10.1145/1234567.7654321">DOI</a>' in person
    # a link without an address is text, not a link that goes nowhere
    assert '<span class="nolink">Old homepage (no address given)</span>' in person
    assert ">Old homepage</a>" not in person


def test_scholar_tags_follow_the_inclusion_guidelines(site):
    _, site_dir = site
    tags = meta_tags(read(site_dir, f"{PAPER}.html"))
    assert tags["citation_title"] == ["Paper: One"]
    assert tags["citation_author"][:2] == ["Ann Bee", "Xin Jin"]
    assert tags["citation_pdf_url"] == ["https://lab.example.org/papers/one.pdf"]
    assert tags["citation_doi"] == ["10.1145/1234567.7654321"]
    assert tags["citation_arxiv_id"] == ["2408.08586"]
    assert tags["citation_publication_date"] == ["2024"]
    assert tags["citation_conference_title"]
    assert tags["citation_abstract_html_url"] == [BASE + PAPER]


def test_seed_paper_pages_date_every_dated_paper_and_never_invent_a_pdf(seed_site):
    dated = undated = 0
    for page in sorted((seed_site / "publication").glob("*.html")):
        tags = meta_tags(page.read_text(encoding="utf-8"))
        assert "citation_pdf_url" not in tags, page  # the seeds give no PDF address
        dated += "citation_publication_date" in tags
        undated += "citation_publication_date" not in tags
        if "citation_conference_title" in tags or "citation_journal_title" in tags:
            assert "citation_publication_date" in tags, page
    assert dated >= 30 and dated + undated == 40


@pytest.fixture(scope="module")
def seed_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("seed-site") / "dist"
    build(load_config(REPO), out=out)
    return out / "site"


# ------------------------------------------------------------------ search engines


def test_profile_page_has_the_fields_google_documents(site):
    _, site_dir = site
    data = metadata(site_dir, "person/a-b.html")
    (document,) = data["json-ld"]
    page = document["@graph"][0]
    assert page["@type"] == "ProfilePage"
    # dates are the graph's xsd:date literals (value objects the context does not coerce)
    created, modified = page["dateCreated"], page["dateModified"]
    assert {created["@type"], modified["@type"]} == {"http://www.w3.org/2001/XMLSchema#date"}
    assert len(created["@value"]) == 10 and created["@value"] <= modified["@value"]
    person = page["mainEntity"]
    assert set(person["identifier"]) == {"0000-0002-1825-0097", "a-b"}
    assert person["image"] == "https://lab.example.org/img/ann.jpg"
    names = {a if isinstance(a, str) else a["@value"] for a in person["alternateName"]}
    assert {"ANN BEE", "安"} <= names
    assert set(person["sameAs"]) >= {
        "https://orcid.org/0000-0002-1825-0097",
        "https://github.com/annb",
        "https://scholar.google.com/citations?user=AbCdEfGAAAAJ",
        "https://dblp.org/pid/123/4567",
        "https://www.linkedin.com/in/annbee",
        "https://www.semanticscholar.org/author/1",
    }
    stat = person["agentInteractionStatistic"]
    assert stat["@type"] == "InteractionCounter" and stat["userInteractionCount"] == 1
    assert stat["interactionType"]["@id"] == "http://schema.org/WriteAction"
    og = data["opengraph"][0]
    assert og["@type"] == "profile" and og["og:image"] == "https://lab.example.org/img/ann.jpg"
    assert og["og:url"] == BASE + "person/a-b" and og["og:site_name"] == "Bee Lab"


def test_publication_page_metadata(site):
    _, site_dir = site
    data = metadata(site_dir, f"{PAPER}.html")
    (article,) = data["json-ld"]
    assert article["@type"] == "ScholarlyArticle" and article["datePublished"] == {
        "@value": "2024",
        "@type": "http://www.w3.org/2001/XMLSchema#gYear",
    }
    assert article["abstract"].startswith("We show")
    assert article["encoding"]["contentUrl"] == "https://lab.example.org/papers/one.pdf"
    assert article["encoding"]["encodingFormat"] == "application/pdf"
    assert article["video"]["url"] == "https://www.youtube.com/watch?v=abc"
    assert data["opengraph"][0]["@type"] == "article"


def test_simple_and_list_pages_have_opengraph_and_site_title(site):
    _, site_dir = site
    for path in ("index.html", "publications.html", "org/pku.html", "search.html"):
        html = read(site_dir, path)
        og = metadata(site_dir, path)["opengraph"][0]
        assert og["og:site_name"] == "Bee Lab", path
        assert "· Bee Lab</title>" in html, path


def test_embed_describes_the_homepage_it_is_pasted_on(site):
    root, _ = site
    page = embed_markup(load_config(root), "a-b")["@graph"][0]
    assert page["@id"] == page["url"] == "https://ann.example.org/"
    assert page["mainEntity"]["@id"] == BASE + "person/a-b"


# ------------------------------------------------------------------ browsing


def test_index_links_downloads_void_endpoint_lists_and_feeds(site):
    _, site_dir = site
    html = read(site_dir, "index.html")
    for href in (
        "graph.ttl",
        "graph.jsonld",
        "graph.nt",
        "void.ttl",
        "https://lab.example.org/sparql",
        "publications.html",
        "publications-by-venue.html",
        "publications-by-type.html",
        "network.html",
        "organizations.html",
        "venues.html",
        "topics.html",
        "search.html",
        "feed.xml",
    ):
        assert f'href="{href}"' in html, href
        if not href.startswith("http"):
            assert (site_dir / href).is_file(), href
    assert "<h1>Bee Lab</h1>" in html and "People and papers of the Bee Lab." in html
    assert "Conference papers" in read(site_dir, "publications-by-type.html")
    assert "Homonyms" in read(site_dir, "publications-by-venue.html")
    assert '<a href="org/pku.html"><bdi>Peking University</bdi></a>' in read(
        site_dir, "organizations.html"
    )
    topics = read(site_dir, "topics.html")
    assert '<a href="topic/databases.html"><bdi>Databases</bdi></a>' in topics


def test_sitemap_robots_and_atom_feed(site):
    _, site_dir = site
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "a": "http://www.w3.org/2005/Atom"}
    locs = [e.text for e in ET.parse(site_dir / "sitemap.xml").getroot().findall("s:url/s:loc", ns)]
    assert BASE + "person/a-b" in locs and BASE + PAPER in locs and BASE in locs
    assert all(loc.startswith(BASE) for loc in locs)
    assert read(site_dir, "robots.txt").endswith(f"Sitemap: {BASE}sitemap.xml\n")
    feed = ET.parse(site_dir / "feed.xml").getroot()
    ids = [e.text for e in feed.findall("a:entry/a:id", ns)]
    assert BASE + PAPER in ids and len(ids) == 2


def test_lab_network_links_each_person(seed_site):
    html = (seed_site / "network.html").read_text(encoding="utf-8")
    assert html.count('<a href="person/') == 5 and '<a href="person/hanyu-zhao.html">' in html
    assert "<bdi>Yihao Zhao</bdi> and <bdi>Yinmin Zhong</bdi>: 1 paper" in html


def test_project_templates_override_kg_templates(site):
    _, site_dir = site
    assert "<h1>Our own network page</h1>" in read(site_dir, "network.html")
    assert "<h1>Bee Lab</h1>" in read(site_dir, "index.html")  # the others stay kg's


def test_native_names_carry_lang_and_right_to_left_text_is_isolated(site):
    _, site_dir = site
    assert '<span class="native" lang="zh" dir="auto">安</span>' in read(
        site_dir, "person/a-b.html"
    )
    assert '<span class="native" lang="ar" dir="auto">سي دي</span>' in read(
        site_dir, "person/c-d.html"
    )


# ------------------------------------------------------------------ in Chromium

PAGES = (
    "index.html",
    "person/a-b.html",
    "person/c-d.html",
    f"{PAPER}.html",
    "publications.html",
    "network.html",
    "search.html",
    "organizations.html",
    "org/pku.html",
)


def open_pages(chromium, origin: str, width: int):
    context = chromium.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(origin):
            return r.continue_()
        if r.request.url != PHOTO:  # the portrait the profile names is its own choice
            outside.append(r.request.url)
        return r.abort()

    page.route("**/*", route)
    return context, page, outside


@pytest.mark.parametrize("width", WIDTHS)
def test_nothing_overflows_and_figures_stay_readable(chromium, site, width):
    _, site_dir = site
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with serve(site_dir) as origin:
        context, page, outside = open_pages(chromium, origin, width)
        labels = 0
        for path in PAGES:
            page.goto(origin + path, wait_until="load")
            shot = SCREENSHOTS / f"quality-{width}-{path.replace('/', '-')}.png"
            page.screenshot(path=str(shot), full_page=True)
            found = page.evaluate(MEASURE)
            assert found["problems"] == [], (path, width, found["problems"][:5])
            if found["labels"]:
                assert found["smallest"] >= 11, (path, width, found["smallest"])
            labels += found["labels"]
        context.close()
    assert outside == [] and labels >= 10


def test_seed_pages_fit_at_375_px(chromium, seed_site):
    """The seeds' real co-author lists, year spans and lab network, on a phone."""
    with serve(seed_site) as origin:
        context, page, outside = open_pages(chromium, origin, 375)
        for person in sorted((seed_site / "profile").glob("*.html")):
            page.goto(f"{origin}person/{person.name}", wait_until="load")
            found = page.evaluate(MEASURE)
            assert found["problems"] == [], (person.name, found["problems"][:5])
            assert found["smallest"] >= 11, person.name
            chart = page.evaluate("() => document.getElementById('chart-title').textContent")
            assert chart.startswith("Publications per year: "), person.name
        for path in ("network.html", "publications-by-venue.html"):
            page.goto(origin + path, wait_until="load")
            found = page.evaluate(MEASURE)
            assert found["problems"] == [] and found["smallest"] >= 11, (path, found)
        context.close()
    assert outside == []


SEED_PAGES = ("person/hanyu-zhao.html", "publications-by-venue.html", "venue/osdi.html")


@pytest.mark.parametrize("which", ["rich", "seeds"])
def test_no_serious_accessibility_violations(chromium, site, seed_site, which):
    site_dir, paths = (site[1], PAGES) if which == "rich" else (seed_site, SEED_PAGES)
    axe = AXE.read_text(encoding="utf-8")
    with serve(site_dir) as origin:
        context, page, outside = open_pages(chromium, origin, 1280)
        for path in paths:
            page.goto(origin + path, wait_until="load")
            page.add_script_tag(content=axe)
            violations = page.evaluate(
                "async () => (await axe.run(document, {resultTypes: ['violations']}))"
                ".violations.map(v => ({id: v.id, impact: v.impact, "
                "nodes: v.nodes.slice(0, 3).map(n => n.html)}))"
            )
            serious = [v for v in violations if v["impact"] in ("serious", "critical")]
            assert serious == [], (path, json.dumps(serious, indent=1)[:2000])
        context.close()
    assert outside == []


def test_search_works_from_file_without_requests(chromium, site):
    _, site_dir = site
    context = chromium.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((site_dir / "search.html").as_uri(), wait_until="load")
    page.fill("#q", "paper one")
    page.wait_for_function("() => document.querySelectorAll('#results li').length > 0")
    results = page.evaluate(
        "() => Array.from(document.querySelectorAll('#results a')).map(a => a.href)"
    )
    page.fill("#q", "安")
    page.wait_for_function("() => document.getElementById('count').textContent === '1 found'")
    context.close()
    assert results == [(site_dir / f"{PAPER}.html").as_uri()]
    assert all(url.startswith("file://") for url in requests), requests
