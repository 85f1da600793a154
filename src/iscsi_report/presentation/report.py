"""What a chapter notebook calls to show things: tables saved as CSV, charts as offline figures, glue.

The batch runner injects ``run_name``, ``dataset``, ``project_root`` and ``results_dir`` into each
notebook; :func:`start` turns them into a :class:`Context` that writes every shown table to
``results_dir/<table>.csv`` (the runner moves it to ``results/<run>/`` on success) and links it
for download from the page.

Everything shown goes through one escaping path: tables are rendered by :func:`html_table`
(:mod:`iscsi_report.presentation.tables`: human headers from :mod:`~iscsi_report.presentation.columns`, every
cell and header HTML-escaped, a table id derived from the table's name rather than a random one),
text by :func:`markdown` (every value escaped by :mod:`iscsi_report.core.markup`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.core import markup
from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.measurements import NOTES
from iscsi_report.core.paths import Project
from iscsi_report.presentation import columns as cols
from iscsi_report.presentation import tables

CSV_FLOAT_FORMAT = "%.10g"  # fixed, so two builds from the same inputs give byte-identical CSVs
# A raw folder with more files than this read by one chapter is shown as one line (its count and a
# link to the dataset's provenance page, where each file is listed): a page of links stays light.
RAW_FILES_LISTED_PER_FOLDER = 12


@dataclass(frozen=True)
class Context:
    """Paths of one notebook execution: where raw data is, where tables go, how the page links."""

    run_name: str
    dataset: str
    project_root: Path
    results_dir: Path

    @property
    def project(self) -> Project:
        """The project's layout (:mod:`iscsi_report.core.paths`), the one the pipeline uses too."""
        return Project(self.project_root)

    @property
    def raw_dir(self) -> Path:
        """The dataset's raw folder, ``data/raw/<dataset>``."""
        return self.project.dataset_dir(self.dataset)

    @property
    def published_dir(self) -> Path:
        """Numbers quoted from the source documents, ``data/published``."""
        return self.project.published_dir

    @property
    def page_dir(self) -> Path:
        """Folder of the executed notebook inside the book: ``book/runs/<run>``."""
        return self.project.run_pages_dir(self.run_name)

    def link_to(self, target: Path) -> str:
        """Relative POSIX path from this page to ``target``, for MyST links and downloads."""
        return Path(os.path.relpath(target, self.page_dir)).as_posix()

    def table_link(self, name: str) -> str:
        """Link from the page to the published CSV ``results/<run>/<name>.csv``."""
        return self.link_to(self.project.run_results_dir(self.run_name) / f"{name}.csv")

    def table(
        self,
        df: pd.DataFrame,
        name: str,
        *,
        caption: str = "",
        decimals: int = 3,
        columns: list[str] | None = None,
        preview_rows: int | None = None,
        dash_note: str | None = None,
        summary: pd.DataFrame | None = None,
    ) -> None:
        """Write ``df`` to ``<results_dir>/<name>.csv``, then show it for a reader with a download link.

        ``columns``: the columns the page shows, in order, at most :data:`tables.WIDE_COLUMNS` (default:
        identifying columns first, detail columns and the rest of a wide table left to the collapsed
        full table); ``preview_rows``: rows shown
        before the full table (default: all, or the first ten of a long table); ``dash_note``: what a
        dash (a missing value) means in this table; ``summary``: a shorter frame shown instead, the
        full table collapsed below it.
        """
        write_csv(df, self.results_dir / f"{name}.csv")
        from IPython.display import HTML, display

        if caption:
            markdown("**{}**", caption)
        shown = html_table(
            df,
            name,
            decimals,
            columns=columns,
            preview_rows=preview_rows,
            dash_note=dash_note,
            summary=summary,
            caption=caption,
        )
        display(HTML(shown))
        display_markdown(markup.link(f"Download {name}.csv", self.table_link(name)))

    def raw_links(self, paths: list[Path] | None = None) -> None:
        """Show download links to the raw files this chapter read (default: every file it opened).

        With ``paths`` given, the reader notes the page read and shows (``notes.yaml``) are linked too.
        """
        from iscsi_report.core.ingest.textio import files_read

        read = files_read()
        if paths is not None:
            given = set(paths)
            paths = [*paths, *(p for p in read if p.name == NOTES and p not in given)]
        display_markdown(self.raw_links_markdown(paths if paths is not None else read))

    def raw_links_markdown(self, paths: list[Path]) -> str:
        """The raw files as one collapsed ``<details>`` block (its summary counts the files).

        Each file is a download link, except in a dataset folder holding more than
        :data:`RAW_FILES_LISTED_PER_FOLDER` of them: that folder is one line with its count and a link to
        the dataset's provenance page, which gives every file's sha256 and a download (a chapter
        of a thousand links weighed megabytes and slowed every build).
        """
        chosen = sorted(paths)
        if not chosen:
            return "No raw file was read."
        items: list[str] = []
        for folder, files in _by_folder(chosen).items():
            dataset = self._dataset_of(folder)
            if dataset is not None and len(files) > RAW_FILES_LISTED_PER_FOLDER:
                items.append(self._folder_item(folder, dataset, len(files)))
            else:
                items += ["- " + markup.link(self._rel(p), self.link_to(p)) for p in files]
        noun = "file" if len(chosen) == 1 else "files"
        summary = f"<summary>Raw {noun} this chapter read ({len(chosen):,})</summary>"
        # Blank lines around the list: markdown resumes between the two raw HTML blocks.
        return "\n".join(['<details class="iscsi-raw-files">', summary, "", *items, "", "</details>"])

    def _rel(self, path: Path) -> str:
        """``path`` relative to the project, as a reader sees it."""
        return path.relative_to(self.project_root).as_posix()

    def _dataset_of(self, folder: Path) -> str | None:
        """The dataset a folder belongs to (``data/raw/<dataset>/...``), or None outside data/raw."""
        raw = self.project.raw_dir
        if not folder.is_relative_to(raw) or folder == raw:
            return None
        return folder.relative_to(raw).parts[0]

    def _folder_item(self, folder: Path, dataset: str, n_files: int) -> str:
        """One list item for many files of one folder: its count and where each file is listed."""
        label = markup.raw_dataset_label(dataset)
        return (
            f"- {markup.code(self._rel(folder) + '/')}: {n_files:,} files, each with its sha256 and a "
            f"download on {{ref}}`the dataset's provenance page <{label}>`"
        )


def _by_folder(paths: list[Path]) -> dict[Path, list[Path]]:
    """Sorted paths grouped by their folder, folders in the order they first appear."""
    groups: dict[Path, list[Path]] = {}
    for p in paths:
        groups.setdefault(p.parent, []).append(p)
    return groups


def html_table(
    df: pd.DataFrame,
    name: str,
    decimals: int | None = 3,
    *,
    columns: list[str] | None = None,
    preview_rows: int | None = None,
    dash_note: str | None = None,
    summary: pd.DataFrame | None = None,
    caption: str = "",
) -> str:
    """``df`` for a reader (:mod:`~iscsi_report.presentation.tables`): human headers, escaped, named ids."""
    return tables.render(
        df,
        name,
        decimals,
        shown=columns,
        preview_rows=preview_rows,
        dash_note=dash_note,
        summary=summary,
        caption=caption,
    )


def display_markdown(text: str) -> None:
    """Show markdown the project wrote (values already escaped by :mod:`iscsi_report.core.markup`)."""
    from IPython.display import Markdown, display

    display(Markdown(text))


def markdown(template: str, *values: object) -> None:
    """Show ``template`` (the project's own markdown) with each ``{}`` filled by a value shown literally."""
    display_markdown(template.format(*(markup.text(v) for v in values)))


def start(
    run_name: str,
    dataset: str,
    project_root: str | Path,
    results_dir: str | Path | None = None,
) -> Context:
    """Build the notebook's context; ``results_dir`` defaults to ``results/<run>`` (interactive use)."""
    project = Project.at(project_root)
    out = Path(results_dir).resolve() if results_dir else project.run_results_dir(run_name)
    out.mkdir(parents=True, exist_ok=True)
    return Context(run_name=run_name, dataset=dataset, project_root=project.root, results_dir=out)


def write_csv(df: pd.DataFrame, path: Path) -> None:
    """Write a table deterministically (fixed float format, LF endings), atomically (core.atomic)."""
    write_atomic(path, df.to_csv(index=False, float_format=CSV_FLOAT_FORMAT, lineterminator="\n"))


CHART_CLASS = "iscsi-chart"  # the figure class the site's chart script (pipeline/assets.py) looks for
MAX_ALT_CHARS = 300
# Characters left as they are in the fallback's data URI: smaller than base64, and compressible.
# Never '%', '#', '&', quotes or angle brackets (URI syntax, or HTML attribute syntax).
SVG_URI_SAFE = " =:/;,.-_()!*@$+?~[]{}|^'"


def chart(spec: Any, caption: str | None = None, alt: str | None = None) -> None:
    """Show a chart as a captioned figure: interactive on the site, its SVG shown until then (or offline)."""
    from IPython.display import HTML, display

    display(HTML(chart_html(spec, caption=caption, alt=alt)))


def svg(spec: Any) -> str:
    """Render an altair chart (or a Vega-Lite dict) to an SVG string with vl-convert."""
    import vl_convert as vlc

    return str(vlc.vegalite_to_svg(spec_dict(spec)))


def spec_dict(spec: Any) -> dict[str, Any]:
    """The Vega-Lite dict of an altair chart (a dict is returned as given)."""
    return dict(spec.to_dict() if hasattr(spec, "to_dict") else spec)


def chart_html(spec: Any, caption: str | None = None, alt: str | None = None) -> str:
    """The figure of one chart: SVG fallback image, the interactive spec as JSON, alt text and caption.

    ``alt`` defaults to a sentence built from the chart's marks and axis titles; ``caption`` to the
    chart's title, else to that sentence.
    """
    import html
    import json
    from urllib.parse import quote

    as_dict = titled(spec_dict(spec))
    described = describe(as_dict)
    alt_text = (alt or described).strip()
    caption_text = (caption or _title(as_dict) or described).strip()
    fallback = quote(svg(as_dict), safe=SVG_URI_SAFE)
    payload = json.dumps(interactive_spec(as_dict, alt_text), sort_keys=True, separators=(",", ":"))
    payload = payload.replace("<", "\\u003c")  # no "</script>" can end the JSON early
    return (
        f'<figure class="{CHART_CLASS}">'
        f'<div class="{CHART_CLASS}-live"></div>'
        f'<img class="{CHART_CLASS}-fallback" alt="{html.escape(alt_text)}" '
        f'src="data:image/svg+xml;charset=utf-8,{fallback}">'
        f'<script type="application/json" class="{CHART_CLASS}-spec">{payload}</script>'
        f"<figcaption>{html.escape(caption_text)}</figcaption></figure>"
    )


def titled(spec: Any) -> Any:
    """``spec`` with a reader's title (:func:`columns.header`) on every encoded field shown without one.

    Axes, legends, facets and tooltips otherwise show the data's column name (``bs_kib``); a
    title the chart set, even ``None`` (no title), is kept. Only channel definitions change
    (``encoding`` and ``facet``), never sorts or transforms, whose fields are not shown.
    """
    if isinstance(spec, list):
        return [titled(item) for item in spec]
    if not isinstance(spec, dict):
        return spec
    out = {key: titled(value) for key, value in spec.items()}
    if isinstance(out.get("encoding"), dict):
        out["encoding"] = {ch: _titled_channel(d) for ch, d in out["encoding"].items()}
    facet = out.get("facet")
    if isinstance(facet, dict):
        out["facet"] = (
            _titled_channel(facet)
            if "field" in facet
            else {ch: _titled_channel(d) for ch, d in facet.items()}
        )
    return out


def _titled_channel(definition: Any) -> Any:
    """One channel's definition (or a tooltip's list of them) with a title on each bare machine field."""
    if isinstance(definition, list):
        return [_titled_channel(d) for d in definition]
    if not isinstance(definition, dict):
        return definition
    field = definition.get("field")
    if isinstance(field, str) and "title" not in definition and cols.MACHINE_NAME.fullmatch(field):
        return {**definition, "title": cols.header(field)}
    return definition


def interactive_spec(spec: dict[str, Any], alt_text: str) -> dict[str, Any]:
    """The spec shown live: tooltips on every mark, the alt text as description, and the width of
    the page column for single views (faceted and concatenated ones keep theirs and scroll)."""
    out = dict(spec, description=alt_text)
    config = dict(out.get("config", {}))
    config["mark"] = {"tooltip": {"content": "encoding"}, **config.get("mark", {})}
    out["config"] = config
    single_view = ("mark" in out or "layer" in out) and isinstance(out.get("width"), (int, float))
    if single_view:
        out["width"] = "container"
        out["autosize"] = {"type": "fit-x", "contains": "padding"}
    return out


def _title(spec: dict[str, Any]) -> str:
    """The chart's own title text, or ''."""
    title = spec.get("title", "")
    text = title.get("text", "") if isinstance(title, dict) else title
    return " ".join(text) if isinstance(text, list) else str(text)


def _encodings(spec: Any) -> list[tuple[str, dict[str, Any]]]:
    """Every (channel, definition) of every view in a spec, outermost first."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(spec, dict):
        for channel, definition in (spec.get("encoding") or {}).items():
            if isinstance(definition, dict):
                found.append((channel, definition))
        for key in ("spec", "layer", "hconcat", "vconcat", "concat"):
            for child in spec.get(key, []) if isinstance(spec.get(key), list) else [spec.get(key)]:
                found += _encodings(child)
        facet = spec.get("facet")
        if isinstance(facet, dict):
            rows = [("facet", facet)] if "field" in facet else [(k, v) for k, v in facet.items()]
            found += [(f"facet {k}", v) for k, v in rows if isinstance(v, dict)]
    return found


def _marks(spec: Any) -> list[str]:
    """Mark types used in a spec, in order of first use."""
    marks: list[str] = []
    if isinstance(spec, dict):
        mark = spec.get("mark")
        kind = mark.get("type") if isinstance(mark, dict) else mark
        if isinstance(kind, str):
            marks.append(kind)
        for key in ("spec", "layer", "hconcat", "vconcat", "concat"):
            value = spec.get(key)
            for child in value if isinstance(value, list) else [value]:
                marks += _marks(child)
    return list(dict.fromkeys(marks))


MARK_WORDS = {
    "point": "points",
    "circle": "points",
    "line": "lines",
    "bar": "bars",
    "rect": "cells",
    "area": "bands",
    "rule": "rules",
    "text": "labels",
    "tick": "ticks",
}
EXTRA_CHANNELS = (("color", "colour"), ("shape", "marker"), ("strokeDash", "line style"), ("size", "size"))


def describe(spec: dict[str, Any]) -> str:
    """A one-sentence alt text: what is drawn, against what, coloured and split by what."""
    titles: dict[str, str] = {}
    for channel, definition in _encodings(spec):
        name = definition.get("title") or definition.get("field")
        shown = channel.startswith("facet") or definition.get("title", "") is not None
        if name and shown and channel not in titles:
            titles[channel] = str(name)
    marks = [MARK_WORDS.get(m, m) for m in _marks(spec) if m != "text"] or ["marks"]
    sentence = f"Chart of {' and '.join(marks)}"
    if "y" in titles and "x" in titles:
        sentence += f": {titles['y']} against {titles['x']}"
    elif "x" in titles or "y" in titles:
        sentence += f": {titles.get('x') or titles.get('y')}"
    extras = [f"{word} by {titles[ch]}" for ch, word in EXTRA_CHANNELS if ch in titles]
    panels = [titles[ch] for ch in titles if ch.startswith("facet")]
    if panels:
        extras.append("one panel per " + " and ".join(panels))
    if extras:
        sentence += "; " + ", ".join(extras)
    return (sentence + ".")[:MAX_ALT_CHARS]


def glue(name: str, value: Any) -> None:
    """Glue ``value`` under ``name`` for the prose (``{glue:text}`name:.2f```), hidden where made."""
    from myst_nb import glue as nb_glue

    if hasattr(value, "item") and callable(value.item):  # numpy scalar: glue the Python number
        value = value.item()
    nb_glue(name, value, display=False)
