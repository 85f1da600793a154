"""Pure parts of the lab, runnable anywhere: delay-line arithmetic, sweep design, setup helpers."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from lab_labels import REQUIRED_LABELS

from iscsi_report.cli import build_parser
from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB
from iscsi_report.lab import build, delayline, device_sweep, state, sweep, topology
from iscsi_report.lab.sweep import CONFIRM_DESIGNS, design, one_way_trips, r2t_per_write

# -- delay line ---------------------------------------------------------------------------


def test_serialisation_time_at_the_link_rate() -> None:
    s = delayline.Serialiser(link_mbps=1000, one_way_delay_ms=0)
    assert s.tx_ns(65000) == 520_000  # 65000 B * 8 bit / 1 Gbit/s = 520 µs
    assert delayline.Serialiser(link_mbps=0, one_way_delay_ms=0).tx_ns(65000) == 0


def test_delivery_is_serialisation_then_delay_fifo() -> None:
    s = delayline.Serialiser(link_mbps=1000, one_way_delay_ms=2.0)
    d1 = s.schedule(arrival_ns=0, size_bytes=65000)
    d2 = s.schedule(arrival_ns=0, size_bytes=65000)  # queued behind the first
    assert d1 == 520_000 + 2_000_000
    assert d2 == 2 * 520_000 + 2_000_000
    d3 = s.schedule(arrival_ns=10_000_000, size_bytes=100)  # link idle again
    assert d3 == 10_000_000 + 800 + 2_000_000


def test_queue_limit_drops_and_pop_due_keeps_order() -> None:
    s = delayline.Serialiser(link_mbps=1000, one_way_delay_ms=1.0, queue_bytes=150)
    s.push(0, b"a" * 100)
    s.push(0, b"b" * 100)  # over the queue limit: dropped
    s.push(0, b"c" * 50)
    assert s.dropped == 1
    assert s.pop_due(1_000_000) == []
    assert s.next_due_ns() == 800 + 1_000_000
    assert s.pop_due(2_000_000) == [b"a" * 100, b"c" * 50]
    assert s.queued_bytes == 0 and s.forwarded == 2


# -- protocol arithmetic ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bs", "imm", "want"),
    [
        (64 * BYTES_PER_KIB, 65536, 0),
        (256 * BYTES_PER_KIB, 65536, 1),
        (2 * BYTES_PER_MIB, 65536, 8),
        (2 * BYTES_PER_MIB, 8192, 8),
        (4 * BYTES_PER_MIB, 65536, 16),
        (1 * BYTES_PER_MIB, 8192, 4),
        (8 * BYTES_PER_KIB, 8192, 0),
    ],
)
def test_r2ts_per_write(bs: int, imm: int, want: int) -> None:
    assert r2t_per_write(bs, imm) == want


def test_one_way_trips_with_a_sliding_window() -> None:
    assert one_way_trips(2 * BYTES_PER_MIB, 65536, 1) == 18  # the issue's 18 trips at window 1
    assert one_way_trips(2 * BYTES_PER_MIB, 65536, 8) == 4
    assert one_way_trips(2 * BYTES_PER_MIB, 65536, 2) == 10
    assert one_way_trips(64 * BYTES_PER_KIB, 65536, 1) == 2


def test_target_params_immediate_data_and_segments() -> None:
    p = topology.target_params(4, 65536, 262144)
    assert (p.first_burst_bytes, p.max_recv_data_segment_bytes, p.r2t_window) == (65536, 262144, 4)
    p = topology.target_params(1, 8192, 8192)
    assert min(p.first_burst_bytes, p.max_recv_data_segment_bytes) == 8192
    p = topology.target_params(1, 8192, 262144)
    assert p.first_burst_bytes == 8192
    assert p.keys()["InitialR2T"] == "Yes" and p.keys()["ImmediateData"] == "Yes"
    with pytest.raises(ValueError):
        topology.target_params(1, 65536, 8192)


# -- sweep design -------------------------------------------------------------------------


def test_full_design_covers_the_issue() -> None:
    runs, points = design()
    delays = {r.one_way_delay_ms for r in runs}
    assert {0.0, 0.5, 1.0, 2.0, 4.0} <= delays
    assert {r.bs_bytes for r in runs} >= {64 * BYTES_PER_KIB, 4 * BYTES_PER_MIB}
    assert {r.r2t_window for r in runs} == {1, 2, 4, 8}
    assert {r.immediate_data_bytes for r in runs} == {8192, 65536}
    assert {r.iodepth for r in runs} == {1, 4}
    assert {r.rw for r in runs} == {"read", "write"}
    plain = [r for r in runs if not r.captured]
    configs: dict[tuple, set[int]] = {}
    for r in plain:
        key = (
            r.one_way_delay_ms,
            r.link_mbps,
            r.bs_bytes,
            r.rw,
            r.iodepth,
            r.r2t_window,
            r.immediate_data_bytes,
            r.max_recv_data_segment_bytes,
        )
        configs.setdefault(key, set()).add(r.replicate)
    assert all(reps == {1, 2, 3} for reps in configs.values())
    # every write configuration at 1000 Mbit/s has one captured run
    captured = {
        (
            r.one_way_delay_ms,
            r.bs_bytes,
            r.iodepth,
            r.r2t_window,
            r.immediate_data_bytes,
            r.max_recv_data_segment_bytes,
        )
        for r in runs
        if r.captured
    }
    for key in configs:
        if key[3] == "write" and key[1] == sweep.LINK_MBPS:
            assert (key[0], key[2], key[4], key[5], key[6], key[7]) in captured
    assert (0.0, 0.0) in points and all(p in points for p in [(d, 1000.0) for d in delays])


def test_design_leaves_holdout_configurations() -> None:
    runs, _ = design()
    roles = {r.design_role for r in runs}
    assert roles == {"fit", "holdout"}
    fit = [r for r in runs if r.design_role == "fit"]
    assert {r.one_way_delay_ms for r in fit} == {0.0, 1.0}
    held = {r.one_way_delay_ms for r in runs if r.design_role == "holdout"}
    assert {2.0, 4.0, 0.5} <= held
    assert {r.r2t_window for r in runs if r.design_role == "holdout"} >= {2, 4}


def test_labels_and_unique_file_names() -> None:
    runs, _ = design()
    stems = [r.stem() for r in runs]
    assert len(stems) == len(set(stems))
    for r in runs[:50]:
        assert set(r.labels()) >= REQUIRED_LABELS


def test_sweep_time_and_size_budget() -> None:
    """Rough budget: transfer time at the link rate plus ~0.4 s per fio process < 25 min."""
    runs, points = design()
    transfer_s = sum(r.n_ios * r.bs_bytes * 8 / (r.link_mbps * 1e6) for r in runs)
    trips_s = sum(
        r.n_ios * one_way_trips(r.bs_bytes, r.immediate_data_bytes, r.r2t_window) * r.one_way_delay_ms / 1000
        for r in runs
        if r.rw == "write"
    )
    estimate_s = transfer_s + trips_s + 0.4 * len(runs) + 7 * len(points)
    assert estimate_s < 25 * 60
    assert len(runs) * 8_000 < 20e6  # fio JSON files are about 6-7 kB


def test_quick_design_is_small() -> None:
    runs, points = design(quick=True)
    assert len(runs) <= 20 and len(points) == 2
    assert {r.r2t_window for r in runs} == {1, 8}


def _values(runs: list[sweep.FioRun]) -> dict[str, set]:
    """The delays, block sizes and windows a design measures."""
    return {
        "delays": {r.one_way_delay_ms for r in runs},
        "sizes": {r.bs_bytes for r in runs},
        "windows": {r.r2t_window for r in runs},
    }


def test_confirmation_design_2_is_the_declared_sweep() -> None:
    runs, points = design(confirm=2)
    captured = [r for r in runs if r.captured]
    assert (len(runs), len(runs) - len(captured), len(captured)) == (264, 198, 66)
    assert _values(runs) == {
        "delays": {0.75, 1.5, 5.0},
        "sizes": {
            96 * BYTES_PER_KIB,
            160 * BYTES_PER_KIB,
            640 * BYTES_PER_KIB,
            1280 * BYTES_PER_KIB,
            2560 * BYTES_PER_KIB,
        },
        "windows": {1, 5, 7},
    }
    assert points == [(d, sweep.LINK_MBPS) for d in (0.75, 1.5, 5.0)]
    assert {r.rw for r in runs} == {"write"} and {r.iodepth for r in runs} == {1}
    assert {r.design_role for r in runs} == {"confirmation"}
    assert {(r.immediate_data_bytes, r.max_recv_data_segment_bytes) for r in runs} == set(sweep.IMMEDIATE)
    single = [r for r in runs if r.bs_bytes in sweep.CONFIRM_DESIGNS[2].single_round_bs]
    assert {r.r2t_window for r in single} == {1}  # one R2T round: a window would change nothing


def test_confirmation_design_2_shares_only_window_1_with_earlier_designs() -> None:
    new = _values(design(confirm=2)[0])
    for earlier in (design()[0], design(confirm=1)[0]):
        old = _values(earlier)
        assert not new["delays"] & old["delays"]
        assert not new["sizes"] & old["sizes"]
        assert new["windows"] & old["windows"] == {1}


def test_the_blind_design_3_measures_rates_delays_and_sizes_no_sweep_used() -> None:
    runs, points = design(confirm=3)
    new = _values(runs)
    for earlier in (design()[0], design(confirm=1)[0], design(confirm=2)[0]):
        old = _values(earlier)
        assert not new["delays"] & old["delays"] and not new["sizes"] & old["sizes"]
        assert not {r.link_mbps for r in runs} & {r.link_mbps for r in earlier}
    assert points == [(d, link) for link in (700.0, 300.0) for d in (0.35, 2.5)]
    plain = [r for r in runs if not r.captured]
    assert {(r.rw, r.iodepth) for r in plain} == {("write", 1), ("read", 1), ("write", sweep.DEEP_IODEPTH)}
    assert {r.n_ios for r in plain} == {24}
    assert {r.r2t_window for r in runs if r.rw == "read"} == {1}
    stems = [r.stem() for r in runs]
    assert len(stems) == len(set(stems)), "every run writes its own file"


def test_the_second_blind_design_4_uses_values_no_sweep_used_and_a_queue_depth_of_6() -> None:
    runs, points = design(confirm=4)
    new = _values(runs)
    earlier = design()[0] + [r for n in (1, 2, 3) for r in design(confirm=n)[0]] + device_sweep.design()
    old = _values(earlier)
    assert not new["delays"] & old["delays"] and not new["sizes"] & old["sizes"]
    assert not {r.link_mbps for r in runs} & {r.link_mbps for r in earlier}
    assert points == [(d, link) for link in (850.0, 380.0) for d in (1.25, 4.5)]
    plain = [r for r in runs if not r.captured]
    assert {(r.rw, r.iodepth) for r in plain} == {("write", 1), ("read", 1), ("write", 6)}
    assert 6 not in {r.iodepth for r in earlier}
    configurations = {r.stem().rsplit("-r", 1)[0] for r in plain}
    assert len(configurations) == 84 and len(plain) == 84 * sweep.REPLICATES
    assert len({r.bs_bytes for r in plain if r.rw == "read"}) == 3
    stems = [r.stem() for r in runs]
    assert len(stems) == len(set(stems)), "every run writes its own file"


def _every_earlier_run() -> list[sweep.FioRun]:
    """Every fio run of every design before the fourth blind sweep: sweeps, diagnoses, jitter and device."""
    from iscsi_report.lab import jitter_sweep, reads_sweep, segments_sweep

    runs = design()[0] + [r for n in range(1, 6) for r in design(confirm=n)[0]] + device_sweep.design()
    runs += reads_sweep.design() + [r for n in segments_sweep.DESIGNS for r in segments_sweep.design(n)]
    return runs + [r for n in jitter_sweep.DESIGNS for r in jitter_sweep.design(n)]


def test_the_fourth_blind_design_6_uses_values_no_sweep_used_and_five_read_sizes() -> None:
    runs, points = design(confirm=6)
    earlier = _every_earlier_run()
    new, old = _values(runs), _values(earlier)
    assert not new["delays"] & old["delays"] and not new["sizes"] & old["sizes"]
    assert not {r.link_mbps for r in runs} & {r.link_mbps for r in earlier}
    assert points == [(d, link) for link in (2000.0, 800.0) for d in (0.4, 1.4, 2.8)]
    plain = [r for r in runs if not r.captured]
    assert {(r.rw, r.iodepth) for r in plain} == {("write", 1), ("read", 1), ("write", 2)}
    assert 2 not in {r.iodepth for r in earlier}
    configurations = {r.stem().rsplit("-r", 1)[0] for r in plain}
    assert len(configurations) == 138 and len(plain) == 138 * sweep.REPLICATES
    reads = {r.bs_bytes for r in plain if r.rw == "read"}
    assert len(reads) == 5 and max(reads) < 3 * 1024 * 1024  # below the allocator step
    stems = [r.stem() for r in runs]
    assert len(stems) == len(set(stems)), "every run writes its own file"


def test_the_fifth_blind_design_7_uses_values_no_sweep_used_and_measures_each_mean_finely() -> None:
    runs, points = design(confirm=7)
    earlier = _every_earlier_run() + design(confirm=6)[0]
    new, old = _values(runs), _values(earlier)
    assert not new["delays"] & old["delays"] and not new["sizes"] & old["sizes"]
    assert not {r.link_mbps for r in runs} & {r.link_mbps for r in earlier}
    assert points == [(d, link) for link in (1200.0, 500.0) for d in (0.9, 2.2)]
    plain = [r for r in runs if not r.captured]
    assert {(r.rw, r.iodepth) for r in plain} == {("write", 1), ("read", 1), ("write", 5)}
    assert 5 not in {r.iodepth for r in earlier}
    configurations = {r.stem().rsplit("-r", 1)[0] for r in plain}
    assert len(configurations) == 84 and len(plain) == 84 * 5  # five replicates each
    assert {r.n_ios for r in plain} == {64} and {r.replicate for r in plain} == {1, 2, 3, 4, 5}
    reads = {r.bs_bytes for r in plain if r.rw == "read"}
    assert len(reads) == 3 and max(reads) < 3 * 1024 * 1024  # below the allocator step
    stems = [r.stem() for r in runs]
    assert len(stems) == len(set(stems)), "every run writes its own file"


def test_the_seventh_blind_design_9_uses_values_no_sweep_used() -> None:
    runs, points = design(confirm=9)
    earlier = _every_earlier_run() + [r for n in (6, 7, 8) for r in design(confirm=n)[0]]
    new, old = _values(runs), _values(earlier)
    assert not new["delays"] & old["delays"] and not new["sizes"] & old["sizes"]
    assert not {r.link_mbps for r in runs} & {r.link_mbps for r in earlier}
    assert points == [(d, link) for link in (1100.0, 460.0) for d in (0.45, 2.6)]
    plain = [r for r in runs if not r.captured]
    assert {(r.rw, r.iodepth) for r in plain} == {("write", 1), ("read", 1), ("write", 8)}
    assert 8 not in {r.iodepth for r in earlier}
    assert len(plain) == 3 * 84 and len({r.stem() for r in runs}) == len(runs)


def test_the_sixth_blind_design_8_uses_values_no_sweep_used() -> None:
    runs, points = design(confirm=8)
    earlier = _every_earlier_run() + design(confirm=6)[0] + design(confirm=7)[0]
    new, old = _values(runs), _values(earlier)
    assert not new["delays"] & old["delays"] and not new["sizes"] & old["sizes"]
    assert not {r.link_mbps for r in runs} & {r.link_mbps for r in earlier}
    assert points == [(d, link) for link in (1400.0, 650.0) for d in (0.7, 3.2)]
    plain = [r for r in runs if not r.captured]
    assert {(r.rw, r.iodepth) for r in plain} == {("write", 1), ("read", 1), ("write", 7)}
    assert 7 not in {r.iodepth for r in earlier}
    configurations = {r.stem().rsplit("-r", 1)[0] for r in plain}
    assert len(configurations) == 84 and len(plain) == 84 * sweep.REPLICATES
    assert {r.r2t_window for r in plain} == {1, 5}
    stems = [r.stem() for r in runs]
    assert len(stems) == len(set(stems)), "every run writes its own file"


def test_an_unknown_confirmation_design_is_an_error_naming_the_choices() -> None:
    unknown = max(CONFIRM_DESIGNS) + 1
    choices = ", ".join(str(n) for n in sorted(CONFIRM_DESIGNS))
    with pytest.raises(ValueError, match=rf"--confirm {unknown}: expected one of \[{choices}\]"):
        design(confirm=unknown)


def _fake_runner(delay_line: str = "python") -> SimpleNamespace:
    """What write_manifest reads of a Runner, without a lab: tool versions and no files."""
    tools = SimpleNamespace(fio_source_version="fio-0", tgt_source_version="tgt-0", patch_sha256="0" * 64)
    return SimpleNamespace(
        lab=SimpleNamespace(tools=tools, delay_line=delay_line),
        entries=[],
        login_keys={},
        login_by_set={},
        failures=[],
    )


@pytest.mark.parametrize(
    ("quick", "confirm", "flags"),
    [(False, 0, ""), (True, 0, " --quick"), (False, 1, " --confirm"), (False, 2, " --confirm 2")],
)
def test_manifest_generator_names_the_command_that_wrote_it(
    tmp_path: Path, quick: bool, confirm: int, flags: str
) -> None:
    out = tmp_path / "lab-x"
    out.mkdir()
    path = sweep.write_manifest(out, _fake_runner(), quick, 1.0, {}, confirm=confirm)  # type: ignore[arg-type]
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert doc["generator"] == f"iscsi-report lab run --out lab-x{flags}"
    assert doc["title"].endswith("(confirmation sweep)") == bool(confirm)
    assert doc["lab"]["delay_line"] == "python" and "lab/delayline.py" in doc["description"]


@pytest.mark.parametrize(
    ("line", "flags", "tail"),
    [
        ("python", None, ""),
        ("compiled", None, " --delay-line compiled"),
        ("python", " --jitter 2", " --jitter 2"),
        ("compiled", " --jitter 2", " --jitter 2 --delay-line compiled"),
    ],
)
def test_manifest_generator_names_a_delay_line_other_than_the_default(
    tmp_path: Path, line: str, flags: str | None, tail: str
) -> None:
    out = tmp_path / "lab-x"
    out.mkdir()
    path = sweep.write_manifest(out, _fake_runner(line), False, 1.0, {}, flags=flags)  # type: ignore[arg-type]
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert doc["generator"] == f"iscsi-report lab run --out lab-x{tail}"
    assert doc["lab"]["delay_line"] == line
    program = "lab/delayline.py" if line == "python" else "native/delayline.c"
    assert program in doc["description"]


@pytest.mark.parametrize(
    ("extra", "want"), [([], 0), (["--confirm"], 1), (["--confirm", "2"], 2), (["--confirm=2"], 2)]
)
def test_lab_run_parses_the_confirmation_design(extra: list[str], want: int) -> None:
    argv = ["lab", "run", "--out", "X", *extra]
    args = build_parser("lab").parse_args(argv)
    assert (args.lab_command, args.out, args.confirm) == ("run", "X", want)


def test_lab_run_rejects_a_confirmation_design_that_is_not_a_number() -> None:
    with pytest.raises(SystemExit):
        build_parser("lab").parse_args(["lab", "run", "--out", "X", "--confirm", "two"])


def test_fio_command_uses_libiscsi_and_json() -> None:
    run = design(quick=True)[0][0]
    cmd = sweep.fio_cmd(Path("/x/fio"), run, Path("/o.json"))
    assert "--ioengine=libiscsi" in cmd and "--direct=1" in cmd and "--output-format=json" in cmd
    assert any(c.startswith("--filename=iscsi\\://198.18.0.2\\:3260/") for c in cmd)


# -- setup helpers ------------------------------------------------------------------------


def test_deb_src_mirrors_the_debian_suites(tmp_path: Path) -> None:
    (tmp_path / "debian.sources").write_text(
        "Types: deb\n# comment\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n"
        "Components: main\n"
    )
    (tmp_path / "other.sources").write_text(
        "Types: deb\nURIs: https://example.invalid/x\nSuites: nodistro\nComponents: main\n"
    )
    text = build.deb_src_text(tmp_path, tmp_path / "absent.list")
    assert text.count("Types: deb-src") == 2
    assert "Suites: bookworm bookworm-updates" in text and "Suites: bookworm-security" in text
    assert "example.invalid" not in text and "# comment" not in text


def test_patch_is_committed_and_keyed() -> None:
    assert build.PATCH.is_file()
    text = build.PATCH.read_text()
    assert "r2t_window" in text and "+++ b/usr/iscsi/iscsid.c" in text
    assert len(build.patch_sha256()) == 64


def test_safety_constants() -> None:
    assert state.LAB_NET == "198.18.0.0/15"
    assert topology.ADDR_INI.startswith("198.18.") and topology.ADDR_TGT.startswith("198.18.")
    assert topology.NS_INI.startswith(state.NS_PREFIX) and topology.NS_TGT.startswith(state.NS_PREFIX)
    assert topology.LUN_FILE.startswith("/dev/shm/iscsilab-")


def test_visit_order_rotates_delays_per_replicate() -> None:
    pts = [1, 2, 3, 4]
    orders = [sweep.visit_order(pts, rep) for rep in (1, 2, 3)]
    assert all(sorted(o) == pts for o in orders)
    assert len({tuple(o) for o in orders}) == 3
    assert [o[0] for o in orders] != [orders[0][0]] * 3
    assert sweep.visit_order([], 1) == []


def test_the_jitter_sweep_has_long_runs_with_bins_under_four_shapes() -> None:
    from iscsi_report.lab import jitter_sweep

    runs = jitter_sweep.design()
    plain = [r for r in runs if not r.captured]
    assert {r.jitter for r in runs} == {"fixed", "gamma", "lognormal", "bimodal"}
    assert {r.n_ios for r in plain} == {jitter_sweep.WRITES} and jitter_sweep.WRITES >= 1000
    assert all(r.bins for r in runs) and len({r.stem() for r in runs}) == len(runs)
    per_shape = {(r.bs_bytes, r.r2t_window) for r in plain if r.jitter == "gamma"}
    assert len(per_shape) == 5 and {w for _, w in per_shape} == {1, 8}
    assert all(r.labels()["jitter"] == r.jitter for r in runs)
    cmd = sweep.fio_cmd(Path("fio"), plain[0], Path("out.json"))
    assert "--output-format=json+" in cmd


def test_jitter_design_2_uses_shapes_sizes_and_windows_design_1_never_ran() -> None:
    from iscsi_report.lab import jitter_sweep

    first, second = jitter_sweep.design(1), jitter_sweep.design(2)
    plain = [r for r in second if not r.captured]
    assert {r.n_ios for r in plain} == {jitter_sweep.WRITES} and all(r.bins for r in second)
    assert len({r.stem() for r in second}) == len(second)
    shapes = jitter_sweep.shapes(2)
    assert set(shapes) & set(jitter_sweep.shapes(1)) == {"fixed"} and len(shapes) == 4
    docs = [s.doc for s in shapes.values() if s is not None]
    assert any(d.get("correlation", 0) > 0 for d in docs), "one shape hits consecutive packets"
    assert sum(d["shape"] == "mixture" and len(d["weights"]) == 3 for d in docs) == 1
    old = {(r.bs_bytes, r.r2t_window) for r in first if not r.captured}
    new = {(r.bs_bytes, r.r2t_window) for r in plain if r.jitter == "fixed"}
    assert not new & old and not {bs for bs, _ in new} & {bs for bs, _ in old}
    assert {w for _, w in new} == {2, 4}
    # every window has today's fixed runs at two sizes (the host residual's a + b x bytes)
    assert all(sum(w == win for _, w in new) >= 2 for win in (2, 4))
    # 12 jittered targets (the issue's at least 3 shapes x 3 sizes) and a capture per shape
    assert len([r for r in plain if r.jitter != "fixed"]) == 12
    assert sum(r.captured for r in second) == 4


def test_jitter_design_3_runs_windows_1_and_8_at_new_sizes_under_a_replayed_wifi_trace() -> None:
    from iscsi_report.lab import jitter_sweep

    third = jitter_sweep.design(3)
    plain = [r for r in third if not r.captured]
    assert {r.n_ios for r in plain} == {jitter_sweep.WRITES} and all(r.bins for r in third)
    assert len({r.stem() for r in third}) == len(third)
    earlier = {r.bs_bytes for n in (1, 2) for r in jitter_sweep.design(n)}
    new = {(r.bs_bytes, r.r2t_window) for r in plain if r.jitter == "fixed"}
    assert {w for _, w in new} == {1, 8} and len({bs for bs, _ in new}) == 3
    assert not {bs for bs, _ in new} & earlier
    # 18 jittered targets (3 shapes x 3 sizes x windows 1 and 8) and a capture per shape
    assert len([r for r in plain if r.jitter != "fixed"]) == 18 and sum(r.captured for r in third) == 4
    names = jitter_sweep.SHAPE_NAMES
    assert set(names[3]) & (set(names[1]) | set(names[2])) == {"fixed"}
    with pytest.raises(ValueError, match="replays a ping trace"):
        jitter_sweep.shapes(3)


def test_jitter_design_3_replays_the_blogs_wifi_ping_and_keeps_only_its_summary() -> None:
    from iscsi_report.lab import jitter_sweep

    root = Path(__file__).resolve().parents[2] / "data" / "raw"
    shape = jitter_sweep.shapes(3, root)["wifitrace"]
    assert shape is not None and shape.doc["shape"] == "trace"
    extras = np.asarray(shape.doc["trace_ms"])
    assert extras.size == jitter_sweep.TRACE_PINGS and extras.min() == 0.0
    # half the rise of the blog's 2 ms Wi-Fi RTT over its fastest reply (mean 2.95 ms published)
    assert 0.9 < float(extras.mean()) < 1.4
    record = shape.record()
    assert "trace_ms" not in record and record["trace_points"] == jitter_sweep.TRACE_PINGS
    assert "reconstructed" in record["source"]


def test_jitter_design_4_pings_ten_times_longer_at_new_sizes_and_replays_the_wifis_next_minute() -> None:
    from iscsi_report.lab import jitter_sweep

    fourth = jitter_sweep.design(4)
    plain = [r for r in fourth if not r.captured]
    earlier = {r.bs_bytes for n in (1, 2, 3) for r in jitter_sweep.design(n)}
    new = {(r.bs_bytes, r.r2t_window) for r in plain if r.jitter == "fixed"}
    assert {w for _, w in new} == {1, 8} and len({bs for bs, _ in new}) == 3
    assert not {bs for bs, _ in new} & earlier
    assert len([r for r in plain if r.jitter != "fixed"]) == 18 and len({r.stem() for r in fourth}) == len(
        fourth
    )
    assert jitter_sweep.ping_count(4) == 10 * jitter_sweep.ping_count(3)
    root = Path(__file__).resolve().parents[2] / "data" / "raw"
    third, again = (jitter_sweep.shapes(n, root)["wifitrace"] for n in (3, 4))
    assert third is not None and again is not None
    assert len(again.doc["trace_ms"]) == jitter_sweep.TRACE_PINGS
    assert again.doc["trace_ms"] != third.doc["trace_ms"], "the next minute, not the one design 3 replayed"
    assert "replies 30000 to 59999" in again.record()["source"]


def test_an_unknown_jitter_design_is_refused_before_the_lab_starts() -> None:
    from iscsi_report.lab import jitter_sweep

    with pytest.raises(ValueError, match=r"jitter design 6: expected one of \(1, 2, 3, 4, 5\)"):
        jitter_sweep.design(6)

    args = build_parser("lab").parse_args(["lab", "run", "--out", "x", "--jitter", "2"])
    assert args.jitter == 2
    assert build_parser("lab").parse_args(["lab", "run", "--out", "x", "--jitter"]).jitter == 1
    assert build_parser("lab").parse_args(["lab", "run", "--out", "x"]).jitter == 0


def test_jitter_design_5_runs_new_sizes_under_the_wifis_third_minute_and_frequent_spikes() -> None:
    from iscsi_report.lab import jitter_sweep

    fifth = jitter_sweep.design(5)
    plain = [r for r in fifth if not r.captured]
    earlier = {r.bs_bytes for n in (1, 2, 3, 4) for r in jitter_sweep.design(n)}
    new = {(r.bs_bytes, r.r2t_window) for r in plain if r.jitter == "fixed"}
    assert {bs for bs, _ in new}.isdisjoint(earlier) and {w for _, w in new} == {1, 8}
    assert len([r for r in plain if r.jitter != "fixed"]) == 18 and sum(r.captured for r in fifth) == 4
    assert jitter_sweep.ping_count(5) == jitter_sweep.ping_count(4) == 10 * jitter_sweep.ping_count(3)
    root = Path(__file__).resolve().parents[2] / "data" / "raw"
    shapes = jitter_sweep.shapes(5, root)
    assert set(shapes) == {"fixed", "wifitrace", "corrlognormal", "frequentspikes"}
    fourth, trace = (jitter_sweep.shapes(n, root)["wifitrace"] for n in (4, 5))
    assert fourth is not None and trace is not None
    assert len(trace.doc["trace_ms"]) == jitter_sweep.TRACE_PINGS
    assert trace.doc["trace_ms"] != fourth.doc["trace_ms"], "the third minute, not design 4's second"
    assert "replies 60000 to 89999" in trace.record()["source"]
