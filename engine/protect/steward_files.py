"""Where a steward's annotations and the corrections kept from them live: the cache folder's `FOLDER`, one
private JSON file per dataset (its fingerprint), detector and kind, readable by the steward's account only and
never put in a bundle. One home for writing and reading them (`engine.annotation.store` keeps the annotations,
`engine.protect.corrections` the corrections)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from engine.atomic import atomic_write_bytes
from engine.errors import DataError
from engine.paths import cache_dir

FOLDER = "annotations"
"""The cache folder's folder of a steward's annotations and the corrections kept from them."""
T = TypeVar("T")


def steward_path(fingerprint: str, detector: str, kind: str = "") -> Path:
    """The file of the dataset with ``fingerprint``, ``detector`` and ``kind`` ("" for the annotations)."""
    return cache_dir() / FOLDER / f"{fingerprint[:32]}-{detector}{'-' + kind if kind else ''}.json"


def write_steward_file(path: Path, fingerprint: str, detector: str, body: dict[str, Any]) -> Path:
    """Write ``body`` with the dataset's ``fingerprint`` and ``detector`` first, privately; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    whole = {"fingerprint": fingerprint, "detector": detector, **body}
    atomic_write_bytes(path, json.dumps(whole, ensure_ascii=False, indent=1).encode("utf-8"), private=True)
    return path


def read_steward_file(
    path: Path,
    fingerprint: str | None,
    detector: str | None,
    parse: Callable[[dict[str, Any]], T],
    what: str,
    remedy: str,
) -> T | None:
    """``parse`` of the body of ``path``, the ``what`` file (annotations, corrections); None when there is no such
    file. DataError naming the file and saying ``remedy`` when the
    file is not JSON, is of another dataset or detector than ``fingerprint`` and ``detector`` (None: any), or
    ``parse`` finds a field missing or of the wrong type."""
    if not path.is_file():
        return None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(body, dict):
            raise TypeError("not an object")
        for key, wanted in (("fingerprint", fingerprint), ("detector", detector)):
            if not isinstance(body[key], str) or (wanted is not None and body[key] != wanted):
                raise KeyError(key)
        return parse(body)
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError, IndexError):
        raise DataError(f"the {what} file {path} is damaged; {remedy}") from None
