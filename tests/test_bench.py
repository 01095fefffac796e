"""kg bench run: every stage measured for kg, the naive baseline and the floor."""

from __future__ import annotations

from kg import bench


def test_measure_reports_every_stage_and_the_same_graph_size():
    result = bench.measure(12, seed=2, timeout=600)
    for _, kg_stage, naive_stage, _ in bench.STAGES:
        assert result["kg"][kg_stage]["seconds"] >= 0
        assert result["kg"][kg_stage]["peak_mib"] > 10
        assert result["naive"][naive_stage]["seconds"] >= 0
    assert result["kg"]["rebuild after one edit"]["seconds"] > 0
    assert result["kg"]["triples"] == result["naive"]["triples"] > 1000
    assert {"load", "write"} <= set(result["floor"])
    text = bench.table([result])
    assert "**end to end**" in text and "| 12 |" in text and "rebuild after one edit" in text
    queries = result["query"]["queries"]
    assert len(queries) >= 19
    for times in queries.values():
        assert len(times["oxigraph"]) == 11 and len(times["rdflib"]) == 3
    assert "| 12 | coauthors |" in bench.query_table([result])
