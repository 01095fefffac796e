"""The Python API: the straight line load -> resolve -> map -> validate -> export."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kg.config import Config
from kg.load import load_dataset
from kg.model import Dataset
from kg.resolve import Resolution, resolve

Progress = Callable[[str], None]


def _quiet(message: str) -> None:
    return None


def check(config: Config) -> Dataset:
    """Load and resolve everything, raising InputError with every problem found."""
    data = load_dataset(config.data_dir)
    resolve(data)
    return data


def resolve_project(config: Config) -> Resolution:
    return resolve(load_dataset(config.data_dir))


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path
    files: tuple[str, ...]
    triples: int
    resolution: Resolution
