"""HTTP content negotiation: pick the offered media type the `Accept` header likes best."""

from __future__ import annotations

from collections.abc import Sequence

Range = tuple[str, str, float]  # type, subtype, q


def parse_accept(header: str) -> list[Range]:
    """The media ranges of an Accept header; malformed ranges and q-values are skipped."""
    ranges = []
    for item in header.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        if media.count("/") != 1:
            continue
        kind, sub = (x.strip().lower() for x in media.split("/"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = -1.0
        if 0.0 <= q <= 1.0 and kind and sub:
            ranges.append((kind, sub, q))
    return ranges


def quality(media: str, ranges: list[Range]) -> float:
    """The q-value of `media`: from the most specific range that matches it."""
    kind, sub = media.split("/")
    found, best = 0.0, -1
    for r_kind, r_sub, q in ranges:
        if (r_kind, r_sub) == (kind, sub):
            specificity = 2
        elif r_kind == kind and r_sub == "*":
            specificity = 1
        elif (r_kind, r_sub) == ("*", "*"):
            specificity = 0
        else:
            continue
        if specificity > best:
            found, best = q, specificity
    return found


def choose(header: str | None, offered: Sequence[str]) -> str | None:
    """The offered type with the highest q-value (ties: the first offered), or None when
    the client accepts none of them. No header: the first offered."""
    if not header or not header.strip():
        return offered[0] if offered else None
    ranges = parse_accept(header)
    best, best_q = None, 0.0
    for media in offered:
        q = quality(media, ranges)
        if q > best_q:
            best, best_q = media, q
    return best
