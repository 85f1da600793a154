"""Deterministic reconstruction of the blog study's raw tool outputs (``data/raw/blog-2023``).

The blog published summary statistics only. :func:`build` regenerates files in the genuine output
formats of ping, fio, iperf3 and iostat whose recomputed statistics equal the published ones; the
files are labelled ``reconstructed: true`` in the manifest and explained in the folder's README.
Each file draws from its own random stream, seeded by the master seed and the file's path, so
changing one writer does not change the others' bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from blog_reconstruction import fio, iostat, iperf3, ping, readme
from blog_reconstruction import targets as T

DATASET = "blog-2023"
GZIP_LEVEL = 6
MANIFEST_NAME = "manifest.yaml"
README_NAME = "README.md"
TARGETS_NAME = "generation_targets.yaml"  # read by iscsi_report.analyses.audit.load_generation_targets


@dataclass
class OutputFile:
    """One generated file: where it goes, which tool and side, its labels and its bytes."""

    path: str
    tool: str
    side: str
    labels: dict[str, Any]
    data: bytes
    extra: dict[str, Any] = field(default_factory=dict)  # facts for the README, not written

    def manifest_entry(self) -> dict[str, Any]:
        """The manifest row (schema relied on by the loader)."""
        return {
            "path": self.path,
            "tool": self.tool,
            "side": self.side,
            "sha256": hashlib.sha256(self.data).hexdigest(),
            "bytes": len(self.data),
            "labels": self.labels,
        }


def rng_for(path: str) -> np.random.Generator:
    """The random stream of one file: master seed plus a stable hash of its dataset path."""
    key = int.from_bytes(hashlib.sha256(path.encode()).digest()[:8], "big")
    return np.random.default_rng(np.random.SeedSequence([T.SEED, key]))


def gzip_bytes(data: bytes, name: str) -> bytes:
    """gzip with mtime 0 and a fixed original-name field, so the bytes are reproducible."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename=name, mode="wb", fileobj=buf, mtime=0,
                       compresslevel=GZIP_LEVEL) as gz:  # fmt: skip
        gz.write(data)
    return buf.getvalue()


def ping_files() -> list[OutputFile]:
    """The four ping captures."""
    out = []
    for spec in ping.PING_SPECS:
        triptimes = ping.generate_triptimes(spec, rng_for(spec.path))
        data = ping.render(spec, triptimes).encode()
        if spec.path.endswith(".gz"):
            data = gzip_bytes(data, Path(spec.path).name.removesuffix(".gz"))
        labels = {"network": spec.network, "interval_s": spec.interval_s}
        achieved = ping.printed_values_ms(triptimes)
        out.append(OutputFile(spec.path, "ping", "initiator", labels, data,
                              {"spec": spec, "printed_ms": achieved}))  # fmt: skip
    return out


def fio_and_iostat_files() -> list[OutputFile]:
    """Every fio run, each remote one followed by the target's iostat during that run."""
    out = []
    for run in fio.all_runs():
        res = fio.render(run, rng_for(run.path))
        side = "local" if run.scenario == "local-sg" else "initiator"
        out.append(OutputFile(run.path, "fio", side, run.labels(), res.text.encode(),
                              {"run": run, "write": res.write}))  # fmt: skip
        if run.scenario == "local-sg":
            continue
        path = f"iostat/{run.run_id}.txt"
        text = iostat.render(run, res, rng_for(path))
        out.append(OutputFile(path, "iostat", "target", run.labels(), text.encode(), {"run": run}))
    return out


def iperf3_files() -> list[OutputFile]:
    """The two iperf3 runs."""
    out = []
    for s in iperf3.IPERF3_SPECS:
        text = iperf3.render(s, rng_for(s.path))
        out.append(OutputFile(s.path, "iperf3", "initiator", s.labels(), text.encode(), {"spec": s}))
    return out


def generate() -> list[OutputFile]:
    """All data files of the dataset, in manifest order."""
    return [*ping_files(), *iperf3_files(), *fio_and_iostat_files()]


def manifest(files: list[OutputFile]) -> dict[str, Any]:
    """The manifest document (schema relied on by the loader)."""
    r2t16 = dict(T.LIO_DEFAULT_PARAMETERS, MaxOutstandingR2T=T.R2T_BURST)
    return {
        "dataset": DATASET,
        "title": "Reconstructed raw outputs of the 2023 iSCSI throughput blog study",
        "reconstructed": True,
        "generator": "python data/reconstruct_blog_2023.py",
        "description": (
            "NOT the original measurements (never published): files in the genuine output "
            "formats of ping, iperf3, fio and iostat, generated deterministically "
            f"(seed {T.SEED}) so that their recomputed statistics reproduce the figures "
            f"published in the blog ({T.SOURCE}). See README.md for method and conflicts."
        ),
        "iscsi_parameters": {"lio-default": dict(T.LIO_DEFAULT_PARAMETERS), "lio-r2t16": r2t16},
        "files": [f.manifest_entry() for f in files],
    }


def targets_text() -> str:
    """The published ids this dataset was generated to reproduce (the audit marks them)."""
    head = (
        "# Published ids of data/published/blog-2023.yaml that this reconstructed dataset was\n"
        "# generated to reproduce (generated from tools/blog_reconstruction/targets.py).\n"
    )
    return head + yaml.safe_dump({"published_ids": T.published_target_ids()}, sort_keys=False, width=200)


def build(out_dir: str | Path) -> list[OutputFile]:
    """Write every data file, manifest.yaml and README.md under ``out_dir``; return the files."""
    root = Path(out_dir)
    files = generate()
    for f in files:
        dest = root / f.path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(f.data)
    text = yaml.safe_dump(manifest(files), sort_keys=False, width=200, allow_unicode=False)
    (root / MANIFEST_NAME).write_text(text, encoding="utf-8")
    (root / README_NAME).write_text(readme.render(files), encoding="utf-8")
    (root / TARGETS_NAME).write_text(targets_text(), encoding="utf-8")
    return files


def check(out_dir: str | Path) -> list[str]:
    """Differences between a regeneration and the files under ``out_dir`` (empty when equal)."""
    root = Path(out_dir)
    problems = []
    files = generate()
    expected = {f.path: f.data for f in files}
    expected[MANIFEST_NAME] = yaml.safe_dump(
        manifest(files), sort_keys=False, width=200, allow_unicode=False
    ).encode()
    expected[README_NAME] = readme.render(files).encode()
    expected[TARGETS_NAME] = targets_text().encode()
    for rel, data in expected.items():
        p = root / rel
        if not p.is_file():
            problems.append(f"{p}: missing")
        elif p.read_bytes() != data:
            problems.append(f"{p}: differs from the regenerated bytes")
    return problems
