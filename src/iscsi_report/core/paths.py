"""The project's layout in one place: the pipeline and every chapter page find their folders here.

One definition, so a command run against any project root (the repository, or a copy made by a
test) and a page executed inside that root agree on where raw data, params, results and the
executed notebooks live.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Project:
    """Paths of a project checkout (the repository, or a copy made by a test)."""

    root: Path

    @classmethod
    def at(cls, root: str | Path) -> Project:
        """A Project rooted at ``root`` (resolved to an absolute path)."""
        return cls(Path(root).resolve())

    @property
    def params_dir(self) -> Path:
        return self.root / "params"

    @property
    def notebooks_dir(self) -> Path:
        return self.root / "notebooks"

    @property
    def book_dir(self) -> Path:
        return self.root / "book"

    @property
    def runs_dir(self) -> Path:
        """Executed notebooks: ``book/runs/<run>/<notebook>.ipynb``."""
        return self.book_dir / "runs"

    @property
    def raw_dir(self) -> Path:
        """Every dataset's raw folder: ``data/raw``."""
        return self.root / "data" / "raw"

    @property
    def published_dir(self) -> Path:
        """Numbers quoted from the source documents: ``data/published``."""
        return self.root / "data" / "published"

    @property
    def results_dir(self) -> Path:
        """Every run's published tables: ``results``."""
        return self.root / "results"

    @property
    def cache_dir(self) -> Path:
        """Run records, execution staging, failed notebooks and logs (never published)."""
        return self.root / ".cache"

    @property
    def build_dir(self) -> Path:
        return self.root / "_build"

    @property
    def package_dir(self) -> Path:
        """Source of the iscsi_report package (all layers)."""
        return Path(__file__).resolve().parent.parent

    @property
    def notebook_code_dirs(self) -> tuple[Path, ...]:
        """The layers chapter notebooks import (core, analyses, presentation): hashed into run cache keys."""
        return tuple(self.package_dir / layer for layer in ("core", "analyses", "presentation"))

    def dataset_dir(self, dataset: str) -> Path:
        """One dataset's raw folder: ``data/raw/<dataset>``."""
        return self.raw_dir / dataset

    def params_file(self, run: str) -> Path:
        """A run's params file: ``params/<run>.yaml``."""
        return self.params_dir / f"{run}.yaml"

    def run_pages_dir(self, run: str) -> Path:
        """Folder of a run's executed notebooks inside the book: ``book/runs/<run>``."""
        return self.runs_dir / run

    def run_results_dir(self, run: str) -> Path:
        """Where a run's tables are published: ``results/<run>``."""
        return self.results_dir / run

    def relative(self, path: Path) -> str:
        """``path`` relative to the root (POSIX), as records and messages name it; absolute if outside."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path.resolve())

    def notebook(self, name: str) -> Path:
        return self.notebooks_dir / f"{name}.md"

    def executed(self, run: str, notebook: str) -> Path:
        return self.run_pages_dir(run) / f"{notebook}.ipynb"
