"""Content negotiation cases shared by the tests of every server that publishes the site
(the generated nginx and Apache recipes, `kg serve`): the same request must get the same
answer from each."""

from __future__ import annotations

# (Accept header, expected extension, or 406 when no format is acceptable)
CONNEG_CASES: list[tuple[str | None, str | int]] = [
    (None, "html"),
    ("*/*", "html"),
    ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "html"),
    ("text/turtle", "ttl"),
    ("application/ld+json", "jsonld"),
    ("application/n-triples", "nt"),
    ("text/html;q=0.1, text/turtle;q=0.9", "ttl"),
    ("application/*", "jsonld"),
    ("application/n-triples, application/ld+json;q=0.5", "nt"),
    ("text/*;q=0.5, text/html;q=0", "ttl"),
    ("text/turtle;q=0, */*;q=0.1", "html"),
    ("TEXT/Turtle ; q=1", "ttl"),
    ("text/html;q=bad, */*", "html"),  # a malformed range is ignored
    ("text/turtle;q=0.5000, text/html;q=0.4", "ttl"),
    ("image/png", 406),
    ("text/html;q=0, text/turtle;q=0", 406),
]

MEDIA = {
    "html": "text/html",
    "ttl": "text/turtle",
    "jsonld": "application/ld+json",
    "nt": "application/n-triples",
}
