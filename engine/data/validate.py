"""Validating a frame against a Schema and converting its columns to the schema's types.

Every problem is a `DataError` naming the source, the column, the row (counted from 1 at the first record, a
header line not counted) and what would be accepted. Nothing is dropped silently.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from engine.data.delimited import ROW_CONVENTION
from engine.data.schema import FieldSpec, Schema
from engine.data.values import is_str, n_distinct, numbers
from engine.errors import DataError

MISSING_CATEGORY = "(missing)"


def validate(frame: pd.DataFrame, schema: Schema, source: str) -> None:
    """Raise a `DataError` if ``frame`` (as read from ``source``) cannot be used with ``schema``.

    Checks: unique column names; every schema column present; the text column holds text and is not all
    empty; author / document columns have no missing values; count fields hold whole numbers ≥ 0 and
    continuous fields finite numbers, with no missing values; no structured field is constant (when there is
    more than one record). Messages name ``source``, the column, the row (counted from 1 at the first record,
    header not counted) and what is accepted.
    """
    conformed(frame, schema, source, release=True)


def conformed(frame: pd.DataFrame, schema: Schema, source: str, *, release: bool) -> pd.DataFrame:
    """The schema's columns of ``frame``, validated and converted to their types, with a fresh RangeIndex.

    For external records (``release=False``) only the text and author columns are required; fields are kept
    if present, and a field may be constant.
    """
    _check_unique_columns(frame, source)
    required: list[str | None] = list(schema.columns) if release else [schema.text, schema.author]
    _check_columns_present(frame, schema, required, source)
    columns = [c for c in schema.columns if c in frame.columns and (release or c != schema.document)]
    data = frame[columns].reset_index(drop=True)
    out: dict[str, pd.Series] = {schema.text: _text_column(data[schema.text], schema.text, source)}
    for role, col in (("author", schema.author), ("document", schema.document)):
        if col is not None and col in data.columns:
            out[col] = _label_column(data[col], col, role, source)
    for spec in schema.fields:
        if spec.name in data.columns:
            out[spec.name] = _field_column(data[spec.name], spec, source)
            if release and len(data) > 1:
                _check_not_constant(out[spec.name], spec.name, source)
    for col in schema.direct_identifiers:
        if col in data.columns:  # names as text; a missing value names nobody
            out[col] = data[col].astype(object).where(data[col].notna(), "").astype(str)
    for col in schema.other_text:
        if col in data.columns:  # free text as text; a missing value is empty
            out[col] = data[col].astype(object).where(data[col].notna(), "").astype(str)
    return pd.DataFrame(out, columns=columns)


def _check_unique_columns(frame: pd.DataFrame, source: str) -> None:
    dup = frame.columns[frame.columns.duplicated()]
    if len(dup):
        raise DataError(
            f"{source}: the column name '{dup[0]}' appears more than once; every column needs a unique name"
        )


def _check_columns_present(frame: pd.DataFrame, schema: Schema, required: list[str | None], source: str) -> None:
    roles = {schema.text: "text column", schema.author: "author column", schema.document: "document column"}
    roles.update(dict.fromkeys(schema.direct_identifiers, "direct-identifier column"))
    roles.update(dict.fromkeys(schema.other_text, "other free-text column, listed in other_text"))
    have = [str(c) for c in frame.columns]
    for col in required:
        if col is None or col in frame.columns:
            continue
        role = roles.get(col, "structured field")
        hint = _close_matches(col, have)
        raise DataError(
            f"{source} has no column '{col}' (the schema's {role}){hint}; the file's columns are: {', '.join(have)}"
        )


def _close_matches(name: str, columns: list[str]) -> str:
    same_case = [c for c in columns if c.lower() == name.lower()]
    matches = same_case + [c for c in difflib.get_close_matches(name, columns, n=3, cutoff=0.6) if c not in same_case]
    return f"; did you mean {' or '.join(repr(m) for m in matches[:3])}?" if matches else ""


def _row(i: int) -> str:
    return f"row {i + 1}"


def _show(value: Any) -> str:
    """A value as quoted in a message, shortened."""
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 60 else text[:56] + "...'"


def _text_column(col: pd.Series, name: str, source: str) -> pd.Series:
    """Text as str; missing becomes ''. Rejects numbers, non-string values and an all-empty column."""
    present = col[col.notna()]
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
        _reject_text(name, "numbers" if not pd.api.types.is_bool_dtype(col) else "true/false values", present, source)
    str_mask = is_str(present)
    if len(present) and str_mask.mean() < 0.5:
        _reject_text(name, "non-text values", present[~str_mask], source)
    strings = present[str_mask]
    numeric = pd.to_numeric(strings, errors="coerce").notna()
    if len(strings) and numeric.mean() > 0.5:
        _reject_text(name, "numbers", strings[numeric], source)
    text = col.fillna("").astype(str)
    if not text.str.strip().ne("").any():
        raise DataError(f"{source}: the text column '{name}' is empty in every row; choose a column of free text")
    return text


def _reject_text(name: str, what: str, values: pd.Series, source: str) -> None:
    first = _show(values.iloc[0]) if len(values) else "none"
    raise DataError(
        f"{source}: column '{name}' was chosen as the text column but holds {what} (first value {first}); "
        "choose a column of free text"
    )


def _label_column(col: pd.Series, name: str, role: str, source: str) -> pd.Series:
    """Author / document ids as str; a missing id is an error (it would merge unrelated records)."""
    i = _first_bad(col.isna().to_numpy())
    if i is not None:
        raise DataError(
            f"{source}: column '{name}' (the {role} column) has no value in {_row(i)} ({ROW_CONVENTION}); "
            f"every record needs a {role} — fill it in, or load without a {role} column"
        )
    return _as_strings(col)


def _as_strings(col: pd.Series) -> pd.Series:
    """Values as str; whole floats (1.0, as pandas stores integers next to gaps) are written as integers."""
    if pd.api.types.is_string_dtype(col.dtype) and not pd.api.types.is_object_dtype(col.dtype):
        return col.astype(str)
    return col.map(_category_string).astype(str)


def _category_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _field_column(col: pd.Series, spec: FieldSpec, source: str) -> pd.Series:
    if spec.kind == "categorical":
        return _as_strings(col.where(col.notna(), MISSING_CATEGORY))
    if spec.kind == "count":
        return _count_column(col, spec.name, source)
    return _continuous_column(col, spec.name, source)


_COUNT_ACCEPTED = "accepted: a whole number ≥ 0"
_CONTINUOUS_ACCEPTED = "accepted: a finite number"


def _first_bad(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if len(hits) else None


def _field_problem(
    source: str, name: str, kind: str, mask: np.ndarray, problem: Callable[[int], str], accepted: str
) -> DataError | None:
    """The error for the rows ``mask`` marks (None if none): the first named, with ``problem`` of it, and how
    many others have the same problem."""
    hits = np.flatnonzero(mask)
    if not len(hits):
        return None
    i, others = int(hits[0]), len(hits) - 1
    where = _row(i) + (f" and {others:,} other row{'s' if others > 1 else ''}" if others else "")
    return DataError(
        f"{source}: column '{name}' (a {kind} field), {where}: {problem(i)}; {accepted} ({ROW_CONVENTION})"
    )


def _raise_first(*problems: DataError | None) -> None:
    for problem in problems:
        if problem is not None:
            raise problem


def _check_numbers(col: pd.Series, nums: pd.Series, name: str, kind: str, accepted: str, source: str) -> None:
    _raise_first(
        _field_problem(source, name, kind, col.isna().to_numpy(), lambda i: "the value is missing", accepted),
        _field_problem(
            source, name, kind, nums.isna().to_numpy(), lambda i: f"{_show(col.iloc[i])} is not a number", accepted
        ),
        _field_problem(
            source,
            name,
            kind,
            ~np.isfinite(nums.to_numpy()),
            lambda i: f"{_show(col.iloc[i])} is not a finite number",
            accepted,
        ),
    )


def _count_column(col: pd.Series, name: str, source: str) -> pd.Series:
    nums = numbers(col)
    _check_numbers(col, nums, name, "count", _COUNT_ACCEPTED, source)
    values = nums.to_numpy()
    _raise_first(
        _field_problem(
            source,
            name,
            "count",
            values != np.floor(values),
            lambda i: f"{_show(col.iloc[i])} is not a whole number",
            _COUNT_ACCEPTED,
        ),
        _field_problem(
            source, name, "count", values < 0, lambda i: f"{_show(col.iloc[i])} is negative", _COUNT_ACCEPTED
        ),
    )
    if pd.api.types.is_integer_dtype(col):
        return col.astype("int64")
    exact = pd.to_numeric(col, errors="coerce") if not pd.api.types.is_numeric_dtype(col) else col
    return exact.astype("int64") if pd.api.types.is_integer_dtype(exact) else nums.astype("int64")


def _continuous_column(col: pd.Series, name: str, source: str) -> pd.Series:
    nums = numbers(col)
    _check_numbers(col, nums, name, "continuous", _CONTINUOUS_ACCEPTED, source)
    return nums.astype("float64")


def _check_not_constant(col: pd.Series, name: str, source: str) -> None:
    if n_distinct(col) <= 1:
        raise DataError(
            f"{source}: constant column '{name}' (every row holds {_show(col.iloc[0])}); a field with a single "
            "value carries no information — drop it or choose another field"
        )
