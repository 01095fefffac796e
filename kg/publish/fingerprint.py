"""What each rendered item depends on, as one digest: the key of its cached files.

An incremental build renders a person's files, or a thing's, again only when something
its files can show changed. What the renderers read, and the key therefore covers:

- the item's description (`described`/`person_subset`: its own nodes, what points at
  them, the type, name and URL of every node they reach), as N-Triples;
- for every node of the description, the facts any page may show of a linked node
  (types, names, title, label, URL) and where it links to (its page or its owner's),
  and the same facts of that owner;
- every node the page markup walks in full: the works of a person and the nodes
  minted under them, the nodes minted under a thing;
- for people and publications, the resolved records behind the page and the BibTeX
  (the profile, the publications, their citation keys, the co-authors' records);
- kg's code and templates, the project's settings, templates and registries.

An edit elsewhere leaves the key unchanged. Everything global (the dumps, the indexes,
the dataset description) is rendered on every build. tests/test_incremental.py checks
that builds after edits of each kind are byte-identical to a cold build.
"""

from __future__ import annotations

import bisect
import hashlib
import pickle
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Protocol

from rdflib import URIRef
from rdflib.term import Node

from kg import scheme
from kg.cache import digest, package_digest
from kg.config import Config
from kg.graph.namespaces import RDF, SCHEMA
from kg.graph.ntriples import nt_object
from kg.graph.triples import Triples
from kg.model import Profile
from kg.publish.markup import works_of
from kg.publish.site import LABELS
from kg.resolve.identity import PublicationEntity, Resolution

# What a page shows of a node it links to: its label (the site's LABELS), its types and
# URL (site kinds, markup references).
LINK_FACTS = (RDF.type, SCHEMA.url, *LABELS)


class ByteSink(Protocol):
    def write(self, data: bytes, /) -> int: ...


class SubjectChunks:
    """Each subject's N-Triples lines, sorted, and their digest. The sorted dump is
    these chunks in the order of the subjects' N-Triples text (IRIs end in `>`, which no
    IRI holds, so no subject's text is a prefix of another's).

    With a `sink` (a binary file), the chunks are written to it in that order as they
    are made and not kept: the dump is never a string in memory (at 10k people it is
    about 400 MB, in the parent and in every forked worker)."""

    def __init__(self, graph: Triples, sink: ByteSink | None = None) -> None:
        self.memo: dict[Node, str] = {}  # every term's N-Triples text
        term = self.term

        self.text: dict[Node, str] | None = {} if sink is None else None
        self.digest: dict[Node, bytes] = {}
        self.order = sorted(graph.subjects(), key=term)
        for s in self.order:
            head = term(s)
            lines = sorted(f"{head} {term(p)} {term(o)} .\n" for p, o in graph.predicate_objects(s))
            data = "".join(lines).encode()
            self.digest[s] = hashlib.blake2b(data, digest_size=16).digest()
            if sink is not None:
                sink.write(data)
            else:
                self.text[s] = data.decode()  # type: ignore[index]
        self._keys = [term(s) for s in self.order]
        self.terms = tuple(self.memo)  # every distinct term of the graph (memo grows later)

    def term(self, t: Node) -> str:
        text = self.memo.get(t)
        if text is None:
            text = self.memo[t] = nt_object(t)
        return text

    def under(self, node: Node) -> tuple[int, int]:
        """The slice of `order` holding the nodes minted under `node` (`<node/…>`)."""
        if not isinstance(node, URIRef):
            return 0, 0
        head = f"<{node}/"
        return bisect.bisect_left(self._keys, head), bisect.bisect_left(self._keys, head[:-1] + "0")

    def ntriples(self) -> str:
        """The whole graph as sorted N-Triples (what `to_ntriples` gives, without a sort
        of every line); not when the chunks went to a sink."""
        assert self.text is not None, "the chunks were written to a file"
        return "".join(self.text[s] for s in self.order)


class Fingerprints:
    """Keys for the cached files of people and things (see the module's docstring)."""

    def __init__(
        self,
        config: Config,
        resolution: Resolution,
        graph: Triples,
        chunks: SubjectChunks,
        href: Callable[[str], str],
        citation_keys: dict[str, str],
    ) -> None:
        self.config = config
        self.r = resolution
        self.graph = graph
        self.chunks = chunks
        self.href = href
        self._views: dict[Node, str] = {}
        self._reached: dict[Node, str] = {}
        self._pubs: dict[str, tuple[str, ...]] = {}
        self.citation_keys = citation_keys

    @cached_property
    def settings(self) -> str:
        """kg's code and templates, the project's settings, templates and registries."""
        c = self.config
        templates = c.root / "templates"
        files = sorted(templates.rglob("*")) if templates.is_dir() else []
        d = self.r.dataset
        return digest(
            package_digest(),
            c.base_iri,
            repr((c.title, c.description, c.sparql_endpoint, c.license, c.site)),
            *_logo(c),
            *(part for f in files if f.is_file() for part in (str(f), f.read_bytes())),
            _pickled((d.organizations, d.venues, d.people)),
        )

    def _description(self, owned: set[Node]) -> Iterable[str]:
        """What `described(graph, owned)` holds, and of each node in it what a page may
        show when linking it, without building the description: the owned nodes'
        whole-graph digests, the links into them, and the reached nodes."""
        term, graph = self.chunks.term, self.graph
        reached: set[Node] = set(owned)
        links = []
        for s in sorted(owned, key=str):
            yield self._facts(s)
            reached.update(o for _, o in graph.predicate_objects(s) if isinstance(o, URIRef))
            for s2, p in graph.subject_predicates(s):
                if s2 not in owned:
                    links.append(f"{term(s2)} {term(p)} {term(s)}")
                    reached.add(s2)
        yield _text_digest("\n".join(sorted(links)))
        lines = self._reached
        for node in sorted(reached, key=str):
            found = lines.get(node)
            yield found if found is not None else self._reached_line(node)

    def _reached_line(self, node: Node) -> str:
        """What a description shows of a node it reaches: its view, where it links to
        (the node itself, or the page of its owner) and that owner's view; once per
        node (an organization or a venue is reached from thousands of pages)."""
        link = self.href(str(node))
        owner = URIRef(scheme.mint(self.config.base_iri, link)) if link != str(node) else node
        found = self._reached[node] = f"{node}\t{self._view(node)}\t{link}\t{self._view(owner)}"
        return found

    def _facts(self, node: Node) -> str:
        """The digest of all of `node`'s triples."""
        return self.chunks.digest.get(node, b"").hex()

    def _view(self, node: Node) -> str:
        """The facts of `node` that a page linking to it may show."""
        found = self._views.get(node)
        if found is None:
            facts = self.graph.describe(node)
            lines = sorted(f"{p}\t{nt_object(o)}" for p in LINK_FACTS for o in facts.get(p, ()))
            found = self._views[node] = _text_digest("\n".join(lines))
        return found

    def _subtree(self, node: Node) -> Iterable[str]:
        """The whole-graph digests of `node` and of every node minted under it."""
        yield self.chunks.digest.get(node, b"").hex()
        first, last = self.chunks.under(node)
        for s in self.chunks.order[first:last]:
            yield self.chunks.digest[s].hex()

    @cached_property
    def _person_digests(self) -> dict[str, str]:
        """Of a resolved person the pages and BibTeX show the name (kg/publish reads
        `.name` only); the rest (where they were mentioned) is in the graph."""
        return {k: v.name for k, v in self.r.persons.items()}

    @cached_property
    def _profile_digests(self) -> dict[str, str]:
        return {p.slug: _pickled(p) for p in self.r.dataset.profiles}

    @cached_property
    def _refs_by_file(self) -> dict[str, list[str]]:
        """File -> the resolved person of every name listed in it (advisors, mentors…)."""
        found: dict[str, list[str]] = {}
        for source, key in self.r.person_of.items():
            found.setdefault(source.file, []).append(f"{source}\t{key}")
        return {file: sorted(refs) for file, refs in found.items()}

    def _publication(self, pub: PublicationEntity) -> tuple[str, ...]:
        """The resolved record, its citation key and its authors' records (once per
        publication and process)."""
        found = self._pubs.get(pub.key)
        if found is None:
            people, profiles = self._person_digests, self._profile_digests
            authors = [
                part
                for slot in pub.authors
                if slot.person
                for part in (people.get(slot.person, "-"), profiles.get(slot.person, "-"))
            ]
            found = (_pickled(pub), self.citation_keys.get(pub.key, ""), *authors)
            self._pubs[pub.key] = found
        return found

    def thing(self, thing: URIRef, owned: set[Node], pub: PublicationEntity | None) -> str:
        parts = self._publication(pub) if pub is not None else ()
        return digest(
            self.settings,
            "thing",
            str(thing),
            *self._description(owned),
            *self._subtree(thing),
            *parts,
        )

    def person(self, profile: Profile, owned: set[Node], works: list[PublicationEntity]) -> str:
        source = profile.source.file if profile.source else ""
        person = URIRef(scheme.person(self.config.base_iri, profile.slug))
        return digest(
            self.settings,
            "person",
            profile.slug,
            self._profile_digests.get(profile.slug, "-"),
            self._person_digests.get(profile.slug, "-"),
            *self._refs_by_file.get(source, ()),
            *self._description(owned),
            *(d for work in works_of(self.graph, person) for d in self._subtree(work)),
            *(part for pub in works for part in self._publication(pub)),
        )


def _text_digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _pickled(value: object) -> str:
    """A digest of a record's pickle: equal records give equal digests (a record made
    another way may pickle differently, which only costs a render)."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _logo(config: Config) -> list[bytes]:
    """The logo's bytes: its content-hashed name is on every page."""
    if config.site.logo is None:
        return []
    try:
        return [(config.root / config.site.logo).read_bytes()]
    except OSError:
        return []  # the build reports the missing logo
