"""How the values of a column read: which are strings, their numbers, how many distinct ones.

Shared by validation and schema inference, so that a schema inferred from a frame agrees with what validating
the frame against it accepts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def is_str(col: pd.Series) -> pd.Series:
    """Which values are Python strings (missing values are not)."""
    if pd.api.types.is_string_dtype(col.dtype) and not pd.api.types.is_object_dtype(col.dtype):
        return col.notna()
    return col.map(lambda v: isinstance(v, str)).astype(bool)


def n_distinct(col: pd.Series) -> int:
    """Distinct values, missing counted as one; unhashable values (JSON lists) are compared as text."""
    try:
        return int(col.nunique(dropna=False))
    except TypeError:
        return int(col.map(repr).nunique(dropna=False))


def numbers(col: pd.Series) -> pd.Series:
    """A float view of ``col``: numbers as they are, numeric strings parsed, anything else NaN."""
    if pd.api.types.is_bool_dtype(col):
        return pd.Series(np.nan, index=col.index)
    if pd.api.types.is_numeric_dtype(col):
        return col.astype("float64")
    try:
        return pd.to_numeric(col, errors="coerce").astype("float64")
    except (TypeError, ValueError, OverflowError):  # OverflowError: a whole number beyond any float (JSON's 10**400)
        return col.map(_float_or_nan).astype("float64")


def _float_or_nan(value: Any) -> float:
    if isinstance(value, bool):
        return np.nan
    try:
        return float(value)
    except OverflowError:
        return np.inf if value > 0 else -np.inf  # a whole number beyond any float
    except (TypeError, ValueError):
        return np.nan
