"""Fit of the model's term coefficients: recovery, refusal of singular designs, collinearity flag, LOO."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iscsi_report.analyses import fit
from iscsi_report.analyses.fit import inputs as fit_inputs
from iscsi_report.core import model
from iscsi_report.core.errors import DesignError
from iscsi_report.core.measurements import open_dataset
from iscsi_report.core.units import BYTES_PER_MIB

KIB = 1024
BLOCK_SIZES = [64 * KIB, 128 * KIB, 256 * KIB, 512 * KIB, 1024 * KIB, 2048 * KIB]
NETWORKS = {"wireless": (1.475, 600e6), "wired": (0.11, 930e6)}
DEVICES = {"hdd": (0.3, 140.0), "ssd": (0.1, 380.0)}  # fixed ms, MiB/s
TRUE_BETA = {"one_way_ms": 1.1, "transmit_ms": 0.95, "device_ms": 0.6, "cpu_ms": 0.3}


def device_ms(device: str, request_bytes: float) -> float:
    fixed, mib = DEVICES[device]
    return fixed + request_bytes / (mib * BYTES_PER_MIB) * 1000


def synthetic_runs(
    beta=TRUE_BETA,
    noise_sd_ms=0.3,
    seed=7,
    networks=NETWORKS,
    devices=DEVICES,
    r2ts=(1, 16),
    cpu_per_mib_ms=4.0,
) -> pd.DataFrame:
    """Runs over networks x devices x R2T x block size with op_ms from known coefficients."""
    rng = np.random.default_rng(seed)
    rows = []
    cpu_factor = {"wired": 1.2}  # the wired runs pay a little more CPU per byte
    for net, (ow, bps) in networks.items():
        for dev in devices:
            for m in r2ts:
                for bs in BLOCK_SIZES:
                    rows.append(
                        {
                            "run": f"{net}-{dev}-{m}-{bs}",
                            "network": net,
                            "device": dev,
                            "bs_bytes": bs,
                            "max_outstanding_r2t": m,
                            "one_way_ms": ow,
                            "link_bps": bps,
                            "device_ms": device_ms(dev, bs / 2),
                            "cpu_ms": 0.2 + cpu_per_mib_ms * bs / BYTES_PER_MIB * cpu_factor.get(net, 1.0),
                            "op_ms": 1.0,
                        }
                    )
    runs = pd.DataFrame(rows)
    terms = fit.term_matrix(runs)
    runs["op_ms"] = fit.predict(beta, terms) + rng.normal(0, noise_sd_ms, len(runs))
    return runs


def test_unit_counts_match_the_blog_exchange():
    # 2 MiB, R2T=1: command + 8 R2T + 8 data + status = 18 legs, 32 x 64 KiB transmitted.
    no_headers = model.Assumptions(pdu_header_bytes=0)
    legs, units = fit.unit_counts(2 * BYTES_PER_MIB, model.IscsiParams(max_outstanding_r2t=1), no_headers)
    assert (legs, units) == (18.0, 32.0)
    # with a 48-byte header per PDU: the command and 255 Data-Out PDUs of at most 8 KiB
    _, with_headers = fit.unit_counts(2 * BYTES_PER_MIB, model.IscsiParams(max_outstanding_r2t=1))
    assert with_headers == pytest.approx(32.0 + 256 * model.BHS_BYTES / model.TRANSMIT_REFERENCE_BYTES)
    legs16, _ = fit.unit_counts(2 * BYTES_PER_MIB, model.IscsiParams(max_outstanding_r2t=16))
    assert legs16 == 4.0


def test_blog_as_written_reproduces_model_total():
    runs = synthetic_runs()
    terms = fit.term_matrix(runs)
    row = runs.iloc[5]
    expected = model.write_latency(
        int(row["bs_bytes"]),
        model.IscsiParams(max_outstanding_r2t=int(row["max_outstanding_r2t"])),
        model.Network(one_way_ms=row["one_way_ms"], link_bps=row["link_bps"]),
        row["device_ms"],
        row["cpu_ms"],
    ).total_ms
    assert fit.predict({r: 1.0 for r in fit.REGRESSORS}, terms)[5] == pytest.approx(expected)


def test_fit_recovers_known_coefficients_within_ci():
    result = fit.fit_variant(synthetic_runs(seed=0), fit.Variant("all_free"))
    coef = result.coefficients.set_index("term")
    for term, true in TRUE_BETA.items():
        assert coef.loc[term, "ci_low"] <= true <= coef.loc[term, "ci_high"], term
        assert coef.loc[term, "ci_high"] - coef.loc[term, "ci_low"] < 0.5
    assert not coef["fixed"].any()
    assert result.runs["hat"].between(0, 1).all()
    assert (result.runs["cooks_d"] >= 0).all()


def test_hc3_intervals_cover_at_about_the_nominal_rate():
    seeds = 40
    hits = dict.fromkeys(TRUE_BETA, 0)
    for seed in range(seeds):
        result = fit.fit_variant(synthetic_runs(seed=seed), fit.Variant("all_free"))
        coef = result.coefficients.set_index("term")
        for term, true in TRUE_BETA.items():
            hits[term] += coef.loc[term, "ci_low"] <= true <= coef.loc[term, "ci_high"]
    assert all(h >= 0.85 * seeds for h in hits.values()), hits


def test_fixed_coefficients_are_reported_as_fixed():
    result = fit.fit_variant(synthetic_runs(), fit.Variant("net", {"one_way_ms": 1.1, "transmit_ms": 0.95}))
    coef = result.coefficients.set_index("term")
    assert coef.loc["one_way_ms", "fixed"] and coef.loc["one_way_ms", "estimate"] == 1.1
    assert not coef.loc["device_ms", "fixed"]
    assert coef.loc["device_ms", "ci_low"] <= 0.6 <= coef.loc["device_ms", "ci_high"]
    assert list(result.cov.columns) == ["device_ms", "cpu_ms"]


def test_singular_design_is_refused():
    # CPU time exactly proportional to transmission time: the two columns are aliased.
    runs = synthetic_runs(networks={"wired": NETWORKS["wired"]})
    runs["cpu_ms"] = fit.term_matrix(runs)["transmit_ms"] * 0.5
    with pytest.raises(DesignError, match=r"singular design.*transmit_ms.*cpu_ms"):
        fit.fit_variant(runs, fit.Variant("all_free"))
    # Fixing one of the aliased terms makes it fit.
    ok = fit.fit_variant(runs, fit.Variant("tx_fixed", {"transmit_ms": 1.0}))
    assert ok.coefficients.set_index("term").loc["transmit_ms", "fixed"]


def test_zero_column_is_refused():
    runs = synthetic_runs()
    runs["cpu_ms"] = 0.0
    with pytest.raises(DesignError, match=r"cpu_ms.*zero in every run"):
        fit.fit_variant(runs, fit.Variant("all_free"))


def test_one_network_one_device_is_singular():
    # Transmission, device (fixed + per byte) and CPU (fixed + per byte) all lie in span{1, bs}.
    runs = synthetic_runs(networks={"wired": NETWORKS["wired"]}, devices={"hdd": DEVICES["hdd"]})
    with pytest.raises(DesignError, match="singular"):
        fit.fit_variant(runs, fit.Variant("all_free"))


def test_near_collinear_design_is_flagged_not_hidden():
    # One network, one device, CPU measured with a little noise: nearly, not exactly, aliased.
    runs = synthetic_runs(networks={"wired": NETWORKS["wired"]}, devices={"hdd": DEVICES["hdd"]})
    runs["cpu_ms"] *= np.random.default_rng(3).normal(1.0, 0.05, len(runs))
    result = fit.fit_variant(runs, fit.Variant("all_free"))
    assert result.near_collinear
    assert result.condition_number > fit.CONDITION_NUMBER_THRESHOLD
    assert any("near-collinear" in w for w in result.warnings)
    table = fit.variant_table([fit.VariantOutcome(result.variant, result, None)])
    assert table.loc[0, "status"] == "near-collinear"
    # Across networks and devices, with transmission pinned, the rest is well determined.
    pinned = fit.fit_variant(synthetic_runs(), fit.Variant("tx", {"transmit_ms": 0.95}))
    assert not pinned.near_collinear and pinned.warnings == []


def test_fit_variants_keeps_refusals():
    runs = synthetic_runs()
    runs["device_ms"] = 0.0
    outcomes = fit.fit_variants(runs)
    status = fit.variant_table(outcomes).set_index("variant")["status"]
    assert status["device_free"] == "refused"
    assert status["blog_as_written"] == "ok"


def test_missing_column_is_refused():
    with pytest.raises(DesignError, match="lacks column"):
        fit.term_matrix(synthetic_runs().drop(columns="cpu_ms"))


def test_leave_one_out_excludes_the_whole_configuration():
    runs = synthetic_runs(noise_sd_ms=0.0)
    # A duplicate of one configuration: it must not be in the training set of its twin.
    twin = runs.iloc[[11]].assign(run="twin", op_ms=runs.iloc[11]["op_ms"] * 3)
    runs = pd.concat([runs, twin], ignore_index=True)
    targets = runs["run"].eq(runs.iloc[11]["run"])
    loo = fit.leave_one_out(runs, fit.Variant("all_free"), targets)
    assert len(loo) == 1
    assert loo.loc[0, "n_train"] == len(runs) - 2
    # Noise-free data, twin excluded: prediction is exact.
    assert loo.loc[0, "error_pct"] == pytest.approx(0.0, abs=1e-6)
    assert fit.mean_abs_error_pct(loo) == pytest.approx(0.0, abs=1e-6)


def test_leave_one_out_error_sign_follows_the_blog():
    runs = synthetic_runs(noise_sd_ms=0.0)
    runs.loc[3, "op_ms"] *= 0.5  # the run is twice as fast as any model could say
    loo = fit.leave_one_out(runs, fit.Variant("all_free"), runs.index == 3)
    assert loo.loc[0, "error_pct"] > 0  # measured above estimate: positive, as the blog's


def test_leave_one_out_reports_a_refused_fold():
    runs = synthetic_runs(networks={"wired": NETWORKS["wired"]}, devices={"hdd": DEVICES["hdd"]}, r2ts=(1,))
    loo = fit.leave_one_out(
        runs.head(5), fit.Variant("all_free_intercept", intercept=True), runs.head(5).index == 0
    )
    assert "runs" in loo.loc[0, "refused"]
    assert np.isnan(loo.loc[0, "error_pct"])


def test_parameter_set_must_agree_with_the_r2t_label():
    sets = {"r2t16": model.IscsiParams(max_outstanding_r2t=16)}
    assert (
        fit_inputs._parameter_set(
            sets, {"run": "a", "iscsi_parameters": "r2t16", "max_outstanding_r2t": 16}
        ).max_outstanding_r2t
        == 16
    )
    with pytest.raises(DesignError, match="MaxOutstandingR2T=16"):
        fit_inputs._parameter_set(sets, {"run": "a", "iscsi_parameters": "r2t16", "max_outstanding_r2t": 1})
    with pytest.raises(DesignError, match="not under"):
        fit_inputs._parameter_set(sets, {"run": "a", "iscsi_parameters": "other", "max_outstanding_r2t": 1})


def test_runs_from_the_reconstructed_blog_dataset():
    from pathlib import Path

    raw = Path(__file__).resolve().parents[1] / "data" / "raw" / "blog-2023"
    if not (raw / "manifest.yaml").is_file():
        pytest.skip("blog-2023 dataset not present")
    runs, fits = fit.runs_from_dataset(open_dataset(raw))
    assert len(runs) == 23 and int(runs["validation"].sum()) == 6
    assert set(fits) == {"hdd", "ssd"}
    assert runs.groupby("network")["one_way_ms"].first().to_dict() == pytest.approx(
        {"wired": 0.11, "wireless": 1.475}, rel=0.01
    )
    r2t16 = runs[runs["max_outstanding_r2t"] == 16]
    assert r2t16[list(fit.ISCSI_COLUMNS)].iloc[0].to_dict() == {
        "first_burst_bytes": 65536,
        "max_burst_bytes": 262144,
        "immediate_data": True,
        "initial_r2t": False,
    }


@pytest.fixture(scope="module")
def nested_2mib() -> tuple[pd.DataFrame, list[fit.FoldLog]]:
    """The nested leave-one-out of the synthetic runs, 2 MiB writes held out: once, read by two tests.

    The slowest computation of this file (tens of seconds); both tests asked for it with identical
    inputs. Read it, never change it.
    """
    runs = synthetic_runs()
    runs["validation"] = (runs["bs_bytes"] == 2048 * KIB).to_numpy()
    return fit.nested_leave_one_out(runs)


def test_nested_selection_never_sees_the_held_out_configuration(nested_2mib):
    runs = synthetic_runs()
    runs["validation"] = (runs["bs_bytes"] == 2048 * KIB).to_numpy()
    _nested, logs = nested_2mib
    assert len(logs) == int(runs["validation"].sum()) == 8
    for log in logs:
        assert log.held_out  # the whole configuration, not only the scored run
        stages = {stage for stage, _ in log.fits}
        assert any(s.startswith("inner:") for s in stages) and fit.BLOG_FORMULA_SCALED in stages
        for stage, seen in log.fits:
            assert seen.isdisjoint(log.held_out), f"{stage} saw {sorted(seen & set(log.held_out))}"
    # Inner fits also leave out their own inner configuration: each sees fewer runs than the outer.
    outer = {len(seen) for stage, seen in logs[0].fits if stage.startswith("outer:")}
    inner = {len(seen) for stage, seen in logs[0].fits if stage.startswith("inner:")}
    assert max(inner) < min(outer)


def test_baselines_are_scored_on_identical_folds(nested_2mib):
    nested, _ = nested_2mib
    runs_per_method = nested.groupby("method")["run"].apply(frozenset)
    assert set(runs_per_method.index) == {
        fit.PRIMARY_VARIANT,
        fit.NESTED,
        fit.BLOG_FORMULA,
        fit.BLOG_FORMULA_SCALED,
    }
    assert len(set(runs_per_method)) == 1
    assert set(nested.groupby("method")["n_train"].apply(tuple)) == {
        tuple(nested[nested["method"] == fit.NESTED]["n_train"])
    }
    summary = fit.method_summary(nested)
    assert (summary["folds"] == 8).all()
    wide = fit.per_configuration(nested)
    assert len(wide) == 8 and fit.BLOG_FORMULA in wide.columns


def test_scaled_blog_formula_recovers_a_known_scale():
    runs = synthetic_runs()
    runs["op_ms"] = 1.13 * fit.blog_formula_ms(runs)
    assert fit.scale_factor(runs) == pytest.approx(1.13)
    runs["validation"] = (runs["bs_bytes"] == 2048 * KIB).to_numpy()
    nested, _ = fit.nested_leave_one_out(runs)
    scaled = nested[nested["method"] == fit.BLOG_FORMULA_SCALED]["error_pct"]
    plain = nested[nested["method"] == fit.BLOG_FORMULA]["error_pct"]
    assert scaled.abs().max() < 1e-9 and plain.abs().min() > 5


def test_invented_inputs_cannot_drive_a_coefficient():
    runs = synthetic_runs()
    runs["cpu_ms_invented"] = runs["cpu_ms"]
    guessed = fit.with_guessed_cpu(runs, list(runs["run"][:4]), 3.0)
    assert (guessed[fit.INVENTED_COLUMN] == "cpu_ms").sum() == len(runs) - 4
    with pytest.raises(DesignError, match="invented input"):
        fit.fit_variant(guessed, fit.Variant("cpu_free", {"transmit_ms": 1.0}))
    sens = fit.cpu_sensitivity(
        runs, list(runs["run"][:4]), [2.0, 6.0], fit.Variant("c", {"transmit_ms": 1.0})
    )
    assert sens["beta_cpu_ms"].iloc[0] != pytest.approx(sens["beta_cpu_ms"].iloc[1])


def _blog_runs():
    from pathlib import Path

    raw = Path(__file__).resolve().parents[1] / "data" / "raw" / "blog-2023"
    if not (raw / "manifest.yaml").is_file():
        pytest.skip("blog-2023 dataset not present")
    return fit.runs_from_dataset(open_dataset(raw))[0]


def test_blog_fit_design_rests_on_published_quantities_only():
    runs = _blog_runs()
    assert (runs[fit.INVENTED_COLUMN] == "").all()
    # CPU per operation is the published 8 ms per 2 MiB, in proportion to the block size, never
    # the reconstruction's iostat share (which differs for every run).
    assert runs["cpu_ms"].to_numpy() == pytest.approx(runs["bs_bytes"].to_numpy() / BYTES_PER_MIB * 4.0)
    assert (runs["cpu_ms"] != runs["cpu_ms_invented"]).all()
    assert (runs["device_request_bytes"] == runs["bs_bytes"] // 2).all()
    primary = fit.fit_variant(runs, fit.variant_by_name(fit.PRIMARY_VARIANT))
    free = primary.coefficients.loc[~primary.coefficients["fixed"], "term"]
    design_inputs = {c for t in free for c in fit.REGRESSOR_INPUTS[t]}
    assert design_inputs <= set(fit.PUBLISHED_INPUTS) | {"bs_bytes", "max_outstanding_r2t"}
    assert "cpu_ms" not in set(free)
    # Every input a term uses, fixed or free, is published-derived.
    used = {c for t in fit.REGRESSORS for c in fit.REGRESSOR_INPUTS[t]}
    assert used - {"bs_bytes", "max_outstanding_r2t"} == set(fit.PUBLISHED_INPUTS) - {"op_ms"}
