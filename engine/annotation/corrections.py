"""Allow and deny lists learnt from a steward's corrections (issue 51; the lists and how they apply:
`engine.protect.corrections`), and the gain they bring, measured by cross-validation.

From the reviewed records (`Annotations`) and what the detector found in them (`Found`, at any knob value):

- the **allow list**: strings the detector found that the steward removed (a found span overlapping no gold
  span);
- the **deny list**: strings the steward marked with a label that the detector did not find whole (no found span
  covers the gold span), with that label.

A string the steward treated both ways (removed in one record, marked in another) is left off both lists: the
lists hold only what the corrections say without contradiction. A string marked under several labels takes its
most frequent one (ties: the first by name).

`cross_validated` measures the gain without measuring it on the records the lists were learnt from: the
reviewed records in ``k`` folds (the ``i``-th of the review order in fold ``i mod k``), the lists of each fold
learnt on the other folds and applied to its records; the scores before are the detector's own on the same
records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engine.annotation.detectors import Found
from engine.annotation.scores import DetectionScores, score
from engine.annotation.spans import Annotations, RecordAnnotation
from engine.protect.corrections import Corrections, Tiered
from engine.text.detection_quality import Span

FOLDS = 5
"""The cross-validation's folds (fewer when fewer records are reviewed)."""


def learn(
    fingerprint: str, detector: str, records: Sequence[RecordAnnotation], found: Mapping[int, Sequence[Span]]
) -> Corrections:
    """The lists the steward's corrections of ``records`` say (module docstring); ``found``: per record, what the
    detector found in it at any knob value."""
    removed: set[str] = set()
    marked: dict[str, Counter[str]] = {}
    for record in records:
        text, gold, spans = record.text, record.spans, found.get(record.record, ())
        for s, e, _ in spans:
            if not any(g[0] < e and s < g[1] for g in gold):
                removed.add(text[s:e])
        for s, e, label in gold:
            if not any(f[0] <= s and e <= f[1] for f in spans):
                marked.setdefault(text[s:e], Counter())[label] += 1
    gold_strings = {r.text[s:e] for r in records for s, e, _ in r.spans}
    allow = removed - gold_strings
    deny = {
        string: min(labels, key=lambda label: (-labels[label], label))
        for string, labels in marked.items()
        if string not in removed
    }
    return Corrections(fingerprint, detector, tuple(allow), tuple(deny.items()))


def learnt(annotations: Annotations, found: Found) -> Corrections:
    """The lists learnt from every reviewed record of ``annotations`` (what the panel shows and may keep)."""
    at = found.at(None)
    return learn(annotations.fingerprint, annotations.detector, annotations.reviewed(), at)


@dataclass(frozen=True)
class Gain:
    """The detector's scores on the reviewed records before and after the corrections, the after measured by
    cross-validation over ``folds`` folds."""

    folds: int
    before: DetectionScores
    after: DetectionScores


def cross_validated(
    annotations: Annotations,
    found: Found,
    knob: float | None = None,
    by_label: bool = False,
    tier: Callable[[str], float] = lambda _: 0.0,
    folds: int = FOLDS,
) -> Gain:
    """Recall and precision on the reviewed records at ``knob`` (None: every span found) before and after
    corrections learnt on the other folds (module docstring). ValueError when fewer than 2 records are reviewed
    (nothing to learn from and hold out)."""
    records = annotations.reviewed()
    if len(records) < 2:
        raise ValueError(f"cross-validation needs 2 reviewed records or more; {len(records)} reviewed")
    k = max(2, min(folds, len(records)))
    every = {r: list(spans) for r, spans in zip(found.records, found.spans)}
    anywhere = found.at(None)

    def at(spans: Sequence[Tiered]) -> list[Span]:
        return [(s, e, lab) for s, e, lab, t in spans if knob is None or t <= knob]

    before = [at(every.get(r.record, [])) for r in records]
    after: list[list[Span]] = []
    for i, record in enumerate(records):
        train = [r for j, r in enumerate(records) if j % k != i % k]
        lists = learn(annotations.fingerprint, annotations.detector, train, anywhere)
        after.append(at(lists.apply(record.text, every.get(record.record, []), tier)))
    return Gain(k, score(records, before, by_label), score(records, after, by_label))
