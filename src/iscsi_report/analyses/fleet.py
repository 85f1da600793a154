"""The fleet chapter: every dataset side by side, one row per modelled configuration.

Each row reads its dataset through the chapters' own functions, so its numbers equal theirs:

- a dataset with validation runs: :func:`iscsi_report.analyses.projections.measured_projections`
  (the projections chapter's measured-input model against the fio runs labelled ``validation``);
- a dataset without them: the model chapter's combinations (:func:`iscsi_report.analyses.r2t.model_inputs`
  with the manifest's parameter sets, or RFC 7143 defaults as a what-if), modelled but not measured;
- the iSCSI lab (fio runs labelled ``r2t_window``): :mod:`iscsi_report.analyses.lab`'s primary
  model fitted on the training delays, at one configuration per emulated network point.

A dataset with nothing to model still gets a row: what it measured, a dash for the rest, and why.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.analyses import projections, r2t, storage
from iscsi_report.core import dataset as datasets
from iscsi_report.core import model
from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.dataset import Provenance
from iscsi_report.core.digest import code_digest
from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest.textio import record_listing, sha256_file
from iscsi_report.core.measurements import Measurements, open_dataset
from iscsi_report.core.units import BITS_PER_BYTE, BITS_PER_MBIT, BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S

DASH = "—"
LAB_MARKER_LABEL = "r2t_window"  # fio runs of the iSCSI lab carry the target's forced window
COLUMNS = [
    "dataset",
    "provenance",
    "configuration",
    "network",
    "device",
    "bs_kib",
    "rtt_ms",
    "link_mbit_per_s",
    "device_local_mib_per_s",
    "modelled_mib_per_s",
    "measured_mib_per_s",
    "error_pct",
    "binding",
    "note",
]
NUMERIC = [
    "bs_kib",
    "rtt_ms",
    "link_mbit_per_s",
    "device_local_mib_per_s",
    "modelled_mib_per_s",
    "measured_mib_per_s",
    "error_pct",
]


def manifests(raw_root: Path) -> list[str]:
    """Every dataset under ``raw_root`` with a manifest, by name (the listing recorded: a new
    dataset makes the run that listed them stale)."""
    record_listing(raw_root)
    return sorted(p.parent.name for p in raw_root.glob(f"*/{datasets.MANIFEST}"))


def provenance(ds: Measurements) -> Provenance:
    """The dataset's provenance kind from its manifest (:func:`iscsi_report.core.dataset.provenance`)."""
    return datasets.provenance(ds.reconstructed, ds.files)


def _row(ds: Measurements, prov: Provenance, **values: Any) -> dict[str, Any]:
    """One fleet row with every column present (NaN / '' where not given)."""
    row: dict[str, Any] = {c: (math.nan if c in NUMERIC else "") for c in COLUMNS}
    row.update(dataset=ds.name, provenance=prov.kind, **values)
    return row


def _one(frame: pd.DataFrame, column: str, key: Any) -> pd.Series:
    """The row of ``frame`` whose ``column`` equals ``key`` (the first, if the chapter gave several)."""
    row: pd.Series = frame[frame[column] == key].iloc[0]
    return row


def _network_values(net: pd.Series) -> dict[str, Any]:
    """RTT and link rate of one :func:`r2t.network_inputs` row."""
    return {
        "network": str(net["network"]),
        "rtt_ms": float(net["mean_rtt_ms"]),
        "link_mbit_per_s": float(net["received_mbit_per_s"]),
    }


def _device_local_mib_per_s(dev: pd.Series, bs_bytes: int) -> float:
    """The device's measured local throughput at the whole block (as the projections)."""
    local_ms = float(dev["local_block_ms"])
    return bs_bytes / (local_ms / MS_PER_S) / BYTES_PER_MIB if local_ms > 0 else math.nan


def _projected_rows(
    ds: Measurements, prov: Provenance, inputs: projections.MeasuredInputs
) -> list[dict[str, Any]]:
    """Rows of a dataset the projections chapter can model against its validation runs."""
    table = projections.projection_table(projections.measured_projections(ds, inputs))
    rows = []
    for _, p in table.iterrows():
        rows.append(
            _row(
                ds,
                prov,
                configuration=f"MaxOutstandingR2T {int(p['max_outstanding_r2t'])}",
                device=str(p["device"]),
                bs_kib=inputs.bs_bytes / BYTES_PER_KIB,
                device_local_mib_per_s=_device_local_mib_per_s(
                    _one(inputs.devices, "device", p["device"]), inputs.bs_bytes
                ),
                modelled_mib_per_s=float(p["mib_per_s"]),
                measured_mib_per_s=float(p["measured_mib_per_s"]),
                error_pct=float(p["error_pct"]),
                binding=str(p["binding"]),
                note=f"{prov.detail}; measured: fio validation runs",
                **_network_values(_one(inputs.networks, "network", p["network"])),
            )
        )
    return rows


def _what_if_rows(
    ds: Measurements, prov: Provenance, inputs: projections.MeasuredInputs, why_unmeasured: str
) -> list[dict[str, Any]]:
    """The model chapter's combinations, modelled only (the dataset has no iSCSI run to compare)."""
    bs = inputs.bs_bytes
    combinations = r2t.model_inputs(inputs.networks, inputs.devices, inputs.cpu)
    if not combinations:
        return []
    configs = r2t.configurations(inputs.parameter_sets, bs)
    rows = []
    for i in combinations:
        local_mib = _device_local_mib_per_s(_one(inputs.devices, "device", i.device_label), bs)
        for c in configs:
            b = model.write_latency(
                bs, c.params, i.network, i.device_ms, i.cpu_ms, device_request_bytes=i.device_request_bytes
            )
            t = model.throughput(b, i.network, device_bytes_per_s=local_mib * BYTES_PER_MIB)
            rows.append(
                _row(
                    ds,
                    prov,
                    configuration=c.label,
                    device=i.device_label,
                    bs_kib=bs / BYTES_PER_KIB,
                    device_local_mib_per_s=local_mib,
                    modelled_mib_per_s=t.mib_per_s,
                    binding=t.binding,
                    note=f"{prov.detail}; not measured: {why_unmeasured}; CPU: {inputs.cpu.source}",
                    **_network_values(_one(inputs.networks, "network", i.network_label)),
                )
            )
    return rows


def _unmodelled_rows(
    ds: Measurements, prov: Provenance, inputs: projections.MeasuredInputs, why: str
) -> list[dict[str, Any]]:
    """What a dataset measured when it has nothing to model: one row per network (or one row)."""
    bs = inputs.bs_bytes
    devs = list(inputs.devices.iterrows())
    local = _device_local_mib_per_s(devs[0][1], bs) if len(devs) == 1 else math.nan
    base = {
        "bs_kib": bs / BYTES_PER_KIB,
        "binding": DASH,
        "note": f"{prov.detail}; nothing to model: {why}",
    }
    if len(devs) == 1:
        base["device"] = str(devs[0][1]["device"])
    rows = []
    for _, net in inputs.networks.iterrows():
        rows.append(_row(ds, prov, device_local_mib_per_s=local, **base, **_network_values(net)))
    return rows or [_row(ds, prov, device_local_mib_per_s=local, **base)]


def dataset_rows(
    raw_dir: Path,
    bs_bytes: int = projections.DEFAULT_BS_BYTES,
    *,
    ping_interval_s: float = r2t.DEFAULT_PING_INTERVAL_S,
    lab_bs_bytes: int = BYTES_PER_MIB,
) -> list[dict[str, Any]]:
    """Every fleet row of one dataset (see the module docstring for which model each kind gets)."""
    ds = open_dataset(raw_dir)
    prov = provenance(ds)
    if any(LAB_MARKER_LABEL in f.labels for f in ds.select("fio")):
        return lab_rows(raw_dir, prov, lab_bs_bytes)
    inputs = projections.measured_inputs(ds, bs_bytes, ping_interval_s=ping_interval_s)
    try:
        return _projected_rows(ds, prov, inputs)
    except projections.MissingDataError as exc:
        why_unmeasured = str(exc).split(": ", 1)[-1]
        if inputs.validation.empty:
            why_unmeasured = f"no iSCSI run (no fio run labelled validation: true at {bs_bytes} bytes)"
    rows = _what_if_rows(ds, prov, inputs, why_unmeasured)
    if rows:
        return rows
    runs = storage.fio_runs(ds)
    fits, unfitted = storage.fit_devices(runs)
    missing = r2t.missing_inputs(inputs.networks, runs, fits, unfitted)
    return _unmodelled_rows(ds, prov, inputs, "; ".join(missing) or "no network and fitted device pair")


def _code_digest() -> str:
    """sha256 of the library code the rows are computed with (core and analyses sources)."""
    package = Path(__file__).resolve().parents[1]
    return code_digest(package / "core", package / "analyses")


def _dataset_key(raw_dir: Path, code: str, options: dict[str, Any]) -> str:
    """sha256 of everything a dataset's rows depend on: its listed files' bytes, the options, the code.

    Each listed file is read and checked against its sha256 through the measurements layer (so
    the batch's run cache sees the same inputs on a cache hit, and a miss parses the kept text
    instead of reading the file again); a file the manifest does not list is never read.
    """
    m = open_dataset(raw_dir)
    h = hashlib.sha256(code.encode() + json.dumps(options, sort_keys=True).encode())
    h.update(sha256_file(m.root / datasets.MANIFEST).encode())  # labels and parameter sets too
    for f in sorted(m.files, key=lambda f: f.rel):
        m.text(f)
        h.update(f.rel.encode() + b"\0" + f.sha256.encode())
    return h.hexdigest()


def cached_rows(raw_dir: Path, cache_dir: Path, code: str, **options: Any) -> list[dict[str, Any]]:
    """:func:`dataset_rows`, kept in ``cache_dir`` under the sha256 of its inputs and code."""
    key = _dataset_key(raw_dir, code, options)
    path = cache_dir / f"{raw_dir.name}-{key[:32]}.json"
    if path.is_file():
        rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
        return rows
    rows = dataset_rows(raw_dir, **options)
    for old in cache_dir.glob(f"{raw_dir.name}-*.json"):  # this dataset's rows for older inputs
        if old.stem.rsplit("-", 1)[0] == raw_dir.name:
            old.unlink(missing_ok=True)
    write_atomic(path, json.dumps(rows, default=float))
    return rows


def fleet_table(
    raw_root: Path, names: Iterable[str] | None = None, cache_dir: Path | None = None, **options: Any
) -> pd.DataFrame:
    """Rows of every named dataset (default: every manifest under ``raw_root``), in name order.

    With ``cache_dir`` each dataset's rows are reused while its files, the options and the code
    are unchanged (a fleet of hundreds of hosts recomputes only the datasets that changed).
    """
    chosen = sorted(names) if names else manifests(raw_root)
    if not chosen:
        raise ReportError(f"{raw_root}: no dataset with a {datasets.MANIFEST}")
    if cache_dir is None:
        rows = [row for name in chosen for row in dataset_rows(raw_root / name, **options)]
    else:
        code = _code_digest()
        rows = [row for name in chosen for row in cached_rows(raw_root / name, cache_dir, code, **options)]
    return pd.DataFrame(rows, columns=COLUMNS)


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """The table for the page: numbers to 3 decimals, a dash where absent, no notes (:func:`notes`)."""
    out = table.drop(columns=["note"])
    for col in NUMERIC:
        out[col] = [DASH if pd.isna(v) else round(float(v), 3) for v in table[col]]
    out["binding"] = out["binding"].replace("", DASH)
    return out


def per_dataset(table: pd.DataFrame) -> pd.DataFrame:
    """One line per dataset: rows, how many modelled and measured, median and largest |error| %."""
    g = table.assign(abs_error_pct=table["error_pct"].abs()).groupby(["dataset", "provenance"], sort=True)
    out = g.agg(
        rows=("dataset", "size"),
        modelled=("modelled_mib_per_s", "count"),
        measured=("measured_mib_per_s", "count"),
        median_abs_error_pct=("abs_error_pct", "median"),
        max_abs_error_pct=("abs_error_pct", "max"),
    ).reset_index()
    bindings = table[table["binding"].isin(model.BOUND_NAMES)].groupby("dataset")["binding"]
    joined = {name: ", ".join(sorted(set(b))) for name, b in bindings}
    out["bindings"] = [joined.get(name, DASH) for name in out["dataset"]]
    return out


# ---- the iSCSI lab -------------------------------------------------------------------------------

LAB_IMMEDIATE_BYTES = 65536  # the lab latency chapter's configuration: 64 KiB immediate data,
LAB_SEGMENT_BYTES = 262144  # 256 KiB data segments
LAB_NOTE = (
    "modelled: the lab's primary latency model fitted on its training rows (one-way delays "
    "{train} ms) at one write in flight; device: RAM-backed LUN, no local run"
)


def binding_counts(table: pd.DataFrame) -> pd.Series:
    """Rows per binding bound, every bound named (zero when none binds): what holds the fleet back."""
    return table["binding"].value_counts().reindex(list(model.BOUND_NAMES), fill_value=0).astype(int)


def _lab_block(sizes: Iterable[int], bs_bytes: int) -> int:
    """The largest block the lab measured not above ``bs_bytes`` (else its smallest)."""
    measured = sorted(set(int(s) for s in sizes))
    below = [s for s in measured if s <= bs_bytes]
    return below[-1] if below else measured[0]


def lab_bounds(bs_bytes: int, latency_ms: float, link_bps: float) -> tuple[float, str]:
    """MiB/s at one write in flight: Little's law at ``latency_ms`` against the link; and which binds."""
    ceilings = {
        "latency": bs_bytes / (latency_ms / MS_PER_S),
        "link": link_bps / BITS_PER_BYTE,
    }
    binding = min(ceilings, key=lambda k: (ceilings[k], model.BOUND_NAMES.index(k)))
    return ceilings[binding] / BYTES_PER_MIB, binding


def lab_rows(raw_dir: Path, prov: Provenance, bs_bytes: int = BYTES_PER_MIB) -> list[dict[str, Any]]:
    """One row per emulated network point: the lab latency chapter's configuration at the widest window."""
    from iscsi_report.analyses import lab  # statsmodels: only when a lab dataset is in the fleet

    data = lab.load(raw_dir)
    roles = data.runs["design_role"] if "design_role" in data.runs else pd.Series(dtype=object)
    if not (roles == "fit").any():  # before the model terms: a diagnosis may have no login captured
        return [
            _row(
                data.dataset,
                prov,
                note=f"{prov.detail}; nothing to model here: no write run is labelled design_role=fit "
                "(a confirmation sweep is predicted from another dataset's fit, in that dataset's "
                "validation chapter)",
            )
        ]
    rows = lab.write_fit_rows(lab.features(data))
    coef = lab.coefficients(rows[rows["design_role"] == "fit"])
    bs = _lab_block(rows["bs_bytes"], bs_bytes)
    sel = rows[
        (rows["bs_bytes"] == bs)
        & (rows["immediate_data_bytes"] == LAB_IMMEDIATE_BYTES)
        & (rows["max_recv_data_segment_bytes"] == LAB_SEGMENT_BYTES)
    ]
    if sel.empty:
        return [
            _row(data.dataset, prov, note=f"{prov.detail}; nothing to model: no write at the chosen keys")
        ]
    sel = sel[sel["r2t_window"] == sel["r2t_window"].max()]
    lines = lab.model_lines(data, coef, sel)
    nets = data.networks.set_index(lab.NETWORK_KEYS)
    train = ", ".join(f"{d:g}" for d in lab.TRAIN_DELAYS_MS)
    out = []
    for _, p in lines.sort_values(lab.NETWORK_KEYS).iterrows():
        net = nets.loc[(p["one_way_delay_ms"], p["link_mbps"])]
        modelled, binding = lab_bounds(bs, float(p["predicted_ms"]), float(net["iperf3_bps"]))
        measured = bs / (float(p["measured_ms"]) / MS_PER_S) / BYTES_PER_MIB
        out.append(
            _row(
                data.dataset,
                prov,
                configuration=f"window {int(p['r2t_window'])}, 64 KiB immediate, 256 KiB segments",
                network=f"delay {p['one_way_delay_ms']:g} ms, {p['link_mbps']:g} Mbit/s",
                device="ram",
                bs_kib=bs / BYTES_PER_KIB,
                rtt_ms=float(net["ping_rtt_mean_ms"]),
                link_mbit_per_s=float(net["iperf3_bps"]) / BITS_PER_MBIT,
                modelled_mib_per_s=modelled,
                measured_mib_per_s=measured,
                error_pct=model.error_pct(measured, modelled),
                binding=binding,
                note=f"{prov.detail}; " + LAB_NOTE.format(train=train),
            )
        )
    return out


def notes(table: pd.DataFrame) -> pd.DataFrame:
    """Each distinct note of each dataset once: where its numbers come from, or why a value is missing."""
    return table[["dataset", "note"]].drop_duplicates(ignore_index=True)
