"""Measured inputs from a dataset: one row per remote fio run with its model inputs, and their source.

On a reconstructed dataset the inputs the reconstruction invented for most runs (target CPU time,
device request size) are replaced by the blog's published rules (:data:`PUBLISHED_INPUTS`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses import audit, blog, r2t, storage
from iscsi_report.analyses import network as network_analysis
from iscsi_report.analyses.fit.terms import (
    INVENTED_COLUMN,
    ISCSI_COLUMNS,
)
from iscsi_report.analyses.fit.variants import (
    Variant,
    fit_variant,
)
from iscsi_report.core import model
from iscsi_report.core.errors import DesignError
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.published import PublishedNumber
from iscsi_report.core.units import BITS_PER_MBIT, BYTES_PER_MIB, KIB_PER_MIB

MODEL_PING_INTERVAL_S = r2t.DEFAULT_PING_INTERVAL_S  # the blog's 2 ms pings
CPU_CORES_COUNTED = 1  # the blog reads iostat's busy % as one core's seconds per second


def rtt_samples_by_network(
    ds: Measurements, interval_s: float = MODEL_PING_INTERVAL_S
) -> dict[str, np.ndarray]:
    """RTT samples (ms, duplicates excluded) of each network's ping files at ``interval_s``.

    One network's samples are one path's: pooled paths are refused in the words of
    :func:`network.mixed_paths`, the check the network chapter and projections use.
    """
    out: dict[str, list[np.ndarray]] = {}
    paths = []
    for f in ds.select("ping", interval_s=interval_s):
        result = ds.ping(f)
        name = str(f.labels["network"])
        out.setdefault(name, []).append(result.rtt_ms[~result.duplicate])
        host, family = network_analysis.host_and_family(ds, f)
        paths.append(
            {"network": name, "interval_s": interval_s, "host": host, "family": family, "file": f.rel}
        )
    if not out:
        raise DesignError(f"dataset {ds.name}: no ping files with interval_s={interval_s}")
    mixed = network_analysis.mixed_paths(pd.DataFrame(paths))
    if mixed:
        said = "; ".join(f"network {name!r}: {words}" for (name, _), words in mixed.items())
        raise DesignError(f"dataset {ds.name}: {said}")
    return {k: np.concatenate(v) for k, v in out.items()}


def _parameter_set(sets: Mapping[str, model.IscsiParams], run: Mapping[Hashable, Any]) -> model.IscsiParams:
    """The run's named manifest parameter set (RFC defaults if unnamed), checked against its R2T label."""
    name = run.get("iscsi_parameters")
    if name is None or (isinstance(name, float) and np.isnan(name)):
        return model.IscsiParams(max_outstanding_r2t=int(run["max_outstanding_r2t"]))
    if name not in sets:
        raise DesignError(
            f"run {run['run']}: parameter set {name!r} is not under the manifest's iscsi_parameters"
        )
    params = sets[str(name)]
    if params.max_outstanding_r2t != int(run["max_outstanding_r2t"]):
        raise DesignError(
            f"run {run['run']}: label max_outstanding_r2t={run['max_outstanding_r2t']} but "
            f"set {name!r} has MaxOutstandingR2T={params.max_outstanding_r2t}"
        )
    return params


# Published figures that stand in for what a reconstruction invented (data/published/blog-2023.yaml).
PUBLISHED_CPU_ID = "model.cpu_2m_ms"  # the blog's 8 ms of target CPU per 2 MiB operation
PUBLISHED_BLOCK_ID = "model.block_mib"  # ... for a block of this many MiB
PUBLISHED_REQUEST_ID = "iostat.excerpt.wareq_sz_kB"  # the one published iostat line: request size
PUBLISHED_REQUEST_BLOCK_ID = "model.block_mib"  # ... during 2 MiB writes
# Where each model input of a run comes from on the reconstructed blog dataset: the published
# figures it was generated to reproduce, or the published rule that replaces an invented value.
PUBLISHED_INPUTS: dict[str, str] = {
    "op_ms": "published fio MiB/s of each run (fio.*.mib_per_s, projection.*.actual_mib_per_s)",
    "one_way_ms": "published mean RTT of the 2 ms pings / 2 (latency.*_2ms.mean_ms)",
    "link_bps": "published iperf3 rate (network.iperf3.*_mbit_per_s)",
    "device_ms": (
        "local-device fit on the published local fio table (fio.local.*), at the request size of "
        f"the published iostat line ({PUBLISHED_REQUEST_ID} per {PUBLISHED_REQUEST_BLOCK_ID})"
    ),
    "cpu_ms": f"published rule: {PUBLISHED_CPU_ID} per {PUBLISHED_BLOCK_ID}, in proportion to the block size",
}
INVENTED_INSTEAD: dict[str, str] = {
    "cpu_ms": "the iostat CPU share of the block-device runs (the blog published CPU for libiscsi runs only)",
    "device_ms": "the iostat request sizes of every run but the published excerpt",
}


def _published_numbers(published: str | Path | None) -> dict[str, PublishedNumber]:
    """The blog's published numbers by id."""
    return audit.load_published(blog.published_path(published))


def published_cpu_ms(bs_bytes: np.ndarray, published: str | Path | None = None) -> np.ndarray:
    """Target CPU ms per operation by the blog's published rule, in proportion to the block size."""
    n = _published_numbers(published)
    per_mib = n[PUBLISHED_CPU_ID].value / n[PUBLISHED_BLOCK_ID].value
    out: np.ndarray = np.asarray(bs_bytes, dtype=float) / BYTES_PER_MIB * per_mib
    return out


def published_cpu_rule(published: str | Path | None = None) -> tuple[float, float]:
    """(CPU ms per operation, block MiB) as the blog published them: its 8 ms per 2 MiB."""
    n = _published_numbers(published)
    return float(n[PUBLISHED_CPU_ID].value), float(n[PUBLISHED_BLOCK_ID].value)


def published_request_fraction(published: str | Path | None = None) -> float:
    """Device request size over block size in the blog's published iostat line (1024 kB at 2 MiB)."""
    n = _published_numbers(published)
    return float(n[PUBLISHED_REQUEST_ID].value / (n[PUBLISHED_REQUEST_BLOCK_ID].value * KIB_PER_MIB))


def input_provenance(reconstructed: bool) -> pd.DataFrame:
    """Per model input: where its value comes from, and what the reconstruction invented instead."""
    rows = []
    for col in ("op_ms", "one_way_ms", "link_bps", "device_ms", "cpu_ms"):
        if reconstructed:
            rows.append(
                {"input": col, "source": PUBLISHED_INPUTS[col], "not used": INVENTED_INSTEAD.get(col, "")}
            )
        else:
            rows.append({"input": col, "source": "measured (raw files of the dataset)", "not used": ""})
    return pd.DataFrame(rows)


def runs_from_dataset(
    ds: Measurements, published: str | Path | None = None
) -> tuple[pd.DataFrame, dict[str, storage.DeviceFit]]:
    """One row per remote fio run with its model inputs (see :data:`RUN_COLUMNS`).

    one_way_ms = mean 2 ms-interval RTT / 2 of its network and link_bps from iperf3 (both via
    :mod:`iscsi_report.analyses.r2t`, as the projections chapter reads them); device_ms from
    the local-device fit (:mod:`iscsi_report.analyses.storage`) at the request size iostat saw; cpu_ms from
    the target's iostat busy share over the run's IOPS. On a reconstructed dataset the two
    quantities the reconstruction invented for most runs are replaced by published ones: the
    request size by the published iostat line's share of the block and cpu_ms by the published
    CPU rule (:data:`PUBLISHED_INPUTS`); the invented iostat CPU is kept as ``cpu_ms_invented``
    for sensitivity studies only.
    """
    runs = storage.fio_runs(ds)
    fits, _ = storage.fit_devices(runs)
    remote = runs[~storage.is_local(runs)].copy()
    nets = r2t.network_inputs(r2t.rtt_means(ds), r2t.iperf_rates(ds), MODEL_PING_INTERVAL_S)
    nets = nets.set_index("network")
    for network in remote["network"].unique():
        if network not in nets.index or nets.loc[network, "missing"]:
            raise DesignError(f"network {network!r} has fio runs but no 2 ms ping or iperf3 file")
    req = storage.iostat_requests(ds).set_index("run")["request_bytes"]
    cpu_table = storage.cpu_ms_per_op(storage.iostat_cpu(ds), cores=CPU_CORES_COUNTED)
    cpu = cpu_table.set_index("run")["cpu_ms_per_op"]
    remote["one_way_ms"] = remote["network"].map(nets["one_way_ms"])
    remote["link_bps"] = remote["network"].map(nets["received_mbit_per_s"] * BITS_PER_MBIT)
    remote["device_request_bytes"] = remote["run"].map(req)
    remote["cpu_ms"] = remote["run"].map(cpu)
    missing = remote["device_request_bytes"].isna() | remote["cpu_ms"].isna()
    if missing.any():
        raise DesignError(f"run(s) {list(remote.loc[missing, 'run'])} have no matching iostat file")
    if ds.reconstructed:
        bs = remote["bs_bytes"].to_numpy(float)
        remote["cpu_ms_invented"] = remote["cpu_ms"]
        remote["cpu_ms"] = published_cpu_ms(bs, published)
        remote["device_request_bytes"] = np.rint(bs * published_request_fraction(published)).astype(int)
    remote[INVENTED_COLUMN] = ""
    for device in remote["device"].unique():
        if device not in fits:
            raise DesignError(f"device {device!r} has remote runs but no local fit")
    remote["device_ms"] = [
        fits[d].predict_ms(b) for d, b in zip(remote["device"], remote["device_request_bytes"], strict=True)
    ]
    sets = r2t.parameter_sets(ds.iscsi_parameters, ds.root / "manifest.yaml").sets
    params = [_parameter_set(sets, r) for r in remote.to_dict("records")]
    for col in ISCSI_COLUMNS:
        remote[col] = [getattr(p, col) for p in params]
    remote["validation"] = storage.is_validation(remote)
    return remote.reset_index(drop=True), fits


def with_guessed_cpu(
    runs: pd.DataFrame, published_runs: Sequence[str], guess_ms_per_mib: float
) -> pd.DataFrame:
    """Runs whose CPU is the reconstruction's (``cpu_ms_invented``) where published, a guess elsewhere.

    The guessed rows are marked in ``invented_inputs``, so only a fit with ``allow_invented``
    accepts them: for the sensitivity table, never for a reported coefficient.
    """
    out = runs.copy()
    known = out["run"].isin(list(published_runs)).to_numpy()
    guessed = out["bs_bytes"].to_numpy(float) / BYTES_PER_MIB * guess_ms_per_mib
    out["cpu_ms"] = np.where(known, out["cpu_ms_invented"].to_numpy(float), guessed)
    out[INVENTED_COLUMN] = np.where(known, "", "cpu_ms")
    return out


def cpu_sensitivity(
    runs: pd.DataFrame,
    published_runs: Sequence[str],
    guesses_ms_per_mib: Sequence[float],
    variant: Variant,
) -> pd.DataFrame:
    """β of ``variant`` (CPU coefficient free) under each guess of the unpublished CPU per MiB.

    A range over guesses, not a finding: shows how far an invented CPU figure would move the fit.
    """
    rows = []
    for guess in guesses_ms_per_mib:
        f = fit_variant(with_guessed_cpu(runs, published_runs, guess), variant, allow_invented=True)
        rows.append({"guess_cpu_ms_per_mib": guess, **{f"beta_{k}": v for k, v in f.beta.items()}})
    return pd.DataFrame(rows)
