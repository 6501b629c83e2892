"""A companion file of direct identifiers beside a dataset: per value of a key column (a ticker), the strings
that identify it under a label (a CSV with the columns <key column>, label, value, e.g. ``ADP,Company Name,
"Automatic Data Processing, Inc."``). By default ``identifiers.csv`` in a demo's folder, or
``<stem>.identifiers.csv`` beside a data file, when there is one. The swap suppresses them before swapping;
redaction replaces them wherever they appear.

The data's own columns can name them too: the schema's direct-identifier columns (`Schema.direct_identifiers`,
e.g. a call's participants), read by `column_identifiers`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from engine.data.dataset import Dataset
from engine.data.demos import DEMOS_DIR, is_demo
from engine.errors import ConfigError, DataError

IDENTIFIER_COLUMNS = ("label", "value")


def read_identifiers(path: Path, metadata: str | None = None) -> dict[str, dict[str, list[str]]]:
    """The identifiers file (module docstring): key value → label → identifying strings. The key column is
    ``metadata``, or the file's first column other than label and value."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as e:
        raise DataError(f"the identifiers file {path} cannot be read as UTF-8 CSV: {e}") from None
    if metadata is None:
        metadata = next((str(c) for c in frame.columns if c not in IDENTIFIER_COLUMNS), "<key column>")
    need = [metadata, *IDENTIFIER_COLUMNS]
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise DataError(
            f"the identifiers file {path} lacks the column(s) {', '.join(missing)}; it needs {', '.join(need)} "
            f"(one row per identifying string); it has {', '.join(map(str, frame.columns))}"
        )
    out: dict[str, dict[str, list[str]]] = {}
    for key, label, value in frame[need].itertuples(index=False):
        if key.strip() and label.strip() and value.strip():
            out.setdefault(key.strip(), {}).setdefault(label.strip(), []).append(value.strip())
    return out


def identifiers_digest(dataset: Dataset | None, given: str | None) -> str | None:
    """What the identifiers file adds to a fit-cache key: the first 16 hex digits of its SHA-256, None when
    there is none (or a named one is missing: the fit says so, and the key holds the name, a parameter)."""
    try:
        path = identifiers_path(dataset, given) if dataset is not None else None
    except ConfigError:
        return None
    return None if path is None else hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def identifiers_path(dataset: Dataset, given: str | None) -> Path | None:
    """The identifiers file to read: ``given``, else the one beside the data (module docstring), else None."""
    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"identifiers file {given!r} does not exist; give a CSV with columns <metadata>, label, value"
            )
        return path
    if is_demo(dataset.source):
        path = DEMOS_DIR / dataset.source / "identifiers.csv"
    elif dataset.source:
        source = Path(dataset.source)
        path = source.with_name(f"{source.stem}.identifiers.csv")
    else:
        return None
    return path if path.is_file() else None


_ITEM_SEPARATOR = re.compile(r"[\n;]+")
_DESCRIPTION = re.compile(r"\s*(?:--|—|–|\s-\s|\|)")


def names_in(value: str) -> list[str]:
    """The names a direct-identifier cell holds: one per line (a list read as text gives one item per line) or
    between semicolons, each up to a description after "--", a dash or "|" ("Douglas A. Lindsay--Chief
    Executive Officer" names Douglas A. Lindsay); one character names nobody."""
    out = []
    for item in _ITEM_SEPARATOR.split(str(value)):
        name = _DESCRIPTION.split(item, maxsplit=1)[0].strip().strip("\"'")
        if len(name) >= 2 and name not in out:
            out.append(name)
    return out


def column_identifiers(
    frame: pd.DataFrame, columns: Sequence[str], key: Sequence[object]
) -> dict[str, dict[str, list[str]]]:
    """The direct identifiers the data's own ``columns`` name, as an identifiers file gives them: key → label
    (the column's name) → names (`names_in`), the records of one ``key`` (a document, a ticker) together."""
    out: dict[str, dict[str, list[str]]] = {}
    for column in columns:
        for k, value in zip(key, frame[column].tolist()):
            names = out.setdefault(str(k), {}).setdefault(str(column), [])
            names += [n for n in names_in(value) if n not in names]
    return {k: {label: v for label, v in by_label.items() if v} for k, by_label in out.items()}


def merged(
    *sources: Mapping[str, Mapping[str, Sequence[str]]],
) -> dict[str, dict[str, list[str]]]:
    """Identifiers of several sources (a file, the data's columns) as one: key → label → strings, in order."""
    out: dict[str, dict[str, list[str]]] = {}
    for source in sources:
        for k, by_label in source.items():
            for label, strings in by_label.items():
                kept = out.setdefault(k, {}).setdefault(label, [])
                kept += [s for s in strings if s not in kept]
    return out
