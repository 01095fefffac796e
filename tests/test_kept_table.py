"""The kept subject digest table (kg/graph/delta.py, decision 0057): with a Change from
its token, only the named subjects are digested again, and the table equals a whole
walk's; the edits it reports equal a full diff of the two tables (the oracle), whatever
superset the Change names; a wrong `before`, no subjects, or no Change is a whole walk."""

from __future__ import annotations

import os

from rdflib import BNode, Literal, URIRef

from kg.cache import SignedCache
from kg.change import Change
from kg.graph.delta import TABLE_KEY, changed, kept_table, table
from kg.graph.ntriples import to_ntriples
from kg.graph.triples import Triples

EX = "http://x.example/"
NAME = URIRef("http://schema.org/name")
KNOWS = URIRef("http://schema.org/knows")
SCHEMES = ("foaf", "kg")


def _graph(n: int = 30) -> Triples:
    """n people, each named, knowing the next, with a blank-node address."""
    graph = Triples()
    for i in range(n):
        person = URIRef(f"{EX}p{i}")
        graph.add((person, NAME, Literal(f"Person {i}")))
        graph.add((person, KNOWS, URIRef(f"{EX}p{(i + 1) % n}")))
        address = BNode(f"a{i}")
        graph.add((person, URIRef("http://schema.org/address"), address))
        graph.add((address, NAME, Literal(f"Street {i}", lang="en")))
    return graph


def _edited() -> Triples:
    """`_graph()` with p3 renamed, p4 gone, a new p99 and a5's blank node gone."""
    graph = Triples(t for t in _graph() if t[0] not in (URIRef(f"{EX}p4"), BNode("a5")))
    graph.remove_subjects({URIRef(f"{EX}p3")})
    graph.add((URIRef(f"{EX}p3"), NAME, Literal("Renamed")))
    graph.add((URIRef(f"{EX}p99"), NAME, Literal("New")))
    return graph


def _oracle(before: Triples, after: Triples) -> set[str]:
    """The subjects whose triples differ: a full diff of two whole tables."""
    return changed(table(before).digests, table(after).digests)


def _cache(tmp_path) -> SignedCache:
    return SignedCache(tmp_path / ".kg-cache" / "table", secret=b"k" * 32)


def test_a_change_from_the_kept_token_digests_only_its_subjects(tmp_path) -> None:
    cache = _cache(tmp_path)
    first = kept_table(_graph(), cache, None, SCHEMES)
    assert first.before is None and first.edits is None  # nothing kept yet
    after = _edited()
    oracle = _oracle(_graph(), after)
    assert oracle == {f"<{EX}p3>", f"<{EX}p4>", f"<{EX}p99>", "_:a5"}
    extra = {f"<{EX}p7>", "_:a9", f"<{EX}never>", "not a term"}  # a superset is legal
    change = Change(first.token, "t2", subjects=frozenset(oracle | extra))
    second = kept_table(after, cache, change, SCHEMES)
    assert second.table.digests == table(after).digests
    assert second.edits == oracle
    assert (second.before, second.token, second.change) == (first.token, "t2", change)
    assert second.order == sorted(table(_graph()).digests)  # the kept table's subjects
    # only the named subjects' terms were formatted: a patch, not a walk
    assert URIRef(f"{EX}p20") not in second.table.memo
    assert URIRef(f"{EX}p99") in second.table.memo
    # and what it kept is the edited graph's table, under the new token
    third = kept_table(after, cache, None, SCHEMES)
    assert third.before == "t2" and third.edits == frozenset()
    assert third.table.digests == table(after).digests


def test_a_change_from_another_token_or_without_subjects_is_a_whole_walk(tmp_path) -> None:
    cache = _cache(tmp_path)
    first = kept_table(_graph(), cache, None, SCHEMES)
    after = _edited()
    whole = table(after)
    for change in (
        Change("not-the-kept-token", "t2", subjects=frozenset()),
        Change(first.token, "t2", subjects=None),
    ):
        kept_table(_graph(), cache, Change("x", first.token), SCHEMES)  # back to the first
        found = kept_table(after, cache, change, SCHEMES)
        assert found.table.digests == whole.digests
        assert set(found.table.memo) == set(whole.memo)  # every term: a whole walk
        assert found.edits == _oracle(_graph(), after)


def test_a_tampered_or_missing_kept_table_is_no_kept_table(tmp_path) -> None:
    cache = _cache(tmp_path)
    first = kept_table(_graph(), cache, None, SCHEMES)
    head = cache.get(TABLE_KEY)
    cache.put(head[1], "not a body")
    found = kept_table(_edited(), cache, Change(first.token, "t2", subjects=frozenset()), SCHEMES)
    assert found.before is None and found.edits is None
    assert found.table.digests == table(_edited()).digests
    other = SignedCache(tmp_path / ".kg-cache" / "table", secret=b"o" * 32)  # not ours
    assert kept_table(_graph(), other, None, SCHEMES).before is None


def test_colliding_prefixes_follow_the_patched_subjects(tmp_path) -> None:
    """`prefixes` is what a walk of every term finds: an IRI `foaf:x` or a `kg:` datatype
    added by a changed subject is found, and goes when its subject changes again."""
    cache = _cache(tmp_path)
    first = kept_table(_graph(), cache, None, SCHEMES)
    assert first.prefixes == frozenset()
    odd = _graph()
    odd.add((URIRef(f"{EX}p1"), KNOWS, URIRef("foaf:someone")))
    odd.add((URIRef(f"{EX}p2"), NAME, Literal("x", datatype=URIRef("kg:text"))))
    named = frozenset({f"<{EX}p1>", f"<{EX}p2>"})
    second = kept_table(odd, cache, Change(first.token, "t2", subjects=named), SCHEMES)
    assert second.edits == named
    assert second.prefixes == {"foaf", "kg"}
    back = Change("t2", "t3", subjects=frozenset({f"<{EX}p1>"}))
    odd.remove_subjects({URIRef(f"{EX}p1")})
    for t in _graph().describe(URIRef(f"{EX}p1")).items():
        for o in t[1]:
            odd.add((URIRef(f"{EX}p1"), t[0], o))
    third = kept_table(odd, cache, back, SCHEMES)
    assert third.prefixes == {"kg"}
    assert kept_table(odd, cache, None, SCHEMES).prefixes == {"kg"}  # a whole walk agrees


def test_the_kept_body_is_written_only_when_a_digest_changed(tmp_path) -> None:
    cache = _cache(tmp_path)
    first = kept_table(_graph(), cache, None, SCHEMES)
    body = cache.get(TABLE_KEY)[1]
    same = kept_table(_graph(), cache, Change(first.token, "t2", subjects=frozenset()), SCHEMES)
    assert same.edits == frozenset() and cache.get(TABLE_KEY) == ("t2", body)
    entries = sorted(p.name for p in (tmp_path / ".kg-cache" / "table").rglob("*") if p.is_file())
    assert len(entries) == 2  # the head and one body: older bodies are pruned


def test_the_old_dumps_runs_give_the_new_dump_with_the_changed_chunks_made(tmp_path) -> None:
    """`PreviousDump.runs` against an oracle: for random old and new subject sets (some
    changed, removed, added), the runs copied from the old file plus the changed chunks
    made again give exactly the new dump."""
    import os
    import random
    from array import array

    from kg.publish.olddump import PreviousDump

    rng = random.Random(7)
    for case in range(30):
        old = {f"<{EX}s{i:03d}>": f"old {i} {case}\n" * rng.randint(1, 3) for i in range(60)}
        new = dict(old)
        for text in rng.sample(sorted(old), rng.randint(0, 8)):
            del new[text]
        for text in rng.sample(sorted(new), rng.randint(0, 8)):
            new[text] = f"changed {text}\n"
        for i in range(rng.randint(0, 5)):
            new[f"<{EX}s{rng.randint(0, 70):03d}x{i}>"] = f"added {i}\n"
        edits = {t for t in old.keys() | new.keys() if old.get(t) != new.get(t)}
        order, keys = sorted(old), sorted(new)
        path = tmp_path / f"dump{case}"
        path.write_bytes("".join(old[t] for t in order).encode())
        fd = os.open(path, os.O_RDONLY)
        dump = PreviousDump(fd, order, edits, array("Q", [len(old[t]) for t in order]))
        out, at = bytearray(), 0
        for start, stop, first in dump.runs(keys):
            assert start >= at and not edits & set(keys[start:stop])
            out += "".join(new[t] for t in keys[at:start]).encode()
            dump.write(first, first + stop - start, _Sink(out))
            at = stop
        out += "".join(new[t] for t in keys[at:]).encode()
        dump.close()
        assert bytes(out) == "".join(new[t] for t in keys).encode(), case


class _Sink:
    def __init__(self, out: bytearray) -> None:
        self.out = out

    def write(self, data: bytes) -> int:
        self.out += data
        return len(data)


def test_a_whole_walk_keeps_the_dumps_chunks_and_a_patch_none(tmp_path) -> None:
    """Decision 0071: a whole walk keeps each subject's chunk, in the order of the
    subjects' texts, in a file that holds exactly the sorted N-Triples dump (what the
    render copies instead of formatting again); a patched walk keeps none."""
    cache = _cache(tmp_path)
    graph = _graph()
    first = kept_table(graph, cache, None, SCHEMES)
    chunks = first.chunks
    assert chunks is not None and chunks.fd is not None
    assert (
        chunks.texts == sorted(first.table.digests) == [first.table.memo[s] for s in chunks.order]
    )
    data = os.pread(chunks.fd, sum(chunks.sizes) + 1, 0)
    assert data.decode() == to_ntriples(graph) and len(chunks.sizes) == len(chunks.texts)
    whole = table(graph).digests
    assert first.table.digests == whole
    fd = chunks.take()  # the taker closes it; the table's object no longer does
    assert fd is not None and chunks.take() is None
    os.close(fd)
    change = Change(first.token, "t2", subjects=frozenset({f"<{EX}p3>"}))
    assert kept_table(graph, cache, change, SCHEMES).chunks is None


def test_chunks_a_file_cannot_take_are_given_up(tmp_path, monkeypatch) -> None:
    """A temporary file that refuses the chunks (no room), or none at all: the walk
    digests the same and keeps no chunks (the dump formats them again)."""
    from kg.graph import delta

    refusing = lambda: open(os.devnull, "rb")  # noqa: E731, SIM115 (a write fails: EBADF)
    for made in (refusing, _no_temporary_folder):
        monkeypatch.setattr(delta.tempfile, "TemporaryFile", made)
        found = kept_table(_graph(), _cache(tmp_path), None, SCHEMES)
        assert found.chunks is None and found.table.digests == table(_graph()).digests


def _no_temporary_folder() -> object:
    raise FileNotFoundError(2, "No usable temporary directory found")
