"""Residual detection risk (issue 50): where a method's protection depends on finding things in the text
(redaction's identifiers, the k-anonymity tagger's attributes, the swap's entities), each release states what
share of them its detector finds on the gold it is measured on, with its Wilson 95% interval
(`engine.text.detection_share`), and says so where there is no gold for a kind. The manifest records it
(`engine.record.manifest`), the report's facts table states it and the method's page shows it on a card.

The gold is the one the project ships (``assets/gold/privacy-attributes``: English Twitter profile descriptions
and tweets, `engine.protect.kanon.gold`); its labels stand for the methods' kinds as `SHIPPED_KINDS` says.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from engine.protect.base import ReleaseDetail
from engine.protect.kanon.gold import GOLD_DIR, read_posts, read_spans, tokens
from engine.text.detection_quality import GoldDocument
from engine.text.detection_share import Found, wilson_interval

GOLD_NAME = "the shipped gold set (profile descriptions and tweets)"
"""Which gold, in words without a proper noun: a bundle's text holds no word a release replaced in the data
(the airline tweets' redaction replaces "Twitter" as a name), and a statement is written into every bundle."""
NAME = "NAME"
"""The label of the gold's direct identifiers that are a person's name (not a handle, an e-mail address or a
phone number): what a named-entity recognizer's PERSON stands for."""
_NOT_A_NAME = re.compile(r"[@\d]")


@dataclass(frozen=True)
class DetectionShare(ReleaseDetail):
    """``detector`` finds ``found`` of the ``total`` ``what`` annotated in ``gold`` (a span found in part is not
    found); ``parts`` are the same counts per kind (name, found, total); ``guarantee`` is what the method's
    guarantee is over ("k ≥ 5 over the attributes found"); ``unmeasured`` names the kinds the method depends on
    that no gold annotates; ``annotated``: the gold is the steward's own annotated records. ``total`` 0: nothing
    of the method's kinds is measured."""

    detector: str
    what: str
    gold: str
    found: int
    total: int
    parts: tuple[tuple[str, int, int], ...] = ()
    guarantee: str = ""
    unmeasured: tuple[str, ...] = ()
    annotated: bool = False
    """Measured on the steward's own annotated records (`engine.annotation`) rather than on shipped gold."""
    section: ClassVar[str] = "facts"
    block: ClassVar[str] = "detection"  # the Protect page's own cards (`dashboard.views.protect`), not a caption

    @property
    def measured(self) -> bool:
        return self.total > 0

    @property
    def share(self) -> float:
        return Found(self.found, self.total).share

    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.found, self.total) if self.total else (float("nan"), float("nan"))

    def estimate(self) -> str:
        """The share and its interval as a card shows them: "55% [50–60%]"."""
        lo, hi = self.interval()
        return f"{self.share:.0%} [{lo * 100:.0f}–{hi:.0%}]" if self.measured else "not measured"

    def describe(self) -> str:
        """The statement in words."""
        said = [self.guarantee] if self.guarantee else []
        if self.measured:
            said.append(
                f"{self.detector} finds an estimated {self.estimate()} of {self.what} in texts like those of its "
                f"gold: {self.found:,} of {self.total:,} in {self.gold}, a value found in part counted as missed"
                if not self.annotated
                else f"{self.detector} finds an estimated {self.estimate()} of {self.what} in this data: "
                f"{self.found:,} of {self.total:,} in {self.gold}, a value found in part counted as missed"
            )
            weakest = min(self.parts, key=lambda p: p[1] / p[2], default=None) if len(self.parts) > 1 else None
            if weakest is not None:
                said.append(f"fewest found: {weakest[0]}, {weakest[1] / weakest[2]:.0%} of {weakest[2]:,}")
        missing = [*([] if self.measured else [self.what]), *self.unmeasured]
        if missing:
            said.append(
                f"not measured: {self.gold} hold none of {', '.join(missing)}"
                if self.annotated
                else f"not measured: no gold for {', '.join(missing)}"
            )
        return "; ".join(said) + "."

    def facts(self) -> tuple[tuple[str, str], ...]:
        return (("Residual detection risk", self.describe()),)


def shipped_gold(ids: Sequence[str] | None = None) -> list[GoldDocument]:
    """The shipped gold set's posts (``ids`` of them, default all, in id order) as gold documents, their first
    pass's spans and tokens (`engine.protect.kanon.gold`); a direct identifier that is a person's name is
    labelled `NAME`."""
    posts = read_posts(GOLD_DIR)
    spans = read_spans(GOLD_DIR / "annotations.jsonl", posts)
    out = []
    for i in sorted(posts) if ids is None else ids:
        text = posts[i].text
        labelled = tuple(
            (s, e, NAME if label == "DI" and not _NOT_A_NAME.search(text[s:e]) else label) for s, e, label in spans[i]
        )
        out.append(GoldDocument(text, labelled, tuple(tokens(text))))
    return out


@lru_cache(maxsize=1)
def gold_size() -> int:
    """How many posts the shipped gold set holds."""
    return len(read_posts(GOLD_DIR))


@lru_cache(maxsize=1)
def gold_digest() -> str:
    """A digest of the shipped gold's posts and spans (part of what a cached measurement is keyed by)."""
    digest = hashlib.sha256()
    for name in ("posts.jsonl", "annotations.jsonl"):
        digest.update((GOLD_DIR / name).read_bytes())
    return digest.hexdigest()
