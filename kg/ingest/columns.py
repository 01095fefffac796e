"""The loader's snapshot in columns: its records rebuilt without a Python call per record.

Unpickling a snapshot of 10k profiles makes 1.7 million records, each through a
Python `__setstate__` (decision 0046): most of a rebuild's load. Here the records of
`kg.model` are kept by class, each field as one column of plain values (texts, numbers,
tuples of them), of indices of other records, or of tuples of such indices, the whole
written with `marshal`. Reading makes every record of a class with one `map` of
`object.__new__` and sets each field over all of them with one `map` of
`object.__setattr__` (both run in C: a frozen record is set as its own `__init__` sets
it), so only values that are neither plain nor records (few) go through Python.

Invariant: `decode(encode(v))` equals `v`, with the same types (tuple, list, dict,
record class) and the same sharing of texts (`marshal` writes an object referenced
twice once); `encode` gives None for a value it cannot keep this way (any type but the
builtins below and `kg.model`'s dataclasses), and `decode` gives None for bytes that
are not such an encoding of this code's classes (the caller then reads nothing).
"""

from __future__ import annotations

import dataclasses
import marshal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice, repeat
from operator import attrgetter
from typing import Any

from kg import model

VERSION = "kg snapshot columns 1"
_ATOMS = frozenset({str, int, bool, float, bytes, type(None)})
_CONTAINERS = (tuple, list)


class _Refused(Exception):
    """A value this form cannot keep (the caller pickles it instead)."""


def _classes() -> dict[str, type]:
    found = {}
    for name, cls in vars(model).items():
        record = isinstance(cls, type) and dataclasses.is_dataclass(cls)
        if record and cls.__module__ == model.__name__ and "__slots__" in vars(cls):
            found[name] = cls
    return found


_CLASSES = _classes()
_FIELDS = {name: tuple(f.name for f in dataclasses.fields(cls)) for name, cls in _CLASSES.items()}


def _getter(fields: tuple[str, ...]) -> Callable[[Any], Iterable[Any]]:
    """A record's fields' values, in one call (attrgetter of one name gives the value)."""
    if len(fields) > 1:
        return attrgetter(*fields)
    return lambda record: tuple(getattr(record, f) for f in fields)


_GETTERS = {name: _getter(fields) for name, fields in _FIELDS.items()}


# ------------------------------------------------------------------ writing


class _Encoder:
    def __init__(self) -> None:
        self.index: dict[int, int] = {}  # id of a record -> its index (class by class)
        self.by_class: dict[str, list[Any]] = {}  # class name -> its records, in order

    def discover(self, value: Any) -> None:
        """Every record reachable from `value` (each once, shared ones too), by class,
        then numbered class after class (so a reader makes them as one list)."""
        seen: set[int] = set()
        todo = [value]
        pop, push, atoms = todo.pop, todo.extend, _ATOMS
        while todo:
            item = pop()
            kind = type(item)
            if kind in atoms:
                continue
            if kind is tuple or kind is list:
                push(item)
            elif kind is dict:
                push(item.keys())
                push(item.values())
            elif id(item) not in seen:
                name = kind.__name__
                if _CLASSES.get(name) is not kind:
                    raise _Refused(name)
                seen.add(id(item))
                self.by_class.setdefault(name, []).append(item)
                push(_GETTERS[name](item))  # its fields' values, in one call
        for records in self.by_class.values():
            first = len(self.index)
            numbers = range(first, first + len(records))
            self.index.update(zip(map(id, records), numbers, strict=True))

    def column(self, values: list[Any]) -> tuple:
        """One field's values over a class's records, in the cheapest form to read."""
        kinds = set(map(type, values))
        if kinds <= _ATOMS:
            return ("A", values)
        records = {k for k in kinds if _CLASSES.get(k.__name__) is k}
        if kinds <= records:
            return ("R", list(map(self.index.__getitem__, map(id, values))))
        if kinds <= records | {type(None)}:
            return ("R", [-1 if v is None else self.index[id(v)] for v in values])
        if len(kinds) == 1 and kinds <= {tuple, list}:
            inner = set(map(type, chain.from_iterable(values)))
            if inner <= _ATOMS:
                return ("A", values)
            if all(_CLASSES.get(k.__name__) is k for k in inner):
                flat = list(map(self.index.__getitem__, map(id, chain.from_iterable(values))))
                return ("T" if tuple in kinds else "L", flat, list(map(len, values)))
        return ("X", [self.generic(v) for v in values])

    def generic(self, value: Any) -> Any:
        """Any value, tagged: ("a", a plain value), ("r", index), ("t"|"l", items), ("d",
        keys and values alternating), ("D", keys, values) for a dict of plain ones."""
        kind = type(value)
        if kind in _ATOMS:
            return ("a", value)
        if kind is tuple or kind is list:
            if set(map(type, value)) <= _ATOMS:
                return ("a", value)  # plain: kept as it is
            return ("t" if kind is tuple else "l", [self.generic(v) for v in value])
        if kind is dict:
            if set(map(type, value)) | set(map(type, value.values())) <= _ATOMS:
                return ("D", list(value), list(value.values()))
            return ("d", [self.generic(x) for kv in value.items() for x in kv])
        return ("r", self.index[id(value)])


def encode(value: Any) -> bytes | None:
    """`value` as columns (None: it holds something this form does not keep)."""
    found = _Encoder()
    try:
        found.discover(value)
        classes = []
        for name, records in found.by_class.items():
            columns = [found.column(list(map(attrgetter(f), records))) for f in _FIELDS[name]]
            classes.append((name, _FIELDS[name], len(records), columns))
        top = found.generic(value)
        return marshal.dumps((VERSION, classes, top))
    except (_Refused, RecursionError, ValueError, KeyError):  # (marshal: nested too deeply)
        return None


# ------------------------------------------------------------------ reading


def decode(data: bytes) -> Any | None:
    """The value `encode` kept in `data`; None when `data` is not a well-formed encoding
    of this code's classes (another version, fields renamed, short columns)."""
    try:
        version, classes, top = marshal.loads(data)
        if version != VERSION:
            return None
        made: list[list[Any]] = []
        for name, fields, count, _ in classes:
            if tuple(fields) != _FIELDS[name]:
                return None
            made.append(list(map(object.__new__, repeat(_CLASSES[name], count))))
        objects = [*chain.from_iterable(made), None]  # the last: None (index -1)
        for i, new in enumerate(made):
            name, fields, _, columns = classes[i]
            classes[i] = None  # each class's columns freed once read (a lower peak)
            if len(columns) != len(fields):
                return None
            slots = vars(_CLASSES[name])
            for field, column in zip(fields, columns, strict=True):
                values = _values(column, objects, len(new))
                _run(map(slots[field].__set__, new, values))  # the slot's own setter
        return _generic(top, objects)
    except (ValueError, TypeError, KeyError, IndexError, EOFError, RecursionError):
        return None


def _run(calls: Iterable[Any]) -> None:
    deque(calls, maxlen=0)


def _values(column: tuple, objects: list[Any], count: int) -> Iterable[Any]:
    """One column's values, checked to be `count` of them."""
    kind, values = column[0], column[1]
    if len(values) != count and kind != "T" and kind != "L":
        raise ValueError("a short column")
    if kind == "A":
        return values
    if kind == "R":
        return map(objects.__getitem__, values)
    if kind == "T" or kind == "L":
        lengths = column[2]
        if len(lengths) != count or sum(lengths) != len(values):
            raise ValueError("a short column")
        items: Iterator[Any] = map(objects.__getitem__, values)
        make = tuple if kind == "T" else list
        return [make(islice(items, n)) for n in lengths]
    if kind == "X":
        return [_generic(v, objects) for v in values]
    raise ValueError(kind)


def _generic(tagged: Any, objects: list[Any]) -> Any:
    tag, value = tagged[0], tagged[1]
    if tag == "a":
        return value
    if tag == "D":  # a dict of plain keys and values
        return dict(zip(value, tagged[2], strict=True))
    if tag == "r":
        if value < 0:
            raise IndexError(value)
        return objects[value]
    if tag == "t":
        return tuple(_generic(v, objects) for v in value)
    if tag == "l":
        return [_generic(v, objects) for v in value]
    if tag == "d":
        items = [_generic(v, objects) for v in value]
        return dict(zip(items[::2], items[1::2], strict=True))
    raise ValueError(tag)
