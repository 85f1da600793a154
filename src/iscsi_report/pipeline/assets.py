"""Sphinx extension: the site's own copy of the chart runtime, so no page needs a CDN.

- Charts: a chapter shows each chart as ``<figure class="iscsi-chart">`` holding the static SVG and
  the Vega-Lite spec (see ``presentation/report.py``). Pages with such a figure load a small deferred
  script (``charts.js``) that makes each figure focusable, names it as a static image that becomes
  interactive, and only on the reader's first pointer, touch, focus or click on that chart fetches
  one bundle of Vega, Vega-Lite and vega-embed made by vl-convert
  (``_static/iscsi-charts/vega-bundle.js``) and draws it, hidden over the SVG, which it replaces at
  no less than the SVG's height once drawn (issue 25: a page that is only read never fetches or runs
  the 305 kB runtime; nothing shifts). Charts are drawn one at a time, each in a task of its own.
  Without JavaScript, and until then, the SVG stays. The single-file export inlines the bundle, so
  there no fetch is needed. The bundle is written once per build (and cached per vl-convert
  version and snippet under ``.cache/assets`` of the project, or the folder :data:`ASSET_CACHE_ENV`
  names, since making it takes seconds).
- Math needs no script: formulas are MathML written at build time (:mod:`iscsi_report.pipeline.mathml`);
  ``site.css`` gives them room (display formulas scroll inside their column on a phone).

Enabled by ``sphinx: extra_extensions: [iscsi_report.pipeline.assets]`` in ``_config.yml``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Any

from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.digest import sha256_bytes

CHART_MARKER = 'class="iscsi-chart"'
CHART_DIR = "iscsi-charts"
BUNDLE = f"{CHART_DIR}/vega-bundle.js"
SCRIPT = f"{CHART_DIR}/charts.js"
STYLE = f"{CHART_DIR}/site.css"  # every page: chart figures, tooltips, phone layout
TABLE_STYLE = f"{CHART_DIR}/tables.css"  # every page: the chapters' tables (pipeline/tables.css)
# A folder that keeps the bundle for every project built on this machine (the test suite's many
# project copies share one); unset, each project keeps it in its own ``.cache/assets``.
ASSET_CACHE_ENV = "ISCSI_REPORT_ASSET_CACHE"

# What the bundle publishes (vl-convert names its three libraries so inside the snippet).
BUNDLE_SNIPPET = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"
# Around vl-convert's bundle: a function, so that its top-level names (``_``, ``t``...) do not clash
# with the theme's globals; the bundle publishes ``vegaEmbed``, ``vega`` and ``vegaLite`` on ``window``.
BUNDLE_WRAPPER = ("(function () {\n", "\n})();\n")
CHARTS_JS = """\
(function () {
  "use strict";
  // The runtime sits next to this script; a page that inlines both (the single file) has it already.
  var here = document.currentScript && document.currentScript.src;
  var bundleUrl = here ? new URL("vega-bundle.js", here).href : "";
  var runtime = null;
  var queue = Promise.resolve();
  // What wakes a chart: the reader's pointer, finger or keyboard on it. Until then the page never
  // fetches the 305 kB runtime, so a phone's first paint and main thread stay free of it.
  var WAKE_EVENTS = ["pointerenter", "touchstart", "focusin", "click"];
  var HINT = " (a static image: hover, touch or focus it to make it interactive)";
  function fetchRuntime() {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = bundleUrl;
      script.onload = resolve;
      script.onerror = function () { reject(new Error("chart runtime not loaded: " + bundleUrl)); };
      document.head.appendChild(script);
    });
  }
  function loadRuntime() {
    if (typeof window.vegaEmbed === "function") { return Promise.resolve(); }
    if (!runtime) { runtime = fetchRuntime(); }
    return runtime;
  }
  function pause() { return new Promise(function (resolve) { setTimeout(resolve, 0); }); }
  // The live chart is drawn hidden on top of the static SVG, then takes its place at no less than
  // its height: the text below does not move (no layout shift).
  function swap(figure, live, fallback, alt) {
    if (fallback) {
      live.style.minHeight = fallback.getBoundingClientRect().height + "px";
      fallback.remove();
    }
    live.classList.remove("iscsi-chart-drawing");
    if (alt) { live.setAttribute("role", "img"); live.setAttribute("aria-label", alt); }
    figure.removeAttribute("aria-label");  // named by its caption again, as without JavaScript
    figure.classList.add("iscsi-chart-ready");
  }
  function draw(figure) {
    var specNode = figure.querySelector("script.iscsi-chart-spec");
    var live = figure.querySelector(".iscsi-chart-live");
    var fallback = figure.querySelector(".iscsi-chart-fallback");
    if (!specNode || !live || typeof window.vegaEmbed !== "function") { return Promise.resolve(); }
    var spec = JSON.parse(specNode.textContent);
    var alt = fallback ? fallback.getAttribute("alt") : "";
    live.classList.add("iscsi-chart-drawing");
    return window.vegaEmbed(live, spec, {actions: false, renderer: "svg"}).then(function () {
      swap(figure, live, fallback, alt);
    }).catch(function (err) {
      live.remove();
      console.warn("chart left as a static image:", err);
    });
  }
  // One chart at a time, each in a task of its own (the page stays responsive between charts).
  function enqueue(figure) {
    queue = queue.then(loadRuntime).then(pause).then(function () { return draw(figure); })
      .catch(function (err) { console.warn("chart left as a static image:", err); });
  }
  // Focusable, and saying so in its name, so a keyboard reader can wake it too.
  function arm(figure) {
    var fallback = figure.querySelector(".iscsi-chart-fallback");
    if (!figure.querySelector(".iscsi-chart-live")) { return; }
    figure.setAttribute("tabindex", "0");
    figure.setAttribute("aria-label", (fallback ? fallback.getAttribute("alt") : "Chart") + HINT);
    function wake() {
      WAKE_EVENTS.forEach(function (name) { figure.removeEventListener(name, wake); });
      enqueue(figure);
    }
    WAKE_EVENTS.forEach(function (name) { figure.addEventListener(name, wake, {passive: true}); });
  }
  function start() { document.querySelectorAll("figure.iscsi-chart").forEach(arm); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
"""

CHARTS_CSS = """\
figure.iscsi-chart { margin: 1.5em 0; max-width: 100%; position: relative; }
figure.iscsi-chart .iscsi-chart-live { display: block; width: 100%; max-width: 100%; overflow-x: auto; }
/* Drawn out of the flow and unseen over the static SVG until ready (charts.js): nothing shifts. */
figure.iscsi-chart .iscsi-chart-live.iscsi-chart-drawing {
  position: absolute; top: 0; left: 0; visibility: hidden;
}
figure.iscsi-chart .iscsi-chart-fallback { display: block; max-width: 100%; height: auto; }
figure.iscsi-chart figcaption { font-size: 0.9em; margin-top: 0.4em; }
#vg-tooltip-element { max-width: min(90vw, 420px); }
/* Formulas are MathML (pipeline/mathml.py) drawn by the browser: a font with a MATH table stretches
   braces and fences (the first one the reader's system has; without one, braces stay small). */
math {
  font-family: math, "STIX Two Math", "Cambria Math", "Latin Modern Math", "DejaVu Math TeX Gyre", serif;
  font-size: 1.1em;
}
/* The theme lays div.math out as a row (number on the right); the formula's box takes the rest and
   scrolls a formula wider than the column, never clipped. Inside it the formula is inline, so it is
   centred when it fits and starts at the left edge when it does not (block MathML centres always). */
div.math > .iscsi-math {
  flex: 1 1 auto; min-width: 0; overflow-x: auto; overflow-y: hidden;
  text-align: center; padding-bottom: 0.2rem;
}
div.math > .iscsi-math > math { display: math; }
div.math { margin: 0.75em 0; }  /* MathJax's display formulas had this room above and below */
/* latex2mathml aligns split columns with MathML 3 attributes that MathML Core (Chromium) ignores. */
mtd[columnalign="left"] { text-align: left; }
mtd[columnalign="right"] { text-align: right; }
mtable[rowspacing] > mtr > mtd { padding-top: 0.2em; padding-bottom: 0.2em; }
/* A dropdown admonition (a chapter's provenance details) is drawn closed from the first paint, as
   sphinx-togglebutton closes it once the page has loaded: else the page jumps when it closes
   (Lighthouse measured a layout shift of 0.49 on a phone). Without JavaScript it stays open
   (pipeline/sphinx_site.py adds the <noscript> rule). */
.admonition.dropdown:not(.toggle) { padding-bottom: 0; }
.admonition.dropdown:not(.toggle) .admonition-title { margin-bottom: 0; }
.admonition.dropdown:not(.toggle) .admonition-title ~ * {
  height: 0; margin: 0; opacity: 0; visibility: hidden; display: block;
}
/* On a phone no page scrolls sideways: Sphinx's index stacks its two columns, and a long word or
   inline code (a path, a digest, a commit) may break anywhere instead of pushing the page wider. */
@media (max-width: 600px) {
  table.indextable, table.indextable tbody, table.indextable tr, table.indextable td {
    display: block; width: 100%;
  }
  .bd-article { overflow-wrap: anywhere; }
  code.literal, code.literal span.pre { white-space: normal; overflow-wrap: anywhere; }
  div.math > .iscsi-math > math { font-size: 0.8em; }  /* the write latency fits a 390 px phone */
}
"""


def vega_bundle(cache_dir: Path | None) -> str:
    """Vega, Vega-Lite and vega-embed as one script from vl-convert (cached per its version and the
    snippet and wrapper it is made with, so a changed one never meets an old bundle)."""
    import vl_convert as vlc

    made_from = sha256_bytes("\0".join((BUNDLE_SNIPPET, *BUNDLE_WRAPPER)).encode())[:12]
    key = f"{importlib.metadata.version('vl-convert-python')}-{made_from}"
    cached = cache_dir / f"vega-bundle-{key}.js" if cache_dir else None
    if cached and cached.is_file():
        return cached.read_text(encoding="utf-8")
    opening, closing = BUNDLE_WRAPPER
    bundle = opening + str(vlc.javascript_bundle(BUNDLE_SNIPPET)) + closing
    if cached:
        write_atomic(cached, bundle)
    return bundle


def write_chart_assets(static_dir: Path, cache_dir: Path | None) -> None:
    """Write the chart bundle, script and style sheet into ``static_dir/iscsi-charts``."""
    write_atomic(static_dir / BUNDLE, vega_bundle(cache_dir))
    write_atomic(static_dir / SCRIPT, CHARTS_JS)
    write_atomic(static_dir / STYLE, CHARTS_CSS)
    write_atomic(static_dir / TABLE_STYLE, Path(__file__).with_name("tables.css").read_text(encoding="utf-8"))


def _cache_dir(app: Any) -> Path | None:
    """The folder :data:`ASSET_CACHE_ENV` names, else ``<project>/.cache/assets`` when the book sits
    in a project folder, else no cache."""
    if os.environ.get(ASSET_CACHE_ENV):
        return Path(os.environ[ASSET_CACHE_ENV])
    project = Path(app.srcdir).resolve().parent
    return project / ".cache" / "assets" if (project / ".cache").is_dir() else None


def _on_page(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """On the pages that show a chart, and only there, load the script that loads the chart runtime."""
    if CHART_MARKER in str(context.get("body", "")):
        app.add_js_file(SCRIPT, loading_method="defer")  # it fetches the bundle on a first touch of a chart


def _on_finished(app: Any, exception: BaseException | None) -> None:
    """After a successful HTML build, write the chart runtime into ``_static``."""
    if exception is not None or app.builder.format != "html":
        return
    static_dir = Path(app.outdir) / "_static"
    write_chart_assets(static_dir, _cache_dir(app))


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point."""
    app.add_css_file(STYLE)
    app.add_css_file(TABLE_STYLE)
    app.connect("html-page-context", _on_page)
    app.connect("build-finished", _on_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
