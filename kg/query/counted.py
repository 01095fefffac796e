"""Two of kg's precomputed answers kept up to date by counting (decision 0059): their
rows are counts, so after an edit each count is the earlier one, less what the touched
papers counted before the change, plus what they count after.

- `publications-per-year` counts, per `SUBSTR(STR(?date), 1, 4)` of a paper's
  `schema:datePublished`, the distinct papers with such a date that have some
  `schema:author`. A paper's years are a function of its own `datePublished` and
  `schema:author` triples only: the touched papers are the subjects of changed triples
  of those two predicates.
- `ranked-venue-papers` (a list and rank bound) counts, per name of a profiled person
  (`?page schema:mainEntity ?person . ?person schema:name ?name`), the distinct papers
  of theirs (`schema:author`) at a venue (`kg:venue`) the list ranks so
  (`?venue kg:ranking ?r . ?r kg:rankingList ?list ; kg:rankValue ?rank`). When no
  changed triple is a name, a page's main entity or a ranking (`kg:ranking`,
  `kg:rankingList`, `kg:rankValue`), who is named what and which venues are ranked did
  not change, and a paper's names are a function of its own `schema:author` and
  `kg:venue` triples: the touched papers are the subjects of changed triples of those.
  (A changed name of anything but a profiled person, a paper's title, is not read.)

Invariant: for every touched paper, what it counts in (years; names) in the new store
is read from the new store, and before the change from the same triples with the
change undone (the added triples taken away, the removed ones put back); each count is
the earlier answer's (0 when it had no row) less the touched papers' before, plus
after; a count of 0 has no row. The rows are the whole query's multiset, ordered by the
caller (`in_order`). A blank node (in the change, as a date, author or venue), an
earlier row that is not a count of the form pyoxigraph writes, a negative count, more
than MOST_TOUCHED touched papers, or (ranked) a changed name, page or ranking, or a
text whose list and rank are not found: None, and the caller asks the query.
"""

from __future__ import annotations

import json
import re

import pyoxigraph as ox

from kg.errors import QueryError
from kg.graph.namespaces import KG, SCHEMA
from kg.query.store import QueryStore

MOST_TOUCHED = 2_000  # papers; more: the whole query
_RANKING = ("ranking", "rankingList", "rankValue")
INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
_DATE = ox.NamedNode(str(SCHEMA.datePublished))
_AUTHOR = ox.NamedNode(str(SCHEMA.author))
_VENUE = ox.NamedNode(str(KG.venue))
_SETTLED = {str(SCHEMA.mainEntity), *(str(KG[p]) for p in _RANKING)}
_LITERAL = r'"(?:[^"\\]|\\.)*"(?:\^\^<[^>]*>|@[A-Za-z0-9-]+)?'
_RANKED = re.compile(rf"kg:rankingList\s+({_LITERAL})\s*;\s*kg:rankValue\s+({_LITERAL})\s*\.")

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


def ranked_rows(
    store: QueryStore, text: str, removed: list[ox.Triple], added: list[ox.Triple], rows: list
) -> list[dict] | None:
    """`ranked-venue-papers` (kg's text, its list and rank bound in `text`): the whole
    query's rows on `store` (unordered) from the earlier answer's `rows` and the change;
    None where this module cannot make them."""
    if any(t.predicate.value in _SETTLED for t in removed + added):
        return None
    named = {t.subject for t in removed + added if t.predicate.value == str(SCHEMA.name)}
    if named and _profiled(store, named):  # a profiled person's name changed
        return None
    ranked = _RANKED.search(text)
    counts = _name_counts(rows)
    touched = {t.subject for t in removed + added if t.predicate in (_AUTHOR, _VENUE)}
    if ranked is None or counts is None or len(touched) > MOST_TOUCHED:
        return None
    if any(not isinstance(p, ox.NamedNode) for p in touched):
        return None
    papers: set[ox.NamedNode] = touched  # type: ignore[assignment]
    venues = _ranked_venues(store, ranked.group(1), ranked.group(2))
    authors, at = _objects(store, papers, _AUTHOR), _objects(store, papers, _VENUE)
    if venues is None or authors is None or at is None:
        return None
    new = _paper_authors(papers, authors, at, venues)
    _undo(authors, _AUTHOR, removed, added)
    _undo(at, _VENUE, removed, added)
    old = _paper_authors(papers, authors, at, venues)
    if new is None or old is None:
        return None
    names = _names(store, {a for found in (new, old) for people in found.values() for a in people})
    if names is None:
        return None
    for paper in papers:
        for found, step in ((old, -1), (new, 1)):
            for name in {n for a in found[paper] for n in names.get(a, ())}:
                term, n = counts.get(name, (json.loads(name), 0))
                counts[name] = (term, n + step)
    if any(n < 0 for _, n in counts.values()):
        return None  # the earlier answer was not this store's before the change
    return [{"name": t, "papers": _count_term(n)} for t, n in counts.values() if n > 0]


def _name_counts(rows: list) -> dict[str, tuple[dict, int]] | None:
    """A name's text (its term as JSON, keys sorted) -> its term and the earlier count."""
    counts: dict[str, tuple[dict, int]] = {}
    for row in rows:
        name, count = row.get("name"), row.get("papers")
        if not (isinstance(name, dict) and isinstance(count, dict)) or len(row) != 2:
            return None
        value = count.get("value")
        if not isinstance(value, str) or not value.isdigit() or count != _count_term(int(value)):
            return None
        counts[json.dumps(name, sort_keys=True)] = (name, int(value))
    return counts


def _ranked_venues(store: QueryStore, ranking: str, rank: str) -> set | None:
    """The venues the list `ranking` ranks `rank` (SPARQL terms as the text wrote them)."""
    kg = f"<{KG}>"
    text = (
        f"PREFIX kg: {kg} SELECT ?venue WHERE {{ ?r kg:rankingList {ranking} ; "
        f"kg:rankValue {rank} . ?venue kg:ranking ?r }}"
    )
    found = _solutions(store, text)
    if found is None or any(not isinstance(s["venue"], ox.NamedNode) for s in found):
        return None
    return {s["venue"] for s in found}


def _paper_authors(
    papers: set[ox.NamedNode], authors: dict, at: dict, venues: set
) -> dict[ox.NamedNode, set] | None:
    """Each paper's authors when it is at a ranked venue (else none)."""
    found: dict[ox.NamedNode, set] = {}
    for paper in papers:
        if any(isinstance(a, ox.BlankNode) for a in authors[paper] | at[paper]):
            return None
        found[paper] = set(authors[paper]) if at[paper] & venues else set()
    return found


def _names(store: QueryStore, people: set) -> dict[object, set[str]] | None:
    """Each profiled person's names (terms as JSON, keys sorted), as the query joins
    them: `?page schema:mainEntity ?person . ?person schema:name ?name`."""
    iris = sorted(str(p) for p in people if isinstance(p, ox.NamedNode))
    found: dict[object, set[str]] = {}
    if not iris:
        return found
    text = (
        f"SELECT ?person ?name WHERE {{ VALUES ?person {{ {' '.join(iris)} }} "
        f"?page <{SCHEMA.mainEntity}> ?person . ?person <{SCHEMA.name}> ?name }}"
    )
    try:
        result = store.query(text, "maintained answer")
        if not isinstance(result, ox.QuerySolutions):
            return None
        rows = json.loads(result.serialize(format=ox.QueryResultsFormat.JSON) or b"")
        bindings = rows["results"]["bindings"]
    except (QueryError, OSError, ValueError, RuntimeError, KeyError, TypeError):
        return None
    for row in bindings:
        person = ox.NamedNode(row["person"]["value"])
        found.setdefault(person, set()).add(json.dumps(row["name"], sort_keys=True))
    return found


def _solutions(store: QueryStore, text: str) -> list | None:
    try:
        result = store.query(text, "maintained answer")
    except QueryError:
        return None
    return list(result) if isinstance(result, ox.QuerySolutions) else None


def _profiled(store: QueryStore, subjects: set) -> bool:
    """Whether one of `subjects` is a page's main entity (pages did not change)."""
    iris = " ".join(sorted(str(s) for s in subjects))
    text = f"ASK {{ VALUES ?s {{ {iris} }} ?page <{SCHEMA.mainEntity}> ?s }}"
    try:
        result = store.query(text, "maintained answer")
    except QueryError:
        return True
    return not isinstance(result, ox.QueryBoolean) or bool(result)
