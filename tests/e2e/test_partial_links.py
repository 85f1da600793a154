"""Links between chapters never break the strict build of part of the book (follow-up to issue 15).

A params file running only some of the blog study's chapters links a sibling chapter only when it
has it (``about.glue_links``), and the summary run, built without the blog and lab runs, shows its
links to their chapters as words (``pipeline/sphinx_site.py``), saying so in the build log. One
strict build (``-W -n``) of both shows it: any unknown document fails it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from .projects import cli, executed_study_to_book, study_env

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


def test_part_of_the_blog_and_the_summary_alone_build_strict_linking_only_chapters_they_have(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # One strict build of two partial runs (a copy of the executed study, so summary's notebooks
    # are cached, with the provenance tool cache): `part-of-blog` has fit and whatif only; blog-2023
    # and the lab are not in it.
    root, _ = executed_study_to_book(tmp_path_factory, tmp_path_factory.mktemp("partial-links") / "study")
    doc = {
        "title": "Part of the blog study",
        "dataset": "blog-2023",
        "notebooks": ["fit", {"whatif": WHATIF_OVERRIDES}],
    }
    (root / "params" / f"{RUN}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))

    proc = cli(root, "book", "summary", RUN, "--only", "--jobs", "2", env=study_env(root), timeout=900)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    fit, whatif = _page(root, RUN, "fit"), _page(root, RUN, "whatif")
    assert "validation chapter's nested selection" in _text(fit)  # the sentence stays, as words
    assert 'href="validation.html' not in fit  # the run has no validation chapter
    assert re.search(r'<a [^>]*href="fit\.html"[^>]*>(?:<[^>]+>)*fit chapter<', whatif)  # it has fit: a link
    record = json.loads((root / ".cache/runs" / RUN / "fit.json").read_text(encoding="utf-8"))
    assert f"params/{RUN}.yaml" in record["reads"]  # a change of the run's chapters re-executes the page

    front, conclusions = _page(root, "summary", "front"), _page(root, "summary", "conclusions")
    assert "Projections · model." in _text(front)  # the blog's chapters, named in words
    assert "(latency against delay)" in _text(conclusions)  # the lab's chapter, named in words
    for page in (front, conclusions):
        linked_runs = set(re.findall(r'href="\.\./(?!\.\./)([^/"]+)/', page))
        assert linked_runs <= {RUN}  # no link into a run the book lacks (the sidebar lists part-of-blog)
    assert 'href="conclusions.html"' in front  # the run's own chapter stays a link
    log = ((root / "_build/html").resolve().parents[1] / "build.log").read_text(encoding="utf-8")
    for chapter in ("blog-2023/projections", "blog-2023/whatif", "lab-iscsi-2026/lab_latency"):
        assert f"link to runs/{chapter} shown as words" in log  # said, not silently dropped
