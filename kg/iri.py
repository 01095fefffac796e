"""IRIs made from text people type: checked (RFC 3987) or percent-encoded, in one place.

Every IRI that kg mints from user text passes through here when the data is loaded, so
no writer ever receives a string that a strict parser (serdi, pyoxigraph) would refuse
in `<...>`: no spaces, no control characters, none of `<>"{}|\\^`` `.
"""

from __future__ import annotations

import re
from urllib.parse import quote

# Characters that may never appear raw in an IRI (RFC 3987 `iunreserved`/`ipchar` exclude
# them, and N-Triples' IRIREF forbids them): controls, space, and <>"{}|\^`.
_FORBIDDEN = re.compile(r'[\x00-\x20\x7f-\x9f<>"{}|\\^`]')
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HTTP = re.compile(r"^https?://[^/?#@:\[\]]+(?::[0-9]{1,5})?(?:[/?#]|$)")
MAX_IRI = 2000


def iri_problem(text: str) -> str | None:
    """Why `text` is not an absolute IRI a strict parser accepts, or None when it is."""
    if len(text) > MAX_IRI:
        return f"at most {MAX_IRI} characters"
    if not _SCHEME.match(text):
        return "an absolute IRI (scheme:...)"
    bad = _FORBIDDEN.search(text)
    if bad:
        return f"no {_show(bad.group())} in an IRI (percent-encode it)"
    if _PERCENT.search(text):
        return "'%' followed by two hex digits"
    if "\ufffe" in text or "\uffff" in text or re.search(r"[\ud800-\udfff]", text):
        return "no non-characters in an IRI"
    return None


def http_problem(text: str) -> str | None:
    """Like `iri_problem`, and the IRI must be http(s)://host[:port]..."""
    problem = iri_problem(text)
    if problem:
        return problem
    if not _HTTP.match(text):
        return "an http(s) URL with a host, e.g. https://example.org/"
    return None


def _show(char: str) -> str:
    return repr(char) if char.isprintable() and char != " " else f"U+{ord(char):04X}"


def encode_segment(text: str) -> str:
    """Text as one IRI path segment: everything outside RFC 3987 `ipchar` percent-encoded
    (letters in any script stay as they are)."""
    return "".join(
        char if char.isalnum() or char in "-._~!$&'()*+,;=:@" else quote(char, safe="")
        for char in text
    )


def encode_path(text: str) -> str:
    """Text as an IRI path (slashes kept), e.g. a DOI after https://doi.org/."""
    return "/".join(encode_segment(part) for part in text.split("/"))
