"""Exported BibTeX that its readers accept: hostile text escaped, bibtexparser and pybtex
read every field back, and `kg export` then `kg import` gives the same publications."""

from __future__ import annotations

import json
import shutil

import bibtexparser
import pytest
from bibtexparser.middlewares import SeparateCoAuthors
from conftest import MINI
from pybtex.database import parse_string as pybtex_parse

from kg.cli import main
from kg.imports.bibtex import latex_text
from kg.imports.importer import read_records

SLUG = "x-y"
# Each title attacks a reader in a different way (hand-written, with what it must stay).
HOSTILE_TITLES = [
    "Evil}, author = {Mallory",  # closes the field and injects an author
    r"\input{/etc/passwd} and \write18{rm -rf /}",  # commands a LaTeX run would execute
    "100% of $x_1$ & #1 ~tilde ^caret {braces} back\\slash",
    "Unbalanced { brace swallows the rest",
    "@misc{injected, title = {x}}",
    "snake_case_NAME and GPU_Kernels",
    "Results for Acme Inc.",  # a closing period that is part of the title
    "key: value # not a comment",  # reads as YAML syntax
]
AUTHORS = [
    "Xin Yu",
    "Ann Smith and Jones",  # BibTeX would split this name in two
    "Bob Lee, Jr.",  # a comma inside a name part
    "Others",
]


def _profile() -> str:
    pubs = [
        {
            "title": title,
            "authors": AUTHORS,
            "type": "conference-paper",  # given: an unregistered venue names no kind
            "venue_as_printed": "Proc. of {Braces} & Co",
            "year": 2020 + i,
            "doi": f"10.1234/abc{{{i}}}",
            "notes": ["CCF-A & more}"],
            "links": [{"label": "Slides}", "url": f"https://example.org/s{i}?a=1&b=%20"}],
        }
        for i, title in enumerate(HOSTILE_TITLES)
    ]
    return "name: Xin Yu\npublications: " + json.dumps(pubs) + "\n"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("hostile-export") / "project"
    shutil.copytree(MINI, root)
    (root / "data" / "profiles" / f"{SLUG}.yaml").write_text(_profile(), encoding="utf-8")
    return root, _export(root, "bibtex")


def _export(root, fmt: str) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--project", str(root), "export", fmt, SLUG]) == 0
    return out.getvalue()


def test_no_field_escapes_its_braces_and_no_command_passes_through(exported):
    _, text = exported
    assert sum(line.startswith("@") for line in text.splitlines()) == len(HOSTILE_TITLES)
    assert "\\input{" not in text and "\\write18{" not in text
    assert "\\textbackslash{}input\\textbraceleft{}/etc/passwd\\textbraceright{}" in text
    assert "{Jones}" not in text and "{Ann Smith and}" in text and "{Bob Lee,}" in text


def test_bibtexparser_reads_every_entry_and_field_intact(exported):
    _, text = exported
    library = bibtexparser.parse_string(text, append_middleware=[SeparateCoAuthors()])
    assert library.failed_blocks == []
    assert len(library.entries) == len(HOSTILE_TITLES)
    titles = set()
    for entry in library.entries:
        fields = entry.fields_dict
        assert {"title", "author", "booktitle", "year", "doi", "url", "annote"} <= set(fields)
        assert len(fields["author"].value) == len(AUTHORS)
        titles.add(latex_text(fields["title"].value))
        assert latex_text(fields["booktitle"].value) == "Proc. of {Braces} & Co"
        assert latex_text(fields["annote"].value) == "CCF-A & more}"
    assert titles == set(HOSTILE_TITLES)


def test_pybtex_reads_every_entry_and_field_intact(exported):
    _, text = exported
    data = pybtex_parse(text, "bibtex")
    assert len(data.entries) == len(HOSTILE_TITLES)
    titles = set()
    for entry in data.entries.values():
        assert len(entry.persons["author"]) == len(AUTHORS)
        assert entry.type == "inproceedings"
        titles.add(latex_text(entry.fields["title"]))
        assert entry.fields["doi"].startswith("10.1234/abc%7B")
    assert titles == set(HOSTILE_TITLES)


def test_export_then_import_round_trips_every_hostile_field(exported, tmp_path):
    _, text = exported
    path = tmp_path / "x.bib"
    path.write_text(text, encoding="utf-8")
    works = read_records("bibtex", path).works
    assert {w.title for w in works} == set(HOSTILE_TITLES)
    for work in works:
        assert [a.name for a in work.authors] == AUTHORS
        assert work.venue == "Proc. of {Braces} & Co"
        assert work.notes == ("CCF-A & more}",)
        assert work.links[0][0] == "Slides}"
        assert not work.truncated
