"""What each rendered item depends on, as one digest: the key of its cached files.

An incremental build renders a person's files, or a thing's, again only when something
its files can show changed. The renderers read the item's description (its own nodes,
what points at them, the name and type of every node they reach), the whole-graph
facts of every node in that description (labels, links), whether each has a page, and
for people and publications the resolved records behind them. The key covers all of
that, plus kg's code, the templates and the settings: an edit anywhere else leaves it
unchanged. Everything global (the dumps, the indexes, the dataset description) is
rendered on every build. tests/test_incremental.py checks that builds after edits of
each kind are byte-identical to a cold build.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Iterable
from functools import cached_property

from rdflib import URIRef
from rdflib.term import Node

from kg.cache import digest, package_digest
from kg.config import Config
from kg.graph.ntriples import nt_object
from kg.graph.triples import Triples
from kg.model import Profile
from kg.resolve.identity import PublicationEntity, Resolution


class SubjectChunks:
    """Each subject's N-Triples lines, sorted, and their digest. The sorted dump is
    these chunks in the order of the subjects' N-Triples text (IRIs end in `>`, which no
    IRI holds, so no subject's text is a prefix of another's)."""

    def __init__(self, graph: Triples) -> None:
        memo: dict[Node, str] = {}

        def term(t: Node) -> str:
            text = memo.get(t)
            if text is None:
                text = memo[t] = nt_object(t)
            return text

        self.text: dict[Node, str] = {}
        self.digest: dict[Node, bytes] = {}
        for s in graph.subjects():
            head = term(s)
            lines = sorted(f"{head} {term(p)} {term(o)} .\n" for p, o in graph.predicate_objects(s))
            chunk = self.text[s] = "".join(lines)
            self.digest[s] = hashlib.blake2b(chunk.encode(), digest_size=16).digest()
        self.order = sorted(self.text, key=term)

    def ntriples(self) -> str:
        """The whole graph as sorted N-Triples (what `to_ntriples` gives, without a sort
        of every line)."""
        return "".join(self.text[s] for s in self.order)


class Fingerprints:
    """Keys for the cached files of people and things (see the module's docstring)."""

    def __init__(
        self,
        config: Config,
        resolution: Resolution,
        chunks: SubjectChunks,
        href: Callable[[str], str],
        citation_keys: dict[str, str],
    ) -> None:
        self.config = config
        self.r = resolution
        self.chunks = chunks
        self.href = href
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
            repr((c.title, c.description, c.sparql_endpoint, c.license)),
            *(part for f in files if f.is_file() for part in (str(f), f.read_bytes())),
            _pickled((d.organizations, d.venues, d.people)),
        )

    def _nodes(self, subset: Triples) -> Iterable[str]:
        """Every node of the description with its whole-graph facts and its link."""
        nodes = set(subset.subjects()) | {o for o in subset.objects() if isinstance(o, URIRef)}
        for node in sorted(nodes, key=str):
            link = self.href(str(node))  # the node itself, or the page of its owner
            owner = URIRef(self.config.base_iri + link) if link != str(node) else node
            yield "\t".join((str(node), self._facts(node), link, self._facts(owner)))

    def _facts(self, node: Node) -> str:
        return self.chunks.digest.get(node, b"").hex()

    @cached_property
    def _person_digests(self) -> dict[str, str]:
        return {k: _pickled(v) for k, v in self.r.persons.items()}

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

    def _publication(self, pub: PublicationEntity) -> Iterable[str]:
        yield _pickled(pub)
        yield self.citation_keys.get(pub.key, "")
        for slot in pub.authors:
            if slot.person:
                yield self._person_digests.get(slot.person, "-")
                yield self._profile_digests.get(slot.person, "-")

    def thing(self, thing: URIRef, subset: Triples, pub: PublicationEntity | None) -> str:
        parts = self._publication(pub) if pub is not None else ()
        return digest(self.settings, "thing", str(thing), *self._nodes(subset), *parts)

    def person(self, profile: Profile, subset: Triples, works: list[PublicationEntity]) -> str:
        source = profile.source.file if profile.source else ""
        return digest(
            self.settings,
            "person",
            profile.slug,
            self._profile_digests.get(profile.slug, "-"),
            self._person_digests.get(profile.slug, "-"),
            *self._refs_by_file.get(source, ()),
            *self._nodes(subset),
            *(part for pub in works for part in self._publication(pub)),
        )


def _pickled(value: object) -> str:
    """A digest of a record's pickle: equal records give equal digests (a record made
    another way may pickle differently, which only costs a render)."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return hashlib.blake2b(data, digest_size=16).hexdigest()
