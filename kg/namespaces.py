"""Every namespace `kg` uses, in one place.

schema.org is `http://schema.org/` (what the official JSON-LD context expands to),
never rdflib's built-in `SDO` (https).
"""

from __future__ import annotations

from typing import Any, cast

from rdflib import Namespace, URIRef
from rdflib import namespace as rdflib_namespaces


class Vocabulary(Namespace):
    """A Namespace whose terms are made once: `SCHEMA.name` is the same URIRef every time.

    rdflib builds (and validates) a new URIRef on every attribute access, which was a
    tenth of the mapping time. For rdflib's closed vocabularies (FOAF, RDF, ...) the
    first access of a term still goes through rdflib, so a misspelt term still fails.
    """

    _closed: Any  # rdflib's closed namespace the terms come from, or None

    def __new__(cls, value: str, closed: Any = None) -> Vocabulary:
        vocabulary = cast("Vocabulary", super().__new__(cls, value))  # rdflib: -> Namespace
        vocabulary._closed = closed
        return vocabulary

    def __getattr__(self, name: str) -> URIRef:
        """Called once per term: the term then sits in the instance dict."""
        if name.startswith("_"):
            raise AttributeError(name)
        term = getattr(self._closed, name) if self._closed is not None else self.term(name)
        self.__dict__[name] = term
        return term


def _closed(vocabulary: Any) -> Vocabulary:
    return Vocabulary(str(vocabulary), vocabulary)


DCAT = _closed(rdflib_namespaces.DCAT)
DCTERMS = _closed(rdflib_namespaces.DCTERMS)
FOAF = _closed(rdflib_namespaces.FOAF)
OWL = _closed(rdflib_namespaces.OWL)
RDF = _closed(rdflib_namespaces.RDF)
RDFS = _closed(rdflib_namespaces.RDFS)
SH = _closed(rdflib_namespaces.SH)
SKOS = _closed(rdflib_namespaces.SKOS)
VOID = _closed(rdflib_namespaces.VOID)
XSD = _closed(rdflib_namespaces.XSD)
SCHEMA = Vocabulary("http://schema.org/")
KG = Vocabulary("https://w3id.org/kg-profiles/vocab#")
WD = Namespace("http://www.wikidata.org/entity/")
WDT = Namespace("http://www.wikidata.org/prop/direct/")

PREFIXES: dict[str, Namespace] = {
    "schema": SCHEMA,
    "foaf": Namespace(str(FOAF)),
    "kg": KG,
    "rdf": Namespace(str(RDF)),
    "rdfs": Namespace(str(RDFS)),
    "xsd": Namespace(str(XSD)),
    "owl": Namespace(str(OWL)),
    "skos": Namespace(str(SKOS)),
    "dcterms": Namespace(str(DCTERMS)),
    "dcat": Namespace(str(DCAT)),
    "void": Namespace(str(VOID)),
    "sh": Namespace(str(SH)),
    "wd": WD,
    "wdt": WDT,
}

__all__ = [
    "DCAT",
    "DCTERMS",
    "FOAF",
    "KG",
    "OWL",
    "PREFIXES",
    "RDF",
    "RDFS",
    "SCHEMA",
    "SH",
    "SKOS",
    "VOID",
    "WD",
    "WDT",
    "XSD",
]


def curie(iri: str, separator: str = ":") -> str | None:
    """`schema:name` for a known namespace (with `separator` between prefix and name)."""
    for prefix, ns in PREFIXES.items():
        if iri.startswith(str(ns)) and len(iri) > len(str(ns)):
            return f"{prefix}{separator}{iri[len(str(ns)) :]}"
    return None
