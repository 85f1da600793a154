"""One colour and marker scheme for the whole site: network, device and R2T window always look the same.

- network (a colour each): wired blue, wireless orange, veth green, local grey;
- device (a colour and a marker shape each): hdd brown circle, ssd purple square, virtio-ssd pink
  diamond, ram red triangle; device colours never repeat a network colour, so a colour means one thing;
- window, ``MaxOutstandingR2T`` (a line dash each, and a teal ramp where it is the only series).

Chart modules call :func:`color`, :func:`shape` and :func:`dash` with the values the chart shows: the
scale's domain is those values only (a legend never names a series the chart does not draw), in the
order of the mapping, and a value the mapping does not know gets a spare colour after the known ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import altair as alt

NETWORK_COLOURS: Mapping[str, str] = {
    "wired": "#4c78a8",
    "wireless": "#f58518",
    "veth": "#54a24b",
    "local": "#79706e",
}
DEVICE_COLOURS: Mapping[str, str] = {
    "hdd": "#9d755d",
    "ssd": "#b279a2",
    "virtio-ssd": "#ff9da6",
    "ram": "#e45756",
}
DEVICE_SHAPES: Mapping[str, str] = {
    "hdd": "circle",
    "ssd": "square",
    "virtio-ssd": "diamond",
    "ram": "triangle-up",
}
WINDOW_COLOURS: Mapping[str, str] = {
    "1": "#a7d8d2",
    "2": "#6cbfb6",
    "4": "#2a9d8f",
    "8": "#1b7065",
    "16": "#0d4239",
}
WINDOW_DASHES: Mapping[str, list[int]] = {
    "1": [1, 0],
    "2": [8, 3],
    "4": [4, 3],
    "8": [2, 2],
    "16": [1, 2],
}
# Colours for values no mapping names (a new dataset's label): none of them is used above.
SPARE_COLOURS = ("#eeca3b", "#72b7b2", "#bab0ac", "#8c6d31", "#393b79", "#637939")
SPARE_SHAPES = ("cross", "triangle-down", "wedge", "stroke")
SPARE_DASHES = ([6, 2, 1, 2], [10, 4], [3, 6])

COLOURS: Mapping[str, Mapping[str, str]] = {
    "network": NETWORK_COLOURS,
    "device": DEVICE_COLOURS,
    "window": WINDOW_COLOURS,
}
TITLES: Mapping[str, str] = {"network": "network", "device": "device", "window": "MaxOutstandingR2T"}


Value = str | int | float | bool


def _native(value: object) -> Value:
    """A data value as the chart's JSON holds it: numpy scalars as Python ones, 16.0 as 16."""
    item = getattr(value, "item", None)
    if callable(item):
        value = item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, str | int | float | bool) else str(value)


def _key(value: object) -> str:
    """The mapping key of a data value: lower-case text, integers without ``.0``."""
    return str(_native(value)).strip().lower()


def _domain(values: Iterable[object], known: Mapping[str, Any]) -> list[Value]:
    """Distinct values shown, the known ones in the mapping's order, then the others by their text."""
    present = {_key(v): _native(v) for v in values}
    ordered = [present[k] for k in known if k in present]
    return ordered + [present[k] for k in sorted(present) if k not in known]


def _range(domain: list[Value], known: Mapping[str, Any], spare: tuple[Any, ...]) -> list[Any]:
    """The mapped value of each domain entry; unknown entries take spare values in turn."""
    out, n_spare = [], 0
    for value in domain:
        if _key(value) in known:
            out.append(known[_key(value)])
        else:
            out.append(spare[n_spare % len(spare)])
            n_spare += 1
    return out


def color_scale(kind: str, values: Iterable[object]) -> alt.Scale:
    """Colour scale of ``kind`` (network, device or window) over the values a chart shows."""
    if kind not in COLOURS:
        raise ValueError(f"colour kind {kind!r}: expected one of {sorted(COLOURS)}")
    domain = _domain(values, COLOURS[kind])
    return alt.Scale(domain=domain, range=_range(domain, COLOURS[kind], SPARE_COLOURS))


def color(field: str, kind: str, values: Iterable[object], title: str | None = None, **kw: Any) -> alt.Color:
    """A nominal colour channel on ``field`` with the site's scale for ``kind``."""
    return alt.Color(
        f"{field}:N",
        title=TITLES.get(kind, kind) if title is None else title,
        scale=color_scale(kind, values),
        **kw,
    )


def shape(field: str, values: Iterable[object], title: str | None = "device", **kw: Any) -> alt.Shape:
    """A nominal marker-shape channel on a device ``field`` with the site's device shapes."""
    domain = _domain(values, DEVICE_SHAPES)
    scale = alt.Scale(domain=domain, range=_range(domain, DEVICE_SHAPES, SPARE_SHAPES))
    return alt.Shape(f"{field}:N", title=title, scale=scale, **kw)


def dash(
    field: str, values: Iterable[object], title: str | None = "MaxOutstandingR2T", **kw: Any
) -> alt.StrokeDash:
    """A nominal line-dash channel on a window ``field`` with the site's window dashes."""
    domain = _domain(values, WINDOW_DASHES)
    scale = alt.Scale(domain=domain, range=_range(domain, WINDOW_DASHES, SPARE_DASHES))
    return alt.StrokeDash(f"{field}:N", title=title, scale=scale, **kw)


def device_colour(device: object) -> str:
    """The site's colour of one device (a spare colour for a device the scheme does not name)."""
    return DEVICE_COLOURS.get(_key(device), SPARE_COLOURS[0])
