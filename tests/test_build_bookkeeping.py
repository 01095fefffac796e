"""The render cache's packs and the writer's stamps (decision 0040): entries packed in
few signed files, tampered packs ignored, unused entries dropped; a file's bytes digested
once, the stamp the writer records is the render cache's digest."""

from __future__ import annotations

import hashlib
import os

from kg.cache import PACK_DIGITS, SignedCache, digest
from kg.publish.export import Encoded, encoded, previous_tree, write_outputs


def _keys(n: int) -> list[str]:
    return [digest("entry", str(i)) for i in range(n)]


def test_packed_entries_round_trip_in_few_files(tmp_path):
    secret = b"s" * 32
    cache = SignedCache(tmp_path / "render", secret=secret)
    keys = _keys(300)
    for i, key in enumerate(keys):
        cache.put_packed(key, {"site/x.html": f"d{i}"})
    assert not (tmp_path / "render").exists()  # nothing written before write_packs
    packs = cache.write_packs(cache.take_pending(), set(keys))
    assert packs == {key[:PACK_DIGITS] for key in keys}
    files = [p for p in (tmp_path / "render").rglob("*") if p.is_file()]
    assert len(files) == len(packs) < len(keys)
    again = SignedCache(tmp_path / "render", secret=secret)
    assert [again.get_packed(key) for key in keys] == [{"site/x.html": f"d{i}"} for i in range(300)]
    assert again.get_packed(digest("never put")) is None


def test_write_packs_keeps_used_entries_and_drops_the_rest(tmp_path):
    secret = b"s" * 32
    first = SignedCache(tmp_path / "render", secret=secret)
    old = _keys(40)
    for key in old:
        first.put_packed(key, key[:5])
    first.prune(first.write_packs({}, set(old)) | set(old))
    second = SignedCache(tmp_path / "render", secret=secret)
    kept, dropped = old[:20], old[20:]
    assert all(second.get_packed(key) == key[:5] for key in kept)
    new = digest("new")
    second.put_packed(new, "fresh")
    second.prune(second.write_packs({}, second.used) | second.used)
    third = SignedCache(tmp_path / "render", secret=secret)
    assert [third.get_packed(k) for k in kept] == [k[:5] for k in kept]
    assert third.get_packed(new) == "fresh"
    assert all(third.get_packed(key) is None for key in dropped)
    names = {p.name for p in (tmp_path / "render").rglob("*") if p.is_file()}
    assert names == {k[:PACK_DIGITS] for k in [*kept, new]}


def test_a_tampered_or_foreign_pack_is_a_miss(tmp_path):
    secret = b"s" * 32
    cache = SignedCache(tmp_path / "render", secret=secret)
    key = digest("one")
    cache.put_packed(key, {"a": "b"})
    cache.write_packs(cache.take_pending(), {key})
    pack = tmp_path / "render" / key[:2] / key[:PACK_DIGITS]
    data = bytearray(pack.read_bytes())
    data[-3] ^= 1
    pack.write_bytes(bytes(data))
    assert SignedCache(tmp_path / "render", secret=secret).get_packed(key) is None
    for cut in (1, 40, 70, len(data) - 1):  # a truncated pack: misses, no error
        pack.write_bytes(bytes(data[:cut]))
        assert SignedCache(tmp_path / "render", secret=secret).get_packed(key) is None
    foreign = SignedCache(tmp_path / "render", secret=b"other" * 8)
    foreign.put(key[:PACK_DIGITS], {key: b"not a pickle of ours"})
    assert SignedCache(tmp_path / "render", secret=secret).get_packed(key) is None


def test_an_existing_entry_is_replaced_never_written_through(tmp_path):
    secret = b"s" * 32
    cache = SignedCache(tmp_path / "c", secret=secret)
    key = digest("k")
    cache.put(key, 1)
    entry = tmp_path / "c" / key[:2] / key
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"keep me")
    entry.unlink()
    os.link(elsewhere, entry)  # a planted hard link where the entry was
    cache.put(key, 2)
    assert elsewhere.read_bytes() == b"keep me"
    assert SignedCache(tmp_path / "c", secret=secret).get(key) == 2


def test_encoded_files_are_digested_once_and_stamped_with_that_digest(tmp_path):
    shared = "<p>the same text</p>\n"
    files = encoded({"site/a.html": shared, "people/a.html": shared, "site/b.ttl": "b\n"})
    assert files["site/a.html"] is files["people/a.html"]
    want = hashlib.blake2b(shared.encode(), digest_size=16).hexdigest()
    assert (
        files["site/a.html"] == Encoded(shared.encode(), want)
        or files["site/a.html"].digest == want
    )
    manifest = tmp_path / ".kg-cache" / "outputs" / digest("dist")
    write_outputs(tmp_path / "dist", files, manifest)
    out = tmp_path / "dist"
    assert (out / "site/a.html").read_text() == shared
    assert (out / "site/b.ttl").read_bytes() == b"b\n"
    assert os.path.samefile(out / "site/a.html", out / "people/a.html")  # one file, linked
    previous = previous_tree(out, manifest)
    assert previous is not None
    assert previous[1]["site/a.html"][0] == want
    assert previous[1]["site/b.ttl"][0] == hashlib.blake2b(b"b\n", digest_size=16).hexdigest()


def _keys_of(root):
    from kg import scheme
    from kg.cache import SignedCache
    from kg.config import load_config
    from kg.pipeline import RENDER_CACHE_DIR, build_graph
    from kg.publish import render
    from kg.publish.export import person_nodes

    config = load_config(root)
    resolution, mapped = build_graph(config, cache=False)
    cache = SignedCache(config.root / RENDER_CACHE_DIR)  # the keys are made for a cache
    state = render._make_state(config, resolution, mapped.triples, cache, None, None)
    people = {}
    for profile in resolution.dataset.profiles:
        person = render._person(config, profile.slug)
        owned = person_nodes(state.graph, person, state.owned[person])
        works = state.site.publications_of(profile.slug)
        people[profile.slug] = state.prints.person(profile, owned, works)
    pubs = {}
    for key, pub in resolution.publications.items():
        thing = scheme.publication(config.base_iri, key)
        thing = next(t for t in state.things if str(t) == thing)
        pubs[key] = state.prints.thing(thing, set(state.owned[thing]), pub)
    return resolution, people, pubs


def test_fingerprints_change_with_what_an_item_shows_only(tmp_path):
    """A publication's title, edited in one profile: the keys of that publication and of
    its authors change; the keys of people and publications it does not touch do not."""
    import re

    from conftest import seed_project

    root = seed_project(tmp_path / "project")
    _, people, pubs = _keys_of(root)
    assert len(set(people.values())) == len(people)  # one key per item
    profile = sorted((root / "data" / "profiles").glob("*.yaml"))[0]
    text = profile.read_text(encoding="utf-8")
    title = re.search(r'^\s*- title: "?([^"\n]+)', text, flags=re.M).group(1)
    profile.write_text(text.replace(title, "Revised " + title, 1), encoding="utf-8")
    after, people2, pubs2 = _keys_of(root)
    edited = next(k for k, p in after.publications.items() if p.title.startswith("Revised "))
    authors = {slot.person for slot in after.publications[edited].authors if slot.person}
    assert pubs2[edited] != pubs.get(edited)
    changed = {slug for slug in people if people[slug] != people2[slug]}
    profiled = set(people) & authors
    assert profiled and profiled <= changed
    untouched = [s for s in people if s not in authors and s not in changed]
    assert untouched  # a person with no link to the publication keeps their key
    others = [k for k in pubs if k != edited and k in pubs2]
    assert others and sum(pubs[k] == pubs2[k] for k in others) > len(others) // 2


def test_a_cache_keeps_few_folders_open_under_a_low_descriptor_limit(tmp_path, monkeypatch):
    import kg.cache

    monkeypatch.setattr(kg.cache, "_shard_descriptors", lambda: 2)
    cache = SignedCache(tmp_path / "c", secret=b"s" * 32)
    keys = _keys(60)  # in many shards
    for key in keys:
        cache.put(key, key[-4:])
        assert len(cache._shards) <= 2
    assert len({key[:2] for key in keys}) > 2
    assert [SignedCache(tmp_path / "c", secret=b"s" * 32).get(k) for k in keys] == [
        k[-4:] for k in keys
    ]
