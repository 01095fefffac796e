"""JSON Schema and Markdown reference of the profile format, both generated from `kg.model`."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Union

from kg import model
from kg.load import FORMATS, SHORTHAND, _fields, _is_required
from kg.model import PartialDate, Present

SCHEMA_ID = "https://w3id.org/kg-profiles/profile.schema.json"
DATE_PATTERN = r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$"
REGISTRIES = {
    "organizations": model.Organization,
    "venues": model.Venue,
    "people": model.KnownPerson,
}


def _type_schema(hint: Any, meta: dict, defs: dict) -> dict:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        schemas = [_type_schema(a, meta, defs) for a in options]
        return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    if origin is list:
        return {"type": "array", "items": _type_schema(typing.get_args(hint)[0], meta, defs)}
    if origin is dict:
        key_type, value_type = typing.get_args(hint)
        schema = {"type": "object", "additionalProperties": _type_schema(value_type, {}, defs)}
        if key_type is int:
            schema["propertyNames"] = {"pattern": r"^\d{4}$"}
        return schema
    if hint is PartialDate:  # editors read an unquoted 2024 as a number
        text = {"type": "string", "pattern": DATE_PATTERN}
        return {"anyOf": [text, {"type": "integer", "minimum": 1000, "maximum": 9999}]}
    if hint is Present:
        return {"const": "present"}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        _record_schema(hint, defs)
        ref = {"$ref": f"#/$defs/{hint.__name__}"}
        if hint in SHORTHAND:
            return {"anyOf": [{"type": "string", "minLength": 1}, ref]}
        return ref
    return _scalar_schema(hint, meta)


def _scalar_schema(hint: Any, meta: dict) -> dict:
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    schema: dict = {"type": "string", "minLength": 1}
    if meta.get("choices"):
        schema["enum"] = list(meta["choices"])
    if meta.get("format"):
        schema["pattern"] = FORMATS[meta["format"]][0].pattern
    return schema


def _record_schema(cls: type, defs: dict) -> None:
    if cls.__name__ in defs:
        return
    defs[cls.__name__] = {}  # placeholder against recursion
    properties = {}
    required = []
    for name, (hint, fld) in _fields(cls).items():
        prop = _type_schema(hint, dict(fld.metadata), defs)
        prop = {**prop, "description": fld.metadata.get("doc", "")}
        properties[name] = prop
        if _is_required(fld):
            required.append(name)
    defs[cls.__name__] = {
        "type": "object",
        "description": (cls.__doc__ or "").strip().splitlines()[0],
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def profile_schema() -> dict:
    """The JSON Schema (draft 2020-12) of one `data/profiles/<slug>.yaml` file."""
    defs: dict = {}
    _record_schema(model.Profile, defs)
    root = defs.pop("Profile")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "kg researcher profile",
        **root,
        "$defs": dict(sorted(defs.items())),
    }


def registry_schema(name: str) -> dict:
    """The JSON Schema of `data/<name>.yaml`: a mapping from key to entry."""
    defs: dict = {}
    cls = REGISTRIES[name]
    _record_schema(cls, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"kg {name} registry",
        "type": "object",
        "propertyNames": {"pattern": FORMATS["key"][0].pattern},
        "additionalProperties": {"$ref": f"#/$defs/{cls.__name__}"},
        "$defs": dict(sorted(defs.items())),
    }


# --------------------------------------------------------------------------- markdown


def _type_name(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        names = [_type_name(a) for a in typing.get_args(hint) if a is not type(None)]
        return " or ".join(names)
    if origin is list:
        return f"list of {_type_name(typing.get_args(hint)[0])}"
    if origin is dict:
        key, value = typing.get_args(hint)
        return f"mapping of {_type_name(key)} to {_type_name(value)}"
    if hint is PartialDate:
        return "date"
    if hint is Present:
        return "`present`"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return f"[{hint.__name__}](#{hint.__name__.lower()})"
    return {str: "text", int: "integer", bool: "boolean"}[hint]


def _classes() -> list[type]:
    seen: list[type] = []

    def visit(cls: type) -> None:
        if cls in seen:
            return
        seen.append(cls)
        for hint, _ in _fields(cls).values():
            for arg in _flatten(hint):
                if (
                    isinstance(arg, type)
                    and dataclasses.is_dataclass(arg)
                    and arg not in (PartialDate, Present)
                ):
                    visit(arg)

    for root in (model.Profile, *REGISTRIES.values()):
        visit(root)
    return seen


def _flatten(hint: Any) -> list:
    args = typing.get_args(hint)
    return [hint] if not args else [a for arg in args for a in _flatten(arg)]


def format_reference() -> str:
    """The field tables of docs/profile-format.md (between the generated markers)."""
    lines: list[str] = []
    for cls in _classes():
        lines += [f"### {cls.__name__}", "", (cls.__doc__ or "").strip(), ""]
        lines += ["| key | type | required | meaning |", "|---|---|---|---|"]
        for name, (hint, fld) in _fields(cls).items():
            doc = fld.metadata.get("doc", "")
            if fld.metadata.get("choices"):
                doc += " One of: " + ", ".join(f"`{c}`" for c in fld.metadata["choices"]) + "."
            if fld.metadata.get("example") is not None:
                doc += f" Example: `{fld.metadata['example']}`."
            req = "yes" if _is_required(fld) else "no"
            lines.append(f"| `{name}` | {_type_name(hint)} | {req} | {doc} |")
        lines.append("")
    return "\n".join(lines)
