"""Name normalisation and slugs, shared by resolution and mapping."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
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
def honorific_of(printed: str) -> str | None:
    """The title printed before a name ("Prof." in "Prof. Xin Jin"), as printed."""
    words = unicodedata.normalize("NFKC", printed).split()
    titles = []
    while words and words[0].casefold() in HONORIFICS:
        titles.append(words.pop(0))
    return " ".join(titles) or None


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


def topic_slugs(labels: list[str], key) -> dict[str, tuple[str, str]]:
    """Topic key -> (IRI slug, preferred label) for every label, with no two topics on one slug.

    Symbols that make a different topic are spelled out ("C++" -> `c-plus-plus`, "C#" ->
    `c-sharp`, so neither becomes `c`); a slug two different topics still share gets a short
    hash of the key. The preferred label is the spelling written most often (ties: the
    first in sorted order), so case variants of one topic give it one label.
    """
    spellings: dict[str, Counter[str]] = {}
    for label in labels:
        spellings.setdefault(key(label), Counter())[label] += 1
    slugs: dict[str, list[str]] = {}
    for k in spellings:
        slugs.setdefault(slugify(_SYMBOLS.sub(lambda m: _SPELLED[m[0]], k)), []).append(k)
    out = {}
    for slug, keys in slugs.items():
        for k in keys:
            unique = slug if len(keys) == 1 else f"{slug}-{_digest(k)}"
            preferred = min(spellings[k].items(), key=lambda item: (-item[1], item[0]))[0]
            out[k] = (unique, preferred)
    return out


_SPELLED = {"+": " plus ", "#": " sharp ", "@": " at ", "&": " and ", ".": " dot "}
_SYMBOLS = re.compile(r"[+#@&]|(?<![\w])\.|\.(?![\w])")


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]
