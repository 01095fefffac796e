"""Name normalisation and slugs, shared by resolution and mapping."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

_KEYS_KEPT = 1 << 17  # the keys are asked for again and again while resolving (names, titles)

HONORIFICS = ("prof.", "prof", "professor", "dr.", "dr", "mr.", "ms.", "mrs.")
_MARKERS = re.compile(r"[*†‡§¶#]+")
_PAREN = re.compile(r"\s*\([^)]*\)\s*")
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)


@lru_cache(maxsize=_KEYS_KEPT)
def clean_person_name(printed: str) -> str:
    """The name without honorifics, parenthesised annotations and contribution markers."""
    text = unicodedata.normalize("NFKC", printed)
    text = _PAREN.sub(" ", _MARKERS.sub("", text))
    words = text.split()
    while words and words[0].casefold() in HONORIFICS:
        words = words[1:]
    return " ".join(words)


@lru_cache(maxsize=_KEYS_KEPT)
def name_key(name: str) -> str:
    """Comparison key: case, spacing and punctuation do not matter ("Yihao ZHAO" = "Yihao Zhao")."""
    text = unicodedata.normalize("NFKC", clean_person_name(name)).casefold()
    return " ".join(_NON_WORD.sub(" ", text).split())


@lru_cache(maxsize=_KEYS_KEPT)
def text_key(text: str) -> str:
    """Comparison key for titles and registry names."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NON_WORD.sub(" ", text.replace("’", "'")).split())


def slugify(text: str, max_length: int = 60) -> str:
    """A readable ASCII slug; non-Latin text gets a short stable hash."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > max_length:
        slug = slug[:max_length].rsplit("-", 1)[0]
    if not slug:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
        slug = f"n-{digest}"
    return slug


# Letters of other scripts that look like Latin ones (a small part of Unicode's
# confusables, TR39): "Хin Jin" with a Cyrillic Х is another person to the resolver,
# and rightly so, but a near miss worth showing.
_LOOKALIKES = str.maketrans(
    "аАвВеЕёкКмМнНоОрРсСтТуУхХіІјЈѕЅԁһӏαΑβΒεΕζΖηΗιΙκΚμΜνΝοΟρΡτΤυΥχΧ",
    "aAbBeEeKKMMHHoOpPcCTTyYxXiIjJsSdhlaABBeEZZHHiIKKMMvNoOpPTTuYxX",
)


def skeleton(text: str) -> str:
    """`name_key` with look-alike letters of other scripts mapped to Latin ones."""
    return name_key(text.translate(_LOOKALIKES))
