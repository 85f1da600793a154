"""pandera schemas for the ping and iperf3 DataFrames (fio/iostat keep theirs in their modules).

Imported lazily (only when a DataFrame is built), so the summarize CLI does not pay for pandera.
:func:`validate` is pandera's ``schema.validate`` with a vectorised fast path for frames that pass;
:func:`checked_frame` builds a small frame at its dtypes straight from parsed rows when they surely pass.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa

# pandera built-in checks the fast path evaluates itself: name -> (statistic, comparison).
_BOUND_CHECKS: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "greater_than": ("min_value", operator.gt),
    "greater_than_or_equal_to": ("min_value", operator.ge),
    "less_than": ("max_value", operator.lt),
    "less_than_or_equal_to": ("max_value", operator.le),
}

PING_SAMPLES = pa.DataFrameSchema(
    {
        "seq": pa.Column("int64", pa.Check.ge(0)),
        "rtt_ms": pa.Column("float64", pa.Check.ge(0.0)),
        "timestamp_s": pa.Column("float64", pa.Check.ge(0.0), nullable=True),
        "duplicate": pa.Column(bool),
    },
    strict=True,
    ordered=True,
)

IPERF3_INTERVALS = pa.DataFrameSchema(
    {
        "interval": pa.Column("int64", pa.Check.ge(0)),
        "stream": pa.Column(str),  # socket number as text, or "sum"
        "direction": pa.Column(str, pa.Check.isin(["forward", "reverse"])),
        "sender": pa.Column("boolean", nullable=True),
        "start_s": pa.Column("float64", pa.Check.ge(0.0)),
        "end_s": pa.Column("float64", pa.Check.ge(0.0)),
        "bytes": pa.Column("int64", pa.Check.ge(0)),
        "bits_per_s": pa.Column("float64", pa.Check.ge(0.0)),
        "omitted": pa.Column(bool),
    },
    strict=False,
    ordered=False,
)


# Python value types a column of each declared dtype is built from directly (bool is not a number here:
# a cast would turn True into 1, which the slow path decides).
_BUILDABLE: dict[str, tuple[type, ...]] = {
    "float64": (int, float),
    "int64": (int,),
    "Int64": (int,),
    "str": (str,),
    "string": (str,),
    "string[pyarrow]": (str,),
}


def checked_frame(schema: pa.DataFrameSchema, rows: list[dict[str, Any]]) -> pd.DataFrame | None:
    """``rows`` as a frame built at the schema's dtypes when every value surely passes; else None.

    Why: a per-file frame of one or two rows spent most of its parse in ``astype`` and the column checks
    (about 6 ms of a 10 ms fio file). None sends the caller down the casting path, which gives the same
    frame or pandera's error, so a bad file is refused exactly as before.
    """
    plan = _plan(schema)
    if not rows or plan is None:
        return None
    arrays: dict[str, Any] = {}
    for column in plan:
        array = _column_array(column, [row.get(column.name) for row in rows])
        if array is None:
            return None
        arrays[column.name] = array
    return pd.DataFrame(arrays, columns=[column.name for column in plan])


@dataclass(frozen=True)
class _Column:
    """What :func:`_column_array` reads of a schema column, read once per schema (pandera's dtype
    names cost more to print than a small file's column costs to check)."""

    name: str
    dtype: str
    kinds: tuple[type, ...]
    nullable: bool
    checks: tuple[pa.Check, ...]


_PLANS: dict[int, tuple[pa.DataFrameSchema, tuple[_Column, ...] | None]] = {}  # by id(schema), schema kept


def _plan(schema: pa.DataFrameSchema) -> tuple[_Column, ...] | None:
    """The schema's columns as :func:`checked_frame` builds them, or None when it is not simple."""
    kept = _PLANS.get(id(schema))
    if kept is None or kept[0] is not schema:
        plan = None
        if _simple(schema):
            dtypes = {name: str(col.dtype) for name, col in schema.columns.items()}
            plan = tuple(
                _Column(name, dtypes[name], _BUILDABLE[dtypes[name]], bool(col.nullable), tuple(col.checks))
                for name, col in schema.columns.items()
            )
        kept = _PLANS[id(schema)] = (schema, plan)
    return kept[1]


def _simple(schema: pa.DataFrameSchema) -> bool:
    """True for a schema whose every rule :func:`_column_array` can judge (no frame checks, no coercion)."""
    return _frame_rules_judged(schema) and all(
        _column_rules_judged(c) and str(c.dtype) in _BUILDABLE for c in schema.columns.values()
    )


def _frame_rules_judged(schema: pa.DataFrameSchema) -> bool:
    """True when the schema has no rule over the whole frame the fast paths leave to pandera."""
    return not (schema.checks or schema.index is not None or schema.unique or schema.coerce)


def _column_rules_judged(col: pa.Column) -> bool:
    """True when a column has no rule (coercion, uniqueness, a name pattern) left to pandera."""
    return not (col.coerce or col.unique or col.regex or col.dtype is None)


def _column_array(col: _Column, values: list[Any]) -> Any:
    """The column's values at its declared dtype when each is plain and every check holds; else None."""
    name = col.dtype
    kinds = col.kinds
    nulls = [v is None for v in values]
    if any(nulls) and not col.nullable:
        return None
    present = [v for v, null in zip(values, nulls, strict=True) if not null]
    if any(isinstance(v, bool) or not isinstance(v, kinds) for v in present):
        return None
    built: Any = None
    if kinds == (str,):
        judged: Any = pd.Series(present, dtype=object) if col.checks else None
    elif name == "float64":
        built = np.array(values, dtype="float64")  # None -> NaN, as the cast does
        judged = built[~np.array(nulls, dtype=bool)]
        if np.isnan(judged).any():
            return None  # a NaN given as a float is a null: the slow path decides
    else:
        try:
            judged = np.array(present, dtype="int64")
        except OverflowError:
            return None
    if not all(_check_holds(check, judged) for check in col.checks):
        return None
    return built if built is not None else pd.array(values, dtype=_pandas_dtype(name))


def validate(schema: pa.DataFrameSchema, df: pd.DataFrame) -> pd.DataFrame:
    """``schema.validate(df)``, skipping pandera (≈ 0.1 s a call) for a frame that surely passes."""
    return df if conforms(schema, df) else schema.validate(df)


def astype(schema: pa.DataFrameSchema, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every schema column cast to its declared dtype (columns already of it left as they are)."""
    have = df.dtypes
    casts = {
        name: str(col.dtype)
        for name, col in schema.columns.items()
        if name not in have or have[name] != _pandas_dtype(str(col.dtype))
    }
    return df.astype(casts) if casts else df


def conforms(schema: pa.DataFrameSchema, df: pd.DataFrame) -> bool:
    """True only when every rule of a simple schema holds; False when unsure (pandera then decides)."""
    if not _frame_rules_judged(schema):
        return False
    if (schema.strict or schema.ordered) and list(df.columns) != list(schema.columns):
        return False
    return all(name in df.columns and _column_conforms(col, df[name]) for name, col in schema.columns.items())


def _column_conforms(col: pa.Column, series: pd.Series) -> bool:
    """dtype exactly the declared one, no null unless nullable, every check true on the non-null values."""
    if not _column_rules_judged(col):
        return False
    if series.dtype != _pandas_dtype(str(col.dtype)):
        return False
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        values: Any = series.to_numpy(dtype="float64", na_value=np.nan)  # exact for the sign and bounds
        nulls = np.isnan(values)
    else:
        values = series
        nulls = series.isna().to_numpy()
    if nulls.any():
        if not col.nullable:
            return False
        values = values[~nulls]
    return all(_check_holds(check, values) for check in col.checks)


@functools.cache
def _pandas_dtype(name: str) -> Any:
    """The pandas dtype a schema's dtype name stands for (cached: the lookup costs more than the check)."""
    return pd.api.types.pandas_dtype(name)


def _check_holds(check: pa.Check, values: Any) -> bool:
    """A bound or ``isin`` check evaluated on non-null values; any other check is not judged here."""
    stats = check.statistics or {}
    if check.name in _BOUND_CHECKS:
        key, compare = _BOUND_CHECKS[check.name]
        return bool(np.all(compare(values, stats[key])))
    if check.name == "isin" and isinstance(values, pd.Series):
        return bool(values.isin(list(stats["allowed_values"])).all())
    return False
