"""Where a steward's annotations are kept: in the cache folder (`engine.paths.cache_dir`), one private file per
dataset (its fingerprint) and detector, beside the steward's fits and audit log, never in a bundle. The file is
the span JSON of the reviewed records (`engine.annotation.formats`) with the sample they were drawn in."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from engine.annotation.spans import Annotations, RecordAnnotation, checked_spans
from engine.atomic import atomic_write_bytes
from engine.errors import DataError
from engine.paths import cache_dir
from engine.protect.corrections import ANNOTATIONS_FOLDER

FOLDER = ANNOTATIONS_FOLDER


def annotations_path(fingerprint: str, detector: str) -> Path:
    """The file of the annotations of the dataset with ``fingerprint`` for ``detector``."""
    return cache_dir() / FOLDER / f"{fingerprint[:32]}-{detector}.json"


def save_annotations(annotations: Annotations) -> Path:
    """Keep ``annotations`` (readable by the steward's account only); returns the file."""
    path = annotations_path(annotations.fingerprint, annotations.detector)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "fingerprint": annotations.fingerprint,
        "detector": annotations.detector,
        "sample": list(annotations.sample),
        "records": [
            {"record": a.record, "text": a.text, "spans": [list(s) for s in a.spans]} for a in annotations.reviewed()
        ],
    }
    atomic_write_bytes(path, json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8"), private=True)
    return path


def load_annotations(fingerprint: str, detector: str) -> Annotations | None:
    """The annotations kept for the dataset with ``fingerprint`` and ``detector``; None when there are none.
    DataError when the file is not one this module wrote."""
    path = annotations_path(fingerprint, detector)
    if not path.is_file():
        return None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        if body["fingerprint"] != fingerprint or body["detector"] != detector:
            raise KeyError("fingerprint")
        done = {}
        for raw in body["records"]:
            record, text = int(raw["record"]), str(raw["text"])
            done[record] = RecordAnnotation(record, text, checked_spans(text, raw["spans"], f"{path} record {record}"))
        return Annotations(fingerprint, detector, tuple(int(r) for r in body["sample"]), done)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise DataError(f"the annotations file {path} is damaged; delete it to start the annotations again") from None


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
