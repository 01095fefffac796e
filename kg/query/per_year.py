"""`publications-per-year` kept up to date by counting (decision 0059): its rows are a
count per year, so after an edit each year's count is the earlier one, less the papers
that counted in it before the change, plus those that count in it after.

kg's text of the query counts, per `SUBSTR(STR(?date), 1, 4)` of a paper's
`schema:datePublished`, the distinct papers with such a date that have some
`schema:author`. A paper's years are a function of its own `datePublished` and
`schema:author` triples only, so only the subjects of changed triples of those two
predicates (the touched papers) can count in other years than before.

Invariant: for every touched paper, its years in the new store are read from the new
store (its dates and whether it has an author), and its years in the old store from the
same triples with the change undone (the added triples taken away, the removed ones put
back); each year's count is the earlier answer's count (0 when it had no row) less the
touched papers of that year before, plus those after; a year whose count is 0 has no
row. The rows are the whole query's multiset, ordered by the caller (`in_order`). A
date that is a blank node (STR fails: the year is unbound), an earlier row that is not
a count of this form, or more than MOST_TOUCHED touched papers gives None: the whole
query is asked.
"""

from __future__ import annotations

import pyoxigraph as ox

from kg.errors import QueryError
from kg.graph.namespaces import SCHEMA
from kg.query.store import QueryStore

MOST_TOUCHED = 2_000  # papers; more: the whole query
INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
_DATE = ox.NamedNode(str(SCHEMA.datePublished))
_AUTHOR = ox.NamedNode(str(SCHEMA.author))

Years = dict[ox.NamedNode, set[str]]  # a touched paper -> the years it counts in


def per_year_rows(
    store: QueryStore, removed: list[ox.Triple], added: list[ox.Triple], rows: list[dict]
) -> list[dict] | None:
    """The whole query's rows on `store` (unordered), from the earlier answer's `rows`
    and the change (`removed`, `added`); None where this module cannot make them."""
    counts = _counts(rows)
    touched = {t.subject for t in removed + added if t.predicate in (_DATE, _AUTHOR)}
    if counts is None or len(touched) > MOST_TOUCHED:
        return None
    if any(not isinstance(p, ox.NamedNode) for p in touched):
        return None
    papers: set[ox.NamedNode] = touched  # type: ignore[assignment]
    dates, authors = _objects(store, papers, _DATE), _objects(store, papers, _AUTHOR)
    if dates is None or authors is None:
        return None
    new = _years(papers, dates, authors)
    _undo(dates, _DATE, removed, added)
    _undo(authors, _AUTHOR, removed, added)
    old = _years(papers, dates, authors)
    if new is None or old is None:
        return None
    for paper in papers:
        for year in old[paper]:
            counts[year] = counts.get(year, 0) - 1
        for year in new[paper]:
            counts[year] = counts.get(year, 0) + 1
    if any(n < 0 for n in counts.values()):
        return None  # the earlier answer was not this store's before the change
    return [_row(year, n) for year, n in counts.items() if n > 0]


def _counts(rows: list[dict]) -> dict[str, int] | None:
    """Year -> count of the earlier rows, when each is a row this module would write."""
    counts: dict[str, int] = {}
    for row in rows:
        year, count = row.get("year"), row.get("publications")
        if not (isinstance(year, dict) and isinstance(count, dict)) or len(row) != 2:
            return None
        value = count.get("value")
        if year != _year_term(str(year.get("value"))) or not isinstance(value, str):
            return None
        if not value.isdigit() or count != _count_term(int(value)):
            return None
        counts[str(year["value"])] = int(value)
    return counts


def _year_term(year: str) -> dict:
    return {"type": "literal", "value": year}


def _count_term(n: int) -> dict:
    return {"datatype": INTEGER, "type": "literal", "value": str(n)}


def _row(year: str, n: int) -> dict:
    return {"publications": _count_term(n), "year": _year_term(year)}


def _undo(
    found: dict[ox.NamedNode, set], predicate: ox.NamedNode, removed: list, added: list
) -> None:
    """`found` (each paper's objects of `predicate`) as it was before the change."""
    for t in added:
        if t.predicate == predicate and t.subject in found:
            found[t.subject].discard(t.object)
    for t in removed:
        if t.predicate == predicate and t.subject in found:
            found[t.subject].add(t.object)


def _years(papers: set[ox.NamedNode], dates: dict, authors: dict) -> Years | None:
    found: Years = {}
    for paper in papers:
        years: set[str] = set()
        if authors[paper]:
            for date in dates[paper]:
                if not isinstance(date, (ox.Literal, ox.NamedNode)):
                    return None  # STR of a blank node: an unbound year
                years.add(date.value[:4])
        found[paper] = years
    return found


def _objects(
    store: QueryStore, papers: set[ox.NamedNode], predicate: ox.NamedNode
) -> dict[ox.NamedNode, set] | None:
    """Each paper's objects of `predicate` in `store` (its default graph, as the query
    reads it)."""
    found: dict[ox.NamedNode, set] = {p: set() for p in papers}
    if not papers:
        return found
    values = " ".join(str(p) for p in sorted(papers, key=str))
    text = f"SELECT ?s ?o WHERE {{ VALUES ?s {{ {values} }} ?s {predicate} ?o }}"
    try:
        result = store.query(text, "maintained answer")
    except QueryError:
        return None
    if not isinstance(result, ox.QuerySolutions):
        return None
    for solution in result:
        found[solution["s"]].add(solution["o"])
    return found
