"""The Dataset: a pandas frame of the records to release, its Schema, and the intruder's external records."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from engine.data.schema import Schema


@dataclass(eq=False)
class Dataset:
    """Records to be released plus, optionally, what an intruder already holds.

    ``frame`` has a RangeIndex (record positions 0..n-1). ``external`` holds the intruder's records: other
    texts by some of the same authors (columns ``schema.text`` and ``schema.author``, and any known fields).
    """

    name: str
    frame: pd.DataFrame
    schema: Schema
    external: pd.DataFrame | None = None
    source: str = ""

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
        """SHA-256 over the records, the external records and the schema: the identity of this data."""
        h = hashlib.sha256()
        h.update(self.schema.to_toml().encode())
        for part in (self.frame, self.external):
            if part is None:
                h.update(b"<none>")
                continue
            h.update("\x1f".join(map(str, part.columns)).encode())
            h.update("\x1f".join(map(str, part.dtypes)).encode())
            h.update(pd.util.hash_pandas_object(part, index=True).to_numpy().tobytes())
        return h.hexdigest()
