"""The identifier columns of a release (author, document) and its other free-text columns as they leave in the
bundle, and what the manifest says of every released column.

Each identifier column gets the treatment its schema declares (`Schema.identifiers`, TOML ``[release]``):
``pseudonymize`` (the default) replaces every value by a keyed pseudonym, HMAC-SHA-256 of the value under a
secret key kept in the cache folder (`engine.export.keys`): the same value gets the same pseudonym in every
release from this machine, so a release keeps its author linkage, and without the key nobody can compute the
pseudonym of a known name; ``drop`` leaves the column out; ``keep`` releases it in clear, a choice the manifest
and the report flag. The key never enters the bundle (`textsdc release --key-out` exports it as a file of its
own). The measures are computed before this step, on the true linkage.

The free-text columns besides the text (`Schema.other_text`) leave only when the schema asks for them to be
protected (``[release] other_text = "protect"``): redacted with the text by redaction, and after the release
guard by every method; otherwise (the default) no bundle holds them.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pandas as pd

from engine.data.schema import Schema
from engine.data.validate import MISSING_CATEGORY
from engine.export.keys import pseudonym_key
from engine.record.columns import (
    AS_IS,
    GUARDED,
    OTHER_TEXT_DROPPED,
    OTHER_TEXT_GUARDED,
    PROTECTED,
    TREATMENT_TEXT,
    WITHHELD,
)

DIGITS = 12  # hex digits of a pseudonym: 48 bits, no collision among millions of values in practice


def pseudonym(key: bytes, column: str, value: object) -> str:
    """The pseudonym of ``value`` in ``column``: ``<column>-<12 hex digits>`` (missing values stay missing)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    digest = hmac.new(key, f"{column}\x00{value}".encode(), hashlib.sha256).hexdigest()
    return f"{column}-{digest[:DIGITS]}"


def public_frame(
    frame: pd.DataFrame, schema: Schema, key: bytes | None = None, withheld: tuple[str, ...] = ()
) -> pd.DataFrame:
    """``frame`` (a release's data) with its identifier columns treated as the schema declares, the columns the
    method ``withheld`` left out, and its fields as the steward's file wrote them (`as_written`)."""
    out = as_written(frame.drop(columns=[c for c in withheld if c in frame.columns]), schema)
    out = out.drop(columns=[c for c in schema.dropped_other_text if c in out.columns])
    for column, treatment in schema.identifiers.items():
        if column not in out.columns or treatment == "keep":
            continue
        if treatment == "drop":
            out = out.drop(columns=[column])
            continue
        k = key if key is not None else pseudonym_key()
        values = out[column]
        codes = {v: pseudonym(k, column, v) for v in pd.unique(values.dropna())}
        out[column] = values.map(codes).astype(object).where(values.notna(), None)
    return out


def pseudonymized_columns(frame: pd.DataFrame, schema: Schema, withheld: tuple[str, ...] = ()) -> list[str]:
    """The columns of ``frame`` (a release's data) that leave as keyed pseudonyms (`public_frame`)."""
    identifiers = schema.identifiers
    return [str(c) for c in frame.columns if c not in withheld and identifiers.get(c) == "pseudonymize"]


def as_written(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """``frame`` with a categorical field's missing value empty again (the models read it as the category
    `MISSING_CATEGORY`, which is no value of the steward's) and a number field whose every value is whole written
    as whole numbers ("109", not "109.0")."""
    out = frame.copy()
    for spec in schema.fields:
        if spec.name not in out.columns:
            continue
        col = out[spec.name]
        if spec.kind == "categorical":
            out[spec.name] = col.astype(object).where(col.astype(object) != MISSING_CATEGORY, None)
        elif pd.api.types.is_float_dtype(col.dtype):
            values = col.dropna().to_numpy()
            whole = np.all(np.isfinite(values)) and np.all(values == np.round(values))
            if len(values) and whole and np.abs(values).max() < 2**53:
                out[spec.name] = col.round().astype("Int64")
    return out


def column_treatments(
    frame: pd.DataFrame,
    schema: Schema,
    protected: tuple[str, ...],
    withheld: tuple[str, ...] = (),
    guarded: tuple[str, ...] = (),
) -> dict[str, str]:
    """Every column of the release's data and how it leaves: withheld by the method, protected by it, an
    identifier's treatment, an other free-text column dropped or released after the release guard alone,
    released as is but for what the release guard replaced in it (``guarded``), or released as is (in the order
    of the data, dropped columns included)."""
    out: dict[str, str] = {}
    identifiers = schema.identifiers
    dropped = schema.dropped_other_text
    for column in frame.columns:
        if column in withheld:
            out[str(column)] = WITHHELD
        elif column in identifiers:
            out[str(column)] = TREATMENT_TEXT[identifiers[column]]
        elif column in dropped:
            out[str(column)] = OTHER_TEXT_DROPPED
        elif column in protected:
            out[str(column)] = PROTECTED
        elif column in schema.other_text:
            out[str(column)] = OTHER_TEXT_GUARDED
        elif column in guarded:
            out[str(column)] = GUARDED
        else:
            out[str(column)] = AS_IS
    return out


def kept_identifiers(schema: Schema) -> list[str]:
    """The identifier columns the schema releases in clear."""
    return [c for c, t in schema.identifiers.items() if t == "keep"]
