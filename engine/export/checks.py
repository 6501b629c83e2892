"""What a steward and a reviewer must be told before a release leaves: the warnings the CLI prints, the
dashboard shows, the manifest lists and the report puts at its top. One home, so all four say the same."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.identifiers_file import names_in
from engine.measures.base import CONFIDENTIAL_SUFFIX, MetricResult, metric_info
from engine.measures.risk.duplicates import verbatim_warning
from engine.protect.base import Release
from engine.text.names import identifier_pattern


def unchanged_protected_columns(dataset: Dataset, release: Release) -> list[str]:
    """Protected columns that the release carries with the confidential values, unchanged in every row."""
    out = []
    for col in release.protected_columns:
        if col not in release.data.columns or col not in dataset.frame.columns:
            continue
        a = dataset.frame[col].reset_index(drop=True).astype(object)
        b = release.data[col].reset_index(drop=True).astype(object)
        if len(a) == 0 or len(a) != len(b):
            continue
        if bool(((a == b) | (a.isna() & b.isna())).all()):
            out.append(col)
    return out


def risk_at_unprotected_level(metrics: Mapping[str, MetricResult]) -> list[str]:
    """Risk measures whose value on the release equals their value on the unprotected data."""
    out = []
    for mid, m in metrics.items():
        if mid.endswith(CONFIDENTIAL_SUFFIX) or metric_info(mid).kind != "risk":
            continue
        base = metrics.get(mid + CONFIDENTIAL_SUFFIX)
        if base is None or m.value is None or base.value is None:
            continue
        if np.isfinite(m.value) and np.isclose(m.value, base.value, rtol=1e-12, atol=1e-12):
            out.append(mid)
    return out


def singled_out_by_other_fields(dataset: Dataset, release: Release) -> tuple[list[str], int]:
    """The fields of role "other" the release carries as they are (neither protected nor withheld), and how many
    records their values together single out (no other record has the same). No risk measure assumes an intruder
    knows such a field (she knows key fields, and sensitive ones for some presets), so a release can read as
    safe while a date and a count released beside each record name it."""
    data = release.data
    columns = [
        f.name
        for f in dataset.schema.fields
        if f.role == "other"
        and f.name in data.columns
        and f.name not in release.protected_columns
        and f.name not in release.withheld
    ]
    if not columns or len(data) < 2:
        return columns, 0
    return columns, int((~data[columns].astype(str).duplicated(keep=False)).sum())


OWN_NAME_MIN_CHARS = 3
"""Shortest identifier value looked for in a record's text (shorter ones are initials or words)."""


def own_identifiers_in_text(dataset: Dataset, release: Release) -> dict[str, int]:
    """Identifier columns that the bundle does not carry in clear (pseudonymized or dropped: the author, the
    document, the direct identifiers), each with how many records' released text names the record's own value
    (a name of the cell, `names_in`, of `OWN_NAME_MIN_CHARS` characters or more, as a whole word). A method that
    leaves the text as it is (the field synthesizers) releases them with the text: a tweet that mentions its
    author's handle undoes the author's pseudonym, a listing's title its host's name."""
    schema = dataset.schema
    text = schema.text
    if text not in release.data.columns or len(release.data) != len(dataset.frame):
        return {}
    released = release.data[text].astype(str).tolist()
    out: dict[str, int] = {}
    for column, treatment in schema.identifiers.items():
        if treatment == "keep" or column not in dataset.frame.columns:
            continue
        hits = 0
        for value, body in zip(dataset.frame[column].tolist(), released):
            if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
                continue
            names = [n for n in names_in(str(value)) if len(n) >= OWN_NAME_MIN_CHARS]
            hits += any(identifier_pattern(n).search(body) for n in names)
        if hits:
            out[str(column)] = hits
    return out


def release_warnings(dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
    """Every warning about this release, in plain words (empty when there is nothing to warn about)."""
    out = [w.rstrip(".") for w in release.warnings]
    unchanged = unchanged_protected_columns(dataset, release)
    if unchanged:
        out.append(
            f"the protected column(s) {', '.join(unchanged)} carry the confidential values unchanged in every "
            "record: this setting protects nothing"
        )
    same = risk_at_unprotected_level(metrics)
    if same:
        labels = ", ".join(metric_info(m).label for m in same)
        out.append(f"the risk equals that of the unprotected data on {labels}: the release is not protected there")
    verbatim = verbatim_warning(dataset)
    if verbatim:
        out.append(verbatim.rstrip("."))
    others, unique = singled_out_by_other_fields(dataset, release)
    if unique:
        named = ", ".join(others[:6]) + (f" and {len(others) - 6:,} more" if len(others) > 6 else "")
        out.append(
            f"the field(s) {named}, released as they are with the role other, single out {unique:,} of "
            f"{len(release.data):,} records: no risk measure assumes an intruder knows them; give the ones an "
            "intruder may know the role key (the risk measures then use them), or leave them out of the data"
        )
    in_text = own_identifiers_in_text(dataset, release)
    if in_text:
        counts = ", ".join(f"{c} in {n:,}" for c, n in in_text.items())
        out.append(
            f"the released text names the record's own identifier, which the bundle pseudonymizes or drops "
            f"({counts} of {len(release.data):,} records): a recipient can link those records to it; protect "
            "the text too (redaction takes out handles and the direct identifiers the schema names) or leave "
            "the text out of the data"
        )
    kept = [c for c, t in dataset.schema.identifiers.items() if t == "keep"]
    if kept:
        out.append(
            f"identifier column(s) {', '.join(kept)} are released in clear (the schema's [release] section keeps "
            "them); pseudonymize or drop them unless the recipients may know who wrote each record"
        )
    return out
