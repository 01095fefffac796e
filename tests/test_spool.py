"""kg.spool: records kept on disk come back exactly, in order, once; the file has no
name (decision 0067)."""

from __future__ import annotations

import os
import pickle

from kg.spool import Spool


def test_records_come_back_in_order_once_and_leave_no_file(tmp_path):
    spool = Spool(tmp_path)
    records = [({"k": b"\x00" * 300}, {"p/a": (1, "x")}, {}), b"", {"big": "y" * 200_000}]
    spool.add(records[0])
    spool.add_pickled(pickle.dumps(records[1]))  # as a worker sends it
    spool.add(records[2])
    assert spool.count == 3
    assert os.listdir(tmp_path) == []  # unnamed: nothing to find, follow or leave behind
    assert list(spool.drain()) == records
    assert list(spool.drain()) == [] and spool.count == 0  # once
    spool.add("again")  # usable again after a drain
    assert list(spool.drain()) == ["again"]


def test_close_drops_what_is_left_and_an_empty_spool_drains_nothing(tmp_path):
    spool = Spool(tmp_path)
    assert list(spool.drain()) == []
    spool.add(1)
    spool.close()
    assert list(spool.drain()) == [] and spool.count == 0
    assert os.listdir(tmp_path) == []
