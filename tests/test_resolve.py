"""kg.resolve: one node per real-world thing, never merging different people."""

from __future__ import annotations

import pytest
from conftest import write

from kg.errors import InputError
from kg.load import load_dataset
from kg.resolve import resolve


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


# ------------------------------------------------------------------ identity certainty


def _add_paper(project, slug: str, title: str, authors: list[str]) -> None:
    path = project / f"data/profiles/{slug}.yaml"
    names = ", ".join(authors)
    entry = f"  - {{title: {title}, authors: [{names}], venue: OSDI, year: 2024}}\n"
    path.write_text(path.read_text().replace("publications:\n", "publications:\n" + entry, 1))


def _near(resolution) -> dict[str, str]:
    return {n.subject: n.detail for n in resolution.notes if n.kind == "near-miss"}


def test_every_confusable_pair_is_a_near_miss_however_many_share_the_family_name(project):
    # 42 Zhaos: "Aihao Zhao" and "Yihao Zhao" (similarity 0.89) sit far apart in any order
    zhaos = [f"Zhao{chr(97 + i // 26)}{chr(97 + i % 26)} Zhao" for i in range(40)]
    _add_paper(project, "c-d", "Many Zhaos", ["Cee Dee", "Aihao Zhao", *zhaos, "Yihao Zhao"])
    near = _near(resolve(load_dataset(project / "data")))
    assert "person/aihao-zhao ~ person/yihao-zhao" in near
    assert "similarity 0.89" in near["person/aihao-zhao ~ person/yihao-zhao"]


def test_look_alike_letters_and_initials_are_near_misses(project):
    # a Cyrillic "і" (U+0456) in "Yіhao Zhao"; "X. Jin" next to "Xin Jin"
    _add_paper(
        project, "c-d", "Look Alikes", ["Cee Dee", "Yihao Zhao", "Y\u0456hao Zhao", "X. Jin"]
    )
    resolution = resolve(load_dataset(project / "data"))
    near = _near(resolution)
    cyrillic = next(k for k, p in resolution.persons.items() if "\u0456" in p.name)
    pair = " ~ ".join(sorted([f"person/{cyrillic}", "person/yihao-zhao"]))
    assert "another script" in near[pair]
    initials = next(k for k, p in resolution.persons.items() if p.name == "X. Jin")
    pair = " ~ ".join(sorted([f"person/{initials}", "person/xin-jin"]))
    assert "initials" in near[pair]


def test_a_merge_on_the_name_alone_is_unconfirmed_until_decided(project):
    # "Dan Eve" in both profiles, on two different papers: the name alone joins them
    _add_paper(project, "a-b", "Alpha", ["Ann Bee", "Dan Eve"])
    _add_paper(project, "c-d", "Beta", ["Cee Dee", "Dan Eve"])
    resolution = resolve(load_dataset(project / "data"))
    assert resolution.persons["dan-eve"].basis == ("name-only",)
    assert "person/dan-eve" in {n.subject for n in resolution.notes if n.kind == "unconfirmed"}
    # Xin Jin: "paper one" is listed by both profiles with Xin Jin second
    assert "shared-publication" in resolution.persons["xin-jin"].basis
    people = project / "data/people.yaml"
    people.write_text(
        people.read_text() + "dan-eve:\n  name: Dan Eve\n  same_as: [a-b, c-d]\n", encoding="utf-8"
    )
    resolution = resolve(load_dataset(project / "data"))
    assert resolution.persons["dan-eve"].basis == ("decision",)
    assert "person/dan-eve" not in {n.subject for n in resolution.notes if n.kind == "unconfirmed"}


def test_same_as_splits_two_people_who_share_a_name_by_document(project):
    # two registered "Wei Wang"s: each profile's mentions resolve to the one it names
    people = project / "data/people.yaml"
    text = people.read_text().replace(
        "  note: Engineer at ByteDance (fixture homonym)",
        "  note: Engineer at ByteDance (fixture homonym)\n  same_as: [a-b]",
    )
    people.write_text(text, encoding="utf-8")
    _add_paper(project, "a-b", "Gamma", ["Ann Bee", "Wei Wang"])
    resolution = resolve(load_dataset(project / "data"))
    gamma = next(p for p in resolution.publications.values() if p.title == "Gamma")
    assert gamma.authors[1].person == "wei-wang-0002"


def test_distinct_from_silences_a_near_miss(project):
    _add_paper(project, "c-d", "Delta", ["Cee Dee", "Yihao Zhao", "Yihau Zhao"])
    assert "person/yihao-zhao ~ person/yihau-zhao" in _near(resolve(load_dataset(project / "data")))
    people = project / "data/people.yaml"
    people.write_text(
        people.read_text() + "yihau-zhao:\n  name: Yihau Zhao\n  distinct_from: [yihao-zhao]\n",
        encoding="utf-8",
    )
    assert "person/yihao-zhao ~ person/yihau-zhao" not in _near(
        resolve(load_dataset(project / "data"))
    )


def test_identity_decisions_must_name_real_profiles_and_people(project):
    people = project / "data/people.yaml"
    people.write_text(
        people.read_text() + "x-y:\n  name: X Y\n  same_as: [nobody]\n  distinct_from: [ghost]\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        resolve(load_dataset(project / "data"))
    messages = " ".join(p.message for p in caught.value.problems)
    assert "same_as names 'nobody'" in messages and "distinct_from names 'ghost'" in messages
