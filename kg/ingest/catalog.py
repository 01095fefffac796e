"""The registries bundled with kg (`kg/starter/`): what `kg init` writes into a new project,
and where the YAML for a missing registry entry comes from when kg knows the organization
or venue (so `kg check` can print the entry, identifiers included, ready to paste)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from kg.ingest.load import load_registry
from kg.ingest.names import text_key
from kg.model import Organization, Venue

STARTER = Path(__file__).resolve().parent / "starter"
_KEY_LINE = re.compile(r"^([a-z0-9][a-z0-9-]*):\s*$")


def bundled_entry(registry: str, ref: str) -> str | None:
    """The bundled YAML block (key line and fields) of the entry a reference names, if any."""
    index, blocks = _catalog(registry)
    key = index.get(text_key(ref))
    return blocks.get(key) if key else None


@cache
def _catalog(registry: str) -> tuple[dict[str, str], dict[str, str]]:
    path = STARTER / f"{registry}.yaml"
    cls = Organization if registry == "organizations" else Venue
    index: dict[str, str] = {}
    for entry in load_registry(path, cls, path.name):
        names = [entry.key, entry.name, *entry.aliases]
        names += [entry.short_name] if isinstance(entry, Venue) and entry.short_name else []
        index.update((text_key(name), entry.key) for name in names)
    return index, _blocks(path.read_text(encoding="utf-8"))


def _blocks(text: str) -> dict[str, str]:
    """Top-level key -> its lines, from a registry file written one entry per block."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        match = _KEY_LINE.match(line)
        if match:
            current = blocks.setdefault(match[1], [line])
        elif current is not None and line.startswith(" "):
            current.append(line)
        else:
            current = None
    return {key: "\n".join(lines) for key, lines in blocks.items()}
