"""The conclusions chapter and the front page: every estimate equals its chapter's own function,
every row names its binding bound, no model beats a ceiling, and the front page's toc logic."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from iscsi_report.analyses import conclusions as c
from iscsi_report.analyses import fit, projections, uncertainty, whatif
from iscsi_report.core import dataset as datasets
from iscsi_report.core.measurements import open_dataset
from iscsi_report.pipeline import toc

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "data" / "published"
SETTINGS = c.Settings(n_draws=2000)  # fewer draws than the chapter: the same seed and order still apply


@pytest.fixture(scope="module")
def rec() -> c.Reconciliation:
    return c.reconcile(ROOT, SETTINGS)


@pytest.fixture(scope="module")
def blog_ds() -> datasets.Dataset:
    return open_dataset(ROOT / "data" / "raw" / c.BLOG_DATASET)


def _est(rec: c.Reconciliation, upgrade: str, source: str) -> dict[str, float]:
    sel = rec.estimates[(rec.estimates["upgrade"] == upgrade) & (rec.estimates["source"] == source)]
    assert len(sel) == 1, (upgrade, source)
    return sel.iloc[0].to_dict()


def _by_config(projs: list[projections.Projection]) -> dict[c.Config, projections.Projection]:
    return {(p.max_outstanding_r2t, p.network, p.device): p for p in projs}


def test_one_row_per_upgrade_and_source(rec: c.Reconciliation) -> None:
    keys = [u.key for u in rec.upgrades]
    assert keys == ["wired", "ssd", "r2t", "all", "faster_link"]
    assert len(rec.estimates) == len(keys) * len(c.SOURCES)
    assert list(c.wide_table(rec)["Upgrade"]) == [u.label for u in rec.upgrades]


def test_blog_formula_and_published_values_equal_the_projections_chapter(rec: c.Reconciliation) -> None:
    blog = _by_config(projections.blog_projections(PUBLISHED))
    for u in rec.upgrades:
        formula = _est(rec, u.key, c.BLOG_FORMULA)
        measured = _est(rec, u.key, c.PUBLISHED)
        assert formula["before_mib_per_s"] == blog[u.before].mib_per_s
        assert measured["before_mib_per_s"] == blog[u.before].measured_mib_per_s
        if u.after_link_bps is None:
            assert formula["after_mib_per_s"] == blog[u.after].mib_per_s
            assert measured["after_mib_per_s"] == blog[u.after].measured_mib_per_s
        else:  # never measured: no value, and a note says so
            assert math.isnan(measured["after_mib_per_s"]) and measured["note"]
            assert formula["after_mib_per_s"] > blog[u.after].mib_per_s  # a faster link only helps


def test_physical_values_equal_the_measured_projections(
    rec: c.Reconciliation, blog_ds: datasets.Dataset
) -> None:
    inputs = projections.measured_inputs(blog_ds, SETTINGS.bs_bytes)
    measured = _by_config(projections.measured_projections(blog_ds, inputs))
    for u in rec.upgrades:
        row = _est(rec, u.key, c.PHYSICAL)
        assert row["before_mib_per_s"] == measured[u.before].mib_per_s
        if u.after_link_bps is None:
            assert row["after_mib_per_s"] == measured[u.after].mib_per_s
            assert row["binding"] == measured[u.after].throughput.binding
    faster = _est(rec, "faster_link", c.PHYSICAL)
    raw_mib_per_s = (
        SETTINGS.faster_link_bps / 8 / 2**20
    )  # the link's ceiling is payload: headers take a share
    assert 0.98 * raw_mib_per_s < faster["after_link_ceiling_mib_per_s"] < raw_mib_per_s


def test_fitted_values_equal_the_whatif_chapter(rec: c.Reconciliation, blog_ds: datasets.Dataset) -> None:
    """The What-if chapter's own upgrade table, computed as its notebook does, gives the same values."""
    runs, device_fits = fit.runs_from_dataset(blog_ds, PUBLISHED)
    result = fit.fit_variant(runs, fit.variant_by_name(fit.PRIMARY_VARIANT))
    devices = {**whatif.profiles_from_storage(device_fits), whatif.NVME_DEFAULT.name: whatif.NVME_DEFAULT}
    questions = whatif.blog_questions(faster_link_bps=SETTINGS.faster_link_bps)
    configs = whatif.upgrade_configs(
        runs, whatif.cpu_profile_from_runs(runs), devices, questions, SETTINGS.device_request_fraction
    )
    chapter = uncertainty.project(
        configs, result, fit.rtt_samples_by_network(blog_ds), n_draws=SETTINGS.n_draws, seed=SETTINGS.seed
    )
    today, wired, ssd, r2t, everything, faster = (chapter.iloc[i] for i in range(6))
    pairs = [
        ("wired", today, wired),
        ("ssd", wired, ssd),  # issue 25: the chapter's SSD is the front page's, on the wired network
        ("r2t", today, r2t),
        ("all", today, everything),
        ("faster_link", everything, faster),
    ]
    for key, before, after in pairs:
        row = _est(rec, key, c.FITTED)
        assert row["before_mib_per_s"] == before["mib_per_s"]
        assert row["after_mib_per_s"] == after["mib_per_s"]
        assert (row["after_lo_mib_per_s"], row["after_hi_mib_per_s"]) == (
            after["mib_per_s_lo"],
            after["mib_per_s_hi"],
        )
        assert row["binding"] == after["binding"]
        if key in whatif.UPGRADE_ROWS:  # the gain the chapter glues is the one the front page quotes
            assert c.answers(rec)[f"{key}_fitted_gain_pct"] == whatif.upgrade_gain_pct(chapter, key)


def test_every_row_names_its_binding_bound_and_no_model_beats_a_ceiling(rec: c.Reconciliation) -> None:
    wide = c.wide_table(rec)
    assert all(isinstance(b, str) and b for b in wide["Binding bound"])
    models = rec.estimates[rec.estimates["source"].isin([c.BLOG_FORMULA, c.PHYSICAL, c.FITTED])]
    assert set(models["binding"]) <= {"latency", "link", "device", "cpu"}
    for _, row in models.iterrows():
        ceilings = [row[f"after_{k}_ceiling_mib_per_s"] for k in c.CEILINGS]
        assert row["after_mib_per_s"] <= min(ceilings) + 1e-9, row.to_dict()
    assert all(w for w in wide["Why the estimates differ"])


def test_lab_row_is_the_measured_window_effect_at_the_nearest_delay(
    rec: c.Reconciliation, blog_ds: datasets.Dataset
) -> None:
    lab = _est(rec, "r2t", c.LAB)
    point = rec.lab_point
    assert lab["gain_pct"] == pytest.approx(
        point["before_latency_ms"] / point["after_latency_ms"] * 100 - 100
    )
    inputs = projections.measured_inputs(blog_ds, SETTINGS.bs_bytes)
    slow_ms = float(inputs.networks.set_index("network").loc["wireless", "one_way_ms"])
    gaps = (rec.lab_window["measured_one_way_ms"] - slow_ms).abs()
    assert point["measured_one_way_ms"] == rec.lab_window.loc[gaps.idxmin(), "measured_one_way_ms"]
    for other in ("wired", "ssd", "all", "faster_link"):  # no disk, no wireless, no faster link in the lab
        row = _est(rec, other, c.LAB)
        assert math.isnan(row["after_mib_per_s"]) and row["note"] == c.NOT_IN_LAB
    assert c.wide_table(rec).loc[0, c.LAB] == c.DASH


def test_nearest_delay_picks_the_closest_measured_one_way_latency(rec: c.Reconciliation) -> None:
    effect = rec.lab_window
    for i, ms in enumerate(effect["measured_one_way_ms"]):
        assert (
            c.nearest_delay(effect, float(ms) + 0.01)["measured_one_way_ms"]
            == effect["measured_one_way_ms"].iloc[i]
        )


def test_every_value_the_front_page_and_conclusions_glue_exists_and_is_finite(rec: c.Reconciliation) -> None:
    answers = c.answers(rec)
    for page in ("front", "conclusions"):
        text = (ROOT / "notebooks" / f"{page}.md").read_text(encoding="utf-8")
        keys = set(re.findall(r"\{glue:text\}`([A-Za-z0-9_]+)", text))
        assert keys, page
        computed_in_page = {
            "faster_link_gbit_per_s",
            "lab_gain_low_pct",
            "lab_gain_high_pct",
            "lab_delay_high_ms",
        }
        for key in keys - computed_in_page:
            assert key in answers, (page, key)
            value = answers[key]
            assert isinstance(value, str) or math.isfinite(value), (page, key)


def test_front_page_answers_come_from_the_estimates(rec: c.Reconciliation) -> None:
    answers = c.answers(rec)
    assert answers["wired_measured_gain_pct"] == _est(rec, "wired", c.PUBLISHED)["gain_pct"]
    assert answers["r2t_lab_gain_pct"] == _est(rec, "r2t", c.LAB)["gain_pct"]
    q = rec.blog_questions.set_index("glue_key")["value"]
    assert answers["measured_mib_per_s"] < answers["link_mib_per_s"] < answers["local_device_mib_per_s"]
    assert answers["network_share_pct"] == pytest.approx(
        q["q1_one_way_trips_share_pct"] + q["q1_transmission_share_pct"]
    )


# ---- the front page in the table of contents -----------------------------------------------------

BASE = {
    "format": "jb-book",
    "root": "intro",
    "parts": [
        {"caption": "Runs", "chapters": [{"file": "runs/a/x"}]},
        {"caption": "Summary", "chapters": [{"file": "runs/summary/front"}]},
        {"caption": "About", "chapters": [{"file": "intro"}, {"file": "provenance"}]},
    ],
}


def test_front_page_becomes_the_root_when_its_run_is_built() -> None:
    doc = toc.with_front_page(BASE, "runs/summary/front")
    assert doc["root"] == "runs/summary/front"
    files = [ch["file"] for p in doc["parts"] for ch in p["chapters"]]
    assert files == ["runs/a/x", "intro", "provenance"]  # the emptied part is gone; intro stays a chapter
    assert [p["caption"] for p in doc["parts"]] == ["Runs", "About"]


def test_without_its_run_the_base_root_stays_and_is_listed_once() -> None:
    base = {**BASE, "parts": [BASE["parts"][0], BASE["parts"][2]]}
    for front in ("runs/summary/front", None):
        doc = toc.with_front_page(base, front)
        assert doc["root"] == "intro"
        files = [ch["file"] for p in doc["parts"] for ch in p["chapters"]]
        assert files == ["runs/a/x", "provenance"]


def test_the_lab_window_effect_leaves_out_captured_runs_like_the_lab_chapters(rec: c.Reconciliation) -> None:
    """One quantity, one set of runs: the lab chapters' medians (write_fit_rows drops dumpcap runs)."""
    from iscsi_report.analyses import lab

    data = lab.load(ROOT / "data" / "raw" / c.LAB_DATASET)
    rows = lab.write_fit_rows(lab.features(data))
    s = SETTINGS
    sel = rows[
        (rows["bs_bytes"] == s.bs_bytes)
        & (rows["immediate_data_bytes"] == s.lab_immediate_data_bytes)
        & (rows["max_recv_data_segment_bytes"] == s.lab_max_recv_data_segment_bytes)
        & (rows["link_mbps"] == s.lab_link_mbps)
    ]
    for _, point in rec.lab_window.iterrows():
        at = sel[sel["one_way_delay_ms"] == point["one_way_delay_ms"]]
        before = at[at["r2t_window"] == s.lab_window_before]["latency_ms"]
        assert point["runs_per_window"] == len(before)
        assert point["before_latency_ms"] == pytest.approx(before.median(), rel=1e-12)


# ---- the figures of the front page and the conclusions (issue 25) --------------------------------


def _layer_rows(spec: dict, mark: str) -> list[dict]:
    """The data rows of the layers drawn with ``mark``."""
    out = []
    for layer in spec["layer"]:
        kind = layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        if kind == mark:
            out += spec["datasets"][layer["data"]["name"]]
    return out


def test_front_figure_draws_the_numbers_the_page_glues(rec: c.Reconciliation) -> None:
    from iscsi_report.presentation.charts import conclusions as charts

    answers = c.answers(rec)
    rows = c.question_rows(answers)
    assert list(dict.fromkeys(rows["question"])) == [label for _, label in c.QUESTIONS]
    measured = rows[rows["series"] == c.MEASURED].set_index("order")["mib_per_s"]
    assert list(measured) == [
        answers["measured_mib_per_s"],
        answers["wired_measured_mib_per_s"],
        answers["ssd_measured_mib_per_s"],
    ]
    today = rows[rows["order"] == 0].set_index("series")["mib_per_s"]
    assert today["link ceiling"] == answers["link_mib_per_s"]
    assert today["device ceiling"] == answers["local_device_mib_per_s"]
    assert today["Fitted model"] == answers["today_fitted_mib_per_s"]
    ssd_fit = rows[(rows["order"] == 2) & (rows["series"] == "Fitted model")].iloc[0]
    assert (ssd_fit["lo_mib_per_s"], ssd_fit["hi_mib_per_s"]) == (
        answers["ssd_fitted_lo_mib_per_s"],
        answers["ssd_fitted_hi_mib_per_s"],
    )
    spec = charts.questions_at_a_glance(rows).to_dict()
    points = _layer_rows(spec, "point")
    assert {p["series"] for p in points} == {name for name, _ in c.QUESTION_SERIES}
    labels = {p["row"] for p in points}
    assert all(
        f"bound: {answers['today_binding_words']}" in label for label in labels if label.startswith("1.")
    )
    assert len(_layer_rows(spec, "tick")) == 2 * len(c.QUESTIONS)


def test_conclusions_figure_has_every_given_gain_and_names_each_binding(rec: c.Reconciliation) -> None:
    from iscsi_report.presentation.charts import conclusions as charts

    words = c.binding_words(c.answers(rec))
    assert set(words) == {"today", *(u.key for u in rec.upgrades)}
    spec = charts.upgrade_gains(rec.estimates, words).to_dict()
    points = _layer_rows(spec, "point")
    given = rec.estimates.dropna(subset=["gain_pct"])
    assert sorted(p["gain_pct"] for p in points) == sorted(given["gain_pct"])
    assert not any(p["source"] == c.PUBLISHED and p["upgrade"] == "faster_link" for p in points)
    fitted = {r["upgrade"]: r for r in _layer_rows(spec, "rule") if "gain_hi_pct" in r}
    for u in ("wired", "ssd", "faster_link"):
        row = _est(rec, u, c.FITTED)
        assert fitted[u]["gain_hi_pct"] == pytest.approx(
            (row["after_hi_mib_per_s"] / row["before_mib_per_s"] - 1) * 100
        )
        assert fitted[u]["row"].endswith(f"bound: {words[u]}")


def test_today_binding_is_what_the_models_say_of_the_configuration_today(rec: c.Reconciliation) -> None:
    answers = c.answers(rec)
    wired = rec.estimates[
        (rec.estimates["upgrade"] == "wired")
        & rec.estimates["source"].isin([c.BLOG_FORMULA, c.PHYSICAL, c.FITTED])
    ]
    assert set(wired["before_binding"]) == {answers["today_binding"]}
    assert answers["today_blog_mib_per_s"] == _est(rec, "wired", c.BLOG_FORMULA)["before_mib_per_s"]
