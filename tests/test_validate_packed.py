"""kg/validate/packed.py (decision 0077): a packed table answers as the dict of its
entries after any sequence of sets and removals, copies apart, and pickles back equal;
an ill-formed one does not load."""

from __future__ import annotations

import pickle
import random

import pytest

from kg.validate.packed import Packed, packed


def _value(rng: random.Random, fixed: bool) -> object:
    if fixed:
        return rng.randbytes(16)
    return tuple(f"http://x/{rng.randrange(50)}" for _ in range(rng.randrange(4)))


@pytest.mark.parametrize("fixed", [True, False])
def test_a_packed_table_answers_as_a_dict_through_changes_copies_and_pickling(fixed):
    rng = random.Random(77)
    expected = {f"<http://x/s{i}>": _value(rng, fixed) for i in range(300)}
    table = Packed(expected)
    assert table == expected and len(table) == 300
    copy = table.copy()
    for step in range(400):
        key = f"<http://x/s{rng.randrange(400)}>"
        if rng.random() < 0.4:
            assert table.pop(key, "none") == expected.pop(key, "none")
        else:
            table[key] = expected[key] = _value(rng, fixed)
        if step % 50 == 0:
            table = pickle.loads(pickle.dumps(table))  # repacked with the changes
        assert len(table) == len(expected) and (key in table) == (key in expected)
        assert table.get(key) == expected.get(key)
    assert table == expected and dict(table.items()) == expected
    assert pickle.loads(pickle.dumps(table)) == expected
    assert copy == Packed(copy) and len(copy) == 300  # the copy kept its own entries
    table.update({"<http://x/new>": _value(rng, fixed)})
    assert "<http://x/new>" in table and "<http://x/new>" not in copy


def test_an_ill_formed_packed_table_does_not_load_and_a_key_with_a_newline_is_not_packed():
    table = Packed({"<http://x/a>": b"1" * 16, "<http://x/b>": b"2" * 16})
    text, ends, width, values, value_ends = table.__getstate__()
    for bad in [
        (text, ends, width, values[:-1], value_ends),  # a value cut short
        (text + "\n<http://x/c>", ends, width, values, value_ends),  # a key too many
        (text, ends, 0, values, value_ends),  # pickled values without their ends
    ]:
        with pytest.raises(TypeError):
            Packed().__setstate__(bad)
    plain = {"<http://x/a>\n<http://x/b>": b"1" * 16}
    assert packed(plain) is plain
    assert packed(table) is table
