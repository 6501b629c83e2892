"""What a release did to each column, in the ledger's six words, derived from how the release record describes
the column (`engine.record.columns`) and what the method that protected it declares (`Protector.protects_by`). One home: the ledger's entries, its
checks and the Export page read treatments from here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from engine.errors import DataError
from engine.protect import METHODS
from engine.protect.base import Protector
from engine.protect.plan import is_plan
from engine.record.columns import (
    AS_IS,
    GUARDED,
    OTHER_TEXT_DROPPED,
    OTHER_TEXT_GUARDED,
    PROTECTED,
    TREATMENT_TEXT,
    WITHHELD,
)

Treatment = Literal["in clear", "pseudonymised", "redacted", "generalised", "synthesized", "dropped"]
"""From least to most protected: the order `protection_rank` reads."""
TREATMENTS: tuple[Treatment, ...] = get_args(Treatment)

_DESCRIBED: Mapping[str, Treatment] = {
    AS_IS: "in clear",
    GUARDED: "in clear",  # the release guard replaced formats and identifier names only
    OTHER_TEXT_GUARDED: "in clear",
    WITHHELD: "dropped",
    OTHER_TEXT_DROPPED: "dropped",
    TREATMENT_TEXT["pseudonymize"]: "pseudonymised",
    TREATMENT_TEXT["drop"]: "dropped",
    TREATMENT_TEXT["keep"]: "in clear",
}


def _registered(method: str) -> type[Protector]:
    cls = METHODS.get(method)
    if cls is None:
        raise DataError(
            f"the release ledger cannot tell what the method '{method}' does to the columns it protects: it is not "
            f"registered here; the methods are {', '.join(sorted(METHODS))}, or plans of them joined by '+'"
        )
    return cls


def method_treatment(method: str, text: bool = True) -> Treatment:
    """What ``method`` does to the columns it protects (its declared `Protector.protects_by`); DataError for a
    method that is not registered here. Of a plan (``redact+glm``), what its steps that change that kind of
    column (``text``: the text column, else a structured field; `Protector.changes`) do, the most protective
    of them; the last step's where no step changes that kind."""
    steps = [_registered(m) for m in method.split("+")] if is_plan(method) else [_registered(method)]
    kind = "text" if text else "fields"
    doing = [cls.protects_by for cls in steps if cls.changes == kind] or [steps[-1].protects_by]
    return max(doing, key=protection_rank)


def treatment_of(described: str, method: str, text: bool = True) -> Treatment:
    """The treatment of a column the record describes as ``described`` in a release made by ``method``
    (``text``: whether it is the data's text column, which tells a plan's steps apart)."""
    if described == PROTECTED:
        return method_treatment(method, text)
    try:
        return _DESCRIBED[described]
    except KeyError:
        raise DataError(f"the release ledger does not know the column treatment {described!r}") from None


def treatments(columns: Mapping[str, str], method: str, text_column: str | None = None) -> dict[str, Treatment]:
    """Every column of a release record (`ReleaseRecord.columns`) with its treatment; ``text_column`` is the
    data's text column."""
    return {str(c): treatment_of(d, method, str(c) == text_column) for c, d in columns.items()}


def protection_rank(treatment: str) -> int:
    """Where ``treatment`` stands from in clear (0) to dropped (5); DataError for another word."""
    try:
        return TREATMENTS.index(treatment)  # type: ignore[arg-type]
    except ValueError:
        raise DataError(
            f"{treatment!r} is not a column treatment the ledger knows; it knows {', '.join(TREATMENTS)}"
        ) from None
