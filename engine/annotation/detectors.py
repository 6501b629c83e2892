"""The detectors a steward's annotations are scored against, one per method whose protection depends on finding
things in the text (`Protector.detects`) and the release guard that runs after every method, each with the
method's current settings.

A detector is run on the sample's records alone (a dataset of those records): what redaction and the tagger make
consistent across the texts (an original found once, replaced at every occurrence) is made consistent across the
sample, not the whole data, so a name found only in a record outside the sample is not carried into it. What it
finds is kept with the knob value from which it is replaced (redaction's level; the other detectors find the same
at every knob value), so a knob move only filters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.progress import Progress, no_progress
from engine.protect.base import Protector
from engine.protect.corrections import GUARD_DETECTOR, KEPT, Corrections, Tiered, corrected, kept_corrections
from engine.protect.guard import Guard
from engine.protect.params import CORRECTIONS, GUARD_OFF, GUARD_TYPES
from engine.text.detection_quality import Span

GUARD = GUARD_DETECTOR
"""The name of the release guard's detector (the methods' detectors are named as their method)."""


@dataclass(frozen=True)
class Found:
    """What a detector finds in each record of a sample (in the sample's order)."""

    detector: str
    records: tuple[int, ...]
    spans: tuple[tuple[Tiered, ...], ...]

    def at(self, knob: float | None = None) -> dict[int, list[Span]]:
        """Per record, the spans replaced at ``knob`` (None: every span found at any knob value)."""
        return {
            r: [(s, e, lab) for s, e, lab, _ in _disjoint([t for t in spans if knob is None or t[3] <= knob])]
            for r, spans in zip(self.records, self.spans)
        }


@dataclass(frozen=True)
class Detector:
    """A detector: its ``name``, how a sentence names it (``title``), the ``labels`` it finds (and a steward
    annotates with), whether they matter to its protection (``by_label``) and the protector whose settings it
    runs with."""

    name: str
    title: str
    labels: tuple[str, ...]
    by_label: bool
    protector: Protector

    def find(self, dataset: Dataset, records: Sequence[int], progress: Progress = no_progress) -> Found:
        """What the detector finds in ``records`` of ``dataset`` (module docstring)."""
        n = dataset.n_records
        bad = [r for r in records if not 0 <= r < n]
        if bad:
            raise ConfigError(f"record {bad[0]} is not in the data; accepted: 0 to {n - 1}")
        sample = replace(dataset, frame=dataset.frame.iloc[list(records)].reset_index(drop=True))
        texts = sample.texts.fillna("").astype(str).tolist()
        found: list[list[Tiered]] = [[] for _ in records]
        if self.name == GUARD:
            params = self.protector.params()
            kept = kept_corrections(dataset.fingerprint, GUARD) if params.get(CORRECTIONS.name) == KEPT else None
            guard = Guard.prepare(dataset, params.get(GUARD_OFF.name, ()), _identifiers(self), kept)
            for k, text in enumerate(texts):
                found[k] = [(s, e, lab, 0.0) for s, e, lab in guard.spans(text)]
        elif self.name == "redact":
            from engine.protect.redact import Redaction

            assert isinstance(self.protector, Redaction)
            spans = self.protector.find_spans(sample, progress, corrections_of=dataset)
            spans = spans[spans["record"] < len(records)]  # the text's (its other free-text columns' after)
            for r, s, e, lab, tier in spans[["record", "start", "end", "label", "tier"]].itertuples(index=False):
                found[int(r)].append((int(s), int(e), str(lab), float(tier)))
        elif self.name == "swap":
            from engine.protect.swap.entities import CATEGORIES, chunk_entities

            categories = {c: CATEGORIES[c] for c in self.labels}
            mentions = chunk_entities(texts, categories, progress, corrections=self._kept(dataset)).mentions
            for k, s, e, category in mentions[["chunk", "start", "end", "category"]].itertuples(index=False):
                found[int(k)].append((int(s), int(e), str(category), 0.0))
        elif self.name == "kanon":
            from engine.protect.kanon.sanitize import propagate
            from engine.protect.kanon.tagger import default_tagger

            # the packaged tagger whatever kanon's ``tagger``: a retrained one learnt from these very records, so
            # its scores on them would be in-sample (its gain is measured out of sample: `retrain`)
            tagged = propagate(texts, default_tagger().tag(texts, progress))
            for k, spans in enumerate(corrected(texts, tagged, self._kept(dataset))):
                found[k] = [(s, e, lab, 0.0) for s, e, lab in spans]
        else:
            raise ConfigError(f"no detector {self.name!r}; accepted: {', '.join(detector_names(self.protector))}")
        return Found(self.name, tuple(int(r) for r in records), tuple(tuple(sorted(f)) for f in found))

    def _kept(self, dataset: Dataset) -> Corrections | None:
        """The kept lists of this detector when its method runs with them (``corrections`` "kept")."""
        if self.protector.params().get(CORRECTIONS.name) != KEPT:
            return None
        return kept_corrections(dataset.fingerprint, self.name)


def _identifiers(detector: Detector) -> str | None:
    value = getattr(detector.protector, "identifiers", None)
    return value if isinstance(value, str) else None


def _disjoint(spans: list[Tiered]) -> list[Tiered]:
    """``spans`` sorted, the outermost kept where two overlap (the first, the longest there, then the lowest
    tier), as a release applies them."""
    out: list[Tiered] = []
    for span in sorted(spans, key=lambda t: (t[0], -(t[1] - t[0]), t[3])):
        if not out or span[0] >= out[-1][1]:
            out.append(span)
    return out


def detector_names(protector: Protector) -> list[str]:
    """The detectors a steward may annotate for with ``protector``'s method: its own when it has one
    (`Protector.detects`), and the release guard."""
    return [*([protector.name] if protector.detects else []), GUARD]


def detector(protector: Protector, name: str | None = None) -> Detector:
    """The detector ``name`` (default: the method's own, else the guard) with ``protector``'s settings."""
    names = detector_names(protector)
    name = name or names[0]
    if name not in names:
        raise ConfigError(f"the {protector.name} method has no detector {name!r}; accepted: {', '.join(names)}")
    if name == GUARD:
        return Detector(GUARD, "the release guard", GUARD_TYPES, False, protector)
    if name == "redact":
        from engine.text.entities import TIERS

        return Detector(name, "redaction", tuple(TIERS), False, protector)
    if name == "swap":
        labels = tuple(dict.fromkeys([*getattr(protector, "swap", ()), *getattr(protector, "change", ())]))
        return Detector(name, "the entity recognizer", labels, True, protector)
    if name == "kanon":
        from engine.protect.kanon.gold import LABELS

        return Detector(name, "the tagger", LABELS, True, protector)
    raise ConfigError(f"the {protector.name} method's detector is not one a steward can annotate for yet")
