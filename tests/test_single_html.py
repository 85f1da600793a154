"""The single-file report on a small hand-made site: pages in order, links made anchors, nothing outside."""

from __future__ import annotations

from pathlib import Path

import pytest

from iscsi_report.pipeline import single_html

PAGE = """<html><head><title>{title}</title>
<link rel="stylesheet" type="text/css" href="{up}_static/site.css?v=1" />
{next}</head><body><article class="bd-article" role="main">{body}</article></body></html>"""


def _page(site: Path, rel: str, title: str, body: str, next_page: str = "") -> None:
    """Write one page of a Sphinx-like site."""
    up = "../" * rel.count("/")
    link = f'<link rel="next" title="n" href="{next_page}" />' if next_page else ""
    path = site / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PAGE.format(title=title, up=up, next=link, body=body))


# A formula as pipeline/mathml.py writes it: MathML the single file keeps as it is, with no script.
FORMULA = (
    '<span class="math notranslate nohighlight"><math xmlns="http://www.w3.org/1998/Math/MathML" '
    'display="inline"><mrow><mi>t</mi><mo>&#x0003D;</mo><mn>2</mn></mrow></math></span>'
)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """index.html redirecting to intro.html, then runs/r/net.html: images, downloads, links of each kind."""
    site = tmp_path / "html"
    (site / "_static").mkdir(parents=True)
    (site / "_static" / "dot.png").write_bytes(b"\x89PNG fake")
    (site / "_static" / "site.css").write_text(
        "a { background: url(dot.png); } @font-face { src: url(gone.woff); }"
    )
    (site / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=intro.html" />')
    intro = f'<h1 id="intro">Intro</h1><p>See <a href="runs/r/net.html#rtt">rtt</a>, {FORMULA}.</p>'
    _page(site, "intro.html", "Intro", intro, "runs/r/net.html")
    (site / "_downloads").mkdir()
    (site / "_downloads" / "t.csv").write_text("a,b\n1,2\n")
    (site / "_downloads" / "raw.txt").write_text("64 bytes from ...\n")
    body = (
        '<h1>Network<a class="headerlink" href="#network">#</a></h1><section id="rtt"><p>'
        '<img src="../../_static/dot.png" alt="dot"/> <a href="../../_downloads/t.csv">table</a> '
        '<a href="../../_downloads/raw.txt">raw</a> <a href="https://www.rfc-editor.org/rfc/rfc7143">RFC</a> '
        '<a href="../../intro.html">back</a> <a href="../../search.html">search</a></p>'
        '<script type="application/json" class="iscsi-chart-spec">{"href": "x", "id": "keep"}</script>'
        "</section>"
    )
    _page(site, "runs/r/net.html", "Network", body)
    return site


def test_pages_follow_the_redirect_then_rel_next(site: Path) -> None:
    assert single_html.reading_order(site) == ["intro.html", "runs/r/net.html"]


def test_the_file_refers_to_nothing_outside_itself(site: Path) -> None:
    text, pages = single_html.single_html(site, "Report", "v1")
    assert pages == ["intro.html", "runs/r/net.html"]
    assert single_html.outside_references(text) == []
    assert '<section class="page" id="p-runs-r-net">' in text
    assert 'href="#p-runs-r-net--rtt"' in text and 'id="p-runs-r-net--rtt"' in text  # ids unique per page
    assert 'href="#p-intro"' in text  # a link to a page is a link to its section
    assert 'src="data:image/png;base64,' in text
    assert 'href="data:text/csv;base64,YSxiCjEsMgo=" download="t.csv"' in text
    assert 'data-url="https://www.rfc-editor.org/rfc/rfc7143"' in text
    assert "not in this file (see the release archive): _downloads/raw.txt" in text
    assert "not in this file (see the release archive): search.html" in text
    assert '{"href": "x", "id": "keep"}' in text  # script text is never rewritten
    assert 'url("data:image/png;base64,' in text and "url(gone.woff)" not in text
    assert '<a href="#p-runs-r-net">Network</a>' in text  # the contents, titled by each page's h1
    assert FORMULA in text and "mathjax" not in text.lower()  # formulas stay MathML, no math script


@pytest.mark.parametrize(
    "snippet",
    [
        '<script src="https://cdn.example/x.js"></script>',
        '<img src="_images/a.png">',
        '<a href="other.html#x">x</a>',
        '<link rel="stylesheet" href="style.css">',
        "<style>body { background: url(bg.png) }</style>",
        "<style>@import 'theme.css';</style>",
        '<div style="background: url(http://x/y.png)"></div>',
        '<img srcset="a.png 2x">',
    ],
)
def test_outside_references_are_found(snippet: str) -> None:
    assert single_html.outside_references(f"<html><body>{snippet}</body></html>")


def test_anchors_data_uris_and_script_text_are_not_outside() -> None:
    text = '<a href="#x">x</a><img src="data:image/png;base64,AA=="><script>var s = "<a href=\'http://x\'>";</script>'
    assert single_html.outside_references(text) == []


def test_script_text_cannot_close_its_element() -> None:
    assert single_html.script('a = "</script><b>"') == '<script>a = "<\\/script><b>"</script>'


def test_a_link_leading_out_of_the_site_is_never_embedded(site: Path) -> None:
    (site.parent / "secret.csv").write_text("password\n")
    rewriter = single_html._Rewriter(site, "intro.html", {"intro.html"})
    assert rewriter.url("href", "../secret.csv").startswith('title="not in this file')
    assert rewriter.url("src", "../secret.csv").startswith('title="not in this file')
