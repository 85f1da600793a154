"""dataset.resolved: a manifest's paths resolve exactly as Path.resolve does, each folder once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iscsi_report.core import dataset

SPELLINGS = [
    "fio/a.json",
    "./fio/a.json",
    "fio//a.json",
    "fio/../fio/a.json",
    "linked/a.json",  # a file in a symlinked folder
    "fio/link.json",  # a symlinked file
    "fio/out.json",  # a symlink leaving the dataset
    "fio/loop.json",  # a symlink to itself
    "fio/missing.json",
    "fio",
    "fio/",
    "fio/.",
    "fio/..",
    "..",
    "../outside.txt",
    "/etc/hostname",
    "deep/x/y/z.txt",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    base = tmp_path / "ds"
    (base / "fio").mkdir(parents=True)
    (base / "deep" / "x" / "y").mkdir(parents=True)
    (base / "fio" / "a.json").write_text("{}")
    (base / "deep" / "x" / "y" / "z.txt").write_text("z")
    (tmp_path / "outside.txt").write_text("o")
    (base / "linked").symlink_to(base / "fio")
    (base / "fio" / "link.json").symlink_to("a.json")
    (base / "fio" / "out.json").symlink_to(tmp_path / "outside.txt")
    (base / "fio" / "loop.json").symlink_to("loop.json")
    return base


def test_every_spelling_resolves_as_path_resolve_does(tree: Path) -> None:
    folders: dict[str, str] = {}
    for _ in range(2):  # the second pass reads the folders the first one kept
        for rel in SPELLINGS:
            try:
                expected: Path | type[Exception] = (tree / rel).resolve()
            except (OSError, RuntimeError) as exc:
                expected = type(exc)
            if isinstance(expected, Path):
                assert dataset.resolved(tree, rel, folders) == expected, rel
            else:
                with pytest.raises(expected):
                    dataset.resolved(tree, rel, folders)
    assert os.path.join(tree, "fio") in folders  # kept, so not resolved again


def test_a_folder_kept_is_not_resolved_again(tree: Path, monkeypatch) -> None:
    folders: dict[str, str] = {}
    first = dataset.resolved(tree, "fio/a.json", folders)
    monkeypatch.setattr(os.path, "realpath", lambda *a, **k: pytest.fail("resolved twice"))
    assert dataset.resolved(tree, "fio/a.json", folders) == first
