"""Identifier redaction of the text column (and of the other free-text columns the schema asks to protect,
`Schema.other_text`), with the redaction level as the knob.

Ororbia, Linder & Snoke redact @handles and #hashtags (Section 2.1); we extend that to cumulative tiers:
level 0 replaces nothing; 1 handles, hashtags, URLs, e-mail and street addresses, phone, card, IBAN and social
security numbers, IP addresses; 2 adds person names; 3 places, organizations and facilities; 4 dates, times,
nationalities/religious/political groups, products and events. Entities come from spaCy's English model;
identifiers with a format from validated recognizers (`engine.text.recognizers`), each type kept above its own
confidence threshold (the ``thresholds`` parameter). Redaction is consistent (`engine.text.recurrence`): the
author column's names are identifiers in the text too, and so are the strings of an identifiers file beside
the data (company names, tickers, executives) and the names in the data's direct-identifier columns (a call's
participants); an original replaced once is replaced at every whole-word occurrence, and each becomes a
placeholder numbered within its document, ``[PERSON_1]``, the same original always the same placeholder there.
With the common parameter ``corrections`` "kept", what the detectors find is corrected by the allow and deny
lists the steward kept for redaction (`engine.protect.corrections`) before it is made consistent: an allowed
string is not replaced, a denied one is, from its type's level.

`fit` finds every span once (the expensive step); `release(level)` only substitutes the spans whose tier is at
most the level, so moving the slider costs a string rebuild.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.identifiers_file import column_identifiers, identifiers_digest, identifiers_path, read_identifiers
from engine.errors import ConfigError
from engine.progress import Progress, no_progress
from engine.protect.base import CheckReport, Fitted, GoldCheck, Knob, Protector, Release, Statement
from engine.protect.corrections import KEPT, Corrections, KeptCorrections, corrections_in_use, kept_corrections
from engine.protect.detection import GOLD_NAME, NAME, DetectionShare, gold_digest, gold_size, shipped_gold
from engine.protect.params import Param
from engine.store import stored
from engine.text.detection_quality import evaluate_detection, found_spans, read_gold, spans_at
from engine.text.detection_share import Found, pooled, spans_found
from engine.text.entities import (
    LEVEL_NAMES,
    SPACY_MODEL,
    SPAN_COLUMNS,
    TIERS,
    find_identifiers,
    spacy_model_version,
    thresholds_for,
)
from engine.text.recognizers import recognizers_version
from engine.text.recurrence import author_name_spans, listed_spans, number_placeholders, outermost, propagate

REDACTION_KNOB = Knob(
    name="level",
    symbol="level",
    label="Redaction level",
    low=0,
    high=4,
    default=1,
    scale="linear",
    integer=True,
    more_privacy="higher",
    grid=(0, 1, 2, 3, 4),
    help="; ".join(f"{k}: {v}" for k, v in LEVEL_NAMES.items()),
)

CHANGE_COLUMNS = ["record", "column", "start", "end", "original", "replacement", "label"]


def apply_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """Replace each (start, end, replacement) span of ``text`` (sorted, non-overlapping) by its replacement."""
    out, pos = [], 0
    for start, end, replacement in spans:
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


GOLD_KINDS: dict[str, tuple[int, tuple[str, ...]]] = {
    "direct identifiers (names, handles, e-mail addresses, phone numbers)": (1, ("DI", NAME)),
    "places": (3, ("QIREGION",)),
}
"""The kinds of the shipped gold redaction is measured on: the level from which it replaces them and the gold
labels that annotate them."""
UNMEASURED: dict[int, tuple[str, ...]] = {
    1: ("URLs", "street addresses", "card, IBAN and social security numbers", "IP addresses"),
    3: ("organizations", "facilities"),
    4: ("dates and times", "nationalities and religious or political groups", "products", "events"),
}
"""What a level adds that the shipped gold does not annotate."""


def corrected_spans(texts: list[str], spans: pd.DataFrame, corrections: Corrections) -> pd.DataFrame:
    """``spans`` (`find_identifiers`' rows) of ``texts`` corrected by the kept lists: a denied string is
    replaced from its type's level (`TIERS`)."""
    by_record = {int(r): g for r, g in spans.groupby("record")}
    rows = []
    for record, text in enumerate(texts):
        group = by_record.get(record)
        found = [] if group is None else list(zip(group["start"], group["end"], group["label"], group["tier"]))
        for start, end, label, tier in corrections.apply(text, found, lambda label: TIERS.get(label, 1)):
            rows.append((record, int(start), int(end), str(label), int(tier), text[start:end]))
    return pd.DataFrame(rows, columns=SPAN_COLUMNS).astype(
        {"record": "int64", "start": "int64", "end": "int64", "tier": "int64"}
    )


def gold_found(
    thresholds: Mapping[str, float], use_ner: bool, progress: Progress = no_progress
) -> dict[int, dict[str, Found]]:
    """Per redaction level, how many of the shipped gold's spans of each `GOLD_KINDS` kind the detectors find
    with these settings (`engine.text.detection_share`: a span is found when all of it is replaced); found once
    per settings, gold, spaCy model and recognizers, and kept in the cache folder."""
    identity = {
        "gold": gold_digest(),
        "thresholds": sorted(thresholds.items()),
        "spacy_model": f"{SPACY_MODEL}=={spacy_model_version()}" if use_ner else None,
        "recognizers": recognizers_version(),
    }
    key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]

    def compute() -> dict[int, dict[str, Found]]:
        docs = shipped_gold()
        spans = found_spans([d.text for d in docs], thresholds, use_ner, progress)
        labels = [label for _, kind in GOLD_KINDS.values() for label in kind]
        out = {}
        for level in range(int(REDACTION_KNOB.low), int(REDACTION_KNOB.high) + 1):
            counts = spans_found(docs, spans_at(spans, len(docs), level), labels)
            out[level] = {what: pooled({k: counts[k] for k in kind}) for what, (_, kind) in GOLD_KINDS.items()}
        return out

    return stored("detection", f"redaction-{key}", compute)


def detection_shares(found: Mapping[int, Mapping[str, Found]], level: int) -> tuple[DetectionShare, ...]:
    """What redaction at ``level`` finds of the kinds it replaces there (none at level 0)."""
    if level not in found:
        return ()
    unmeasured = tuple(what for at, kinds in UNMEASURED.items() if at <= level for what in kinds)
    shares = [
        DetectionShare(
            detector=f"redaction at level {level}",
            what=what,
            gold=f"{gold_size():,} posts of {GOLD_NAME}",
            found=found[level][what].found,
            total=found[level][what].total,
        )
        for what, (start, _) in GOLD_KINDS.items()
        if start <= level
    ]
    if shares and unmeasured:
        shares[-1] = replace(shares[-1], unmeasured=unmeasured)
    return tuple(shares)


@dataclass
class FittedRedaction(Fitted):
    """The spans of every text redacted: ``spans`` number the records of the text column 0..n-1 and those of
    each further column of ``other_columns`` (`Schema.other_text` the schema asks to protect) after them, n
    more each, so that one pass finds, propagates and numbers the identifiers of a record's texts together."""

    frame: pd.DataFrame
    text_column: str
    spans: pd.DataFrame
    method: str = "redact"
    knob: Knob = REDACTION_KNOB
    other_columns: tuple[str, ...] = ()
    found: dict[int, dict[str, Found]] | None = None
    """Per level, what the detectors find of the shipped gold's kinds (`gold_found`); None: not measured."""
    corrections: KeptCorrections | None = None
    """The kept corrections the detectors ran with (counts and digest), None when none."""

    def release(self, value: float, rng: np.random.Generator | None = None, replicate: int = 0) -> Release:
        level = int(self.knob.validate(value))
        active = outermost(self.spans[self.spans["tier"] <= level])
        columns = (self.text_column, *self.other_columns)
        n = len(self.frame)
        texts = [t for c in columns for t in self.frame[c].tolist()]
        by_record: dict[int, list[tuple[int, int, str]]] = {}
        for record, start, end, replacement in zip(
            active["record"].tolist(), active["start"].tolist(), active["end"].tolist(), active["replacement"].tolist()
        ):
            by_record.setdefault(record, []).append((start, end, replacement))
        for record, spans in by_record.items():
            texts[record] = apply_spans(texts[record], spans)
        data = self.frame.copy()
        for i, column in enumerate(columns):
            data[column] = texts[i * n : (i + 1) * n]
        records = active["record"].to_numpy()
        changes = pd.DataFrame(
            {
                "record": records % n if n else records,
                "column": [columns[r // n] for r in records] if n else self.text_column,
                "start": active["start"].to_numpy(),
                "end": active["end"].to_numpy(),
                "original": active["original"].to_numpy(),
                "replacement": active["replacement"].to_numpy(),
                "label": active["label"].to_numpy(),
            },
            columns=CHANGE_COLUMNS,
        ).reset_index(drop=True)
        return Release(
            data=data,
            method=self.method,
            knob=float(level),
            protected_columns=columns,
            changes=changes,
            details=(
                Statement("Level meaning", LEVEL_NAMES[level]),
                *((self.corrections,) if self.corrections is not None else ()),
                *(detection_shares(self.found, level) if self.found is not None else ()),
            ),
        )


def detection_check(path: Path, protector: Protector, progress: Progress = no_progress) -> CheckReport:
    """Redaction's detection quality on a gold file at every level, with the protector's thresholds and
    recognizers (`engine.text.detection_quality`): token-level precision, recall and F2 per level, the figure
    per type at each level."""
    assert isinstance(protector, Redaction)
    docs = read_gold(path)
    by_level = evaluate_detection(
        docs, [int(v) for v in REDACTION_KNOB.grid], protector.threshold_overrides(), protector.use_ner, progress
    )
    rows = []
    for level, quality in by_level.items():
        every = quality.table.iloc[0]
        rows.append(
            {
                "Level": level,
                "Precision": every["token_precision"],
                "Recall": every["token_recall"],
                "F2": every["token_f2"],
                "Whole spans found": every["span_recall"],
                "Replaces": LEVEL_NAMES[level],
            }
        )
    top = by_level[max(by_level)]
    notes = (
        f"{len(docs):,} documents, {int(top.table.iloc[0]['gold_tokens']):,} gold tokens. Token level: a gold "
        "token is found when it is replaced, whatever the label; a replaced token is right when it is in a gold span.",
        "Most missed at level 4: " + (", ".join(f"{t!r} ({c})" for t, c in top.missed) or "none"),
        "Most needlessly replaced at level 4: " + (", ".join(f"{t!r} ({c})" for t, c in top.false) or "none"),
    )
    scores = {level_key(level): q for level, q in by_level.items()}
    return CheckReport(table=pd.DataFrame(rows), scores=scores, notes=notes, default=level_key(max(by_level)))


def level_key(level: float) -> str:
    """How a redaction level names its scores in a `CheckReport` ("level 4")."""
    return f"level {int(level)}"


class Redaction(Protector):
    """Replace identifiers in the text by typed placeholders, tier by tier."""

    name = "redact"
    title = "Identifier redaction"
    description = (
        "Replaces identifiers in the text by typed placeholders such as [PERSON] or [HASHTAG]. "
        "Higher levels replace more kinds of identifier; structured fields are left as they are."
    )
    knob = REDACTION_KNOB
    detects = "identifiers"
    deterministic = True
    gold_check = GoldCheck(
        title="Check what it finds against a gold file",
        help="A file where people marked every identifier: CoNLL BIO (token<TAB>tag lines, a blank line between "
        'sentences) or span JSON (.json/.jsonl, {"text": ..., "spans": [[start, end, label], ...]}). The '
        "check scores what redaction replaces at each level with the settings above.",
        suffixes=("conll", "bio", "txt", "tsv", "json", "jsonl"),
        run=detection_check,
        knob_key=level_key,
    )

    use_ner: bool
    thresholds: tuple[str, ...]
    identifiers: str | None
    corrections: str
    parameters = (
        Param(
            "use_ner",
            bool,
            True,
            "find person names, places, organizations and the other entities of levels 2–4 with spaCy's English "
            "model; without it only the format recognizers (phone numbers, dates, ...), speaker labels and an "
            "identifiers file find them",
            expert=True,
            label="Use spaCy's entity recognizer",
        ),
        Param(
            "thresholds",
            str,
            (),
            "per-type confidence thresholds as TYPE=VALUE, e.g. PHONE=0.3, STREET_ADDRESS=0.8: a found "
            "identifier is replaced when its confidence reaches its type's threshold (default 0.5 for every type; "
            "spaCy's entities have confidence 0.85, format matches 0.2–1 by what their validator proves and "
            "the words before them). Types: " + ", ".join(TIERS),
            many=True,
            expert=True,
            label="Per-type confidence thresholds",
            example=("PHONE=0.3", "STREET_ADDRESS=0.8"),
        ),
        Param(
            "identifiers",
            str,
            None,
            "CSV of known identifiers (columns: <key field>, label, value, e.g. ADP,Company Name,Automatic Data "
            "Processing): each value, its variants without Inc. or The (a person's also as Mr., Ms., Mrs. or Dr. "
            "and the surname), and each key (a ticker) is replaced "
            "wherever it appears, as a person for labels naming people (Executive), else as an organization; "
            "default identifiers.csv beside the data when there is one",
            expert=True,
            label="Identifiers file",
        ),
    )

    def validate(self) -> None:
        thresholds_for(self.threshold_overrides())

    def check(self, dataset: Dataset) -> list[str]:
        identifiers_path(dataset, self.identifiers)  # a named file that does not exist is an error now
        return []

    def threshold_overrides(self) -> dict[str, float]:
        """The ``thresholds`` parameter as {type: threshold}; ConfigError on an entry that is not TYPE=VALUE."""
        out: dict[str, float] = {}
        for entry in self.thresholds:
            label, sep, value = entry.partition("=")
            try:
                out[label.strip().upper()] = float(value)
            except ValueError:
                sep = ""
            if not sep:
                raise ConfigError(
                    f"threshold {entry!r} is not accepted; write TYPE=VALUE with a number between 0 and 1, "
                    "e.g. PHONE=0.3"
                ) from None
        return out

    def kept_corrections(self, dataset: Dataset) -> Corrections | None:
        """The lists the steward kept for redaction on ``dataset``, when this runs with them (``corrections``
        "kept"); None otherwise or when only the guard's are kept."""
        return corrections_in_use(dataset.fingerprint, (self.name, "guard"), self.corrections).get(self.name)

    def fit_identity(self, dataset: Any = None) -> dict:
        # the lists kept, if any, without refusing: a key is computed before a fit, which says what is missing
        use = isinstance(dataset, Dataset) and self.corrections == KEPT
        kept = kept_corrections(dataset.fingerprint, self.name) if use else None
        return {
            "corrections": kept.digest() if kept is not None else None,
            "identifiers": identifiers_digest(dataset, self.identifiers),
            "spacy_model": f"{SPACY_MODEL}=={spacy_model_version()}" if self.use_ner else None,
            "redaction": "consistent, numbered per document",
            "recognizers": recognizers_version(),
            "detection_gold": gold_digest(),  # what the residual detection risk is measured on
        }

    def find_spans(
        self, dataset: Dataset, progress: Progress = no_progress, corrections_of: Dataset | None = None
    ) -> pd.DataFrame:
        """Every span redaction replaces at some level (its ``tier``) in the text and in the other free-text
        columns the schema asks to protect, found in one pass over the texts of all of them (record ``r`` of the
        ``i``-th column is text ``i·n + r``) and made consistent across them: the detector `fit` uses, and the
        one a steward's annotations are scored against (`engine.annotation`), run on a sample of the records of
        ``corrections_of`` (whose kept corrections apply; default: ``dataset``'s)."""
        schema = dataset.schema
        others = tuple(c for c in schema.other_text if c not in schema.dropped_other_text)
        n, copies = dataset.n_records, 1 + len(others)
        texts = [t for c in (schema.text, *others) for t in dataset.frame[c].tolist()]
        spans = find_identifiers(texts, progress=progress, use_ner=self.use_ner, thresholds=self.threshold_overrides())
        kept = self.kept_corrections(corrections_of or dataset)
        if kept is not None:
            spans = corrected_spans(texts, spans, kept)
        if schema.author is not None:
            spans = author_name_spans(texts, dataset.frame[schema.author].tolist() * copies, spans)
        path = identifiers_path(dataset, self.identifiers)
        if path is not None:
            spans = listed_spans(texts, read_identifiers(path), spans)
        if schema.direct_identifiers:
            named = column_identifiers(dataset.frame, schema.direct_identifiers, range(n))
            spans = listed_spans(texts, named, spans, keys=False)
        return propagate(texts, spans)

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> FittedRedaction:
        """Every span of the text and of the other free-text columns the schema asks to protect (`find_spans`):
        a name found in a record's text is replaced in its summary too, with the same placeholder."""
        schema = dataset.schema
        others = tuple(c for c in schema.other_text if c not in schema.dropped_other_text)
        n, copies = dataset.n_records, 1 + len(others)
        spans = self.find_spans(dataset, progress)
        documents = dataset.frame[schema.document].tolist() if schema.document is not None else None
        if others:  # a record's texts are one document when records are their own
            documents = (documents or list(range(n))) * copies
        spans = spans.assign(replacement=number_placeholders(spans, documents))
        found = gold_found(self.threshold_overrides(), self.use_ner, progress)
        kept = self.kept_corrections(dataset)
        return FittedRedaction(
            frame=dataset.frame,
            text_column=schema.text,
            spans=spans,
            other_columns=others,
            found=found,
            corrections=kept.kept() if kept is not None else None,
        )
