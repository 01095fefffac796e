"""The Jinja environment of kg's HTML pages: each `{{ value }}` made safe in one call.

Invariant: a template renders the same bytes in a `PageEnvironment` as in a plain
`Environment` with the same options and `finalize=isolate` (kg.display), whatever the
template (kg's own or a project's). Jinja writes each runtime value of an autoescaped
template as `escape(environment.finalize(value))`: the finalize call, the escape and a
`Markup` made for every value, though the page only joins the pieces into one string.
Here that output is `environment.page_text(value)`, which gives the same text
(`page_text(v) == escape(isolate(v))`) without the intermediate objects for a plain
`str` (most values); any other value takes the two calls as before. Only the output of
`{{ … }}` changes; expressions (filters, `~`, tests, calls) are Jinja's own. A plain
string piece is as good as a `Markup` one there: pieces are only ever joined (`concat`),
and a block or macro body is wrapped in `Markup` after the join, as before.

The generator's hooks (`_output_child_pre`, `_output_child_post`, `_make_finalize`) are
Jinja 3.1's; tests/test_pageenv.py renders every kg template both ways.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from jinja2 import Environment
from jinja2.compiler import CodeGenerator, Frame
from jinja2.nodes import Expr
from markupsafe import Markup, escape

from kg.display import BIDI_CONTROLS, isolate


def _chain(value: str) -> str:
    """markupsafe's replacement of the five characters, in its order."""
    return (
        value.replace("&", "&amp;")
        .replace(">", "&gt;")
        .replace("<", "&lt;")
        .replace("'", "&#39;")
        .replace('"', "&#34;")
    )


try:  # the same replacement in C (markupsafe 3)
    from markupsafe import _speedups

    _escaped: Callable[[str], str] = _speedups._escape_inner
except (ImportError, AttributeError):  # pragma: no cover - no speedups, or an older markupsafe
    _escaped = _chain

_BIDI = re.compile(f"[{BIDI_CONTROLS}]")


def page_text(value: Any) -> str:
    """`escape(isolate(value))` as text: a string that holds no bidi control escaped by
    markupsafe's own replacement of its five characters, a `Markup` as it is (what
    `isolate` and `escape` leave of it), anything else as before."""
    if type(value) is str and (value.isascii() or not _BIDI.search(value)):
        return _escaped(value)
    if type(value) is Markup:  # its own text (`escape` would copy it: a page's JSON-LD)
        return value
    return escape(isolate(value))


class _PageCodeGenerator(CodeGenerator):
    """Jinja's code generator, with `{{ value }}` in an autoescaped, non-volatile
    context written as one `environment.page_text(value)` call."""

    def _ours(self, frame: Frame) -> bool:
        return bool(
            not frame.eval_ctx.volatile
            and frame.eval_ctx.autoescape
            and self.environment.finalize is isolate
        )

    def _output_child_pre(self, node: Expr, frame: Frame, finalize: Any) -> None:
        if self._ours(frame):
            self.write("environment.page_text(")
        else:
            super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node: Expr, frame: Frame, finalize: Any) -> None:
        if self._ours(frame):
            self.write(")")
        else:
            super()._output_child_post(node, frame, finalize)


class PageEnvironment(Environment):
    """An `Environment` whose templates write values through `page_text` (module
    docstring); otherwise Jinja's."""

    code_generator_class = _PageCodeGenerator
    page_text = staticmethod(page_text)
