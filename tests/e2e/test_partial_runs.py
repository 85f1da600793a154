"""A user's run of only some chapters builds under the strict build: a chapter links a sibling
chapter only when the run has it (plain words otherwise), and its title names the run (issue 15)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from .projects import LAB, cli, make_project

pytestmark = [pytest.mark.e2e]

RUN = "mine"
SHORT_TITLE = "my veth pair"


def test_network_alone_builds_strict_with_its_links_to_absent_chapters_as_words(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", runs={RUN: (LAB, ["network"])})
    params = project / "params" / f"{RUN}.yaml"
    params.write_text(yaml.safe_dump({**yaml.safe_load(params.read_text()), "short_title": SHORT_TITLE}))

    proc = cli(project, "book", RUN, "--jobs", "1")  # the strict build: -W -n, any warning fails

    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = (project / "_build/html/runs" / RUN / "network.html").read_text(encoding="utf-8")
    h1 = re.search(r"<h1>(.*?)</h1>", page, re.S)
    assert h1 and re.sub(r"<[^>]+>", "", h1.group(1)).startswith("Network: round-trip latency")
    assert SHORT_TITLE in re.sub(r"<[^>]+>", "", h1.group(1))  # the run, not typed in the notebook
    assert re.search(rf"<title>[^<]*{SHORT_TITLE}", page)
    assert "the model chapter counts" in page  # the sentence stays, as words
    assert 'href="model.html' not in page  # and links no page the run does not have
    record = json.loads((project / ".cache/runs" / RUN / "network.json").read_text(encoding="utf-8"))
    assert f"params/{RUN}.yaml" in record["reads"]  # a change of the run's chapters re-executes the page
    _assert_downloads_and_mathml(project, page)


def _assert_downloads_and_mathml(project: Path, page: str) -> None:
    """Issue 25: the chapter offers the executed notebook and its source; formulas are MathML, no MathJax."""
    site = project / "_build/html"
    links = dict(re.findall(r'<a href="([^"]+)" download>([^<]+)</a>', page))
    by_words = {words: (site / "runs" / RUN / href).resolve() for href, words in links.items()}
    executed = project / "book/runs" / RUN / "network.ipynb"
    assert by_words["executed notebook (.ipynb)"].read_bytes() == executed.read_bytes()
    assert by_words["MyST source (.md)"].read_bytes() == (project / "notebooks/network.md").read_bytes()
    cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    assert any(c.get("outputs") for c in cells)  # the executed notebook, not the text one
    equation = (site / "model_equation.html").read_text(encoding="utf-8")
    assert 'id="equation-eq-write"' in equation and "<math " in equation
    assert not any("mathjax" in p.read_text(encoding="utf-8").lower() for p in site.rglob("*.html"))
    assert not (site / "_static" / "mathjax").exists()
