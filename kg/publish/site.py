"""HTML profile pages with embedded JSON-LD, rendered on the server (Jinja, autoescape on).

`site/index.html`, and one page per thing with an IRI (`kg.publish.layout`):
`site/person/<slug>.html`,
`site/publication/<key>.html`, and simple pages for organizations, venues, topics,
courses and the dataset. Every page links its description files (`<link
rel="alternate">`). No page loads anything from elsewhere: styles are inline and the
two figures (co-authorship network, publications per year) are SVG drawn here.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from json.encoder import encode_basestring as _string
from pathlib import Path

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    DictLoader,
    Environment,
    FileSystemLoader,
    PackageLoader,
    StrictUndefined,
    select_autoescape,
)
from markupsafe import Markup, escape
from rdflib import URIRef

from kg import scheme
from kg.cache import digest
from kg.config import NAV_LINKS, SiteConfig
from kg.display import BIDI_CONTROLS, isolate
from kg.graph.namespaces import DCTERMS, FOAF, RDF, RDFS, SCHEMA, curie
from kg.graph.triples import GraphLike, Triples
from kg.ingest.names import text_key
from kg.model import (
    STATUSES_WITH_DATE,
    STATUSES_WITH_VENUE,
    PartialDate,
    PersonRef,
    Present,
    Profile,
    Publication,
)
from kg.publish import personpage, pubpage
from kg.publish.accounts import account_links
from kg.publish.citation import Citations, publication_type
from kg.publish.entries import is_kg_template, person_entry
from kg.publish.fragments import Fragments
from kg.publish.layout import (
    DATASET,
    alternates,
    data_links,
    dump_links,
    owner_path,
    path_of,
    relative_root,
    void_link,
)
from kg.publish.links import work_addresses
from kg.publish.lists import (
    ListRows,
    Row,
    group_text,
    marker_group,
    marker_pairs,
    pair_text,
    spliced,
)
from kg.publish.markup import (
    Referenced,
    article_markup,
    escape_json_for_html,
    profile_script,
    script_tag,
)
from kg.publish.pageenv import PageEnvironment, page_text
from kg.resolve.identity import PublicationEntity, Resolution

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


@dataclass(frozen=True)
class SiteSettings:
    """What a project says about its site (kg.toml) and where its own templates are."""

    title: str = "Researcher profiles"
    description: str = "Researcher profiles published as linked data."
    sparql_endpoint: str | None = None
    templates: Path | None = None  # a project's templates/: its files win over kg's
    thumbnails: tuple[tuple[str, str], ...] = ()  # a local photo's address -> its thumbnail
    look: SiteConfig = field(default_factory=SiteConfig)  # [site]: navigation, colours…
    logo: str | None = None  # the logo's path in the site (content-hashed)

    @property
    def nav(self) -> list[tuple[str, str]]:
        """(label, page) of the header's links, in the order kg.toml gives."""
        shown = [n for n in self.look.nav if n not in DIRECTORIES or n in self.look.directories]
        return [NAV_LINKS[name] for name in shown]


def _environment(
    templates: Path | None = None, sources: dict[str, str] | None = None
) -> Environment:
    """kg's templates behind the project's: a folder, or its `sources` (name -> text)."""
    loaders: list[BaseLoader] = [PackageLoader("kg.publish", "templates")]
    if sources is not None:
        loaders.insert(0, DictLoader(sources))
    elif templates is not None and templates.is_dir():
        loaders.insert(0, FileSystemLoader(str(templates)))
    env = PageEnvironment(  # `{{ value }}` escaped and isolated in one call (kg.publish.pageenv)
        loader=ChoiceLoader(loaders),
        autoescape=select_autoescape(["html", "j2"], default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=isolate,  # bidi controls in data cannot reorder the page (kg.display)
        auto_reload=False,  # one build's templates: no file check on every page
    )
    env.filters["period"] = period
    return env


def _template_sources(templates: Path | None) -> dict[str, str]:
    """Every file under a project's templates/, by its name for Jinja."""
    if templates is None or not templates.is_dir():
        return {}
    sources = {}
    for path in sorted(templates.rglob("*")):
        try:
            sources[path.relative_to(templates).as_posix()] = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):  # a folder, or not a template
            continue
    return sources


def period(start: PartialDate | None, end: PartialDate | Present | None = None) -> str:
    if start is None and end is None:
        return ""
    text = str(start) if start else "?"
    return f"{text} – {end}" if end is not None else text


@dataclass(frozen=True)
class LinkView:
    text: str
    href: str | None
    lang: str | None = None  # the language of a tagged literal (a name in another script)


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
    links: tuple[LinkView, ...] = ()  # DOI, arXiv, PDF, code, slides, video, others
    abstract: str | None = None
    selected: bool = False  # `selected: true` in a listing
    venue_group: str = ""  # the venue without the year (publications by venue)


def _view(
    v: PublicationView,
    authors: tuple[AuthorView, ...],
    venue: str,
    notes: tuple[str, ...],
    equal_note: str | None,
    selected: bool,
) -> PublicationView:
    """`replace(v, authors=..., ...)`, made directly (`replace` looks the fields up)."""
    return PublicationView(
        v.key,
        v.title,
        authors,
        venue,
        v.year,
        v.status,
        notes,
        equal_note,
        v.dated,
        v.links,
        v.abstract,
        selected,
        v.venue_group,
    )


_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_YEAR_TWICE = re.compile(r"\b((?:19|20)\d\d)(?:\s+\1\b)+")
_ARXIV_PRINTED = re.compile(r"^arxiv preprint\s+(arxiv:\s*\S+)", re.I)


def clean_venue(text: str) -> str:
    """A printed venue without a doubled year (`... 2022 2022`) or Google Scholar's
    `arXiv preprint arXiv:...` prefix."""
    text = _YEAR_TWICE.sub(r"\1", " ".join(text.split()))
    match = _ARXIV_PRINTED.match(text)
    if match:
        text = "arXiv:" + match.group(1).split(":", 1)[1].strip()
    return text


ROLE_HEADINGS = {
    "pi": "Principal investigators",
    "faculty": "Faculty",
    "postdoc": "Postdocs",
    "phd": "PhD students",
    "masters": "Master's students",
    "undergrad": "Undergraduates",
    "staff": "Staff",
    "visitor": "Visitors",
    None: "Members",  # people without a `lab_role`
    "alumni": "Alumni",
}


@dataclass(frozen=True)
class MemberView:
    """A person on the members grid."""

    slug: str
    name: str
    headline: str | None
    now_at: str | None
    avatar: str | None  # where the page loads the photo (thumbnail), None: initials
    initials: str
    native_names: tuple = ()  # LocalizedName: the name in other scripts


def initials(name: str) -> str:
    words = [w for w in name.replace("-", " ").split() if w[:1].isalpha()]
    return "".join(w[0].upper() for w in (words[:1] + words[-1:] if len(words) > 1 else words))


DIRECTORIES = {  # file name -> (title, path prefix of the things it lists)
    "organizations": ("Organizations", scheme.path(scheme.ORG, "")),
    "venues": ("Venues", scheme.path(scheme.VENUE, "")),
    "topics": ("Topics", scheme.path(scheme.TOPIC, "")),
}
# the site-wide pages a crawler should find (besides the index and the things' pages)
SITE_PAGES = (
    "publications.html",
    "projects.html",
    "publications-by-venue.html",
    "publications-by-type.html",
    "network.html",
    *(f"{name}.html" for name in DIRECTORIES),
)
TYPE_LABELS = {
    "conference-paper": "Conference papers",
    "journal-article": "Journal articles",
    "workshop-paper": "Workshop papers",
    "preprint": "Preprints",
    "report": "Technical reports",
    "thesis": "Theses",
    "other": "Other works",  # no type given, none inferred (kg.model.inferred_publication_type)
}


def _group(views, key) -> list[tuple[str, list]]:
    groups: dict[str, list] = {}
    for view in views:
        groups.setdefault(key(view), []).append(view)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0].casefold()))


def publication_links(
    pub: PublicationEntity, base: str = "", root: str = ""
) -> tuple[LinkView, ...]:
    """The addresses a reader follows from a paper, each once; labels without an
    address are left out (they are in the graph as `kg:linkLabel`). The site's own
    files (a local PDF) are linked relative to the page at `root`."""
    found = work_addresses(pub)
    found += [(link.label, link.url) for _, listing in pub.listings for link in listing.links]
    seen: dict[str, LinkView] = {}
    for label, url in found:
        if url and url not in seen:
            seen[url] = LinkView(label, within(url, base, root))
    return tuple(seen.values())


def within(url: str, base: str, root: str) -> str:
    """A file of this site (an address under `base`) relative to the page at `root`."""
    if base and url.startswith(scheme.mint(base, scheme.STATIC, "")):
        return root + url[len(base) :]
    return url


# Works' views a process keeps (`SiteBuilder._common_view`), ~1-2 KB each: then the memo
# starts again (a bound on a render worker's memory, decision 0065).
VIEWS_KEPT = 5_000


class SiteBuilder:
    def __init__(
        self,
        resolution: Resolution,
        graph: GraphLike,
        base_iri: str,
        settings: SiteSettings | None = None,
    ) -> None:
        self.r = resolution
        self.graph = graph
        self.base = base_iri
        self.settings = settings or SiteSettings()
        self.env = self._environment(_environment(self.settings.templates))
        self.profiled = {p.slug for p in resolution.dataset.profiles}
        self.citations = Citations(resolution)  # keys, works per person: once, before forks
        self.referenced = Referenced()  # the markup's referenced nodes, once per process
        self.views: dict[tuple[str, str], PublicationView] = {}  # `_common_view`'s

    def _environment(self, env: Environment) -> Environment:
        env.globals["site"] = self.settings
        env.globals["base"] = self.base
        env.globals["photo"] = self.photo
        return env

    def photo(self, url: str, root: str) -> str:
        """Where a page at `root` loads a photo: a local photo's thumbnail, else its
        address."""
        thumb = dict(self.settings.thumbnails).get(url)
        return root + thumb if thumb else within(url, self.base, root)

    def forget_memos(self) -> None:
        """Empty the markup's memo of referenced nodes and articles, the works' views and
        the BibTeX entries (decision 0067)."""
        self.referenced = Referenced()
        self.views = {}
        self.citations.entries = {}

    def __getstate__(self) -> dict:
        """Pickled for a worker that may be on another machine (`kg build --executor
        dask`): the project's templates travel as text and the Jinja environment, which
        cannot be pickled, is made again there; the memos start empty there."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("env", "referenced", "views")}
        state["_templates"] = _template_sources(self.settings.templates)
        return state

    def __setstate__(self, state: dict) -> None:
        sources = state.pop("_templates")
        self.__dict__.update(state)
        self.env = self._environment(_environment(sources=sources))
        self.referenced = Referenced()
        self.views = {}

    # ------------------------------------------------------------ views

    def person_href(self, key: str | None, prefix: str) -> str | None:
        if key not in self.r.persons:
            return None
        return prefix + scheme.page_file(scheme.PERSON, key or "")

    def refs(self, refs: list[PersonRef], prefix: str) -> list[tuple[str, str | None]]:
        return [(ref.name, self.person_href(self.r.person(ref), prefix)) for ref in refs]

    def publication_view(self, pub: PublicationEntity, me: str | None, prefix: str):
        """The work as `me`'s own listing prints it (their marks, venue wording and notes)
        when they list it; else as merged from every listing (docs/mapping.md#listings)."""
        own = next((listing for slug, listing in pub.listings if slug == me), None)
        if own is not None:
            return self.listing_view(pub, own, me, prefix)
        return self._merged_view(pub, me, prefix)

    def _merged_view(self, pub: PublicationEntity, me: str | None, prefix: str):
        """The work as merged from every listing, `me`'s slots marked (`_common_view`'s
        view has the slots of no profiled person marked: `slot.person == None`)."""
        common = self._common_view(pub, prefix)
        if me is None:
            return common
        authors = tuple(
            AuthorView(a.name, a.href, a.equal, slot.person == me, a.annotation)
            for a, slot in zip(common.authors, pub.authors, strict=True)
        )
        c = common
        return _view(c, authors, c.venue, c.notes, c.equal_note, c.selected)

    def _common_view(self, pub: PublicationEntity, prefix: str) -> PublicationView:
        """`_merged_view(pub, None, prefix)`, made once per process (`views`, at most
        `VIEWS_KEPT`): a work is on the page of each of its authors and in their CVs'
        and list pages' views, and the view is read-only (frozen)."""
        found = self.views.get((pub.key, prefix))
        if found is not None:
            return found
        if len(self.views) >= VIEWS_KEPT:
            self.views.clear()
        authors = tuple(
            AuthorView(
                slot.printed[0],
                self.person_href(slot.person, prefix),
                slot.equal_contribution,
                slot.person is None,
                slot.annotation,
            )
            for slot in pub.authors
        )
        venue, venue_group = self.venue_text(pub)
        view = self.views[(pub.key, prefix)] = PublicationView(
            pub.key,
            pub.title,
            authors,
            venue,
            pub.year,
            STATUS_LABELS.get(pub.status, ""),
            pub.notes,
            pub.equal_contribution_note,
            pub.status in STATUSES_WITH_DATE,
            publication_links(pub, self.base, prefix),
            pub.abstract,
            any(listing.selected for _, listing in pub.listings),
            venue_group,
        )
        return view

    def listing_view(
        self,
        pub: PublicationEntity,
        own: Publication,
        me: str | None,
        prefix: str,
        merged: PublicationView | None = None,
    ):
        """One document's version of a work: the merged view with that document's names
        as printed, marks, venue wording (cleaned like list text), notes and legend
        (`merged`: `_merged_view(pub, me, prefix)` when the caller has it)."""
        merged = merged or self._common_view(pub, prefix)  # `me`'s slots: marked here
        authors = tuple(
            AuthorView(
                ref.name, view.href, ref.equal_contribution, slot.person == me, ref.annotation
            )
            for view, ref, slot in zip(merged.authors, own.authors, pub.authors, strict=True)
        )
        venue = clean_venue(own.venue_as_printed) if own.venue_as_printed else merged.venue
        notes = tuple(own.notes)
        return _view(merged, authors, venue, notes, own.equal_contribution_note, own.selected)

    def versions(self, pub: PublicationEntity) -> list[tuple[str, str, PublicationView]]:
        """Each listing's own version, when several documents list the work (they may
        disagree: one marks equal contributors, another does not)."""
        if len(pub.listings) < 2:
            return []
        merged = self._merged_view(pub, None, "../")
        return [
            (slug, self.r.persons[slug].name, self.listing_view(pub, own, None, "../", merged))
            for slug, own in pub.listings
        ]

    def venue_text(self, pub: PublicationEntity) -> tuple[str, str]:
        """How a list prints the venue, the year included (`OSDI '24`, `arXiv:2408.08586`),
        and the venue alone (its group on the by-venue page)."""
        entry = self.r.venues.get(pub.venue) if pub.venue else None
        dated = pub.year if pub.status in STATUSES_WITH_DATE else None
        if entry is not None and entry.kind == "preprint-server":
            name = entry.short_name or entry.name
            return (f"{name}:{pub.arxiv}" if pub.arxiv else name), name
        if entry is not None and entry.short_name:
            year = f" '{dated % 100:02d}" if dated else ""
            return f"{entry.short_name}{year}", entry.short_name
        printed = pub.venue_as_printed[0] if pub.venue_as_printed else ""
        text = clean_venue(printed or (entry.name if entry else ""))
        group = entry.name if entry else _YEAR.sub("", text).strip(" ,") or text
        if dated and str(dated) not in text:
            text = f"{text} {dated}".strip()
        return text, group

    def publications_of(self, slug: str) -> list[PublicationEntity]:
        """Works the person authored or listed, newest first (ties in the resolution's
        order). Taken from `citations.works`, made before the render's workers fork,
        not from an index each process would make over every publication (0078)."""
        order = self._places

        def key(p: PublicationEntity) -> tuple:
            year = p.year if p.status in STATUSES_WITH_DATE else None
            return (year is None, -(year or 0), p.title.casefold(), order[p.key])

        return sorted([pub for pub, _ in self.citations.works.get(slug, ())], key=key)

    @cached_property
    def profiles(self) -> dict[str, Profile]:
        """Each profile by its slug (a page looks its person up, never searches)."""
        return {p.slug: p for p in self.r.dataset.profiles}

    @cached_property
    def _places(self) -> dict[str, int]:
        """Each publication's place in the resolution's order (`publications_of`)."""
        return {key: n for n, key in enumerate(self.r.publications)}

    def by_year(self, pubs: list[PublicationView]) -> list[tuple[str, list]]:
        groups: dict[str, list] = {}
        for pub in pubs:
            groups.setdefault(
                str(pub.year) if pub.year and pub.dated else "Preprints and work in progress",
                [],
            ).append(pub)
        return list(groups.items())

    # ------------------------------------------------------------ pages

    def person_page(
        self,
        profile: Profile,
        entries: Fragments | None = None,
        work: Callable[[PublicationEntity], bytes] | None = None,
    ) -> str:
        """A profiled person's page; `entries`: its publications' entries kept from
        the previous build (`person_entries`; `work`: their keys)."""
        pubs = self.publications_of(profile.slug)
        views = [self.publication_view(p, profile.slug, "../") for p in pubs]
        person = URIRef(scheme.person(self.base, profile.slug))
        profile_iri = URIRef(scheme.profile(self.base, profile.slug))
        script = profile_script(self.graph, person, profile_iri, self.referenced)
        path = scheme.path(scheme.PERSON, profile.slug)
        values = dict(
            p=profile,
            accounts=account_links(profile),
            org=self.org_name,
            refs=lambda rs: self.refs(rs, "../"),
            venues=lambda refs: ", ".join(map(self.venue_name, refs)),
            years=self.by_year(views),
            selected=[v for v in views if v.selected],
            count=len(views),
            network=Markup(coauthor_svg(profile.name, self.coauthors(profile.slug, pubs))),
            chart=Markup(per_year_svg(Counter(p.year for p in pubs if p.year))),
            entry=self.person_entries(entries, work),
            jsonld=Markup(script),
            root="../",
            alternates=alternates(path),
            data=data_links(path, "../"),
            page_path=path,
        )
        if self._kg_person_page:  # kg's own templates: their Python twin (0065)
            return personpage.person_page(self.env, values)
        return self.env.get_template("person.html.j2").render(values)

    @cached_property
    def _kg_person_page(self) -> bool:
        """Whether the person page's templates are kg's files (`kg.publish.personpage`)."""
        return self._kg_templates("person.html.j2", "base.html.j2")

    def _kg_templates(self, *names: str) -> bool:
        """Whether the environment loads kg's own file for each of `names` (a page they
        render may take its Python twin, decision 0065)."""
        return all(is_kg_template(self.env.get_template(name), name) for name in names)

    def publication_page(self, pub: PublicationEntity) -> str:
        view = self.publication_view(pub, None, "../")
        bibtex, plain = self.citations.cite_block(pub)
        venue = self.r.venues[pub.venue] if pub.venue else None
        work = URIRef(scheme.publication(self.base, pub.key))
        markup = article_markup(self.graph, work, self.referenced)
        path = scheme.path(scheme.PUBLICATION, pub.key)
        values = dict(
            pub=view,
            venue=venue,
            # Google Scholar: only a published or accepted work claims a venue, and only a
            # dated status a publication date (a submitted paper has neither)
            scholar_venue=venue if pub.status in STATUSES_WITH_VENUE else None,
            scholar_date=pub.year if pub.status in STATUSES_WITH_DATE else None,
            scholar_pdf=pub.pdf,
            doi=pub.doi,
            arxiv=pub.arxiv,
            page_path=path,
            jsonld=Markup(script_tag(markup)),
            root="../",
            alternates=alternates(path),
            data=data_links(scheme.key_of(path)),
            listed_by=[(s, self.r.persons[s].name) for s, _ in pub.listings],
            versions=self.versions(pub),
            cite_bibtex=bibtex,
            cite_text=plain,
            copy_script=Markup(COPY_SCRIPT),
        )
        if self._kg_publication_page:  # kg's own templates: their Python twin (0065)
            return pubpage.publication_page(self.env, values)
        return self.env.get_template("publication.html.j2").render(values)

    @cached_property
    def _kg_publication_page(self) -> bool:
        """Whether the publication page's templates are kg's files (`kg.publish.pubpage`)."""
        return self._kg_templates("publication.html.j2", "base.html.j2")

    def member_groups(self, profiles: Sequence[Profile]) -> list[tuple[str, list[MemberView]]]:
        """The members by their place in the group (`lab_role`), each group by name."""
        groups: dict[str | None, list[MemberView]] = {role: [] for role in ROLE_HEADINGS}
        for p in sorted(profiles, key=lambda p: p.name.casefold()):
            avatar = self.photo(p.photo, "") if p.photo else None
            view = MemberView(
                p.slug,
                p.name,
                p.headline,
                p.now_at if p.lab_role == "alumni" else None,
                avatar,
                initials(p.name),
                tuple(p.native_names),
            )
            groups[p.lab_role].append(view)
        return [(ROLE_HEADINGS[role], views) for role, views in groups.items() if views]

    def index_page(self) -> str:
        people = sorted(self.r.dataset.profiles, key=lambda p: p.name.casefold())
        chosen = [p for p in self.r.publications.values() if any(x.selected for _, x in p.listings)]
        chosen.sort(key=lambda p: (-(p.year or 0), p.title.casefold()))
        return self.env.get_template("index.html.j2").render(
            people=people,
            groups=self.member_groups(people),
            news=sorted(self.r.dataset.news, key=lambda n: (n.date, n.text), reverse=True)[:10],
            selected=[self.publication_view(p, None, "") for p in chosen],
            publications=len(self.r.publications),
            root="",
            alternates=alternates(DATASET),
            page_path="",
            dumps=dump_links(),
            void=void_link(),
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
        return {page_of(p.slug): self.person_page(p) for p in profiles}

    def publication_pages(self, pubs: Sequence[PublicationEntity]) -> dict[str, str]:
        return {
            scheme.page_file(scheme.PUBLICATION, pub.key): self.publication_page(pub)
            for pub in pubs
        }

    # ------------------------------------------------------------ site-wide pages

    def site_files(
        self,
        paths: Sequence[str],
        keyed: bool = True,
        entries: Fragments | None = None,
        rows: ListRows | None = None,
    ) -> dict[str, str]:
        """Publication lists, the lab's network, search, sitemap, robots.txt, feed;
        `paths`: every thing with a page (for the sitemap). Without `keyed`, the pages
        of `keyed_pages` are left out (the caller has them). `entries`: the list
        pages' entries kept from the previous build (`list_entries`); `rows`: the
        publications' rows kept by what they are made of (`kg.publish.lists`), used
        when the list page is kg's own (`kg_lists`)."""
        pubs = sorted(self.r.publications.values(), key=lambda p: p.title.casefold())
        by_type = {
            p.key: p.type or publication_type(self.r, p.venue, p.status) or "other" for p in pubs
        }
        if rows is not None and self.kg_lists:
            lists, search = self._lists_from_rows(pubs, by_type, rows)
        else:
            views = {p.key: self.publication_view(p, None, "") for p in pubs}
            entry = self.list_entries(entries)
            lists = {
                path: self.list_page(title, views, grouping, entry)
                for path, (title, grouping) in self._groupings(by_type).items()
            }
            search = search_index(self)
        pages = self.keyed_pages(paths) if keyed else {}
        files = {
            **lists,
            **{path: render() for path, (_, render) in pages.items()},
            "search.html": self.render("search.html.j2", "search.html"),
            "search-index.js": search,
            "search.js": SEARCH_SCRIPT,
            "sitemap.xml": sitemap(self.base, ["", *paths, *self.site_pages]),
            "robots.txt": robots(self.base),
            "feed.xml": atom_feed(self),
        }
        return files

    def _groupings(self, by_type: dict[str, str]) -> dict[str, tuple[str, Callable]]:
        """Each list page: its title and how it groups the views (or rows)."""
        return {
            "publications.html": ("Publications by year", self.by_year),
            "publications-by-venue.html": (
                "Publications by venue",
                lambda vs: _group(vs, lambda v: v.venue_group or "No venue"),
            ),
            "publications-by-type.html": (
                "Publications by type",
                lambda vs: _group(vs, lambda v: TYPE_LABELS.get(by_type[v.key], by_type[v.key])),
            ),
        }

    @cached_property
    def kg_lists(self) -> bool:
        """Whether the list pages are kg's `list.html.j2` (made from rows, 0074)."""
        return self._kg_templates("list.html.j2", "base.html.j2")

    def _lists_from_rows(
        self, pubs: list[PublicationEntity], by_type: dict[str, str], rows: ListRows
    ) -> tuple[dict[str, str], str]:
        """The list pages and the search index from the publications' rows: a row kept
        by the previous build when its key is the same, else made from the view."""
        entry = self.list_entries()
        made = [rows.row(p, partial(self._row, p, entry)) for p in pubs]
        lists = {
            path: self._list_text(title, path, made, grouping)
            for path, (title, grouping) in self._groupings(by_type).items()
        }
        by_key = {row.key: row.search for row in made}
        papers = [by_key[p.key] for p in sorted(pubs, key=lambda p: p.key)]
        return lists, search_index(self, papers)

    def _row(self, pub: PublicationEntity, entry: Callable[[PublicationView], Markup]) -> Row:
        view = self.publication_view(pub, None, "")
        search = _json_object(_search_item(pub))
        return Row(
            pub.key, pub.title, pub.year, view.dated, view.venue_group, str(entry(view)), search
        )

    def _list_text(self, title: str, path: str, rows: list[Row], grouping: Callable) -> str:
        """`list_page` of the rows: the page rendered with a marker group, the marker's
        text replaced by the groups' (`kg.publish.lists.group_text`)."""
        ordered = sorted(rows, key=lambda v: (-(v.year or 0), v.title.casefold()))
        count = len(rows)
        page = self.render(
            "list.html.j2", path, title=title, groups=marker_group(), count=count, entry=None
        )
        groups = grouping(ordered)
        made = spliced(page, group_text(marker_group()), group_text(groups))
        if made is None:  # not kg's text after all: its loop renders them
            return self.render(
                "list.html.j2", path, title=title, groups=groups, count=count, entry=_row_entry
            )
        return made

    def keyed_pages(self, paths: Sequence[str]) -> dict[str, tuple[str, Callable[[], str]]]:
        """The site-wide pages made from a small part of the resolution (the network,
        the projects, the directories): each page's key (a digest of what the page is
        made from and of the site's settings; the caller adds kg's code and the
        project's templates) and how to render it (decision 0055)."""
        network = self._network()
        pages: dict[str, tuple[object, Callable[[], str]]] = {
            "network.html": (network, partial(self._network_page, *network)),
            "projects.html": self._page(
                "projects.html.j2", "projects.html", projects=self._projects()
            ),
            **{
                f"{name}.html": self._page(
                    "directory.html.j2", f"{name}.html", **self._directory(name, paths)
                )
                for name in self.directories
            },
        }
        settings = repr(self.settings)
        return {
            path: (digest(self.base, settings, path, repr(made_of)), render)
            for path, (made_of, render) in pages.items()
        }

    def _page(self, template: str, path: str, **values) -> tuple[object, Callable[[], str]]:
        """A page made from `values` only: (what it is made of, how to render it)."""
        return (template, sorted(values.items())), partial(self.render, template, path, **values)

    @property
    def directories(self) -> list[str]:
        """The directory pages the project keeps (`[site] directories`)."""
        return [d for d in DIRECTORIES if d in self.settings.look.directories]

    @property
    def site_pages(self) -> list[str]:
        gone = {f"{d}.html" for d in DIRECTORIES if d not in self.directories}
        return [p for p in SITE_PAGES if p not in gone]

    def _directory(self, name: str, paths: Sequence[str]) -> dict:
        title, prefix = DIRECTORIES[name]
        entries = []
        for path in paths:
            if path.startswith(prefix):
                label = self.graph.value(URIRef(scheme.mint(self.base, path)), SCHEMA.name)
                entries.append((str(label) if label else path, f"{path}.html"))
        others = [(DIRECTORIES[o][0], f"{o}.html") for o in self.directories if o != name]
        entries.sort(key=lambda e: e[0].casefold())
        return {"title": title, "entries": entries, "others": others}

    def render(self, template: str, path: str, **values) -> str:
        return self.env.get_template(template).render(
            root="", alternates=[], page_path=path, **values
        )

    def list_page(
        self,
        title: str,
        views: dict,
        grouping,
        entry: Callable[[PublicationView], Markup] | None = None,
    ) -> str:
        """A list page of `views` in the groups `grouping` makes; `entry`: how the page
        shows one view (`list_entries`, shared by the pages that show the same views)."""
        ordered = sorted(views.values(), key=lambda v: (-(v.year or 0), v.title.casefold()))
        groups = grouping(ordered)
        path = {
            "Publications by year": "publications.html",
            "Publications by venue": "publications-by-venue.html",
            "Publications by type": "publications-by-type.html",
        }[title]
        entry = entry or self.list_entries()
        return self.render(
            "list.html.j2", path, title=title, groups=groups, count=len(views), entry=entry
        )

    def list_entries(self, kept: Fragments | None = None) -> Callable[[PublicationView], Markup]:
        """A list page's entry for a publication view (`list-entry.html.j2`), rendered
        once per view: the three list pages show the same entries (decision 0059);
        with `kept`, an entry the previous build rendered for an equal view is not
        rendered again (decision 0062)."""
        template = self.env.get_template("list-entry.html.j2")
        made: dict[int, tuple[PublicationView, Markup]] = {}  # by id: the view is held

        def entry(view: PublicationView) -> Markup:
            found = made.get(id(view))
            if found is None:
                render = partial(template.render, pub=view)
                text = render() if kept is None else kept.text(view, render)
                found = made[id(view)] = (view, Markup(text))
            return found[1]

        return entry

    def person_entries(
        self,
        kept: Fragments | None = None,
        work: Callable[[PublicationEntity], bytes] | None = None,
    ) -> Callable[[PublicationView], Markup]:
        """A person page's entry for a publication view (`person-entry.html.j2`); with
        `kept`, one the previous build rendered for an equal view is not rendered
        again (decision 0062). With `work` too (one person's page: its views are
        `publication_view(pub, slug, "../")`, a function of what `work(pub)` digests
        and the settings), the kept entry is found by that digest, not the view's
        (decision 0078)."""
        template = self.env.get_template("person-entry.html.j2")
        own = is_kg_template(template, "person-entry.html.j2")  # kg's: its Python twin (0065)
        pubs = self.r.publications

        def render(view: PublicationView) -> str:
            return person_entry(view) if own else template.render(pub=view)

        def entry(view: PublicationView) -> Markup:
            if kept is None:
                return Markup(render(view))
            if work is not None:
                return Markup(kept.keyed(b"p" + work(pubs[view.key]), partial(render, view)))
            return Markup(kept.text(view, partial(render, view)))

        return entry

    def _network(self) -> tuple[list[str], list[tuple[int, int, int]], list[str]]:
        """What the network page shows: the profiled people's names (by name), the pairs
        of them with shared papers (and how many), their pages."""
        profiles = sorted(self.r.dataset.profiles, key=lambda p: p.name.casefold())
        index = {p.slug: i for i, p in enumerate(profiles)}
        shared: Counter[tuple[int, int]] = Counter()
        for pub in self.r.publications.values():
            here = sorted({index[a.person] for a in pub.authors if a.person in index})
            for i, a in enumerate(here):
                for b in here[i + 1 :]:
                    shared[(a, b)] += 1
        pairs = [(a, b, n) for (a, b), n in sorted(shared.items())]
        return [p.name for p in profiles], pairs, [page_of(p.slug) for p in profiles]

    def _network_page(
        self, names: list[str], pairs: list[tuple[int, int, int]], pages: list[str]
    ) -> str:
        named = [(names[a], names[b], n) for a, b, n in pairs]
        figure = Markup(network_svg(names, pairs, pages))
        render = partial(self.render, "network.html.j2", "network.html", figure=figure)
        if not self._kg_templates("network.html.j2", "base.html.j2"):
            return render(people=len(names), pairs=named)
        page = render(people=len(names), pairs=marker_pairs())  # its loop's text, in Python
        made = spliced(page, pair_text(marker_pairs()), pair_text(named))
        return render(people=len(names), pairs=named) if made is None else made

    def _projects(self) -> list[dict]:
        """The lab's projects (one entry per name across profiles): description, members
        and the papers about them."""
        found: dict[str, dict] = {}
        for p in sorted(self.r.dataset.profiles, key=lambda p: p.name.casefold()):
            for x in p.projects:
                entry = found.setdefault(
                    text_key(x.name),
                    {"name": x.name, "description": None, "members": [], "papers": {}},
                )
                entry["description"] = entry["description"] or x.description
                entry["members"].append(LinkView(p.name, scheme.page_file(scheme.PERSON, p.slug)))
                for title in filter(None, (x.publication, *x.publications)):
                    key = self.r.publication_titled(title)
                    entry["papers"][key] = LinkView(
                        self.r.publications[key].title, scheme.page_file(scheme.PUBLICATION, key)
                    )
        return sorted(found.values(), key=lambda e: e["name"].casefold())

    # ------------------------------------------------------------ readable summaries

    @cached_property
    def related(self) -> dict[str, list[tuple[str, LinkView, str]]]:
        """`org/<key>` or `venue/<key>` -> (section, link, note): the lab's people at an
        organization, its papers at a venue and who served it (one pass, then looked up)."""
        found: dict[str, list[tuple[str, LinkView, str]]] = {}
        for pub in sorted(self.r.publications.values(), key=lambda p: (-(p.year or 0), p.title)):
            if pub.venue:
                link = LinkView(pub.title, "../" + scheme.page_file(scheme.PUBLICATION, pub.key))
                found.setdefault(scheme.path(scheme.VENUE, pub.venue), []).append(
                    ("Papers", link, str(pub.year or ""))
                )
        for p in sorted(self.r.dataset.profiles, key=lambda p: p.name.casefold()):
            me = LinkView(p.name, "../" + scheme.page_file(scheme.PERSON, p.slug))
            for e in p.education:
                note = ", ".join(x for x in (e.degree or "Student", period(e.start, e.end)) if x)
                found.setdefault(scheme.path(scheme.ORG, self.r.org(e.institution)), []).append(
                    ("People", me, note)
                )
            for x in p.positions:
                note = ", ".join(y for y in (x.role or "", period(x.start, x.end)) if y)
                for ref in filter(None, (x.organization, x.unit)):
                    found.setdefault(scheme.path(scheme.ORG, self.r.org(ref)), []).append(
                        ("People", me, note)
                    )
            for sv in p.service:
                for ref in sv.venues:
                    key, year = self.r.venue(ref)
                    note = f"{sv.role} {sv.year or year or ''}".strip()
                    found.setdefault(scheme.path(scheme.VENUE, key), []).append(
                        ("Service", me, note)
                    )
        return found

    def summary(self, path: str) -> list[tuple[str, list[tuple[LinkView, str]]]]:
        """The sections a visitor reads first on an organization's or a venue's page."""
        sections: dict[str, list[tuple[LinkView, str]]] = {}
        for section, link, note in self.related.get(path, []):
            sections.setdefault(section, []).append((link, note))
        return list(sections.items())

    def about(self, path: str) -> list[LinkView]:
        """What the registry says of an organization or venue, in words and links."""
        kind, _, key = path.partition("/")
        facts: list[LinkView] = []
        if kind == "venue" and key in self.r.venues:
            v = self.r.venues[key]
            facts.append(LinkView(v.kind.replace("-", " ").capitalize(), None))
            if v.short_name:
                facts.append(LinkView(f"Short name: {v.short_name}", None))
            if v.publisher:
                publisher = self.r.org(v.publisher)
                facts.append(LinkView(self.org_name(v.publisher), f"../org/{publisher}.html"))
            if v.homepage:
                facts.append(LinkView("Homepage", v.homepage))
            if v.dblp:
                facts.append(LinkView("dblp", f"https://dblp.org/db/{v.dblp}/"))
        elif kind == "org" and key in self.r.organizations:
            o = self.r.organizations[key]
            facts.append(LinkView(o.kind.replace("-", " ").capitalize(), None))
            if o.location:
                facts.append(LinkView(o.location, None))
            if o.parent:
                facts.append(LinkView(f"Part of {self.org_name(o.parent)}", None))
            if o.homepage:
                facts.append(LinkView("Homepage", o.homepage))
            if o.ror:
                facts.append(LinkView("ROR", f"https://ror.org/{o.ror}"))
            if o.wikidata:
                facts.append(LinkView("Wikidata", f"https://www.wikidata.org/wiki/{o.wikidata}"))
        return facts

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
        readable = path.startswith(("org/", "venue/"))
        return self.env.get_template("thing.html.j2").render(
            about=self.about(path) if readable else [],
            summary=self.summary(path) if readable else [],
            title=links.label(thing, description),
            kinds=", ".join(links.kinds(thing, description)),
            sections=sections,
            referrers=links.referrers(set(own), description),
            root=links.root,
            alternates=alternates(path),
            page_path=path,
        )


@dataclass(frozen=True)
class SectionView:
    anchor: str
    title: str
    facts: list[tuple[str, list[LinkView]]]


# a linked node's label, in order (a role, e.g. a reviewer of a venue, by its role name)
LABELS = (SCHEMA.name, FOAF.name, DCTERMS.title, RDFS.label, SCHEMA.roleName)


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
            for p in LABELS:
                value = source.value(node, p)
                if value is not None:
                    return str(value)
        if not str(node).startswith(self.base):
            return str(node)  # an address elsewhere (dblp, ROR): shown as it is
        return str(node).rsplit("/", 1)[-1]

    def kinds(self, node, description: Triples) -> list[str]:
        return sorted(curie(str(t)) or str(t) for t in description.objects(node, RDF.type))

    def value(self, node, description: Triples) -> LinkView:
        if isinstance(node, URIRef):
            return LinkView(self.label(node, description), self.href(str(node)))
        return LinkView(str(node), None, getattr(node, "language", None))

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
                iri = URIRef(scheme.mint(self.base, owner)) if owner else s
                found.setdefault(str(iri), self.value(iri, description))
        return sorted(found.values(), key=_by_text)


def _by_text(view: LinkView) -> tuple[str, str]:
    return view.text.casefold(), view.href or ""


# ---------------------------------------------------------------- figures

FIGURE_WIDTH = 360  # viewBox units: about 1 px per unit on a phone, so 13 is 13 px there
FONT = 13


def text_width(text: str, size: float = FONT) -> float:
    """A generous estimate of the width of `text` in a sans-serif font."""
    wide = sum(1 for c in text if unicodedata.east_asian_width(c) in "WF")
    return size * (0.62 * (len(text) - wide) + 1.0 * wide)


def fit(text: str, width: float, size: float = FONT) -> str:
    """`text`, cut with an ellipsis to fit `width`."""
    if text_width(text, size) <= width:
        return text
    while text and text_width(text + "…", size) > width:
        text = text[:-1]
    return text.rstrip() + "…"


def _svg_open(
    width: float, height: float, title_id: str, title: str, cls: str, role: str = "img"
) -> str:
    """`role="img"` for a picture; `group` for one with links inside (an image cannot
    contain controls)."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:g} {height:g}" '
        f'role="{role}" aria-labelledby="{title_id}" class="figure {cls}">\n'
        f'<title id="{title_id}">{escape(isolate(title))}</title>'
    )


def coauthor_svg(name: str, coauthors: list[tuple[str, int]], limit: int = 15) -> str:
    """The most frequent co-authors as ranked bars: names never run past the edge or
    into each other (one row each), and the full list is in the accessible name."""
    shown = coauthors[:limit]
    row, label_w, top = 24, 170, 8
    if not shown:
        alone = Markup(f"{page_text(name)} has no co-authors")
        return _svg_open(FIGURE_WIDTH, 40, "net-title", alone, "coauthors") + "</svg>"
    most = max(n for _, n in shown)
    height = top + row * len(shown) + 4
    # each name escaped and isolated as `Markup.format` does it (`page_text`), joined
    title = Markup(
        f"Co-authors of {page_text(name)}: {len(coauthors)} people"
        + (f", the {len(shown)} most frequent shown" if len(coauthors) > limit else "")
        + ". "
        + "; ".join(f"{page_text(other)}: {n}" for other, n in shown)
    )
    parts = [_svg_open(FIGURE_WIDTH, height, "net-title", title, "coauthors")]
    bar_room = FIGURE_WIDTH - label_w - 8 - text_width("99")
    for i, (other, shared) in enumerate(shown):
        y = top + i * row
        w = max(2.0, bar_room * shared / most)
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 16}" text-anchor="end" font-size="{FONT}" '
            f'fill="#1b1b1b">{page_text(fit(other, label_w - 8))}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="16" fill="#1f4e8c" />'
            f'<text x="{label_w + w + 4:.1f}" y="{y + 16}" font-size="{FONT}" '
            f'fill="#1b1b1b">{shared}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def per_year_svg(counts: Counter) -> str:
    """Publications per year as a bar chart, with room above the tallest bar's value."""
    years = sorted(counts)
    if not years:
        return (
            _svg_open(FIGURE_WIDTH, 40, "chart-title", "No dated publications", "chart") + "</svg>"
        )
    span = list(range(years[0], years[-1] + 1))
    top, height, bottom, left = 22, 150, 24, 6
    slot = (FIGURE_WIDTH - 2 * left) / len(span)
    bar = slot * 0.7
    every = max(1, math.ceil(text_width("2024") / slot))  # year labels that do not touch
    most = max(counts.values())
    title = "Publications per year: " + ", ".join(f"{y}: {counts.get(y, 0)}" for y in span)
    parts = [_svg_open(FIGURE_WIDTH, top + height + bottom, "chart-title", title, "chart")]
    for i, year in enumerate(span):
        n = counts.get(year, 0)
        h = height * n / most
        x = left + i * slot + (slot - bar) / 2
        base = top + height
        parts.append(
            f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
            f'fill="#1f4e8c" />'
        )
        if n:
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{base - h - 5:.1f}" text-anchor="middle" '
                f'font-size="{FONT}" fill="#1b1b1b">{n}</text>'
            )
        if i % every == 0:
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{base + 17}" text-anchor="middle" '
                f'font-size="{FONT}" fill="#1b1b1b">{year}</text>'
            )
    parts.append("</svg>")
    return "\n".join(parts)


def network_svg(
    people: list[str], pairs: list[tuple[int, int, int]], hrefs: list[str] | None = None
) -> str:
    """The lab's co-author network as an arc diagram: one row per person (names never
    shrink or overlap, from 3 people to 100: the figure grows a row each), an arc on
    the right joining two who wrote papers together (its width: how many). People are
    ordered so that collaborators sit near each other (breadth-first from the most
    connected). With `hrefs`, each name links to the person's page."""
    order = _network_order(len(people), pairs)
    row, top, label_w = 24, 8, 200
    x0 = label_w + 6
    room = FIGURE_WIDTH - x0 - 4  # how far an arc may bulge
    height = top + row * max(len(people), 1) + 4
    at = {person: top + i * row + 12 for i, person in enumerate(order)}
    title = f"Co-author network of {len(people)} people: " + "; ".join(
        f"{people[a]} and {people[b]}: {n}" for a, b, n in pairs
    )
    role = "img" if hrefs is None else "group"
    parts = [_svg_open(FIGURE_WIDTH, height, "lab-title", title, "network", role)]
    span = max(len(people) - 1, 1)
    for a, b, n in sorted(pairs, key=lambda p: -abs(at[p[0]] - at[p[1]])):
        y1, y2 = sorted((at[a], at[b]))
        bulge = max(6.0, room * (y2 - y1) / (row * span))
        parts.append(
            f'<path d="M{x0} {y1} A{bulge:.1f} {(y2 - y1) / 2:.1f} 0 0 1 {x0} {y2}" '
            f'fill="none" stroke="#6b7a90" stroke-width="{min(1 + n, 6)}" />'
        )
    for person in order:
        y = at[person]
        label = (
            f'<circle cx="{x0}" cy="{y}" r="4" fill="#1f4e8c" />'
            f'<text x="{label_w}" y="{y + 4}" text-anchor="end" font-size="{FONT}" '
            f'fill="#1b1b1b">{escape(isolate(fit(people[person], label_w - 4)))}</text>'
        )
        if hrefs is not None:
            label = f'<a href="{escape(hrefs[person])}">{label}</a>'
        parts.append(label)
    parts.append("</svg>")
    return "\n".join(parts)


def _network_order(count: int, pairs: list[tuple[int, int, int]]) -> list[int]:
    """People breadth-first from the most connected, strongest ties first; people
    without co-authors here at the end."""
    ties: dict[int, dict[int, int]] = {i: {} for i in range(count)}
    for a, b, n in pairs:
        ties[a][b] = ties[b][a] = n
    order: list[int] = []
    seen: set[int] = set()
    by_degree = sorted(range(count), key=lambda i: (-sum(ties[i].values()), i))
    for start in by_degree:
        if start in seen or not ties[start]:
            continue
        queue = [start]
        seen.add(start)
        while queue:
            person = queue.pop(0)
            order.append(person)
            for other in sorted(ties[person], key=lambda o: (-ties[person][o], o)):
                if other not in seen:
                    seen.add(other)
                    queue.append(other)
    return order + [i for i in range(count) if i not in seen]


# ---------------------------------------------------------------- site-wide files

SEARCH_SCRIPT = """// kg site search: the prebuilt index (search-index.js), no requests; works from file://
(function () {
  var input = document.getElementById("q"), list = document.getElementById("results");
  var count = document.getElementById("count"), items = window.KG_SEARCH || [];
  document.getElementById("search").addEventListener("submit", function (e) {
    e.preventDefault();
  });
  function fold(s) { return s.normalize("NFKD").replace(/[\\u0300-\\u036f]/g, "").toLowerCase(); }
  function show() {
    var words = fold(input.value).split(/\\s+/).filter(Boolean);
    list.textContent = "";
    if (!words.length) { count.textContent = ""; return; }
    var found = items.filter(function (item) {
      var text = fold(item.text);
      return words.every(function (w) { return text.indexOf(w) >= 0; });
    });
    count.textContent = found.length + " found";
    found.slice(0, 100).forEach(function (item) {
      var li = document.createElement("li"), a = document.createElement("a");
      var bdi = document.createElement("bdi");
      a.href = item.href; bdi.textContent = item.title; a.appendChild(bdi);
      li.appendChild(a); li.appendChild(document.createTextNode(" (" + item.kind + ")"));
      list.appendChild(li);
    });
  }
  input.addEventListener("input", show);
  var q = new URLSearchParams(location.search).get("q");
  if (q) { input.value = q; }
  show();
})();
"""


def page_of(slug: str) -> str:
    """A profiled person's page, relative to the web root."""
    return scheme.page_file(scheme.PERSON, slug)


def search_index(builder: SiteBuilder, papers: list[str] | None = None) -> str:
    """People and papers as a script that sets `window.KG_SEARCH` (a file:// page can
    load a script, not fetch JSON). `papers`: the papers' objects (`_json_object`), by
    key, when the caller has them (`kg.publish.lists.Row.search`)."""
    people = [
        {
            "kind": "person",
            "title": p.name,
            "href": page_of(p.slug),
            "text": " ".join([p.name, *p.alternate_names, *(n.name for n in p.native_names)]),
        }
        for p in builder.r.dataset.profiles
    ]
    if papers is None:
        pubs = sorted(builder.r.publications.values(), key=lambda p: p.key)
        papers = [_json_object(_search_item(pub)) for pub in pubs]
    text = _json_array([*map(_json_object, people), *papers])
    return f"window.KG_SEARCH = {escape_json_for_html(text)};\n"


def _search_item(pub: PublicationEntity) -> dict[str, str]:
    authors = " ".join(slot.printed[0] for slot in pub.authors)
    return {
        "kind": "paper",
        "title": pub.title,
        "href": scheme.page_file(scheme.PUBLICATION, pub.key),
        "text": f"{pub.title} {authors} {pub.year or ''}",
    }


def indented_json(items: list[dict[str, str]]) -> str:
    """`json.dumps(items, ensure_ascii=False, sort_keys=True, indent=0)` of a list of
    flat objects of strings, made with the C string encoder (json's `indent` takes its
    pure-Python encoder, ten times slower: decision 0059)."""
    return _json_array(list(map(_json_object, items)))


def _json_array(objects: list[str]) -> str:
    """`indented_json`'s list of these objects' texts."""
    return "[\n" + ",\n".join(objects) + "\n]" if objects else "[]"


def _json_object(item: dict[str, str]) -> str:
    """One object of `indented_json`'s list."""
    if not item:
        return "{}"
    return "{\n" + ",\n".join(f"{_string(k)}: {_string(item[k])}" for k in sorted(item)) + "\n}"


def _row_entry(row: Row) -> Markup:
    return Markup(row.entry)


def sitemap(base: str, paths: Sequence[str]) -> str:
    locs = (escape(scheme.mint(base, p)) for p in sorted(paths))
    urls = "".join(f"  <url><loc>{loc}</loc></url>\n" for loc in locs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{urls}</urlset>\n"
    )


def robots(base: str) -> str:
    return f"User-agent: *\nAllow: /\nSitemap: {scheme.mint(base, 'sitemap.xml')}\n"


def _xml(text: str) -> str:
    """Escaped XML text with bidi controls as character references (feed readers show
    them the same, a text editor opening the feed is not reordered)."""
    return "".join(f"&#x{ord(c):04X};" if c in BIDI_CONTROLS else c for c in escape(text))


def atom_feed(builder: SiteBuilder, limit: int = 50) -> str:
    """The newest publications (by year, then title) as an Atom feed."""
    base, settings = builder.base, builder.settings
    pubs = sorted(
        builder.r.publications.values(), key=lambda p: (-(p.year or 0), p.title.casefold())
    )[:limit]
    newest = max((p.year or 1970 for p in pubs), default=1970)
    entries = []
    for pub in pubs:
        iri = escape(scheme.publication(base, pub.key))
        authors = "".join(
            f"<author><name>{_xml(s.printed[0])}</name></author>" for s in pub.authors[:10]
        )
        entries.append(
            f"<entry><id>{iri}</id><title>{_xml(pub.title)}</title>"
            f'<link href="{iri}"/><updated>{pub.year or 1970:04d}-01-01T00:00:00Z</updated>'
            f"{authors}</entry>\n"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f"<id>{escape(base)}feed.xml</id><title>{_xml(settings.title)}: publications</title>\n"
        f'<link href="{escape(base)}"/><link rel="self" href="{escape(base)}feed.xml"/>\n'
        f"<updated>{newest:04d}-01-01T00:00:00Z</updated>\n" + "".join(entries) + "</feed>\n"
    )
