"""kg bench run: every stage measured for kg, the naive baseline and the floor."""

from __future__ import annotations

from kg import bench


def test_measure_reports_every_stage_and_the_same_graph_size():
    result = bench.measure(12, seed=2, timeout=600)
    for stage in ("load", "resolve", "map", "validate", "render", "write"):
        assert result["kg"][stage]["seconds"] >= 0
        assert result["kg"][stage]["peak_mib"] > 10
    assert result["kg"]["triples"] == result["naive"]["triples"] > 1000
    assert {"load", "write"} <= set(result["floor"])
    text = bench.table([result])
    assert "**end to end**" in text and "| 12 |" in text
