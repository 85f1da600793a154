"""The citation files: CITATION.cff is valid CFF 1.2.0 and agrees with .zenodo.json and pyproject.toml."""

from __future__ import annotations

import datetime as dt
import json
import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
REQUIRED = {"cff-version": str, "message": str, "title": str, "authors": list}


def _cff() -> dict[str, Any]:
    """CITATION.cff parsed as YAML."""
    doc = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def _zenodo() -> dict[str, Any]:
    """.zenodo.json parsed."""
    doc = json.loads((ROOT / ".zenodo.json").read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def test_cff_has_the_required_keys_with_their_types() -> None:
    """CFF 1.2.0's required keys are present with the schema's types; every author has a name."""
    cff = _cff()
    assert cff["cff-version"] == "1.2.0"
    for key, kind in REQUIRED.items():
        assert isinstance(cff.get(key), kind), key
    assert cff["authors"]
    for author in cff["authors"]:
        assert isinstance(author, dict)
        assert isinstance(author.get("name") or author.get("family-names"), str)


def test_cff_optional_keys_are_well_typed() -> None:
    """version is a string, date-released an ISO date, license an SPDX id the repository ships."""
    cff = _cff()
    assert isinstance(cff["version"], str)
    dt.date.fromisoformat(str(cff["date-released"]))
    assert cff["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "repository-code" not in cff or str(cff["repository-code"]).startswith("https://")


def test_zenodo_and_pyproject_agree_with_the_cff() -> None:
    """One title, version and licence in CITATION.cff, .zenodo.json and pyproject.toml."""
    cff, zenodo = _cff(), _zenodo()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert zenodo["title"] == cff["title"]
    assert zenodo["version"] == cff["version"] == project["version"]
    assert zenodo["license"] == cff["license"] == project["license"]
    assert zenodo["publication_date"] == str(cff["date-released"])
    assert [c["name"] for c in zenodo["creators"]] == [a["name"] for a in cff["authors"]]


def test_data_licence_names_the_reconstruction() -> None:
    """data/LICENSE is CC BY 4.0 and says the blog dataset derives from the post's published numbers."""
    text = (ROOT / "data" / "LICENSE").read_text(encoding="utf-8")
    assert "CC BY 4.0" in text
    assert "data/raw/blog-2023/" in text and "RECONSTRUCTED" in text
