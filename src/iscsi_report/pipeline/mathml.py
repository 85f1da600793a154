"""Sphinx extension: every formula typeset as MathML when the book is built, so no page loads MathJax.

Issue 25: MathJax 3 (its script, fonts and main-thread typesetting) held the equation and fit
chapters below Lighthouse's phone goal, and their formulas sit on the first screen, so loading it
later would not help. Here each ``math`` (inline) and ``math_block`` (display) node is converted
with `latex2mathml <https://pypi.org/project/latex2mathml/>`_ and written into the page as
``<math>``, which Chromium, Firefox and Safari draw natively (MathML Core) and screen readers read.
A display formula is wrapped in a keyboard-reachable box that scrolls when it is wider than the
column. A numbered equation keeps Sphinx's number and permalink; a display formula with ``\\\\`` is set as
``\\begin{split}`` (as Sphinx's MathJax renderer does), one ``<math>`` per blank-line-separated part.

No silent fallback: a formula latex2mathml cannot convert, or converts leaving a TeX command or a
stray ``&`` in the output (it passes unknown commands through as text), stops the build with a
:class:`MathError` that names the page and the formula.

Registering this renderer makes Sphinx choose it over its default (MathJax), whose script then
is never added; ``html_math_renderer: mathml`` in ``_config.yml`` says so explicitly. Enabled by
``sphinx: extra_extensions: [iscsi_report.pipeline.mathml]``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from docutils import nodes  # type: ignore[import-untyped]  # docutils ships no types; Sphinx's own are typed
from latex2mathml.converter import convert
from sphinx.errors import SphinxError
from sphinx.locale import _
from sphinx.util.math import get_node_equation_number

from iscsi_report.core.errors import ReportError

RENDERER = "mathml"  # the html_math_renderer name _config.yml selects
MATHML_NS = "{http://www.w3.org/1998/Math/MathML}"
LINE_BREAK = r"\\"  # TeX's new line: a display part holding one is set as ``split``
PART_SEPARATOR = "\n\n"  # Sphinx's convention: blank lines separate the equations of one block
# latex2mathml writes an upright single letter (``\mathrm{u}``) as a character reference in a plain
# ``<mi>``, which MathML draws in italics (a one-letter ``<mi>``); several letters get
# ``mathvariant="normal"``. This gives the single letter the same.
UPRIGHT_LETTER = re.compile(r"<mi>(&#x0*(?:4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]);)</mi>", re.IGNORECASE)
# A display formula sits in a box of this class that scrolls sideways when the formula is wider than
# the column (a phone), a keyboard stop so it can be scrolled without a pointer (site.css styles it).
SCROLL_CLASS = "iscsi-math"
WHITESPACE = re.compile(r"\s+")  # TeX reads a new line as a space; latex2mathml does not after ``\``


class MathError(ReportError, SphinxError):
    """A formula the converter cannot render: the build stops, naming the page and the formula."""

    category = "Formula not rendered"


def _checked(mathml: str, latex: str) -> str:
    """``mathml`` if it is well-formed MathML with no TeX left in it, else a :class:`MathError`."""
    try:
        root = ET.fromstring(mathml)
    except ET.ParseError as error:
        raise MathError(f"latex2mathml wrote malformed MathML for {latex!r} ({error})") from error
    leftover = [t for e in root.iter() for t in (e.text, e.tail) if t and "\\" in t]
    if root.tag != f"{MATHML_NS}math" or leftover:
        raise MathError(f"latex2mathml left TeX untranslated in {latex!r}: {' '.join(leftover)!r}")
    return mathml


def to_mathml(latex: str, display: bool) -> str:
    """One formula as a ``<math>`` element (``display="block"`` or inline), else a :class:`MathError`."""
    tex = WHITESPACE.sub(" ", latex).strip()
    try:
        mathml = convert(tex, display="block" if display else "inline")
    except Exception as error:  # latex2mathml raises its own and plain Python errors alike
        raise MathError(f"latex2mathml cannot render {latex!r} ({type(error).__name__}: {error})") from error
    return _checked(UPRIGHT_LETTER.sub(r'<mi mathvariant="normal">\1</mi>', mathml), latex)


def display_parts(latex: str) -> list[str]:
    """The equations of a display block, each with a line break set as ``split`` (Sphinx's MathJax rule)."""
    parts = [p for p in latex.split(PART_SEPARATOR) if p.strip()]
    return [rf"\begin{{split}}{p}\end{{split}}" if LINE_BREAK in p else p for p in parts]


def _on_page(translator: Any, latex: str, display: bool) -> str:
    """:func:`to_mathml`, a failure naming the page being written."""
    try:
        return to_mathml(latex, display)
    except MathError as error:
        raise MathError(f"{translator.builder.current_docname}: {error}") from error


def visit_math(self: Any, node: nodes.math) -> None:
    """An inline formula as ``<span class="math"><math>…</math></span>``."""
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_on_page(self, node.astext(), display=False) + "</span>")
    raise nodes.SkipNode


def visit_displaymath(self: Any, node: nodes.math_block) -> None:
    """A display formula as ``<div class="math">``, with its number and permalink when it has one."""
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["number"]:
        self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    latex = node.astext()
    parts = [latex] if node["nowrap"] else display_parts(latex)
    formulas = "".join(_on_page(self, part, display=True) for part in parts)
    self.body.append(f'<div class="{SCROLL_CLASS}" tabindex="0">{formulas}</div></div>\n')
    raise nodes.SkipNode


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point."""
    app.add_html_math_renderer(RENDERER, (visit_math, None), (visit_displaymath, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
