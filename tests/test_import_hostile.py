"""Hostile files given to `kg import`, and concurrent writers: each ends in exit 2 with a
message naming the file (and line), in bounded time, with the profile untouched; two
imports at once lose nothing; an editor's save during an import is kept."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

import kg.imports.importer as importer
from kg.cli import main
from kg.config import load_config
from kg.errors import UsageError
from kg.imports.importer import import_file
from kg.ingest.load import load_dataset

SLUG = "yihao-zhao"
ENTRY = (
    "@article{{{key}, title = {{{title}}}, author = {{{author}}}, "
    "journal = {{J}}, year = {{2020}}}}\n"
)


def _entry(key: str = "k", title: str = "A Title", author: str = "Zhao, Yihao") -> str:
    return ENTRY.format(key=key, title=title, author=author)


def _bomb() -> str:
    """Each macro four times the one before: 10 bytes become 10 * 4**8 = 655,360."""
    lines = ['@string{m0 = "0123456789"}']
    lines += [f"@string{{m{i} = m{i - 1} # m{i - 1} # m{i - 1} # m{i - 1}}}" for i in range(1, 9)]
    return "\n".join(lines) + "\n" + _entry().replace("{A Title}", "m8")


# (name, source, file bytes, line the message names, words the message must hold)
HOSTILE = [
    ("macro-bomb", "bibtex", _bomb().encode(), 10, "characters once its macros are expanded"),
    (
        "nested-braces",
        "bibtex",
        _entry(title="{" * 20000 + "x" + "}" * 20000).encode(),
        1,
        "nested",
    ),
    (
        "latex-environments",
        "bibtex",
        _entry(title="\\begin{x}" * 3000).encode(),
        1,
        "LaTeX nested too deeply",
    ),
    (
        "many-authors",
        "bibtex",
        _entry(author=" and ".join(f"A{i} B" for i in range(20001))).encode(),
        1,
        "20,001 authors",
    ),
    (
        "invalid-utf8",
        "bibtex",
        (_entry() + "\n" + _entry("k2", "bad \xff byte")).encode("latin-1"),
        3,
        "invalid UTF-8",
    ),
    ("nul-byte", "bibtex", (_entry() + "\n" + _entry("k2", "nul \0 byte")).encode(), 3, "NUL"),
    (
        "doi-dot-segments",
        "bibtex",
        _entry().replace("}\n", ", doi = {10.1234/../../x.org}}\n").encode(),
        1,
        "'..' segment",
    ),
    ("deep-json", "csl", b"[" * 100000 + b"]" * 100000, 1, "nested too deeply"),
    (
        "csl-wrong-types",
        "csl",
        json.dumps(
            [{"id": "x", "type": "article-journal", "title": ["no"], "author": "bob"}]
        ).encode(),
        1,
        "x",
    ),
    ("orcid-wrong-types", "orcid", json.dumps({"group": 5, "person": []}).encode(), 1, "ORCID"),
    (
        "dblp-nested-markup",
        "dblp",
        (
            '<?xml version="1.0"?>\n<dblpperson name="A B"><r><article key="x"><author>A B</author>'
            "<title>" + "<i>" * 5000 + "T" + "</i>" * 5000 + "</title></article></r></dblpperson>"
        ).encode(),
        2,
        "nested more than",
    ),
]


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(REPO / "data", root / "data")
    shutil.copy(REPO / "kg.toml", root / "kg.toml")
    return root


def _profile(root: Path) -> Path:
    return root / "data" / "profiles" / f"{SLUG}.yaml"


@pytest.mark.parametrize("name,source,data,line,words", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_file_is_refused_with_file_and_line(
    project, tmp_path, capsys, name, source, data, line, words
):
    path = tmp_path / f"{name}.in"
    path.write_bytes(data)
    before = _profile(project).read_bytes()
    started = time.monotonic()
    code = main(["--project", str(project), "import", source, str(path), "--person", SLUG])
    assert time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{path}:{line}:" in err and words in err, err
    assert "Traceback" not in err
    assert _profile(project).read_bytes() == before


def test_terminal_escapes_and_bidi_controls_are_shown_escaped(project, tmp_path, capsys):
    path = tmp_path / "term.bib"
    path.write_text(
        _entry(title="Red \x1b[31mtext\x1b]0;owned\x07 \u202eevil\u202c", author="Other, Ann")
    )
    assert (
        main(
            [
                "--project",
                str(project),
                "import",
                "bibtex",
                str(path),
                "--person",
                SLUG,
                "--dry-run",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\u202eevil\\u202c" in out  # the bidi controls, visible


def test_yaml_breaking_titles_round_trip_exactly(project, tmp_path):
    titles = ["- dash", "key: value", "'single'", '"double"', "#hash", "&anchor", "*alias", "!tag",
              "@at", "`tick`", "| pipe", "> fold", "? q", "yes", "null", "2024", "1e3", "[seq]",
              "a: b # c", "colon:", "<<", "NO", "on", "..."]  # fmt: skip
    escaped = [t.replace("#", "\\#").replace("&", "\\&") for t in titles]
    path = tmp_path / "yaml.bib"
    path.write_text("".join(_entry(f"t{i}", "{" + t + "}") for i, t in enumerate(escaped)))
    import_file(load_config(project), "bibtex", path, SLUG)
    profile = next(p for p in load_dataset(project / "data").profiles if p.slug == SLUG)
    assert set(titles) <= {p.title for p in profile.publications}


def test_flow_style_publications_can_be_edited(project, tmp_path):
    _profile(project).write_text(
        "name: Yihao Zhao\npublications: [{title: Old One, authors: [Yihao Zhao], year: 2020}]\n",
        encoding="utf-8",
    )
    path = tmp_path / "new.bib"
    path.write_text(_entry(title="New: One [x]"))
    assert main(["--project", str(project), "import", "bibtex", str(path), "--person", SLUG]) == 0
    profile = next(p for p in load_dataset(project / "data").profiles if p.slug == SLUG)
    assert [p.title for p in profile.publications] == ["Old One", "New: One [x]"]


def _kg(project: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "kg", "--project", str(project), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_imports_at_once_lose_nothing(project, tmp_path):
    """Four imports into one profile at once (without the lock, most runs lose a paper)."""
    files = []
    for n in range(4):
        path = tmp_path / f"paper{n}.bib"
        path.write_text(_entry(f"p{n}", f"Concurrent Paper Number {n}"))
        files.append(path)
    runs = [_kg(project, "import", "bibtex", str(f), "--person", SLUG) for f in files]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    text = _profile(project).read_text(encoding="utf-8")
    assert all(f"Concurrent Paper Number {n}" in text for n in range(4))


def test_an_editor_save_during_an_import_is_kept(project, tmp_path, monkeypatch):
    path = tmp_path / "one.bib"
    path.write_text(_entry(title="Imported While Editing"))
    real_load = importer.load_dataset
    saves = []

    def load_then_editor_saves(data_dir):
        data = real_load(data_dir)
        if not saves:  # the editor saves once, after kg has read the profile
            target = _profile(project)
            target.write_text(target.read_text(encoding="utf-8") + "# saved by an editor\n")
            saves.append(1)
        return data

    monkeypatch.setattr(importer, "load_dataset", load_then_editor_saves)
    import_file(load_config(project), "bibtex", path, SLUG)
    text = _profile(project).read_text(encoding="utf-8")
    assert "# saved by an editor" in text and "Imported While Editing" in text


def test_a_profile_that_keeps_changing_is_refused_not_overwritten(project, tmp_path, monkeypatch):
    path = tmp_path / "one.bib"
    path.write_text(_entry(title="Never Written"))
    real_load = importer.load_dataset

    def load_then_editor_saves(data_dir):
        data = real_load(data_dir)
        target = _profile(project)
        target.write_text(target.read_text(encoding="utf-8") + "# another save\n")
        return data

    monkeypatch.setattr(importer, "load_dataset", load_then_editor_saves)
    with pytest.raises(UsageError, match="changed while kg import was reading it"):
        import_file(load_config(project), "bibtex", path, SLUG)
    text = _profile(project).read_text(encoding="utf-8")
    assert "Never Written" not in text and text.count("# another save") == importer.MAX_ATTEMPTS


def test_kg_new_person_never_writes_through_a_dangling_link(project, tmp_path):
    outside = tmp_path / "outside.yaml"  # does not exist: the link dangles
    (project / "data" / "profiles" / "mei-lin.yaml").symlink_to(outside)
    assert main(["--project", str(project), "new", "person", "Mei Lin"]) == 2
    assert not outside.exists()


def test_a_hand_written_doi_with_dot_segments_is_refused_at_its_line(project, capsys):
    path = _profile(project)
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "    status: submitted\n", "    status: submitted\n    doi: 10.1234/../../x.org\n", 1
    )
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("    doi: 10.1234/../../x.org") + 1
    assert main(["--project", str(project), "check"]) == 2
    err = capsys.readouterr().err
    assert f"data/profiles/{SLUG}.yaml:{line}:" in err and "no `.` or `..` segment" in err
