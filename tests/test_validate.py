"""kg.validate.shacl and shapes/: one minimal invalid input per constraint, traced to YAML lines.

The inputs run through the default (compiled) engine; tests/test_validate_compiled.py
checks that engine against pySHACL, and tests/test_partition.py pySHACL in parts."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import MINI, PROFILES, REPO
from rdflib import Graph, URIRef
from rdflib.namespace import RDF, SH

from kg.config import load_config
from kg.graph.triples import Triples
from kg.ingest.load import load_file
from kg.model import PartialDate, Profile
from kg.pipeline import build_graph, validate_project
from kg.validate.shacl import shapes_graph, validate, validate_compiled

B = "https://kg.example.org/"
PREFIXES = """
PREFIX schema: <http://schema.org/>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
PREFIX kg: <https://w3id.org/kg-profiles/vocab#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""
A1 = "<https://kg.example.org/publication/paper-one/author/1>"
ANN = "b:person/a-b"
EDU = "<https://kg.example.org/person/a-b/education/1>"
CRED = "<https://kg.example.org/person/a-b/education/1/credential>"
POS = "<https://kg.example.org/person/a-b/position/1>"
AWARD = "<https://kg.example.org/person/a-b/award/1>"
COURSE = "<https://kg.example.org/course/pku/os>"
INSTANCE = "<https://kg.example.org/course/pku/os/fall-2022>"
TEACH = "<https://kg.example.org/person/a-b/teaching/1/fall-2022>"
EDITION = "<https://kg.example.org/venue/osdi/2024>"
PAPER = "b:publication/paper-one"
TOPIC = "b:topic/distributed-systems"
ACCOUNT = "<https://kg.example.org/person/a-b/account/github>"
PROJECT = "<https://kg.example.org/person/c-d/project/tool>"
PROFILE = "b:profile/a-b"
LISTING = "<https://kg.example.org/publication/paper-one/listing/a-b>"


def replace(node: str, prop: str, value: str) -> str:
    where = f"WHERE {{ {node} {prop} ?x }}"
    return f"DELETE {{ {node} {prop} ?x }} INSERT {{ {node} {prop} {value} }} {where}"


def delete(node: str, prop: str) -> str:
    return f"DELETE WHERE {{ {node} {prop} ?x }}"


def insert(triples: str) -> str:
    return f"INSERT DATA {{ {triples} }}"


# constraint (shape local name) -> SPARQL Update that breaks exactly that constraint
CASES = {
    "Authorship-author": replace(A1, "kg:author", '"Nobody"'),
    "Authorship-corresponding": insert(f'{A1} kg:corresponding "yes"'),
    "Authorship-equalContribution": insert(
        "<https://kg.example.org/publication/paper-one/author/2> kg:equalContribution false"
    ),
    "Authorship-printedName": delete(A1, "kg:printedName"),
    "Authorship-rank": insert(
        "b:loose a kg:Authorship ; kg:author b:person/a-b ; kg:printedName 'A' ; "
        "kg:equalContribution true ; kg:corresponding false ; kg:rank 0"
    ),
    "Account-holder": delete(ANN, "foaf:account"),
    "Account-name": delete(ACCOUNT, "foaf:accountName"),
    "Account-serviceHomepage": insert(f'{ACCOUNT} foaf:accountServiceHomepage "github.com"'),
    "Account-url": insert(f'{ACCOUNT} schema:url "github.com/annb"'),
    "AwardReceipt-awardedBy": insert(f"{AWARD} kg:awardedBy b:person/a-b"),
    "AwardReceipt-date": replace(AWARD, "kg:awardDate", '"June 2023"'),
    "AwardReceipt-name": delete(AWARD, "schema:name"),
    "AwardReceipt-recipient": delete(AWARD, "kg:recipient"),
    "Course-instance": delete(COURSE, "schema:hasCourseInstance"),
    "Course-name": delete(COURSE, "schema:name"),
    "CourseInstance": delete(INSTANCE, "schema:instructor"),
    "Credential-category": replace(CRED, "schema:credentialCategory", '"diploma"'),
    "Credential-level": replace(CRED, "schema:educationalLevel", '"phd"'),
    "Credential-name": delete(CRED, "schema:name"),
    "Credential-recognizedBy": delete(CRED, "schema:recognizedBy"),
    "Credential-status": insert(f'{CRED} kg:educationStatus "done"'),
    "CredentialLevel": delete(CRED, "schema:educationalLevel"),
    "EducationRole-advisor": insert(f"{EDU} kg:advisor b:org/pku"),
    "EducationRole-alumniOf": delete(EDU, "schema:alumniOf"),
    "EmployeeRole-positionType": insert(f'{POS} kg:positionType "job"'),
    "EmployeeRole-worksFor": delete(POS, "schema:worksFor"),
    "Event-editionNumber": replace(EDITION, "kg:editionNumber", "0"),
    "Event-name": delete(EDITION, "schema:name"),
    "Event-startDate": replace(EDITION, "schema:startDate", '"2024"'),
    "Event-superEvent": insert(f"{EDITION} schema:superEvent b:org/pku"),
    "IdentityBasis": insert("b:thing a kg:IdentityBasis"),
    "InstructorRole": insert(f"{TEACH} schema:instructor b:person/c-d"),
    "Listing": delete(LISTING, "kg:listedIn"),
    "Listing-claims": insert(
        "<https://kg.example.org/publication/paper-one/listing/c-d> "
        "kg:claimsEqualContribution <https://kg.example.org/publication/paper-one/author/2>"
    ),
    "Listing-work": insert(f"b:publication/homonyms kg:listing {LISTING}"),
    "Organization-name": delete("b:org/pku", "schema:name"),
    "Organization-noCycle": insert(
        "b:org/bytedance schema:parentOrganization b:org/pku . "
        "b:org/pku schema:parentOrganization b:org/bytedance"
    ),
    "Organization-parent": insert("b:org/bytedance-aml schema:parentOrganization b:org/pku"),
    "Organization-url": insert('b:org/pku schema:url "http://pku.edu.cn"'),
    "PerformanceRole": delete(
        "<https://kg.example.org/person/a-b/talk/1/1/speaker>", "schema:performer"
    ),
    "Person-alternateName": insert(f"{ANN} schema:alternateName 42"),
    "Person-email": insert(f'{ANN} schema:email "not-an-email"'),
    "Person-foafName": delete(ANN, "foaf:name"),
    "Person-mbox": insert(f'{ANN} foaf:mbox "ann@example.org"'),
    "Person-name": replace(ANN, "schema:name", '""') + " ; " + replace(ANN, "foaf:name", '""'),
    "Person-sameAs": insert(f'{ANN} schema:sameAs "github"'),
    "Person-url": insert(f"{ANN} schema:url <ftp://example.org/ann>"),
    "PositionDates": delete(POS, "schema:startDate"),
    "ProfileLink": insert('b:thing a schema:WebPage ; schema:name "x"'),
    "Proceedings": delete("<https://kg.example.org/venue/osdi/2024/proceedings>", "schema:about"),
    "ProfilePage-dateModified": replace(PROFILE, "schema:dateModified", '"2024"^^xsd:gYear'),
    "ProfilePage-mainEntity": (
        f"DELETE {{ {PROFILE} schema:mainEntity ?p ; foaf:primaryTopic ?p }} "
        f"INSERT {{ {PROFILE} schema:mainEntity b:thing ; foaf:primaryTopic b:thing . "
        "b:thing schema:email 't@example.org' ; schema:knowsAbout 'y' ; "
        "schema:sameAs <https://orcid.org/0000-0002-1825-0097> }"
        f" WHERE {{ {PROFILE} schema:mainEntity ?p }}"
    ),
    "ProfilePage-primaryTopic": delete(PROFILE, "foaf:primaryTopic"),
    "ProfiledPerson-contact": delete(ANN, "schema:email"),
    "ProfiledPerson-interests": delete(ANN, "schema:knowsAbout"),
    "ProfiledPerson-orcid": delete(ANN, "schema:sameAs"),
    "Project-creator": replace(PROJECT, "schema:creator", "b:org/pku"),
    "Project-dateCreated": replace(PROJECT, "schema:dateCreated", '"Jan 2024"'),
    "Project-describedIn": insert(f"{PROJECT} kg:describedIn b:org/pku"),
    "Project-name": delete(PROJECT, "schema:name"),
    "Project-team": insert(f"{PROJECT} schema:sourceOrganization b:person/a-b"),
    "Project-url": insert(f'{PROJECT} schema:url "example.org/tool"'),
    "Publication-author": insert(f'{PAPER} schema:author "someone"'),
    "Publication-authorship": delete("b:publication/homonyms", "kg:authorship"),
    "Publication-datePublished": replace(PAPER, "schema:datePublished", '"2024"'),
    "Publication-name": delete(PAPER, "schema:name"),
    "Publication-ranks": replace(
        "<https://kg.example.org/publication/paper-one/author/2>", "kg:rank", "5"
    ),
    "Publication-status": replace(PAPER, "schema:creativeWorkStatus", '"done"'),
    "Publication-type": replace(PAPER, "kg:publicationType", '"blog"'),
    "PublishedPlace": delete(PAPER, "schema:isPartOf")
    + f" ; DELETE WHERE {{ {EDITION} <http://schema.org/workFeatured> ?y }}",
    "RepeatedAuthor": replace(
        "<https://kg.example.org/publication/paper-one/author/2>", "kg:author", ANN
    ),
    "Role-current": insert(f'{EDU} kg:current "yes"'),
    "Role-endDate": insert(f'{POS} schema:endDate "2024-06"'),
    "Role-endedNotCurrent": insert(f'{EDU} schema:endDate "2025"^^xsd:gYear'),
    "Role-roleName": delete(POS, "schema:roleName"),
    "Role-startBeforeEnd": replace(POS, "schema:endDate", '"2022"^^xsd:gYear'),
    "Role-startDate": insert(f'{POS} schema:startDate "2023-09"^^xsd:gYearMonth'),
    "SelfAdvised": insert(f"{POS} kg:mentor {ANN}"),
    "ServiceRole-person": delete(
        "<https://kg.example.org/person/a-b/service/1/osdi>", "schema:contributor"
    ),
    "Talk-performer": insert(
        "<https://kg.example.org/person/a-b/talk/1/1> schema:performer b:org/pku"
    ),
    "Topic-name": delete(TOPIC, "schema:name"),
    "Topic-termSet": insert(f"{TOPIC} schema:inDefinedTermSet b:org/pku"),
    "TopicSet-name": delete("b:topic-set/languages", "schema:name"),
    "Venue-kind": replace("b:venue/osdi", "kg:venueKind", '"blog"'),
    "Venue-name": delete("b:venue/osdi", "schema:name"),
    "VenueRanking-list": delete("b:venue/osdi/rank/ccf", "kg:rankingList"),
    "VenueRanking-value": delete("b:venue/osdi/rank/ccf", "kg:rankValue"),
    "WorksCounter": replace("b:person/a-b/writes", "schema:userInteractionCount", "-1"),
}


def constraint_ids(shapes: Graph) -> set[str]:
    """Named property shapes, and node shapes with SPARQL or anonymous property constraints."""
    ids = {s for s in shapes.subjects(RDF.type, SH.PropertyShape) if isinstance(s, URIRef)}
    for node in shapes.subjects(RDF.type, SH.NodeShape):
        inline = any(not isinstance(p, URIRef) for p in shapes.objects(node, SH.property))
        if (node, SH.sparql, None) in shapes or inline:
            ids.add(node)
    return {str(i).split("#", 1)[1] for i in ids}


@pytest.fixture(scope="module")
def config():
    return load_config(MINI)


@pytest.fixture(scope="module")
def mini(config):
    return build_graph(config, cache=False)[1]  # the fixture folder is not written


def test_every_constraint_has_a_case(config):
    assert constraint_ids(shapes_graph(config.shapes_dir, config.ontology_dir)) == set(CASES)


@pytest.mark.parametrize("engine", [validate, validate_compiled])
def test_the_valid_twin_has_no_results(config, mini, engine):
    graph = mini.graph if engine is validate else mini.triples
    report = engine(graph, mini.sources, config.shapes_dir, config.ontology_dir)
    assert report.results == ()
    assert report.conforms


@pytest.mark.parametrize("constraint", sorted(CASES))
def test_each_constraint_is_triggered_alone_with_its_message(config, mini, constraint):
    shapes = shapes_graph(config.shapes_dir, config.ontology_dir)
    graph = Graph()
    for triple in mini.graph:
        graph.add(triple)
    update = re.sub(r"\bb:([\w/-]+)", rf"<{B}\1>", CASES[constraint])
    graph.update(PREFIXES + update)
    report = validate_compiled(Triples(graph), mini.sources, config.shapes_dir, config.ontology_dir)
    fired = {r.shape.split("#", 1)[1] for r in report.results}
    assert fired == {constraint}
    shape = URIRef("https://w3id.org/kg-profiles/shapes#" + constraint)
    messages = {str(m) for m in shapes.objects(None, SH.message)}
    for result in report.results:
        assert result.message in messages or "{" not in result.message
        assert result.source is not None or result.focus.endswith(("/loose", "/thing"))
    severity = shapes.value(shape, SH.severity) or next(
        (shapes.value(p, SH.severity) for p in shapes.objects(shape, SH.property)), SH.Violation
    )
    assert {r.severity for r in report.results} == {str(severity).rsplit("#", 1)[1]}
    assert report.conforms == (severity != SH.Violation)


# ------------------------------------------------------------------ from YAML, with lines


@pytest.fixture
def project(tmp_path):
    target = tmp_path / "mini"
    shutil.copytree(MINI, target)
    return target


YAML_CASES = {
    # constraint: (file, text to replace, replacement, reported line)
    "Role-startBeforeEnd": ("a-b", "    end: 2024-05\n", "    end: 2022-01\n", 20),
    "PositionDates": ("a-b", "    start: 2023-08\n", "", 20),
    "ProfiledPerson-contact": ("c-d", "homepage: https://cee.example.org/\n", "", 1),
    "ProfiledPerson-interests": ("c-d", "interests: [Databases]\n", "", 1),
    "Role-endDate": ("a-b", "    end: present\n", "    end: 2026\n", None),
}


@pytest.mark.parametrize("constraint", sorted(YAML_CASES))
def test_yaml_mistakes_are_reported_at_their_line(project, constraint):
    slug, old, new, line = YAML_CASES[constraint]
    path = project / "data" / "profiles" / f"{slug}.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    _, report = validate_project(load_config(project))
    if line is None:  # a valid twin: a dated end instead of "present" is fine
        assert report.results == ()
        return
    assert {r.shape.rsplit("#", 1)[1] for r in report.results} == {constraint}
    for result in report.results:
        assert result.source.file == f"data/profiles/{slug}.yaml"
        assert result.source.line == line


# ------------------------------------------------------------------ the seed data


def test_seed_data_conforms(repo_config):
    _, report = validate_project(repo_config)
    violations = [str(r) for r in report.results if r.severity == "Violation"]
    assert violations == []


def test_every_shape_targets_something_in_the_seed_graph(repo_config, seed_build):
    """A namespace slip (https://schema.org/) would make shapes target nothing."""
    graph = seed_build[1].graph
    shapes = shapes_graph(repo_config.shapes_dir, repo_config.ontology_dir)
    empty = []
    for shape in set(shapes.subjects(RDF.type, SH.NodeShape)):
        targets = set()
        for cls in shapes.objects(shape, SH.targetClass):
            targets |= set(graph.subjects(RDF.type, cls))
        for prop in shapes.objects(shape, SH.targetSubjectsOf):
            targets |= set(graph.subjects(prop, None))
        for prop in shapes.objects(shape, SH.targetObjectsOf):
            targets |= set(graph.objects(None, prop))
        for target in shapes.objects(shape, SH.target):
            query = shapes.value(target, SH.select)
            targets |= {row[0] for row in graph.query(str(query))}
        if not targets:
            empty.append(str(shape))
    assert empty == []


def _dated_entry(profile: Profile):
    for entry in (*profile.positions, *profile.education):
        if entry.start and isinstance(entry.end, PartialDate):
            return entry
    return None


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_violation_injected_into_each_seed_profile_is_traced(tmp_path, path):
    project = tmp_path / "seed"
    shutil.copytree(REPO / "data", project / "data")
    shutil.copy(REPO / "kg.toml", project / "kg.toml")
    target = project / "data" / "profiles" / path.name
    entry = _dated_entry(load_file(target, Profile, path.name))
    assert entry is not None, "every seed profile has a dated position or degree"
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    for i in range(entry.source.line - 1, len(lines)):
        if re.match(r"^\s*(- )?start: ", lines[i]):
            lines[i] = re.sub(r"start: .*", "start: 2099", lines[i])
            break
    target.write_text("".join(lines), encoding="utf-8")
    _, report = validate_project(load_config(project))
    found = [r for r in report.results if r.shape.endswith("#Role-startBeforeEnd")]
    assert len(found) == 1
    assert found[0].source.file == f"data/profiles/{path.name}"
    assert found[0].source.line == entry.source.line
