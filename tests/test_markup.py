"""Escaping by construction: hostile strings pass through MyST + Sphinx and come out as literal text."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

from iscsi_report.core import markup
from iscsi_report.core.errors import ReportError

HOSTILE = [
    "veth<img src=x onerror=document.title='pwned'>",
    "<script>document.title='pwned'</script>",
    "fio-3.33`</code><b>x</b>`",
    "``double`` and ```triple```",
    "{download}`x <../../etc/passwd>` {glue:text}`n`",
    "$x^2$ and $$y$$ **bold** _em_ [link](http://192.0.2.1/) ![i](http://192.0.2.1/x.png)",
    "a | b || c \\| d \\",
    "# heading\n- item\n```\nfence",
    "&lt;script&gt; &amp; &#60;b&#62;",
    ":::{note}\nx\n:::",
    "{{ substitution }} %comment <!-- c -->",
    "trailing backtick`",
    " spaced ",
    "tab\there\x1b[31mansi\x00nul\u202eRTL",
]
# The book's own extension (literal quotes) and MyST extensions, plus math: more syntax to break out of.
CONF = """extensions = ["myst_parser", "iscsi_report.pipeline.sphinx_site"]
myst_enable_extensions = ["colon_fence", "deflist", "substitution", "dollarmath"]
"""
FILE_NAMES = ["plain.txt", "a`b<c>.txt", "q&a [1] (x).txt", "h#1 |pipe|.txt", "back\\slash.txt", "ü ñ.txt"]


def _build(tmp: Path, body: str) -> str:
    """Render ``body`` as a MyST page with Sphinx; fail on any warning; return the page's article HTML."""
    src = tmp / "src"
    src.mkdir(exist_ok=True)
    (src / "conf.py").write_text(CONF)
    (src / "index.md").write_text(body, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "-b", "html", str(src), str(tmp / "out")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    page = (tmp / "out" / "index.html").read_text(encoding="utf-8")
    return page[page.index('<div class="body"') : page.index('<div class="sphinxsidebar"')]


def _texts(fragment: str, tag: str) -> list[str]:
    """Text content of every ``<tag>`` in the fragment, markup removed and entities decoded."""
    inner = re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", fragment, flags=re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", s)) for s in inner]


def _words(s: str) -> str:
    return " ".join(s.split())


def test_text_and_code_show_every_hostile_string_literally(tmp_path: Path) -> None:
    prose = [f"P{i}: {markup.text(s)}" for i, s in enumerate(HOSTILE)]
    codes = [f"C{i}: {markup.code(s)}" for i, s in enumerate(HOSTILE)]
    rows = [[markup.text(s), markup.code(s, in_table=True)] for s in HOSTILE]
    body = "# Page\n\n" + "\n\n".join(prose + codes) + "\n\n" + "\n".join(markup.table(["t", "c"], rows))
    out = _build(tmp_path, body)
    for markup_made in ("<script", "<img", "<b>", 'class="math', "<h2", "<li", "<pre", "admonition", "<!--"):
        assert markup_made not in out, markup_made
    paragraphs = [_words(p) for p in _texts(out, "p")]
    for i, s in enumerate(HOSTILE):  # HTML shows runs of white space as one space: compare words
        assert _words(f"P{i}: {markup.flat(s)}") in paragraphs
        assert _words(f"C{i}: {markup.flat(s)}") in paragraphs
    cells = [_words(c) for c in _texts(out, "td")]
    assert cells == [_words(markup.flat(s)) for s in HOSTILE for _ in range(2)]


def test_links_download_hostile_file_names(tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    for i, name in enumerate(FILE_NAMES):
        (files / name).write_bytes(f"file {i}".encode())
    rows = [[markup.link(f"files/{name}", f"../files/{name}")] for name in FILE_NAMES]
    out = _build(tmp_path, "# Page\n\n" + "\n".join(markup.table(["file"], rows)))
    anchors = re.findall(r'<a class="reference download internal"[^>]*href="([^"]+)"[^>]*>(.*?)</a>', out)
    assert [html.unescape(re.sub(r"<[^>]+>", "", label)) for _, label in anchors] == [
        f"files/{n}" for n in FILE_NAMES
    ]
    from urllib.parse import unquote

    for i, (href, _) in enumerate(anchors):
        assert (tmp_path / "out" / unquote(html.unescape(href))).read_bytes() == f"file {i}".encode()


@pytest.mark.parametrize("name", ["100%.txt", "p%41.txt", "new\nline.txt", "nul\x00.txt"])
def test_unlinkable_file_names_are_refused_by_name(name: str) -> None:
    with pytest.raises(ReportError, match="cannot be linked from the book; rename it"):
        markup.link(name, f"../{name}")


def test_code_fence_outgrows_the_longest_backtick_run() -> None:
    assert markup.code("a``b") == "```a``b```"
    assert markup.code("`x`") == "`` `x` ``"
    assert markup.code("a|b", in_table=True) == "`a\\|b`"
    assert markup.text("<a>") == "\\<a\\>"


NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
# Ways a chapter could put a value into markdown or HTML without the escaping path.
UNESCAPED = re.compile(r"\b(Markdown|HTML)\(\s*(f[\"']|[^)]*\.format\(|[^)]*%\s)")


def test_no_chapter_interpolates_values_into_markdown_or_html_itself() -> None:
    chapters = sorted(NOTEBOOKS.glob("*.md"))
    assert chapters
    offenders = []
    for p in chapters:
        text = p.read_text(encoding="utf-8")
        for m in UNESCAPED.finditer(text):  # \s spans line breaks: Markdown(\n    f"...") is caught
            offenders.append(f"{p.name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}")
    assert offenders == [], "use report.markdown(template, *values) instead"
    assert UNESCAPED.search('display(Markdown(\n  f"x {v}"))')
    assert UNESCAPED.search("HTML('<b>{}</b>'.format(v))")


def test_flat_fast_path_shows_what_the_character_rule_shows() -> None:
    """Every character of the first planes, alone and amid text, flattens as the per-character rule says."""
    for code_point in [*range(0x3000), 0xFEFF, 0x1D400]:
        ch = chr(code_point)
        for value in (ch, f"a{ch}b", f"plain text {ch}"):
            assert markup.flat(value) == "".join(markup._visible(c) for c in value), repr(value)
    assert markup.flat("tab\there\x7fdel") == "tab here\\u007fdel"  # DEL is not printable: escaped
    assert markup.flat(12.5) == "12.5"
