"""kg.publish.pageenv: a template renders the same text in a `PageEnvironment` as in
Jinja's own `Environment` (decision 0065), for kg's templates and a project's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import DictLoader, Environment, StrictUndefined
from markupsafe import Markup, escape

from kg.display import BIDI_CONTROLS, isolate
from kg.publish.entries import is_kg_template, person_entry
from kg.publish.pageenv import PageEnvironment, _chain, page_text
from kg.publish.site import AuthorView, LinkView, PublicationView
from kg.publish.site import _environment as _site_environment

# text the escape and the isolate act on, among plain letters and other scripts
_TEXT = st.text(alphabet=st.sampled_from(list("aZ &<>'\"é名\u05d0\n") + list(BIDI_CONTROLS)))
_VALUE = st.one_of(
    _TEXT, _TEXT.map(Markup), st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False)
)

# every place a value reaches the output: a block read back by `self`, a set block, a
# macro and its caller, a filter block, an `{% autoescape %}` switch, a loop, `~`
_TEMPLATES = {
    "base.html": "<t>{% block title %}{% endblock %}</t>{{ self.title() }}|"
    "{% block main %}{% endblock %}",
    "page.html": """{% extends "base.html" %}{% block title %}{{ a }}{% endblock %}
{% block main %}{% set s %}[{{ b }}]{% endset %}{{ s }}{{ s|upper }}
{% macro m(x) %}<{{ x }}>{% endmacro %}{{ m(a) }}
{% macro n(x) %}<{{ x }}>{{ caller() }}{% endmacro %}{% call n(b) %}{{ c }}{% endcall %}
{% filter lower %}{{ a }}{{ c }}{% endfilter %}
{% autoescape false %}{{ a }}{{ b }}{% endautoescape %}{{ a ~ b }}
{% for x in [a, b, c] %}{{ loop.index }}{{ x }}{% endfor %}{{ (a|string)[:3] }}{% endblock %}""",
}


def _environment(cls: type[Environment]) -> Environment:
    return cls(
        loader=DictLoader(_TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        finalize=isolate,
    )


PLAIN, FAST = _environment(Environment), _environment(PageEnvironment)


@settings(max_examples=150, deadline=None)
@given(_VALUE)
def test_page_text_is_the_escaped_isolated_value(value) -> None:
    assert page_text(value) == str(escape(isolate(value)))
    if isinstance(value, str) and not isinstance(value, Markup):
        assert _chain(value) == str(escape(value))


@settings(max_examples=60, deadline=None)
@given(_VALUE, _VALUE, _VALUE)
def test_a_template_renders_as_in_jinja(a, b, c) -> None:
    plain = PLAIN.get_template("page.html").render(a=a, b=b, c=c)
    assert FAST.get_template("page.html").render(a=a, b=b, c=c) == plain


def test_the_output_is_one_call_only_where_the_page_escapes() -> None:
    """The generated code calls `page_text` for autoescaped output, and Jinja's own
    `str(finalize(...))` where the template turns autoescape off."""
    source = FAST.compile(_TEMPLATES["page.html"], raw=True)
    assert "environment.page_text(" in source
    assert "escape(environment.finalize(" not in source
    assert "yield str(environment.finalize(" in source
    rendered = FAST.get_template("page.html").render(a="<a>", b="\u202eb", c=Markup("<i>"))
    assert "&lt;a&gt;" in rendered and "&#x2068;&#x202E;b&#x2069;" in rendered
    assert "<i>" in rendered and "<a>" in rendered  # the autoescape-off block


_WORDS = st.one_of(st.none(), _TEXT, st.just(""))
_AUTHOR = st.builds(AuthorView, _TEXT, _WORDS, st.booleans(), st.booleans(), _WORDS)
_VIEW = st.builds(
    PublicationView,
    key=_TEXT,
    title=_TEXT,
    authors=st.lists(_AUTHOR, max_size=4).map(tuple),
    venue=_TEXT,
    year=st.one_of(st.none(), st.integers(1990, 2030)),
    status=st.sampled_from(["", "Preprint", "Accepted"]),
    notes=st.lists(_TEXT, max_size=2).map(tuple),
    equal_note=_WORDS,
    links=st.lists(st.builds(LinkView, _TEXT, _WORDS), max_size=2).map(tuple),
)
SITE = _site_environment()


@settings(max_examples=80, deadline=None)
@given(_VIEW)
def test_the_person_entry_is_kgs_template(view) -> None:
    template = SITE.get_template("person-entry.html.j2")
    assert is_kg_template(template, "person-entry.html.j2")
    assert person_entry(view) == template.render(pub=view)


def test_a_projects_entry_template_is_rendered_by_jinja(tmp_path) -> None:
    (tmp_path / "person-entry.html.j2").write_text("<li>{{ pub.title }} (mine)</li>\n")
    template = _site_environment(tmp_path).get_template("person-entry.html.j2")
    assert not is_kg_template(template, "person-entry.html.j2")
    assert not is_kg_template(SITE.get_template("person.html.j2"), "person-entry.html.j2")
