"""Delimited text files (CSV, TSV, and the semicolon- or pipe-separated files spreadsheets export in many locales):
the delimiter found from the file's first records (or given), every record checked to have the header's number of
fields, and a file cut short reported as such.

Nothing is dropped silently: a row with too few or too many fields is an error naming the rows, unless the
steward asks for such rows to be left out (``bad_rows="drop"``), and then the rows left out are counted.
"""

from __future__ import annotations

import contextlib
import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

import pandas as pd

from engine.errors import ConfigError, DataError

DELIMITERS: dict[str, str] = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
"""The delimiters a file is tried with, by name."""
BadRows = Literal["error", "drop"]
BAD_ROWS: tuple[BadRows, ...] = ("error", "drop")
ROW_CONVENTION = "rows are counted from 1 at the first record; a header line is not counted"
SHOWN_ROWS = 5
"""How many bad rows a message names before it counts the rest."""
_SAMPLE_CHARS = 1 << 20
_SAMPLE_RECORDS = 200


@dataclass(frozen=True)
class Delimited:
    """A delimited file as read: every value a string (an empty cell missing), the delimiter it was read with,
    and the rows left out for their number of fields (with ``bad_rows="drop"``)."""

    frame: pd.DataFrame
    delimiter: str
    dropped: tuple[int, ...] = ()


def parse_delimiter(text: str | None) -> str | None:
    """A delimiter as a steward gives it: one character, or comma, semicolon, tab, pipe or ``\\t``; None (or
    "") to find it from the file. ConfigError naming what is accepted."""
    if text is None or text == "":
        return None
    by_name = {name: d for d, name in DELIMITERS.items()} | {"\\t": "\t"}
    value = by_name.get(text.strip().lower(), text)
    if len(value) != 1 or value.isalnum() or value in "\"'\r\n":
        raise ConfigError(
            f"the delimiter must be one character that separates the values, such as , ; | or tab (also written "
            f"comma, semicolon, pipe or \\t); got {text!r}"
        )
    return value


def check_bad_rows(value: str) -> BadRows:
    """What to do with rows whose number of fields is not the header's: "error" or "drop"; ConfigError else."""
    if value not in BAD_ROWS:
        raise ConfigError(
            f"bad rows must be 'error' (refuse a file with rows of the wrong length) or 'drop' (leave them out "
            f"and count them); got {value!r}"
        )
    return cast(BadRows, value)


def described(delimiter: str) -> str:
    """The delimiter in words, for a message: "semicolons", "tabs", "'~' characters"."""
    name = DELIMITERS.get(delimiter)
    return f"{name}s" if name else f"{delimiter!r} characters"


def delimiter_flag(delimiter: str) -> str:
    """The flag that reads a file with ``delimiter``: ``--delimiter ';'`` (a tab by its name)."""
    return "--delimiter tab" if delimiter == "\t" else f"--delimiter '{delimiter}'"


def delimiter_advice(delimiter: str) -> str:
    """How to read a file with ``delimiter`` on the command line and in Python (the dashboard says it in its own
    words, `dashboard.loading`)."""
    return f"give {delimiter_flag(delimiter)} (in Python, load_dataset(..., delimiter={delimiter!r}))"


BAD_ROWS_ADVICE = "give --bad-rows drop to leave such rows out (in Python, load_dataset(..., bad_rows='drop'))"
"""How to leave out the rows of the wrong length (the dashboard says it in its own words)."""


def read_delimited(
    path: Path, encoding: str, default: str, delimiter: str | None = None, bad_rows: BadRows = "error"
) -> Delimited:
    """A delimited file read with ``delimiter``, else the one its first records are written with (``default``,
    the extension's, when it reads them), or a `DataError`: a file read as one column whose header holds
    another delimiter, rows whose number of fields is not the header's (unless ``bad_rows="drop"``), a file
    cut short in a record or inside a quoted value."""
    sep = delimiter or sniff_delimiter(path, encoding, default)
    dropped: list[int] = []
    bad: list[tuple[int, int, int]] = []  # the first rows of the wrong length: row, line, fields
    n_bad = 0
    records: list[list[str]] = []
    with path.open(encoding=encoding, errors="strict", newline="") as f, _long_csv_fields():
        rows = _Records(path, f, sep)
        header = next(rows, None)
        if header is None:
            raise DataError(f"{path} has no header row and no data; it needs a header row and at least one record")
        names = header[2]
        n = len(names)
        if n == 1:
            _refuse_one_column(path, "".join(rows.raw), sep)
        reject_duplicates(path, [h for h in names if h.strip()])
        last = header
        for last in rows:
            row, line, fields = last
            if len(fields) == n:
                if not n_bad:
                    records.append(fields)
            elif bad_rows == "drop":
                dropped.append(row)
            else:
                n_bad += 1
                bad += [(row, line, len(fields))] if len(bad) < SHOWN_ROWS else []
        if last is not header:
            _refuse_truncated(path, last, n, rows.raw, sep)
    if n_bad:
        raise DataError(_bad_rows_message(path, sep, n, bad, n_bad))
    frame = pd.DataFrame(records, columns=_column_names(names), dtype=str)
    return Delimited(frame.mask(frame.eq("")) if len(frame) else frame, sep, tuple(dropped))


def sniff_delimiter(path: Path, encoding: str, default: str) -> str:
    """The delimiter the file's first records are written with: ``default`` when the header splits on it and
    every sampled record has the header's number of fields; else the one delimiter of `DELIMITERS` that does
    so; else the one under which the most records have the header's length. DataError when two delimiters
    other than ``default`` read the file equally well."""
    sample = _sample(path, encoding)
    readings = {d: _reading(sample, d) for d in (default, *(d for d in DELIMITERS if d != default))}
    plausible = {d: r for d, r in readings.items() if r[0] > 1}
    if default in plausible and plausible[default][1] == 1.0:
        return default
    consistent = [d for d, (_, share) in plausible.items() if share == 1.0]
    if len(consistent) > 1:
        ways = " and as ".join(f"{plausible[d][0]} columns separated by {described(d)}" for d in consistent)
        raise DataError(f"{path} reads as {ways}: say which; {' or '.join(map(delimiter_advice, consistent))}")
    if consistent:
        return consistent[0]
    if plausible:
        return max(plausible, key=lambda d: plausible[d][1])  # the first of the best: default before the others
    return default


def _sample(path: Path, encoding: str) -> tuple[str, bool]:
    """The start of the file as text, and whether it is the whole file."""
    with path.open(encoding=encoding, errors="replace", newline="") as f:
        text = f.read(_SAMPLE_CHARS)
        return text, f.read(1) == ""


def _reading(sample: tuple[str, bool], sep: str) -> tuple[int, float]:
    """The header's number of fields under ``sep``, and the share of the sampled records that have as many."""
    text, whole = sample
    rows: list[list[str]] = []
    with _long_csv_fields(), contextlib.suppress(csv.Error):
        for fields in csv.reader(io.StringIO(text, newline=""), delimiter=sep):
            if fields and (len(fields) > 1 or fields[0].strip()):
                rows.append(fields)
            if len(rows) > _SAMPLE_RECORDS + 1:
                whole = True  # the records after these are not looked at: the last one read is whole
                break
    if not whole:
        rows = rows[:-1]  # it may be cut by the sample's end
    if not rows:
        return 0, 0.0
    n = len(rows[0])
    body = rows[1:]
    return n, (sum(len(r) == n for r in body) / len(body) if body else 1.0)


class _Records:
    """The non-blank records of a delimited file: (row, first line, fields), the header first (as row 0); the
    raw lines of the record last read are kept (to tell whether the file ends inside it)."""

    def __init__(self, path: Path, f: io.TextIOBase, sep: str) -> None:
        self._path = path
        self._lines = iter(f)
        self._taking: list[str] = []
        self.raw: list[str] = []
        self._reader = csv.reader(self._feed(), delimiter=sep)
        self._row = -1

    def _feed(self) -> Iterator[str]:
        for line in self._lines:
            self._taking.append(line)
            yield line

    def __iter__(self) -> Iterator[tuple[int, int, list[str]]]:
        return self

    def __next__(self) -> tuple[int, int, list[str]]:
        while True:
            start = self._reader.line_num + 1
            self._taking = []
            try:
                fields = next(self._reader)
            except csv.Error as exc:
                raise DataError(f"{self._path}: the record at line {start} cannot be read ({exc})") from None
            if fields and "".join(self._taking).strip():  # a blank line (or one of spaces) is not a record
                self.raw = self._taking
                self._row += 1
                return self._row, start, fields


def _refuse_one_column(path: Path, header: str, sep: str) -> None:
    """DataError for a file read as one column whose header line splits on another delimiter."""
    for d in DELIMITERS:
        if d != sep and _fields_of(header, d) > 1:
            raise DataError(
                f"{path} reads as one column with {described(sep)} as the delimiter, but its header holds "
                f"{described(d)}: the values are likely separated by {described(d)}; {delimiter_advice(d)}"
            )


def _fields_of(line: str, sep: str) -> int:
    """How many fields the first record of ``line`` has when ``sep`` separates them (0 if it cannot be read)."""
    with _long_csv_fields(), contextlib.suppress(csv.Error):
        return len(next(csv.reader(io.StringIO(line, newline=""), delimiter=sep), []))
    return 0


def _refuse_truncated(path: Path, last: tuple[int, int, list[str]], n: int, raw: list[str], sep: str) -> None:
    """DataError for a file that ends inside a quoted value, or in the middle of its last record."""
    row, line, fields = last
    text = "".join(raw)
    if _ends_in_quotes(text, sep):
        raise DataError(
            f"{path} ends inside a quoted value: a double quote opens a value in row {row} (line {line}) and "
            "nothing closes it before the end of the file. The file looks cut short (an interrupted download or "
            'copy): get the whole file again; or that value has a stray double quote: double it ("") or close it'
        )
    if len(fields) < n and not text.endswith(("\n", "\r")):
        raise DataError(
            f"{path} ends in the middle of a record: its last row, row {row} (line {line}), has {len(fields)} of the "
            f"header's {n} fields and no line break after it. The file looks cut short (an interrupted download or "
            "copy): get the whole file again"
        )


def _ends_in_quotes(text: str, sep: str) -> bool:
    """Whether ``text`` (one record) ends inside a quoted value: a line after it is then read into that value."""
    with _long_csv_fields():
        rows = list(csv.reader(io.StringIO(text + "\nZ", newline=""), delimiter=sep))
    return not rows or rows[-1] != ["Z"]


def _bad_rows_message(path: Path, sep: str, n: int, bad: list[tuple[int, int, int]], n_bad: int) -> str:
    shown = [f"row {row} (line {line}) has {count}" for row, line, count in bad]
    if n_bad == 1:
        what, them = f"{shown[0]} field{'' if bad[0][2] == 1 else 's'} but the header has {n}", "it"
    else:
        more = f" and {n_bad - len(bad):,} more" if n_bad > len(bad) else ""
        what, them = (
            f"{n_bad:,} rows have another number of fields than the header's {n}: {', '.join(shown)}{more}",
            "them",
        )
    one = {",": "a comma", ";": "a semicolon", "\t": "a tab", "|": "a pipe"}.get(sep, f"a {sep!r}")
    return (
        f"{path} is not well-formed {_kind(sep)}: {what} ({ROW_CONVENTION}). Correct {them} (a value that holds "
        f"{one} needs double quotes around it), or {BAD_ROWS_ADVICE}"
    )


def _kind(sep: str) -> str:
    return {",": "CSV", "\t": "TSV"}.get(sep, f"delimited text (values separated by {described(sep)})")


def _column_names(names: list[str]) -> list[str]:
    """The header's names; a blank one named as pandas names it ("Unnamed: 2")."""
    return [name if name.strip() else f"Unnamed: {k}" for k, name in enumerate(names)]


def reject_duplicates(path: Path, names: list[str], where: str = "header") -> None:
    """DataError naming a column name that appears twice in the file's ``where``."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DataError(
                f"{path}: the column name '{name}' appears more than once in the {where}; every column needs a "
                "unique name"
            )
        seen.add(name)


@contextlib.contextmanager
def _long_csv_fields() -> Iterator[None]:
    """Let Python's csv module read fields of any length a file can hold (its default stops at 131,072
    characters), restoring the limit afterwards."""
    old = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)
    try:
        yield
    finally:
        csv.field_size_limit(old)
