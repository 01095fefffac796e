"""`kg init` and `kg new person`: a new project that builds and validates with no network,
bundled registries whose identifiers have the right shape, and skeletons that never overwrite."""

from __future__ import annotations

import re
import tomllib

import pytest

from kg.cli import main
from kg.ingest.load import load_registry, ror_checksum_ok
from kg.ingest.scaffold import STARTER
from kg.model import Organization, Venue

# the areas the bundled venues must cover, by one venue each (dblp key)
AREAS = {
    "systems": "conf/osdi",
    "networking": "conf/sigcomm",
    "machine learning": "conf/nips",
    "programming languages": "journals/pacmpl",
    "databases": "conf/sigmod",
    "architecture": "conf/isca",
    "security": "conf/uss",
    "preprints (arXiv)": "journals/corr",
}


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    root = tmp_path_factory.mktemp("init") / "group"
    assert (
        main(
            [
                "init",
                str(root),
                "--base-iri",
                "https://group.example.edu/kg/",
                "--title",
                "Our group",
            ]
        )
        == 0
    )
    return root


def test_init_writes_a_project_with_the_given_base_iri_and_title(started):
    config = tomllib.loads((started / "kg.toml").read_text(encoding="utf-8"))["kg"]
    assert config["base_iri"] == "https://group.example.edu/kg/"
    assert config["title"] == "Our group"
    assert (started / "data" / "profiles" / "alex-example.yaml").is_file()
    assert (started / ".gitignore").read_text(encoding="utf-8").startswith("dist/")


def test_an_initialised_project_validates_and_builds_without_warning(started, capsys):
    assert main(["--project", str(started), "check"]) == 0
    assert main(["--project", str(started), "validate"]) == 0
    capsys.readouterr()
    assert main(["--project", str(started), "build", "--out", str(started / "out")]) == 0
    assert "base_iri is still the example" not in capsys.readouterr().err
    graph = (started / "out" / "graph.nt").read_text(encoding="utf-8")
    osdi = "<https://group.example.edu/kg/venue/osdi>"
    assert f"{osdi} <http://schema.org/sameAs> <https://dblp.org/db/conf/osdi/> ." in graph
    # bundled entries the example profile does not name are not published (issue 28)
    assert "<https://group.example.edu/kg/org/pku>" not in graph
    assert "<https://group.example.edu/kg/org/tsinghua>" not in graph
    assert "<https://group.example.edu/kg/venue/eurosys>" not in graph


def test_init_refuses_an_existing_project(started, capsys):
    before = (started / "kg.toml").read_text(encoding="utf-8")
    assert main(["init", str(started)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (started / "kg.toml").read_text(encoding="utf-8") == before


def test_init_refuses_a_bad_base_iri(tmp_path, capsys):
    assert main(["init", str(tmp_path / "x"), "--base-iri", "kg.example.org"]) == 2
    assert "--base-iri" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_build_and_embed_warn_while_the_base_iri_is_the_example(tmp_path, capsys):
    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    assert main(["--project", str(root), "embed", "alex-example", "--json"]) == 0
    assert "base_iri is still the example https://kg.example.org/" in capsys.readouterr().err
    assert main(["--project", str(root), "build"]) == 0
    assert "base_iri is still the example" in capsys.readouterr().err


def test_bundled_venues_have_dblp_keys_and_cover_every_area():
    venues = load_registry(STARTER / "venues.yaml", Venue, "venues.yaml")
    keys = {v.dblp for v in venues}
    assert all(re.fullmatch(r"(conf|journals)/[a-z0-9-]+", k or "") for k in keys), keys
    assert len(keys) == len(venues), "two venues share a dblp key"
    missing = {area for area, key in AREAS.items() if key not in keys}
    assert not missing
    arxiv = next(v for v in venues if v.key == "arxiv")
    assert arxiv.kind == "preprint-server"


def test_bundled_organizations_have_valid_ror_and_wikidata_identifiers():
    orgs = load_registry(STARTER / "organizations.yaml", Organization, "organizations.yaml")
    rors = [o.ror for o in orgs if o.ror]
    assert len(rors) >= 20 and len(set(rors)) == len(rors)
    assert all(ror_checksum_ok(r) for r in rors)
    qids = [o.wikidata for o in orgs if o.wikidata]
    assert qids and all(re.fullmatch(r"Q[1-9]\d*", q) for q in qids)
    assert len(set(qids)) == len(qids)


def test_a_wrong_ror_checksum_is_refused(project, capsys):
    path = project / "data" / "organizations.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace(
            "  name: Peking University\n", "  name: Peking University\n  ror: 02v51f718\n", 1
        ),
        encoding="utf-8",
    )
    assert main(["--project", str(project), "check"]) == 2
    assert "checksum" in capsys.readouterr().err


def test_new_person_writes_a_skeleton_that_loads_and_never_overwrites(project, capsys):
    assert main(["--project", str(project), "new", "person", "Mei Lin"]) == 0
    path = project / "data" / "profiles" / "mei-lin.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count("\nname: Mei Lin\n") == 1 and "# publications:" in text
    assert main(["--project", str(project), "check"]) == 0
    path.write_text(text + "interests: [Systems]\n", encoding="utf-8")
    assert main(["--project", str(project), "new", "person", "Mei  Lin"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8").endswith("interests: [Systems]\n")


def test_init_on_a_file_is_a_usage_error(tmp_path, capsys):
    target = tmp_path / "notes.txt"
    target.write_text("mine\n", encoding="utf-8")
    assert main(["init", str(target)]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == "mine\n"


def test_init_writes_a_github_pages_workflow_that_builds_and_deploys_the_site(started):
    import yaml

    text = (started / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8")
    flow = yaml.safe_load(text)
    assert flow[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads `on` as true
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build = flow["jobs"]["build"]["steps"]
    runs = [step.get("run", "") for step in build]
    assert "kg check" in runs and "kg build" in runs
    upload = next(s for s in build if s.get("uses", "").startswith("actions/upload-pages"))
    assert upload["with"]["path"] == "dist/site"
    assert build[0]["with"]["fetch-depth"] == 0
    deploy = flow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["steps"][0]["uses"] == "actions/deploy-pages@v4"
    assert "$version" not in text and re.search(r"written by kg \d+\.\d+", text)


def test_new_person_warns_when_the_name_is_already_a_profile(tmp_path, capsys):
    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    example = root / "data" / "profiles" / "alex-example.yaml"
    example.write_text(
        example.read_text("utf-8").replace(
            "given_name:", "alternate_names: [A. Example]\ngiven_name:"
        ),
        "utf-8",
    )
    capsys.readouterr()
    assert main(["--project", str(root), "new", "person", "A. EXAMPLE"]) == 0
    err = capsys.readouterr().err
    assert "warning: A. EXAMPLE already has an entry in data/profiles/alex-example.yaml" in err
    assert (root / "data" / "profiles" / "a-example.yaml").is_file()  # written all the same
    assert main(["--project", str(root), "new", "person", "Mei Lin"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_duplicate_profile_is_one_clear_error(tmp_path, capsys):
    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    profiles = root / "data" / "profiles"
    (profiles / "alex-example-2.yaml").write_text(
        (profiles / "alex-example.yaml").read_text("utf-8"), "utf-8"
    )
    capsys.readouterr()
    for command in ("check", "build"):
        assert main(["--project", str(root), command]) == 2
        errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
        assert len(errors) == 1, errors
        assert "alex-example-2.yaml" in errors[0]
        assert "a second profile of Alex Example: data/profiles/alex-example.yaml" in errors[0]
        assert "keep one profile per person" in errors[0]


def test_the_suggested_entry_for_an_unknown_workshop_is_clean_and_resolves(tmp_path, capsys):
    """'Workshop on Hot Topics in Operating Systems (HotOS 2025)': the acronym is the
    short name, the name holds no year, the kind is workshop, and once the entry is
    pasted the reference resolves."""
    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    profile = root / "data" / "profiles" / "alex-example.yaml"
    printed = "Workshop on Hot Topics in Operating Systems (HotOS 2025)"
    text = profile.read_text("utf-8").replace("venue: OSDI", f'venue: "{printed}"')
    profile.write_text(text, "utf-8")
    capsys.readouterr()
    assert main(["--project", str(root), "check"]) == 2
    err = capsys.readouterr().err
    entry = err.split("append to data/venues.yaml:\n", 1)[1]
    lines = [line.strip() for line in entry.splitlines()[:5]]
    assert lines == [
        "hotos:",
        "name: Workshop on Hot Topics in Operating Systems",
        "short_name: HotOS",
        "kind: workshop  # conference, journal, workshop, preprint-server, ...",
        f"aliases: [{printed}]",
    ]
    venues = root / "data" / "venues.yaml"
    pasted = "\n".join(
        line[4:] if line.startswith("    ") else line for line in entry.splitlines()[:5]
    )
    venues.write_text(venues.read_text("utf-8") + "\n" + pasted + "\n", "utf-8")
    assert main(["--project", str(root), "check"]) == 0


@pytest.mark.parametrize(
    "printed",
    [
        "Thirty-Seventh Conference on Neural Information Processing Systems (NeurIPS 2023)",
        "Advances in Neural Information Processing Systems",
        "Proceedings of Machine Learning and Systems",
        "Proceedings of the International Conference on Machine Learning",
        "18th USENIX Symposium on Operating Systems Design and Implementation",
    ],
)
def test_the_bundled_venues_know_how_ml_and_systems_papers_print_them(tmp_path, printed):
    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    profile = root / "data" / "profiles" / "alex-example.yaml"
    text = profile.read_text("utf-8").replace("venue: OSDI", f'venue: "{printed}"')
    profile.write_text(text.replace("year: 2025", "year: 2023"), "utf-8")  # NeurIPS 2023
    assert main(["--project", str(root), "check"]) == 0


def test_a_volume_number_is_not_read_as_a_year(tmp_path, capsys):
    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    profile = root / "data" / "profiles" / "alex-example.yaml"
    printed = "Advances in Neural Information Processing Systems 36"
    profile.write_text(
        profile.read_text("utf-8").replace("venue: OSDI", f'venue: "{printed}"'), "utf-8"
    )
    # NeurIPS, volume 36: read as the year 2036 it would disagree with the year 2025
    assert main(["--project", str(root), "check"]) == 0, capsys.readouterr().err
