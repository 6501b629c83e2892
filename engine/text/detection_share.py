"""What share of a gold set's annotated spans a detector finds, with its Wilson 95% interval (issue 50: residual
detection risk). Where protection depends on finding things in the text, the share it misses is what it leaves
in clear; the methods state it on the gold they are measured on.

A gold span counts as found when every one of its tokens lies in a span the detector found, of a label that
stands for the gold one (``accept``: gold label → the detector labels that find it; any label where it gives
none, as for redaction, whose placeholder hides a span whatever it calls it). A span found in part leaves the
rest in clear, so it is not counted as found.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from engine.intervals import wilson
from engine.text.detection_quality import GoldDocument, Span


def wilson_interval(found: int, total: int) -> tuple[float, float]:
    """The Wilson 95% interval of the share ``found`` / ``total`` (`engine.intervals`). ValueError unless
    0 ≤ found ≤ total and total > 0."""
    if total <= 0:
        raise ValueError(f"a proportion needs 0 ≤ found ≤ total and total > 0; got {found} of {total}")
    return wilson(found, total)


@dataclass(frozen=True)
class Found:
    """How many of ``total`` gold spans a detector found."""

    found: int
    total: int

    @property
    def share(self) -> float:
        return self.found / self.total if self.total else float("nan")

    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.found, self.total) if self.total else (float("nan"), float("nan"))


def spans_found(
    docs: Sequence[GoldDocument],
    detected: Sequence[Sequence[Span]],
    labels: Collection[str],
    accept: Mapping[str, Collection[str]] | None = None,
) -> dict[str, Found]:
    """Per gold label of ``labels``, how many of its spans in ``docs`` the ``detected`` spans (one list per
    document) find (module docstring); a gold span with no token is left out."""
    if len(docs) != len(detected):
        raise ValueError(f"one list of detected spans per gold document: {len(detected)} for {len(docs)}")
    found = dict.fromkeys(labels, 0)
    total = dict.fromkeys(labels, 0)
    for doc, spans in zip(docs, detected):
        for start, end, label in doc.spans:
            if label not in total:
                continue
            tokens = [t for t in doc.tokens if t[0] < end and start < t[1]]
            if not tokens:
                continue
            ok = None if accept is None else accept.get(label, ())
            total[label] += 1
            found[label] += all(
                any(s < t[1] and t[0] < e and (ok is None or lab in ok) for s, e, lab in spans) for t in tokens
            )
    return {label: Found(found[label], total[label]) for label in labels}


def pooled(counts: Mapping[str, Found]) -> Found:
    """The counts of several labels together."""
    return Found(sum(c.found for c in counts.values()), sum(c.total for c in counts.values()))
