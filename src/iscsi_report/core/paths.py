"""The project's layout in one place: the pipeline and every chapter page find their folders here.

One definition, so a command run against any project root (the repository, or a copy made by a
test) and a page executed inside that root agree on where raw data, params, results and the
executed notebooks live.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from iscsi_report.core.errors import ReportError

PATH_MAX_BYTES = 4096  # Linux PATH_MAX: the longest path a system call accepts
NAME_MAX_BYTES = 255  # the longest name of one folder or file
SHOWN_PATH_CHARS = 80  # a path quoted in an error message is cut to this length
KERNEL_FILESYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))  # never a project folder
PROJECT_MARKERS = ("params", "notebooks", "book", "data")  # a project root holds at least one


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
    def preregistered_dir(self) -> Path:
        """Sweeps declared before they ran (rule, frozen forecasts): ``data/preregistered``."""
        return self.root / "data" / "preregistered"

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


def _shown(root: str) -> str:
    """root for an error message: one line, at most SHOWN_PATH_CHARS characters."""
    text = root.encode("unicode_escape").decode("ascii")
    return (
        text
        if len(text) <= SHOWN_PATH_CHARS
        else f"{text[: SHOWN_PATH_CHARS - 3]}... ({len(root)} characters)"
    )


def _root_error(root: str, problem: str) -> ReportError:
    """A one-line error naming the --root flag and the path the user gave."""
    return ReportError(f"--root {_shown(root)}: {problem}")


def _check_root_text(root: str) -> None:
    """Refuse a root no system call can take: a NUL byte, a path or a name beyond the limits."""
    if "\x00" in root:
        raise _root_error(root, "the path contains a NUL byte")
    size = len(os.fsencode(root))
    if size > PATH_MAX_BYTES:
        raise _root_error(root, f"the path is {size} bytes, beyond the system's limit of {PATH_MAX_BYTES}")
    if any(len(os.fsencode(part)) > NAME_MAX_BYTES for part in root.split("/")):
        raise _root_error(root, f"a folder name in the path is longer than {NAME_MAX_BYTES} bytes")


def _root_stat(root: str) -> os.stat_result:
    """os.stat of the root; a missing or unreachable root is an error (it is never created)."""
    try:
        return os.stat(root)
    except FileNotFoundError as exc:
        raise _root_error(root, "no such folder (the project root is never created: fix the path)") from exc
    except NotADirectoryError as exc:
        raise _root_error(root, "a part of the path is a file, not a folder") from exc
    except OSError as exc:
        raise _root_error(root, f"cannot open the folder: {exc.strerror or exc}") from exc


def check_root(root: str, writable: bool) -> Project:
    """The Project at ``root`` once it is an existing project folder (writable when the command
    writes .cache/, results/ or _build/ there); a one-line ReportError naming --root otherwise."""
    _check_root_text(root)
    mode = _root_stat(root).st_mode
    if not stat.S_ISDIR(mode):
        kind = {stat.S_IFREG: "a regular file", stat.S_IFCHR: "a character device"}.get(
            stat.S_IFMT(mode), "a special file"
        )
        raise _root_error(root, f"{kind}, not a folder")
    resolved = Path(root).resolve()
    if resolved == Path(resolved.anchor):
        raise _root_error(root, "the filesystem root is not a project folder")
    if any(resolved == fs or fs in resolved.parents for fs in KERNEL_FILESYSTEMS):
        raise _root_error(root, "a kernel pseudo-filesystem, not a project folder")
    if not any((resolved / marker).is_dir() for marker in PROJECT_MARKERS):
        markers = ", ".join(f"{m}/" for m in PROJECT_MARKERS)
        raise _root_error(root, f"not a project folder (none of {markers} in it)")
    if writable and not os.access(resolved, os.W_OK):
        raise _root_error(root, "read-only folder: this command writes .cache/ and its outputs there")
    return Project(resolved)
