"""One object per distinct text across the loaded records.

Every file is parsed (or read back from the parse cache) on its own, so a title, a
venue or a co-author's name listed in many profiles is a separate string in each: in
the synthetic 10k corpus, ten copies of every text on average. `share_texts` replaces
each text field (and each text in a list field) of a record, and of the records it
holds, with the first equal string seen, so equal texts are one object. Values never
change, only which object holds them: records compare, hash and pickle as before.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable
from typing import Any

from kg.model import PartialDate, Present, Source

_LEAVES = (PartialDate, Source)  # no text worth sharing (a Source's file is shared already)


def share_texts(records: Iterable[Any], table: dict[str, str] | None = None) -> dict[str, str]:
    """Make equal texts in `records` one object (records are changed in place, before
    anything else holds them); returns the table of texts, to share with more records."""
    table = {} if table is None else table
    for record in records:
        _share(record, table)
    return table


_NAMES: dict[type, tuple[str, ...]] = {}
_RECORDS: dict[type, bool] = {}


def _names(cls: type) -> tuple[str, ...]:
    """The fields of `cls` that can hold a text or a record: not those declared as only
    flags, numbers, dates or a Source (the loader gives a field a value of its type)."""
    found = _NAMES.get(cls)
    if found is None:
        atomic = _atomic_fields(cls)
        found = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.name not in atomic)
    return found


_ATOMS = (bool, int, type(None), PartialDate, Present, Source)


def _atomic_fields(cls: type) -> set[str]:
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):  # a hint that does not evaluate: look at every field
        return set()
    atomic = set()
    for name, hint in hints.items():
        union = typing.get_origin(hint) in (typing.Union, types.UnionType)
        if all(arg in _ATOMS for arg in (typing.get_args(hint) if union else (hint,))):
            atomic.add(name)
    return atomic


def _share(record: Any, table: dict[str, str]) -> None:
    for name in _names(type(record)):
        value = getattr(record, name)
        kind = type(value)
        if kind is str:
            shared = table.setdefault(value, value)
            if shared is not value:
                object.__setattr__(record, name, shared)  # a frozen record, while loading
        elif kind is list:
            if value:
                _share_items(value, table)
        elif kind is dict:
            for item in value.values():
                if _is_record(type(item)):
                    _share(item, table)
        elif value is not None and _is_record(kind):
            _share(value, table)


def _share_items(values: list, table: dict[str, str]) -> None:
    for i, item in enumerate(values):
        if type(item) is str:
            values[i] = table.setdefault(item, item)
        elif _is_record(type(item)):
            _share(item, table)


def _is_record(kind: type) -> bool:
    found = _RECORDS.get(kind)
    if found is None:
        found = _RECORDS[kind] = dataclasses.is_dataclass(kind) and not issubclass(kind, _LEAVES)
    return found
