"""iscsi-report dataset init / check / update on folders of real captured files (tests/fixtures)."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from fast_yaml import load_yaml

from iscsi_report.cli import main
from iscsi_report.core import atomic, dataset
from iscsi_report.core.ingest.textio import sha256_file

FILES = {
    "ping/lan-200ms.txt": "ping/iputils_loopback_D.txt",
    "iperf3/lan-tcp.json": "iperf3/tcp_netns_tbf.json",
    "fio/w64k.json": "fio/fio-3.33_seqwrite_64k_psync.json",
    "fio/w2m.json.xz": "fio/fio-3.33_seqwrite_2m_libaio_qd4.jsonplus.json.xz",
    "iostat/w64k.txt": "iostat/iostat-12.6.1_x.txt",
}


@pytest.fixture
def raw(tmp_path: Path, fixtures_dir: Path) -> Path:
    """A fresh folder of real raw files, no manifest."""
    root = tmp_path / "mine"
    for rel, src in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(fixtures_dir / src, root / rel)
    return root


def _init(root: Path, *extra: str) -> int:
    return main(["dataset", "init", str(root), *extra])


def test_init_says_what_is_missing_and_writes_nothing(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _init(raw) == 1
    out = capsys.readouterr().out
    assert "missing side on 5 file(s)" in out and "--label side=initiator|target|local" in out
    assert not (raw / "manifest.yaml").exists()
    assert _init(raw, "--label", "side=local") == 1
    out = capsys.readouterr().out
    assert "missing network on 2 file(s) (iperf3/lan-tcp.json, ping/lan-200ms.txt)" in out
    assert "missing device on 2 file(s) (fio/w2m.json.xz, fio/w64k.json)" in out


def test_init_then_check_then_load(raw: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    defaults = tmp_path / "defaults.yaml"
    defaults.write_text(
        "all: {side: local}\nping: {network: lan}\niperf3: {network: lan}\nfio/*: {device: vdisk}\n"
    )
    assert _init(raw, "--defaults", str(defaults), "--name", "mine") == 0
    assert "wrote" in capsys.readouterr().out
    ds = dataset.load(raw)
    by = {f.rel: f for f in ds.files}
    assert by["ping/lan-200ms.txt"].labels["interval_s"] == 0.2
    assert by["fio/w2m.json.xz"].labels["scenario"] == "qd4-local-libaio"
    assert by["fio/w64k.json"].labels["scenario"] == "local-psync"
    assert by["iostat/w64k.txt"].labels["run"] == "w64k" and by["iostat/w64k.txt"].labels["bs_bytes"] == 65536
    assert main(["dataset", "check", str(raw)]) == 0
    assert "ok, 5 files" in capsys.readouterr().out
    assert _init(raw) == 2  # a manifest exists: not replaced without --force
    assert "dataset update" in capsys.readouterr().err


def test_unknown_files_refused_unless_skipped(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (raw / "README.txt").write_text("captured on Tuesday\n")
    flags = ("--label", "side=local", "--label", "network=lan", "--label", "device=vdisk")
    assert _init(raw, *flags) == 1
    out = capsys.readouterr().out
    assert "README.txt" in out and "--skip-unknown" in out
    assert _init(raw, *flags, "--skip-unknown") == 0
    assert "README.txt" not in {f.rel for f in dataset.load(raw).files}


def test_user_label_contradicting_the_file_is_refused(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _init(raw, "--label", "side=local", "--label", "network=lan", "--label", "bs_bytes=65536") == 1
    out = capsys.readouterr().out
    assert "fio/w2m.json.xz: label bs_bytes: the manifest says 65536 but the file says 2097152" in out


def _write_ok_manifest(raw: Path) -> None:
    assert _init(raw, "--label", "side=local", "--label", "network=lan", "--label", "device=vdisk") == 0


def test_check_lists_every_problem_at_once(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_ok_manifest(raw)
    doc = load_yaml(raw / "manifest.yaml")
    for entry in doc["files"]:
        if entry["path"] == "fio/w64k.json":
            entry["labels"]["bs_bytes"] = 1048576
        if entry["path"] == "iperf3/lan-tcp.json":
            entry["labels"]["network"] = "wan"
    (raw / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    with (raw / "ping/lan-200ms.txt").open("a") as fh:
        fh.write("\n")
    shutil.copy(raw / "fio/w64k.json", raw / "fio/extra.json")
    capsys.readouterr()
    assert main(["dataset", "check", str(raw)]) == 1
    out = capsys.readouterr().out
    assert "lan-200ms.txt: sha256 differs" in out and "iscsi-report dataset update" in out
    assert "fio/w64k.json: label bs_bytes: the manifest says 1048576 but the file says 65536" in out
    assert "network 'lan': ping files" in out and "network 'wan': iperf3 files" in out
    assert "fio/extra.json: raw output in the folder but not in the manifest" in out
    assert "iostat/w64k.txt: pairs with no fio file" in out  # its fio run's bs_bytes no longer agrees
    assert out.splitlines()[-1].endswith(": 6 problem(s) in 5 listed file(s)")


def test_update_says_what_changed(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_ok_manifest(raw)
    old = {f.rel: f.sha256 for f in dataset.load(raw).files}["ping/lan-200ms.txt"]
    with (raw / "ping/lan-200ms.txt").open("a") as fh:
        fh.write("\n")
    (raw / "ping/new.txt").write_text((raw / "ping/lan-200ms.txt").read_text())
    capsys.readouterr()
    assert main(["dataset", "update", str(raw)]) == 1  # refreshed, but a file is not listed
    out = capsys.readouterr().out
    new = {f.rel: f.sha256 for f in dataset.load(raw).files}["ping/lan-200ms.txt"]
    assert f"ping/lan-200ms.txt: sha256 {old[:12]}... -> {new[:12]}..." in out
    assert "ping/new.txt: raw output in the folder but not in the manifest" in out
    (raw / "ping/new.txt").unlink()
    (raw / "fio/w64k.json").unlink()
    before = (raw / "manifest.yaml").read_text()
    assert main(["dataset", "update", str(raw)]) == 1
    assert "fio/w64k.json: listed (line" in capsys.readouterr().out
    assert (raw / "manifest.yaml").read_text() == before


def test_checksum_error_names_the_update_command(raw: Path) -> None:
    _write_ok_manifest(raw)
    (raw / "fio/w64k.json").write_text((raw / "fio/w64k.json").read_text() + "\n")
    f = next(f for f in dataset.load(raw).files if f.rel == "fio/w64k.json")
    with pytest.raises(Exception, match="iscsi-report dataset update"):
        dataset.verify(f)


# ---- companions, unsupported files, multi-job fio, and what check reports (issue 23) ----------

FLAGS = ("--label", "side=local", "--label", "network=lan", "--label", "device=vdisk")
NOTES = "chapters:\n  network: Both ends of this link are on this machine.\n"


def test_notes_yaml_neither_stops_init_force_nor_fails_update(
    raw: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (raw / "notes.yaml").write_text(NOTES)
    assert _init(raw, *FLAGS) == 0
    assert _init(raw, *FLAGS, "--force") == 0
    assert "notes.yaml" not in {f.rel for f in dataset.load(raw).files}
    with (raw / "ping/lan-200ms.txt").open("a") as fh:
        fh.write("\n")
    capsys.readouterr()
    assert main(["dataset", "update", str(raw)]) == 0
    out = capsys.readouterr().out
    assert "ping/lan-200ms.txt: sha256" in out and "notes.yaml" not in out
    assert main(["dataset", "check", str(raw)]) == 0
    assert "notes.yaml" not in capsys.readouterr().out


def test_update_notes_a_non_tool_file_and_exits_0(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_ok_manifest(raw)
    (raw / "README.txt").write_text("captured on Tuesday\n")
    capsys.readouterr()
    assert main(["dataset", "update", str(raw)]) == 0
    assert (
        "note: README.txt: not a raw tool output and not in the manifest (ignored)" in capsys.readouterr().out
    )


def test_skip_unknown_leaves_out_iperf3_plain_text_saying_why(
    raw: Path, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(fixtures_dir / "iperf3/tcp_loopback_plain_text.txt", raw / "iperf3/lan-text.txt")
    assert _init(raw, *FLAGS) == 1
    out = capsys.readouterr().out
    assert "1 file(s) recognised in a format the project does not read, refused" in out
    assert "iperf3/lan-text.txt: iperf3's plain-text output" in out and "rerun iperf3 with -J" in out
    assert _init(raw, *FLAGS, "--skip-unknown") == 0
    out = capsys.readouterr().out
    assert "left out:" in out and "iperf3/lan-text.txt" in out
    assert "iperf3/lan-text.txt" not in {f.rel for f in dataset.load(raw).files}
    assert main(["dataset", "check", str(raw)]) == 0  # a note, not a problem: it was left out on purpose
    assert "iperf3/lan-text.txt: iperf3's plain-text output" in capsys.readouterr().out


def test_a_two_job_fio_file_is_refused_at_init_and_check(
    raw: Path, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_ok_manifest(raw)
    shutil.copy(fixtures_dir / "fio/fio-3.33_numjobs2_no_group.json", raw / "fio/two.json")
    capsys.readouterr()
    assert _init(raw, *FLAGS, "--force") == 1
    out = capsys.readouterr().out
    assert "fio/two.json: 2 jobs write in this one fio file" in out and "--group_reporting" in out
    sha = sha256_file(raw / "fio/two.json")
    entry = {"path": "fio/two.json", "tool": "fio", "side": "local", "sha256": sha}
    _edit_manifest(
        raw, lambda doc: doc["files"].append({**entry, "labels": {"device": "vdisk", "run": "two"}})
    )
    assert main(["dataset", "check", str(raw)]) == 1
    assert "fio/two.json: 2 jobs write in this one fio file" in capsys.readouterr().out


def _edit_manifest(raw: Path, change: Any) -> None:
    doc = load_yaml(raw / "manifest.yaml")
    change(doc)
    (raw / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def test_check_reports_a_file_listed_twice(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_ok_manifest(raw)
    shutil.copy(raw / "fio/w64k.json", raw / "fio/w64k-copy.json")

    def twice(doc: dict[str, Any]) -> None:
        first = next(e for e in doc["files"] if e["path"] == "fio/w64k.json")
        doc["files"].append(
            {**first, "path": "fio/w64k-copy.json", "labels": {**first["labels"], "run": "c"}}
        )

    _edit_manifest(raw, twice)
    capsys.readouterr()
    assert main(["dataset", "check", str(raw)]) == 1
    assert "fio/w64k.json, fio/w64k-copy.json: the same bytes (sha256 " in capsys.readouterr().out


def test_check_reports_a_dangling_parameter_set(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_ok_manifest(raw)

    def dangling(doc: dict[str, Any]) -> None:
        doc["iscsi_parameters"] = {"lio-default": {"MaxOutstandingR2T": 1}}
        for e in doc["files"]:
            if e["path"] == "fio/w64k.json":
                e["labels"]["iscsi_parameters"] = "lio-r2t16"

    _edit_manifest(raw, dangling)
    capsys.readouterr()
    assert main(["dataset", "check", str(raw)]) == 1
    out = capsys.readouterr().out
    assert "fio/w64k.json: label iscsi_parameters: lio-r2t16 names no set" in out
    assert "(sets: lio-default)" in out


def test_check_reports_an_unpaired_iostat_file_and_what_it_loses(
    raw: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_ok_manifest(raw)

    def unpair(doc: dict[str, Any]) -> None:
        for e in doc["files"]:
            if e["path"] == "iostat/w64k.txt":
                e["labels"]["run"] = "nowhere"

    _edit_manifest(raw, unpair)
    capsys.readouterr()
    assert main(["dataset", "check", str(raw)]) == 1
    out = capsys.readouterr().out
    assert "iostat/w64k.txt: pairs with no fio file" in out and "left out of the model" in out


# ---- hostile input (issue 24) ----------------------------------------------------------------------


def test_init_refuses_the_file_system_root(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dataset", "init", "/"]) == 2
    assert (
        capsys.readouterr().err
        == "/: the file system's root is no dataset folder: give a folder of raw files\n"
    )


def test_init_names_a_folder_it_cannot_walk(
    raw: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root every folder can be listed: the walk is made to fail as it does in /proc."""
    denied = PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    monkeypatch.setattr(Path, "rglob", mock.Mock(side_effect=denied))
    assert _init(raw, "--label", "side=local") == 2
    assert capsys.readouterr().err == f"{raw}: cannot list the folder: [Errno 13] Permission denied\n"


@pytest.mark.parametrize(
    ("where", "why"),
    [("missing/folder/labels.md", "No such file or directory"), ("/dev/full", "No space left on device")],
)
def test_labels_write_that_fails_is_one_line_naming_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, why: str
) -> None:
    target = tmp_path / where if not where.startswith("/") else Path(where)
    if where == "/dev/full" and not target.exists():
        pytest.skip("this system has no /dev/full")
    assert main(["dataset", "labels", "--write", str(target)]) == 2
    assert capsys.readouterr().err == f"{target}: --write: cannot write the label page: {why}\n"


def test_init_names_a_fifo_it_leaves_out(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(raw / "ping" / "live.txt")
    _write_ok_manifest(raw)
    out = capsys.readouterr().out
    assert "note: ping/live.txt: a FIFO (named pipe), not a regular file: left out" in out
    assert "ping/live.txt" not in (raw / "manifest.yaml").read_text()
    assert main(["dataset", "check", str(raw)]) == 0
    assert "note: ping/live.txt: a FIFO (named pipe)" in capsys.readouterr().out


def test_check_names_a_nul_byte_in_a_listed_path(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_ok_manifest(raw)

    def nul(doc: dict[str, Any]) -> None:
        next(e for e in doc["files"] if e["path"] == "fio/w64k.json")["path"] = "fio/w64k\0.json"

    _edit_manifest(raw, nul)
    capsys.readouterr()
    assert main(["dataset", "check", str(raw)]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert (
        first.startswith(f"{raw / 'manifest.yaml'}:")
        and "at files[" in first
        and "contains a NUL byte" in first
    )


def test_check_names_a_listed_file_it_cannot_read(
    raw: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """chmod 000 does not stop root: the open is refused as the kernel refuses another user."""
    _write_ok_manifest(raw)
    listed = raw / "fio" / "w64k.json"
    listed.chmod(0)
    real_open, real_os_open = open, os.open

    def refuse(path: Any) -> None:
        if isinstance(path, str | Path) and Path(path) == listed:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    monkeypatch.setattr("builtins.open", lambda p, *a, **k: refuse(p) or real_open(p, *a, **k))
    monkeypatch.setattr(os, "open", lambda p, *a, **k: refuse(p) or real_os_open(p, *a, **k))
    capsys.readouterr()
    assert main(["dataset", "check", str(raw)]) == 2
    assert capsys.readouterr().err == f"{listed}: cannot read file: Permission denied\n"


def test_update_on_read_only_data_is_one_line(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The atomic writer's open refused as on a read-only mount (root ignores mode bits)."""
    _write_ok_manifest(raw)
    (raw / "fio/w64k.json").write_text((raw / "fio/w64k.json").read_text() + "\n")
    before = (raw / "manifest.yaml").read_text()
    capsys.readouterr()
    with mock.patch.object(
        atomic, "open", side_effect=OSError(errno.EROFS, os.strerror(errno.EROFS)), create=True
    ):
        assert main(["dataset", "update", str(raw)]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"{raw / 'manifest.yaml'}: cannot write the updated checksums: Read-only file system"
        " (read-only data?)\n"
    )
    assert (raw / "manifest.yaml").read_text() == before


def test_check_reports_a_ping_file_labelled_tshark(raw: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_ok_manifest(raw)

    def tshark(doc: dict[str, Any]) -> None:
        next(e for e in doc["files"] if e["path"] == "ping/lan-200ms.txt")["tool"] = "tshark"

    _edit_manifest(raw, tshark)
    capsys.readouterr()
    assert main(["dataset", "check", str(raw)]) == 1
    assert (
        "ping/lan-200ms.txt: the manifest says tool tshark but the file is ping output"
        in capsys.readouterr().out
    )


def test_check_reports_a_bytes_field_that_never_matches(
    raw: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_ok_manifest(raw)

    def wrong_size(doc: dict[str, Any]) -> None:
        next(e for e in doc["files"] if e["path"] == "fio/w64k.json")["bytes"] = 12345

    _edit_manifest(raw, wrong_size)
    size = (raw / "fio/w64k.json").stat().st_size
    capsys.readouterr()
    assert main(["dataset", "check", str(raw)]) == 1
    assert (
        "fio/w64k.json: the manifest says bytes: 12345 but the file (whose sha256 it matches) holds "
        f"{size} bytes" in (capsys.readouterr().out)
    )


@pytest.mark.parametrize("interval_s", [1e308, 2.0])
def test_check_reports_an_interval_the_probes_contradict(
    raw: Path, capsys: pytest.CaptureFixture[str], interval_s: float
) -> None:
    """interval_s: 1e308, and a 200 ms log labelled 2 s (the issue's 2 ms log labelled 2 s, at this
    fixture's interval): the probes' timestamps refute the label."""
    _write_ok_manifest(raw)

    def interval(doc: dict[str, Any]) -> None:
        next(e for e in doc["files"] if e["path"] == "ping/lan-200ms.txt")["labels"]["interval_s"] = (
            interval_s
        )

    _edit_manifest(raw, interval)
    capsys.readouterr()
    assert main(["dataset", "check", str(raw)]) == 1
    out = capsys.readouterr().out
    assert (
        f"ping/lan-200ms.txt: label interval_s: the manifest says {interval_s:g} but the file's probes" in out
    )


def test_check_reports_a_2_ms_log_labelled_2_s(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case as written: a real 2 ms ping log (lab-veth-2026) whose label says 2 s."""
    root = tmp_path / "one"
    (root / "ping").mkdir(parents=True)
    shutil.copy(Path(__file__).parents[1] / "data/raw/lab-veth-2026/ping/veth-2ms.txt", root / "ping")
    assert _init(root, "--label", "side=initiator", "--label", "network=veth") == 0

    def two_seconds(doc: dict[str, Any]) -> None:
        doc["files"][0]["labels"]["interval_s"] = 2

    _edit_manifest(root, two_seconds)
    capsys.readouterr()
    assert main(["dataset", "check", str(root)]) == 1
    assert (
        "ping/veth-2ms.txt: label interval_s: the manifest says 2 but the file's probes"
        in capsys.readouterr().out
    )
