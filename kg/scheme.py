"""The IRI scheme: every IRI kg mints under the configured base, and the way back.

Invariant: an IRI kg mints is `base + path`, and `path` is made here and only here
(`path`, `mint` and the named helpers); every reading of a path back into its kind and key
is `parse` / `path_of` here. No other module concatenates the base with a path or spells a
kind followed by `/` (tests/test_scheme.py checks this with ast), so changing the scheme
(a kind's name, a separator) is a change to this file.

The kinds are the things with a page (`kg.publish.layout`): `person/<slug>`,
`profile/<slug>`, `publication/<key>`, `org/<key>`, `venue/<key>`, `topic/<slug>`,
`topic-set/<slug>`, `course/<org>/<slug>`; `dataset` (the VoID description) and `sparql`
(the endpoint) are single names. Nodes minted under a thing extend its path
(`person/<slug>/award/1`, `venue/<key>/2024`).
"""

from __future__ import annotations

PERSON = "person"
PROFILE = "profile"
PUBLICATION = "publication"
ORG = "org"
VENUE = "venue"
TOPIC = "topic"
TOPIC_SET = "topic-set"
COURSE = "course"
DATASET = "dataset"  # the VoID dataset: {base}dataset, site/dataset.* and site/void.ttl
SPARQL = "sparql"  # the SPARQL endpoint: {base}sparql
VOID = "void"  # the VoID description as a file: void.ttl at the top and the web root
STATIC = "static"  # the project's static files in the web root (kg/publish/assets.py)
DUMP = "graph"  # the whole graph: graph.ttl ... at the top of the output and the web root
KINDS = (PERSON, PROFILE, PUBLICATION, ORG, VENUE, TOPIC, TOPIC_SET, COURSE, DATASET)
# The things with pages, by the number of path segments after their kind (decision 0011):
# `dataset`, `person/<slug>`, `course/<org>/<slug>`; in the order the server rules try them.
PAGE_SEGMENTS = {
    DATASET: 0,
    PERSON: 1,
    PUBLICATION: 1,
    ORG: 1,
    VENUE: 1,
    TOPIC: 1,
    TOPIC_SET: 1,
    PROFILE: 1,
    COURSE: 2,
}


def path(*parts: str | int) -> str:
    """The path of a node below the base: `path("person", "x", "award", 1)` is
    `person/x/award/1`."""
    return "/".join(map(str, parts))


def mint(base: str, *parts: str | int) -> str:
    """The IRI `base + path(*parts)`."""
    return base + path(*parts)


def person(base: str, slug: str) -> str:
    return mint(base, PERSON, slug)


def profile(base: str, slug: str) -> str:
    """The person's profile page (a schema:ProfilePage about `person(base, slug)`)."""
    return mint(base, PROFILE, slug)


def publication(base: str, key: str) -> str:
    return mint(base, PUBLICATION, key)


def dataset(base: str, *rest: str) -> str:
    """The dataset (`dataset(base)`) or a node under it (`dataset(base, "class", "x")`)."""
    return mint(base, DATASET, *rest)


def under(iri: str, *parts: str | int) -> str:
    """A node minted under `iri` (itself minted here): `iri/part/...`."""
    return iri + "/" + path(*parts)


def path_of(iri: str, base: str) -> str | None:
    """`person/x` for `{base}person/x`; None for an IRI outside the base (or the base)."""
    if not iri.startswith(base) or len(iri) == len(base):
        return None
    return iri[len(base) :]


def parse(iri: str, base: str) -> tuple[str, str] | None:
    """(kind, the rest of the path) of an IRI under the base: `("person", "x/award/1")`;
    ("dataset", "") for the dataset; None outside the base."""
    found = path_of(iri, base)
    if found is None:
        return None
    kind, _, rest = found.partition("/")
    return kind, rest


def kind_of(node_path: str) -> str:
    """`person` for `person/x/award/1`."""
    return node_path.split("/", 1)[0]


def key_of(node_path: str) -> str:
    """`x/award/1` for `person/x/award/1` (the path without its kind)."""
    return node_path.split("/", 1)[-1]


def person_slug(iri: str, base: str) -> str | None:
    """`x` for `{base}person/x` (only a person's own IRI, not a node under it)."""
    found = parse(iri, base)
    if found is None or found[0] != PERSON or "/" in found[1] or not found[1]:
        return None
    return found[1]


def file_path(node_path: str, ext: str) -> str:
    """Where a thing's file is under the web root: `person/x.html`, `person/x.ttl`."""
    return f"{node_path}.{ext}"


def page_file(kind: str, key: str, ext: str = "html") -> str:
    """The file of a thing under the web root: `page_file("person", "x")` is
    `person/x.html`."""
    return file_path(path(kind, key), ext)
