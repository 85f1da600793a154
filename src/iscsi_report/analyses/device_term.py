"""The device term of a forecast from what the device's local fio measured, never better than it.

A queue-depth-1 fit of per-op ms on block size (:func:`storage.fit_device`) is used only when it is
sane: a positive slope, at least :data:`FIT_MIN_SIZES` distinct block sizes and an R² of at least
:data:`FIT_MIN_R_SQUARED`. Otherwise the device term is fio's measured per-op time, interpolated
linearly between measured block sizes (a size outside them is named as such, never silently).
Either way the time charged for one device request of a ``bs``-byte write never implies a rate
above the device's measured local throughput at ``bs`` (it is at least the request's share of what
the whole write took locally), and the device ceiling is that measured throughput: a forecast
through the network can then never beat the bare disk. :meth:`DeviceTerm.sentence` says which
value was used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from iscsi_report.analyses import storage
from iscsi_report.core.errors import DesignError
from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S

FIT_MIN_SIZES = 3  # two coefficients and a third size to check the line's shape against
FIT_MIN_R_SQUARED = 0.9  # below it the line explains too little of the per-op time to stand for it


def fit_refusal(fit: storage.DeviceFit) -> str:
    """Why the fit cannot stand for the device ('' when it can): slope, sizes, R²."""
    reasons = []
    if not fit.ms_per_mib > 0:
        reasons.append("negative slope" if fit.ms_per_mib < 0 else "zero slope")
    if fit.block_sizes < FIT_MIN_SIZES:
        reasons.append(f"{fit.block_sizes} block sizes, fewer than {FIT_MIN_SIZES}")
    if not fit.r_squared >= FIT_MIN_R_SQUARED:
        reasons.append(f"R² {fit.r_squared:.2f} below {FIT_MIN_R_SQUARED:g}")
    elif reasons:
        reasons.append(f"R² {fit.r_squared:.2f}")
    return ", ".join(reasons)


def size_text(n_bytes: float) -> str:
    """A byte count in words, four significant digits: "2 MiB", "1.023 MiB", "512 KiB"."""
    for unit, factor in (("MiB", BYTES_PER_MIB), ("KiB", BYTES_PER_KIB)):
        if n_bytes >= factor:
            return f"{n_bytes / factor:.4g} {unit}"
    return f"{n_bytes:.4g} B"


@dataclass(frozen=True)
class MeasuredSizes:
    """Mean per-op ms of the device's queue-depth-1 local runs at each block size measured."""

    bs_bytes: tuple[int, ...]
    op_ms: tuple[float, ...]

    @classmethod
    def of(cls, runs: pd.DataFrame) -> MeasuredSizes:
        """Per-size means of ``op_ms`` from fio run rows (see :func:`storage.fio_runs`)."""
        means = runs.groupby("bs_bytes", sort=True)["op_ms"].mean()
        return cls(tuple(int(b) for b in means.index), tuple(float(v) for v in means))

    def ms_at(self, size_bytes: float) -> float:
        """Per-op ms at ``size_bytes``: measured, interpolated, or carried past the ends (see where)."""
        sizes, times = np.array(self.bs_bytes, float), np.array(self.op_ms, float)
        if size_bytes > sizes[-1]:
            return float(times[-1] * size_bytes / sizes[-1])  # at the largest size's measured rate
        return float(np.interp(size_bytes, sizes, times))  # below the smallest: its time, an upper bound

    def where(self, size_bytes: float) -> str:
        """How :meth:`ms_at` reads ``size_bytes``: "at 2 MiB", "interpolated between ...", or beyond."""
        sizes = self.bs_bytes
        if any(math.isclose(size_bytes, s, rel_tol=1e-9) for s in sizes):
            return f"at {size_text(size_bytes)}"
        if size_bytes < sizes[0]:
            return (
                f"at {size_text(sizes[0])}, the smallest size measured, standing for "
                f"{size_text(size_bytes)} (an upper bound)"
            )
        if size_bytes > sizes[-1]:
            return (
                f"extrapolated to {size_text(size_bytes)} at the throughput of the largest "
                f"size measured, {size_text(sizes[-1])}"
            )
        below = max(s for s in sizes if s < size_bytes)
        above = min(s for s in sizes if s > size_bytes)
        return f"interpolated at {size_text(size_bytes)} between {size_text(below)} and {size_text(above)}"


@dataclass(frozen=True)
class DeviceTerm:
    """One device's time per write and its throughput ceiling, from a sane fit or its measured sizes."""

    name: str  # ``device`` or ``device (engine)``, as :func:`storage.fit_devices` keys fits
    device: str  # the manifest's device label
    measured: MeasuredSizes
    fit: storage.DeviceFit | None
    refusal: str  # why the fit is not used ('' when it is)

    @property
    def method(self) -> str:
        """``fit`` when the fit stands for the device, else ``measured``."""
        return "fit" if self.fit is not None and not self.refusal else "measured"

    def request_ms(self, request_bytes: float) -> float:
        """Device ms of one request of ``request_bytes``: the sane fit, else the measured sizes."""
        if self.fit is not None and self.method == "fit":
            return self.fit.predict_ms(request_bytes)
        return self.measured.ms_at(request_bytes)

    def block_ms(self, bs_bytes: float) -> float:
        """What a whole write of ``bs_bytes`` took locally (measured, interpolated between sizes)."""
        return self.measured.ms_at(bs_bytes)

    def floor_ms(self, bs_bytes: float, request_bytes: float) -> float:
        """The request's share of the whole write's local time: less would beat the local throughput."""
        return self.block_ms(bs_bytes) * min(request_bytes, bs_bytes) / bs_bytes

    def device_ms(self, bs_bytes: float, request_bytes: float) -> float:
        """Device ms of one ``request_bytes`` request of a ``bs_bytes`` write, never faster than local."""
        return max(self.request_ms(request_bytes), self.floor_ms(bs_bytes, request_bytes))

    def write_ms(self, bs_bytes: int) -> float:
        """Device ms of a whole ``bs_bytes`` write as one request (the forecasting engine's device_ms)."""
        return self.device_ms(bs_bytes, bs_bytes)

    def bytes_per_s(self, bs_bytes: float) -> float:
        """The device ceiling: measured local throughput at ``bs_bytes`` (bytes per second)."""
        return bs_bytes / (self.block_ms(bs_bytes) / MS_PER_S)

    def floor_binds(self, bs_bytes: float, request_bytes: float) -> bool:
        """True when the local throughput at ``bs_bytes``, not the request's own time, sets the term."""
        return self.floor_ms(bs_bytes, request_bytes) > self.request_ms(request_bytes)

    def sentence(self, bs_bytes: float, request_bytes: float) -> str:
        """What the page says the device term is and why: which value, at which size, fit or not."""
        if self.floor_binds(bs_bytes, request_bytes):
            used = f"fio's measured latency {self.measured.where(bs_bytes)}"
            if request_bytes < bs_bytes:
                used += f", {request_bytes / bs_bytes:.3g} of it for the {size_text(request_bytes)} request"
            why = self._floor_why(bs_bytes, request_bytes)
        elif self.method == "fit":
            assert self.fit is not None
            used = f"the local fio fit at {size_text(request_bytes)}"
            why = self._fit_why(request_bytes)
        else:
            used = f"fio's measured latency {self.measured.where(request_bytes)}"
            why = self._refused()
        return f"device term: {used} ({why})"

    def _refused(self) -> str:
        """The fit's refusal as the sentence's reason."""
        return f"fit refused: {self.refusal}"

    def _fit_why(self, request_bytes: float) -> str:
        """The used fit's credentials, and whether the request lies outside its sizes."""
        assert self.fit is not None
        text = f"R² {self.fit.r_squared:.2f} over {self.fit.block_sizes} block sizes"
        if not self.fit.min_bs_bytes <= request_bytes <= self.fit.max_bs_bytes:
            text += f"; extrapolated beyond the sizes measured, {size_text(self.fit.min_bs_bytes)} to "
            text += size_text(self.fit.max_bs_bytes)
        return text

    def _floor_why(self, bs_bytes: float, request_bytes: float) -> str:
        """Why the local throughput set the term: the request-size value would have beaten it."""
        basis = "fit" if self.method == "fit" else "measured value"
        beaten = "the device's local throughput"
        if bs_bytes > max(self.measured.bs_bytes):
            beaten = (
                f"the throughput measured at {size_text(max(self.measured.bs_bytes))}; none was at this size"
            )
        value = f"{self.request_ms(request_bytes):.3g} ms"
        text = f"the {basis} at {size_text(request_bytes)}, {value}, would beat {beaten}"
        return text if self.method == "fit" else f"{text}; {self._refused()}"


def device_terms(runs: pd.DataFrame) -> tuple[dict[str, DeviceTerm], dict[str, str]]:
    """Each device's term from its model-kind local runs, named as :func:`storage.fit_devices` names fits.

    Returns (terms, skipped): a device with one measured size still has a measured term; ``skipped``
    says why a group has none (today only a group with no runs, which cannot occur).
    """
    terms: dict[str, DeviceTerm] = {}
    for name, group in storage.model_groups(runs).items():
        terms[name] = _term(name, group)
    return terms, {}


def _term(name: str, group: pd.DataFrame) -> DeviceTerm:
    """One group's term: its measured sizes, and its fit with the refusal (if any)."""
    measured = MeasuredSizes.of(group)
    device = str(group["device"].iloc[0])
    try:
        fit: storage.DeviceFit | None = storage.fit_device(
            device, group["op_ms"].to_numpy(), group["bs_bytes"].to_numpy()
        )
    except DesignError as exc:
        return DeviceTerm(name, device, measured, None, str(exc).removeprefix(f"device {device}: "))
    assert fit is not None
    return DeviceTerm(name, device, measured, fit, fit_refusal(fit))


def term_table(terms: Mapping[str, DeviceTerm]) -> pd.DataFrame:
    """Per device: the method used, the fit's R² and slope sign, and why a fit was refused."""
    rows = [
        {
            "device": name,
            "method": t.method,
            "block_sizes": len(t.measured.bs_bytes),
            "r_squared": t.fit.r_squared if t.fit is not None else math.nan,
            "fit_refused_because": t.refusal,
        }
        for name, t in terms.items()
    ]
    return pd.DataFrame(rows, columns=["device", "method", "block_sizes", "r_squared", "fit_refused_because"])
