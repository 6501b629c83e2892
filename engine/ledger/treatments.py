"""What a release did to each column, in the ledger's six words, derived from how the release record describes
the column (`engine.record.columns`) and what the method that protected it declares (`Protector.protects_by`). One home: the ledger's entries, its
checks and the Export page read treatments from here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from engine.errors import DataError
from engine.protect import METHODS
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


def method_treatment(method: str) -> Treatment:
    """What ``method`` does to the columns it protects (its declared `Protector.protects_by`); DataError for a
    method that is not registered here."""
    cls = METHODS.get(method)
    if cls is None:
        raise DataError(
            f"the release ledger cannot tell what the method '{method}' does to the columns it protects: it is not "
            f"registered here; the methods are {', '.join(sorted(METHODS))}"
        )
    return cls.protects_by


def treatment_of(described: str, method: str) -> Treatment:
    """The treatment of a column the record describes as ``described`` in a release made by ``method``."""
    if described == PROTECTED:
        return method_treatment(method)
    try:
        return _DESCRIBED[described]
    except KeyError:
        raise DataError(f"the release ledger does not know the column treatment {described!r}") from None


def treatments(columns: Mapping[str, str], method: str) -> dict[str, Treatment]:
    """Every column of a release record (`ReleaseRecord.columns`) with its treatment."""
    return {str(c): treatment_of(d, method) for c, d in columns.items()}


def protection_rank(treatment: str) -> int:
    """Where ``treatment`` stands from in clear (0) to dropped (5); DataError for another word."""
    try:
        return TREATMENTS.index(treatment)  # type: ignore[arg-type]
    except ValueError:
        raise DataError(
            f"{treatment!r} is not a column treatment the ledger knows; it knows {', '.join(TREATMENTS)}"
        ) from None
