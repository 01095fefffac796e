"""The shortcuts of the load and resolve stages give the answers of the long way.

`yamlsafe` skips its walk for anchors, aliases and tags when a file has no `&` and no `!`
byte; `identity` computes difflib's quick upper bounds without a SequenceMatcher. Both
are checked against the long way: every YAML file of the repository and generated
documents for the first, generated strings for the second.
"""

from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from kg.ingest import yamlsafe
from kg.ingest.load import load_dataset
from kg.ingest.share import _names
from kg.model import PartialDate, Present, Source
from kg.resolve.identity import NEAR_MISS_RATIO, _quick_ratios_below

ROOT = Path(__file__).resolve().parent.parent
REPO_YAML = sorted(
    p
    for folder in ("data", "tests/fixtures", "kg/ingest/starter")
    for pattern in ("*.yaml", "*.yml")
    for p in (ROOT / folder).rglob(pattern)
)


def _walked(data: bytes) -> str:
    """What node_from_bytes answers when it always walks the tree (the long way)."""
    node = yamlsafe._compose(data, "x.yaml")
    assert node is not None
    try:
        yamlsafe._check_tree(node, "x.yaml")
    except InputError as exc:
        return str(exc)
    return "plain"


def _loaded(data: bytes) -> str:
    try:
        yamlsafe.node_from_bytes(data, "x.yaml")
    except InputError as exc:
        return str(exc)
    return "plain"


def test_the_repository_has_yaml_files_to_check():
    assert len(REPO_YAML) >= 15  # data/, the test fixtures and the starter project


@pytest.mark.parametrize("path", REPO_YAML, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_of_the_repository_gets_the_long_way_s_answer(path):
    data = path.read_bytes()
    assert _loaded(data) == _walked(data) == "plain"


# pieces of YAML documents: scalars plain and quoted (some holding & or ! as text),
# anchors, aliases and tags of every form YAML has
SCALARS = st.sampled_from(
    ["a", "R&D", "'R&D'", '"Hi!"', "x", "2024", "~", "'!'", '"&x"', "b c", "A*"]
)
NODE_PREFIXES = st.sampled_from(
    ["", "", "", "&a ", "&b ", "!!str ", "!x ", "!<tag:yaml.org,2002:str> ", "! ", "!!map "]
)
ALIASES = st.sampled_from(["*a", "*b"])


@st.composite
def flow_nodes(draw, depth: int = 0) -> str:
    kind = draw(st.sampled_from(["scalar", "alias", "seq", "map"] if depth < 3 else ["scalar"]))
    if kind == "alias":
        return draw(ALIASES)
    prefix = draw(NODE_PREFIXES)
    if kind == "scalar":
        return prefix + draw(SCALARS)
    children = draw(st.lists(flow_nodes(depth + 1), max_size=3))
    if kind == "seq":
        return prefix + "[" + ", ".join(children) + "]"
    return prefix + "{" + ", ".join(f"k{i}: {v}" for i, v in enumerate(children)) + "}"


@st.composite
def documents(draw) -> bytes:
    lines = [f"k{i}: {draw(flow_nodes())}" for i in range(draw(st.integers(1, 4)))]
    return "\n".join(lines).encode() + b"\n"


def _composes(data: bytes) -> bool:
    try:
        return yamlsafe._compose(data, "x.yaml") is not None
    except InputError:  # a syntax error (an undefined alias, a tag on an alias ...)
        return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_generated_documents_get_the_long_way_s_answer(data):
    assume(_composes(data))
    assert _loaded(data) == _walked(data)
    if b"&" not in data and b"!" not in data:
        assert _walked(data) == "plain"


def test_the_generator_makes_both_kinds_of_documents():
    """The property above is not vacuous: documents with aliases and tags that compose
    are refused, others pass, whichever way they are checked."""
    refused = b"k0: &a x\nk1: [*a]\n"
    tagged = b"k0: !x a\n"
    text = b"k0: 'R&D!'\n"
    assert "aliases are not allowed" in _loaded(refused) == _walked(refused)
    assert "is not allowed" in _loaded(tagged) == _walked(tagged)
    assert _loaded(text) == _walked(text) == "plain"


@settings(max_examples=400, deadline=None)
@given(st.text("abcdeéz ", max_size=10), st.text("abcdeéz ", max_size=10))
def test_quick_ratio_bounds_are_difflib_s(a, b):
    matcher = difflib.SequenceMatcher(None, a, b)
    slow = matcher.real_quick_ratio() < NEAR_MISS_RATIO or matcher.quick_ratio() < NEAR_MISS_RATIO
    assert _quick_ratios_below(a, b) == slow


def _records(value, out: list) -> list:
    """Every record reachable from `value` (lists, dict values, record fields)."""
    if isinstance(value, list | tuple):
        for item in value:
            _records(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _records(item, out)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        out.append(value)
        for f in dataclasses.fields(value):
            _records(getattr(value, f.name), out)
    return out


ATOMS = (bool, int, PartialDate, Present, Source)


def test_shared_texts_are_one_object_and_skipped_fields_hold_no_text():
    data = load_dataset(ROOT / "data")
    records = _records([data.profiles, data.organizations, data.venues, data.people], [])
    assert len(records) > 500
    first: dict[str, str] = {}
    for record in records:
        names = _names(type(record))
        for f in dataclasses.fields(record):
            value = getattr(record, f.name)
            if f.name not in names:  # never looked at: must hold no text and no record
                assert value is None or isinstance(value, ATOMS)
                continue
            for text in value if isinstance(value, list) else [value]:
                if type(text) is str:
                    assert first.setdefault(text, text) is text
