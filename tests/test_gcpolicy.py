"""`rarely_collecting` raises the collector's young threshold and restores it, whatever
happens inside; cycles made inside are still freed."""

from __future__ import annotations

import gc
import weakref

import pytest

from kg.gcpolicy import YOUNG_THRESHOLD, rarely_collecting


class Node:
    pass


def test_the_threshold_is_raised_inside_and_restored_after_an_error():
    before = gc.get_threshold()
    with pytest.raises(ValueError), rarely_collecting():
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        assert gc.get_threshold()[1:] == before[1:]
        raise ValueError
    assert gc.get_threshold() == before


def test_cycles_made_inside_are_still_collected():
    with rarely_collecting():
        assert gc.isenabled()
        a, b = Node(), Node()
        a.other, b.other = b, a  # type: ignore[attr-defined]
        alive = weakref.ref(a)
        del a, b
        gc.collect(0)  # a young pass, as the raised threshold still triggers
    assert alive() is None
