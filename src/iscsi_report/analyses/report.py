"""What a chapter notebook calls to show things: tables saved as CSV, charts as offline SVG, glue.

The batch runner injects ``run_name``, ``dataset``, ``project_root`` and ``results_dir`` into each
notebook; :func:`start` turns them into a :class:`Context` that writes every shown table to
``results_dir/<table>.csv`` (the runner moves it to ``results/<run>/`` on success) and links it
for download from the page.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

CSV_FLOAT_FORMAT = "%.10g"  # fixed, so two builds from the same inputs give byte-identical CSVs


@dataclass(frozen=True)
class Context:
    """Paths of one notebook execution: where raw data is, where tables go, how the page links."""

    run_name: str
    dataset: str
    project_root: Path
    results_dir: Path

    @property
    def raw_dir(self) -> Path:
        """The dataset's raw folder, ``data/raw/<dataset>``."""
        return self.project_root / "data" / "raw" / self.dataset

    @property
    def published_dir(self) -> Path:
        """Numbers quoted from the seeds, ``data/published``."""
        return self.project_root / "data" / "published"

    @property
    def page_dir(self) -> Path:
        """Folder of the executed notebook inside the book: ``book/runs/<run>``."""
        return self.project_root / "book" / "runs" / self.run_name

    def link_to(self, target: Path) -> str:
        """Relative POSIX path from this page to ``target``, for MyST links and downloads."""
        return Path(os.path.relpath(target, self.page_dir)).as_posix()

    def table_link(self, name: str) -> str:
        """Link from the page to the published CSV ``results/<run>/<name>.csv``."""
        return self.link_to(self.project_root / "results" / self.run_name / f"{name}.csv")

    def table(self, df: pd.DataFrame, name: str, *, caption: str = "", decimals: int = 3) -> None:
        """Write ``df`` to ``<results_dir>/<name>.csv``, then show it rounded with a download link."""
        write_csv(df, self.results_dir / f"{name}.csv")
        from IPython.display import Markdown, display

        shown = df.round(decimals) if decimals is not None else df
        if caption:
            display(Markdown(f"**{caption}**"))
        display(shown.style.hide(axis="index").format(precision=decimals, thousands=","))
        display(Markdown(f"{{download}}`Download {name}.csv <{self.table_link(name)}>`"))

    def raw_links(self, paths: list[Path] | None = None) -> None:
        """Show download links to the raw files this chapter read (default: every file it opened)."""
        from IPython.display import Markdown, display

        from iscsi_report.core.ingest.textio import files_read

        chosen = sorted(paths if paths is not None else files_read())
        items = [
            f"- {{download}}`{p.relative_to(self.project_root).as_posix()} <{self.link_to(p)}>`"
            for p in chosen
        ]
        display(Markdown("\n".join(items) or "No raw file was read."))


def start(
    run_name: str,
    dataset: str,
    project_root: str | Path,
    results_dir: str | Path | None = None,
) -> Context:
    """Build the notebook's context; ``results_dir`` defaults to ``results/<run>`` (interactive use)."""
    root = Path(project_root).resolve()
    out = Path(results_dir).resolve() if results_dir else root / "results" / run_name
    out.mkdir(parents=True, exist_ok=True)
    return Context(run_name=run_name, dataset=dataset, project_root=root, results_dir=out)


def write_csv(df: pd.DataFrame, path: Path) -> None:
    """Write a table deterministically (fixed float format, LF endings), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    df.to_csv(tmp, index=False, float_format=CSV_FLOAT_FORMAT, lineterminator="\n")
    os.replace(tmp, path)


def chart(spec: Any) -> None:
    """Display an altair chart as inline SVG rendered by vl-convert: no JavaScript, no network."""
    from IPython.display import SVG, display

    display(SVG(svg(spec)))


def svg(spec: Any) -> str:
    """Render an altair chart (or a Vega-Lite dict) to an SVG string with vl-convert."""
    import vl_convert as vlc

    as_dict = spec.to_dict() if hasattr(spec, "to_dict") else spec
    return vlc.vegalite_to_svg(as_dict)


def glue(name: str, value: Any) -> None:
    """Glue ``value`` under ``name`` for the prose (``{glue:text}`name:.2f```), hidden where made."""
    from myst_nb import glue as nb_glue

    if hasattr(value, "item") and callable(value.item):  # numpy scalar: glue the Python number
        value = value.item()
    nb_glue(name, value, display=False)
