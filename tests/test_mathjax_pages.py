"""Formulas are MathML written at build time and no page loads MathJax (issue 25), on small built sites."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sphinx.cmd.build import build_main

from iscsi_report.pipeline import mathml

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*ROOT.glob("notebooks/*.md"), *ROOT.glob("book/*.md")])
ROLE = re.compile(r"\{math\}`([^`]+)`")  # MyST's inline {math}`...`
BLOCK = re.compile(r"^```\{math\}\n(?P<body>.*?)^```", re.M | re.S)  # a {math} directive
OPTION = re.compile(r"^:\w+:.*\n", re.M)  # a directive option line (``:label: eq-write``)
CONF = (
    "extensions = ['myst_parser', 'iscsi_report.pipeline.sphinx_site', 'iscsi_report.pipeline.mathml']\n"
    "html_math_renderer = 'mathml'\n"
)
PAGES = {
    "index.rst": "Root\n====\n\n.. toctree::\n\n   formula\n   prose\n   book_formulas\n",
    "formula.rst": (
        "Formula\n=======\n\nA write takes :math:`t = 2 d + s / b`, see :eq:`eq-two`.\n\n"
        ".. math::\n   :label: eq-two\n\n   T = {} & a \\\\\n     & + b_{\\mathrm{u}}\n"
    ),
    "prose.rst": "Prose\n=====\n\nNo formula here.\n",
}
UNSUPPORTED = r"\begin{aligned} a &= b \end{aligned}"  # latex2mathml 3.81 sets its ``&`` as raw text
MATHML_NS = 'xmlns="http://www.w3.org/1998/Math/MathML"'
MATH_ELEMENT = re.compile(r"<math\b[^>]*>")


def book_formulas() -> list[str]:
    """Every formula the book's sources write: inline roles and display blocks (options dropped)."""
    found: list[str] = []
    for source in SOURCES:
        text = source.read_text(encoding="utf-8")
        found += ROLE.findall(text)
        found += [OPTION.sub("", m["body"]).strip() for m in BLOCK.finditer(text)]
    return found


def formulas_page(formulas: list[str]) -> str:
    """A MyST page holding each formula once, inline or as a block as in the book."""
    parts = ["# Book formulas\n"]
    block = [f"```{{math}}\n{f}\n```\n" if "\n" in f or "\\\\" in f else "" for f in formulas]
    parts += [b or f"{{math}}`{f}`\n" for b, f in zip(block, formulas, strict=True)]
    return "\n".join(parts)


def build(src: Path, pages: dict[str, str]) -> int:
    """Build ``pages`` as an HTML site under ``src/_build`` with the project's extensions; the exit code."""
    (src / "conf.py").write_text(CONF)
    for name, text in pages.items():
        (src / name).write_text(text)
    return build_main(["-q", "-W", "-b", "html", str(src), str(src / "_build")])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site: a root, a page with a numbered equation, a page without math, the book's formulas."""
    src = tmp_path_factory.mktemp("site")
    assert build(src, {**PAGES, "book_formulas.md": formulas_page(book_formulas())}) == 0
    return src / "_build"


def test_the_sources_hold_the_formulas_the_test_expects() -> None:
    """The equation page's and the fit chapter's formulas are found (else the checks below check nothing)."""
    formulas = book_formulas()
    assert any("underbrace" in f for f in formulas) and any(r"\beta" in f for f in formulas)
    assert len(formulas) > 10


@pytest.mark.parametrize("page", ["index", "formula", "prose", "book_formulas"])
def test_no_page_loads_mathjax(site: Path, page: str) -> None:
    assert "mathjax" not in (site / f"{page}.html").read_text().lower()


def test_every_book_formula_is_mathml_in_the_page(site: Path) -> None:
    page = (site / "book_formulas.html").read_text()
    assert len(MATH_ELEMENT.findall(page)) == len(book_formulas())
    article = page.split('<article class="bd-article"')[-1].split("</article>")[0]
    assert "\\" not in re.sub(r"<[^>]+>", "", article)  # no TeX left as text


def test_a_numbered_equation_keeps_its_number_link_and_target(site: Path) -> None:
    page = (site / "formula.html").read_text()
    assert 'id="equation-eq-two"' in page
    assert '<span class="eqno">(1)<a class="headerlink" href="#equation-eq-two"' in page
    assert 'href="#equation-eq-two"' in page.split('class="math notranslate nohighlight"')[1]  # the :eq: link
    assert f'<math {MATHML_NS} display="inline">' in page
    assert "<mtable" in page  # the line break set as split
    box = f'<div class="{mathml.SCROLL_CLASS}" tabindex="0"><math {MATHML_NS} display="block">'
    assert box in page  # a display formula scrolls in a box a keyboard reaches


def test_an_upright_single_letter_stays_upright() -> None:
    assert '<mi mathvariant="normal">&#x00075;</mi>' in mathml.to_mathml(r"b_{\mathrm{u}}", display=False)


@pytest.mark.parametrize("latex", [UNSUPPORTED, r"\frobnicate{x}", r"\frac{a}{"])
def test_a_formula_the_converter_cannot_render_is_an_error(latex: str) -> None:
    with pytest.raises(mathml.MathError, match=re.escape(repr(latex))):
        mathml.to_mathml(latex, display=True)


def test_the_build_fails_naming_the_page_and_the_formula(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = "Bad\n===\n\nBefore :math:`x` and\n\n.. math::\n\n   " + UNSUPPORTED + "\n"
    assert build(tmp_path, {"index.rst": bad}) != 0
    said = capsys.readouterr().err
    assert "index: latex2mathml" in said and repr(UNSUPPORTED) in said
