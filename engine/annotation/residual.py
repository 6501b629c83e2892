"""The steward's annotations in the release: where annotations exist for the dataset and the method's detector,
the residual detection risk (`DetectionShare`) is measured on them ("on your 50 annotated records") instead of
the shipped gold, and the release carries the detectors' recall and precision on them (`AnnotatedDetection`),
which the report's "Detection measured on your data" section shows. Only counts and shares go into the
release: never an annotated record, a span or its text."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from engine.annotation.detectors import GUARD, Detector, Found, detector, detector_names
from engine.annotation.scores import ALL, DetectionScores, score
from engine.annotation.spans import Annotations
from engine.annotation.store import load_annotations
from engine.data.dataset import Dataset
from engine.progress import Progress, no_progress
from engine.protect.base import Protector, Release, ReleaseDetail
from engine.protect.detection import DetectionShare

SECTION = "annotated-detection"
_FOUND: dict[tuple, Found] = {}
_KEPT = 16


def found_in(det: Detector, dataset: Dataset, records: Sequence[int], progress: Progress = no_progress) -> Found:
    """What ``det`` finds in ``records`` (`Detector.find`), found once per data, detector, settings and records
    in this process."""
    params = json.dumps(det.protector.params(), sort_keys=True, default=str)
    key = (dataset.fingerprint, det.name, params, tuple(records))
    if key not in _FOUND:
        if len(_FOUND) >= _KEPT:
            _FOUND.pop(next(iter(_FOUND)))
        _FOUND[key] = det.find(dataset, records, progress)
    return _FOUND[key]


def detector_at(det: Detector, knob: float) -> str:
    """The detector as the statement names it: redaction with its level."""
    return f"redaction at level {int(knob)}" if det.name == "redact" else det.title


ENTITY_WORDS = {
    "PERSON": "person names",
    "GPE": "countries, cities and states",
    "LOC": "other places",
    "ORG": "organizations",
    "FAC": "facilities",
    "DATE": "dates",
    "TIME": "times",
    "NORP": "nationalities and religious or political groups",
    "PRODUCT": "products",
    "EVENT": "events",
    "HASHTAG": "#hashtags",
    "STREET_ADDRESS": "street addresses",
}
"""What the entity recognizer's labels and the recognizers' without a guard type name, as a steward reads them."""


def label_words(det: Detector, label: str) -> str:
    """A label as a steward reads it: the tagger's attribute ("occupation"), a swap category as named, an
    identifier in the plural ("@handles", "person names")."""
    if det.name == "kanon":
        from engine.protect.kanon.gold import LABEL_NAMES

        return LABEL_NAMES.get(label, label)
    if det.name == "swap":
        return label
    from engine.protect.guard import TYPE_WORDS

    return TYPE_WORDS[label][1] if label in TYPE_WORDS else ENTITY_WORDS.get(label, label.lower().replace("_", " "))


def measured(
    det: Detector, annotations: Annotations, dataset: Dataset, knob: float, progress: Progress = no_progress
) -> DetectionScores:
    """``det``'s scores at ``knob`` on the reviewed records of ``annotations``."""
    reviewed = annotations.reviewed()
    found = found_in(det, dataset, annotation_records(annotations), progress).at(knob)
    return score(reviewed, [found[a.record] for a in reviewed], det.by_label)


def annotation_records(annotations: Annotations) -> tuple[int, ...]:
    """The records a detector is run on for ``annotations``: the sample, then any reviewed record outside it (the
    same records whether one or all of them are reviewed, so a detector runs once per sample)."""
    extra = sorted(set(annotations.done) - set(annotations.sample))
    return (*annotations.sample, *extra)


@dataclass(frozen=True)
class AnnotatedDetection(ReleaseDetail):
    """A detector's recall and precision on the steward's annotated records at the released knob (``scores``;
    ``detector`` as a sentence names it, ``name`` as `engine.annotation.detectors` does)."""

    detector: str
    scores: DetectionScores
    name: str = ""
    section: ClassVar[str] = SECTION
    block: ClassVar[str] = ""

    def facts(self) -> tuple[tuple[str, str], ...]:
        row = self.scores.get(ALL, "token")
        if row is None or not row.recall.total:
            return ()
        lo, hi = row.recall.interval()
        text = (
            f"{self.detector} finds {row.recall.value:.0%} [{lo:.0%}–{hi:.0%}] of the tokens the steward marked in "
            f"{self.scores.records:,} annotated records of this data (token level)"
        )
        return (("Detection measured on this data", text),)

    def to_dict(self) -> dict[str, object]:
        """Counts only, as the manifest keeps them (`engine.record.manifest`)."""
        return {"name": self.name, "detector": self.detector, "scores": self.scores.to_dict()}

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> AnnotatedDetection:
        return cls(str(entry["detector"]), DetectionScores.from_dict(entry["scores"]), str(entry["name"]))


def replaced_labels(det: Detector, knob: float) -> list[str]:
    """The labels whose spans ``det``'s method replaces at ``knob`` (redaction's up to its level; every label of
    the others)."""
    if det.name != "redact":
        return list(det.labels)
    from engine.text.entities import TIERS

    return [label for label in det.labels if TIERS.get(label, 0) <= knob]


def annotated_shares(
    det: Detector, scores: DetectionScores, knob: float, guarantee: str = ""
) -> tuple[DetectionShare, ...]:
    """One residual detection risk per label the steward annotated: the share of its spans found whole (span
    recall); the labels the method replaces at ``knob`` that no accepted record holds are named as not
    measured."""
    rows = [r for r in scores.rows if r.level == "span" and r.label != ALL and r.recall.total]
    gold = f"your {scores.records:,} annotated records"
    shares = [
        DetectionShare(
            detector=detector_at(det, knob),
            what=label_words(det, r.label),
            gold=gold,
            found=r.recall.hit,
            total=r.recall.total,
            annotated=True,
        )
        for r in rows
    ]
    if shares and guarantee:
        shares[0] = replace(shares[0], guarantee=guarantee)
    marked = {r.label for r in rows}
    unmeasured = tuple(label_words(det, label) for label in replaced_labels(det, knob) if label not in marked)
    if shares and unmeasured:
        shares[-1] = replace(shares[-1], unmeasured=unmeasured)
    return tuple(shares)


def kept_annotations(dataset: Dataset, name: str) -> Annotations | None:
    """The annotations kept for ``dataset`` and detector ``name`` with at least one reviewed record."""
    annotations = load_annotations(dataset.fingerprint, name)
    return annotations if annotations is not None and annotations.done else None


def with_annotations(
    release: Release,
    dataset: Dataset,
    protector: Protector,
    progress: Progress = no_progress,
    recorded: Sequence[AnnotatedDetection] | None = None,
) -> Release:
    """``release`` measured on the steward's annotations of ``dataset`` where there are any (module docstring):
    its own detector's residual detection risk replaced, and an `AnnotatedDetection` per annotated detector.

    ``recorded``: the scores a release record kept (a replay, by `textsdc verify` on a reviewer's machine or
    after the steward annotated more): taken as they are instead of the annotations this machine keeps, so the
    replay gives the bundle's bytes wherever it runs."""
    details = list(release.details)
    added: list[AnnotatedDetection] = []
    if recorded is not None:
        added = list(recorded)
    else:
        for name in detector_names(protector):
            annotations = kept_annotations(dataset, name)
            if annotations is None:
                continue
            det = detector(protector, name)
            scores = measured(det, annotations, dataset, release.knob, progress)
            added.append(AnnotatedDetection(detector_at(det, release.knob), scores, name))
    for found in added:
        if found.name == GUARD:
            continue
        det = detector(protector, found.name)
        shipped = [d for d in details if isinstance(d, DetectionShare)]
        guarantee = next((d.guarantee for d in shipped if d.guarantee), "")
        shares = annotated_shares(det, found.scores, release.knob, guarantee)
        if shares:
            at = next((i for i, d in enumerate(details) if isinstance(d, DetectionShare)), len(details))
            details = [d for d in details if not isinstance(d, DetectionShare)]
            details[at:at] = shares
    if not added:
        return release
    return replace(release, details=(*details, *added))
