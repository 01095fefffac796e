"""Compile a CV's LaTeX to PDF with the TeX installed on the machine.

Invariant: TeX runs in a fresh private folder with shell escape off and file access
limited to that folder (`openin_any`/`openout_any` paranoid), under a time limit; the
engine is xelatex when the text needs it (CJK), else pdflatex. A missing TeX is a
`UsageError` that names the Debian packages to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from kg.errors import ProjectError, UsageError
from kg.publish.cv.render import needs_xelatex

TIMEOUT = 120.0
MAX_PDF = 50 * 1024 * 1024
INSTALL = (
    "apt-get install --no-install-recommends texlive-latex-base texlive-latex-recommended "
    "texlive-xetex lmodern fonts-wqy-microhei"
)


def engine_for(tex: str) -> str:
    return "xelatex" if needs_xelatex(tex) else "pdflatex"


def compile_pdf(tex: str) -> bytes:
    """The PDF of a LaTeX document (run twice is not needed: no references)."""
    engine = engine_for(tex)
    program = shutil.which(engine)
    if program is None:
        raise UsageError(f"{engine} not found; --format pdf needs TeX Live: {INSTALL}")
    with tempfile.TemporaryDirectory(prefix="kg-cv-") as folder:
        source = Path(folder) / "cv.tex"
        source.write_text(tex, encoding="utf-8")
        env = {
            **os.environ,
            "openin_any": "p",
            "openout_any": "p",
            "shell_escape": "f",
            # reproducible: the same LaTeX gives the same PDF bytes
            "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", "0"),
            "FORCE_SOURCE_DATE": "1",
        }
        command = [program, "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error"]
        try:
            done = subprocess.run(
                [*command, "cv.tex"],
                cwd=folder,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ProjectError(f"{engine} took more than {TIMEOUT:.0f} s; stopped") from exc
        pdf = Path(folder) / "cv.pdf"
        if done.returncode != 0 or not pdf.is_file():
            raise ProjectError(f"{engine} failed on the CV's LaTeX: {_first_error(done.stdout)}")
        return pdf.read_bytes()[: MAX_PDF + 1]


def _first_error(log: bytes) -> str:
    lines = log.decode("utf-8", "replace").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("!"):
            return " ".join(x.strip() for x in lines[i : i + 3])[:300]
    return "no PDF written"
