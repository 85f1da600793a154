"""Arithmetic whose result is the same on every machine: integers, Decimal, guarded rounding.

Only IEEE basic operations (+ - * / sqrt) are correctly rounded; exp, log, pow and anything an
optimiser returns may differ in the last bits between numpy/libm/BLAS builds. Such a float must
never decide a byte. Bytes come from integer draws of the random stream and from ``decimal``,
whose ``exp`` and ``ln`` are correctly rounded by specification; the few float results that do
choose a parameter go through :func:`quantize_guarded`, which refuses a value near a rounding tie
instead of letting its last bits pick a side.
"""

from __future__ import annotations

import decimal
from decimal import ROUND_HALF_EVEN, Decimal
from functools import lru_cache

import numpy as np

PRECISION_DIGITS = 34  # decimal128: far more digits than any byte we write depends on
IH_TERMS = 12  # Irwin-Hall: the sum of 12 uniforms has unit variance in units of one uniform's range
IH_LEVELS = 4096  # each uniform takes IH_LEVELS integer values
GUARD_FRACTION = Decimal("0.0001")  # refuse a value closer than this (in steps) to a tie


class RoundingTieError(ValueError):
    """A float result sits so close to a rounding tie that its last bits would pick the byte."""


def context() -> decimal.Context:
    """The one decimal context every exact computation uses (independent of the caller's)."""
    return decimal.Context(prec=PRECISION_DIGITS, rounding=ROUND_HALF_EVEN, Emin=-999999, Emax=999999)


def quantize_guarded(value: float, places: int, what: str) -> Decimal:
    """``value`` rounded to ``places`` decimals, or RoundingTieError when it is within the guard of a tie.

    Two machines whose results differ by far less than the guard (a few units in the last
    place) either round to the same Decimal or at least one of them refuses: never different bytes.
    """
    exact = Decimal(value)  # the binary value, exactly
    step = Decimal(1).scaleb(-places)
    steps = exact / step
    distance_to_tie = abs(steps - steps.to_integral_value(rounding=decimal.ROUND_FLOOR) - Decimal("0.5"))
    if distance_to_tie < GUARD_FRACTION:
        raise RoundingTieError(
            f"{what}: {value!r} is within {GUARD_FRACTION} of a step of a rounding tie at "
            f"{places} decimals; its last bits would decide the output (change the seed or the step)"
        )
    return exact.quantize(step, rounding=ROUND_HALF_EVEN, context=context())


def weights_per_mille(weights: tuple[float, ...]) -> np.ndarray:
    """Cumulative integer weights (per mille) from weights written as short decimals."""
    ints = [int(Decimal(str(w)) * 1000) for w in weights]
    if any(Decimal(str(w)) * 1000 != i for w, i in zip(weights, ints, strict=True)):
        raise ValueError(f"weights {weights} need more than 3 decimals")
    return np.cumsum(ints, dtype=np.int64)


def choose(rng: np.random.Generator, cumulative: np.ndarray, n: int) -> np.ndarray:
    """``n`` indices drawn with integer cumulative weights (integer stream only)."""
    return np.searchsorted(cumulative, rng.integers(0, int(cumulative[-1]), size=n), side="right")


def irwin_hall_2m(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` approximately standard-normal draws, as integers ``z * 2 * IH_LEVELS`` (|z| <= 6)."""
    s = rng.integers(0, IH_LEVELS, size=(n, IH_TERMS), dtype=np.int64).sum(axis=1)
    return 2 * s - IH_TERMS * (IH_LEVELS - 1)


def scaled(value: float | str, factor: int) -> int:
    """round(value * factor) for a parameter written as a short decimal (exact, half even)."""
    return int((Decimal(str(value)) * factor).to_integral_value(rounding=ROUND_HALF_EVEN))


def ln_scaled(value: float | str, factor: int) -> Decimal:
    """factor * ln(value), correctly rounded, for a parameter written as a short decimal."""
    ctx = context()
    return ctx.multiply(Decimal(factor), ctx.ln(Decimal(str(value))))


@lru_cache(maxsize=16)
def exp_table(sigma: str, scale_bits: int) -> tuple[int, ...]:
    """round(2**scale_bits * exp(sigma * z)) for every Irwin-Hall value z (index = (z2m + off) // 2)."""
    ctx = context()
    s = Decimal(sigma)
    two_m = Decimal(2 * IH_LEVELS)
    one = Decimal(2**scale_bits)
    offset = IH_TERMS * (IH_LEVELS - 1)
    out = []
    for k in range(IH_TERMS * (IH_LEVELS - 1) + 1):
        z = ctx.divide(Decimal(2 * k - offset), two_m)
        value = ctx.multiply(one, ctx.exp(ctx.multiply(s, z)))
        out.append(int(value.to_integral_value(rounding=ROUND_HALF_EVEN)))
    return tuple(out)


def lognormal_shape(rng: np.random.Generator, sigma: str, n: int, scale_bits: int = 20) -> np.ndarray:
    """``n`` integer draws of ``2**scale_bits * exp(sigma * z)``, z approximately standard normal."""
    table = np.array(exp_table(sigma, scale_bits), dtype=np.int64)
    z2m = irwin_hall_2m(rng, n)
    return table[(z2m + IH_TERMS * (IH_LEVELS - 1)) // 2]
