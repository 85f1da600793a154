"""The lab site the browser modules read: built once per test run (all workers), served per module.

The lab copy holds the small real lab dataset's three chapters, the provenance page and the
Reference part (equation, glossary, references). With ``ISCSI_REPORT_SITE_ROOT`` set
(``make check-site``, used by ``make publish`` and CI) the project's own live site is checked
instead: exactly the folder that will be published (``ISCSI_REPORT_SITE``, default ``_build/html``
resolved). The fixtures are module-scoped so that a module may override ``project`` with a site of
its own and still use ``html_dir`` and ``server``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e.projects import LAB, ROOT, cli, make_project

from browser.harness import (
    CHAPTERS,
    SITE_ENV,
    SITE_ROOT_ENV,
    add_toc_part,
    browser_or_skip,
    build_once,
    serve,
)


def _build_lab_site(folder: Path) -> Path:
    """A lab copy (with its Reference part) plus the generated provenance page, executed and built."""
    root = make_project(folder / "proj", runs={LAB: (LAB, CHAPTERS)})
    shutil.copytree(ROOT / "data" / "published", root / "data" / "published")  # the model chapter reads it
    add_toc_part(root, "About this build", ["provenance"])  # make_project gave it the Reference part
    result = cli(root, "book", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project whose site is checked: the lab copy (built once per run) or $ISCSI_REPORT_SITE_ROOT."""
    browser_or_skip()
    if os.environ.get(SITE_ROOT_ENV):
        return Path(os.environ[SITE_ROOT_ENV]).resolve()
    return build_once(tmp_path_factory, "lab-site", _build_lab_site)


@pytest.fixture(scope="module")
def html_dir(project: Path) -> Path:
    """The site folder served: $ISCSI_REPORT_SITE if set, else the live ``_build/html`` resolved."""
    chosen = Path(os.environ.get(SITE_ENV) or project / "_build" / "html").resolve()
    assert (chosen / "index.html").is_file(), f"no built site at {chosen}"
    return chosen


@pytest.fixture(scope="module")
def server(html_dir: Path) -> Iterator[str]:
    """The site folder served on 127.0.0.1 from a thread."""
    with serve(html_dir) as url:
        yield url
