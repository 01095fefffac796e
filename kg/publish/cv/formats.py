"""One entry point for every CV format: `render_cv(resolution, slug, fmt, …)`.

Invariant: the same data, options and templates give the same bytes in every format
(the PDF too: TeX runs with a fixed SOURCE_DATE_EPOCH unless one is set).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from kg.publish.cv.build import build_cv
from kg.publish.cv.jsonresume import resume_text
from kg.publish.cv.model import FORMATS, Options
from kg.publish.cv.pdf import compile_pdf
from kg.publish.cv.render import render_text
from kg.resolve.identity import Resolution

__all__ = ["FORMATS", "render_cv", "write_file"]


def render_cv(
    r: Resolution,
    slug: str,
    fmt: str,
    options: Options | None = None,
    templates: Path | None = None,
) -> str | bytes:
    """The CV of profile `slug` as text (`md`, `html`, `tex`, `jsonresume`) or PDF bytes."""
    cv = build_cv(r, slug, options)
    if fmt == "jsonresume":
        return resume_text(cv)
    if fmt == "pdf":
        return compile_pdf(render_text(cv, "tex", templates))
    return render_text(cv, fmt, templates)


def write_file(path: Path, data: str | bytes) -> None:
    """Replace `path` atomically (a link at `path` is replaced, never written through)."""
    folder = path.parent if str(path.parent) else Path(".")
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".kg-cv", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
