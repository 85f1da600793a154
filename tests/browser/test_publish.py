"""Publishing ships exactly the site `make book` built and the browser checks passed.

Cheap checks (no browser, no build): the GitHub Actions workflow builds with `make book`, checks
the resolved live folder and uploads that same folder; `make publish` resolves `_build/html` once
and hands that folder to both the check and ghp-import; ghp-import given that folder commits
exactly its files.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def _workflow() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(doc, dict)
    return doc


def test_workflow_builds_with_make_book_on_push_to_main() -> None:
    doc = _workflow()
    triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads the key `on` as True
    assert "main" in triggers["push"]["branches"]
    steps = doc["jobs"]["build"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert "make book" in runs
    assert runs.index("make book") > runs.index("make test")


def test_workflow_checks_and_uploads_the_same_resolved_site() -> None:
    doc = _workflow()
    steps = doc["jobs"]["build"]["steps"]
    by_id = {s["id"]: s for s in steps if "id" in s}
    assert "readlink -f _build/html" in by_id["site"]["run"]
    resolved = "${{ steps.site.outputs.path }}"
    check = next(s for s in steps if "make check-site" in s.get("run", ""))
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert resolved in check["run"] and upload["with"]["path"] == resolved
    assert steps.index(by_id["site"]) < steps.index(check) < steps.index(upload)
    deploy = doc["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])


def _publish_recipe() -> str:
    text = (ROOT / "Makefile").read_text()
    start = text.index("\npublish:")
    end = text.find("\n\n", start + 1)
    return text[start : end if end != -1 else None]


def test_make_publish_checks_and_pushes_the_one_resolved_folder() -> None:
    recipe = _publish_recipe()
    assert 'site="$$(readlink -f _build/html)"' in recipe
    assert 'ISCSI_REPORT_SITE="$$site" $(CHECK_SITE) &&' in recipe  # checked, and only then pushed
    assert recipe.rstrip().endswith('"$$site"') and "ghp-import --no-jekyll" in recipe
    assert "$(MAKE)" not in recipe  # `make -n publish` must stay a dry run (make runs $(MAKE) lines)


def test_ghp_import_commits_exactly_the_resolved_site(tmp_path: Path) -> None:
    ghp = shutil.which("ghp-import", path=str(ROOT / ".venv" / "bin")) or shutil.which("ghp-import")
    if ghp is None:
        pytest.skip("ghp-import is not installed (pip install -e '.[publish]')")
    repo = tmp_path / "repo"
    site = repo / "_build" / "sites" / "s1" / "_build" / "html"
    (site / "_static").mkdir(parents=True)
    (site / "index.html").write_text("<p>hi</p>")
    (site / "_static" / "x.css").write_text("p{}")
    (repo / "_build" / "html").symlink_to("sites/s1/_build/html")

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    git("init", "-q")
    resolved = (repo / "_build" / "html").resolve()
    identity = {
        f"GIT_{who}_{what}": value
        for who in ("AUTHOR", "COMMITTER")
        for what, value in (("NAME", "t"), ("EMAIL", "t@example.org"))
    }
    subprocess.run(
        [ghp, "--no-jekyll", "--branch", "gh-pages", str(resolved)],
        cwd=repo,
        check=True,
        capture_output=True,
        env={**identity, "PATH": "/usr/bin:/bin"},
    )
    tree = set(git("ls-tree", "-r", "--name-only", "gh-pages").split())
    assert tree == {".nojekyll", "index.html", "_static/x.css"}
