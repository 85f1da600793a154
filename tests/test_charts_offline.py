"""Charts for readers: one colour scheme, captioned figures with alt text, a local runtime."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import altair as alt
import pandas as pd
import pytest

from iscsi_report.pipeline import assets
from iscsi_report.presentation import report
from iscsi_report.presentation.charts import network, storage, theme

SPEC_RE = re.compile(r'<script type="application/json" class="iscsi-chart-spec">(.*?)</script>', re.S)
FALLBACK_RE = re.compile(r'src="data:image/svg\+xml;charset=utf-8,([^"]+)"')


def _scale(channel: alt.Color) -> dict:
    return channel.to_dict()["scale"]


def test_colour_scale_names_only_the_values_shown_in_the_scheme_order() -> None:
    scale = _scale(theme.color("network", "network", ["wireless", "wired", "wireless"]))
    assert scale["domain"] == ["wired", "wireless"]
    assert scale["range"] == [theme.NETWORK_COLOURS["wired"], theme.NETWORK_COLOURS["wireless"]]


def test_a_value_keeps_its_colour_whatever_else_the_chart_shows() -> None:
    alone = _scale(theme.color("device", "device", ["ssd"]))
    mixed = _scale(theme.color("device", "device", ["hdd", "ram", "ssd"]))
    assert alone["range"][alone["domain"].index("ssd")] == mixed["range"][mixed["domain"].index("ssd")]


def test_unknown_values_get_spare_colours_never_used_by_the_scheme() -> None:
    scale = _scale(theme.color("network", "network", ["wired", "10gbe", "infiniband"]))
    assert scale["domain"] == ["wired", "10gbe", "infiniband"]
    assert scale["range"][1:] == list(theme.SPARE_COLOURS[:2])
    used = {c for mapping in theme.COLOURS.values() for c in mapping.values()}
    assert not used & set(theme.SPARE_COLOURS)


def test_network_and_device_colours_never_coincide() -> None:
    assert not set(theme.NETWORK_COLOURS.values()) & set(theme.DEVICE_COLOURS.values())


def test_window_values_match_as_numbers_or_text() -> None:
    scale = theme.dash("w", [16.0, 1, "4"]).to_dict()["scale"]
    assert scale["domain"] == [1, "4", 16]
    assert scale["range"] == [theme.WINDOW_DASHES["1"], theme.WINDOW_DASHES["4"], theme.WINDOW_DASHES["16"]]


def test_unknown_colour_kind_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'wavelength'"):
        theme.color_scale("wavelength", ["red"])


def _hist() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "bin_lo_ms": [0.1, 0.2] * 2,
            "bin_hi_ms": [0.2, 0.4] * 2,
            "share": [0.4, 0.6] * 2,
            "network": ["wired"] * 2 + ["wireless"] * 2,
            "interval_s": [0.2] * 2 + [1.0] * 2,
        }
    )


def test_network_chapter_colours_wireless_the_same_in_every_chart() -> None:
    hist = network.rtt_histogram(_hist()).to_dict()
    ecdf = network.rtt_ecdf(_hist().rename(columns={"bin_lo_ms": "rtt_ms", "share": "cumulative_share"}))
    for spec in (hist["spec"]["encoding"]["color"], ecdf.to_dict()["encoding"]["color"]):
        assert spec["field"] == "network"
        assert spec["scale"]["range"][spec["scale"]["domain"].index("wireless")] == "#f58518"


def test_storage_lines_take_the_device_colours() -> None:
    table = pd.DataFrame(
        {"bs_kib": [64, 128], "mib_per_s": [1.0, 2.0], "iops": [3.0, 4.0], "device": ["hdd", "ssd"]}
    )
    color = storage.throughput_by_bs(table).to_dict()["hconcat"][0]["encoding"]["color"]
    assert color["scale"]["range"] == [theme.DEVICE_COLOURS["hdd"], theme.DEVICE_COLOURS["ssd"]]


def _line_chart(label: str = "a") -> alt.Chart:
    data = pd.DataFrame({"t_s": [1, 2], "mbit_per_s": [3.0, 4.0], "file": [label, "b"]})
    return (
        alt.Chart(data)
        .mark_line()
        .encode(
            x=alt.X("t_s:Q", title="time (s)"),
            y=alt.Y("mbit_per_s:Q", title="throughput (Mbit/s)"),
            color=alt.Color("file:N", title="file"),
        )
        .properties(width=300, height=100)
    )


def test_chart_is_a_captioned_figure_with_the_spec_and_an_svg_fallback() -> None:
    html = report.chart_html(_line_chart(), caption="Throughput <per> second", alt="Two lines rising in time")
    assert html.startswith('<figure class="iscsi-chart">') and html.endswith("</figure>")
    assert "<figcaption>Throughput &lt;per&gt; second</figcaption>" in html
    assert 'alt="Two lines rising in time"' in html
    svg = unquote(FALLBACK_RE.search(html).group(1))
    assert svg == report.svg(_line_chart())
    assert not re.search(r"[\s\"<>&#]", FALLBACK_RE.search(html).group(1).replace(" ", "")), "unsafe in a URI"
    spec = json.loads(SPEC_RE.search(html).group(1))
    assert spec["description"] == "Two lines rising in time"
    assert spec["config"]["mark"]["tooltip"] == {"content": "encoding"}
    assert spec["width"] == "container" and spec["autosize"]["type"] == "fit-x"


def test_default_alt_text_is_a_sentence_from_the_axes_not_a_path() -> None:
    html = report.chart_html(_line_chart())
    text = "Chart of lines: throughput (Mbit/s) against time (s); colour by file."
    assert f'alt="{text}"' in html and f"<figcaption>{text}</figcaption>" in html


def test_facets_keep_their_width_and_name_their_panels() -> None:
    spec = report.spec_dict(network.rtt_histogram(_hist()))
    live = report.interactive_spec(spec, "x")
    assert "width" not in live and live["spec"]["width"] == spec["spec"]["width"]
    assert "one panel per group" in report.describe(spec)


def test_data_cannot_close_the_spec_script_early() -> None:
    html = report.chart_html(_line_chart("</script><script>alert(1)</script>"))
    assert html.count("</script>") == 1
    spec = json.loads(SPEC_RE.search(html).group(1))
    assert "</script><script>alert(1)</script>" in json.dumps(spec)


def test_chart_assets_are_written_with_the_bundle_wrapped(tmp_path: Path, monkeypatch) -> None:
    import vl_convert

    calls = []

    def fake_bundle(snippet: str, vl_version: str | None = None) -> str:
        calls.append(snippet)
        return "const _ = 1;" + snippet

    monkeypatch.setattr(vl_convert, "javascript_bundle", fake_bundle)
    cache = tmp_path / "cache"
    assets.write_chart_assets(tmp_path / "static", cache)
    assets.write_chart_assets(tmp_path / "static2", cache)
    bundle = (tmp_path / "static" / assets.BUNDLE).read_text()
    assert bundle.startswith("(function () {") and bundle.rstrip().endswith("})();")
    assert "window.vegaEmbed = vegaEmbed" in bundle
    assert len(calls) == 1, "the second build must reuse the cached bundle"
    assert (tmp_path / "static2" / assets.BUNDLE).read_text() == bundle
    assert "iscsi-chart-fallback" in (tmp_path / "static" / assets.SCRIPT).read_text()
    assert "overflow-x: auto" in (tmp_path / "static" / assets.STYLE).read_text()


def test_a_changed_snippet_or_wrapper_never_meets_an_old_bundle(tmp_path: Path, monkeypatch) -> None:
    import vl_convert

    calls = []
    monkeypatch.setattr(
        vl_convert, "javascript_bundle", lambda snippet, vl_version=None: calls.append(snippet) or snippet
    )
    assets.vega_bundle(tmp_path)
    monkeypatch.setattr(assets, "BUNDLE_SNIPPET", assets.BUNDLE_SNIPPET + " window.extra = 1;")
    assert "window.extra = 1;" in assets.vega_bundle(tmp_path)
    monkeypatch.setattr(assets, "BUNDLE_WRAPPER", ("(() => {\n", "\n})();\n"))
    assert assets.vega_bundle(tmp_path).startswith("(() => {")
    assert len(calls) == 3 and len(list(tmp_path.glob("vega-bundle-*.js"))) == 3


def test_the_named_asset_cache_wins_over_the_project_folder(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "project" / ".cache").mkdir(parents=True)
    app = SimpleNamespace(srcdir=str(tmp_path / "project" / "book"))
    monkeypatch.delenv(assets.ASSET_CACHE_ENV, raising=False)
    assert assets._cache_dir(app) == (tmp_path / "project" / ".cache" / "assets").resolve()
    monkeypatch.setenv(assets.ASSET_CACHE_ENV, str(tmp_path / "shared"))
    assert assets._cache_dir(app) == tmp_path / "shared"
