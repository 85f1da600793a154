"""Links between chapters never break the strict build of part of the book (follow-up to issue 15).

A params file running only some of the blog study's chapters links a sibling chapter only when it
has it (``about.glue_links``), and the summary run built alone shows its links to the blog and lab
chapters as words (``pipeline/sphinx_site.py``), saying so in the build log. Both builds are the
strict one (``-W -n``): any unknown document fails them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from .projects import cli, executed_study, make_study_project, study_env

pytestmark = [pytest.mark.e2e]

RUN = "part-of-blog"
# The smallest what-if grids and draws that still run the chapter (the point is its link, not its numbers).
WHATIF_OVERRIDES = {
    "n_draws": 200,
    "one_way_ms": [0.1, 1.0],
    "link_mbit_per_s": [1000.0, 10000.0],
    "bs_kib": [64, 2048],
}


def _text(html: str) -> str:
    """The page's words, tags removed and white space folded."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _page(project: Path, run: str, notebook: str) -> str:
    return (project / "_build/html/runs" / run / f"{notebook}.html").read_text(encoding="utf-8")


def test_fit_and_whatif_alone_build_strict_linking_only_chapters_they_have(tmp_path: Path) -> None:
    project = make_study_project(tmp_path / "p")
    doc = {
        "title": "Part of the blog study",
        "dataset": "blog-2023",
        "notebooks": ["fit", {"whatif": WHATIF_OVERRIDES}],
    }
    (project / "params" / f"{RUN}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))

    proc = cli(project, "book", RUN, "--jobs", "2", timeout=900)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    fit, whatif = _page(project, RUN, "fit"), _page(project, RUN, "whatif")
    assert "validation chapter's nested selection" in _text(fit)  # the sentence stays, as words
    assert 'href="validation.html' not in fit  # the run has no validation chapter
    assert re.search(r'<a [^>]*href="fit\.html"[^>]*>(?:<[^>]+>)*fit chapter<', whatif)  # it has fit: a link
    record = json.loads((project / ".cache/runs" / RUN / "fit.json").read_text(encoding="utf-8"))
    assert f"params/{RUN}.yaml" in record["reads"]  # a change of the run's chapters re-executes the page


def test_summary_run_alone_builds_strict_with_other_runs_chapters_as_words(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root, _ = executed_study(tmp_path_factory, tmp_path_factory.mktemp("summary-alone") / "study")

    proc = cli(root, "book", "summary", "--jobs", "2", env=study_env(root), timeout=900)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    front, conclusions = _page(root, "summary", "front"), _page(root, "summary", "conclusions")
    assert "Projections · model." in _text(front)  # the blog's chapters, named in words
    assert "(latency against delay)" in _text(conclusions)  # the lab's chapter, named in words
    for page in (front, conclusions):
        assert not re.findall(r'href="\.\./(?!\.\./)([^/"]+)/', page)  # no link into another run's pages
    assert 'href="conclusions.html"' in front  # the run's own chapter stays a link
    log = ((root / "_build/html").resolve().parents[1] / "build.log").read_text(encoding="utf-8")
    for chapter in ("blog-2023/projections", "blog-2023/whatif", "lab-iscsi-2026/lab_latency"):
        assert f"link to runs/{chapter} shown as words" in log  # said, not silently dropped
