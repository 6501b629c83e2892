"""A background corpus the steward declares: texts an intruder may already hold (public documents of the same
sources: another quarter's calls of the same companies, other posts by the same authors). It is read with the
data's readers and refusals (`read_file`: CSV, TSV, JSON Lines or Parquet; a list of speakers' turns as one
text), every column kept, its text column taken from a ``<stem>.schema.toml`` beside it or inferred as the
data's is. What a release record says of it is its file name, checksum and row count, never its content."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from engine.data.infer import infer_with_reasons
from engine.data.readers import read_file
from engine.data.schema import Schema
from engine.errors import DataError


@dataclass(frozen=True)
class Background:
    """A background corpus as read: ``frame`` holds every column of the file (its texts in ``text``), ``name``
    the file's name (never its path), ``sha256`` the checksum of its bytes."""

    name: str
    sha256: str
    text: str
    frame: pd.DataFrame

    @property
    def rows(self) -> int:
        return len(self.frame)

    def texts(self) -> list[str]:
        """The corpus's texts (an empty cell as an empty text)."""
        return self.frame[self.text].fillna("").astype(str).tolist()


def read_background(path: str | Path) -> Background:
    """The background corpus in ``path``; DataError naming the file and what is wrong (missing, unreadable, no
    text column), as for a data file."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataError(f"background corpus {p} is not a file; give a CSV, TSV, JSON Lines or Parquet file of texts")
    stat = p.stat()
    return _read(str(p.resolve()), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _read(path: str, mtime: int, size: int) -> Background:
    p = Path(path)
    frame = read_file(p).frame
    beside = p.with_name(f"{p.stem}.schema.toml")
    text = Schema.from_toml(beside).text if beside.is_file() else infer_with_reasons(frame)[0].text
    if text not in frame.columns:
        raise DataError(f"background corpus {p.name}: its schema names the text column '{text}', which it lacks")
    return Background(p.name, file_digest(p), text, frame.reset_index(drop=True))


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
