"""`kg check` and friends on a newcomer's mistakes: every error in one run, suggestions that
are right or absent, the YAML that fixes a missing registry entry, warnings for data that
loads but says something else, and machine-readable output (JSON, GitHub annotations)."""

from __future__ import annotations

import json
import os
import sys

from kg.cli import main

A_B = "data/profiles/a-b.yaml"


def edit(root, path: str, old: str, new: str) -> None:
    target = root / path
    text = target.read_text(encoding="utf-8")
    assert old in text, (path, old)
    target.write_text(text.replace(old, new, 1), encoding="utf-8")


def run(project, *args: str) -> int:
    return main(["--project", str(project), *args])


def test_structural_and_reference_errors_are_reported_in_one_run(project, capsys):
    edit(project, A_B, "    degree: Ph.D.", "    degre: Ph.D.")  # structural, same file
    edit(project, A_B, "  - institution: PKU", "  - institution: Tsinghua University")
    edit(project, A_B, 'venue: "OSDI \'24"', 'venue: "EuroSys \'24"')
    edit(project, A_B, "[Prof. Xin Jin]", "[{name: Xin Jin, person: xin-jin}]")
    assert run(project, "check") == 2
    err = capsys.readouterr().err
    assert "unknown key 'degre' (did you mean 'degree'?)" in err
    assert "unknown organization 'Tsinghua University'" in err
    assert "unknown venue 'EuroSys'" in err
    assert "unknown person 'xin-jin'" in err
    assert "4 problem(s) found" in err


def test_suggestions_are_right_or_absent_and_the_fix_is_printed(project, capsys):
    edit(project, A_B, "  - institution: PKU", "  - institution: Tsinghua University")
    edit(project, A_B, "  - organization: ByteDance", "  - organization: Bytedance Inc")
    with (project / "data" / "people.yaml").open("a", encoding="utf-8") as people:
        people.write("xianyan-jia:\n  name: Xianyan Jia\n")
    edit(project, A_B, "[Prof. Xin Jin]", "[{name: Xin Jin, person: xin-jin}]")
    assert run(project, "check") == 2
    err = capsys.readouterr().err
    assert "did you mean 'pku'" not in err and "xianyan-jia'?" not in err
    assert "unknown organization 'Bytedance Inc'" in err and "did you mean 'bytedance'?" in err
    # the bundled registry knows Tsinghua: its entry, identifiers included, is the fix
    assert "    to add it, append to data/organizations.yaml:\n    tsinghua:\n" in err
    assert "      ror: 03cve4549\n" in err
    assert "    xin-jin:\n      name: Xin Jin\n" in err


def test_an_unquoted_colon_in_a_title_gets_a_hint_to_quote_it(project, capsys):
    edit(project, A_B, 'title: "Paper: One"', "title: Paper: One")
    assert run(project, "check") == 2
    err = capsys.readouterr().err
    assert "mapping values are not allowed" in err
    assert 'must be quoted: title: "Paper: One"' in err


def test_a_star_in_a_name_and_an_unknown_service_are_warnings(project, capsys):
    edit(project, A_B, "Cee Dee]", "Cee Dee*]")
    edit(
        project,
        A_B,
        "{service: github, username: annb}",
        "{service: github, username: annb}, {service: mastodon, username: ab}",
    )
    assert run(project, "check") == 0
    err = capsys.readouterr().err
    assert "warning: data/profiles/a-b.yaml:" in err
    assert "{name: Cee Dee, equal_contribution: true}" in err
    assert "'mastodon' accounts" in err


def test_a_capitalised_service_keeps_its_account(project, capsys):
    edit(project, A_B, "{service: github, username: annb}", "{service: GitHub, username: annb}")
    assert run(project, "embed", "a-b", "--json") == 0
    assert "https://github.com/annb" in capsys.readouterr().out


def test_check_json_lists_errors_with_their_fix(project, capsys):
    edit(project, A_B, "  - institution: PKU", "  - institution: Tsinghua University")
    assert run(project, "check", "--format", "json") == 2
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["warnings"] == []
    [error] = report["errors"]
    assert (error["file"], error["line"], error["path"]) == (A_B, 12, "education[0].institution")
    assert "tsinghua:\n  name: Tsinghua University" in error["fix"]


def test_check_json_on_clean_data_and_resolve_json(project, capsys):
    assert run(project, "check", "--format", "json") == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"ok": True, "errors": [], "warnings": []}
    assert err.startswith("ok: 2 profiles")
    assert run(project, "resolve", "--format", "json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["people"] >= 3 and any(n["kind"] == "merged" for n in report["notes"])


def test_github_annotations_for_check_and_validate(project, capsys):
    edit(project, A_B, "  - institution: PKU", "  - institution: Tsinghua University")
    assert run(project, "check", "--format", "github") == 2
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("::error file=data/profiles/a-b.yaml,line=12,col=5::")
    assert "%0Atsinghua%3A" not in line and "%0Atsinghua:%0A" in line  # message: newlines only
    edit(project, A_B, "  - institution: Tsinghua University", "  - institution: PKU")
    edit(project, A_B, "orcid: 0000-0002-1825-0097\n", "")
    assert run(project, "validate", "--format", "github") == 0
    out = capsys.readouterr().out
    assert "::notice file=data/profiles/a-b.yaml,line=1,col=1::" in out
    assert out.rstrip().splitlines()[-1].startswith("validation: conforms")


def test_resolve_and_validate_json_report_input_errors_as_json(project, capsys):
    edit(project, A_B, "  - institution: PKU", "  - institution: Nowhere U")
    for command in ("resolve", "validate"):
        assert run(project, command, "--format", "json") == 2
        assert json.loads(capsys.readouterr().out)["errors"][0]["path"] == (
            "education[0].institution"
        )


def test_a_closed_pipe_ends_quietly(monkeypatch, capsys):
    """`kg schema | head`: the reader is gone; kg stops without a traceback, exit 0."""
    read, write = os.pipe()
    os.close(read)  # nobody will read: writing raises BrokenPipeError (EPIPE)
    with open(write, "w", buffering=1, encoding="utf-8") as closed:
        monkeypatch.setattr(sys, "stdout", closed)
        assert main(["schema"]) == 0
        assert os.fstat(closed.fileno()).st_ino == os.stat(os.devnull).st_ino
