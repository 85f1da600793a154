"""iperf3 -J parser: real fixtures, the corpus, error and malformed cases.

Expected values are read from each file's own JSON end section with the json module here.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import iperf3

FIXTURES = Path(__file__).parents[1] / "fixtures" / "iperf3"


def raw_doc(path: Path) -> dict:
    """The JSON document, read without the package."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return json.loads(data)


GOOD = ["tcp_netns_tbf.json", "tcp_reverse.json", "tcp_P4.json", "tcp_bidir.json", "udp_100M.json.gz"]


@pytest.mark.parametrize("name", GOOD)
def test_fixture_end_sums(name: str) -> None:
    doc = raw_doc(FIXTURES / name)
    s = iperf3.summary(iperf3.parse(FIXTURES / name))
    assert s["sent_bps"] == doc["end"]["sum_sent"]["bits_per_second"]
    assert s["received_bps"] == doc["end"]["sum_received"]["bits_per_second"]
    assert s["protocol"] == doc["start"]["test_start"]["protocol"].lower()
    assert s["streams"] == doc["start"]["test_start"]["num_streams"]
    assert s["version"] == doc["start"]["version"]
    assert s["warnings"] == []


def test_flags() -> None:
    assert iperf3.parse(FIXTURES / "tcp_reverse.json").reverse is True
    assert iperf3.parse(FIXTURES / "tcp_netns_tbf.json").reverse is False
    bidir = iperf3.parse(FIXTURES / "tcp_bidir.json")
    assert bidir.bidir is True
    doc = raw_doc(FIXTURES / "tcp_bidir.json")
    s = iperf3.summary(bidir)
    assert s["reverse_sent_bps"] == doc["end"]["sum_sent_bidir_reverse"]["bits_per_second"]
    directions = set(bidir.intervals["direction"])
    assert directions == {"forward", "reverse"}


def test_intervals_frame_p4() -> None:
    doc = raw_doc(FIXTURES / "tcp_P4.json")
    df = iperf3.parse(FIXTURES / "tcp_P4.json").intervals
    n = len(doc["intervals"])
    assert (df["stream"] != "sum").sum() == 4 * n
    sums = df[df["stream"] == "sum"]
    assert sums["bytes"].tolist() == [i["sum"]["bytes"] for i in doc["intervals"]]
    assert sums["bits_per_s"].tolist() == [i["sum"]["bits_per_second"] for i in doc["intervals"]]


def test_udp_extras() -> None:
    doc = raw_doc(FIXTURES / "udp_100M.json.gz")
    s = iperf3.summary(iperf3.parse(FIXTURES / "udp_100M.json.gz"))
    assert s["protocol"] == "udp"
    assert s["jitter_ms"] == doc["end"]["sum"]["jitter_ms"]
    assert s["lost_packets"] == doc["end"]["sum"]["lost_packets"]


def test_error_field_is_quoted() -> None:
    with pytest.raises(IngestError, match="unable to connect to server") as info:
        iperf3.parse(FIXTURES / "error_no_server.json")
    assert info.value.json_path == "error"


def _minimal(end: str = '{"sum": {"start": 0, "end": 0, "bytes": 0, "bits_per_second": nan}}'):
    return (
        '{"start": {"version": "iperf 3.1", "test_start": {"protocol": "UDP", '
        '"num_streams": 1, "reverse": 0, "duration": 1, "note": "nan inside a string"}}, '
        '"intervals": [], "end": ' + end + "}"
    )


def test_nan_tokens_and_text_around() -> None:
    text = "warning: something\n" + _minimal() + "\niperf Done.\n"
    r = iperf3.parse_text(text, "x.json")
    assert r.doc["start"]["test_start"]["note"] == "nan inside a string"
    assert r.unparsed == [(1, "warning: something"), (3, "iperf Done.")]
    s = iperf3.summary(r)
    assert s["sent_bps"] is None  # NaN for no bytes moved -> null in the strict-JSON summary
    json.dumps(s, allow_nan=False)


@pytest.mark.parametrize("bps", ["nan", "-nan", "-5", "inf", "-inf"])
def test_nan_or_negative_bandwidth_with_bytes_is_refused(bps: str) -> None:
    text = _minimal('{"sum": {"start": 0, "end": 1, "bytes": 10, "bits_per_second": ' + bps + "}}")
    with pytest.raises(IngestError, match="expected a bandwidth >= 0 bits/s") as info:
        iperf3.parse_text(text, "x.json")
    assert info.value.json_path == "end.sum.bits_per_second"


def test_truncated_json_names_line() -> None:
    text = FIXTURES.joinpath("tcp_netns_tbf.json").read_text()[:500]
    with pytest.raises(IngestError, match="invalid JSON") as info:
        iperf3.parse_text(text, "t.json")
    assert info.value.line is not None


def test_wrong_type_names_json_path() -> None:
    doc = raw_doc(FIXTURES / "tcp_netns_tbf.json")
    doc["intervals"][1]["sum"]["bytes"] = "many"
    with pytest.raises(IngestError) as info:
        iperf3.parse_text(json.dumps(doc), "w.json")
    assert info.value.json_path == "intervals[1].sum.bytes"


CORPUS_REFUSED = {
    "cloudpilot_iperf-3.6_text-output.txt": "plain-text",
    "cloudpilot_iperf-3.9_aborted-empty.json": "no results",
}


@pytest.mark.corpus
def test_corpus(corpus_dir: Path) -> None:
    for path in sorted((corpus_dir / "iperf3").iterdir()):
        if path.name in CORPUS_REFUSED:
            with pytest.raises(IngestError, match=CORPUS_REFUSED[path.name]):
                iperf3.parse(path)
            continue
        doc = json.loads(path.read_text())
        s = iperf3.summary(iperf3.parse(path))
        end = doc["end"]
        assert s["sent_bps"] == end["sum_sent"]["bits_per_second"], path.name
        assert s["received_bps"] == end["sum_received"]["bits_per_second"], path.name
        assert s["reverse"] == bool(doc["start"]["test_start"]["reverse"]), path.name
        assert s["streams"] == doc["start"]["test_start"]["num_streams"], path.name


def test_sniff() -> None:
    assert iperf3.sniff((FIXTURES / "tcp_P4.json").read_text()) == "iperf3-json"
    assert iperf3.sniff("PING x (1.2.3.4) 56(84) bytes of data.\n") is None
