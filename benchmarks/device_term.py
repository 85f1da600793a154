"""The device ceiling against fio's measured local throughput, per device and block size (issue 23).

PYTHONPATH=src .venv/bin/python benchmarks/device_term.py [DATASET ...]

For each model-kind local fio group: fio's mean MiB/s at each block size, the ceiling the old code
took from the fit's line (size over fitted time), and the ceiling the device term now takes (the
measured per-op time at that size). A positive gap of the old ceiling is how far a forecast could
have beaten the bare disk.
"""

from __future__ import annotations

import argparse

from iscsi_report.analyses import device_term, storage
from iscsi_report.core.measurements import open_dataset
from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S


def rows(name: str) -> list[str]:
    """One line per device and block size of the dataset ``name``."""
    runs = storage.fio_runs(open_dataset(f"data/raw/{name}"))
    fits, _ = storage.fit_devices(runs)
    terms, _ = device_term.device_terms(runs)
    out = []
    for dev, term in terms.items():
        local = runs[storage.is_model_run(runs) & (runs["device"] == term.device)]
        for bs, group in local.groupby("bs_bytes"):
            fio = float(group["mib_per_s"].mean())
            old = bs / (fits[dev].predict_ms(bs) / MS_PER_S) / BYTES_PER_MIB if dev in fits else float("nan")
            new = term.bytes_per_s(bs) / BYTES_PER_MIB
            out.append(
                f"{name} {dev} {bs // BYTES_PER_KIB} KiB: fio {fio:,.1f} MiB/s, fit's ceiling {old:,.1f} "
                f"({(old / fio - 1) * 100:+.1f} %), now {new:,.1f} ({(new / fio - 1) * 100:+.1f} %)"
            )
    return out


def main() -> None:
    """Print the comparison for each dataset named (default: lab-veth-2026 and blog-2023)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=["lab-veth-2026", "blog-2023"])
    for name in parser.parse_args().datasets:
        print("\n".join(rows(name)))


if __name__ == "__main__":
    main()
