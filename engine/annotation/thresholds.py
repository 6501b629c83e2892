"""Precision and recall per entity type against the steward's annotated records, as a type's confidence threshold
moves (issue 51): the curve a steward sets a threshold on, and the thresholds she keeps.

Which detectors score what they find:

- **redaction's format recognizers** give each span a confidence (`engine.text.recognizers`: what its validator
  proves, raised by context words); a span is replaced when its confidence reaches its type's threshold (the
  method parameter ``thresholds``). Each type's curve has one point per distinct confidence its candidates have
  in the sample (a threshold between two of them keeps what the higher one keeps), and one more where the
  threshold is above them all (none of that type found), when that is at most 1.
- **spaCy's small English model** scores no single entity: every one counts at `NER_CONFIDENCE`, so a type only
  spaCy finds has one point (a threshold above that confidence leaves the type out, a point too).
- **the swap's entity recognizer, the k-anonymity tagger and the release guard** have no threshold a steward
  sets (the tagger's CRF labels tokens; its marginals are not used): one point per type, at their settings.

Each point is redaction as it runs with that type's threshold there and every other setting as it is (the
other types' thresholds, the kept corrections, the recurrence that makes it consistent across the sample), at
the knob's level, scored at the token level (`engine.annotation.scores`): recall of the type is the share of the
tokens the steward marked with it that are replaced (under any label), precision the share of the tokens found
under it that she marked, each with its Wilson 95% interval.

A steward keeps thresholds by setting redaction's ``thresholds`` parameter (`kept_thresholds`): the manifest
records it and the replay command carries it, so a replay reproduces them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.annotation.detectors import Detector, Found
from engine.annotation.residual import annotation_records, found_in, replaced_labels
from engine.annotation.scores import Share, score
from engine.annotation.spans import Annotations
from engine.data.dataset import Dataset
from engine.progress import Progress, no_progress
from engine.protect import get_protector
from engine.text.entities import NER_CONFIDENCE, NER_TIERS, thresholds_for
from engine.text.recognizers import RECOGNIZERS, recognize

THRESHOLDS = "thresholds"
"""Redaction's parameter of per-type confidence thresholds (TYPE=VALUE entries)."""
_CURVES: dict[tuple, tuple[TypeCurve, ...]] = {}
_KEPT = 8
_VARIANTS: dict[tuple, Found] = {}
_KEPT_VARIANTS = 64


@dataclass(frozen=True)
class CurvePoint:
    """Recall and precision of one type when its threshold is ``threshold``."""

    threshold: float
    recall: Share
    precision: Share


@dataclass(frozen=True)
class TypeCurve:
    """One type's precision–recall points by rising threshold; ``scored``: whether the detector scores its spans
    (else one point, or two for spaCy's: found or left out); ``current``: the threshold it runs with now (None
    where the detector has none); ``why``: in words, where its points come from."""

    label: str
    points: tuple[CurvePoint, ...]
    scored: bool
    current: float | None
    why: str

    def at(self, threshold: float) -> CurvePoint:
        """The point a threshold of ``threshold`` gives: the lowest point at or above it (a threshold between two
        confidences keeps what the higher one keeps); the last point when it is above them all."""
        return next((p for p in self.points if p.threshold >= threshold - 1e-12), self.points[-1])


def _levels(confidences: set[float]) -> list[float]:
    """The thresholds that give distinct results: each confidence, and just above the highest when that is
    below 1 (as 1.0, which keeps no span of a confidence below it)."""
    levels = sorted(confidences)
    if not levels or levels[-1] < 1.0:
        levels.append(1.0)
    return levels


def _variant_found(det: Detector, dataset: Dataset, records: Sequence[int]) -> Found:
    """What ``det`` finds in ``records``, kept per data, settings and records in this process (`_VARIANTS` of
    them): a steward accepting one more record rescores them, without finding again."""
    key = (dataset.fingerprint, json.dumps(det.protector.params(), sort_keys=True, default=str), tuple(records))
    if key not in _VARIANTS:
        if len(_VARIANTS) >= _KEPT_VARIANTS:
            _VARIANTS.pop(next(iter(_VARIANTS)))
        _VARIANTS[key] = det.find(dataset, records)
    return _VARIANTS[key]


def _why(label: str, use_ner: bool) -> tuple[bool, str]:
    pattern, ner = label in RECOGNIZERS, use_ner and label in NER_TIERS
    if pattern and ner:
        return True, f"format matches scored 0.2–1 and spaCy's entities, all at {NER_CONFIDENCE}"
    if pattern:
        return True, "format matches scored 0.2–1 by their validator and context words"
    if ner:
        return False, f"spaCy scores no entity: all at {NER_CONFIDENCE}, so one point and the type left out"
    return False, "not found at this setting"


def _redaction_curves(
    det: Detector, dataset: Dataset, annotations: Annotations, knob: float, progress: Progress
) -> tuple[TypeCurve, ...]:
    records = annotation_records(annotations)
    reviewed = annotations.reviewed()
    params = det.protector.params()
    use_ner = bool(params.get("use_ner", True))
    overrides = det.protector.threshold_overrides()  # type: ignore[attr-defined]
    current = thresholds_for(overrides)
    texts = dataset.texts.fillna("").astype(str)
    confidences: dict[str, set[float]] = {}
    for r in records:
        for _, _, label, confidence in recognize(str(texts.iloc[r])):
            confidences.setdefault(label, set()).add(round(confidence, 6))
    if use_ner:
        for label in NER_TIERS:
            confidences.setdefault(label, set()).add(NER_CONFIDENCE)
    marked = {lab for a in reviewed for _, _, lab in a.spans}
    curves = []
    for label in replaced_labels(det, knob):
        if label not in confidences and label not in marked:
            continue
        points = []
        for level in _levels(confidences.get(label, set())):
            entries = [f"{k}={v:g}" for k, v in sorted({**overrides, label: level}.items())]
            variant = get_protector(det.protector.name, **{**params, THRESHOLDS: tuple(entries)})
            found = _variant_found(Detector(det.name, det.title, det.labels, det.by_label, variant), dataset, records)
            at = found.at(knob)
            row = score(reviewed, [at[a.record] for a in reviewed], det.by_label).get(label, "token")
            empty = Share(0, 0)
            points.append(CurvePoint(level, row.recall if row else empty, row.precision if row else empty))
        if not any(p.recall.total or p.precision.total for p in points):
            continue  # found only in records not reviewed yet: nothing to draw
        scored, why = _why(label, use_ner)
        curves.append(TypeCurve(label, tuple(points), scored, current[label], why))
    return tuple(curves)


def type_curves(
    det: Detector,
    dataset: Dataset,
    annotations: Annotations,
    knob: float,
    progress: Progress = no_progress,
) -> tuple[TypeCurve, ...]:
    """Per type the detector replaces at ``knob`` that the steward marked or it finds in the reviewed records of
    ``annotations`` (at some threshold), its precision–recall points on them (module docstring). ValueError when
    none is reviewed."""
    reviewed = annotations.reviewed()
    if not reviewed:
        raise ValueError("precision and recall per type need 1 reviewed record or more; none reviewed")
    if det.name == "redact":
        params = json.dumps(det.protector.params(), sort_keys=True, default=str)
        key = (dataset.fingerprint, params, annotations.sample, annotations.digest(), knob)
        if key not in _CURVES:
            if len(_CURVES) >= _KEPT:
                _CURVES.pop(next(iter(_CURVES)))
            _CURVES[key] = _redaction_curves(det, dataset, annotations, knob, progress)
        return _CURVES[key]
    found: Found = found_in(det, dataset, annotation_records(annotations), progress)
    at = found.at(knob)
    scores = score(reviewed, [at[a.record] for a in reviewed], det.by_label)
    why = f"{det.title} has no score per span nor a threshold: one point at its settings"
    curves = []
    for label in det.labels:
        row = scores.get(label, "token")
        if row is None:
            continue
        curves.append(TypeCurve(label, (CurvePoint(0.0, row.recall, row.precision),), False, None, why))
    return tuple(curves)


def kept_thresholds(current: Sequence[str], chosen: Mapping[str, float]) -> tuple[str, ...]:
    """Redaction's ``thresholds`` parameter with ``chosen`` ({type: threshold}) over the ``current`` entries
    (TYPE=VALUE), sorted by type; a threshold equal to its type's default is left out. ConfigError on an unknown
    type or a threshold outside [0, 1]."""
    given: dict[str, float] = {}
    for entry in current:
        label, _, value = entry.partition("=")
        given[label.strip().upper()] = float(value)
    merged = {**given, **{k: float(v) for k, v in chosen.items()}}
    defaults = thresholds_for()
    thresholds_for(merged)  # names an unknown type or a threshold outside [0, 1]
    return tuple(f"{k}={v:g}" for k, v in sorted(merged.items()) if v != defaults[k])
