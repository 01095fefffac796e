"""`dumps`: the exact text of `json.dumps(value, ensure_ascii=False, indent=2)`, faster.

With `indent`, the standard library falls back to its pure-Python encoder, which spent
more time than everything else in rendering the per-person JSON-LD files. This walks
containers in Python but encodes every string with the C encoder, and a test checks it
against `json.dumps` on arbitrary values.
"""

from __future__ import annotations

from json.encoder import encode_basestring

_PADS = ["\n" + "  " * depth for depth in range(64)]


def dumps(value: object) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=2)` for JSON-shaped values."""
    parts: list[str] = []
    _emit(value, 0, parts)
    return "".join(parts)


def _emit(value: object, depth: int, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif isinstance(value, dict):
        _emit_dict(value, depth, out)
    elif isinstance(value, list | tuple):
        _emit_list(value, depth, out)
    else:
        out.append(_scalar(value))


def _emit_dict(value: dict, depth: int, out: list[str]) -> None:
    if not value:
        out.append("{}")
        return
    inner = _pad(depth + 1)
    out.append("{")
    first = True
    for key, item in value.items():
        out.append(inner if first else "," + inner)
        first = False
        out.append(encode_basestring(_key(key)))
        out.append(": ")
        _emit(item, depth + 1, out)
    out.append(_pad(depth) + "}")


def _emit_list(value: list | tuple, depth: int, out: list[str]) -> None:
    if not value:
        out.append("[]")
        return
    inner = _pad(depth + 1)
    out.append("[")
    first = True
    for item in value:
        out.append(inner if first else "," + inner)
        first = False
        _emit(item, depth + 1, out)
    out.append(_pad(depth) + "]")


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
