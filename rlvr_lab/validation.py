"""Shared argument checks for the math modules.

Every check raises :class:`ValueError` whose message names the argument and its allowed range, so a
notebook reader sees ``p must be in [0, 1], got 1.5`` rather than a silent NaN three cells later.
The helpers accept Python scalars and numpy arrays; they never import torch.

>>> probability("p", 0.25)
0.25
>>> probability("p", 1.5)
Traceback (most recent call last):
...
ValueError: p must be in [0, 1], got 1.5
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np


def _show(value) -> str:
    arr = np.asarray(value)
    if arr.ndim == 0:
        return repr(arr.item())
    bad = arr.ravel()[:4].tolist()
    return f"an array starting {bad}"


def real(name: str, value, lo: float = -math.inf, hi: float = math.inf, lo_open: bool = False, hi_open: bool = False):
    """Return ``value`` as a float (scalar in) or float64 array (array in) after a range check.

    The range is ``[lo, hi]``; ``lo_open``/``hi_open`` exclude an end. NaN is always rejected.

    >>> real("t_model", 0.12, lo=0.0)
    0.12
    >>> real("w", [0.1, -1.0], lo=0.0)
    Traceback (most recent call last):
    ...
    ValueError: w must be >= 0, got an array starting [0.1, -1.0]
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a real number{_range(lo, hi, lo_open, hi_open, ' ')}, got {value!r}"
        ) from None
    ok = ~np.isnan(arr)
    ok &= (arr > lo) if lo_open else (arr >= lo)
    ok &= (arr < hi) if hi_open else (arr <= hi)
    if not np.all(ok):
        raise ValueError(f"{name} must be {_range(lo, hi, lo_open, hi_open)}, got {_show(value)}")
    return float(arr) if arr.ndim == 0 else arr


def _range(lo, hi, lo_open, hi_open, prefix: str = "") -> str:
    if math.isinf(lo) and math.isinf(hi):
        return prefix + "finite" if prefix else "a real number (not NaN)"
    if math.isinf(hi):
        return f"{prefix}{'>' if lo_open else '>='} {_num(lo)}"
    if math.isinf(lo):
        return f"{prefix}{'<' if hi_open else '<='} {_num(hi)}"
    left, right = ("(" if lo_open else "["), (")" if hi_open else "]")
    return f"{prefix}in {left}{_num(lo)}, {_num(hi)}{right}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def probability(name: str, value):
    """A probability in ``[0, 1]`` (scalar -> float, array -> array)."""
    return real(name, value, 0.0, 1.0)


def nonnegative(name: str, value):
    """A time, weight or count that may be zero but not negative."""
    return real(name, value, 0.0)


def positive(name: str, value):
    """A quantity that must be strictly positive (a duration we divide by, a rate)."""
    return real(name, value, 0.0, lo_open=True)


def integer(name: str, value, minimum: int, maximum: int | None = None) -> int:
    """A whole number (bool rejected) with ``minimum <= value <= maximum``.

    >>> integer("group_size", 0, 1)
    Traceback (most recent call last):
    ...
    ValueError: group_size must be an integer >= 1, got 0
    """
    allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    is_whole = isinstance(value, Integral) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not is_whole:
        raise ValueError(f"{name} must be an integer {allowed}, got {value!r}")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be an integer {allowed}, got {value!r}")
    return value


def choice(name: str, value, options: tuple):
    """One of a fixed set of option strings."""
    if value not in options:
        raise ValueError(f"{name} must be one of {list(options)}, got {value!r}")
    return value


def scalar_out(value):
    """Turn a 0-d numpy result into a Python float; leave arrays alone."""
    arr = np.asarray(value)
    return float(arr) if arr.ndim == 0 else arr
