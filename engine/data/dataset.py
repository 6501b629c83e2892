"""The Dataset: a pandas frame of the records to release, its Schema, and the intruder's external records."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from functools import cached_property

import pandas as pd

from engine.data.schema import FieldKind, Schema


@dataclass(frozen=True)
class LeftOut:
    """A column of the data file that the dataset leaves out: why (in the steward's words), and the kind it would
    have as a field."""

    column: str
    why: str
    kind: FieldKind


@dataclass(frozen=True)
class DroppedRows:
    """Rows of a data file left out because their number of fields is not the header's (read with
    ``bad_rows="drop"``): the file's name and the rows, counted from 1 at the first record."""

    file: str
    rows: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Dataset:
    """Records to be released plus, optionally, what an intruder already holds.

    ``frame`` has a RangeIndex (record positions 0..n-1). ``external`` holds the intruder's records: other
    texts by some of the same authors (columns ``schema.text`` and ``schema.author``, and any known fields).

    A Dataset is frozen and its `fingerprint` is computed when it is made, so the two cannot drift apart:
    assigning a field raises ``dataclasses.FrozenInstanceError``; for other data make a new Dataset, e.g.
    ``dataclasses.replace(dataset, frame=other)``, which gets its own fingerprint. (Changing the frame's values
    in place is not prevented, and leaves the fingerprint describing the data as it was made; don't.)
    """

    name: str
    frame: pd.DataFrame
    schema: Schema
    external: pd.DataFrame | None = None
    source: str = ""
    left_out: tuple[LeftOut, ...] = ()
    """The file's columns that ``frame`` leaves out (not part of the `fingerprint`: the data is what it holds)."""
    dropped: tuple[DroppedRows, ...] = ()
    """The rows of the data file (and of the external file) left out for their number of fields."""

    def __post_init__(self) -> None:
        _ = self.fingerprint  # computed now, from the data as it is when the Dataset is made

    @property
    def texts(self) -> pd.Series:
        return self.frame[self.schema.text]

    @property
    def authors(self) -> pd.Series | None:
        return None if self.schema.author is None else self.frame[self.schema.author]

    @property
    def n_records(self) -> int:
        return len(self.frame)

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 over the records, the external records and the schema: the identity of this data. The
        schema's settings of methods ([methods.NAME]) are not part of it: they choose how to protect the data, not
        what the data is (a steward who changes a threshold keeps the project's pins).

        Computed at construction (`cached_property` stores it in the instance, which a frozen dataclass allows).
        """
        h = hashlib.sha256()
        h.update(replace(self.schema, methods=()).to_toml().encode())
        for part in (self.frame, self.external):
            if part is None:
                h.update(b"<none>")
                continue
            h.update("\x1f".join(map(str, part.columns)).encode())
            h.update("\x1f".join(map(str, part.dtypes)).encode())
            h.update(pd.util.hash_pandas_object(part, index=True).to_numpy().tobytes())
        return h.hexdigest()
