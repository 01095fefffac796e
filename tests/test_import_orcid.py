"""ORCID (issue 28): the profile's `orcid:` filled from the record, a fetch hint with the
record's own iD and the JSON Accept header, ROR ids kept in suggested organizations,
ORCID's XML read like its JSON, fields of the wrong type reported."""

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


NS = (
    'xmlns:common="http://www.orcid.org/ns/common" xmlns:work="http://www.orcid.org/ns/work" '
    'xmlns:record="http://www.orcid.org/ns/record" '
    'xmlns:activities="http://www.orcid.org/ns/activities" '
    'xmlns:employment="http://www.orcid.org/ns/employment" xmlns:bulk="http://www.orcid.org/ns/bulk"'
)
# What ORCID answers without `Accept: application/json` (API 3.0 XML), cut to one
# employment and one work summary.
RECORD_XML = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<record:record path="/{IID}" {NS}>
  <common:orcid-identifier>
    <common:uri>https://orcid.org/{IID}</common:uri>
    <common:path>{IID}</common:path>
  </common:orcid-identifier>
  <activities:activities-summary>
    <activities:employments>
      <activities:affiliation-group>
        <employment:employment-summary put-code="1111112" visibility="public">
          <common:role-title>Visiting Researcher</common:role-title>
          <common:start-date>
          <common:year>2025</common:year>
          <common:month>03</common:month>
          </common:start-date>
          <common:organization>
            <common:name>Peking University</common:name>
            <common:address>
            <common:city>Beijing</common:city>
            <common:country>CN</common:country>
            </common:address>
            <common:disambiguated-organization>
              <common:disambiguated-organization-identifier>
                https://ror.org/02v51f717
              </common:disambiguated-organization-identifier>
              <common:disambiguation-source>ROR</common:disambiguation-source>
            </common:disambiguated-organization>
          </common:organization>
        </employment:employment-summary>
      </activities:affiliation-group>
    </activities:employments>
    <activities:works>
      <activities:group>
        <work:work-summary put-code="3333331">
          <work:title><common:title>Quokka: A Summary</common:title></work:title>
          <work:type>conference-paper</work:type>
        </work:work-summary>
      </activities:group>
    </activities:works>
  </activities:activities-summary>
</record:record>
"""
WORKS_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<bulk:bulk {NS}>
  <work:work put-code="3333331">
    <work:title><common:title>Quokka: Fast Things</common:title></work:title>
    <work:journal-title>IEEE TPDS</work:journal-title>
    <work:type>journal-article</work:type>
    <common:publication-date><common:year>2025</common:year></common:publication-date>
    <common:external-ids>
      <common:external-id>
        <common:external-id-type>doi</common:external-id-type>
        <common:external-id-value>10.1109/TPDS.2025.0000001</common:external-id-value>
        <common:external-id-normalized transient="true">
          10.1109/tpds.2025.0000001
        </common:external-id-normalized>
      </common:external-id>
    </common:external-ids>
    <work:contributors>
      <work:contributor>
        <work:credit-name>Xin Jin</work:credit-name>
        <work:contributor-attributes>
        <work:contributor-sequence>additional</work:contributor-sequence>
        <work:contributor-role>author</work:contributor-role>
        </work:contributor-attributes>
      </work:contributor>
      <work:contributor>
        <work:credit-name>Yihao Zhao</work:credit-name>
        <work:contributor-attributes>
        <work:contributor-sequence>first</work:contributor-sequence>
        <work:contributor-role>author</work:contributor-role>
        </work:contributor-attributes>
      </work:contributor>
    </work:contributors>
  </work:work>
</bulk:bulk>
"""


def test_orcid_xml_record_and_works_are_read_like_json(tmp_path):
    from kg.imports.importer import read_records

    (tmp_path / "record.xml").write_text(RECORD_XML, encoding="utf-8")
    (tmp_path / "works.xml").write_text(WORKS_XML, encoding="utf-8")
    record = read_records("orcid", tmp_path / "record.xml")
    (job,) = record.affiliations
    assert (job.organization, job.role, str(job.start)) == (
        "Peking University",
        "Visiting Researcher",
        "2025-03",
    )
    assert (job.location, job.ror, record.orcid) == ("Beijing, CN", "02v51f717", IID)
    assert f"{IID}/works/3333331" in record.warnings[0]
    (work,) = read_records("orcid", tmp_path / "works.xml").works
    assert (work.title, work.venue, work.year) == ("Quokka: Fast Things", "IEEE TPDS", 2025)
    assert [a.name for a in work.authors] == ["Yihao Zhao", "Xin Jin"]  # "first" first
    assert work.doi == "10.1109/tpds.2025.0000001"


def test_orcid_xml_with_entities_is_refused(project, tmp_path, capsys):
    path = tmp_path / "record.xml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "x">]>\n<r>&a;</r>\n')
    args = ["--project", str(project), "import", "orcid", str(path), "--person", SLUG]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{path}:1:" in err and "entities" in err


def test_orcid_fields_of_the_wrong_type_are_reported(project, tmp_path, capsys):
    path = tmp_path / "record.json"
    bad = {"orcid-identifier": {"path": IID}, "activities-summary": {"works": {"group": [5]}}}
    path.write_text(json.dumps(bad), encoding="utf-8")
    args = ["--project", str(project), "import", "orcid", str(path), "--person", SLUG]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{path}:1:" in err and "wrong JSON type" in err
