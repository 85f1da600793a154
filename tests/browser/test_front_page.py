"""The front page answers the blog's three questions in numbers on the first screen (issue 15).

The study executed once per test run (``e2e.projects.executed_study_to_book``, every params file,
with the provenance pages' tool cache) is copied and built into a site; with
``ISCSI_REPORT_SITE_ROOT`` set, the project's own site is read instead. Headless Chromium opens the
site's index at 1400 x 900 px, the network blocked as everywhere.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from e2e.projects import cli, executed_study_to_book, study_env

from browser.harness import CHROMIUM, CHROMIUM_ARGS, PAGE_TIMEOUT_MS, SITE_ROOT_ENV, Gate, browser_or_skip

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

FIRST_SCREEN = {"width": 1400, "height": 900}
QUESTIONS = ("1. Why only", "2. What does wired", "3. What does an SSD")
NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the executed study, built into a site; or $ISCSI_REPORT_SITE_ROOT."""
    browser_or_skip()
    if os.environ.get(SITE_ROOT_ENV):
        return Path(os.environ[SITE_ROOT_ENV]).resolve()
    root, _ = executed_study_to_book(tmp_path_factory, tmp_path_factory.mktemp("front") / "study")
    result = cli(root, "book", "--jobs", "2", env=study_env(root), timeout=3600)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


@pytest.fixture(scope="module")
def first_screen(server: str) -> list[dict[str, object]]:
    """Each answer paragraph of the page the site opens on: its text, glued numbers, links, box."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=FIRST_SCREEN)
            page.route("**/*", Gate())
            page.goto(server + "index.html", wait_until="load", timeout=PAGE_TIMEOUT_MS)
            page.wait_for_selector("article h1", timeout=PAGE_TIMEOUT_MS)
            found: list[dict[str, object]] = page.evaluate(
                """() => [...document.querySelectorAll('article p')]
                    .filter(p => p.querySelector('strong'))
                    .map(p => ({
                        text: p.innerText,
                        numbers: [...p.querySelectorAll('.pasted-text')].map(s => s.innerText),
                        links: [...p.querySelectorAll('a.internal')].map(a => a.getAttribute('href')),
                        top: p.getBoundingClientRect().top,
                        bottom: p.getBoundingClientRect().bottom,
                        url: location.pathname,
                    }))"""
            )
        finally:
            browser.close()
    return found


def _answer(found: list[dict[str, object]], question: str) -> dict[str, object]:
    matches = [p for p in found if str(p["text"]).startswith(question)]
    assert len(matches) == 1, (question, [str(p["text"])[:40] for p in found])
    return matches[0]


def test_the_site_opens_on_the_front_page(first_screen: list[dict[str, object]]) -> None:
    assert first_screen and all(str(p["url"]).endswith("runs/summary/front.html") for p in first_screen)


@pytest.mark.parametrize("question", QUESTIONS)
def test_each_question_is_answered_in_numbers_on_the_first_screen(
    first_screen: list[dict[str, object]], question: str
) -> None:
    answer = _answer(first_screen, question)
    assert float(str(answer["bottom"])) <= FIRST_SCREEN["height"], f"{question!r} ends below the first screen"
    pasted = [str(n).strip() for n in answer["numbers"]]  # type: ignore[attr-defined]
    numbers = [n for n in pasted if NUMBER.fullmatch(n.replace(",", ""))]
    assert len(numbers) >= 2, pasted  # glued words (the binding bound's name) may sit beside them
    assert not [n for n in pasted if n.lower() in ("", "nan", "none", "null", "inf")], pasted
    links = [str(h) for h in answer["links"]]  # type: ignore[attr-defined]
    assert any("runs/" in h or h.endswith(".html") for h in links), f"{question!r} links no chapter: {links}"
    assert re.search(r"published|reconstructed|measured", str(answer["text"])), "no provenance label"
