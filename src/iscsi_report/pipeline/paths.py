"""The project's layout in one place, so every command can run against any project root."""

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
        return self.root / "data" / "raw"

    @property
    def published_dir(self) -> Path:
        return self.root / "data" / "published"

    @property
    def results_dir(self) -> Path:
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
        """The layers a chapter notebook may import (core, analyses): hashed into run cache keys."""
        return (self.package_dir / "core", self.package_dir / "analyses")

    def relative(self, path: Path) -> str:
        """``path`` relative to the root (POSIX), as records and messages name it; absolute if outside."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path.resolve())

    def notebook(self, name: str) -> Path:
        return self.notebooks_dir / f"{name}.md"

    def executed(self, run: str, notebook: str) -> Path:
        return self.runs_dir / run / f"{notebook}.ipynb"
