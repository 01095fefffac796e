"""Text from the data shown to people: isolated in pages, escaped in terminals.

A name can hold a right-to-left override (U+202E) that reorders whatever follows it on
the page, and a title can hold terminal escape sequences (ESC [ ...) that recolour or
rewrite the user's terminal. Pages wrap every value that holds a bidirectional control
in an isolate (U+2068 ... U+2069, what `<bdi>` does), which ends any embedding or
override the value opened (every bidi control written as a character reference, so
none is raw in the file); terminal output shows control characters as visible escapes.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
_UNSAFE_IN_TERMINAL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}]")
FSI, PDI = "\u2068", "\u2069"


def isolate(value: object) -> object:
    """Jinja `finalize`: a text value with bidi controls, isolated from its surroundings
    and escaped, every bidi control (the isolate's too) as a character reference: the
    browser shows the same text, and no raw control reaches the file (where it would
    reorder what an editor or a terminal shows of the page source)."""
    if isinstance(value, str) and not isinstance(value, Markup) and _BIDI.search(value):
        return Markup(_BIDI.sub(_reference, f"{FSI}{escape(value)}{PDI}"))
    return value


def _reference(match: re.Match) -> str:
    return f"&#x{ord(match.group()):04X};"


def terminal_safe(text: str) -> str:
    """`text` with control characters (C0 but tab and newline, DEL, C1) and bidi
    controls as visible escapes."""
    return _UNSAFE_IN_TERMINAL.sub(_escape, text)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
