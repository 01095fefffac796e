"""How often Python's cyclic garbage collector runs while a build allocates.

A build makes millions of objects that live until it ends (the model, the graph, the
site's indexes). With the default thresholds the collector runs a young-generation pass
every 700 allocations and, as the heap grows, full passes over every live object: about
a third of the CPU of loading, resolving and mapping at 1k people, more at 10k.
Invariant: inside `rarely_collecting()` the collector still runs (reference cycles are
still freed), only a hundred times less often; the thresholds in force before are
restored on the way out, so callers of the library see no lasting change.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 100_000  # allocations between young passes (Python's default: 700)


@contextmanager
def rarely_collecting() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
