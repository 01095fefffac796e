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
_STRUCTURE = re.compile(
    r"^[A-Za-z][A-Za-z0-9+.-]*:"
    r"(?://(?:[^/?#\[\]@]*@)?(?:\[[0-9A-Fa-f:.]+\]|[^/?#\[\]@:]*)(?::[0-9]*)?)?"
    r"[^?#\[\]]*(?:\?[^#\[\]]*)?(?:#[^#\[\]]*)?$"
)
MAX_IRI = 2000
BIDI_FORMATTING = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


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
    if not _STRUCTURE.match(text):
        return "scheme:[//host[:port]]path[?query][#fragment] ([ and ] only around an IP host)"
    for char in text:
        if char in BIDI_FORMATTING:
            return f"no {_show(char)} in an IRI (RFC 3987 forbids bidi formatting characters)"
        if ord(char) >= 0xA0 and not _ucschar(char):
            return f"no {_show(char)} in an IRI (not an RFC 3987 character; percent-encode it)"
    return None


def _ucschar(char: str) -> bool:
    """RFC 3987 `ucschar`: the non-ASCII characters an IRI may hold as they are."""
    code = ord(char)
    if code <= 0xFFFF:
        return 0xA0 <= code <= 0xD7FF or 0xF900 <= code <= 0xFDCF or 0xFDF0 <= code <= 0xFFEF
    return code <= 0xEFFFD and (code & 0xFFFF) <= 0xFFFD and not 0xE0000 <= code <= 0xE0FFF


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
        char
        if (char.isascii() and char.isalnum())
        or char in "-._~!$&'()*+,;=:@"
        or (ord(char) >= 0xA0 and _ucschar(char))
        else quote(char, safe="")
        for char in text
    )


def encode_path(text: str) -> str:
    """Text as an IRI path (slashes kept), e.g. a DOI after https://doi.org/."""
    return "/".join(encode_segment(part) for part in text.split("/"))


def doi_address(doi: str) -> str:
    """The address of a DOI (`https://doi.org/` and the DOI as an IRI path): the one form
    the graph (`schema:sameAs`), pages, CVs and plain-text citations link."""
    return "https://doi.org/" + encode_path(doi)


def arxiv_address(arxiv: str) -> str:
    """The abstract page of an arXiv identifier, in the same one form everywhere."""
    return "https://arxiv.org/abs/" + encode_path(arxiv)
