"""A lab's site from `kg init`: three people with local photos and PDFs in `static/`,
accounts on several services. One module-scoped build; the browser checks share one
Chromium and a handful of page loads."""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path

import pytest
from browser import CLIPPED, MEASURE, serve
from PIL import Image

from kg.cli import main

BASE = "https://lab.example.edu/"

ANN = """name: Ann Bee
lab_role: pi
projects:
  - {name: LocalFS, publication: "Paper One: Local Files"}
headline: Associate Professor
photo: static/people/ann.jpg
orcid: 0000-0002-1825-0097
homepage: https://ann.example.org/
accounts:
  - {service: github, username: annb}
  - {service: google-scholar, username: AbCdEfGAAAAJ}
  - {service: dblp, username: 123/4567}
  - {service: linkedin, username: annbee}
  - {service: mastodon, username: "@ann@example.social", url: "https://example.social/@ann"}
publications:
  - title: "Paper One: Local Files"
    authors: [Ann Bee, Bo Chen]
    venue: OSDI
    year: 2024
    pdf: static/papers/one.pdf
    slides: static/papers/one-slides.pdf
    selected: true
  - title: "Paper Two: Not Selected"
    authors: [Ann Bee, Cy Dee]
    venue: SOSP
    year: 2023
"""
BO = """name: Bo Chen
lab_role: phd
photo: static/people/bo.png
projects:
  - {name: LocalFS, description: "Files next to the data."}
accounts:
  - {service: github, username: bochen}
"""
CY = """name: Cy Dee
lab_role: alumni
now_at: Research Scientist, Example Labs
"""


def _jpeg(colour: tuple[int, int, int], size=(400, 300)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "JPEG")
    return out.getvalue()


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", (200, 260), (10, 120, 40, 200)).save(out, "PNG")
    return out.getvalue()


PDF = b"%PDF-1.4\n% a paper\n"
SITE = """
[site]
nav = ["people", "publications", "search", "venues", "data"]
accent = "#7a1f5c"
directories = ["venues", "organizations"]
logo = "static/logo.png"
tagline = "Operating systems at Example University"
"""
NEWS = """news:
  - {date: 2024-09, text: "Bo Chen joined the lab."}
  - {date: 2025-05-01, text: "Paper One accepted at OSDI.", link: "https://ann.example.org/one"}
  - {date: 2023-06, text: "Cy Dee defended."}
"""


def _lab(root: Path) -> Path:
    assert main(["init", str(root), "--base-iri", BASE, "--title", "Bee Lab"]) == 0
    (root / "data" / "profiles" / "alex-example.yaml").unlink()
    for slug, text in (("ann-bee", ANN), ("bo-chen", BO), ("cy-dee", CY)):
        (root / "data" / "profiles" / f"{slug}.yaml").write_text(text, encoding="utf-8")
    people, papers = root / "static" / "people", root / "static" / "papers"
    people.mkdir(parents=True)
    papers.mkdir()
    (people / "ann.jpg").write_bytes(_jpeg((200, 80, 40)))
    (people / "bo.png").write_bytes(_png())
    (papers / "one.pdf").write_bytes(PDF)
    (papers / "one-slides.pdf").write_bytes(PDF + b"% slides\n")
    (root / "static" / ".secret").write_text("not published")
    (root / "data" / "news.yaml").write_text(NEWS, encoding="utf-8")
    Image.new("RGBA", (64, 64), (122, 31, 92, 255)).save(root / "static" / "logo.png")
    with (root / "kg.toml").open("a", encoding="utf-8") as toml:
        toml.write(SITE)
    return root


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    root = _lab(tmp_path_factory.mktemp("lab") / "bee-lab")
    assert main(["--project", str(root), "check"]) == 0
    assert main(["--project", str(root), "build"]) == 0
    return root / "dist" / "site"


def _hashed(site: Path, folder: str, stem: str, suffix: str) -> Path:
    found = sorted((site / "static" / folder).glob(f"{stem}.*{suffix}"))
    assert len(found) == 1, found
    return found[0]


def test_static_files_are_copied_under_content_hashed_names(lab):
    pdf = _hashed(lab, "papers", "one", ".pdf")
    assert pdf.read_bytes() == PDF
    assert re.fullmatch(r"one\.[0-9a-f]{10}\.pdf", pdf.name)
    slides = _hashed(lab, "papers", "one-slides", ".pdf")
    assert slides.name.split(".")[1] != pdf.name.split(".")[1]  # other bytes, other name
    assert not (lab / "static" / ".secret").exists()
    assert not any(p.name.startswith(".") for p in (lab / "static").rglob("*"))


def test_local_photos_get_thumbnails_without_metadata(lab):
    page = (lab / "person" / "ann-bee.html").read_text(encoding="utf-8")
    src = re.search(r'<img class="photo" src="([^"]+)"', page)
    assert src and src.group(1).startswith("../static/thumbs/")
    with Image.open(lab / "person" / src.group(1)) as thumb:
        assert thumb.size == (240, 240) and thumb.format == "JPEG"
        assert not thumb.getexif()
    bo = (lab / "person" / "bo-chen.html").read_text(encoding="utf-8")
    src = re.search(r'<img class="photo" src="([^"]+)"', bo)
    assert src and src.group(1).endswith(".png")
    cy = (lab / "person" / "cy-dee.html").read_text(encoding="utf-8")
    assert '<img class="photo"' not in cy  # no photo given: none shown


def test_members_are_grouped_by_role_with_avatars(lab):
    index = (lab / "index.html").read_text(encoding="utf-8")
    headings = re.findall(r"<h2>([^<]+)</h2>", index)
    assert headings[:4] == ["News", "Principal investigators", "PhD students", "Alumni"]
    groups = dict(re.findall(r"<h2>([^<]+)</h2>\s*<ul class=\"members\">(.*?)</ul>", index, re.S))
    assert "Ann Bee" in groups["Principal investigators"]
    assert "Bo Chen" in groups["PhD students"] and "Ann Bee" not in groups["PhD students"]
    assert "Now at Research Scientist, Example Labs" in groups["Alumni"]
    assert re.search(
        r'<img class="avatar" src="static/thumbs/[0-9a-f]{16}\.jpg"',
        groups["Principal investigators"],
    )
    assert '<span class="avatar initials" aria-hidden="true">CD</span>' in groups["Alumni"]


def test_selected_publications_are_listed_first(lab):
    index = (lab / "index.html").read_text(encoding="utf-8")
    selected = index.split("<h2>Selected publications</h2>", 1)[1].split("</ul>", 1)[0]
    assert "Paper One: Local Files" in selected and "Paper Two" not in selected
    assert "<em>OSDI &#39;24</em></li>" in selected  # the short name and year, once
    page = (lab / "person" / "ann-bee.html").read_text(encoding="utf-8")
    first = page.split("<h3>Selected publications</h3>", 1)[1].split("</ul>", 1)[0]
    assert "Paper One: Local Files" in first and "Paper Two" not in first
    bo = (lab / "person" / "bo-chen.html").read_text(encoding="utf-8")
    assert "Selected publications" in bo  # the selected paper is Bo's too


def test_local_files_are_site_addresses_in_the_data(lab):
    pdf = _hashed(lab, "papers", "one", ".pdf").name
    photo = _hashed(lab, "people", "ann", ".jpg").name
    turtle = (lab / "person" / "ann-bee.ttl").read_text(encoding="utf-8")
    assert f"<{BASE}static/people/{photo}>" in turtle
    paper = next((lab / "publication").glob("*.html")).read_text(encoding="utf-8")
    assert f'<meta name="citation_pdf_url" content="{BASE}static/papers/{pdf}">' in paper
    assert f'href="../static/papers/{pdf}">PDF</a>' in paper  # works from file:// too


def test_every_account_is_a_link_with_an_accessible_name(lab):
    page = (lab / "person" / "ann-bee.html").read_text(encoding="utf-8")
    expected = {
        "https://ann.example.org/": "Homepage of Ann Bee",
        "https://orcid.org/0000-0002-1825-0097": "Ann Bee on ORCID: 0000-0002-1825-0097",
        "https://github.com/annb": "Ann Bee on GitHub: annb",
        "https://scholar.google.com/citations?user=AbCdEfGAAAAJ": (
            "Ann Bee on Google Scholar: AbCdEfGAAAAJ"
        ),
        "https://dblp.org/pid/123/4567": "Ann Bee on dblp: 123/4567",
        "https://www.linkedin.com/in/annbee": "Ann Bee on LinkedIn: annbee",
        "https://example.social/@ann": "Ann Bee on Mastodon: @ann@example.social",
    }
    links = dict(
        re.findall(r'<li class="account"><a href="([^"]+)" rel="me" aria-label="([^"]+)"', page)
    )
    assert links == expected
    assert page.count('<svg class="icon"') == len(expected)


def _project_with(tmp_path: Path, photo: str) -> Path:
    root = tmp_path / "p"
    assert main(["init", str(root), "--base-iri", BASE]) == 0
    profile = root / "data" / "profiles" / "alex-example.yaml"
    text = profile.read_text(encoding="utf-8")
    profile.write_text(text.replace("headline:", f"photo: {photo}\nheadline:"), "utf-8")
    return root


def test_a_missing_local_file_is_an_error_at_check(tmp_path, capsys):
    root = _project_with(tmp_path, "static/people/nobody.jpg")
    assert main(["--project", str(root), "check"]) == 2
    err = capsys.readouterr().err
    assert "alex-example.yaml" in err and "photo: static/people/nobody.jpg is not a file" in err
    assert main(["--project", str(root), "build"]) == 2
    assert not (root / "dist").exists()


@pytest.mark.parametrize("photo", ["../outside.jpg", "/etc/passwd", "static/../kg.toml"])
def test_a_local_path_outside_static_is_refused(tmp_path, capsys, photo):
    root = _project_with(tmp_path, photo)
    assert main(["--project", str(root), "check"]) == 2
    assert "the path of a file in the project's static/ folder" in capsys.readouterr().err


def test_a_link_out_of_the_project_is_refused(tmp_path, capsys):
    root = _project_with(tmp_path, "static/me.jpg")
    (root / "static").mkdir()
    outside = tmp_path / "outside.jpg"
    outside.write_bytes(_jpeg((1, 2, 3)))
    (root / "static" / "me.jpg").symlink_to(outside)
    assert main(["--project", str(root), "build"]) == 2
    assert "links out of the project" in capsys.readouterr().err
    assert not (root / "dist").exists()


def test_only_the_registry_entries_the_lab_uses_are_published(lab):
    """`kg init` bundles dozens of venues and organizations; the lab's papers name OSDI
    and SOSP, whose publishers are USENIX and ACM: those four alone get pages, directory
    entries and sitemap lines."""
    venues = sorted(p.stem for p in (lab / "venue").glob("*.html"))
    orgs = sorted(p.stem for p in (lab / "org").glob("*.html"))
    assert venues == ["osdi", "sosp"]
    assert orgs == ["acm", "usenix"]
    listed = re.findall(
        r'<a href="(venue/[^"]+|org/[^"]+)\.html"', (lab / "venues.html").read_text()
    )
    listed += re.findall(r'<a href="(org/[^"]+)\.html"', (lab / "organizations.html").read_text())
    assert sorted(listed) == ["org/acm", "org/usenix", "venue/osdi", "venue/sosp"]
    sitemap = (lab / "sitemap.xml").read_text(encoding="utf-8")
    found = sorted(re.findall(rf"<loc>{BASE}((?:org|venue)/[^<]+)</loc>", sitemap))
    assert found == ["org/acm", "org/usenix", "venue/osdi", "venue/sosp"]
    dump = (lab.parent / "graph.nt").read_text(encoding="utf-8")
    assert f"<{BASE}venue/eurosys>" not in dump  # a bundled venue nobody published at


def test_news_newest_first(lab):
    index = (lab / "index.html").read_text(encoding="utf-8")
    news = index.split("<h2>News</h2>", 1)[1].split("</ul>", 1)[0]
    items = re.findall(r'<span class="when">([^<]+)</span> ([^<]+?)(?: <a|</li>)', news)
    assert items == [
        ("2025-05-01", "Paper One accepted at OSDI."),
        ("2024-09", "Bo Chen joined the lab."),
        ("2023-06", "Cy Dee defended."),
    ]


# ------------------------------------------------------------------ in Chromium

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
BROWSER_PAGES = ("index.html", "person/ann-bee.html", "venues.html")
IN_PAGE = """() => ({
  accounts: Array.from(document.querySelectorAll("li.account")).map(li => {
    const a = li.querySelector("a");
    return a ? [a.href, a.getAttribute("aria-label") || a.textContent.trim()] : null;
  }),
  photos: Array.from(document.querySelectorAll("main img")).map(
    i => [i.getAttribute("src"), i.complete && i.naturalWidth]),
  headings: Array.from(document.querySelectorAll("h2")).map(h => h.textContent),
  directory: Array.from(document.querySelectorAll("main a[href^='venue/']")).map(
    a => a.getAttribute("href")),
})"""


def _only(origin: str, outside: list[str]):
    """A route handler: requests to the site go on, others are noted and aborted."""

    def route(r):
        if r.request.url.startswith(origin):
            return r.continue_()
        outside.append(r.request.url)
        return r.abort()

    return route


def _only(origin: str, outside: list[str]):
    """A route handler: requests to the site go on, others are noted and aborted."""

    def route(r):
        if r.request.url.startswith(origin):
            return r.continue_()
        outside.append(r.request.url)
        return r.abort()

    return route


def test_in_a_browser_at_desktop_and_phone_widths(lab, chromium):
    """Every account a link with a name, photos shown, roles grouped, only the used
    venues, nothing wider than the window or clipped, no request leaves the site, and
    axe-core finds no serious violation (at the desktop width)."""
    axe = AXE.read_text(encoding="utf-8")
    with serve(lab) as origin:
        for width in (1280, 375):
            context = chromium.new_context(viewport={"width": width, "height": 900})
            page, outside = context.new_page(), []
            page.route("**/*", _only(origin, outside))
            seen = {}
            for path in BROWSER_PAGES:
                page.goto(origin + path, wait_until="load")
                seen[path] = page.evaluate(IN_PAGE)
                assert page.evaluate(MEASURE)["problems"] == [], (path, width)
                assert page.evaluate(CLIPPED) == [], (path, width)
                if width == 1280:
                    page.add_script_tag(content=axe)
                    found = page.evaluate(
                        "async () => (await axe.run(document)).violations"
                        ".filter(v => ['serious', 'critical'].includes(v.impact))"
                        ".map(v => v.id + ': ' + v.nodes[0].html)"
                    )
                    assert found == [], (path, found)
            context.close()
            assert outside == [], width
            person, index = seen["person/ann-bee.html"], seen["index.html"]
            assert len(person["accounts"]) == 7 and all(person["accounts"])
            assert all(href.startswith("https://") and name for href, name in person["accounts"])
            assert [w for _, w in person["photos"]] == [240]  # the thumbnail, loaded
            assert index["headings"][1:4] == ["Principal investigators", "PhD students", "Alumni"]
            assert sorted(w for _, w in index["photos"]) == [240, 240]  # Ann's and Bo's
            assert sorted(seen["venues.html"]["directory"]) == [
                "venue/osdi.html",
                "venue/sosp.html",
            ]


def test_site_settings_in_kg_toml_need_no_template(lab):
    index = (lab / "index.html").read_text(encoding="utf-8")
    nav = index.split('<nav class="site" aria-label="Site">', 1)[1].split("</nav>", 1)[0]
    logo = _hashed(lab, "", "logo", ".png").name
    assert f'<img class="logo" src="static/{logo}" alt="">Bee Lab</a>' in nav
    assert re.findall(r'<a href="([^"]+)">([^<]+)</a>', nav) == [
        ("index.html", "People"),
        ("publications.html", "Publications"),
        ("search.html", "Search"),
        ("venues.html", "Venues"),
        ("dataset.html", "Data"),
    ]
    paper = next((lab / "publication").glob("*.html")).read_text(encoding="utf-8")
    assert '<a href="../search.html">Search</a>' in paper  # relative from every folder
    assert "--accent: #7a1f5c;" in index and "prefers-color-scheme: dark" in index
    assert "Operating systems at Example University" in index
    assert not (lab / "topics.html").exists()
    assert "topics.html" not in (lab / "sitemap.xml").read_text(encoding="utf-8")
    assert (lab / "venues.html").is_file() and (lab / "organizations.html").is_file()


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ('accent = "#9ab"', "expected a colour like '#1f4e8c'"),
        ('accent = "#ffcc00"', "contrast of 1.5:1; links need at least 4.5:1"),
        ('nav = ["people", "blog"]', "expected a list of names from people, publications"),
        ('dark_mode = "always"', "expected one of auto, off"),
        ('logo = "../logo.png"', "expected a file of the project's static/ folder"),
        ('colour = "red"', "unknown setting(s) colour in [site]"),
    ],
)
def test_bad_site_settings_are_clear_errors(tmp_path, capsys, setting, message):
    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    with (root / "kg.toml").open("a", encoding="utf-8") as toml:
        toml.write(f"\n[site]\n{setting}\n")
    capsys.readouterr()
    assert main(["--project", str(root), "check"]) == 2
    err = capsys.readouterr().err
    assert "kg.toml:" in err and message in err, err


def test_venue_pages_read_as_pages_with_the_data_one_click_away(lab):
    page = (lab / "venue" / "osdi.html").read_text(encoding="utf-8")
    main = page.split("<main>", 1)[1]
    readable, data = main.split('<details class="data">', 1)
    assert '<li><a href="../org/usenix.html">USENIX Association</a></li>' in readable
    assert '<li><a href="https://dblp.org/db/conf/osdi/">dblp</a></li>' in readable
    papers = readable.split("<h2>Papers</h2>", 1)[1]
    paper_one = r'<a href="../publication/[^"]+"><bdi>Paper One: Local Files</bdi></a>'
    assert re.search(paper_one, papers)
    assert "Paper Two" not in papers  # a SOSP paper
    assert "<summary>All the facts, as linked data</summary>" in data
    assert "schema:workFeatured" in data  # the RDF table, folded
    assert data.index("</details>") < data.index('<a href="osdi.ttl"')  # downloads outside


def test_every_publication_page_has_a_cite_block(lab):
    pages = sorted((lab / "publication").glob("*.html"))
    assert len(pages) == 2
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert '<section class="cite" aria-labelledby="cite-title">' in text, page.name
        assert re.search(r'<pre id="cite-bibtex">@\w+\{', text), page.name


@pytest.mark.parametrize("count", [3, 15, 100])
def test_the_network_stays_readable_from_3_to_100_people(count):
    """One row per person: names whole and apart, arcs inside the figure."""
    from kg.publish.site import network_svg

    names = [f"Person Number {i:03d}" for i in range(count)]
    pairs = sorted({(i, (i * 7 + 3) % count, 1 + i % 3) for i in range(count)})
    pairs = [(min(a, b), max(a, b), n) for a, b, n in pairs if a != b]
    svg = network_svg(names, pairs, [f"person/p{i}.html" for i in range(count)])
    width, height = map(float, re.search(r'viewBox="0 0 (\S+) (\S+)"', svg).groups())
    labels = re.findall(r'<text x="[^"]+" y="([^"]+)"[^>]*>([^<]+)</text>', svg)
    assert sorted(name for _, name in labels) == names  # every name whole, once
    rows = sorted(float(y) for y, _ in labels)
    assert all(b - a >= 24 for a, b in itertools.pairwise(rows))
    assert rows[-1] < height
    for x, rx in re.findall(r'd="M(\S+) \S+ A(\S+) ', svg):
        assert float(x) + float(rx) <= width
    assert svg.count('<a href="person/') == count


def test_projects_list_their_members_and_papers(lab):
    page = (lab / "projects.html").read_text(encoding="utf-8")
    main = page.split("<main>", 1)[1]
    assert main.count("<h2>") == 1 and "<h2><bdi>LocalFS</bdi></h2>" in main
    assert "<p>Files next to the data.</p>" in main
    members = re.findall(r'<a href="person/([^"]+)\.html"><bdi>([^<]+)</bdi></a>', main)
    assert members == [("ann-bee", "Ann Bee"), ("bo-chen", "Bo Chen")]
    assert re.search(r'<li><a href="publication/[^"]+"><bdi>Paper One: Local Files</bdi>', main)
    assert "projects.html" in (lab / "sitemap.xml").read_text(encoding="utf-8")


def test_a_pipe_in_static_is_refused_not_read(tmp_path, capsys):
    import os

    root = _project_with(tmp_path, "static/me.jpg")
    (root / "static").mkdir()
    (root / "static" / "me.jpg").write_bytes(_jpeg((1, 2, 3)))
    os.mkfifo(root / "static" / "pipe")  # reading it would wait forever
    assert main(["--project", str(root), "build"]) == 2
    assert "pipe is not a regular file" in capsys.readouterr().err
