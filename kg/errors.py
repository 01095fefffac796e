"""The exceptions `kg` raises. The CLI turns each into a message and an exit code."""

from __future__ import annotations

from dataclasses import dataclass, field

from kg.model import Source


@dataclass(frozen=True, order=True)
class Problem:
    """One mistake in the input: where, which key, and what was expected."""

    source: Source
    path: str
    message: str
    fix: str = field(default="", compare=False)  # YAML to paste, e.g. a missing registry entry

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source.line else f"{self.source.file}: "
        key = f"{self.path}: " if self.path else ""
        return f"{where}{key}{self.message}"


class KgError(Exception):
    """Base class of every error `kg` raises on purpose."""

    exit_code = 2


class InputError(KgError):
    """The data under `data/` has one or more mistakes."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        self.problems = tuple(sorted(set(problems)))
        super().__init__("\n".join(str(p) for p in self.problems))


class BadRecordsError(InputError):
    """An imported file has malformed entries; nothing was imported."""

    hint = "nothing imported; fix the entries above, or pass --skip-bad to import the rest"


class ProjectError(KgError):
    """The project itself cannot be used: no data directory, bad configuration."""


class UsageError(KgError):
    """The command was called with arguments that do not fit."""


class QueryError(KgError):
    """A stored or ad-hoc SPARQL query cannot be run."""


class RemoteError(KgError):
    """A SPARQL endpoint or graph store failed or refused the request."""
