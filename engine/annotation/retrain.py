"""The privacy-attribute tagger retrained on the gold set and a steward's annotated records of the `kanon`
detector (issue 51; the model is kept, and used, by `engine.protect.kanon.retrained`), and the gain it brings,
measured by cross-validation on the annotated records.

The steward's records are added to the gold set's posts as training posts, their spans (the kanon labels) the
token labels, with the CRF's settings of the packaged tagger (`engine.protect.kanon.tagger`). `cross_validated`
never scores a record with a tagger trained on it: the reviewed records in ``k`` folds (the ``i``-th of the
review order in fold ``i mod k``, as the corrections' cross-validation), the tagger of each fold trained on the
gold set and the other folds' records and run on its records; the scores before are the packaged tagger's on the
same records. Both are the tagger's own spans (without the kanon method's consistency pass, which carries a
string found once to its other occurrences), scored as the panel scores a detector (`engine.annotation.scores`:
by label, Wilson intervals). The fold models are trained in up to two processes.

Training is deterministic for given records (L-BFGS from zero weights), so there is no seed: the same records give
the same folds, the same models and the same scores.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.annotation.scores import DetectionScores, score
from engine.annotation.spans import Annotations, RecordAnnotation
from engine.progress import Progress, no_progress
from engine.protect.kanon.gold import LABELS, Span
from engine.protect.kanon.tagger import (
    Item,
    PrivacyTagger,
    default_tagger,
    gold_items,
    predicted_spans,
    training_items,
)
from engine.workers import Report, map_reporting

FOLDS = 5
"""The cross-validation's folds (fewer when fewer records are reviewed)."""
PROCESSES = 2
"""Processes the fold models are trained in."""


def record_items(records: Sequence[RecordAnnotation]) -> list[Item]:
    """The annotated records as training posts: their token features and labels (spans of another label are
    left out: the kanon detector's annotations hold only its labels)."""
    spans = [[s for s in r.spans if s[2] in LABELS] for r in records]
    return training_items([r.text for r in records], spans)


def retrain(records: Sequence[RecordAnnotation], gold: Sequence[Item] | None = None) -> PrivacyTagger:
    """The tagger trained on the gold set (or ``gold``, training items) and ``records``."""
    return PrivacyTagger.train_on([*(gold_items() if gold is None else gold), *record_items(records)])


@dataclass(frozen=True)
class RetrainGain:
    """The packaged tagger's scores on the reviewed records and those of the retrained one, measured by
    cross-validation over ``folds`` folds; ``model``: the tagger trained on the gold set and every reviewed record
    (the bytes `engine.protect.kanon.retrained.keep_retrained` keeps), ``records`` their count; ``seconds``: how
    long the folds and the model took to train."""

    folds: int
    before: DetectionScores
    after: DetectionScores
    model: bytes
    records: int
    seconds: float


def _train(item: tuple[list[Item], list[str], list[Item]], report: Report) -> tuple[list[list[Span]], bytes]:
    """A tagger trained on ``item[0]``: its spans on the held-out texts ``item[1]`` (their items ``item[2]``) and
    its model's bytes."""
    train, texts, held = item
    tagger = PrivacyTagger.train_on(train)
    try:
        out = predicted_spans(tagger, texts, held)
        model = Path(tagger.model_file).read_bytes()
    finally:  # weights learnt from the steward's records: none left in the temporary folder
        shutil.rmtree(Path(tagger.model_file).parent, ignore_errors=True)
    report(1)
    return out, model


def cross_validated(
    annotations: Annotations,
    folds: int = FOLDS,
    progress: Progress = no_progress,
    processes: int = PROCESSES,
    gold: Sequence[Item] | None = None,
) -> RetrainGain:
    """Recall and precision of the kanon tagger on the reviewed records, packaged and retrained (module
    docstring), and the tagger retrained on every reviewed record, trained beside the folds; ``gold``: the
    training items the records are added to (default: the gold set's). ValueError when fewer than 2 records are
    reviewed or when the annotations are not the kanon detector's."""
    if annotations.detector != "kanon":
        raise ValueError(f"the tagger learns from the kanon detector's annotations, not {annotations.detector!r}")
    records = annotations.reviewed()
    if len(records) < 2:
        raise ValueError(f"cross-validation needs 2 reviewed records or more; {len(records)} reviewed")
    start = time.perf_counter()
    k = max(2, min(folds, len(records)))
    items = record_items(records)
    base = gold_items() if gold is None else list(gold)
    texts = [r.text for r in records]
    before = predicted_spans(default_tagger(), texts, items)
    members = [[i for i in range(len(records)) if i % k == f] for f in range(k)]
    work = [
        ([*base, *(items[i] for i in range(len(records)) if i % k != f)], [texts[i] for i in m], [items[i] for i in m])
        for f, m in enumerate(members)
    ]
    work.append(([*base, *items], [], []))  # the model kept: every reviewed record
    what = f"retraining the tagger: {k} folds and the model on all {len(records):,} records"
    done = map_reporting(_train, work, 1, progress, what, min(processes, len(work)))
    after: list[list[Span]] = [[] for _ in records]
    for m, (spans, _) in zip(members, done):
        for i, found in zip(m, spans):
            after[i] = found
    return RetrainGain(
        k,
        score(records, before, True),
        score(records, after, True),
        done[-1][1],
        len(records),
        time.perf_counter() - start,
    )


def retrained_bytes(annotations: Annotations, gold: Sequence[Item] | None = None) -> bytes:
    """The model trained on the gold set (or ``gold``) and every reviewed record, as the bytes the store keeps
    (what `cross_validated` trains beside its folds)."""
    model = Path(retrain(annotations.reviewed(), gold).model_file)
    try:
        return model.read_bytes()
    finally:
        shutil.rmtree(model.parent, ignore_errors=True)
