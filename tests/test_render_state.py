"""The render state's whole-graph products made in proportion (decision 0061): each equals
the one the whole walk makes, on the seed graph and on subjects chosen to break a
shortcut (IRIs that are prefixes of others, nested things, blank nodes, IRIs outside
the base, the base itself)."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest
from conftest import replace_first, seed_project
from rdflib import BNode, Literal, URIRef
from test_incremental import _profiles

from kg.config import load_config
from kg.graph.triples import Triples
from kg.pipeline import build, output_manifest
from kg.publish import dumpfile
from kg.publish.export import previous_tree
from kg.publish.fingerprint import SubjectChunks
from kg.publish.subjectset import Layout, made_whole, subject_layout

BASE = "https://example.org/"
NAME = URIRef("http://schema.org/name")


def _layout(graph: Triples, base: str) -> Layout:
    chunks = SubjectChunks(graph)
    found = subject_layout(chunks.order, chunks.texts, base, chunks.under)
    # each canonical subject's place in the texts' order: where the dump has its chunk
    assert found.at is not None and [chunks.order[i] for i in found.at] == found.canonical
    return found


def _assert_same(found: Layout, whole: Layout) -> None:
    assert found.tops == whole.tops
    assert found.pages == whole.pages
    assert found.canonical == whole.canonical
    assert list(found.owned) == list(whole.owned)
    for top, nodes in whole.owned.items():  # each list: the thing first, then a set
        assert found.owned[top][0] == nodes[0] == top
        assert sorted(found.owned[top]) == sorted(nodes)


def test_layout_equals_the_whole_walk_on_the_seed_graph(seed_build, repo_config):
    graph = seed_build[1].triples
    found, whole = _layout(graph, repo_config.base_iri), made_whole(graph, repo_config.base_iri)
    _assert_same(found, whole)
    assert len(found.tops) > 20 and len(found.canonical) == len(set(graph.subjects()))


def test_layout_equals_the_whole_walk_where_text_and_iri_order_differ():
    paths = [
        "a",  # `<…a/b>` sorts before `<…a>` by text, after it by IRI
        "a/b",
        "a/b/c",
        "a-b",  # `-` and `.` sort before `/` and `>`
        "a.b/1",
        "a0",
        "x/y/z",  # `x` is no subject: `x/y` is the thing, `x/y/z` its own
        "x/y",
        "x/q/r",  # no ancestor a subject: a thing of its own
        "topic/t",
        "topic/t-2",
        "topic/t/2024",
        "été/1",  # beyond ASCII
        "zz~",
        "",  # the base itself: not a thing
    ]
    subjects = [URIRef(BASE + p) for p in paths]
    subjects += [URIRef("https://other.example/a"), URIRef(BASE[:-1]), URIRef(BASE + "kg")]
    subjects += [BNode("b1"), BNode("a0"), BNode("z")]
    graph = Triples((s, NAME, Literal(str(i))) for i, s in enumerate(reversed(subjects)))
    found = _layout(graph, BASE)
    _assert_same(found, made_whole(graph, BASE))
    # by hand: the things with a page, and what `a` and `x/y` own
    assert [str(t)[len(BASE) :] for t in found.tops] == [
        "a",
        "a-b",
        "a.b/1",
        "a0",
        "kg",
        "topic/t",
        "topic/t-2",
        "x/q/r",
        "x/y",
        "zz~",
        "été/1",
    ]
    assert sorted(map(str, found.owned[URIRef(BASE + "a")])) == [
        BASE + p for p in ("a", "a/b", "a/b/c")
    ]
    assert found.owned[URIRef(BASE + "x/y")] == [URIRef(BASE + "x/y"), URIRef(BASE + "x/y/z")]
    assert found.canonical[:3] == [BNode("a0"), BNode("b1"), BNode("z")]
    # under another base, `{BASE}kg` (the base without its `/`) is no thing's ancestor
    _assert_same(_layout(graph, BASE + "kg/"), made_whole(graph, BASE + "kg/"))
    assert _layout(graph, BASE + "kg/").tops == []


# ---------------------------------------------------------------- the dump (kg.publish.dumpfile)


def _hash_list(dump: bytes) -> str:
    """The dump's digest by hand: blake2b-16 of each subject's run of lines, in order,
    then blake2b-16 of those digests (the module's definition)."""
    chunks: list[list[bytes]] = []
    for line in dump.splitlines(keepends=True):
        subject = line.split(b" ", 1)[0]
        if not chunks or chunks[-1][0].split(b" ", 1)[0] != subject:
            chunks.append([])
        chunks[-1].append(line)
    digests = b"".join(hashlib.blake2b(b"".join(c), digest_size=16).digest() for c in chunks)
    return "chunks:" + hashlib.blake2b(digests, digest_size=16).hexdigest()


@pytest.fixture(scope="module")
def edited_twice(tmp_path_factory) -> tuple[Path, list[tuple[str, int, int]], tuple]:
    """The seed project built cold, then after a title edit: the stamp digest of each
    build's graph.nt and how many bytes the second copied from the first's; the edit's
    graph.ttl: its stamp digest, the bytes copied from kept ranges, its size."""
    root = seed_project(tmp_path_factory.mktemp("dump") / "project")
    found, copied, ranges = [], [], []
    real = os.copy_file_range

    def spy(src: int, dst: int, count: int, *args: int) -> int:
        done = real(src, dst, count, *args)
        to = os.readlink(f"/proc/self/fd/{dst}")  # (copy_file_range is Linux's)
        (copied if to.endswith("graph.nt") else ranges).append((to.rpartition("/")[2], done))
        return done

    for edit in (
        lambda: None,
        lambda: replace_first(_profiles(root)[0], r'^(\s*- title: "?)', r"\1Revised: "),
    ):
        edit()
        ranges.clear()
        config = load_config(root)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(dumpfile.os, "copy_file_range", spy)
            assert build(config, root / "dist").published
        previous = previous_tree(root / "dist", output_manifest(config, root / "dist"))
        assert previous is not None
        size = (root / "dist" / "graph.nt").stat().st_size
        found.append((previous[1]["graph.nt"][0], sum(n for _, n in copied), size))
        copied.clear()
    ttl = (root / "dist" / "graph.ttl").stat().st_size
    stamp = previous[1]["graph.ttl"][0]
    return root, found, (stamp, sum(n for name, n in ranges if name == "graph.ttl"), ttl)


def test_the_dump_digest_is_the_hash_list_of_its_bytes(edited_twice):
    root, found, _ = edited_twice
    (cold, cold_copied, cold_size), (edit, edit_copied, _) = found
    dump = (root / "dist" / "graph.nt").read_bytes()
    assert edit == _hash_list(dump) != cold
    assert cold_copied == cold_size  # every chunk, as the digest walk kept it (0071)
    assert 0 < edit_copied < len(dump)  # the unchanged runs, copied by the kernel


def test_the_turtle_dump_copies_its_kept_ranges_and_names_them_in_its_digest(edited_twice):
    """The Turtle dump after an edit (decision 0079): the ranges, kept in their files,
    copied by the kernel (all but the head and the separators), the digest made of
    what the ranges are made of (never a content digest: nothing links the dump in
    place of a text)."""
    _, _, (stamp, copied, size) = edited_twice
    assert stamp.startswith(dumpfile.RANGES_PREFIX)
    assert size * 0.9 < copied < size


def test_dump_sink_copies_exactly_and_fails_short(tmp_path, monkeypatch):
    source = tmp_path / "old"
    source.write_bytes(b"".join(b"line %d\n" % i for i in range(5000)))

    def cannot(*args: int) -> int:  # another file system on an old kernel
        raise OSError(errno.EXDEV, "cross-device")

    for kernel in ("yes", "no", "refused"):
        if kernel == "refused":
            monkeypatch.setattr(dumpfile.os, "copy_file_range", cannot)
        out = tmp_path / f"new-{kernel}"
        fd, old = os.open(out, os.O_WRONLY | os.O_CREAT), os.open(source, os.O_RDONLY)
        sink = dumpfile.DumpSink(fd)
        sink.kernel = kernel != "no"
        sink.write(b"head\n")
        sink.copy(old, 7, 20_000)
        assert sink.kernel == (kernel == "yes")  # a refusal: read and written from then on
        sink.write(b"tail\n")
        sink.flush()
        with pytest.raises(OSError, match="came out short"):
            sink.copy(old, source.stat().st_size - 3, 10)
        os.close(fd), os.close(old)
        assert out.read_bytes()[:20_010] == b"head\n" + source.read_bytes()[7:20_007] + b"tail\n"
