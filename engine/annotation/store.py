"""Where a steward's annotations are kept: in the cache folder (`engine.paths.cache_dir`), one private file per
dataset (its fingerprint) and detector, beside the steward's fits and audit log, never in a bundle. The file is
the span JSON of the reviewed records (`engine.annotation.formats`) with the sample they were drawn in."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from engine.annotation.spans import Annotations, RecordAnnotation, checked_spans
from engine.protect.steward_files import read_steward_file, steward_path, write_steward_file


def annotations_path(fingerprint: str, detector: str) -> Path:
    """The file of the annotations of the dataset with ``fingerprint`` for ``detector``."""
    return steward_path(fingerprint, detector)


def save_annotations(annotations: Annotations) -> Path:
    """Keep ``annotations`` (readable by the steward's account only); returns the file."""
    body = {
        "sample": list(annotations.sample),
        "records": [
            {"record": a.record, "text": a.text, "spans": [list(s) for s in a.spans]} for a in annotations.reviewed()
        ],
    }
    path = annotations_path(annotations.fingerprint, annotations.detector)
    return write_steward_file(path, annotations.fingerprint, annotations.detector, body)


def load_annotations(fingerprint: str, detector: str) -> Annotations | None:
    """The annotations kept for the dataset with ``fingerprint`` and ``detector``; None when there are none.
    DataError when the file is not one this module wrote."""
    path = annotations_path(fingerprint, detector)

    def parse(body: dict) -> Annotations:
        done = {}
        for raw in body["records"]:
            record, text = int(raw["record"]), str(raw["text"])
            done[record] = RecordAnnotation(record, text, checked_spans(text, raw["spans"], f"{path} record {record}"))
        return Annotations(fingerprint, detector, tuple(int(r) for r in body["sample"]), done)

    return read_steward_file(
        path, fingerprint, detector, parse, "annotations", "delete it to start the annotations again"
    )


def delete_annotations(fingerprint: str, detector: str) -> None:
    annotations_path(fingerprint, detector).unlink(missing_ok=True)


def annotations_stamp(fingerprint: str, detectors: Sequence[str]) -> str:
    """A digest of the annotations kept for the dataset with ``fingerprint`` and ``detectors`` (empty when there
    are none): what a view measured on them is keyed by."""
    digest = hashlib.sha256()
    kept = False
    for name in detectors:
        path = annotations_path(fingerprint, name)
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
            kept = True
    return digest.hexdigest() if kept else ""


def import_records(fingerprint: str, detector: str, records: Sequence[RecordAnnotation]) -> Annotations:
    """Keep ``records`` (read from a file, `engine.annotation.formats`) as reviewed in the annotations of the
    dataset with ``fingerprint`` for ``detector``, replacing what those records had; returns the annotations."""
    base = load_annotations(fingerprint, detector) or Annotations(fingerprint, detector, ())
    for record in records:
        base = base.with_record(record)
    save_annotations(base)
    return base
