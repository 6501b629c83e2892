"""What a release claims, for anyone to check on the bundle (`textsdc verify`, or an outside tool such as pycanon):
a public table is k-anonymous (and ℓ-diverse, t-close when asked) over every column but the one that marks its
suppressed rows and the sensitive one (`AnonymityClaim`); a differentially private release spends ε over a
vocabulary that ε covers or not (`EpsilonClaim`). The manifest records the claims (`engine.record.manifest`);
the report's facts table and the method's page state them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.protect.base import ReleaseDetail


@dataclass(frozen=True)
class AnonymityClaim(ReleaseDetail):
    """``table`` (a file of the bundle) is ``k``-anonymous over its ``quasi_identifiers``, its rows whose
    ``suppressed`` column is true set aside (every cell "*"); with ``ell`` and ``t``, every class is distinct
    ℓ-diverse in ``sensitive`` and t-close (equal distance) to the records kept. ``attributes`` say how each
    column is released; ``separate`` are tables of values per class (``class_column``), linked to no record."""

    table: str
    quasi_identifiers: tuple[str, ...]
    k: int
    suppressed: str | None = None
    sensitive: str | None = None
    ell: int | None = None
    t: float | None = None
    attributes: tuple[tuple[str, str], ...] = ()
    separate: tuple[str, ...] = ()
    class_column: str | None = None
    section: ClassVar[str] = "facts"
    block: ClassVar[str] = "caption"

    def __post_init__(self) -> None:
        # in the order of the column names, as a manifest (JSON, sorted keys) gives them back
        object.__setattr__(self, "attributes", tuple(sorted(self.attributes)))

    def describe(self) -> str:
        """The claim in words."""
        also = [f"distinct {self.ell}-diverse" if self.ell else "", f"{self.t:g}-close" if self.t else ""]
        also = [a for a in also if a]
        said = f"{self.table} is {self.k}-anonymous{''.join(', ' + a for a in also)}"
        said += f" over its columns {', '.join(self.quasi_identifiers)}"
        if self.sensitive and also:
            said += f" in {self.sensitive}"
        if self.suppressed:
            said += f", the records marked {self.suppressed} set aside"
        if self.separate:
            held = "holds" if len(self.separate) == 1 else "hold"
            said += f"; {', '.join(self.separate)} {held} values per class, linked to no record"
        return said + "."

    def facts(self) -> tuple[tuple[str, str], ...]:
        return (("Claim", self.describe()),)


def epsilon_text(value: float) -> str:
    """ε as a person reads it: 4 significant digits, no trailing zeros (1, 0.75, 1,000)."""
    return f"{value:,.4g}"


@dataclass(frozen=True)
class EpsilonClaim(ReleaseDetail):
    """A differentially private release spends ``epsilon`` over a vocabulary: ``vocabulary`` "public" (a word list
    fixed before the data was seen, ``source``, of ``words`` words whose SHA-256 over the words one a line is
    ``digest``: ε covers the released counts) or "data" (the data's own words: ε does not cover which words
    occur, and no digest is kept, the words being confidential). ``covers_vocabulary`` is what the release says
    of it; `textsdc verify` checks it against the vocabulary and, for a public one, the digest against the word
    list installed where it runs. The method's guarantee states it in words (a `Statement`), so this detail shows
    nothing itself."""

    epsilon: float
    vocabulary: str
    covers_vocabulary: bool
    source: str
    words: int
    digest: str | None = None

    def describe(self) -> str:
        """The claim in words."""
        if self.covers_vocabulary:
            return (
                f"ε = {self.epsilon:,g} covers the released counts over a vocabulary fixed before the data was seen "
                f"({self.source}, {self.words:,} words)"
            )
        return (
            f"ε = {self.epsilon:,g} covers the released counts given the vocabulary, not the vocabulary itself "
            f"({self.source}, {self.words:,} words)"
        )
