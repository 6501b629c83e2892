"""The span model of a steward's annotations: per record of the data, its text and the spans (start, end,
label) marked in it, character offsets into the text, end exclusive, none overlapping."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from engine.errors import DataError
from engine.text.detection_quality import Span

LABEL_CHARACTERS = "no whitespace"


def trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """``start`` and ``end`` moved inwards past whitespace: a span starts and ends on a character of its value."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def checked_spans(text: str, spans: Iterable[Sequence], where: str, labels: Sequence[str] = ()) -> tuple[Span, ...]:
    """``spans`` as sorted (start, end, label) tuples of ``text``, trimmed of whitespace at their ends; DataError naming ``where`` and the span when one
    lies outside the text, is empty, overlaps another, has a label with whitespace or, when ``labels`` are given,
    a label not among them."""
    out: list[Span] = []
    for raw in spans:
        try:
            start, end, label = int(raw[0]), int(raw[1]), str(raw[2])
        except (IndexError, TypeError, ValueError):
            raise DataError(f"{where}: span {raw!r} is not [start, end, label]") from None
        if not 0 <= start < end <= len(text):
            raise DataError(
                f"{where}: span [{start}, {end}, {label}] does not lie within its text of {len(text)} characters "
                "(0 ≤ start < end ≤ length)"
            )
        if not text[start:end].strip():
            raise DataError(f"{where}: span [{start}, {end}, {label}] holds only whitespace")
        start, end = trimmed(text, start, end)
        if not label or any(c.isspace() for c in label):
            raise DataError(f"{where}: label {label!r} is not accepted; a label is one word ({LABEL_CHARACTERS})")
        if labels and label not in labels:
            raise DataError(f"{where}: label {label!r} is not accepted; accepted: {', '.join(labels)}")
        out.append((start, end, label))
    out.sort()
    for (s1, e1, l1), (s2, e2, l2) in zip(out, out[1:]):
        if s2 < e1:
            raise DataError(f"{where}: spans [{s1}, {e1}, {l1}] and [{s2}, {e2}, {l2}] overlap")
    return tuple(out)


@dataclass(frozen=True)
class RecordAnnotation:
    """The spans the steward marked in one record's text (``record``: its position in the data)."""

    record: int
    text: str
    spans: tuple[Span, ...]


@dataclass(frozen=True)
class Annotations:
    """A steward's annotations of one dataset (``fingerprint``) for one detector (``detector``, e.g. "redact" or
    "guard"): the ``sample`` of records drawn (in the order shown) and the records reviewed so far (``done``,
    by record). Only reviewed records are gold: a record still showing the detector's spans is not."""

    fingerprint: str
    detector: str
    sample: tuple[int, ...]
    done: Mapping[int, RecordAnnotation] = field(default_factory=dict)

    def with_record(self, annotation: RecordAnnotation) -> Annotations:
        """These annotations with ``annotation`` reviewed (replacing what the record had)."""
        return Annotations(self.fingerprint, self.detector, self.sample, {**self.done, annotation.record: annotation})

    def without_record(self, record: int) -> Annotations:
        return Annotations(
            self.fingerprint, self.detector, self.sample, {r: a for r, a in self.done.items() if r != record}
        )

    def reviewed(self) -> list[RecordAnnotation]:
        """The reviewed records, in the order of the sample (any reviewed outside it after them)."""
        order = {r: i for i, r in enumerate(self.sample)}
        return sorted(self.done.values(), key=lambda a: (order.get(a.record, len(order)), a.record))

    def digest(self) -> str:
        """A digest of the reviewed records' spans (what a measurement on them is keyed by)."""
        payload = [[a.record, a.text, [list(s) for s in a.spans]] for a in self.reviewed()]
        return hashlib.sha256(json.dumps([self.fingerprint, self.detector, payload]).encode()).hexdigest()
