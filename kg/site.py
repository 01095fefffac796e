"""HTML profile pages with embedded JSON-LD, rendered on the server (Jinja, autoescape on).

`site/index.html`, and one page per thing with an IRI (`kg.layout`): `site/person/<slug>.html`,
`site/publication/<key>.html`, and simple pages for organizations, venues, topics,
courses and the dataset. Every page links its description files (`<link
rel="alternate">`). No page loads anything from elsewhere: styles are inline and the
two figures (co-authorship network, publications per year) are SVG drawn here.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape
from rdflib import URIRef

from kg.citation import Citations
from kg.layout import DATASET, alternates, owner_path, path_of, relative_root
from kg.markup import article_markup, profile_markup, script_tag
from kg.model import (
    STATUSES_WITH_DATE,
    STATUSES_WITH_VENUE,
    PartialDate,
    PersonRef,
    Present,
    Profile,
)
from kg.namespaces import DCTERMS, FOAF, RDF, RDFS, SCHEMA, curie
from kg.resolve import PublicationEntity, Resolution
from kg.triples import GraphLike, Triples

STATUS_LABELS = {
    "submitted": "Submitted",
    "preprint": "Preprint",
    "report": "Technical report",
    "accepted": "Accepted",
}


# The only script on any page: the Cite block's copy buttons (inline, no requests).
# Clipboard API where the page is a secure context, else a selection and execCommand.
COPY_SCRIPT = """<script>
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () {
    var source = document.getElementById(button.dataset.copy);
    var done = function () { button.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.textContent).then(done);
    } else {
      var range = document.createRange();
      range.selectNodeContents(source);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      if (document.execCommand("copy")) { done(); }
    }
  });
});
</script>"""


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("kg", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["period"] = period
    return env


def period(start: PartialDate | None, end: PartialDate | Present | None = None) -> str:
    if start is None and end is None:
        return ""
    text = str(start) if start else "?"
    return f"{text} – {end}" if end is not None else text


@dataclass(frozen=True)
class AuthorView:
    name: str
    href: str | None
    equal: bool
    is_self: bool
    annotation: str | None


@dataclass(frozen=True)
class PublicationView:
    key: str
    title: str
    authors: tuple[AuthorView, ...]
    venue: str
    year: int | None
    status: str
    notes: tuple[str, ...]
    equal_note: str | None
    dated: bool = True  # the year is a publication date (not the year of a submission)


class SiteBuilder:
    def __init__(self, resolution: Resolution, graph: GraphLike, base_iri: str) -> None:
        self.r = resolution
        self.graph = graph
        self.base = base_iri
        self.env = _environment()
        self.profiled = {p.slug for p in resolution.dataset.profiles}
        self.citations = Citations(resolution)  # keys, works per person: once, before forks

    # ------------------------------------------------------------ views

    def person_href(self, key: str | None, prefix: str) -> str | None:
        return f"{prefix}person/{key}.html" if key in self.r.persons else None

    def refs(self, refs: list[PersonRef], prefix: str) -> list[tuple[str, str | None]]:
        return [(ref.name, self.person_href(self.r.person(ref), prefix)) for ref in refs]

    def publication_view(self, pub: PublicationEntity, me: str | None, prefix: str):
        authors = tuple(
            AuthorView(
                slot.printed[0],
                self.person_href(slot.person, prefix),
                slot.equal_contribution,
                slot.person == me,
                slot.annotation,
            )
            for slot in pub.authors
        )
        venue = (
            pub.venue_as_printed[0]
            if pub.venue_as_printed
            else (self.r.venues[pub.venue].name if pub.venue else "")
        )
        return PublicationView(
            pub.key,
            pub.title,
            authors,
            venue,
            pub.year,
            STATUS_LABELS.get(pub.status, ""),
            pub.notes,
            pub.equal_contribution_note,
            pub.status in STATUSES_WITH_DATE,
        )

    def publications_of(self, slug: str) -> list[PublicationEntity]:
        """Works the person authored or listed, newest first."""
        pubs = self.works.get(slug, {}).values()

        def key(p: PublicationEntity) -> tuple:
            year = p.year if p.status in STATUSES_WITH_DATE else None
            return (year is None, -(year or 0), p.title.casefold())

        return sorted(pubs, key=key)

    @cached_property
    def works(self) -> dict[str, dict[str, PublicationEntity]]:
        """Person key -> their works by key (one pass over the publications)."""
        works: dict[str, dict[str, PublicationEntity]] = {}
        for pub in self.r.publications.values():
            people = [s for s, _ in pub.listings] + [a.person for a in pub.authors if a.person]
            for person in people:
                works.setdefault(person, {})[pub.key] = pub
        return works

    def by_year(self, pubs: list[PublicationView]) -> list[tuple[str, list]]:
        groups: dict[str, list] = {}
        for pub in pubs:
            groups.setdefault(
                str(pub.year) if pub.year and pub.dated else "Preprints and work in progress",
                [],
            ).append(pub)
        return list(groups.items())

    # ------------------------------------------------------------ pages

    def person_page(self, profile: Profile) -> str:
        pubs = self.publications_of(profile.slug)
        views = [self.publication_view(p, profile.slug, "../") for p in pubs]
        person = URIRef(f"{self.base}person/{profile.slug}")
        markup = profile_markup(self.graph, person, URIRef(f"{self.base}profile/{profile.slug}"))
        return self.env.get_template("person.html.j2").render(
            p=profile,
            org=self.org_name,
            refs=lambda rs: self.refs(rs, "../"),
            venues=lambda refs: ", ".join(map(self.venue_name, refs)),
            years=self.by_year(views),
            count=len(views),
            network=Markup(coauthor_svg(profile.name, self.coauthors(profile.slug, pubs))),
            chart=Markup(per_year_svg(Counter(p.year for p in pubs if p.year))),
            jsonld=Markup(script_tag(markup)),
            root="../",
            alternates=alternates(f"person/{profile.slug}"),
        )

    def publication_page(self, pub: PublicationEntity) -> str:
        view = self.publication_view(pub, None, "../")
        bibtex, plain = self.citations.cite_block(pub)
        venue = self.r.venues[pub.venue] if pub.venue else None
        markup = article_markup(self.graph, URIRef(f"{self.base}publication/{pub.key}"))
        return self.env.get_template("publication.html.j2").render(
            pub=view,
            venue=venue,
            # Google Scholar: only a published or accepted work claims a venue, and only a
            # dated status a publication date (a submitted paper has neither)
            scholar_venue=venue if pub.status in STATUSES_WITH_VENUE else None,
            scholar_date=pub.year if pub.status in STATUSES_WITH_DATE else None,
            jsonld=Markup(script_tag(markup)),
            root="../",
            alternates=alternates(f"publication/{pub.key}"),
            listed_by=[(s, self.r.persons[s].name) for s, _ in pub.listings],
            cite_bibtex=bibtex,
            cite_text=plain,
            copy_script=Markup(COPY_SCRIPT),
        )

    def index_page(self) -> str:
        people = sorted(self.r.dataset.profiles, key=lambda p: p.name.casefold())
        return self.env.get_template("index.html.j2").render(
            people=people,
            publications=len(self.r.publications),
            root="",
            alternates=alternates(DATASET),
        )

    def org_name(self, ref: str | None) -> str:
        return self.r.organizations[self.r.org(ref)].name if ref else ""

    def venue_name(self, ref: str) -> str:
        venue = self.r.venues[self.r.venue(ref)[0]]
        return venue.short_name or venue.name

    def coauthors(self, slug: str, pubs: list[PublicationEntity]) -> list[tuple[str, int]]:
        counts: Counter[str] = Counter()
        for pub in pubs:
            for slot in pub.authors:
                if slot.person and slot.person != slug:
                    counts[self.r.persons[slot.person].name] += 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def person_pages(self, profiles: Sequence[Profile]) -> dict[str, str]:
        return {f"person/{p.slug}.html": self.person_page(p) for p in profiles}

    def publication_pages(self, pubs: Sequence[PublicationEntity]) -> dict[str, str]:
        return {f"publication/{pub.key}.html": self.publication_page(pub) for pub in pubs}

    # ------------------------------------------------------------ simple pages

    def thing_page(self, thing: URIRef, description: Triples, pages: frozenset[str]) -> str:
        """A simple page for a thing without its own template (organization, venue,
        topic, course, co-author, dataset): its facts, its parts (nodes minted under
        it), and what refers to it."""
        path = path_of(str(thing), self.base) or ""
        links = _Links(self.base, pages, relative_root(path), self.graph, str(thing))
        own = sorted(
            (s for s in description.subjects() if s == thing or str(s).startswith(f"{thing}/")),
            key=str,
        )
        sections = [links.section(s, description) for s in own]
        return self.env.get_template("thing.html.j2").render(
            title=links.label(thing, description),
            kinds=", ".join(links.kinds(thing, description)),
            sections=sections,
            referrers=links.referrers(set(own), description),
            root=links.root,
            alternates=alternates(path),
        )


@dataclass(frozen=True)
class LinkView:
    text: str
    href: str | None


@dataclass(frozen=True)
class SectionView:
    anchor: str
    title: str
    facts: list[tuple[str, list[LinkView]]]


class _Links:
    """Labels and relative links of the nodes on one simple page."""

    def __init__(
        self, base: str, pages: frozenset[str], root: str, graph: GraphLike, this: str
    ) -> None:
        self.base, self.pages, self.root, self.graph, self.this = base, pages, root, graph, this

    def anchor(self, iri: str) -> str:
        """`2024-proceedings` for `<this>/2024/proceedings`."""
        return iri[len(self.this) + 1 :].replace("/", "-")

    def href(self, iri: str) -> str:
        """A page for IRIs under the base (the owner's for nodes minted under a thing),
        the file for other paths under the base (dumps), else the IRI itself."""
        if iri.startswith(self.this + "/"):
            return "#" + self.anchor(iri)
        path = path_of(iri, self.base)
        if path is None:
            return iri
        if path in self.pages:
            return f"{self.root}{path}.html"
        owner = owner_path(path, self.pages)
        return f"{self.root}{owner}.html" if owner else f"{self.root}{path}"

    def label(self, node, description: Triples) -> str:
        for source in (description, self.graph):
            for p in (SCHEMA.name, FOAF.name, DCTERMS.title, RDFS.label):
                value = source.value(node, p)  # type: ignore[attr-defined]
                if value is not None:
                    return str(value)
        return str(node).rsplit("/", 1)[-1]

    def kinds(self, node, description: Triples) -> list[str]:
        return sorted(curie(str(t)) or str(t) for t in description.objects(node, RDF.type))

    def value(self, node, description: Triples) -> LinkView:
        if isinstance(node, URIRef):
            return LinkView(self.label(node, description), self.href(str(node)))
        language = getattr(node, "language", None)
        return LinkView(f"{node} ({language})" if language else str(node), None)

    def section(self, node, description: Triples) -> SectionView:
        facts = description.describe(node)
        rows = [("type", [LinkView(k, None) for k in self.kinds(node, description)])]
        for p in sorted(facts, key=str):
            if p != RDF.type:
                values = sorted((self.value(o, description) for o in facts[p]), key=_by_text)
                rows.append((curie(str(p)) or str(p), values))
        return SectionView(self.anchor(str(node)), self.label(node, description), rows)

    def referrers(self, own: set, description: Triples) -> list[LinkView]:
        """The things (their owners, for nodes minted under a thing) that point here."""
        found: dict[str, LinkView] = {}
        for s, _, o in description:
            if o in own and s not in own:
                path = path_of(str(s), self.base) or ""
                owner = path if path in self.pages else owner_path(path, self.pages)
                iri = URIRef(self.base + owner) if owner else s
                found.setdefault(str(iri), self.value(iri, description))
        return sorted(found.values(), key=_by_text)


def _by_text(view: LinkView) -> tuple[str, str]:
    return view.text.casefold(), view.href or ""


# ---------------------------------------------------------------- figures


def coauthor_svg(name: str, coauthors: list[tuple[str, int]], limit: int = 20) -> str:
    """A radial co-authorship picture: the person in the middle, co-authors around."""
    shown = coauthors[:limit]
    size, centre, radius = 520, 260, 190
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" '
        f'role="img" aria-labelledby="net-title" class="figure">',
        f'<title id="net-title">Co-authors of {escape(name)}: {len(coauthors)} people'
        f"{', the ' + str(len(shown)) + ' most frequent shown' if len(coauthors) > limit else ''}"
        f"</title>",
    ]
    for i, (other, shared) in enumerate(shown):
        angle = 2 * math.pi * i / max(len(shown), 1) - math.pi / 2
        x, y = centre + radius * math.cos(angle), centre + radius * math.sin(angle)
        anchor = "start" if math.cos(angle) >= 0 else "end"
        dx = 8 if anchor == "start" else -8
        parts.append(
            f'<line x1="{centre}" y1="{centre}" x2="{x:.1f}" y2="{y:.1f}" '
            f'stroke="#6b7a90" stroke-width="{min(1 + shared, 6)}" />'
        )
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#1f4e8c" />')
        parts.append(
            f'<text x="{x + dx:.1f}" y="{y + 4:.1f}" text-anchor="{anchor}" '
            f'font-size="12" fill="#1b1b1b">{escape(other)} ({shared})</text>'
        )
    parts.append(f'<circle cx="{centre}" cy="{centre}" r="10" fill="#b3261e" />')
    parts.append(
        f'<text x="{centre}" y="{centre - 16}" text-anchor="middle" font-size="14" '
        f'font-weight="bold" fill="#1b1b1b">{escape(name)}</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def per_year_svg(counts: Counter) -> str:
    """Publications per year as a bar chart."""
    years = sorted(counts)
    if not years:
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 40" role="img" '
            'class="figure"><title>No dated publications</title></svg>'
        )
    span = list(range(years[0], years[-1] + 1))
    top = max(counts.values())
    bar, gap, height = 34, 10, 160
    width = max(len(span) * (bar + gap) + gap, 320)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height + 40}" '
        f'role="img" aria-labelledby="chart-title" class="figure chart">',
        '<title id="chart-title">Publications per year: '
        + escape(", ".join(f"{y}: {counts.get(y, 0)}" for y in span))
        + "</title>",
    ]
    for i, year in enumerate(span):
        n = counts.get(year, 0)
        h = round(height * n / top)
        x = gap + i * (bar + gap)
        parts.append(
            f'<rect x="{x}" y="{height - h + 10}" width="{bar}" height="{h}" fill="#1f4e8c" />'
        )
        parts.append(
            f'<text x="{x + bar / 2}" y="{height - h + 4}" text-anchor="middle" '
            f'font-size="12" fill="#1b1b1b">{n}</text>'
        )
        parts.append(
            f'<text x="{x + bar / 2}" y="{height + 28}" text-anchor="middle" '
            f'font-size="12" fill="#1b1b1b">{year}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)
