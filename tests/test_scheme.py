"""The IRI scheme and the output formats each have one owner (kg/scheme.py, kg/formats.py):
no other module builds an IRI path from the base or a kind, or lists the RDF formats, and
the table drives every place that names them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import REPO

from kg import scheme
from kg.formats import BY_EXTENSION, EXTENSIONS, MEDIA_TYPES, RDF_FORMATS
from kg.graph.triples import Triples
from kg.publish.deploy import FORMATS, NEGOTIATE_JS, htaccess, nginx_conf
from kg.publish.export import WRITERS, dataset_description
from kg.publish.layout import alternates, data_links, dump_links

KG = REPO / "kg"
KIND_PATH = re.compile("^(?:" + "|".join(map(re.escape, scheme.KINDS)) + ")/")
BASE_NAMES = re.compile(r"(?:^|_)base(?:_iri)?$")
# Query answers (kg/query, kg serve's /queries and /sparql) are negotiated in the SPARQL
# protocol's own formats (results JSON/CSV/XML, graphs in Turtle/JSON-LD): not the output
# formats of the build.
PROTOCOL_MODULES = {"kg/serve/app.py", "kg/serve/sparql.py"}


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(KG.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        found.append((rel, ast.parse(path.read_text(encoding="utf-8"))))
    return found


def _is_base(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    return bool(name and BASE_NAMES.search(name))


def _pathlike(node: ast.AST) -> bool:
    """Text that may be a path: a string starting like one, a name, an f-string."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and bool(re.match(r"[A-Za-z0-9_]", node.value))
    return isinstance(node, ast.Name | ast.Attribute | ast.JoinedStr)


def _kind_path(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and bool(KIND_PATH.match(str(node.value)))


def _iri_building(tree: ast.Module) -> list[str]:
    """Places that glue the base to a path, or spell `<kind>/` in an f-string or a `+`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            pairs = ((node.left, node.right), (node.right, node.left))
            kind = any(_kind_path(s) for s in (node.left, node.right))
            if kind or any(_is_base(a) and _pathlike(b) for a, b in pairs):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.JoinedStr):
            parts = node.values
            for i, part in enumerate(parts):
                text = part.value if isinstance(part, ast.Constant) else None
                if isinstance(text, str) and KIND_PATH.match(text):
                    found.append(f"line {node.lineno}: {ast.unparse(node)}")
                plain = isinstance(part, ast.FormattedValue) and part.conversion == -1
                glued = i + 1 < len(parts) and _pathlike(parts[i + 1])
                if plain and glued and _is_base(part.value):  # type: ignore[attr-defined]
                    found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_only_the_scheme_builds_iri_paths():
    offenders = {
        rel: found
        for rel, tree in _modules()
        if rel != "kg/scheme.py" and (found := _iri_building(tree))
    }
    assert offenders == {}


def _format_listing(tree: ast.Module) -> list[str]:
    """Media types of the RDF formats spelled out, or a literal collection naming two or
    more of their extensions."""
    media = {f.media for f in RDF_FORMATS}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in media:
            found.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            named = {i.value for i in items if isinstance(i, ast.Constant)} & set(EXTENSIONS)
            if len(named) >= 2:
                found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_only_the_format_table_lists_formats():
    offenders = {
        rel: found
        for rel, tree in _modules()
        if rel != "kg/formats.py"
        and rel not in PROTOCOL_MODULES
        and not rel.startswith("kg/query/")
        and (found := _format_listing(tree))
    }
    assert offenders == {}


def test_templates_take_the_formats_from_the_table():
    media = "|".join(re.escape(f.media) for f in RDF_FORMATS)
    exts = "|".join(EXTENSIONS)
    spelled = re.compile(rf"{media}|\.(?:{exts})\b")
    found = {
        p.name: spelled.findall(p.read_text(encoding="utf-8"))
        for p in sorted((KG / "publish" / "templates").glob("*.j2"))
    }
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_every_format_has_a_writer_a_media_type_and_a_link():
    assert {f.name for f in RDF_FORMATS} <= set(WRITERS)
    assert [e for e, _ in FORMATS] == ["html", *EXTENSIONS]
    assert [m for m, _ in alternates("person/x")] == [f.media for f in RDF_FORMATS]
    assert [h for _, _, h in data_links("person/x", "../")] == [
        f"../person/x.{f.ext}" for f in RDF_FORMATS
    ]
    assert [h for _, h in dump_links()] == [f"graph.{e}" for e in EXTENSIONS]
    assert MEDIA_TYPES["html"] == "text/html" and BY_EXTENSION["ttl"].media == "text/turtle"


def test_deployment_rules_and_void_follow_the_table():
    conf, apache = nginx_conf("https://x.org/", "/"), htaccess("https://x.org/", "/")
    for f in RDF_FORMATS:
        assert f'["{f.ext}", "{f.media}"]' in NEGOTIATE_JS
        assert f"{f.media} {f.ext};" in conf
        assert f'AddType "{f.media}; qs=' in apache
    void = dataset_description(Triples(), "https://x.org/", "t", "d", "https://l/", None, [])
    dumps = sorted(str(o) for _, p, o in void if str(p).endswith("#dataDump"))
    assert dumps == sorted(f"https://x.org/graph.{e}" for e in EXTENSIONS)


@pytest.mark.parametrize(
    ("iri", "parsed"),
    [
        ("https://x.org/person/ada", ("person", "ada")),
        ("https://x.org/person/ada/award/1", ("person", "ada/award/1")),
        ("https://x.org/dataset", ("dataset", "")),
        ("https://x.org/", None),
        ("https://y.org/person/ada", None),
    ],
)
def test_parse_reads_back_what_mint_makes(iri, parsed):
    assert scheme.parse(iri, "https://x.org/") == parsed
    if parsed:
        kind, rest = parsed
        assert scheme.mint("https://x.org/", kind, *([rest] if rest else [])) == iri


def test_named_iris():
    base = "https://x.org/lab/"
    assert scheme.person(base, "ada") == "https://x.org/lab/person/ada"
    assert scheme.profile(base, "ada") == "https://x.org/lab/profile/ada"
    assert scheme.publication(base, "p1") == "https://x.org/lab/publication/p1"
    assert scheme.dataset(base, "class", "c") == "https://x.org/lab/dataset/class/c"
    assert scheme.person_slug("https://x.org/lab/person/ada", base) == "ada"
    assert scheme.person_slug("https://x.org/lab/person/ada/award/1", base) is None
    assert scheme.page_file("publication", "p1") == "publication/p1.html"
    assert Path(scheme.file_path("person/ada", "ttl")).suffix == ".ttl"
