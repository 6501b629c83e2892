"""What a steward and a reviewer must be told before a release leaves: the export checks. Each is an
`ExportCheck` declared here (or beside what it checks) and listed once in `engine.export.registry.CHECKS`; their
warnings are what the CLI prints, the dashboard shows, the manifest lists and the report puts at its top. One
home, so all four say the same."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.derived import derived
from engine.data.identifiers_file import names_in
from engine.measures.attacks import WORST_ATTACK
from engine.measures.base import CONFIDENTIAL_SUFFIX, MetricResult, metric_info
from engine.measures.risk.background_attack import SwapTarget
from engine.measures.risk.duplicates import verbatim_warning
from engine.protect.base import Release
from engine.text.names import mentions


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
    """Risk measures whose value on the release equals their value on the unprotected data, where that data shows
    a risk (a risk of 0 on both, or on data whose 95% interval reaches 0, is not a release left unprotected: the
    whole-table linkability of 0.002 [0.000–0.010] on the airline tweets, which redaction leaves as it is)."""
    out = []
    for mid, m in metrics.items():
        if mid.endswith(CONFIDENTIAL_SUFFIX) or mid == WORST_ATTACK or metric_info(mid).kind != "risk":
            continue  # the worst attack is one of the attacks listed already
        base = metrics.get(mid + CONFIDENTIAL_SUFFIX)
        if base is None or m.value is None or base.value is None:
            continue
        info = metric_info(mid)
        if info.better == "lower" and min(base.value, info.high if base.lo is None else base.lo) <= info.low:
            continue  # the unprotected data shows no risk there either: equal is not unprotected
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
        hits = sum(any(mentions(body, n) for n in names) for names, body in zip(_own_names(dataset, column), released))
        if hits:
            out[str(column)] = hits
    return out


def _own_names(dataset: Dataset, column: str) -> list[tuple[str, ...]]:
    """Each record's names in identifier ``column`` that `own_identifiers_in_text` looks for (none if missing),
    read once per dataset (a page checks a release at every knob value)."""
    return derived(
        dataset,
        ("own names", column),
        lambda: [
            ()
            if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))
            else tuple(n for n in names_in(str(value)) if len(n) >= OWN_NAME_MIN_CHARS)
            for value in dataset.frame[column].tolist()
        ],
    )


class ExportCheck(ABC):
    """One check of a release before it leaves. ``id`` names it; `warnings` are its findings in plain words,
    naming no confidential value (they travel in the manifest and the report): counts, column names, what to do."""

    id: ClassVar[str]

    @classmethod
    @abstractmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        """The check's warnings about ``release`` of ``dataset`` measured as ``metrics`` (none: nothing to say)."""


class MethodWarnings(ExportCheck):
    """What the method itself must tell (`Release.warnings`)."""

    id = "method"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        return [w.rstrip(".") for w in release.warnings]


class UnchangedProtectedColumns(ExportCheck):
    """A protected column released with the confidential values in every record."""

    id = "unchanged-protected-columns"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        unchanged = unchanged_protected_columns(dataset, release)
        if not unchanged:
            return []
        return [
            f"the protected column(s) {', '.join(unchanged)} carry the confidential values unchanged in every "
            "record: this setting protects nothing"
        ]


class RiskAtUnprotectedLevel(ExportCheck):
    """A risk measure that reads as on the unprotected data."""

    id = "risk-at-unprotected-level"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        same = risk_at_unprotected_level(metrics)
        if not same:
            return []
        labels = ", ".join(metric_info(m).label for m in same)
        return [f"the risk equals that of the unprotected data on {labels}: the release is not protected there"]


class VerbatimTexts(ExportCheck):
    """Texts the data holds verbatim in several records (`verbatim_warning`)."""

    id = "verbatim-texts"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        verbatim = verbatim_warning(dataset)
        return [verbatim.rstrip(".")] if verbatim else []


class SinglingOutByOtherFields(ExportCheck):
    """Fields of role "other" released as they are that single records out (`singled_out_by_other_fields`)."""

    id = "singled-out-by-other-fields"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        others, unique = singled_out_by_other_fields(dataset, release)
        if not unique:
            return []
        named = ", ".join(others[:6]) + (f" and {len(others) - 6:,} more" if len(others) > 6 else "")
        return [
            f"the field(s) {named}, released as they are with the role other, single out {unique:,} of "
            f"{len(release.data):,} records: no risk measure assumes an intruder knows them; give the ones an "
            "intruder may know the role key (the risk measures then use them), or leave them out of the data"
        ]


class OwnIdentifiersInText(ExportCheck):
    """Released texts that name their record's own pseudonymized or dropped identifier."""

    id = "own-identifiers-in-text"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        in_text = own_identifiers_in_text(dataset, release)
        if not in_text:
            return []
        counts = ", ".join(f"{c} in {n:,}" for c, n in in_text.items())
        return [
            f"the released text names the record's own identifier, which the bundle pseudonymizes or drops "
            f"({counts} of {len(release.data):,} records): a recipient can link those records to it; protect "
            "the text too (redaction takes out handles and the direct identifiers the schema names) or leave "
            "the text out of the data"
        ]


class KeptIdentifiers(ExportCheck):
    """Identifier columns the schema releases in clear."""

    id = "kept-identifiers"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        kept = [c for c, t in dataset.schema.identifiers.items() if t == "keep"]
        if not kept:
            return []
        return [
            f"identifier column(s) {', '.join(kept)} are released in clear (the schema's [release] section keeps "
            "them); pseudonymize or drop them unless the recipients may know who wrote each record"
        ]


def other_text_guarded_only(dataset: Dataset, release: Release) -> list[str]:
    """The free-text columns besides the text (`Schema.other_text`) that the schema asks to protect and the
    method releases without protecting them: only the release guard has replaced their formats and names."""
    schema = dataset.schema
    return [
        c
        for c in schema.other_text
        if c not in schema.dropped_other_text
        and c in release.data.columns
        and c not in release.protected_columns
        and c not in release.withheld
    ]


class OtherTextGuardedOnly(ExportCheck):
    """Other free-text columns the method does not protect, released after the release guard alone."""

    id = "other-text-guarded-only"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        columns = other_text_guarded_only(dataset, release)
        if not columns:
            return []
        return [
            f"the free-text column(s) {', '.join(columns)} besides the text are released after the release guard "
            "alone: it replaced their formats and the names of the identifier columns, but the method protects the "
            "text column only and no measure reads them; redaction protects them with the text, or leave them out "
            '(the schema\'s [release] other_text = "drop")'
        ]


class SwapMissesBackgroundTarget(ExportCheck):
    """A swap release on which the background intruder (`background_document_attack`) still names more than half
    as many of the swapped chunks as she names with the identifiers suppressed and nothing swapped (`SwapTarget`):
    the swap does not reach its target against an attacker it was not built beside (issue 50)."""

    id = "swap-misses-background-target"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        measured = metrics.get("background_document_attack")
        target = None if measured is None else SwapTarget.of(measured.detail)
        if target is None or target.reached:
            return []
        share = metric_info("background_document_attack").format
        return [
            f"{target.statement(share)}. Swapping more categories, a higher rate, releasing passages without their "
            "document link (unit passages) or redaction may be needed"
        ]
