"""`kg import orcid ID` / `kg import dblp PID`: fetch the record, when the user asks.

Invariant: a request goes out only for an argument that is an ORCID iD or a dblp person
id and is not an existing file, to the public API (or the base address in
`KG_ORCID_API` / `KG_DBLP_API`, which the tests point at a server on 127.0.0.1), through
kg's one HTTP client (`kg.query.net`: a total deadline, http(s) only); an answer is at
most MAX_IMPORT_BYTES and must be 200, else exit 2 naming the address.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable

from kg.errors import RemoteError, UsageError
from kg.imports.record import Parsed

ORCID_API = "https://pub.orcid.org/v3.0"
DBLP_API = "https://dblp.org"
ORCID_ID = re.compile(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")
DBLP_PID = re.compile(r"^(\d+/\d+(-\d+)?|[a-z]/[A-Za-z0-9_:=-]+)$")
BULK = 100  # ORCID answers at most 100 put-codes per works request
TIMEOUT = 30.0


def fetchable(source: str, argument: str) -> bool:
    """Whether `argument` names a record to fetch rather than a file."""
    if os.path.lexists(argument):
        return False
    pattern = {"orcid": ORCID_ID, "dblp": DBLP_PID}.get(source)
    return bool(pattern and pattern.match(argument))


def fetch(source: str, ident: str, limit: int) -> tuple[str, str]:
    """(text, the address it came from) of the ORCID record or dblp person."""
    if source == "dblp":
        url = f"{_base('KG_DBLP_API', DBLP_API)}/pid/{ident}.xml"
        return _get(url, "application/xml", limit), url
    url = f"{_base('KG_ORCID_API', ORCID_API)}/{ident}/record"
    return _get(url, "application/json", limit), url


def with_full_works(
    record: Parsed, text: str, ident: str, limit: int, parse: Callable[[str, str], Parsed]
) -> Parsed:
    """The record's works whose summaries carry no contributors, fetched in full."""
    codes = _summary_codes(text)
    if not codes:
        return record
    works = list(record.works)
    bad = list(record.bad)
    base = _base("KG_ORCID_API", ORCID_API)
    for start in range(0, len(codes), BULK):
        url = f"{base}/{ident}/works/{','.join(codes[start : start + BULK])}"
        parsed = parse(_get(url, "application/json", limit), url)
        works += parsed.works
        bad += parsed.bad
    kept = tuple(w for w in record.warnings if "carry no contributors" not in w)
    return Parsed(tuple(works), record.affiliations, tuple(bad), kept, record.orcid)


def _summary_codes(text: str) -> list[str]:
    data = json.loads(text)
    groups = (((data.get("activities-summary") or {}).get("works") or {}).get("group")) or []
    codes = []
    for group in groups:
        first = ((group or {}).get("work-summary") or [None])[0]
        if isinstance(first, dict) and not (first.get("contributors") or {}).get("contributor"):
            codes.append(str(first.get("put-code")))
    return codes


def _base(variable: str, default: str) -> str:
    return (os.environ.get(variable) or default).rstrip("/")


def _get(url: str, accept: str, limit: int) -> str:
    from kg.query.net import request

    try:
        response = request("GET", url, headers={"Accept": accept}, timeout=TIMEOUT)
    except RemoteError as exc:
        raise UsageError(f"cannot fetch {url}: {exc}") from None
    if response.status != 200:
        raise UsageError(f"{url} answered {response.status} {response.reason}; expected 200")
    if len(response.body) > limit:
        raise UsageError(f"{url}: an answer of more than {limit:,} bytes; expected a record")
    try:
        return response.body.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{url}: the answer is not UTF-8") from None
