"""The mapping units' subjects (kg.graph.mapping.map_units, decision 0056): what a unit
emits does not depend on the units mapped before it, so the subjects a build keeps for
a unit that did not change are still that unit's in the next build."""

from __future__ import annotations

import pytest

from kg.bench.synth import generate
from kg.config import load_config
from kg.graph.mapping import map_graph, map_units, mapper
from kg.ingest.load import load_dataset_keyed
from kg.ingest.redact import redact
from kg.resolve.identity import resolve


@pytest.fixture(scope="module")
def resolved(tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("units") / "c"
    generate(root, 24, seed=11)
    config = load_config(root)
    data, problems, _ = load_dataset_keyed(config.data_dir)
    assert not problems
    return resolve(redact(data)), config.base_iri


def test_units_alone_and_in_any_order_emit_what_they_emit_in_a_full_map(resolved):
    resolution, base = resolved
    full: dict[str, tuple[str, ...]] = {}
    graph = map_graph(resolution, base, units=full)
    assert set(graph.triples.subjects()) == {s for v in full.values() for s in v}
    kinds = {name.split("\x1f")[0] for name in full}
    assert kinds == {"org", "venue", "person", "known", "profile", "publication"}
    backwards = map_units(mapper(resolution, base, {}, {}), reversed(sorted(full)))
    assert {k: set(v) for k, v in backwards.items()} == {k: set(v) for k, v in full.items()}
    for name in sorted(full)[::7]:  # alone, in a mapper that has mapped nothing
        alone = map_units(mapper(resolution, base, {}, {}), [name])
        assert set(alone[name]) == set(full[name]), name


def test_a_unit_the_resolution_does_not_have_emits_nothing(resolved):
    resolution, base = resolved
    assert map_units(mapper(resolution, base, {}, {}), ["publication\x1fno-such-work"]) == {}
