"""A dataset whose every raw-derived field carries a script payload, built and opened in Chromium.

The payloads sit in raw file content (an unparsed ping line, the fio and iperf3 version strings,
the iostat host name), in the manifest (a label value, the dataset title and name), in a params
string value and in a raw file's name. (A dataset folder's name is refused by the params reader
unless made of letters, digits, '.', '_' and '-', so it carries none.) Each payload, if it ran, would set
``window.__xss`` or ``document.title``; the test opens every page of the built site and asserts
that none ran and that the shown fields read literally, payload included.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from e2e.projects import LAB, ROOT, cli, make_project
from fast_yaml import load_yaml

from browser.harness import (
    CHAPTERS,
    PAGE_TIMEOUT_MS,
    add_toc_part,
    browser_or_skip,
    chromium,
    page_files,
    serve,
)
from iscsi_report.core.dataset import update_checksums

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

RUN = "hostile"
TITLE = "Hostile page"


def payload(tag: str) -> str:
    """Markup that, if a browser parsed it, would set ``window.__xss`` to ``tag`` (no '/' or '()')."""
    return f"""<img src=x onerror="window.__xss='{tag}';document.title='pwned'">`{{download}}`x`"""


def script(tag: str) -> str:
    """A script element doing the same (for text fields, where '/' is allowed)."""
    return f"<script>window.__xss='{tag}'</script>"


NAME = f"name {payload('name')}"
DATASET_TITLE = f"title {payload('title')} {script('title')}"
LABEL = f"veth{payload('label')}"
FIO_VERSION = f"fio-3.33{payload('fio')}{script('fio')}"
IPERF_VERSION = f"iperf 3.12{payload('iperf3')}"
IOSTAT_HOST = f"vm{payload('iostat')}"
PING_LINE = f"garbage {payload('ping')} {script('ping')}"
PARAM = f"iscsi-libiscsi{payload('param')}"
FILE_NAME = f"veth-2ms {payload('file')}.txt"
# Fields that must appear on some page exactly as written.
SHOWN = [NAME, DATASET_TITLE, LABEL, FIO_VERSION, IPERF_VERSION, IOSTAT_HOST, PARAM, FILE_NAME]


def _hostile_dataset(root: Path) -> None:
    """Turn the lab copy into the hostile dataset (folder, files, manifest), checksums refreshed."""
    raw = root / "data" / "raw" / LAB
    fio = raw / "fio" / "local-64k.json"
    doc = json.loads(fio.read_text())
    doc["fio version"] = FIO_VERSION
    fio.write_text(json.dumps(doc, indent=1))
    iperf = raw / "iperf3" / "veth-tcp.json"
    doc = json.loads(iperf.read_text())
    doc["start"]["version"] = IPERF_VERSION
    iperf.write_text(json.dumps(doc, indent=1))
    for iostat in (raw / "iostat").glob("*.txt"):
        iostat.write_text(iostat.read_text().replace("(vm)", f"({IOSTAT_HOST})", 1))
    ping = raw / "ping" / "veth-200ms.txt"
    lines = ping.read_text().splitlines(keepends=True)
    ping.write_text("".join([*lines[:5], PING_LINE + "\n", *lines[5:]]))
    (raw / "ping" / "veth-2ms.txt").rename(raw / "ping" / FILE_NAME)
    manifest = load_yaml(raw / "manifest.yaml")
    manifest["dataset"] = NAME
    manifest["title"] = DATASET_TITLE
    for entry in manifest["files"]:
        if entry["path"] == "ping/veth-2ms.txt":
            entry["path"] = f"ping/{FILE_NAME}"
        if "network" in entry.get("labels", {}):
            entry["labels"]["network"] = LABEL
    (raw / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True))
    update_checksums(raw)


@pytest.fixture(scope="module")
def hostile_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile project, executed and built; its live site folder."""
    browser_or_skip()
    root = make_project(tmp_path_factory.mktemp("hostile") / "proj", runs={RUN: (LAB, CHAPTERS)})
    _hostile_dataset(root)
    shutil.copytree(ROOT / "data" / "published", root / "data" / "published")  # the model chapter reads it
    params = root / "params" / f"{RUN}.yaml"
    doc = yaml.safe_load(params.read_text())
    doc["notebooks"] = ["network", "storage", {"model": {"cpu_scenario": PARAM}}]
    params.write_text(yaml.safe_dump(doc, allow_unicode=True))
    add_toc_part(root, "About this build", ["provenance"])
    result = cli(root, "book", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    return (root / "_build" / "html").resolve()


@pytest.fixture(scope="module")
def hostile_server(hostile_html: Path) -> Iterator[str]:
    """The hostile site served on 127.0.0.1."""
    with serve(hostile_html) as url:
        yield url


@pytest.fixture(scope="module")
def pages(
    hostile_html: Path, hostile_server: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict]:
    """Per page: what the payload flag and the title were after load, and the page's visible text."""
    found: dict[str, dict] = {}
    with chromium(tmp_path_factory.mktemp("chromium-hostile")) as (context, _gate):
        for rel in page_files(hostile_html):
            page = context.new_page()
            page.goto(hostile_server + rel, wait_until="networkidle", timeout=PAGE_TIMEOUT_MS)
            page.wait_for_timeout(200)  # let any onerror handler of a failed image fire
            found[rel] = page.evaluate(
                "() => ({xss: window.__xss === undefined ? null : String(window.__xss),"
                " title: document.title, text: document.body.innerText})"
            )
            page.close()
    return found


def test_the_harness_would_see_a_payload_run(
    hostile_server: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Control: the same payload, put into a page unescaped, does set the flag in this browser."""
    with chromium(tmp_path_factory.mktemp("chromium-control")) as (context, _gate):
        page = context.new_page()
        page.goto(hostile_server + "intro.html", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        page.evaluate("h => { document.body.insertAdjacentHTML('beforeend', h); }", payload("control"))
        page.wait_for_function("() => window.__xss === 'control'", timeout=PAGE_TIMEOUT_MS)


def test_no_payload_runs_on_any_page(pages: dict[str, dict]) -> None:
    assert {"intro.html", "provenance.html", f"runs/{RUN}/network.html"} <= set(pages), sorted(pages)
    ran = {rel: (p["xss"], p["title"]) for rel, p in pages.items() if p["xss"] or p["title"] == "pwned"}
    assert ran == {}


@pytest.mark.parametrize("field", SHOWN, ids=lambda s: s.split("<")[0].strip() or "field")
def test_every_hostile_field_is_shown_literally(pages: dict[str, dict], field: str) -> None:
    text = "\n".join(p["text"] for p in pages.values())
    assert " ".join(field.split()) in " ".join(text.split())
