"""The CLI on broken, hostile and odd input: one clear message with file and line, exit 2
(1 for a SHACL violation), never a traceback, and the previous output left untouched."""

from __future__ import annotations

import json
import os
import time

import pytest
from conftest import write

from kg.cli import main

A_B = "data/profiles/a-b.yaml"
ORGS = "data/organizations.yaml"
VENUES = "data/venues.yaml"
PEOPLE = "data/people.yaml"


def replace(path: str, old: str, new: str):
    def edit(root):
        target = root / path
        text = target.read_text(encoding="utf-8")
        assert old in text, (path, old)
        target.write_text(text.replace(old, new, 1), encoding="utf-8")

    return edit


def put(path: str, content: str | bytes):
    def edit(root):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")

    return edit


def append(path: str, text: str):
    def edit(root):
        with (root / path).open("a", encoding="utf-8") as handle:
            handle.write(text)

    return edit


# name -> (edit, exit code, file named in the message, text expected in the message)
BROKEN = {
    "yaml syntax error": (
        put("data/profiles/x-y.yaml", "name: [A\n"),
        2,
        "x-y.yaml",
        "YAML syntax",
    ),
    "tab indentation": (
        put("data/profiles/x-y.yaml", "name: A\nemails:\n\t- a@b.org\n"),
        2,
        "x-y.yaml",
        "tabs",
    ),
    "duplicate key": (append(A_B, "name: Again\n"), 2, "a-b.yaml", "duplicate key 'name'"),
    "duplicate registry key": (
        append(ORGS, "pku:\n  name: X\n  kind: university\n"),
        2,
        "organizations.yaml",
        "duplicate key 'pku'",
    ),
    "unknown key": (append(A_B, "adviser: X\n"), 2, "a-b.yaml", "unknown key 'adviser'"),
    "unknown nested key": (
        replace(A_B, "    degree: Ph.D.", "    degre: Ph.D."),
        2,
        "a-b.yaml",
        "did you mean 'degree'",
    ),
    "wrong type list": (
        replace(A_B, "name: Ann Bee", "name: [Ann, Bee]"),
        2,
        "a-b.yaml",
        "expected text",
    ),
    "wrong type mapping": (
        replace(A_B, "  - institution: PKU", "  - PKU\n  - institution: PKU"),
        2,
        "a-b.yaml",
        "expected a mapping",
    ),
    "missing name": (
        put("data/profiles/x-y.yaml", "emails: [a@b.org]\n"),
        2,
        "x-y.yaml",
        "missing required key",
    ),
    "missing title": (
        replace(A_B, '  - title: "Paper: One"\n', "  - \n"),
        2,
        "a-b.yaml",
        "missing required key",
    ),
    "missing authors": (append(A_B, ""), 0, "", ""),
    "month 13": (
        replace(A_B, "start: 2021-09", "start: 2021-13"),
        2,
        "a-b.yaml",
        "month between 01 and 12",
    ),
    "day 30 of February": (
        replace(A_B, "date: 2023-06", "date: 2023-02-30"),
        2,
        "a-b.yaml",
        "a day that exists",
    ),
    "words for a date": (
        replace(A_B, "date: 2023-06", "date: June 2023"),
        2,
        "a-b.yaml",
        "YYYY, YYYY-MM or YYYY-MM-DD",
    ),
    "end before start": (
        replace(A_B, "    end: 2024-05", "    end: 2022-05"),
        1,
        "a-b.yaml",
        "is before the start date",
    ),
    "malformed email": (
        replace(A_B, "emails: [ann@example.org]", "emails: [ann.example.org]"),
        2,
        "a-b.yaml",
        "an email address",
    ),
    "malformed url": (
        replace(A_B, "name: Ann Bee\n", "name: Ann Bee\nhomepage: ann.org\n"),
        2,
        "a-b.yaml",
        "http(s) URL",
    ),
    "javascript url": (
        replace(A_B, "name: Ann Bee\n", "name: Ann Bee\nhomepage: javascript:alert(1)\n"),
        2,
        "a-b.yaml",
        "http(s) URL",
    ),
    "malformed orcid": (
        replace(A_B, "orcid: 0000-0002-1825-0097", "orcid: 0000-0002-1825"),
        2,
        "a-b.yaml",
        "ORCID",
    ),
    "bad language tag": (replace(A_B, "lang: zh", "lang: chinese!"), 2, "a-b.yaml", "BCP 47"),
    "status not in list": (
        replace(A_B, '    venue: "OSDI \'24"', '    venue: "OSDI \'24"\n    status: done'),
        2,
        "a-b.yaml",
        "one of published",
    ),
    "yes for a boolean": (
        replace(A_B, "equal_contribution: true", "equal_contribution: yes"),
        2,
        "a-b.yaml",
        "true or false",
    ),
    "quoted year": (
        replace("data/profiles/c-d.yaml", "    year: 2024\n", "    year: '2024'\n"),
        2,
        "c-d.yaml",
        "whole number",
    ),
    "octal year": (
        replace("data/profiles/c-d.yaml", "    year: 2024\n", "    year: 02024\n"),
        2,
        "c-d.yaml",
        "no leading zeros",
    ),
    "empty file": (put("data/profiles/x-y.yaml", ""), 2, "x-y.yaml", "file is empty"),
    "only a comment": (
        put("data/profiles/x-y.yaml", "# nothing\n"),
        2,
        "x-y.yaml",
        "file is empty",
    ),
    "list at top": (
        put("data/profiles/x-y.yaml", "- name: A\n"),
        2,
        "x-y.yaml",
        "expected a mapping",
    ),
    "scalar at top": (
        put("data/profiles/x-y.yaml", "Ann Bee\n"),
        2,
        "x-y.yaml",
        "expected a mapping",
    ),
    "registry is a list": (put(VENUES, "- osdi\n"), 2, "venues.yaml", "expected a mapping"),
    "registry key not a slug": (
        append(ORGS, "Big Corp:\n  name: Big\n  kind: company\n"),
        2,
        "organizations.yaml",
        "lower-case letters",
    ),
    "unknown organization": (
        replace(A_B, "institution: PKU", "institution: Pekin Univ"),
        2,
        "a-b.yaml",
        "unknown organization",
    ),
    "unknown venue": (
        replace(A_B, 'venue: "OSDI \'24"', "venue: OSID"),
        2,
        "a-b.yaml",
        "unknown venue",
    ),
    "unknown parent organization": (
        append(ORGS, "lab:\n  name: Lab\n  kind: lab\n  parent: nowhere\n"),
        2,
        "organizations.yaml",
        "unknown organization",
    ),
    "unknown person key": (
        replace("data/profiles/c-d.yaml", "person: wei-wang-0001", "person: wei-wang-0009"),
        2,
        "c-d.yaml",
        "unknown person",
    ),
    "ambiguous homonym": (
        replace("data/profiles/c-d.yaml", "{name: Wei Wang, person: wei-wang-0001}", "Wei Wang"),
        2,
        "c-d.yaml",
        "could be any of",
    ),
    "two profiles claim the same person": (
        put("data/profiles/ann-bee.yaml", "name: Ann Bee\n"),
        2,
        "a-b.yaml",
        "could be any of",
    ),
    "people key clashes with a profile": (
        append(PEOPLE, "a-b:\n  name: Someone Else\n"),
        2,
        "people.yaml",
        "also a profile slug",
    ),
    "alias used twice": (
        append(ORGS, "pku2:\n  name: P2\n  kind: university\n  aliases: [PKU]\n"),
        2,
        "organizations.yaml",
        "also used by",
    ),
    "unit outside its organization": (
        replace(A_B, "organization: ByteDance", "organization: PKU"),
        2,
        "a-b.yaml",
        "is not part of",
    ),
    "listings disagree on authors": (
        replace("data/profiles/c-d.yaml", "[Ann Bee, {name: Xin", "[Ann Smith, {name: Xin"),
        2,
        "c-d.yaml",
        "names different authors",
    ),
    "listings disagree on year": (
        replace("data/profiles/c-d.yaml", "    year: 2024\n", "    year: 2023\n"),
        2,
        "c-d.yaml",
        "disagree",
    ),
    "file name not a slug": (
        put("data/profiles/Ann Bee.yaml", "name: Ann\n"),
        2,
        "Ann Bee.yaml",
        "is not a slug",
    ),
    "python tag": (
        put("data/profiles/x-y.yaml", "name: !!python/object/apply:os.system [id]\n"),
        2,
        "x-y.yaml",
        "not allowed",
    ),
    "custom tag": (
        put("data/profiles/x-y.yaml", "name: !env HOME\n"),
        2,
        "x-y.yaml",
        "not allowed",
    ),
    "alias bomb": (
        put("data/profiles/x-y.yaml", "a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n"),
        2,
        "x-y.yaml",
        "aliases are not allowed",
    ),
    "merge key": (
        put("data/profiles/x-y.yaml", "base: &b {name: A}\n<<: *b\n"),
        2,
        "x-y.yaml",
        "aliases are not allowed",
    ),
    "invalid utf-8": (
        put("data/profiles/x-y.yaml", b"name: \xff\xfe A\n"),
        2,
        "x-y.yaml",
        "invalid UTF-8",
    ),
    "latin-1 file": (
        put("data/profiles/x-y.yaml", "name: José\n".encode("latin-1")),
        2,
        "x-y.yaml",
        "invalid UTF-8",
    ),
    "two documents": (
        put("data/profiles/x-y.yaml", "name: A\n---\nname: B\n"),
        2,
        "x-y.yaml",
        "YAML syntax",
    ),
    "enormous file": (
        put("data/profiles/x-y.yaml", "name: A\nbio: " + "x" * 6_000_000 + "\n"),
        2,
        "x-y.yaml",
        "expected at most",
    ),
    "deep nesting": (
        put("data/profiles/x-y.yaml", "name: A\nbio: " + "[" * 5000 + "]" * 5000 + "\n"),
        2,
        "x-y.yaml",
        "",
    ),
    "null name": (put("data/profiles/x-y.yaml", "name: null\n"), 2, "x-y.yaml", "found no value"),
    "empty string name": (
        put("data/profiles/x-y.yaml", "name: ''\n"),
        2,
        "x-y.yaml",
        "non-empty text",
    ),
    "private field unknown": (append(A_B, "private: [salary]\n"), 2, "a-b.yaml", "one of emails"),
    "publication id escapes": (
        replace(A_B, '    venue: "OSDI \'24"', '    venue: "OSDI \'24"\n    id: ../../../etc'),
        2,
        "a-b.yaml",
        "lower-case",
    ),
    "registry entry without kind": (
        append(ORGS, "x:\n  name: X\n"),
        2,
        "organizations.yaml",
        "missing required key",
    ),
}
BROKEN.pop("missing authors")


def link(path: str, target: str, content: str = "name: SECRET FIRST LINE\n"):
    """`path` becomes a symbolic link to `target` (relative to the project's parent)."""

    def edit(root):
        secret = root.parent / target
        secret.write_text(content, encoding="utf-8")
        (root / path).symlink_to(secret)

    return edit


def fifo(path: str):
    def edit(root):
        os.mkfifo(root / path)

    return edit


def remove(path: str):
    def edit(root):
        import shutil

        shutil.rmtree(root / path)

    return edit


def corrupt_cache(root):
    cache = root / ".kg-cache"
    entries = [*cache.glob("validation/*/*"), *cache.glob("parse/*/*")]
    assert entries
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:32] + b'[["not", "a", "term"], 3, {"x": 1}]')


def config(line: str):
    """kg.toml with `line` as the last [kg] setting (replacing the fixture's own)."""
    settings = ['base_iri = "https://kg.example.org/"', 'title = "Mini fixture"']
    kept = [x for x in settings if x.split(" ")[0] != line.split(" ")[0]]
    return put("kg.toml", "[kg]\n" + "\n".join([*kept, line]) + "\n")


# Issue 15 (hostile input, round two): one entry per class; the example first.
HOSTILE = {
    # filesystem
    "profile links outside data": (
        link("data/profiles/x-y.yaml", "secret.yaml"),
        2,
        "x-y.yaml",
        "outside data/",
    ),
    "registry links outside data": (
        lambda root: ((root / VENUES).unlink(), link(VENUES, "secret.yaml")(root)),
        2,
        "venues.yaml",
        "outside data/",
    ),
    "profile is a fifo": (fifo("data/profiles/x-y.yaml"), 2, "x-y.yaml", "not a regular file"),
    "yml profile": (put("data/profiles/x-y.yml", "name: X\n"), 2, "x-y.yml", "rename it"),
    "profiles folder missing": (remove("data/profiles"), 2, "data/profiles", "folder not found"),
    "file name too long": (
        put(f"data/profiles/{'a' * 150}.yaml", "name: X\n"),
        2,
        "aaaa.yaml",
        "at most 100",
    ),
    "out outside the project": (config('out = "../elsewhere"'), 2, "kg.toml", "inside the project"),
    "corrupt cache entry": (corrupt_cache, 0, "", ""),
    # bounded work
    "year 1": (
        replace(A_B, 'venue: "OSDI \'24"', 'venue: "OSDI \'24"\n    year: 1'),
        2,
        "a-b.yaml",
        "from 1000 to 2999",
    ),
    "year 2000000000": (
        replace("data/profiles/c-d.yaml", "    year: 2024\n", "    year: 2000000000\n"),
        2,
        "c-d.yaml",
        "from 1000 to 2999",
    ),
    "negative year": (
        replace("data/profiles/c-d.yaml", "    year: 2024\n", "    year: -44\n"),
        2,
        "c-d.yaml",
        "from 1000 to 2999",
    ),
    "date in year 0": (replace(A_B, "date: 2023-06", "date: 0000-06"), 2, "a-b.yaml", "from 1000"),
    "100000 nested [": (
        put("data/profiles/x-y.yaml", "name: A\nbio: " + "[" * 100_000 + "]" * 100_000 + "\n"),
        2,
        "x-y.yaml",
        "nesting is deeper than",
    ),
    "100000 nested -": (
        put("data/profiles/x-y.yaml", "name: A\nbio:\n  " + "- " * 100_000 + "x\n"),
        2,
        "x-y.yaml",
        "nesting is deeper than",
    ),
    "100000 unknown keys": (
        put("data/profiles/x-y.yaml", "name: A\n" + "".join(f"k{i}: v\n" for i in range(100_000))),
        2,
        "x-y.yaml",
        "and 99900 more problem(s) in this file",
    ),
    # addresses made from free text
    "url with |": (
        replace(A_B, "name: Ann Bee\n", "name: Ann Bee\nhomepage: https://a.org/x|y\n"),
        2,
        "a-b.yaml",
        "no '|' in an IRI",
    ),
    "url with a control character": (
        replace(A_B, "name: Ann Bee\n", 'name: Ann Bee\nhomepage: "https://a.org/\\x01"\n'),
        2,
        "a-b.yaml",
        "U+0001",
    ),
    "url with bidi override": (
        replace(A_B, "name: Ann Bee\n", "name: Ann Bee\nhomepage: https://a.org/\u202egpj.exe\n"),
        2,
        "a-b.yaml",
        "bidi",
    ),
    "email with quotes": (
        replace(A_B, "emails: [ann@example.org]", "emails: ['\"ann\"@example.org']"),
        2,
        "a-b.yaml",
        "an email address",
    ),
    "doi not a doi": (
        replace(A_B, 'venue: "OSDI \'24"', 'venue: "OSDI \'24"\n    doi: "see <paper>"'),
        2,
        "a-b.yaml",
        "a DOI like",
    ),
    "arxiv not an id": (
        replace(A_B, 'venue: "OSDI \'24"', 'venue: "OSDI \'24"\n    arxiv: "2408 08586"'),
        2,
        "a-b.yaml",
        "arXiv identifier",
    ),
    # configuration
    "base_iri with a space": (config('base_iri = "https://a b.org/"'), 2, "kg.toml", "base_iri"),
    "base_iri with >": (config('base_iri = "https://a.org/>x/"'), 2, "kg.toml", "no '>'"),
    "base_iri with a quote": (config('base_iri = "https://a.org/\\"/"'), 2, "kg.toml", "no '\"'"),
    "license not an IRI": (config('license = "CC BY 4.0"'), 2, "kg.toml", "license"),
    "sparql_endpoint with a space": (
        config('sparql_endpoint = "https://a.org/sp arql"'),
        2,
        "kg.toml",
        "sparql_endpoint",
    ),
    "setting of the wrong type": (config("title = 3"), 2, "kg.toml", "expected text in quotes"),
    "kg is not a table": (put("kg.toml", "kg = 3\n"), 2, "kg.toml", "must be a [kg] table"),
    # messages
    "NUL byte": (
        put("data/profiles/x-y.yaml", "name: A\nbio: x\x00y\n"),
        2,
        "x-y.yaml:2:7",
        "U+0000",
    ),
    "author written as *": (
        replace(A_B, "Xin Jin, {name: ROLL", "'*', {name: ROLL"),
        2,
        "a-b.yaml",
        "expected a person's name",
    ),
    "author written as Prof.": (
        replace(A_B, "Xin Jin, {name: ROLL", "Prof., {name: ROLL"),
        2,
        "a-b.yaml",
        "expected a person's name",
    ),
}
BROKEN.update(HOSTILE)


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built_project(tmp_path_factory):
    import shutil

    from conftest import MINI

    root = tmp_path_factory.mktemp("cli") / "project"
    shutil.copytree(MINI, root)
    assert main(["--project", str(root), "build"]) == 0
    return root


@pytest.fixture
def fresh(built_project, tmp_path):
    """A copy of the built project that a test may break."""
    import shutil

    root = tmp_path / "project"
    shutil.copytree(built_project, root)
    return root


def test_corpus_has_at_least_fifty_cases():
    assert len(BROKEN) >= 50


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_input_is_explained_and_nothing_is_written(fresh, capsys, case):
    root = fresh
    before = _snapshot(root / "dist")
    edit, code, file, text = BROKEN[case]
    edit(root)
    capsys.readouterr()
    started = time.monotonic()
    assert main(["--project", str(root), "build"]) == code
    assert time.monotonic() - started < 20
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    message = err if code == 2 else out
    assert file in message and text in message, message[-2000:]
    if code == 2 and file:
        assert f"{file}:" in message  # file:line:column
    assert _snapshot(root / "dist") == before  # the previous output is untouched


def test_violation_build_can_be_forced_and_says_so(fresh, capsys):
    root = fresh
    replace(A_B, "    end: 2024-05", "    end: 2022-05")(root)
    assert main(["--project", str(root), "build", "--allow-violations"]) == 0
    assert "published despite violations" in capsys.readouterr().err


def test_missing_data_directory_is_exit_2(tmp_path, capsys):
    assert main(["--project", str(tmp_path), "check"]) == 2
    assert "data directory not found" in capsys.readouterr().err


def test_no_project_found_is_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    assert "no kg project here" in capsys.readouterr().err


def test_unreadable_profile_is_exit_2(fresh, capsys):
    root = fresh
    if os.geteuid() == 0:  # root reads everything: use a directory where a file belongs
        (root / "data" / "profiles" / "x-y.yaml").mkdir()
    else:
        path = root / "data" / "profiles" / "x-y.yaml"
        path.write_text("name: X\n")
        path.chmod(0)
    assert main(["--project", str(root), "check"]) == 2
    assert "cannot read the file" in capsys.readouterr().err


def test_bad_configuration_is_exit_2(fresh, capsys):
    root = fresh
    write(root / "kg.toml", '[kg]\nbase_iri = "not an iri"\n')
    assert main(["--project", str(root), "check"]) == 2
    write(root / "kg.toml", '[kg]\nbase = "https://x.org/"\n')
    assert main(["--project", str(root), "check"]) == 2
    err = capsys.readouterr().err
    assert "must be an http(s) IRI" in err and "unknown setting(s) base" in err


def test_usage_errors_are_exit_2(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["frobnicate"])
    assert caught.value.code == 2
    capsys.readouterr()


def test_check_reports_every_problem_in_one_run(fresh, capsys):
    root = fresh
    append(A_B, "adviser: X\n")(root)
    put("data/profiles/x-y.yaml", "name: [A\n")(root)
    put("data/profiles/z-z.yaml", "name: Z\nemails: [nope]\n")(root)
    assert main(["--project", str(root), "check"]) == 2
    err = capsys.readouterr().err
    assert "3 problem(s) found" in err
    for name in ("a-b.yaml", "x-y.yaml", "z-z.yaml"):
        assert name in err


def test_validate_json_and_ttl_formats(built_project, capsys):
    assert main(["--project", str(built_project), "validate", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["conforms"] is True
    assert main(["--project", str(built_project), "validate", "--format", "ttl"]) == 0
    assert "sh:ValidationReport" in capsys.readouterr().out


def test_byte_order_mark_profile_builds(fresh, capsys):
    root = fresh
    path = root / A_B
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert main(["--project", str(root), "check"]) == 0
