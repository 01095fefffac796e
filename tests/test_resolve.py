"""kg.resolve.identity: one node per real-world thing, never merging different people."""

from __future__ import annotations

import pytest
from conftest import write

from kg.errors import InputError
from kg.ingest.load import load_dataset
from kg.resolve.identity import resolve


def test_owner_and_author_mentions_are_one_person(mini_build):
    resolution = mini_build[0]
    ann = resolution.persons["a-b"]
    assert set(ann.printed) == {"Ann Bee", "ANN BEE"}
    assert ann.mentioned_in == ("a-b", "c-d")


def test_honorifics_are_stripped_and_names_merge(mini_build):
    xin = mini_build[0].persons["xin-jin"]
    assert xin.name == "Xin Jin"
    assert "Prof. Xin Jin" in xin.printed


def test_same_title_is_one_publication_with_union_of_facts(mini_build):
    resolution = mini_build[0]
    pub = resolution.publications["paper-one"]
    assert [slug for slug, _ in pub.listings] == ["a-b", "c-d"]
    first, second = pub.authors[0], pub.authors[1]
    assert first.equal_contribution  # only a-b's listing marks it
    assert second.corresponding  # only c-d's listing marks it
    assert pub.venue == "osdi" and pub.year == 2024  # "OSDI '24" and venue + year agree


def test_registered_homonyms_stay_apart(mini_build):
    pub = mini_build[0].publications["homonyms"]
    people = [slot.person for slot in pub.authors]
    assert people[1:3] == ["wei-wang-0001", "wei-wang-0002"]


def test_names_that_only_look_alike_stay_apart_and_are_reported(mini_build):
    resolution = mini_build[0]
    assert {"wei-zhao", "wen-zhao"} <= set(resolution.persons)
    near = [n for n in resolution.notes if n.kind == "near-miss"]
    assert any("wei-zhao" in n.subject and "wen-zhao" in n.subject for n in near)


def test_ambiguous_name_needs_a_person_key(project):
    path = project / "data/profiles/c-d.yaml"
    path.write_text(path.read_text().replace("{name: Wei Wang, person: wei-wang-0001}", "Wei Wang"))
    with pytest.raises(InputError) as caught:
        resolve(load_dataset(project / "data"))
    problem = caught.value.problems[0]
    assert "could be any of wei-wang-0001, wei-wang-0002" in problem.message
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "Homonyms" in text)
    assert problem.source.file == "data/profiles/c-d.yaml" and problem.source.line == line + 1


def test_unknown_registry_reference_is_explained(project):
    path = project / "data/profiles/a-b.yaml"
    path.write_text(path.read_text().replace("institution: PKU", "institution: Pekng University"))
    with pytest.raises(InputError) as caught:
        resolve(load_dataset(project / "data"))
    problem = caught.value.problems[0]
    assert problem.path == "education[0].institution"
    assert "unknown organization 'Pekng University'" in problem.message
    assert "did you mean 'pku'?" in problem.message


def test_unknown_person_key_is_explained(project):
    path = project / "data/profiles/c-d.yaml"
    path.write_text(path.read_text().replace("person: wei-wang-0002", "person: wei-wang-0003"))
    with pytest.raises(InputError, match="unknown person 'wei-wang-0003'"):
        resolve(load_dataset(project / "data"))


def test_conflicting_author_lists_are_reported(project):
    path = project / "data/profiles/c-d.yaml"
    path.write_text(path.read_text().replace("authors: [Ann Bee,", "authors: [Ann Smith,"))
    with pytest.raises(InputError, match="names different authors"):
        resolve(load_dataset(project / "data"))


def test_unit_must_belong_to_its_organization(project):
    path = project / "data/profiles/a-b.yaml"
    path.write_text(path.read_text().replace("organization: ByteDance", "organization: PKU"))
    with pytest.raises(InputError, match="is not part of 'PKU'"):
        resolve(load_dataset(project / "data"))


def test_alias_used_by_two_organizations_is_reported(project):
    write(
        project / "data/organizations.yaml",
        (project / "data/organizations.yaml").read_text()
        + "pku2:\n  name: Other\n  kind: university\n  aliases: [PKU]\n",
    )
    with pytest.raises(InputError, match="organization name 'PKU' is also used by 'pku'"):
        resolve(load_dataset(project / "data"))


# ------------------------------------------------------------------ the seed data


def test_elasticflow_is_one_paper_listed_by_two_profiles(seed_build):
    resolution = seed_build[0]
    matches = [p for p in resolution.publications.values() if p.title.startswith("ElasticFlow")]
    assert len(matches) == 1
    pub = matches[0]
    assert {slug for slug, _ in pub.listings} == {"yihao-zhao", "yinmin-zhong"}
    people = [slot.person for slot in pub.authors]
    assert "yihao-zhao" in people and "yinmin-zhong" in people


@pytest.mark.parametrize("name", ["Xin Jin", "Yibo Zhu", "Xuanzhe Liu"])
def test_shared_coauthors_are_one_node(seed_build, name):
    resolution = seed_build[0]
    matches = [p for p in resolution.persons.values() if p.name == name]
    assert len(matches) == 1
    assert len(matches[0].mentioned_in) >= 2


def test_seven_different_zhaos_stay_seven(seed_build):
    resolution = seed_build[0]
    zhaos = sorted(p.name for p in resolution.persons.values() if p.name.endswith(" Zhao"))
    expected = [
        "Haizhou Zhao",
        "Hanyu Zhao",
        "Liangyu Zhao",
        "Sida Zhao",
        "Yihao Zhao",
        "Yilong Zhao",
        "Yuheng Zhao",
    ]
    assert zhaos == expected


def test_every_paper_keeps_its_author_order(seed_build):
    resolution = seed_build[0]
    for pub in resolution.publications.values():
        _, listing = pub.listings[0]
        printed = [a.name for a in listing.authors]
        assert [slot.printed[0] for slot in pub.authors] == printed, pub.title
        assert [slot.rank for slot in pub.authors] == list(range(1, len(printed) + 1))


def test_pku_alias_is_one_organization(seed_build):
    resolution = seed_build[0]
    assert resolution.org("PKU") == resolution.org("Peking University")
