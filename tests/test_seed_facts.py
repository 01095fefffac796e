"""Facts read by hand from the five seed documents (/work/shared/seeds, transcribed in
data/profiles), checked in the built graph and in the answer of every stored query.

Each expected value below was taken from the documents themselves, not from kg's output:
the comment beside it says where in the document it comes from.
"""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import MINI, REPO
from rdflib import Literal, URIRef

from kg.cli import main
from kg.graph.namespaces import FOAF, KG, SCHEMA, XSD
from kg.query.stored import load_queries, run_embedded

QUERIES = load_queries(REPO / "queries")
B = "https://kg.example.org/"
ROLL_REPORT = (
    "Reinforcement Learning Optimization for Large-Scale Learning: An Efficient and "
    "User-Friendly Scaling Library"
)
SEALLM = (
    "SeaLLM: Service-Aware and Latency-Optimized Resource Sharing for Large Language Model "
    "Inference"
)


@pytest.fixture(scope="module")
def graph(seed_build):
    return seed_build[1].graph


@pytest.fixture(scope="module")
def resolution(seed_build):
    return seed_build[0]


def rows(graph, name: str, **params: str) -> list[dict[str, str]]:
    answer = run_embedded(graph, QUERIES[name], params or None)
    return [
        {v: "" if t is None else str(t) for v, t in zip(answer.variables, row, strict=True)}
        for row in answer.rows
    ]


def person(slug: str) -> str:
    return f"{B}person/{slug}"


# ------------------------------------------------------------------ one check per stored query


def check_advisees_of(graph):
    # Yihao: "Advisor: Xuanzhe Liu / Co-advisor: Xin Jin"; Yinmin: "Advisor: Xin Jin"
    got = {(r["name"], r["as"]) for r in rows(graph, "advisees-of")}
    assert got == {("Yihao Zhao", "co-advisor"), ("Yinmin Zhong", "advisor")}
    # Liangyu: "Advisor: Prof. Arvind Krishnamurthy" (Ph.D., University of Washington)
    got = rows(graph, "advisees-of", advisor=person("arvind-krishnamurthy"))
    assert [(r["name"], r["institution"], r["degree"]) for r in got] == [
        ("Liangyu Zhao", "University of Washington", "Ph.D.")
    ]


def check_advisor_network(graph):
    got = {
        (r["studentName"], r["relation"], r["mentorName"]) for r in rows(graph, "advisor-network")
    }
    # Liangyu's mentors: Meta (Bingzhe Liu, Liang Luo, Amar Phanishayee), NVIDIA (Vijay Anand
    # Korthikanti, Deepak Narayanan), MSR (Saeed Maleki), ByteDance (Yibo Zhu)
    liangyu = {m for s, rel, m in got if s == "Liangyu Zhao" and rel == "mentored by"}
    assert liangyu == {
        "Bingzhe Liu",
        "Liang Luo",
        "Amar Phanishayee",
        "Vijay Anand Korthikanti",
        "Deepak Narayanan",
        "Saeed Maleki",
        "Yibo Zhu",
    }
    # Hanyu: "supervised by Prof. Yafei Dai and Prof. Zhi Yang"; Yuheng: "advised by Prof. Wei Wang"
    assert {
        ("Hanyu Zhao", "advised by", "Yafei Dai"),
        ("Hanyu Zhao", "advised by", "Zhi Yang"),
    } < got
    assert ("Yuheng Zhao", "advised by", "Wei Wang") in got
    assert ("Yuheng Zhao", "mentored by", "Haibin Kan") in got  # "supervised by Prof. Haibin Kan"


def check_authors_of_publication(graph):
    # the ROLL technical report: its only author is printed as "ROLL Team"
    report = rows(graph, "authors-of-publication", publication=_paper(graph, ROLL_REPORT))
    assert [(r["rank"], r["printed"], r["name"]) for r in report] == [
        ("1", "ROLL Team", "ROLL Team")
    ]
    # ElasticFlow as Yihao prints it: "Diandian Gu*, Yihao Zhao*, Yinmin Zhong, ..." (10 names);
    # neither document marks a corresponding author: unknown, not false
    elastic = rows(graph, "authors-of-publication")
    assert [r["printed"] for r in elastic][:3] == ["Diandian Gu", "Yihao Zhao", "Yinmin Zhong"]
    assert len(elastic) == 10
    # "Yinmin Zhong" carries no mark in either listing: unknown, so nothing (not "false")
    assert [r["equal"] for r in elastic][:3] == ["true", "true", ""]
    assert {r["corresponding"] for r in elastic} == {""}


def check_coauthor_network(graph):
    answer = run_embedded(graph, QUERIES["coauthor-network"])
    colleague = SCHEMA.colleague
    # Hanyu Zhao and Zhenhua Han co-authored SiloD, HiveD and Gandiva
    assert (URIRef(person("hanyu-zhao")), colleague, URIRef(person("zhenhua-han"))) in answer.graph
    # Hanyu Zhao and Yinmin Zhong share no paper in any document
    assert (URIRef(person("hanyu-zhao")), colleague, URIRef(person("yinmin-zhong"))) not in (
        answer.graph
    )


def check_coauthors(graph):
    # Yihao's 8 papers: Xin Jin and Xuanzhe Liu are on 7 each (all but the ECCV paper)
    got = {r["name"]: int(r["shared"]) for r in rows(graph, "coauthors")}
    assert got["Xin Jin"] == 7 and got["Xuanzhe Liu"] == 7
    assert got["Hao Dong"] == 1  # ECCV 2020 only
    # Yuheng: Prof. Wei Wang is the last author of RollArt, RollPacker, Weave and ROSE
    got = {
        r["name"]: int(r["shared"]) for r in rows(graph, "coauthors", person=person("yuheng-zhao"))
    }
    assert got["Wei Wang"] == 4


def check_equal_contribution(graph):
    got = rows(graph, "equal-contribution")
    by_title = Counter(r["title"].split(":")[0] for r in got)
    # starred authors in the documents: RollArt 5, Llumnix 3, Tactic 3, AlpaServe 3, the
    # 10,000-GPU paper 3, Fast Distributed Inference 3, the rest 2
    assert by_title["RollArt"] == 5 and by_title["Llumnix"] == 3 and by_title["Tactic"] == 3
    assert by_title["Klotski"] == 2 and by_title["HiveD"] == 2 and by_title["ROSE"] == 2
    assert len(by_title) == 12
    # only Yihao's listing of ElasticFlow stars Diandian Gu and Yihao Zhao
    elastic = [r["author"] for r in got if r["title"].startswith("ElasticFlow")]
    assert elastic == ["Diandian Gu", "Yihao Zhao"]


def check_interns_at(graph):
    # ByteDance: Liangyu (AI-Lab, Jul 2020), Yihao (Jan 2021), Yinmin (AML team, Aug 2023)
    got = [(r["name"], r["team"], r["start"]) for r in rows(graph, "interns-at")]
    assert got == [
        ("Liangyu Zhao", "AI-Lab", "2020-07"),
        ("Yihao Zhao", "ByteDance", "2021-01"),
        ("Yinmin Zhong", "ByteDance AML Team", "2023-08"),
    ]
    # Microsoft Research Asia: Hanyu (Systems Research Group, 2017-2020), Yuheng (DKI group)
    got = {r["name"] for r in rows(graph, "interns-at", org=f"{B}org/msra")}
    assert got == {"Hanyu Zhao", "Yuheng Zhao"}


def check_people_by_organization(graph):
    # Yuheng's HKUST Ph.D. runs "Sep 2022 - Jun 2027": ongoing, so current
    got = rows(graph, "people-by-organization", org=f"{B}org/hkust")
    assert [(r["name"], r["role"], r["end"], r["current"]) for r in got] == [
        ("Yuheng Zhao", "Ph.D.", "2027-06", "true")
    ]
    # PKU: Hanyu's PhD ended in 2021; Yihao's and Yinmin's run to the present
    pku = {(r["name"], r["role"], r["current"]) for r in rows(graph, "people-by-organization")}
    assert ("Hanyu Zhao", "PhD", "false") in pku
    assert {("Yihao Zhao", "Ph.D.", "true"), ("Yinmin Zhong", "Ph.D.", "true")} < pku


def check_people(graph):
    got = {r["name"]: r for r in rows(graph, "people")}
    assert set(got) == {"Hanyu Zhao", "Liangyu Zhao", "Yihao Zhao", "Yinmin Zhong", "Yuheng Zhao"}
    assert got["Yinmin Zhong"]["email"] == "zhongyinmin@pku.edu.cn"
    assert got["Liangyu Zhao"]["homepage"] == "https://liangyuzhao.me/"
    assert got["Hanyu Zhao"]["email"] == ""  # the homepage gives no address


def check_person_graph(graph):
    answer = run_embedded(graph, QUERIES["person-graph"])  # Liangyu Zhao
    g = answer.graph
    # 9 industry positions; 4 degrees (Ph.D., M.S., two B.S.); 12 talk occasions
    assert (
        len(set(g.subjects(URIRef(str(SCHEMA.roleName)), None)) & set(_typed(g, "EmployeeRole")))
        == 9
    )
    assert len(set(g.objects(URIRef(person("liangyu-zhao")), SCHEMA.alumniOf))) == 4
    assert len(set(_typed(g, "PerformanceRole"))) == 12


def check_profile_completeness(graph):
    got = {(r["name"], r["missing"]) for r in rows(graph, "profile-completeness")}
    # no document gives an ORCID iD; Hanyu's homepage has no email address and names no
    # homepage address; Yihao's CV links "Yihao Zhao's Homepage" without an address and
    # states no research interests
    assert {(n, "ORCID iD") for n in ("Hanyu Zhao", "Liangyu Zhao", "Yihao Zhao")} < got
    assert {("Hanyu Zhao", "email"), ("Yihao Zhao", "homepage")} < got
    assert ("Yihao Zhao", "research interests") in got
    assert ("Yinmin Zhong", "email") not in got


def check_publications_by_venue_year(graph):
    got = {
        (r["venue"], r["year"], r["title"].split(":")[0])
        for r in rows(graph, "publications-by-venue-year")
    }
    osdi = "USENIX Symposium on Operating Systems Design and Implementation"
    assert {(osdi, "2026", "RollArt"), (osdi, "2026", "Weave")} < got  # [OSDI'26] twice
    titles = {t for _, _, t in got}
    assert "SeaLLM" not in titles  # "Submitted to ATC'25": no venue yet
    assert not {"ForestColl", "FLASH", "Tactic", "Rubick"} & titles  # arXiv is not a venue


def check_publications_of_person(graph):
    # Yuheng's six publications, the ROLL Team report among them, each once
    got = rows(graph, "publications-of-person", person=person("yuheng-zhao"))
    assert len(got) == 6 and len({r["title"] for r in got}) == 6
    report = next(r for r in got if r["title"] == ROLL_REPORT)
    assert (report["status"], report["venue"]) == ("report", "")
    # Yihao: SeaLLM once, "Submitted to ATC'25": submitted, for 2025, to ATC
    yihao = rows(graph, "publications-of-person", person=person("yihao-zhao"))
    seallm = [r for r in yihao if r["title"] == SEALLM]
    assert [(r["status"], r["year"]) for r in seallm] == [("submitted", "2025")]
    assert len(yihao) == 8
    # Liangyu: ForestColl is "arXiv preprint, in submission": on arXiv, under submission
    forest = next(
        r
        for r in rows(graph, "publications-of-person", person=person("liangyu-zhao"))
        if r["title"].startswith("ForestColl")
    )
    assert (forest["status"], forest["venue"], forest["year"]) == ("submitted", "arXiv", "")


def check_publications_per_year(graph):
    got = {r["year"]: int(r["publications"]) for r in rows(graph, "publications-per-year")}
    # counted by hand from the five lists (published works with a year; SeaLLM is submitted)
    assert got == {
        "2018": 2,  # SDPaxos, Gandiva
        "2019": 1,  # Nexus
        "2020": 2,  # HiveD, ECCV
        "2021": 1,  # AutoLRS
        "2022": 1,  # Multi-Resource Interleaving
        "2023": 7,  # Klotski, ElasticFlow, DSN, EasyScale, GoldMiner, SiloD, AlpaServe
        "2024": 11,
        "2025": 3,  # RLHFuse, NanoFlow, Direct-Connect Topologies
        "2026": 3,  # RollArt, RollPacker, Weave
    }


def check_ranked_venue_papers(graph):
    got = {r["name"]: int(r["papers"]) for r in rows(graph, "ranked-venue-papers")}
    # Yihao marks 5 papers CCF-A (SeaLLM, submitted, is not one); Yuheng marks 3
    assert got["Yihao Zhao"] == 5 and got["Yuheng Zhao"] == 3


def check_shared_coauthors(graph):
    got = {r["name"] for r in rows(graph, "shared-coauthors")}  # Yihao and Yinmin
    assert {"Xin Jin", "Xuanzhe Liu", "Diandian Gu", "Yibo Zhu"} <= got
    assert "Hao Zhang" not in got  # only on Yinmin's papers


def check_shared_papers(graph):
    got = [r["title"] for r in rows(graph, "shared-papers")]
    assert got == [
        "ElasticFlow: An Elastic Serverless Training Platform for Distributed Deep Learning"
    ]


def check_timeline(graph):
    got = [(r["date"], r["kind"], r["what"]) for r in rows(graph, "timeline")]  # Yihao
    # "Merit Student Award, PKU Oct. 2020" and "... Oct. 2018": two awards, both kept
    assert ("2018-10", "award", "Merit Student Award") in got
    assert ("2020-10", "award", "Merit Student Award") in got
    assert sum(1 for _, kind, _ in got if kind == "award") == 8
    assert not any(what == SEALLM for _, _, what in got)  # submitted: no publication date


def check_top_venues(graph):
    got = {r["name"]: int(r["papers"]) for r in rows(graph, "top-venues")}
    assert got["USENIX Symposium on Operating Systems Design and Implementation"] == 8
    assert got["USENIX Symposium on Networked Systems Design and Implementation"] == 4
    assert got["ACM Special Interest Group on Data Communication"] == 3
    assert "arXiv" not in got and "USENIX Annual Technical Conference" not in got


CHECKS = {
    name.removeprefix("check_").replace("_", "-"): f
    for name, f in globals().items()
    if name.startswith("check_")
}


def test_every_stored_query_has_a_check_from_the_seeds():
    assert set(CHECKS) == set(QUERIES)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_stored_query_agrees_with_the_seeds(graph, name):
    CHECKS[name](graph)


def _paper(graph, title: str) -> str:
    """The publication with this title (a talk can carry the same name)."""
    found = [
        s for s in graph.subjects(SCHEMA.name, Literal(title)) if graph.value(s, KG.authorship)
    ]
    assert len(found) == 1, title
    return str(found[0])


def _typed(graph, cls: str):
    return graph.subjects(URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), SCHEMA[cls])


# ------------------------------------------------------------------ facts in the graph


def _status(graph, title: str) -> str:
    return str(graph.value(URIRef(_paper(graph, title)), SCHEMA.creativeWorkStatus))


def test_each_status_of_the_seeds(graph):
    """published ([OSDI'26]), submitted ("Submitted to ATC'25", "[In Submission]", "arXiv
    preprint, in submission"), preprint ("In preprint", "arXiv preprint (2408.08586)"),
    report ("[Tech Report]")."""
    rollart = URIRef(
        _paper(graph, "RollArt: Disaggregated Multi-Task Agentic RL Training at Scale")
    )
    assert (
        _status(graph, "RollArt: Disaggregated Multi-Task Agentic RL Training at Scale")
        == "published"
    )
    assert graph.value(rollart, KG.venue) == URIRef(f"{B}venue/osdi")
    assert graph.value(rollart, SCHEMA.datePublished) == Literal("2026", datatype=XSD.gYear)

    seallm = URIRef(_paper(graph, SEALLM))
    assert _status(graph, SEALLM) == "submitted"
    assert graph.value(seallm, KG.venue) is None and graph.value(seallm, SCHEMA.isPartOf) is None
    assert graph.value(seallm, SCHEMA.datePublished) is None
    assert graph.value(seallm, KG.submittedTo) == URIRef(f"{B}venue/atc/2025")
    assert graph.value(seallm, KG.targetYear) == Literal("2025", datatype=XSD.gYear)

    forest = (
        "ForestColl: Throughput-Optimal Collective Communications on Heterogeneous Network Fabrics"
    )
    assert _status(graph, forest) == "submitted"  # ... and on arXiv
    assert graph.value(URIRef(_paper(graph, forest)), SCHEMA.isPartOf) == URIRef(f"{B}venue/arxiv")
    assert graph.value(URIRef(_paper(graph, forest)), KG.venue) is None

    rubick = "Rubick: Exploiting Job Reconfigurability for Deep Learning Cluster Scheduling"
    assert _status(graph, rubick) == "preprint"
    assert (
        _status(graph, "Fast Distributed Inference Serving for Large Language Models") == "preprint"
    )
    assert _status(graph, ROLL_REPORT) == "report"
    assert (URIRef(_paper(graph, ROLL_REPORT)), URIRef(str(SCHEMA) + "Report")) in {
        (s, o)
        for s, o in graph.subject_objects(URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"))
    }


def test_an_arxiv_paper_without_status_is_a_preprint_and_accepted_has_a_venue(project):
    from kg.config import load_config
    from kg.pipeline import build_graph

    path = project / "data/profiles/c-d.yaml"
    entries = (
        "  - {title: On arXiv, authors: [Cee Dee], venue: arxiv}\n"
        "  - {title: To Appear, authors: [Cee Dee], venue: OSDI, year: 2025, status: accepted}\n"
    )
    path.write_text(path.read_text().replace("publications:\n", "publications:\n" + entries, 1))
    venues = project / "data/venues.yaml"
    venues.write_text(venues.read_text() + "arxiv: {name: arXiv, kind: preprint-server}\n")
    g = build_graph(load_config(project))[1].graph
    work = URIRef(f"{B}publication/on-arxiv")
    assert g.value(work, SCHEMA.creativeWorkStatus) == Literal("preprint")
    assert g.value(work, KG.venue) is None
    assert g.value(work, SCHEMA.isPartOf) == URIRef(f"{B}venue/arxiv")
    # accepted ("to appear"): the venue and date it will appear with, like a published paper
    accepted = URIRef(f"{B}publication/to-appear")
    assert g.value(accepted, SCHEMA.creativeWorkStatus) == Literal("accepted")
    assert g.value(accepted, KG.venue) == URIRef(f"{B}venue/osdi")
    assert g.value(accepted, SCHEMA.datePublished) == Literal("2025", datatype=XSD.gYear)


def test_scholar_tags_claim_no_venue_for_a_submitted_paper(seed_build):
    from kg.publish.site import SiteBuilder

    resolution, mapped = seed_build
    site = SiteBuilder(resolution, mapped.triples, B)
    key = resolution.publication_titled(SEALLM)
    page = site.publication_page(resolution.publications[key])
    assert "citation_title" in page
    assert "citation_conference_title" not in page and "citation_publication_date" not in page
    published = site.publication_page(
        resolution.publications[
            resolution.publication_titled("Multi-Resource Interleaving for Deep Learning Training")
        ]
    )
    assert (
        'citation_conference_title" content="ACM Special Interest Group on Data Communication'
        in published
    )
    assert 'citation_publication_date" content="2022"' in published


def test_group_authored_report_reaches_the_member_who_lists_it(graph, seed_build):
    from kg.publish.export import owned_nodes, person_subset
    from kg.publish.markup import profile_markup

    yuheng = URIRef(person("yuheng-zhao"))
    report = URIRef(_paper(graph, ROLL_REPORT))
    roll = URIRef(f"{B}org/alibaba-roll")
    assert graph.value(report, SCHEMA.author) == roll  # "ROLL Team, ..." [Tech Report]
    assert (roll, SCHEMA.member, yuheng) in graph
    assert (report, SCHEMA.contributor, yuheng) in graph
    assert (yuheng, FOAF.made, report) in graph
    triples = seed_build[1].triples
    subset = person_subset(triples, yuheng, owned_nodes(triples, [yuheng])[yuheng])
    assert (report, SCHEMA.name, Literal(ROLL_REPORT)) in set(subset)
    page = profile_markup(triples, yuheng, URIRef(f"{B}profile/yuheng-zhao"))
    assert ROLL_REPORT in str(page)


def test_small_facts_are_kept_and_none_invented(graph):
    # "advised by Prof. Wei Wang", "Advisor: Prof. Arvind Krishnamurthy"
    assert graph.value(URIRef(person("wei-wang-hkust")), SCHEMA.honorificPrefix) == Literal("Prof.")
    assert graph.value(URIRef(person("arvind-krishnamurthy")), SCHEMA.honorificPrefix) == Literal(
        "Prof."
    )
    # no document marks a corresponding author: no authorship says false
    assert not list(graph.subject_objects(KG.corresponding))
    # no document says where the six courses were taught
    courses = list(
        graph.subjects(URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), SCHEMA.Course)
    )
    assert len(courses) == 6 and not any(graph.value(c, SCHEMA.provider) for c in courses)
    # ICLR publishes no proceedings volume
    assert (URIRef(f"{B}venue/iclr/2021/proceedings"), None, None) not in graph
    # Yihao's eight awards, two of them "Merit Student Award" (Oct. 2018 and Oct. 2020)
    assert len(set(graph.objects(URIRef(person("yihao-zhao")), SCHEMA.award))) == 8
    assert len(set(graph.objects(URIRef(person("yinmin-zhong")), SCHEMA.award))) == 7


def test_projects_link_to_their_papers_and_teams(graph):
    described = {
        str(graph.value(w, SCHEMA.name)): str(graph.value(p, SCHEMA.name)).split(":")[0]
        for w, p in graph.subject_objects(KG.describedIn)
    }
    assert described == {  # the systems named in both a project heading and a paper title
        "LoongServe": "LoongServe",
        "DistServe": "DistServe",
        "FastServe": "Fast Distributed Inference Serving for Large Language Models",
        "AlpaServe": "AlpaServe",
        "RLHFuse": "RLHFuse",
        "MegaScale": "Scaling Large Language Model Training to More Than 10,000 GPUs",
        "ElasticFlow": "ElasticFlow",
        "ROLL": ROLL_REPORT.split(":")[0],
        "Tail Batching": "RollPacker",
        "Cooperative Elasticity": "ROSE",
    }
    roll = URIRef(f"{B}person/yuheng-zhao/project/roll")
    assert graph.value(roll, SCHEMA.sourceOrganization) == URIRef(f"{B}org/alibaba-roll")
    funcx = URIRef(f"{B}person/yuheng-zhao/project/funcx")
    assert graph.value(funcx, SCHEMA.sourceOrganization) == URIRef(f"{B}org/uchicago-globus")


def test_topics_do_not_collide_and_case_variants_are_one(graph):
    from kg.graph.mapping import topic_key
    from kg.ingest.names import topic_slugs

    slugs = topic_slugs(["C", "C++", "C#", "F#", "F", "c++"], topic_key)
    assert len({slug for slug, _ in slugs.values()}) == 5
    assert slugs["c++"] == ("c-plus-plus", "C++")
    # "distributed systems" (Hanyu) and "Distributed Systems" (Yinmin): one topic, one label
    topic = URIRef(f"{B}topic/distributed-systems")
    assert len(set(graph.objects(topic, SCHEMA.name))) == 1
    assert (URIRef(person("hanyu-zhao")), SCHEMA.knowsAbout, topic) in graph
    assert (URIRef(person("yinmin-zhong")), SCHEMA.knowsAbout, topic) in graph
    assert (
        URIRef(person("yihao-zhao")),
        SCHEMA.knowsAbout,
        URIRef(f"{B}topic/c-plus-plus"),
    ) in graph


def test_merged_elasticflow_says_which_listing_printed_the_marks(graph):
    paper = URIRef(
        _paper(
            graph,
            "ElasticFlow: An Elastic Serverless Training Platform for Distributed Deep Learning",
        )
    )
    assert set(graph.objects(paper, KG.listedIn)) == {
        URIRef(f"{B}profile/yihao-zhao"),
        URIRef(f"{B}profile/yinmin-zhong"),
    }
    first = URIRef(f"{paper}/author/1")
    assert set(graph.objects(first, KG.markedIn)) == {URIRef(f"{B}profile/yihao-zhao")}
    assert not list(graph.objects(URIRef(f"{paper}/author/3"), KG.markedIn))


def test_identity_basis_in_the_graph_and_the_report(graph, resolution, capsys):
    def basis(slug):
        return {
            str(o).rsplit("#", 1)[1] for o in graph.objects(URIRef(person(slug)), KG.identityBasis)
        }

    # "Peng Sun" in Yihao's and Yinmin's documents: nothing but the name joins them
    assert "NameOnly" in basis("peng-sun")
    # "Xin Jin": both documents list ElasticFlow with Xin Jin 9th
    assert basis("xin-jin") == {"SharedPublication"}
    # "Xin Liu": a same_as decision in data/people.yaml
    assert basis("xin-liu") == {"IdentityDecision"}
    assert basis("hanyu-zhao") == {"SingleDocument"}
    unconfirmed = {n.subject for n in resolution.notes if n.kind == "unconfirmed"}
    assert {"person/peng-sun", "person/vincent-liu", "person/xiang-li"} <= unconfirmed
    assert "person/xin-jin" not in unconfirmed
    assert main(["--project", str(REPO), "resolve", "--report"]) == 0
    out = capsys.readouterr().out
    section = out.split("Unconfirmed merges", 1)[1].split("Near misses", 1)[0]
    assert "person/peng-sun" in section and "person/xin-jin:" not in section


@pytest.fixture
def project(tmp_path):
    import shutil

    target = tmp_path / "mini"
    shutil.copytree(MINI, target)
    return target
