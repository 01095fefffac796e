"""ORCID (issue 28): the profile's `orcid:` filled from the record, a fetch hint with the
record's own iD and the JSON Accept header, ROR ids kept in suggested organizations,
ORCID's XML answered with how to get JSON, fields of the wrong type reported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO

from kg.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"
SLUG = "yihao-zhao"
IID = "0000-0002-1825-0097"  # the iD of tests/fixtures/import/orcid-record.json


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(REPO / "data", root / "data")
    shutil.copy(REPO / "kg.toml", root / "kg.toml")
    profile = root / "data" / "profiles" / f"{SLUG}.yaml"
    lines = profile.read_text(encoding="utf-8").splitlines(keepends=True)
    profile.write_text("".join(ln for ln in lines if not ln.startswith("orcid:")), "utf-8")
    return root


def _record_with_ror(tmp_path: Path) -> Path:
    record = json.loads((FIXTURES / "orcid-record.json").read_text(encoding="utf-8"))
    for group in record["activities-summary"]["educations"]["affiliation-group"]:
        for entry in group["summaries"]:
            org = entry["education-summary"]["organization"]
            if org["name"] == "Example Institute of Technology":
                org["disambiguated-organization"] = {
                    "disambiguated-organization-identifier": "https://ror.org/00example0",
                    "disambiguation-source": "ROR",
                }
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    return path


def test_record_fills_orcid_hint_names_the_id_and_ror_is_kept(project, tmp_path, capsys):
    path = _record_with_ror(tmp_path)
    args = ["--project", str(project), "import", "orcid", str(path), "--person", SLUG]
    assert main(args) == 0
    captured = capsys.readouterr()
    profile = (project / "data" / "profiles" / f"{SLUG}.yaml").read_text(encoding="utf-8")
    assert f"name: Yihao Zhao\norcid: {IID}\n" in profile
    hint = f"curl -H 'Accept: application/json' https://pub.orcid.org/v3.0/{IID}/works/3333331"
    assert hint in captured.err and "{iD}" not in captured.err
    assert "example-institute-of-technology:" in captured.out
    assert "ror: 00example0" in captured.out


def test_orcid_xml_is_answered_with_how_to_get_json(project, tmp_path, capsys):
    path = tmp_path / "record.xml"
    path.write_text('<?xml version="1.0"?>\n<record:record path="/x"/>\n', encoding="utf-8")
    args = ["--project", str(project), "import", "orcid", str(path), "--person", SLUG]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{path}:1:" in err and "Accept: application/json" in err


def test_orcid_fields_of_the_wrong_type_are_reported(project, tmp_path, capsys):
    path = tmp_path / "record.json"
    bad = {"orcid-identifier": {"path": IID}, "activities-summary": {"works": {"group": [5]}}}
    path.write_text(json.dumps(bad), encoding="utf-8")
    args = ["--project", str(project), "import", "orcid", str(path), "--person", SLUG]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{path}:1:" in err and "wrong JSON type" in err
