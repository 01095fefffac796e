"""Render a `CV` as Markdown, HTML, LaTeX (and PDF through TeX) or JSON Resume.

Invariant: every value from the data reaches the output escaped for its format, whatever
the template: the Jinja environments escape each `{{ … }}` (HTML by autoescape, Markdown
and LaTeX by `finalize`), so a project's own template (`templates/cv/cv.<ext>.j2`, which
wins over kg's) cannot forget to. In LaTeX no profile text can form a command: the ten
special characters become their printed forms, and CJK runs are set in the CJK font.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from jinja2 import BaseLoader, ChoiceLoader, Environment, FileSystemLoader, PackageLoader
from markupsafe import Markup

from kg.display import isolate
from kg.publish.cv.html import cv_html
from kg.publish.cv.model import CV
from kg.publish.entries import is_kg_template
from kg.publish.pageenv import PageEnvironment

TEMPLATES = {"md": "cv/cv.md.j2", "html": "cv/cv.html.j2", "tex": "cv/cv.tex.j2"}

_TEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "[": "{[}",
    "]": "{]}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_TEX_SPECIAL = re.compile(r"[\\&%$#_{}~^\[\]<>|]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Han, kana, hangul, CJK punctuation and full-width forms: set in the CJK font (xelatex)
_CJK = re.compile(
    r"[\u2e80-\u2fff\u3000-\u30ff\u3100-\u31ff\u3200-\u9fff\ua960-\ua97f\uac00-\ud7ff"
    r"\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]+"
)
# what pdflatex sets with utf8 input and T1 fonts; anything else needs xelatex
_PDFLATEX_SAFE = re.compile(
    r"[\x09\x0a\x20-\x7e\u00a0-\u00ff\u2013\u2014\u2018\u2019\u201c\u201d\u2026\u2022]*"
)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")
_MD_BLOCK = re.compile(r"^(\s*(?:\d+)?)([.)](?=\s|$)|[-+](?=\s|$)|=|~~~)")


def tex_escape(value: object) -> str:
    """Text for LaTeX: specials printed, control characters dropped, paragraphs kept."""
    if isinstance(value, Markup):
        return str(value)
    text = _CONTROL.sub("", str(value))
    text = _TEX_SPECIAL.sub(lambda m: _TEX[m.group()], text)
    text = _CJK.sub(lambda m: r"\cjk{" + m.group() + "}", text)
    return re.sub(r"\n\s*\n", r"\\par ", text).replace("\n", " ")


def md_escape(value: object) -> str:
    """Text for Markdown: the characters that start markup are backslash-escaped, and a
    line break cannot start a heading, list or block of the data's making."""
    if isinstance(value, Markup):
        return str(value)
    text = _MD_SPECIAL.sub(r"\\\1", _CONTROL.sub("", str(value))).replace("\n", " ")
    return _MD_BLOCK.sub(r"\1\\\2", text)  # `1. `, `- `, `+ `, `=` cannot start a block


def needs_xelatex(tex: str) -> bool:
    """Whether the LaTeX has characters pdflatex cannot set (CJK, other scripts)."""
    return _PDFLATEX_SAFE.fullmatch(tex) is None


def environment(
    fmt: str, templates: Path | None = None, loader: BaseLoader | None = None
) -> Environment:
    """kg's CV templates behind a project's `templates/` folder (its files win), or the
    given `loader` (the site's, which carries the project's templates to Dask workers)."""
    loaders: list[BaseLoader] = [PackageLoader("kg.publish", "templates")]
    if templates is not None and templates.is_dir():
        loaders.insert(0, FileSystemLoader(str(templates)))
    if loader is not None:
        loaders = [loader]
    if fmt == "html":
        return PageEnvironment(  # `{{ value }}` escaped and isolated in one call
            loader=ChoiceLoader(loaders),
            autoescape=True,
            finalize=isolate,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
    return Environment(
        loader=ChoiceLoader(loaders),
        autoescape=False,
        finalize=tex_escape if fmt == "tex" else md_escape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_text(
    cv: CV,
    fmt: str,
    templates: Path | None = None,
    loader: BaseLoader | None = None,
    **values: object,
) -> str:
    """The CV in `md`, `html` or `tex`, from kg's template or the project's override."""
    if loader is not None and templates is None:
        env = _loader_environment(fmt, loader)  # the site renders a CV per person
    else:
        env = environment(fmt, templates, loader)
    template = env.get_template(TEMPLATES[fmt])
    if fmt == "html" and set(values) <= {"back"} and is_kg_template(template, TEMPLATES[fmt]):
        return cv_html(cv, **values)  # kg's own template: its Python twin (decision 0065)
    return template.render(cv=cv, **values)


@functools.lru_cache(maxsize=8)
def _loader_environment(fmt: str, loader: BaseLoader) -> Environment:
    """One environment per loader and format, so its compiled templates are reused (a
    new environment compiles the template again: 23 ms, a quarter of a 1k build)."""
    return environment(fmt, None, loader)
