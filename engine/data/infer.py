"""Inferring a schema from a frame when none is given."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from engine.data.schema import FieldKind, FieldSpec, Schema
from engine.data.values import is_str, n_distinct, numbers
from engine.errors import DataError

_TEXT_NAMES = ("text", "review", "review_text", "description", "tweet", "content", "body")
_AUTHOR_NAMES = ("author", "user", "user_id", "name", "username", "screen_name", "reviewer_id", "reviewerid")
_DOCUMENT_NAMES = ("document", "doc_id", "call_id")
_MIN_PREFERRED_TEXT_LENGTH = 20
_MAX_CATEGORICAL_INTEGERS = 20


def _normalized(name: Any) -> str:
    return str(name).strip().lower().replace(" ", "_").replace("-", "_")


def infer_schema(frame: pd.DataFrame) -> Schema:
    """A schema guessed from the columns: the text, author and document columns, and a kind for every field.

    Text: a column named text / review / review_text / description / tweet / content / body (any case, spaces
    as underscores) whose mean length is at least 20 characters, else the string column with the largest mean
    length. Author: a column named author / user / user_id / name / username / screen_name / reviewer_id /
    reviewerid whose values repeat. Document: a column named document / doc_id / call_id. Other columns become
    fields with role "other": categorical for strings, booleans and integers with at most 20 distinct values;
    count for other non-negative integers; continuous for other numbers. Left out: columns with a single
    distinct value, and numeric columns with gaps and more than 20 distinct values (a count or continuous
    field may not have missing values).
    """
    numeric = {c: _numeric_view(frame[c]) for c in frame.columns}
    text = _infer_text_column(frame, numeric)
    author = _named_column(frame, _AUTHOR_NAMES, exclude={text}, repeating=True)
    document = _named_column(frame, _DOCUMENT_NAMES, exclude={text, author}, repeating=False)
    fields = []
    for c in frame.columns:
        if c in (text, author, document) or n_distinct(frame[c]) <= 1:
            continue
        kind = _infer_kind(frame[c], numeric[c])
        if kind is not None:
            fields.append(FieldSpec(str(c), kind, "other"))
    return Schema(text=str(text), author=author, document=document, fields=tuple(fields))


def _numeric_view(col: pd.Series) -> pd.Series | None:
    """Numbers of a numeric column, or of a string column whose every value parses as a number; else None."""
    if pd.api.types.is_bool_dtype(col):
        return None
    if pd.api.types.is_numeric_dtype(col):
        return col.astype("float64")
    present = col[col.notna()]
    if len(present) == 0 or not is_str(present).all():
        if len(present) == 0 or not present.map(lambda v: isinstance(v, (str, int, float))).all():
            return None
    if numbers(present.iloc[:100]).isna().any():  # cheap early exit for text columns
        return None
    nums = numbers(col)
    return nums if nums.notna().sum() == len(present) else None


def _mean_length(col: pd.Series) -> float:
    """Mean length in characters, counting missing and non-string values as 0."""
    if len(col) == 0:
        return 0.0
    return float(col.where(is_str(col), "").astype(str).str.len().mean())


def _infer_text_column(frame: pd.DataFrame, numeric: dict[Any, pd.Series | None]) -> Any:
    candidates = [c for c in frame.columns if numeric[c] is None and is_str(frame[c]).mean() >= 0.5]
    if not candidates:
        raise DataError(
            "no column holds free text (every column is numeric or empty); give a schema that names the text column"
        )
    lengths = {c: _mean_length(frame[c]) for c in candidates}
    for c in candidates:
        if _normalized(c) in _TEXT_NAMES and lengths[c] >= _MIN_PREFERRED_TEXT_LENGTH:
            return c
    return max(candidates, key=lambda c: lengths[c])  # max keeps the first of equal lengths


def _named_column(frame: pd.DataFrame, names: tuple[str, ...], exclude: set[Any], repeating: bool) -> str | None:
    for c in frame.columns:
        if c in exclude or _normalized(c) not in names:
            continue
        if frame[c].isna().any():
            continue  # a missing id would merge unrelated records; validation rejects it
        if not repeating or n_distinct(frame[c]) < len(frame):
            return str(c)
    return None


def _infer_kind(col: pd.Series, nums: pd.Series | None) -> FieldKind | None:
    if nums is None:
        return "categorical"
    present = nums.dropna()
    integral = bool((present == np.floor(present)).all())
    if integral and present.nunique() <= _MAX_CATEGORICAL_INTEGERS:
        return "categorical"
    if nums.isna().any():
        return None
    if integral and present.min() >= 0:
        return "count"
    return "continuous"
