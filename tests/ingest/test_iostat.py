"""iostat parser: sysstat 12.6.1 fixtures captured while fio wrote, and the third-party corpus.

Expected numbers were read by hand from the fixture text (or straight from the JSON with
json.load), not copied from the parser's output.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import iostat
from iscsi_report.core.ingest.textio import read_text


def _fx(fixtures_dir: Path, name: str) -> Path:
    """Path of an iostat fixture."""
    return fixtures_dir / "iostat" / name


def test_x_text_single_report(fixtures_dir: Path) -> None:
    """iostat -x (sysstat 12.6.1 columns): header, CPU and the vda row, read by column name."""
    r = iostat.parse(_fx(fixtures_dir, "iostat-12.6.1_x.txt"))
    assert r.format == "iostat-text"
    assert (r.kernel, r.host, r.date, r.cpu_count) == ("6.18.44-fc-v595", "vm", "11/21/26", 2)
    assert r.sysstat_version is None
    assert r.unparsed == [] and r.warnings == []
    row = r.devices.iloc[0]
    assert row.device == "vda" and row.report == 0 and bool(row.since_boot)
    # from the text: r/s 1604.36, rkB/s 32820.53, w/s 7848.57, wkB/s 542043.56,
    # wareq-sz 69.06, w_await 0.05, d/s 23.76, f_await 0.01, aqu-sz 0.51, %util 12.34
    assert row.r_per_s == pytest.approx(1604.36)
    assert row.rkb_per_s == pytest.approx(32820.53)
    assert row.w_per_s == pytest.approx(7848.57)
    assert row.wkb_per_s == pytest.approx(542043.56)
    assert row.wareq_sz_kb == pytest.approx(69.06)
    assert row.w_await_ms == pytest.approx(0.05)
    assert row.d_per_s == pytest.approx(23.76)
    assert row.f_await_ms == pytest.approx(0.01)
    assert row.aqu_sz == pytest.approx(0.51)
    assert row.util_pct == pytest.approx(12.34)
    assert "svctm_ms" not in r.devices.columns  # removed from sysstat 12 output
    cpu = r.cpu.iloc[0]
    assert (cpu.user_pct, cpu.system_pct, cpu.iowait_pct, cpu.idle_pct) == (
        pytest.approx(5.91),
        pytest.approx(3.62),
        pytest.approx(1.58),
        pytest.approx(88.88),
    )


def test_x_1_3_gzip_since_boot_and_summary(fixtures_dir: Path) -> None:
    """-x 1 3 (gzip): three reports, the first flagged since-boot and left out of the means."""
    r = iostat.parse(_fx(fixtures_dir, "iostat-12.6.1_x_1_3.txt.gz"))
    assert r.devices.report.tolist() == [0, 1, 2]
    assert r.devices.since_boot.tolist() == [True, False, False]
    assert r.cpu.since_boot.tolist() == [True, False, False]
    s = iostat.summary(r)
    json.dumps(s)
    vda = s["devices"]["vda"]
    # interval reports: w/s 110025.00 and 109528.00; wkB/s 7041600.00 and 7009740.00;
    # %util 90.80 and 89.20; w_await 0.03 twice; wareq-sz 64.00 twice
    assert vda["reports"] == 2
    assert vda["w_per_s"] == pytest.approx((110025.00 + 109528.00) / 2)
    assert vda["wkb_per_s"] == pytest.approx((7041600.00 + 7009740.00) / 2)
    assert vda["util_pct"] == pytest.approx((90.80 + 89.20) / 2)
    assert vda["w_await_ms"] == pytest.approx(0.03)
    assert vda["wareq_sz_kb"] == pytest.approx(64.0)
    assert vda["r_per_s"] == 0.0
    assert set(vda) == {
        "reports", "r_per_s", "w_per_s", "rkb_per_s", "wkb_per_s",
        "wareq_sz_kb", "w_await_ms", "util_pct",
    }  # fmt: skip
    # avg-cpu of reports 2 and 3: user 3.88/4.95, system 19.42/17.33, idle 76.70/77.72
    assert s["cpu"] == {
        "user": pytest.approx((3.88 + 4.95) / 2),
        "system": pytest.approx((19.42 + 17.33) / 2),
        "iowait": 0.0,
        "idle": pytest.approx((76.70 + 77.72) / 2),
    }


def test_single_report_summary_uses_it(fixtures_dir: Path) -> None:
    """With only the since-boot report, the summary averages that one report."""
    s = iostat.summary(iostat.parse(_fx(fixtures_dir, "iostat-12.6.1_x.txt")))
    assert s["devices"]["vda"]["reports"] == 1
    assert s["devices"]["vda"]["util_pct"] == pytest.approx(12.34)


def test_x_m_converted_to_kb(fixtures_dir: Path) -> None:
    """-m: MB/s columns become kB/s (×1024); request sizes stay kB."""
    r = iostat.parse(_fx(fixtures_dir, "iostat-12.6.1_x_m.txt"))
    assert "rMB/s" not in r.devices.columns
    second = r.devices.iloc[1]
    # text: wMB/s 6869.75, rMB/s 0.00, wareq-sz 64.00
    assert second.wkb_per_s == pytest.approx(6869.75 * 1024)
    assert second.rkb_per_s == 0.0
    assert second.wareq_sz_kb == pytest.approx(64.0)
    assert r.devices.iloc[0].dkb_per_s == pytest.approx(1.35 * 1024)


def test_x_k_same_as_default(fixtures_dir: Path) -> None:
    """-k: kB columns, two reports."""
    r = iostat.parse(_fx(fixtures_dir, "iostat-12.6.1_x_k.txt"))
    assert len(r.devices) == 2
    assert r.devices.since_boot.tolist() == [True, False]


def test_x_t_timestamps(fixtures_dir: Path) -> None:
    """-t (C locale, 2-digit year): each report carries its timestamp."""
    path = _fx(fixtures_dir, "iostat-12.6.1_x_t.txt")
    stamps = re.findall(r"^(\d\d/\d\d/\d\d \d\d:\d\d:\d\d)$", path.read_text(), re.MULTILINE)
    r = iostat.parse(path)
    expected = [datetime.strptime(s, "%m/%d/%y %H:%M:%S") for s in stamps]
    assert len(expected) == 2
    assert r.devices.timestamp.tolist() == expected
    assert r.cpu.timestamp.tolist() == expected


def test_x_t_en_us_am_pm(fixtures_dir: Path) -> None:
    """en_US -t: 4-digit year and 12-hour clock; 12:08:11 AM is 00:08:11."""
    r = iostat.parse(_fx(fixtures_dir, "iostat-12.6.1_x_t_en_US.txt"))
    assert r.date == "11/21/2026"
    assert r.devices.timestamp.tolist() == [
        datetime(2026, 11, 21, 0, 8, 11),
        datetime(2026, 11, 21, 0, 8, 12),
    ]
    assert r.devices.iloc[1].wkb_per_s == pytest.approx(5622528.00)


def test_de_de_comma_decimals_read_correctly(fixtures_dir: Path) -> None:
    """de_DE: comma decimals and dotted dates are read, not misread."""
    r = iostat.parse(_fx(fixtures_dir, "iostat-12.6.1_x_t_de_DE.txt"))
    assert r.date == "21.11.2026"
    assert r.devices.timestamp.tolist() == [
        datetime(2026, 11, 21, 0, 8, 12),
        datetime(2026, 11, 21, 0, 8, 13),
    ]
    # text: "1555,00  31810,88" and second report "92249,00 5894828,00 ... 84,00"
    assert r.devices.iloc[0].r_per_s == pytest.approx(1555.00)
    assert r.devices.iloc[0].rkb_per_s == pytest.approx(31810.88)
    assert r.devices.iloc[1].w_per_s == pytest.approx(92249.00)
    assert r.devices.iloc[1].wkb_per_s == pytest.approx(5894828.00)
    assert r.devices.iloc[1].util_pct == pytest.approx(84.00)
    assert r.cpu.iloc[1].user_pct == pytest.approx(38.31)


def test_mixed_decimal_separators_refused(tmp_path: Path, fixtures_dir: Path) -> None:
    """A dot value in a comma-decimal file is refused with its line, never misread."""
    text = _fx(fixtures_dir, "iostat-12.6.1_x_t_de_DE.txt").read_text()
    lines = text.splitlines()
    n = next(i for i, ln in enumerate(lines) if ln.startswith("vda"))
    lines[n] = lines[n].replace("1555,00", "1555.00")
    path = tmp_path / "mixed.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(IngestError) as exc:
        iostat.parse(path)
    assert exc.value.line == n + 1


def test_translated_header_refused(tmp_path: Path, fixtures_dir: Path) -> None:
    """A translated column name is an IngestError naming the column, not a positional guess."""
    text = _fx(fixtures_dir, "iostat-12.6.1_x.txt").read_text().replace("%util", "%Ausl")
    path = tmp_path / "translated.txt"
    path.write_text(text)
    with pytest.raises(IngestError, match="%Ausl"):
        iostat.parse(path)


def test_columns_by_name_not_position(tmp_path: Path) -> None:
    """Reordered columns are read by name."""
    text = (
        "Linux 6.1.0 (host) \t11/21/2026 \t_x86_64_\t(2 CPU)\n\n"
        "Device:   %util     w/s     r/s\n"
        "sda        50.00   10.00    2.00\n"
    )
    path = tmp_path / "reordered.txt"
    path.write_text(text)
    r = iostat.parse(path)
    row = r.devices.iloc[0]
    assert (row.util_pct, row.w_per_s, row.r_per_s) == (50.0, 10.0, 2.0)
    assert (r.kernel, r.host, r.cpu_count) == ("6.1.0", "host", 2)


def test_human_readable_refused(fixtures_dir: Path) -> None:
    """-h output is refused clearly, naming the line."""
    with pytest.raises(IngestError, match=r"iostat -h") as exc:
        iostat.parse(_fx(fixtures_dir, "iostat-12.6.1_x_h.txt"))
    assert exc.value.line is not None


def test_json_closed(fixtures_dir: Path) -> None:
    """-o JSON -x: values equal the JSON fields; first report since boot; no version in JSON."""
    path = _fx(fixtures_dir, "iostat-12.6.1_json_x.json")
    doc = json.loads(path.read_text())
    host = doc["sysstat"]["hosts"][0]
    r = iostat.parse(path)
    assert r.format == "iostat-json"
    assert (r.host, r.kernel, r.cpu_count) == (host["nodename"], host["release"], 2)
    assert r.sysstat_version is None
    stats = host["statistics"]
    assert r.devices.since_boot.tolist() == [True] + [False] * (len(stats) - 1)
    for k, rep in enumerate(stats):
        disk = rep["disk"][0]
        row = r.devices.iloc[k]
        assert row.device == disk["disk_device"]
        assert row.wkb_per_s == pytest.approx(disk["wkB/s"])
        assert row.wrqm_pct == pytest.approx(disk["wrqm"])
        assert row.util_pct == pytest.approx(disk["util"])
        assert r.cpu.iloc[k].iowait_pct == pytest.approx(rep["avg-cpu"]["iowait"])


def test_json_sigint_closed_with_timestamps(fixtures_dir: Path) -> None:
    """SIGINT: iostat closes the JSON itself; timestamps are read."""
    path = _fx(fixtures_dir, "iostat-12.6.1_json_t_sigint.json")
    stats = json.loads(path.read_text())["sysstat"]["hosts"][0]["statistics"]
    r = iostat.parse(path)
    assert r.warnings == []
    expected = [datetime.strptime(s["timestamp"], "%m/%d/%y %H:%M:%S") for s in stats]
    assert r.devices.timestamp.tolist() == expected


def test_json_unclosed_recovered(fixtures_dir: Path) -> None:
    """SIGTERM left the JSON unclosed: the complete reports are recovered, with a warning."""
    path = _fx(fixtures_dir, "iostat-12.6.1_json_t_unclosed.json")
    text = path.read_text()
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    n_reports = text.count('"timestamp"')
    r = iostat.parse(path)
    assert len(r.cpu) == n_reports
    assert any("unclosed" in w for w in r.warnings)
    assert r.devices.since_boot.tolist() == [True] + [False] * (n_reports - 1)
    last_util = float(re.findall(r'"util": ([\d.]+)', text)[-1])
    assert r.devices.iloc[-1].util_pct == pytest.approx(last_util)


def test_json_cut_mid_report_drops_only_partial(tmp_path: Path, fixtures_dir: Path) -> None:
    """A JSON cut inside a report keeps the complete reports before it."""
    text = _fx(fixtures_dir, "iostat-12.6.1_json_t_sigint.json").read_text()
    cut = text.rfind('"disk_device"')
    path = tmp_path / "cut.json"
    path.write_text(text[:cut])
    r = iostat.parse(path)
    assert len(r.cpu) == text.count('"timestamp"') - 1


def test_json_bad_value_names_path(tmp_path: Path, fixtures_dir: Path) -> None:
    """A non-numeric JSON value is refused with its JSON path."""
    doc = json.loads(_fx(fixtures_dir, "iostat-12.6.1_json_x.json").read_text())
    doc["sysstat"]["hosts"][0]["statistics"][1]["disk"][0]["w/s"] = "lots"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(IngestError) as exc:
        iostat.parse(path)
    assert exc.value.json_path == "statistics[1].disk[0].w/s"


def test_unknown_line_kept_as_unparsed(tmp_path: Path, fixtures_dir: Path) -> None:
    """A stray line is counted and reported, not dropped."""
    text = _fx(fixtures_dir, "iostat-12.6.1_x.txt").read_text() + "something odd\n"
    path = tmp_path / "odd.txt"
    path.write_text(text)
    r = iostat.parse(path)
    assert r.unparsed == [(len(text.splitlines()), "something odd")]
    assert r.warnings


def test_short_row_refused(tmp_path: Path, fixtures_dir: Path) -> None:
    """A device row with a missing value is refused with its line."""
    lines = _fx(fixtures_dir, "iostat-12.6.1_x.txt").read_text().splitlines()
    n = next(i for i, ln in enumerate(lines) if ln.startswith("vda"))
    lines[n] = lines[n].rsplit(maxsplit=1)[0]
    path = tmp_path / "short.txt"
    path.write_text("\n".join(lines))
    with pytest.raises(IngestError) as exc:
        iostat.parse(path)
    assert exc.value.line == n + 1


def test_not_iostat_refused(tmp_path: Path) -> None:
    """Text with no report is refused."""
    path = tmp_path / "x.txt"
    path.write_text("hello\nworld\n")
    with pytest.raises(IngestError, match="no iostat report"):
        iostat.parse(path)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("iostat-12.6.1_x.txt", "iostat-text"),
        ("iostat-12.6.1_x_t_de_DE.txt", "iostat-text"),
        ("iostat-12.6.1_json_x.json", "iostat-json"),
        ("iostat-12.6.1_json_t_unclosed.json", "iostat-json"),
    ],
)
def test_sniff(fixtures_dir: Path, name: str, expected: str) -> None:
    """sniff() recognises iostat text and JSON by content."""
    assert iostat.sniff(read_text(_fx(fixtures_dir, name))) == expected


def test_sniff_rejects_fio(fixtures_dir: Path) -> None:
    """sniff() is None for fio output."""
    for path in (fixtures_dir / "fio").iterdir():
        assert iostat.sniff(read_text(path)) is None, path.name


# ---------------------------------------------------------------- third-party corpus

CORPUS_REFUSED = {"sysstat-tests_iostat-h-human.out": "iostat -h"}


def _corpus_names(corpus_dir: Path) -> list[str]:
    """Names of the corpus iostat files."""
    return sorted(p.name for p in (corpus_dir / "iostat").iterdir())


def test_corpus_files_known(corpus_dir: Path) -> None:
    """The checks below cover every corpus iostat file."""
    names = set(_corpus_names(corpus_dir))
    assert names == set(CORPUS_TEXT_ROWS) | set(CORPUS_JSON) | set(CORPUS_REFUSED) | {
        "sysstat-tests_iostat-ct-timestamps.out"
    }


# file -> (device, report, column, value from the text, read by hand)
CORPUS_TEXT_ROWS = {
    "jc_centos77_iostat-1-interval.out": ("dm-0", 0, "rkb_per_s", 4.39),
    "jc_centos77_iostat-mx.out": ("sda", 0, "rkb_per_s", 0.01 * 1024),  # rMB/s 0.01
    "jc_centos77_iostat-x.out": ("sda", 0, "avgrq_sz_kb", 52.53 / 2),  # 512-byte sectors
    "jc_centos77_iostat.out": ("sda", 0, "wkb", 42368.0),
    "jc_ubuntu1804_iostat-m.out": ("sda", 0, "wkb_per_s", 3.88 * 1024),  # MB_wrtn/s
    "jc_ubuntu1804_iostat-x.out": ("sda", 0, "wareq_sz_kb", 185.52),
    "jc_ubuntu2010_iostat-x.out": ("sda", 0, "wrqm_pct", 61.15),
    "jc_ubuntu2010_iostat.out": ("sda", 0, "rkb_per_s", 103.76),
    "sysstat-tests_iostat-xs-short.out": ("sdr", 2, "areq_sz_kb", 1.15),
}


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(CORPUS_TEXT_ROWS))
def test_corpus_text(corpus_dir: Path, name: str) -> None:
    """Corpus text files parse; one hand-read value checked; report count from the file."""
    path = corpus_dir / "iostat" / name
    text = path.read_text()
    device, report, column, value = CORPUS_TEXT_ROWS[name]
    r = iostat.parse(path)
    assert r.unparsed == []
    row = r.devices[(r.devices.device == device) & (r.devices.report == report)]
    assert len(row) == 1
    assert row.iloc[0][column] == pytest.approx(value)
    assert r.devices.report.nunique() == len(re.findall(r"^Device", text, re.MULTILINE))
    assert len(r.cpu) == text.count("avg-cpu:")
    header = text.splitlines()[0]
    assert r.host == re.search(r"\((.*?)\)", header).group(1)
    assert r.cpu_count == int(re.search(r"\((\d+) CPU\)", header).group(1))


CORPUS_JSON = ["sysstat-tests_iostat-g-JSON.json", "sysstat-tests_iostat-x-p-ALL-JSON.json"]


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_JSON)
def test_corpus_json(corpus_dir: Path, name: str) -> None:
    """Corpus JSON: every disk row equals the file's fields (MB converted to kB)."""
    path = corpus_dir / "iostat" / name
    host = json.loads(path.read_text())["sysstat"]["hosts"][0]
    r = iostat.parse(path)
    assert (r.host, r.cpu_count, r.date) == (host["nodename"], host["number-of-cpus"], host["date"])
    disks = [(k, d) for k, rep in enumerate(host["statistics"]) for d in rep["disk"]]
    assert len(r.devices) == len(disks)
    for (k, disk), row in zip(disks, r.devices.itertuples(), strict=True):
        assert (row.report, row.device) == (k, disk["disk_device"])
        if "rkB/s" in disk:
            assert row.rkb_per_s == pytest.approx(disk["rkB/s"])
            assert row.r_await_ms == pytest.approx(disk["r_await"])
        else:
            assert row.rkb_per_s == pytest.approx(disk["MB_read/s"] * 1024)
            assert row.wkb == pytest.approx(disk["MB_wrtn"] * 1024)
    assert len(r.cpu) == sum("avg-cpu" in rep for rep in host["statistics"])


@pytest.mark.corpus
def test_corpus_cpu_only_timestamps(corpus_dir: Path) -> None:
    """-c -t (C locale, 06/01/20 fits both date orders): read month-first, with a warning."""
    r = iostat.parse(corpus_dir / "iostat" / "sysstat-tests_iostat-ct-timestamps.out")
    assert r.devices.empty
    assert r.cpu.timestamp.tolist() == [
        datetime(2020, 6, 1, 12, 53, 20),
        datetime(2020, 6, 1, 12, 53, 21),
    ]
    assert r.cpu.nice_pct.tolist() == [39.91, 12.50]
    assert any("month-first" in w for w in r.warnings)


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "message"), sorted(CORPUS_REFUSED.items()))
def test_corpus_refused(corpus_dir: Path, name: str, message: str) -> None:
    """Corpus files that cannot be read without guessing are refused."""
    with pytest.raises(IngestError, match=re.escape(message)):
        iostat.parse(corpus_dir / "iostat" / name)


def test_old_sysstat_cpu_header(tmp_path: Path) -> None:
    """Old sysstat avg-cpu (%sys, no %steal) is read by name; the missing column is absent."""
    text = (
        "Linux 2.6.9 (old) \t01/02/2006\n\n"
        "avg-cpu:  %user   %nice    %sys %iowait   %idle\n"
        "           1.50    0.00    2.50    3.00   93.00\n\n"
        "Device:    rrqm/s wrqm/s   r/s   w/s  rsec/s  wsec/s avgrq-sz avgqu-sz   await  svctm  %util\n"
        "hda          0.10   2.00  1.00  4.00   16.00  64.00    16.00     0.02    4.00   1.00   0.50\n"
    )
    path = tmp_path / "old.txt"
    path.write_text(text)
    r = iostat.parse(path)
    cpu = r.cpu.iloc[0]
    assert (cpu.user_pct, cpu.system_pct, cpu.iowait_pct, cpu.idle_pct) == (1.5, 2.5, 3.0, 93.0)
    assert "steal_pct" not in r.cpu.columns
    row = r.devices.iloc[0]
    # sectors of 512 bytes: 16 rsec/s = 8 kB/s, 64 wsec/s = 32 kB/s, avgrq-sz 16 sectors = 8 kB
    assert (row.rkb_per_s, row.wkb_per_s, row.avgrq_sz_kb) == (8.0, 32.0, 8.0)
    assert (row.svctm_ms, row.await_ms, row.aqu_sz) == (1.0, 4.0, 0.02)
    # this old header has no arch or CPU count
    assert (r.host, r.kernel, r.date, r.cpu_count) == ("old", "2.6.9", "01/02/2006", None)
    assert r.unparsed == []
    s = iostat.summary(r)
    assert s["cpu"] == {"user": 1.5, "system": 2.5, "iowait": 3.0, "idle": 93.0}
    assert s["devices"]["hda"]["wareq_sz_kb"] is None


@pytest.mark.corpus
def test_sniff_leaves_other_tools_alone(corpus_dir: Path) -> None:
    """Neither fio's nor iostat's sniff() claims the corpus ping and iperf3 outputs."""
    from iscsi_report.core.ingest import fio

    for folder in ("ping", "iperf3"):
        for path in (corpus_dir / folder).iterdir():
            text = read_text(path)
            assert iostat.sniff(text) is None, path.name
            assert fio.sniff(text) is None, path.name


def test_device_only_reports_split_on_device_header(tmp_path: Path) -> None:
    """-d without -t: each Device header starts the next report."""
    block = "Device            r/s     w/s\nsda              {r}    {w}\n\n"
    text = "Linux 6.1.0 (host) \t11/21/2026 \t_x86_64_\t(2 CPU)\n\n" + "".join(
        block.format(r=f"{r:.2f}", w=f"{w:.2f}") for r, w in ((1, 2), (3, 4), (5, 6))
    )
    path = tmp_path / "d.txt"
    path.write_text(text)
    r = iostat.parse(path)
    assert r.devices.report.tolist() == [0, 1, 2]
    assert r.devices.r_per_s.tolist() == [1.0, 3.0, 5.0]
    assert r.cpu.empty
    assert iostat.summary(r)["devices"]["sda"]["w_per_s"] == pytest.approx(5.0)
    assert iostat.summary(r)["cpu"] == {"user": None, "system": None, "iowait": None, "idle": None}
