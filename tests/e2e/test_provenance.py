"""The provenance pages: per dataset, raw files by digest, size and in-file tool version; on the
summary, run parameters, package versions, git state, build time; and pages that do not defeat the
build's no-change skip."""

from __future__ import annotations

import hashlib
import json
import subprocess
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from fast_yaml import load_yaml

from iscsi_report.core import markup
from iscsi_report.core.dataset import update_checksums
from iscsi_report.core.errors import ReportError
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import provenance

from .projects import LAB, cli, make_project

pytestmark = [pytest.mark.e2e]

BUILT_AT = "2026-01-02T03:04:05Z"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project copy with the lab dataset and one run overriding a parameter."""
    root = make_project(tmp_path / "proj", runs={LAB: (LAB, ["network", "storage"])})
    params = root / "params" / f"{LAB}.yaml"
    doc = yaml.safe_load(params.read_text())
    doc["notebooks"] = ["network", {"storage": {"ci_level": 0.9}}]
    params.write_text(yaml.safe_dump(doc))
    return root


def _dataset_page(project: Path, dataset: str = LAB) -> str:
    """The generated page of one dataset (the raw files are listed there, not on the summary)."""
    return provenance.pages(Project.at(project), BUILT_AT)[provenance.dataset_doc(dataset)]


def _row(page: str, rel: str) -> str:
    """The table row of the page that links ``rel``."""
    rows = [ln for ln in page.splitlines() if ln.startswith(f"| [{markup.text(rel)}](<path:")]
    assert len(rows) == 1, rel
    return rows[0]


def test_every_raw_file_has_digest_size_and_in_file_tool_version(project: Path) -> None:
    page = _dataset_page(project)
    raw = project / "data" / "raw" / LAB
    manifest = load_yaml(raw / "manifest.yaml")
    expected_version = {
        "fio": "fio-3.33",
        "iperf3": "iperf 3.12",
        "iostat": "no sysstat version; header: kernel 6.18.44-fc-v595, host vm",
        "ping": "no version printed",
    }
    for entry in manifest["files"]:
        path = raw / entry["path"]
        row = _row(page, f"data/raw/{LAB}/{entry['path']}")
        assert hashlib.sha256(path.read_bytes()).hexdigest() in row
        assert f"| {path.stat().st_size:,} |" in row
        assert f"| {entry['tool']} |" in row and markup.text(expected_version[entry["tool"]]) in row
        assert "| yes |" in row  # the bytes match the manifest
    assert "| ping | iputils |" in _row(page, f"data/raw/{LAB}/ping/veth-2ms.txt")


def test_tool_version_is_read_from_the_content_not_the_name(project: Path) -> None:
    raw = project / "data" / "raw" / LAB
    fio_file = raw / "fio" / "local-64k.json"
    doc = json.loads(fio_file.read_text())
    doc["fio version"] = "fio-9.99-test"
    fio_file.write_text(json.dumps(doc))
    update_checksums(raw)
    page = _dataset_page(project)
    row = _row(page, f"data/raw/{LAB}/fio/local-64k.json")
    assert f"| fio | {markup.text('fio-json')} | {markup.text('fio-9.99-test')} |" in row
    assert markup.text("fio-3.33") in _row(page, f"data/raw/{LAB}/fio/local-128k.json")


def test_manifest_tool_that_contradicts_the_content_is_refused(project: Path) -> None:
    manifest = project / "data" / "raw" / LAB / "manifest.yaml"
    doc = load_yaml(manifest)
    entry = next(e for e in doc["files"] if e["path"] == "iostat/local-64k.txt")
    entry["tool"] = "ping"
    entry.setdefault("labels", {})["interval_s"] = 1  # a well-formed ping entry, wrong only in its tool
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(
        ReportError,
        match=r"iostat/local-64k.txt: the content is iostat output but the "
        r"manifest says ping",
    ):
        provenance.render(Project.at(project), BUILT_AT)


def test_a_changed_raw_file_is_flagged_against_its_manifest(project: Path) -> None:
    ping = project / "data" / "raw" / LAB / "ping" / "veth-200ms.txt"
    ping.write_text(ping.read_text().replace("time=0.0", "time=0.1", 1))
    row = _row(_dataset_page(project), f"data/raw/{LAB}/ping/veth-200ms.txt")
    assert "| **NO** |" in row


def test_run_parameters_packages_and_build_time(project: Path) -> None:
    page = provenance.render(Project.at(project), BUILT_AT)
    assert f"- Built at: {markup.text(BUILT_AT)}" in page
    assert "| `storage` | `ci_level` | `0.9` |" in page  # the override, not the default 0.95
    assert f"| `network` | `dataset` | `{LAB}` |" in page
    assert "project_root" not in page and str(project) not in page  # no machine-specific paths
    for name in provenance.KEY_PACKAGES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "not installed"
        assert f"| `{name}` | {markup.text(version)} |" in page


def test_pages_differ_between_builds_only_in_the_build_time(project: Path) -> None:
    p = Project.at(project)
    first, second = provenance.pages(p, BUILT_AT), provenance.pages(p, "2027-12-31T23:59:59Z")
    assert list(first) == list(second) == [provenance.PAGE, provenance.dataset_doc(LAB)]
    assert first[provenance.dataset_doc(LAB)] == second[provenance.dataset_doc(LAB)]
    first_lines, second_lines = first[provenance.PAGE].splitlines(), second[provenance.PAGE].splitlines()
    diff = [(a, b) for a, b in zip(first_lines, second_lines, strict=True) if a != b]
    assert diff == [
        (f"- Built at: {markup.text(BUILT_AT)}", f"- Built at: {markup.text('2027-12-31T23:59:59Z')}")
    ]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_git_state_names_the_commit_and_dirtiness(project: Path) -> None:
    assert provenance.git_state(project) == "not a git checkout"
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "snapshot")
    head = _git(project, "rev-parse", "HEAD")
    assert provenance.git_state(project) == f"{head} (clean)"
    (project / "book" / "intro.md").write_text("# changed\n")
    assert provenance.git_state(project) == f"{head} (dirty: uncommitted changes or untracked files)"
    assert provenance.git_state(project / "book") == "not a git checkout"  # a sub-folder is not the root


def test_generated_page_keeps_the_no_change_skip(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Build twice: the page (with its source date) is regenerated only when something it shows changed."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767323045")  # 2026-01-02T03:04:05Z
    toc_path = project / "book" / "_toc.yml"
    toc = {
        "format": "jb-book",
        "root": "intro",
        "parts": [{"caption": "About", "chapters": [{"file": "provenance"}]}],
    }
    toc_path.write_text(yaml.safe_dump(toc, sort_keys=False))
    for rel in ("network", "storage"):  # nothing executed: this test is about the build alone
        assert not (project / "book" / "runs" / LAB / f"{rel}.ipynb").exists()
    first = cli(project, "build")
    assert first.returncode == 0, first.stdout + first.stderr
    html = (project / "_build" / "html" / "provenance.html").read_text()
    assert "Provenance" in html and "Built at: 2026-01-02T03:04:05Z" in html
    assert (project / "book" / "provenance.md").is_file()
    dataset_page = f"{provenance.dataset_doc(LAB)}.html"
    assert f'href="{dataset_page}"' in html  # the summary links the dataset's own page
    dataset_html = (project / "_build" / "html" / dataset_page).read_text()
    assert f'id="{markup.raw_dataset_label(LAB)}"' in dataset_html  # the chapters' links land here
    assert "veth-200ms.txt" in dataset_html and "veth-200ms.txt" not in html
    again = cli(project, "build")
    assert "up to date" in again.stdout, again.stdout + again.stderr
    params = project / "params" / f"{LAB}.yaml"  # a change only the provenance page shows
    params.write_text(params.read_text().replace("0.9", "0.8"))
    changed = cli(project, "build")
    assert changed.returncode == 0 and "book: built" in changed.stdout, changed.stdout + changed.stderr
    assert (
        '<code class="docutils literal notranslate"><span class="pre">0.8</span></code>'
        in (project / "_build" / "html" / "provenance.html").read_text()
    )


def test_source_date_comes_from_the_environment_or_the_commit_never_the_clock(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert provenance.source_date_epoch(project) is None
    assert provenance.build_time(project).startswith("not recorded")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-03-04T05:06:07Z")
    _git(project, "commit", "-q", "-m", "snapshot")
    assert provenance.source_date_epoch(project) == int(_git(project, "log", "-1", "--format=%ct"))
    assert provenance.build_time(project) == "2026-03-04T05:06:07Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert provenance.build_time(project) == "1970-01-01T00:00:00Z"


def test_only_datasets_a_run_uses_are_listed(project: Path) -> None:
    unused = project / "data" / "raw" / "unused-set"
    unused.mkdir()
    (unused / "manifest.yaml").write_text((project / "data" / "raw" / LAB / "manifest.yaml").read_text())
    p = Project.at(project)
    assert provenance.dataset_dirs(p) == [project / "data" / "raw" / LAB]
    pages = provenance.pages(p, BUILT_AT)
    assert list(pages) == [provenance.PAGE, provenance.dataset_doc(LAB)]
    assert not any("unused" in page for page in pages.values())


def test_tables_of_a_deleted_run_are_not_listed(project: Path) -> None:
    gone = project / "results" / "deleted-run"
    gone.mkdir(parents=True)
    (gone / "t.csv").write_text("a\n1\n")
    p = Project.at(project)
    assert provenance.run_tables(p) == []  # nothing executed: no run record names a table
    assert "deleted" not in provenance.render(p, BUILT_AT)


HOSTILE = "<img src=x onerror=document.title='pwned'>`|"


def test_strings_from_manifest_and_params_are_escaped(project: Path) -> None:
    raw = project / "data" / "raw" / LAB
    manifest = load_yaml(raw / "manifest.yaml")
    manifest["title"] = f"title {HOSTILE}"
    (raw / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    update_checksums(raw)
    params = project / "params" / f"{LAB}.yaml"
    doc = yaml.safe_load(params.read_text())
    doc["notebooks"] = ["network", {"model": {"cpu_scenario": f"s{HOSTILE}"}}]
    params.write_text(yaml.safe_dump(doc))
    page = provenance.render(Project.at(project), BUILT_AT)
    assert markup.text(f"title {HOSTILE}") in _dataset_page(project).splitlines()
    assert f"| `model` | `cpu_scenario` | {markup.code(f's{HOSTILE}', in_table=True)} |" in page
