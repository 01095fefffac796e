"""kg.ingest.load and yamlsafe: every profile loads; every kind of mistake is explained."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from conftest import PROFILES, write

from kg import model
from kg.errors import InputError
from kg.ingest.load import load_dataset, load_file
from kg.model import PRESENT, PartialDate, Profile


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_every_seed_profile_loads(path):
    profile = load_file(path, Profile, str(path))
    assert profile.name
    assert profile.publications or profile.positions or profile.education


def test_seed_profiles_are_present():
    assert len(PROFILES) == 5


def _plain(value):
    """Model value -> the plain YAML-ish value it was loaded from."""
    if isinstance(value, PartialDate) or value is PRESENT:
        return str(value)
    if dataclasses.is_dataclass(value):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.metadata.get("internal")
        }
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, PartialDate) or value is PRESENT:
        return str(value)
    return value


def _compare(written, loaded, path="") -> None:
    """Every value written in YAML is in the model, unchanged."""
    if isinstance(written, dict):
        if isinstance(loaded, dict) and "name" in loaded and not isinstance(written, dict):
            return
        for key, value in written.items():
            _compare(value, loaded[str(key)], f"{path}.{key}")
    elif isinstance(written, list):
        assert len(written) == len(loaded), path
        for i, (a, b) in enumerate(zip(written, loaded, strict=True)):
            if isinstance(a, str) and isinstance(b, dict):  # person shorthand
                assert b["name"] == a.strip(), f"{path}[{i}]"
            else:
                _compare(a, b, f"{path}[{i}]")
    elif isinstance(loaded, bool | int):
        assert str(written).lower() == str(loaded).lower(), path
    else:
        assert str(written).strip() == str(loaded).strip(), path


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_fields_round_trip_into_the_model(path):
    written = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    loaded = _plain(load_file(path, Profile, str(path)))
    _compare(written, loaded)


def test_dates_keep_their_precision(tmp_path):
    path = write(
        tmp_path / "p.yaml",
        "name: A\neducation:\n  - {institution: X, start: 2021, "
        "end: 2024-05}\n  - {institution: X, start: 2021-09-01, end: Present}\n",
    )
    profile = load_file(path, Profile, "p.yaml")
    assert profile.education[0].start == PartialDate(2021)
    assert profile.education[0].end == PartialDate(2024, 5)
    assert profile.education[1].start == PartialDate(2021, 9, 1)
    assert profile.education[1].end is PRESENT


def test_person_refs_accept_text_or_mapping(tmp_path):
    path = write(
        tmp_path / "p.yaml",
        "name: A\npublications:\n  - title: T\n    authors:\n"
        "      - Ann Bee\n      - {name: Cee Dee, equal_contribution: true, "
        "annotation: Advisor}\n",
    )
    authors = load_file(path, Profile, "p.yaml").publications[0].authors
    assert [a.name for a in authors] == ["Ann Bee", "Cee Dee"]
    assert authors[1].equal_contribution and authors[1].annotation == "Advisor"
    assert authors[0].source.line == 5 and authors[1].source.line == 6


# One small invalid input per kind of mistake: (text, line, key path, expected message part).
MISTAKES = {
    "unknown key with suggestion": (
        "name: A\neducation:\n  - institution: X\n    adviser: [B]\n",
        4,
        "education[0].adviser",
        "did you mean 'advisors'?",
    ),
    "unknown top-level key": ("name: A\nnmae: B\n", 2, "nmae", "unknown key 'nmae'"),
    "duplicate key": ("name: A\nname: B\n", 2, "name", "duplicate key 'name'"),
    "missing required key": ("given_name: A\n", 1, "name", "missing required key"),
    "text expected, list found": ("name: [A, B]\n", 1, "name", "found a list; expected text"),
    "list expected, text found": ("name: A\nemails: a@b.org\n", 2, "emails", "expected a list"),
    "mapping expected": (
        "name: A\neducation: [PKU]\n",
        2,
        "education[0]",
        "expected a mapping (Education)",
    ),
    "month 13": (
        "name: A\nawards:\n  - {name: X, date: 2024-13}\n",
        3,
        "awards[0].date",
        "a month between 01 and 12",
    ),
    "day that does not exist": (
        "name: A\nawards:\n  - {name: X, date: 2023-02-29}\n",
        3,
        "awards[0].date",
        "a day that exists",
    ),
    "free-form date": (
        "name: A\nawards:\n  - {name: X, date: Dec. 2024}\n",
        3,
        "awards[0].date",
        "YYYY, YYYY-MM or YYYY-MM-DD",
    ),
    "YAML 1.1 boolean": (
        "name: A\npublications:\n  - title: T\n    authors: [B]\n    selected: yes\n",
        5,
        "publications[0].selected",
        "true or false",
    ),
    "octal-looking year": (
        "name: A\npublications:\n  - title: T\n    authors: [B]\n    year: 02024\n",
        5,
        "publications[0].year",
        "no leading zeros",
    ),
    "quoted number": (
        "name: A\npublications:\n  - title: T\n    authors: [B]\n    year: '2024'\n",
        5,
        "publications[0].year",
        "a whole number",
    ),
    "closed value list": (
        "name: A\npublications:\n  - title: T\n    authors: [B]\n    status: publshed\n",
        5,
        "publications[0].status",
        "did you mean 'published'?",
    ),
    "malformed email": (
        "name: A\nemails: [someone.at.example.org]\n",
        2,
        "emails[0]",
        "an email address",
    ),
    "malformed URL": ("name: A\nhomepage: www.example.org\n", 2, "homepage", "an http(s) URL"),
    "malformed ORCID": ("name: A\norcid: 0000-0002-1825\n", 2, "orcid", "ORCID iD"),
    "bad language tag": (
        "name: A\nnative_names: [{name: 赵, lang: chinese!}]\n",
        2,
        "native_names[0].lang",
        "BCP 47",
    ),
    "empty text": ("name: ''\n", 1, "name", "non-empty text"),
    "tab indentation": ("name: A\nemails:\n\t- a@b.org\n", 3, "", "tabs"),
    "syntax error": ("name: [A\n", 2, "", "YAML syntax error"),
    "anchor and alias": ("name: &n A\nalternate_names: [*n]\n", 2, "", "aliases are not allowed"),
    "python tag": (
        "name: !!python/object/apply:os.system [echo]\n",
        1,
        "",
        "tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
    ),
    "custom tag": ("name: !shout A\n", 1, "", "is not allowed"),
    "empty file": ("", 1, "", "the file is empty; expected a mapping"),
    "list at top level": ("- name: A\n", 1, "", "expected a mapping (Profile)"),
    "several documents": ("name: A\n---\nname: B\n", 2, "", "YAML syntax error"),
}


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_each_mistake_names_file_line_key_and_expectation(tmp_path, case):
    text, line, key, message = MISTAKES[case]
    path = write(tmp_path / "broken.yaml", text)
    with pytest.raises(InputError) as caught:
        load_file(path, Profile, "data/profiles/broken.yaml")
    problem = caught.value.problems[0]
    assert problem.source.file == "data/profiles/broken.yaml"
    assert problem.source.line == line, str(problem)
    assert problem.path == key, str(problem)
    assert message in problem.message, str(problem)
    assert str(problem).startswith(f"data/profiles/broken.yaml:{line}:")


def test_alias_bomb_is_refused_quickly(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    path = write(tmp_path / "bomb.yaml", "\n".join(lines) + "\n")
    with pytest.raises(InputError, match="aliases are not allowed"):
        load_file(path, Profile, "bomb.yaml")


def test_byte_order_mark_still_loads(tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes("\ufeffname: Ann\n".encode())
    assert load_file(path, Profile, "bom.yaml").name == "Ann"


def test_invalid_utf8_is_reported_with_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"name: A\nbio: \xff\xfe\n")
    with pytest.raises(InputError) as caught:
        load_file(path, Profile, "bad.yaml")
    assert caught.value.problems[0].source.line == 2
    assert "invalid UTF-8" in caught.value.problems[0].message


def test_text_fields_never_become_other_types(tmp_path):
    path = write(
        tmp_path / "p.yaml", "name: NO\naddress: 12:30\nbio: 01234\ninterests: [on, off, yes]\n"
    )
    profile = load_file(path, Profile, "p.yaml")
    assert (profile.name, profile.address, profile.bio) == ("NO", "12:30", "01234")
    assert profile.interests == ["on", "off", "yes"]


def test_all_problems_of_a_run_are_reported_together(project):
    write(project / "data/profiles/x-y.yaml", "name: X\nemails: [bad]\nnmae: Y\n")
    write(project / "data/venues.yaml", "osdi:\n  name: OSDI\n  kind: conference\n  kind: x\n")
    with pytest.raises(InputError) as caught:
        load_dataset(project / "data")
    files = {p.source.file for p in caught.value.problems}
    assert files == {"data/profiles/x-y.yaml", "data/venues.yaml"}
    assert len(caught.value.problems) == 3


def test_profile_file_name_must_be_a_slug(project):
    write(project / "data/profiles/Ann Bee.yaml", "name: Ann\n")
    with pytest.raises(InputError, match="is not a slug"):
        load_dataset(project / "data")


def test_registry_keys_must_be_slugs(project):
    write(
        project / "data/organizations.yaml", "Peking University:\n  name: P\n  kind: university\n"
    )
    with pytest.raises(InputError) as caught:
        load_dataset(project / "data")
    assert "expected a key of lower-case letters" in caught.value.problems[0].message


def test_missing_data_directory(tmp_path):
    with pytest.raises(InputError, match="data directory not found"):
        load_dataset(tmp_path / "nowhere")


def test_model_is_frozen(mini_build):
    profile = mini_build[0].dataset.profiles[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.name = "other"  # type: ignore[misc]
    assert isinstance(profile, model.Profile)


def _records(value, seen):
    """Every model or resolved record reachable from `value`."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if id(value) not in seen:
            seen[id(value)] = value
            for f in dataclasses.fields(value):
                _records(getattr(value, f.name), seen)
    elif isinstance(value, list | tuple):
        for v in value:
            _records(v, seen)
    elif isinstance(value, dict):
        for k, v in value.items():
            _records(k, seen)
            _records(v, seen)
    return seen


def test_records_are_slotted_and_pickle_equal(seed_build):
    """No record carries a per-object __dict__ (a 10k build holds millions of them), and
    the parse cache's pickles give equal records back."""
    import pickle

    resolution = seed_build[0]
    parts = (resolution.dataset, resolution.persons, resolution.publications)
    records = _records(parts, {}).values()
    kinds = {type(r).__name__ for r in records}
    assert {"Profile", "Publication", "PersonRef", "Source", "PublicationEntity"} <= kinds
    assert {"AuthorSlot", "PersonEntity", "PartialDate", "Venue", "Organization"} <= kinds
    assert not [type(r).__name__ for r in records if hasattr(r, "__dict__")]
    for part in parts:
        assert pickle.loads(pickle.dumps(part, protocol=5)) == part


def _texts(value, found):
    """Every text in records reachable from `value` (fields and list items)."""
    if isinstance(value, str):
        found.append(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type | model.Source):
        for f in dataclasses.fields(value):
            _texts(getattr(value, f.name), found)
    elif isinstance(value, list | tuple):
        for v in value:
            _texts(v, found)
    return found


def test_equal_texts_of_different_files_are_one_object(repo_config):
    """data/profiles/yihao-zhao.yaml and yinmin-zhong.yaml both list ElasticFlow with its
    authors: after loading, each distinct text is one string, and each profile equals
    the one read from its file alone."""
    data = load_dataset(repo_config.data_dir)
    texts = _texts(data, [])
    assert texts.count("Yinmin Zhong") >= 3
    assert len({id(t) for t in texts}) == len(set(texts))
    for profile in data.profiles:
        path = repo_config.data_dir / "profiles" / f"{profile.slug}.yaml"
        alone = load_file(path, Profile, f"data/profiles/{profile.slug}.yaml")
        assert dataclasses.replace(alone, slug=profile.slug) == profile
