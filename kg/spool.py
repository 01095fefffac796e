"""Records a stage keeps to its end, on disk instead of in memory (decision 0067).

Invariant: `Spool` gives back exactly the records added, in the order they were added,
once. They wait in an unnamed temporary file (no name to find, follow or leave behind:
it is gone when closed or when the process ends), so what a build's process would
otherwise hold while its forked render workers live (each counting the parent's pages
again) costs nothing in memory until the stage reads it back, after the workers are
gone.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


class Spool:
    """Pickled records appended to a temporary file, read back in order by `drain`."""

    def __init__(self, folder: Path | None = None) -> None:
        self._file: IO[bytes] | None = None
        self._folder = folder
        self.count = 0

    def add(self, record: Any) -> None:
        """Keep `record` (anything pickle takes) until `drain`."""
        self.add_pickled(pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))

    def add_pickled(self, data: bytes) -> None:
        """Keep the record `data` is the pickle of (one whole pickle, as `pickle.dumps`
        made it: a worker pickles what it sends anyway) until `drain`."""
        if self._file is None:
            self._file = tempfile.TemporaryFile(dir=self._folder)  # noqa: SIM115 (kept open)
        self._file.write(data)
        self.count += 1

    def drain(self) -> Iterator[Any]:
        """The records in the order they were added, each read as it is wanted; the
        file is closed after the last (or when the iterator is let go)."""
        file, self._file, count, self.count = self._file, None, self.count, 0
        if file is None:
            return
        with file:
            file.seek(0)
            for _ in range(count):
                yield pickle.load(file)

    def close(self) -> None:
        """Drop what is left."""
        if self._file is not None:
            self._file.close()
            self._file = None
            self.count = 0
