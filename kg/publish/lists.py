"""The site's whole-list pages made from rows kept by publication (decision 0074).

The three publication list pages and the search index show every publication; after an
edit almost every one of them shows what it showed before. A `Row` is what those pages
take of one publication: the sort and group keys, the list entry's text
(`list-entry.html.j2` for its view) and its search index object. Rows are kept between
builds (one signed entry of the render cache) under a key of what they are made of.

Invariant: a row is a function of its key. The key is a digest of the settings digest
(`kg.publish.fingerprint.settings_digest`: kg's code and templates, the project's
settings, templates and registries, so the venues a view names), the site's settings
(`repr(SiteSettings)`: the globals a project's entry template may read), the
publication's record digest (`record_digest`: a digest of its whole value, pickled
without a memo: equal digests mean equal records) and which of its author slots name a
person of the resolution (the only other thing its view reads: `person_href`). A
publication without a record digest gets a row made, never a kept one. So a page made
from kept rows is the page made from every view (tests/test_lists.py compares them).

The pages are assembled without Jinja's loop over every entry when the project uses
kg's own `list.html.j2`: the template is rendered with one marker group, and the
marker's group is replaced by the groups' text, which is what the template's loop
writes (`group_text`). A project's own `list.html.j2` is rendered as before. The
network page's list of pairs is written the same way (`pair_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from kg.cache import digest
from kg.publish.pageenv import page_text

__all__ = [
    "MARKER",
    "ListRows",
    "Row",
    "group_text",
    "marker_group",
    "marker_pairs",
    "pair_text",
    "spliced",
]

MARKER = "kg-list-groups-marker"  # a group's name no page shows (ASCII: escaped as is)


class Row(NamedTuple):
    """What the whole-list pages take of one publication."""

    key: str  # the publication's key
    title: str
    year: int | None
    dated: bool  # the year is a publication date (`PublicationView.dated`)
    venue_group: str
    entry: str  # `list-entry.html.j2` for the publication's view
    search: str  # its object in the search index (`kg.publish.site.indented_json`'s)


class ListRows:
    """The rows kept by the previous build (`kept`), and those this build used (`made`,
    by key: what the next build keeps). `record`: a publication's record digest
    (`kg.publish.fingerprint`), None when it has none."""

    def __init__(
        self,
        kept: object,
        settings: str,
        record: Callable[[str], bytes | None],
        persons: Mapping[str, object],
    ) -> None:
        self.kept: dict[str, Row] = kept if isinstance(kept, dict) else {}
        self.settings = settings
        self.record = record  # a publication's record digest, by its key
        self.persons = persons
        self.made: dict[str, Row] = {}
        self.new = 0  # rows made this build (not taken from `kept`)

    def row(self, pub: object, make: Callable[[], Row]) -> Row:
        """The publication's row: the kept one under its key, else `make()`."""
        key = self.key(pub)
        if key is None:
            self.new += 1
            return make()
        found = self.kept.get(key)
        if type(found) is not Row:
            found = make()
            self.new += 1
        self.made[key] = found
        return found

    def key(self, pub: object) -> str | None:
        record = self.record(pub.key)  # type: ignore[attr-defined]
        if record is None:
            return None
        persons = self.persons
        slots = bytes(s.person in persons for s in pub.authors)  # type: ignore[attr-defined]
        return digest(self.settings, record, slots)

    def changed(self) -> bool:
        """Whether the rows to keep differ from the kept ones."""
        return self.new > 0 or self.made.keys() != self.kept.keys()


def marker_group() -> list[tuple[str, list]]:
    """The groups a list page is rendered with to find where its groups go."""
    return [(MARKER, [])]


def group_text(groups: Iterable[tuple[str, list[Row]]]) -> str:
    """What kg's `list.html.j2` writes for `groups` (its loop, trim_blocks and
    lstrip_blocks applied): each group's heading and its entries in a list."""
    out: list[str] = []
    for name, rows in groups:
        out += ("<h2>", page_text(name), '</h2>\n<ol class="pubs">\n')
        out += [row.entry for row in rows]
        out.append("</ol>\n")
    return "".join(out)


def spliced(page: str, marker_text: str, text: str) -> str | None:
    """`page` (rendered with the marker's group or pair) with the marker's text replaced
    by `text`; None when the page does not hold it once (not kg's loop after all: the
    caller renders the page with its template's own loop)."""
    head, found, tail = page.partition(marker_text)
    if not found or MARKER in tail:
        return None
    return head + text + tail


def marker_pairs() -> list[tuple[str, str, int]]:
    """The pairs the network page is rendered with to find where its pairs go."""
    return [(MARKER, MARKER, 1)]


def pair_text(pairs: Iterable[tuple[str, str, int]]) -> str:
    """What kg's `network.html.j2` writes for its pairs (one line each)."""
    t = page_text
    return "".join(
        f"  <li><bdi>{t(a)}</bdi> and <bdi>{t(b)}</bdi>: {n} paper{'s' if n != 1 else ''}</li>\n"
        for a, b, n in pairs
    )
