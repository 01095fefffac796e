"""kg bench run on a tiny corpus: every stage measured, and the figures mean something."""

from __future__ import annotations

import json

import pytest

from kg.bench import run as bench


@pytest.fixture(scope="module")
def result():
    return bench.measure(8, seed=2, timeout=600)


def test_every_stage_is_measured_with_its_memory(result):
    for _, kg_stage, naive_stage, floor_stage in bench.STAGES:
        assert result["kg"][kg_stage]["seconds"] > 0
        assert result["kg"][kg_stage]["peak_mib"] > 10  # a Python process with rdflib loaded
        if naive_stage:  # the query store has no naive counterpart
            assert result["naive"][naive_stage]["seconds"] > 0
        if floor_stage:
            assert result["floor"][floor_stage]["seconds"] > 0
    assert result["kg"]["rebuild after one edit"]["seconds"] > 0
    # CPU and the peak summed over every process of the run are measured too
    assert result["kg"]["cpu_total"] > result["kg"]["validate"]["cpu"] > 0
    # (not compared with ru_maxrss, which Linux carries over exec from the forking parent)
    assert result["kg"]["summed_peak_mib"] > 30  # at least one Python process with kg loaded


def test_kg_and_the_naive_baseline_build_the_same_graph(result):
    assert result["kg"]["triples"] == result["naive"]["triples"] > 500


def test_both_query_engines_give_the_same_answers_on_the_corpus(result):
    answers = result["query"]["answers"]
    assert len(answers) >= 19
    for name, sizes in answers.items():
        assert sizes["oxigraph"] == sizes["rdflib"], name
    unparameterized = [n for n, s in answers.items() if s["parameters"] == 0]
    assert unparameterized and all(answers[n]["oxigraph"] > 0 for n in unparameterized)
    # timed as kg query runs them: from kg build's precomputed answers (decision 0031)
    assert all(answers[n]["precomputed"] for n in unparameterized)
    # with parameters: only ranked-venue-papers, answered ahead for its values (decision 0033)
    ahead = sorted(n for n, s in answers.items() if s["parameters"] and s["precomputed"])
    assert ahead == ["ranked-venue-papers"]
    for times in result["query"]["queries"].values():
        assert len(times["oxigraph"]) == 11 and len(times["rdflib"]) == 3


def test_tables_show_the_measured_figures_and_their_ratios(result):
    text = bench.table([result])
    kg, floor = result["kg"]["total"], result["floor"]["total"]
    end_to_end = next(line for line in text.splitlines() if "**end to end**" in line)
    cells = [c.strip() for c in end_to_end.split("|")]
    assert cells[4] == f"{kg:.2f}" and cells[6] == f"{floor:.2f}"
    assert cells[-2] == f"{kg / floor:.1f}x"
    assert "| 8 |" in text and "rebuild after one edit" in text
    assert "| 8 | coauthors |" in bench.query_table([result])


def test_percentiles_pick_the_right_sample():
    samples = [0.005, 0.001, 0.003, 0.002, 0.004]
    assert bench._ms(samples, 50) == "3" and bench._ms(samples, 95) == "5"
    assert bench._ms([], 50) == "not run"


def test_a_table_holds_an_earlier_runs_sizes_beside_this_runs():
    earlier = [{"people": 100000, "kg": {}, "measured": "2026-11-25"}, {"people": 10, "kg": {}}]
    now = [{"people": 10, "kg": {"new": 1}, "measured": "2026-11-26"}]
    both = bench.combined(earlier, now)
    assert [r["people"] for r in both] == [10, 100000] and both[0] is now[0]
    assert bench.provenance(both) == (
        "Measured: 10 people on 2026-11-26, 100000 people on 2026-11-25."
    )
    assert bench.provenance(now) == ""  # one run: the machine line says enough


def test_bench_run_puts_an_included_run_in_the_doc_and_refuses_a_file_it_cannot_read(
    result, tmp_path, capsys
):
    from kg.cli import main

    doc = tmp_path / "performance.md"
    doc.write_text("Intro.\n<!-- BEGIN GENERATED -->\nold\n<!-- END GENERATED -->\nEnd.\n")
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps([result]), encoding="utf-8")
    assert main(["bench", "run", "--sizes", "", "--include", str(earlier), "--doc", str(doc)]) == 0
    text = doc.read_text()
    assert text.startswith("Intro.\n") and text.endswith("End.\n") and "old" not in text
    assert "| 8 |" in text and "| 8 | coauthors |" in text
    for bad in ("{not json", json.dumps([{"people": "8"}])):
        earlier.write_text(bad, encoding="utf-8")
        argv = ["bench", "run", "--sizes", "", "--include", str(earlier), "--doc", str(doc)]
        assert main(argv) == 2
        assert "--include" in capsys.readouterr().err and doc.read_text() == text
