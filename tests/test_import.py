"""kg import / kg export: fixtures shaped like real exports, merging, round trips."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import REPO

from kg.cli import main
from kg.config import load_config
from kg.errors import BadRecordsError, InputError
from kg.imports.bibtex import parse_bibtex
from kg.imports.importer import import_file, read_records
from kg.pipeline import build_graph, resolve_project
from kg.publish.citation import bibtex_file, csl_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"
SLUG = "yihao-zhao"


def records(name: str, source: str = "bibtex", skip_bad: bool = False):
    return read_records(source, FIXTURES / name, skip_bad)


def by_title(parsed, start: str):
    return next(w for w in parsed.works if w.title.startswith(start))


@pytest.fixture
def repo_copy(tmp_path) -> Path:
    """A writable copy of the seed project (data/ and kg.toml only)."""
    target = tmp_path / "project"
    shutil.copytree(REPO / "data", target / "data")
    if (REPO / "kg.toml").exists():
        shutil.copy(REPO / "kg.toml", target / "kg.toml")
    return target


def profile_path(root: Path, slug: str = SLUG) -> Path:
    return root / "data" / "profiles" / f"{slug}.yaml"


def empty_publications(root: Path, slug: str) -> None:
    """Drop the `publications:` block of a profile (comments inside it go too), and its
    `projects:`, which may name publications by title."""
    path = profile_path(root, slug)
    out, skipping = [], False
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith(("publications:", "projects:")):
            out.append(line.split(":")[0] + ": []\n")
            skipping = True
            continue
        if skipping and line[:1].strip() and not line.startswith("#"):
            skipping = False
        if not skipping:
            out.append(line)
    # projects name their papers by title: with the papers gone, so are those links
    text = re.sub(r'publications?: ("[^"]*"|\[[^\]]*\]|[^,}\n]*), *', "", "".join(out))
    text = re.sub(r"(?m)^ +publications?:.*\n", "", text)
    path.write_text(text, encoding="utf-8")


def publication_triples(root: Path) -> set:
    """Every triple about a publication node (or pointing at one), as a set; links
    between projects and publications left out (the round trip drops projects)."""
    _, mapped = build_graph(load_config(root))
    return {
        t
        for t in mapped.graph
        if "/publication/" in str(t[0]) + str(t[2]) and "/project/" not in str(t[0]) + str(t[2])
    }


@pytest.fixture(scope="module")
def seed_publications() -> set:
    return publication_triples(REPO)


# ------------------------------------------------------------------ readers


def test_google_scholar_bibtex_names_accents_and_arxiv_journal():
    parsed = records("google-scholar.bib")
    tide = by_title(parsed, "Tide")
    assert tide.title == "Tide: Elastic GPU Pools for Müultiple Tenants".replace("Müu", "Mü")
    assert [a.name for a in tide.authors] == ["Yihao Zhao", "Jörg Müller", "María Peña"]
    assert tide.truncated and "and others" in parsed.warnings[0]
    assert (tide.arxiv, tide.status, tide.type) == ("2501.01234", "preprint", "preprint")
    klotski = by_title(parsed, "Klotski")
    assert klotski.venue == "Proceedings of the ACM SIGCOMM 2023 Conference"
    assert klotski.origin.line == 1 and klotski.origin.key == "zhao2023klotski"


def test_dblp_bibtex_homonym_numbers_corr_and_doi():
    parsed = records("dblp.bib", "dblp")
    corr = by_title(parsed, "Elastic Schedulers")
    assert [a.name for a in corr.authors] == ["Yihao Zhao", "Wei Wang", "Xin Jin"]
    assert corr.authors[1].disambiguation == "0001"
    assert (corr.arxiv, corr.status, corr.doi) == ("2501.04321", "preprint", None)
    multi = by_title(parsed, "Multi-resource")
    assert multi.doi == "10.1145/3544216.3544224"
    assert multi.venue.startswith("SIGCOMM '22: ACM SIGCOMM 2022 Conference")


def test_acm_arxiv_and_zotero_bibtex():
    acm = records("acm.bib").works[0]
    assert acm.doi == "10.1145/3575693.3575721" and acm.year == 2023
    assert acm.venue.startswith("Proceedings of the 28th ACM International Conference")
    arxiv = records("arxiv.bib").works[0]
    assert arxiv.title == "Streamline: Serving LLMs with Elastic Memory"
    assert [(a.name, a.equal_contribution) for a in arxiv.authors] == [
        ("Yihao Zhao", True),
        ("Jiadun Chen", True),
        ("Peng Sun", True),
        ("Xin Jin", False),
    ]
    assert (arxiv.arxiv, arxiv.type, arxiv.status) == ("2408.08586", "preprint", "preprint")
    zotero = records("zotero.bib")
    gauge = by_title(zotero, "Gauge")
    assert gauge.title == "Gauge: Accurate Profiling of Naïve Schedulers"
    assert gauge.venue == "ACM Symposium on Operating Systems Principles 2024"  # @string # "…"
    assert [a.name for a in gauge.authors] == ["Yihao Zhao", "Anna van der Berg", "Xin Jin"]
    assert gauge.notes == ("Best paper candidate",)
    report = by_title(zotero, "Scheduling Notes")
    assert (report.type, report.status, report.venue) == ("report", "report", "Peking University")
    assert by_title(zotero, "Sharing GPUs").type == "thesis"
    assert zotero.bad == () and [w.split(": ", 1)[1] for w in zotero.warnings] == [
        "@book is not a kind of publication kg keeps (it keeps @inproceedings, @conference,"
        " @article, @misc, @online, @unpublished, @techreport, @report, @phdthesis,"
        " @mastersthesis, @thesis); skipped"
    ]


def test_marks_never_stay_in_names():
    text = (
        "@inproceedings{k, title={T}, year=2024, author={Ann Bee\\textsuperscript{*} and "
        "Cee Dee$^{\\dagger}$ and Dee*, Eve and {ROLL Team} and Fay Gee (Advisor)}}"
    )
    authors = parse_bibtex(text, "x.bib").works[0].authors
    assert [a.name for a in authors] == ["Ann Bee", "Cee Dee", "Eve Dee", "ROLL Team", "Fay Gee"]
    assert [a.equal_contribution for a in authors] == [True, True, True, False, False]
    assert authors[3].group and authors[4].annotation == "Advisor"


def test_month_macros_and_string_concatenation():
    text = (
        '@string{conf = "Symposium"}\n'
        '@inproceedings{k, title={T}, author={A B}, booktitle = conf # " 2024", '
        "month = sep, year = 2024}"
    )
    work = parse_bibtex(text, "x.bib").works[0]
    assert work.venue == "Symposium 2024" and work.year == 2024


def test_zotero_csl_json():
    parsed = records("zotero.json", "csl", skip_bad=True)
    ripple = by_title(parsed, "Ripple")
    assert [a.name for a in ripple.authors] == ["Yihao Zhao", "José Núñez", "ROLL Team"]
    assert ripple.authors[2].group and ripple.year == 2024
    assert ripple.type == "conference-paper" and ripple.doi == "10.1145/3620666.3651329"
    stream = by_title(parsed, "Streamline")
    assert (stream.arxiv, stream.type, stream.status, stream.doi) == (
        "2408.08586",
        "preprint",
        "preprint",
        None,
    )
    assert [a.equal_contribution for a in stream.authors] == [True, True]
    assert [str(b) for b in parsed.bad] == [
        f"{FIXTURES / 'zotero.json'}:51 (http://zotero.org/users/1234567/items/BROKEN01): "
        "no authors; expected `author`: a list of {family, given}"
    ]


def test_orcid_record_and_works_bulk():
    record = records("orcid-record.json", "orcid")
    assert [(a.kind, a.organization, str(a.start)) for a in record.affiliations] == [
        ("employment", "ByteDance", "2021-01"),
        ("employment", "Peking University", "2025-03-01"),
        ("education", "Peking University", "2021-09"),
        ("education", "Example Institute of Technology", "2015-09"),
    ]
    assert record.works == () and "3333331" in record.warnings[0]  # summaries: no authors
    bulk = records("orcid-works.json", "orcid", skip_bad=True)
    multi = by_title(bulk, "Multi-resource")
    assert [a.name for a in multi.authors][:2] == ["Yihao Zhao", "Yuanqiang Liu"]
    assert "Fernando Kuipers" not in [a.name for a in multi.authors]  # an editor
    quokka = by_title(bulk, "Quokka")
    assert [a.name for a in quokka.authors] == ["Yihao Zhao", "Xin Jin"]  # "first" first
    assert quokka.doi == "10.1109/tpds.2025.0000001"
    assert len(bulk.bad) == 1 and "error answer" in bulk.bad[0].message


def test_dblp_person_xml():
    parsed = records("dblp-person.xml", "dblp")
    corr = by_title(parsed, "Elastic Schedulers")
    assert corr.title == "Elastic Schedulers Revisited"  # dblp's final period dropped
    assert [a.name for a in corr.authors] == ["Yihao Zhao", "Wei Wang", "Xin Jin"]
    assert (corr.arxiv, corr.status, corr.origin.line) == ("2501.04321", "preprint", 6)
    elastic = by_title(parsed, "ElasticFlow")
    assert elastic.venue == "ASPLOS" and elastic.authors[5].name == "Peng Cheng"
    assert elastic.doi == "10.1145/3575693.3575721"


def test_dblp_xml_with_entities_is_refused(tmp_path):
    bomb = tmp_path / "bomb.xml"
    bomb.write_text('<!DOCTYPE x [<!ENTITY a "aaaa">]><dblpperson>&a;</dblpperson>')
    with pytest.raises(InputError, match="declares entities"):
        read_records("dblp", bomb)


def test_malformed_entries_are_reported_at_file_line_with_key():
    with pytest.raises(BadRecordsError) as caught:
        records("malformed.bib")
    lines = [str(p) for p in caught.value.problems]
    where = FIXTURES / "malformed.bib"
    assert lines == [
        f"{where}:8:1: noauthor2023: no authors; expected an `author` field",
        f"{where}:14:1: badyear: year '20x4'; expected four digits like 2024",
        f"{where}:20:1: broken2022: malformed entry: " + lines[2].split("malformed entry: ", 1)[1],
    ]
    skipped = records("malformed.bib", skip_bad=True)
    assert [w.origin.key for w in skipped.works] == ["good2024"]


# ------------------------------------------------------------------ merging


def test_import_adds_fills_reports_and_is_idempotent(repo_copy):
    config = load_config(repo_copy)
    before = profile_path(repo_copy).read_text(encoding="utf-8")
    dry = import_file(config, "bibtex", FIXTURES / "google-scholar.bib", SLUG, dry_run=True)
    assert not dry.written and profile_path(repo_copy).read_text(encoding="utf-8") == before
    assert dry.added == 1 and dry.filled == 1 and dry.matched == 1  # Klotski's pages filled
    assert "+    pages: 590–606" in dry.diff
    assert "+  - title: 'Tide: Elastic GPU Pools for Mültiple Tenants'" in dry.diff
    result = import_file(config, "bibtex", FIXTURES / "google-scholar.bib", SLUG)
    assert result.written and result.diff == dry.diff
    after = profile_path(repo_copy).read_text(encoding="utf-8")
    removed = [ln for ln in result.diff.splitlines() if ln.startswith("-") and ln[:3] != "---"]
    assert removed == []  # every original line (comments, flow lists) is kept as it was
    assert after.count("# reading:") == before.count("# reading:")
    again = import_file(config, "bibtex", FIXTURES / "google-scholar.bib", SLUG)
    assert (again.written, again.diff, again.added) == (False, "", 0)
    assert profile_path(repo_copy).read_text(encoding="utf-8") == after


def test_import_fills_missing_fields_and_reports_conflicts(repo_copy):
    config = load_config(repo_copy)
    result = import_file(config, "dblp", FIXTURES / "dblp-person.xml", SLUG)
    assert result.matched == 2 and result.added == 1
    text = profile_path(repo_copy).read_text(encoding="utf-8")
    assert "doi: 10.1145/3575693.3575721" in text  # filled into ElasticFlow
    assert "venue: ACM ASPLOS 2023" not in text
    (conflict,) = result.conflicts
    assert "GreenFlow" in conflict and "year 2025 here, 2024 in the profile" in conflict
    assert "year: 2024" in text.split("GreenFlow", 1)[1].split("title:", 1)[0]


def test_author_order_conflict_is_reported_not_written(repo_copy):
    bib = repo_copy / "swap.bib"
    bib.write_text(
        "@inproceedings{k, title={Multi-Resource Interleaving for Deep Learning Training},"
        " author={Liu, Yuanqiang and Zhao, Yihao and Peng, Yanghua and Zhu, Yibo and"
        " Liu, Xuanzhe and Jin, Xin}, booktitle={SIGCOMM}, year=2022}",
        encoding="utf-8",
    )
    before = profile_path(repo_copy).read_text(encoding="utf-8")
    result = import_file(load_config(repo_copy), "bibtex", bib, SLUG)
    assert any("different order" in c for c in result.conflicts)
    assert profile_path(repo_copy).read_text(encoding="utf-8") == before


def test_unknown_venue_prints_a_registry_entry_and_writes_a_valid_profile(repo_copy):
    config = load_config(repo_copy)
    result = import_file(config, "bibtex", FIXTURES / "zotero.bib", SLUG)
    assert result.registry_entries == (
        (
            "data/venues.yaml: peking-university",
            "peking-university:\n  name: Peking University\n  kind: report-series\n",
        ),
    )  # the report's institution; the thesis's school is no venue to register
    text = profile_path(repo_copy).read_text(encoding="utf-8")
    gauge = text.split("Gauge", 1)[1].split("title:", 1)[0]
    assert "venue: sosp\n" in gauge  # `@string` + " 2024" resolved through the registry
    assert "venue_as_printed: ACM Symposium on Operating Systems Principles 2024" in gauge
    resolve_project(config)  # the edited project still loads and resolves


def test_orcid_adds_positions_and_degrees_it_can_resolve(repo_copy):
    config = load_config(repo_copy)
    result = import_file(config, "orcid", FIXTURES / "orcid-record.json", SLUG)
    text = profile_path(repo_copy).read_text(encoding="utf-8")
    assert "organization: pku" in text and "role: Visiting Researcher" in text
    assert "Example Institute of Technology" not in text
    assert any("organizations.yaml" in where for where, _ in result.registry_entries)
    again = import_file(config, "orcid", FIXTURES / "orcid-record.json", SLUG)
    assert again.diff == ""


def test_failed_import_writes_nothing(repo_copy):
    before = profile_path(repo_copy).read_text(encoding="utf-8")
    with pytest.raises(BadRecordsError):
        import_file(load_config(repo_copy), "bibtex", FIXTURES / "malformed.bib", SLUG)
    assert profile_path(repo_copy).read_text(encoding="utf-8") == before
    assert sorted(p.name for p in profile_path(repo_copy).parent.iterdir()) == sorted(
        p.name for p in (REPO / "data" / "profiles").iterdir()
    )


# ------------------------------------------------------------------ round trips


def test_seed_publications_reimported_from_handwritten_bibtex_give_the_same_graph(
    repo_copy, seed_publications
):
    empty_publications(repo_copy, SLUG)
    assert publication_triples(repo_copy) != seed_publications
    result = import_file(load_config(repo_copy), "bibtex", FIXTURES / "yihao-zhao-seed.bib", SLUG)
    assert (result.added, result.conflicts, result.registry_entries) == (8, (), ())
    assert publication_triples(repo_copy) == seed_publications


@pytest.mark.parametrize(
    ("slug", "fmt"),
    [
        ("hanyu-zhao", "bibtex"),
        ("liangyu-zhao", "csl"),
        ("yinmin-zhong", "bibtex"),
        ("yuheng-zhao", "csl"),
        ("yihao-zhao", "csl"),
    ],
)
def test_export_then_import_gives_back_the_same_publications(
    repo_copy, seed_publications, slug, fmt
):
    resolution = resolve_project(load_config(REPO))
    exported = repo_copy / f"export.{fmt}"
    exported.write_text((bibtex_file if fmt == "bibtex" else csl_file)(resolution, slug))
    empty_publications(repo_copy, slug)
    result = import_file(load_config(repo_copy), fmt, exported, slug)
    assert result.conflicts == () and result.registry_entries == ()
    assert publication_triples(repo_copy) == seed_publications


def test_exports_are_deterministic_and_cli_prints_them(capsys):
    resolution = resolve_project(load_config(REPO))
    assert bibtex_file(resolution, SLUG) == bibtex_file(resolve_project(load_config(REPO)), SLUG)
    assert main(["--project", str(REPO), "export", "bibtex", SLUG]) == 0
    out = capsys.readouterr().out
    assert out == bibtex_file(resolution, SLUG)
    assert "@inproceedings{zhao2023klotski," in out and "author+an = {1=equal; 2=equal}" in out
    assert main(["--project", str(REPO), "export", "csl", SLUG]) == 0
    items = json.loads(capsys.readouterr().out)
    assert items[0]["id"] == "zhao2025seallm" and items[0]["status"] == "submitted"
    assert main(["--project", str(REPO), "export", "csl", "nobody"]) == 2


def test_cli_import_dry_run_and_exit_codes(repo_copy, capsys):
    before = profile_path(repo_copy).read_text(encoding="utf-8")
    args = ["--project", str(repo_copy), "import", "bibtex"]
    code = main([*args, str(FIXTURES / "arxiv.bib"), "--person", SLUG, "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0 and "+  - title: 'Streamline: Serving LLMs with Elastic Memory'" in out
    assert "would change; 1 added" in out
    assert profile_path(repo_copy).read_text(encoding="utf-8") == before
    assert main([*args, str(FIXTURES / "malformed.bib"), "--person", SLUG]) == 2
    err = capsys.readouterr().err
    assert "malformed.bib:8:1: noauthor2023: no authors" in err and "--skip-bad" in err
    assert main([*args, str(FIXTURES / "malformed.bib"), "--person", SLUG, "--skip-bad"]) == 0
    assert "skipped: " in capsys.readouterr().err
    assert main([*args, str(FIXTURES / "nothing.bib"), "--person", SLUG]) == 2


MARKED = (
    "@inproceedings{a, title={ElasticFlow: An Elastic Serverless Training Platform for"
    " Distributed Deep Learning}, author={Gu, Diandian* and Zhao, Yihao* and"
    " Zhong, Yinmin\\textsuperscript{*} and Xiong, Yifan and Han, Zhenhua and Cheng, Peng and"
    " Yang, Fan and Huang, Gang and Jin, Xin and Liu, Xuanzhe✉}, year=2023}"
)


@pytest.mark.parametrize("slug", ["yihao-zhao", "yinmin-zhong"])  # block list, flow list
def test_missing_author_marks_are_filled_in_place(repo_copy, slug):
    bib = repo_copy / "marks.bib"
    bib.write_text(MARKED, encoding="utf-8")
    config = load_config(repo_copy)
    result = import_file(config, "bibtex", bib, slug)
    assert (result.filled, result.conflicts) == (1, ())
    added = [ln[1:] for ln in result.diff.splitlines() if ln[:1] == "+" and ln[:3] != "+++"]
    assert "{name: Yinmin Zhong, equal_contribution: true}" in "".join(added)
    assert "{name: Xuanzhe Liu, corresponding: true}" in "".join(added)
    slots = (
        resolve_project(config)
        .publications["elasticflow-an-elastic-serverless-training-platform-for"]
        .authors
    )
    assert [s.equal_contribution for s in slots[:4]] == [True, True, True, False]
    assert slots[-1].corresponding
    assert import_file(config, "bibtex", bib, slug).diff == ""


def test_dblp_homonym_number_picks_the_registered_person(repo_copy):
    people = repo_copy / "data" / "people.yaml"
    people.write_text(
        people.read_text(encoding="utf-8").replace(
            "disambiguation: HKUST", 'disambiguation: "0001"'
        ),
        encoding="utf-8",
    )
    import_file(load_config(repo_copy), "dblp", FIXTURES / "dblp.bib", SLUG)
    text = profile_path(repo_copy).read_text(encoding="utf-8")
    assert "{name: Wei Wang, person: wei-wang-hkust}" in text
    assert "Wei Wang 0001" not in text


def test_a_profile_without_publications_gets_the_section(repo_copy):
    path = profile_path(repo_copy)
    empty_publications(repo_copy, SLUG)
    path.write_text(path.read_text(encoding="utf-8").replace("publications: []\n", ""))
    import_file(load_config(repo_copy), "bibtex", FIXTURES / "arxiv.bib", SLUG)
    text = path.read_text(encoding="utf-8")
    assert text.endswith(
        "publications:\n"
        "  - title: 'Streamline: Serving LLMs with Elastic Memory'\n"
        "    authors:\n"
        "      - {name: Yihao Zhao, equal_contribution: true}\n"
        "      - {name: Jiadun Chen, equal_contribution: true}\n"
        "      - {name: Peng Sun, equal_contribution: true}\n"
        "      - Xin Jin\n"
        "    venue: arxiv\n"
        "    year: 2024\n"
        "    status: preprint\n"
        "    arxiv: '2408.08586'\n"
    )


def test_links_that_are_not_web_addresses_are_dropped(repo_copy):
    bib = repo_copy / "evil.bib"
    bib.write_text(
        "@misc{e, title={Evil}, author={Zhao, Yihao}, year=2024,"
        " url={javascript:alert(1)}, kg-links={Code <file:///etc/passwd>; Slides}}",
        encoding="utf-8",
    )
    import_file(load_config(repo_copy), "bibtex", bib, SLUG)
    text = profile_path(repo_copy).read_text(encoding="utf-8")
    assert "links: [{label: Code}, {label: Slides}]" in text
    assert "javascript" not in text and "file:" not in text


def test_windows_line_ends_byte_order_mark_and_file_mode_survive(repo_copy):
    path = profile_path(repo_copy)
    text = path.read_text(encoding="utf-8")
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    path.chmod(0o644)
    import_file(load_config(repo_copy), "bibtex", FIXTURES / "arxiv.bib", SLUG)
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf# yaml-language-server")
    assert raw.count(b"\n") == raw.count(b"\r\n") > text.count("\n")
    assert path.stat().st_mode & 0o777 == 0o644
    resolve_project(load_config(repo_copy))


def test_venue_text_resolves_through_series_colon_and_acronym_with_year(repo_copy):
    config = load_config(repo_copy)
    acm = import_file(config, "bibtex", FIXTURES / "acm.bib", SLUG, dry_run=True)
    assert (acm.matched, acm.conflicts) == (1, ())  # `series = {ASPLOS 2023}`
    assert "+    doi: 10.1145/3575693.3575721" in acm.diff
    dblp = import_file(config, "bibtex", FIXTURES / "dblp.bib", SLUG, dry_run=True)
    assert dblp.conflicts == ()  # "SIGCOMM '22: ACM SIGCOMM 2022 Conference, …" is sigcomm
    journal = repo_copy / "ccr.bib"
    journal.write_text(
        "@article{c, title={A Note}, author={Zhao, Yihao}, year=2023,"
        " journal={ACM SIGCOMM Computer Communication Review}}",
        encoding="utf-8",
    )
    ccr = import_file(config, "bibtex", journal, SLUG, dry_run=True)
    assert "+    venue: sigcomm" not in ccr.diff  # an acronym without a year is not enough
    assert [w for w, _ in ccr.registry_entries] == [
        "data/venues.yaml: acm-sigcomm-computer-communication-review"
    ]
    assert "kind: journal" in ccr.registry_entries[0][1]


def test_import_refuses_a_fifo_or_a_device_without_hanging(repo_copy, tmp_path, capsys):
    fifo = tmp_path / "hang.bib"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        args = ["--project", str(repo_copy), "import", "bibtex", str(path), "--person", SLUG]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "not a regular file" in err and "Traceback" not in err
