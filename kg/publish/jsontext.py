"""`dumps`: the text of `json.dumps(value, ensure_ascii=False, indent=2)`, faster.

With `indent`, the standard library falls back to its pure-Python encoder, which spent
more time than everything else in rendering the per-person JSON-LD files. orjson (Rust)
writes exactly the same text for strings, integers, booleans, lists and dicts with
string keys (all that kg's writers emit) about 10x faster than a walk in Python.
Where orjson would fail or differ, the value goes through that walk (every string
encoded by the C encoder), so the text is still json.dumps's:

- orjson refuses lone surrogates, integers beyond 64 bits and non-string keys;
- orjson writes NaN and infinities as `null`: text with a `null` is redone.

One documented difference: a finite float is written by orjson in its shortest form
without `+` in the exponent (`1e16` where json.dumps writes `1e+16`, `0.00001` for
`1e-05`): the same number, other characters. kg's writers emit no floats (numbers are
`xsd:integer` values), and finding float tokens in the text costs as much as the walk.
Tests check `dumps` against `json.dumps` on arbitrary values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from json.encoder import encode_basestring

import orjson

from kg.display import BIDI_CONTROLS

_PADS = ["\n" + "  " * depth for depth in range(64)]


def dumps(value: object, depth: int = 0) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=2)` for JSON-shaped values (finite
    floats in orjson's shortest form), but with bidi controls as `\\u` escapes (the same
    string to a parser; never raw in a file someone opens); with `depth`, the text as
    it appears nested that many levels deep."""
    text = _dumps(value, depth)
    return _BIDI.sub(_escape, text) if _BIDI.search(text) else text


_BIDI = re.compile(f"[{BIDI_CONTROLS}]")


def string(text: str) -> str:
    """`dumps(text)` of a string, without orjson's round trip."""
    found = encode_basestring(text)
    return _BIDI.sub(_escape, found) if _BIDI.search(found) else found


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def _dumps(value: object, depth: int) -> str:
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        text = None
    if text is not None and "null" not in text:
        return text.replace("\n", _pad(depth)) if depth else text
    parts: list[str] = []
    _emit(value, depth, parts)
    return "".join(parts)


def _emit(value: object, depth: int, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif isinstance(value, dict):
        _emit_items(value.items(), bool(value), "{}", depth, out)
    elif isinstance(value, list | tuple):
        _emit_items(((None, v) for v in value), bool(value), "[]", depth, out)
    else:
        out.append(_scalar(value))


def _emit_items(
    items: Iterable[tuple[object, object]],
    nonempty: bool,
    brackets: str,
    depth: int,
    out: list[str],
) -> None:
    """An object's (key, value) pairs or an array's (None, value) pairs, one per line."""
    if not nonempty:
        out.append(brackets)
        return
    inner = _pad(depth + 1)
    out.append(brackets[0])
    first = True
    for key, item in items:
        out.append(inner if first else "," + inner)
        first = False
        if key is not None or brackets == "{}":
            out.append(encode_basestring(_key(key)) + ": ")
        _emit(item, depth + 1, out)
    out.append(_pad(depth) + brackets[1])


def _pad(depth: int) -> str:
    return _PADS[depth] if depth < len(_PADS) else "\n" + "  " * depth


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    return _scalar(key)


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        import json

        return json.dumps(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
