"""Every namespace `kg` uses, in one place.

schema.org is `http://schema.org/` (what the official JSON-LD context expands to),
never rdflib's built-in `SDO` (https).
"""

from __future__ import annotations

from rdflib import Namespace
from rdflib.namespace import DCAT, DCTERMS, FOAF, OWL, RDF, RDFS, SH, SKOS, VOID, XSD

SCHEMA = Namespace("http://schema.org/")
KG = Namespace("https://w3id.org/kg-profiles/vocab#")
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
