"""kg bench generate: a deterministic, valid synthetic corpus."""

from __future__ import annotations

import pytest

from kg.cli import main
from kg.config import load_config
from kg.pipeline import validate_project


def _files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_same_seed_same_bytes_and_valid(tmp_path, capsys):
    assert (
        main(["bench", "generate", "--people", "40", "--seed", "3", "--out", str(tmp_path / "a")])
        == 0
    )
    assert (
        main(["bench", "generate", "--people", "40", "--seed", "3", "--out", str(tmp_path / "b")])
        == 0
    )
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert main(["--project", str(tmp_path / "a"), "check"]) == 0
    resolution, report = validate_project(load_config(tmp_path / "a"))
    assert report.conforms
    assert len(resolution.dataset.profiles) == 40
    assert len(resolution.publications) == 100
    assert "not the same person" in (tmp_path / "a" / "data" / "people.yaml").read_text()
    assert any(
        not name.isascii()
        for p in resolution.dataset.profiles
        for name in [p.name, *(n.name for n in p.native_names)]
    )
    capsys.readouterr()


def test_generate_refuses_a_non_empty_directory(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert main(["bench", "generate", "--people", "5", "--out", str(tmp_path)]) == 2
    assert (tmp_path / "keep.txt").read_text() == "mine"
    assert "not empty" in capsys.readouterr().err


def test_names_past_the_plain_name_space_are_drawn_and_earlier_ones_kept():
    """Given x suffix x family names run out at 11,193: a bigger corpus must still be
    generated (it looped for ever), and the first 10,000 names stay the ones every
    corpus up to 10k people has always had."""
    import random

    from kg.bench.synth import PLAIN_NAMES, _names

    big = _names(random.Random(7), 12_000)
    assert len(big) == len(set(big)) == 12_000
    assert big[:PLAIN_NAMES] == _names(random.Random(7), PLAIN_NAMES)
    assert all(". " in name for name in big[PLAIN_NAMES:])
    assert not any(". " in name for name in big[:PLAIN_NAMES])


def test_a_profile_lists_at_most_listed_papers_and_the_corpus_stays_valid(
    tmp_path, capsys, monkeypatch
):
    """The busiest synthetic author of a 100k corpus would list ~125,000 papers (a 25 MB
    profile, over kg's input limit); a profile lists at most LISTED_PAPERS."""
    import yaml

    from kg.bench import synth

    monkeypatch.setattr(synth, "LISTED_PAPERS", 6)
    out = tmp_path / "capped"
    assert main(["bench", "generate", "--people", "30", "--seed", "3", "--out", str(out)]) == 0
    listed = [
        len(yaml.safe_load(p.read_text())["publications"])
        for p in sorted((out / "data" / "profiles").glob("*.yaml"))
    ]
    assert max(listed) == 6
    assert main(["--project", str(out), "check"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("people", [2, 3, 6])
def test_the_smallest_corpora_generate_and_are_valid(tmp_path, people):
    """Papers have up to 7 authors: with 6 people the generator drew for ever."""
    assert main(["bench", "generate", "--people", str(people), "--out", str(tmp_path)]) == 0
    assert main(["--project", str(tmp_path), "check"]) == 0


def test_one_person_is_not_a_corpus(tmp_path, capsys):
    assert main(["bench", "generate", "--people", "1", "--out", str(tmp_path / "c")]) == 2
    assert "at least 2" in capsys.readouterr().err and not (tmp_path / "c").exists()
