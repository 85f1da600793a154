"""The reconstructed-data banner: on every blog chapter, naming what is published and what invented."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from iscsi_report.analyses.provenance import published_ids
from iscsi_report.presentation import provenance

ROOT = Path(__file__).resolve().parents[1]
BLOG_RAW = ROOT / "data" / "raw" / "blog-2023"


def _blog_notebooks() -> list[str]:
    params = yaml.safe_load((ROOT / "params" / "blog-2023.yaml").read_text())
    return list(params["notebooks"])


def test_banner_names_published_and_invented_inputs_of_the_blog_dataset():
    text = provenance.banner_markdown(BLOG_RAW, lambda p: p.relative_to(ROOT).as_posix())
    assert text.startswith(":::{admonition}") and text.rstrip().endswith(":::")
    title, klass = text.splitlines()[:2]
    assert title == ":::{admonition} " + provenance.BANNER_TITLE and klass == ":class: warning dropdown"
    assert "data/raw/blog-2023/README.md" in text and "generation_targets.yaml" in text
    iostat = next(line for line in text.splitlines() if line.startswith("- **iostat**"))
    # 6 libiscsi runs have a published CPU share; the other 17 of 23 iostat files are invented.
    assert "CPU share of 6 runs" in iostat and "other 17 of the 23 iostat files" in iostat
    assert "Invented:" in iostat
    for tool in provenance.TOOLS:
        assert f"- **{tool}**: published:" in text


def test_banner_counts_follow_the_generation_targets(tmp_path: Path):
    raw = Path(shutil.copytree(BLOG_RAW, tmp_path / "blog-2023"))  # the manifest's files must exist
    ids = [i for i in published_ids(BLOG_RAW) if not i.endswith("64k.cpu_pct")]
    (raw / "generation_targets.yaml").write_text(yaml.safe_dump({"published_ids": ids}))
    text = provenance.banner_markdown(raw, lambda p: p.name, ["iostat"])
    assert "CPU share of 5 runs" in text and "other 18 of the 23" in text


def test_no_banner_on_measured_data(tmp_path: Path):
    (tmp_path / "manifest.yaml").write_text(
        yaml.safe_dump({"dataset": "x", "reconstructed": False, "files": []})
    )
    assert provenance.banner_markdown(tmp_path, lambda p: p.name) == ""


def test_unknown_tool_is_refused():
    with pytest.raises(Exception, match="unknown tool 'tcpdump'"):
        provenance.banner_markdown(BLOG_RAW, lambda p: p.name, ["tcpdump"])


@pytest.mark.parametrize("name", _blog_notebooks())
def test_every_blog_chapter_opens_with_the_banner(name: str):
    text = (ROOT / "notebooks" / f"{name}.md").read_text()
    cells = re.findall(r"```\{code-cell\}\n(.*?)```", text, re.S)
    # The first cell after the parameters (papermill injects them right there) shows the banner.
    assert ":tags: [parameters]" in cells[0]
    assert "provenance.banner(" in cells[1]
    before = re.sub(
        r"```\{code-cell\}.*?```",
        "",
        text[: text.rindex("```{code-cell}", 0, text.index("provenance.banner("))],
        flags=re.S,
    )
    assert len(re.findall(r"^#+ ", before, re.M)) == 1, "only the page title may precede the banner"
