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
