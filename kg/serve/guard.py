"""What the SPARQL endpoint refuses before any parser or evaluator sees a query: a cheap
lexical scan of the text (strings, IRIs and comments skipped), linear in its length.

Invariant: a query that passes `check` has bracket nesting at most `max_depth`, no
SERVICE and no update keyword (LOAD, INSERT, DELETE, ...), and names in FROM, FROM NAMED,
GRAPH and the protocol's dataset parameters only graphs the store holds; so nothing it
asks for can make the evaluator reach the network or the file system.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# One token at a time: comments, strings, IRIs, prefixed names / keywords, brackets.
_TOKEN = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<comment>\#[^\n]*)
    | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
                |'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
    | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
    | (?P<var>[?$][A-Za-z0-9_\u00b7-\U000effff]+)
    | (?P<word>[A-Za-z_\u00c0-\U000effff][\w\-.\u00b7-\U000effff]*(?::[^\s(){}\[\],;]*)?
                |:[^\s(){}\[\],;]*)
    | (?P<open>[({\[])
    | (?P<close>[)}\]])
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
FORBIDDEN = {
    "SERVICE": "SERVICE (federated queries) is not allowed on this endpoint",
    **{
        word: "this endpoint is read-only: SPARQL updates are not accepted"
        for word in ("LOAD", "INSERT", "DELETE", "CLEAR", "DROP", "CREATE", "ADD", "MOVE",
                     "COPY", "WITH", "USING")
    },
}  # fmt: skip
UPDATE_MESSAGE = FORBIDDEN["LOAD"]


class Refused(Exception):
    """The query is refused before evaluation; `status` is the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "other"
        if kind not in ("space", "comment", "string"):
            yield kind, match.group()


def check(query: str, graphs: Iterable[str], max_depth: int, dataset: Iterable[str] = ()) -> None:
    """Raise Refused when `query` (with the protocol's dataset IRIs) may not run."""
    known = set(graphs)
    for named in dataset:
        if named not in known:
            raise Refused(400, f"no graph <{named}> in this dataset; it holds only the default")
    depth, prefixes, after = 0, {}, ""
    pending_prefix: str | None = None
    for kind, token in _tokens(query):
        if kind == "open":
            depth += 1
            if depth > max_depth:
                raise Refused(400, f"the query nests brackets deeper than {max_depth} levels")
        elif kind == "close":
            depth = max(depth - 1, 0)
        upper = token.upper() if kind == "word" else ""
        if upper in FORBIDDEN:
            status = 400 if upper == "SERVICE" else 403
            raise Refused(status, FORBIDDEN[upper])
        if pending_prefix is not None and kind == "iri":
            prefixes[pending_prefix] = token[1:-1]
            pending_prefix = None
        elif after == "PREFIX" and kind == "word" and token.endswith(":"):
            pending_prefix = token[:-1]
        elif after in ("FROM", "NAMED", "GRAPH") and kind in ("iri", "word") and upper != "NAMED":
            iri: str | None = token[1:-1] if kind == "iri" else _expand(token, prefixes)
            if iri is not None and iri not in known:
                raise Refused(400, f"no graph <{iri}> in this dataset; it holds only the default")
        after = upper if kind == "word" else ""


def _expand(name: str, prefixes: dict[str, str]) -> str | None:
    prefix, colon, local = name.partition(":")
    if not colon:
        return None
    return prefixes.get(prefix, f"{prefix}:") + local
