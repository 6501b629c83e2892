"""Reading a data file as it is: CSV / TSV / Parquet / JSON Lines, with a clear error for every problem.

Every problem with the user's file is a `DataError` that names the file, the column, the row and what would be
accepted. Rows are numbered as a person counts the records of the file: the first record is row 1 and a header
line is not counted (so in a CSV, row N is usually on line N + 1). Nothing is dropped silently: a record is
either read or the read fails with a message, unless the steward asks for rows of the wrong length to be left out
(``bad_rows="drop"``), which are then counted.
"""

from __future__ import annotations

import codecs
import json
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.data.delimited import check_bad_rows, parse_delimiter, read_delimited, reject_duplicates
from engine.errors import ConfigError, DataError

FORMATS: dict[str, str] = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_DEFAULT_MAX_MB = 2048


def _max_file_bytes_from_env() -> int:
    raw = os.environ.get("TEXTSDC_MAX_FILE_MB", "")
    try:
        mb = float(raw) if raw.strip() else _DEFAULT_MAX_MB
    except ValueError:
        warnings.warn(f"TEXTSDC_MAX_FILE_MB={raw!r} is not a number; using {_DEFAULT_MAX_MB} MB", stacklevel=2)
        mb = _DEFAULT_MAX_MB
    return int(mb * 1024 * 1024)


MAX_FILE_BYTES: int = _max_file_bytes_from_env()
"""Largest data file accepted, in bytes: ``$TEXTSDC_MAX_FILE_MB`` megabytes, default 2048."""


@dataclass(frozen=True)
class TableRead:
    """A data file as read: every column (CSV / TSV values as strings), the columns whose JSON arrays or objects
    were written as text (`nested_as_text`), the delimiter a delimited file was read with (None for JSON Lines
    and Parquet) and the rows left out for their number of fields (``bad_rows="drop"``)."""

    frame: pd.DataFrame
    nested: list[str]
    delimiter: str | None = None
    dropped: tuple[int, ...] = ()


def read_table(
    path: str | Path, *, encoding: str | None = None, delimiter: str | None = None, bad_rows: str = "error"
) -> pd.DataFrame:
    """Read a data file as it is (every column, CSV / TSV values as strings), or raise a `DataError`
    (`read_file`'s frame)."""
    return read_file(path, encoding=encoding, delimiter=delimiter, bad_rows=bad_rows).frame


def read_file(
    path: str | Path, *, encoding: str | None = None, delimiter: str | None = None, bad_rows: str = "error"
) -> TableRead:
    """Read a data file as it is, or raise a `DataError` (`ConfigError` for an encoding, delimiter or
    ``bad_rows`` that is not one).

    Checks that the file exists, is readable, not empty, not larger than `MAX_FILE_BYTES`, is text (not a
    binary file renamed), decodes in the given encoding (default: strict UTF-8, or UTF-16 for a file that starts
    with its byte-order mark), parses, has no duplicated column names and at least one data row. A CSV or TSV
    file is read with ``delimiter`` (one character, or comma, semicolon, tab, pipe), else the one its first
    records are written with; its rows with another number of fields than the header are an error, or left
    out when ``bad_rows`` is "drop".
    """
    path = Path(path)
    sep = parse_delimiter(delimiter)
    policy = check_bad_rows(bad_rows)
    fmt = _check_file(path)
    enc = _encoding(encoding or _utf16_by_bom(path))
    if fmt != "parquet" and not codecs.lookup(enc).name.startswith(("utf-16", "utf-32")):
        _check_text(path)
    used: str | None = None
    dropped: tuple[int, ...] = ()
    try:
        if fmt in ("csv", "tsv"):
            read = read_delimited(path, enc, "," if fmt == "csv" else "\t", sep, policy)
            frame, used, dropped = read.frame, read.delimiter, read.dropped
        elif fmt == "jsonl":
            frame = _read_jsonl(path, enc)
        else:
            frame = _read_parquet(path)
    except UnicodeDecodeError as exc:
        raise DataError(_decode_error_message(path, enc, exc)) from None
    except UnicodeError as exc:  # e.g. "UTF-16 stream does not start with BOM": no position to report
        raise DataError(f"{path} cannot be decoded as {enc}: {exc}. {UTF16_ADVICE}") from None
    except PermissionError:
        raise DataError(f"{path} cannot be read: permission denied") from None
    if frame.shape[1] == 0:
        raise DataError(f"{path} has no columns; a data file needs a header row and at least one record")
    if len(frame) == 0:
        raise DataError(f"{path} has a header but no data rows; it needs at least one record")
    try:
        nested = nested_as_text(frame)
    except _TooDeep as exc:
        raise DataError(f"{path}: {exc}") from None
    return TableRead(frame, nested, used, dropped)


def nested_as_text(frame: pd.DataFrame) -> list[str]:
    """Columns holding JSON arrays or objects (JSON Lines, Parquet lists and structs) as text, so that a
    document stored as a list of its sentences or of its speakers' turns can be the text column: a list's
    items one per line, a list of objects one paragraph per object with its values joined by ": " (a turn
    {"speaker": "Operator", "speech": "Good morning"} reads "Operator: Good morning"), anything deeper as
    JSON. Changes ``frame`` in place; returns the columns it wrote so."""
    written = []
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object or not values.map(_is_nested).any():
            continue
        frame[column] = pd.Series(
            [_cell_as_text(v, column, row) for row, v in enumerate(values, start=1)], index=frame.index, dtype=object
        )
        written.append(str(column))
    return written


class _TooDeep(ValueError):
    """A value nested too deeply to be written as text (its message names the column and the row)."""


def _cell_as_text(value: Any, column: object, row: int) -> Any:
    if not _is_nested(value):
        return value
    try:
        return _as_text(value)
    except RecursionError:
        raise _TooDeep(
            f"column '{column}', row {row}, nests lists or records too deeply to be read as text; "
            "give the value as text or as a shallower list"
        ) from None


def _is_nested(value: Any) -> bool:
    return isinstance(value, (list, tuple, dict, np.ndarray))


def _as_text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        value = value.tolist()  # a Parquet list arrives as a numpy array
    if isinstance(value, dict):
        if all(_is_scalar(v) for v in value.values()):
            return ": ".join(str(v) for v in value.values() if v is not None and str(v) != "")
        return json.dumps(value, ensure_ascii=False, default=str)
    items = list(value)
    if all(_is_scalar(v) for v in items):
        return "\n".join(str(v) for v in items if v is not None)
    return "\n\n".join(
        _as_text(v) if isinstance(v, dict) else json.dumps(v, ensure_ascii=False, default=str) for v in items
    )


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _readable(path: Path) -> bool:
    return os.access(path, os.R_OK)


def _check_file(path: Path) -> str:
    """The file's format, after checking it exists, is a readable non-empty file and is within the size limit."""
    if not path.exists():
        raise DataError(f"{path} does not exist")
    if path.is_dir():
        raise DataError(f"{path} is a folder, not a data file; give the path of a .csv, .tsv, .parquet or .jsonl file")
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        accepted = ", ".join(FORMATS)
        raise DataError(f"{path}: the extension '{path.suffix or '(none)'}' is not supported; accepted: {accepted}")
    if not _readable(path):
        raise DataError(f"{path} cannot be read: permission denied")
    size = path.stat().st_size
    if size == 0:
        raise DataError(f"{path} is empty (0 bytes); it needs a header row and at least one record")
    if size > MAX_FILE_BYTES:
        raise DataError(
            f"{path} is {_megabytes(size)}, larger than the limit of {_megabytes(MAX_FILE_BYTES)}; "
            "load a sample, or raise the limit with the environment variable TEXTSDC_MAX_FILE_MB"
        )
    return fmt


def _utf16_by_bom(path: Path) -> str | None:
    """ "utf-16" for a file that starts with UTF-16's byte-order mark (Excel's "Unicode text"), which no other
    encoding a data file is saved in starts with; else None (the default, UTF-8)."""
    with path.open("rb") as f:
        return "utf-16" if f.read(2) in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else None


def _check_text(path: Path, head: int = 1 << 16) -> None:
    """A `DataError` for a file that is not text: NUL bytes in its first ``head`` bytes (a program, an archive,
    a spreadsheet workbook) — text in UTF-16 or UTF-32 is the exception, read with its encoding."""
    with path.open("rb") as f:
        start = f.read(head)
    if b"\x00" in start:
        raise DataError(
            f"{path} is not a text file (it holds NUL bytes, as a program, an archive or a spreadsheet workbook "
            "does); save the data as CSV, TSV, JSON Lines or Parquet (a text file in UTF-16 needs its encoding "
            "named)"
        )


def _megabytes(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def _encoding(encoding: str | None) -> str:
    """The codec to read with; UTF-8 becomes utf-8-sig so a byte-order mark is skipped rather than kept."""
    if not encoding:
        return "utf-8-sig"
    try:
        name = codecs.lookup(encoding).name
    except (LookupError, ValueError):  # ValueError: a NUL character in the name
        raise ConfigError(f"unknown text encoding {encoding!r}; for example: {TEXT_ENCODINGS}") from None
    try:
        b"a".decode(name)
    except LookupError:  # rot13, base64, zlib_codec: codecs of bytes to bytes or of text to text
        raise ConfigError(
            f"{encoding!r} is not a text encoding: it transforms bytes or text rather than reading a file's bytes "
            f"as characters; give the encoding the file was saved in, for example: {TEXT_ENCODINGS}"
        ) from None
    except (UnicodeError, ValueError):  # a text encoding that does not decode this byte
        pass
    return "utf-8-sig" if name == "utf-8" else encoding


TEXT_ENCODINGS = "utf-8, cp1252, latin-1, utf-16"
"""Encodings a message names as examples of what is accepted."""


def _decode_error_message(path: Path, encoding: str, exc: UnicodeDecodeError) -> str:
    where = _locate_decode_error(path, encoding)
    label = "UTF-8" if encoding == "utf-8-sig" else encoding
    if where is None:
        detail = f"{exc.reason}"
    else:
        offset, line, column, bad = where
        detail = f"byte {bad} at line {line}, column {column} (byte offset {offset} from the start) cannot be decoded"
        if label == "UTF-8" and _utf8_before(path, offset):
            return (
                f"{path} is not valid {label} text: {detail}. The text before it holds characters written in UTF-8, "
                "so the file is likely UTF-8 with a damaged line: correct or remove that line"
            )
    return f"{path} is not valid {label} text: {detail}. {encoding_advice(encoding_that_reads(path))}"


def encoding_that_reads(path: Path) -> str:
    """The encoding to suggest for a file that is not UTF-8: cp1252 (what Excel and other Windows programs save)
    if the whole file decodes in it, else latin-1, which decodes any byte. cp1252 comes first because the bytes
    0x80–0x9F are its curly quotes, dashes and euro sign, which latin-1 would read as invisible control
    characters without an error."""
    decoder = codecs.getincrementaldecoder("cp1252")(errors="strict")
    try:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return "latin-1"
    return "cp1252"


def _utf8_before(path: Path, offset: int, limit: int = 1 << 20) -> bool:
    """Whether the (up to ``limit``) bytes before ``offset`` hold a multi-byte UTF-8 character."""
    with path.open("rb") as f:
        f.seek(max(0, offset - limit))
        before = f.read(min(offset, limit))
    return any(b >= 0x80 for b in before)  # they decoded as UTF-8, so a byte ≥ 0x80 is part of a character


def encoding_advice(name: str) -> str:
    """How to read a file in the encoding ``name``, on the command line and in Python (the dashboard says it in its
    own words, `dashboard.loading`)."""
    return (
        f"It reads as {name} (as Excel or an older program saves): give --encoding {name}; in Python, "
        f"load_dataset(..., encoding='{name}')"
    )


SUGGESTED_ENCODINGS = ("cp1252", "latin-1")
"""What `encoding_that_reads` may suggest."""
UTF16_ADVICE = (
    "Give the encoding the file was saved in, e.g. --encoding utf-16-le or utf-16-be for UTF-16 without a "
    "byte-order mark"
)


def _locate_decode_error(path: Path, encoding: str, chunk_size: int = 1 << 20) -> tuple[int, int, int, str] | None:
    """Byte offset (from 0), line and byte column (from 1) and the offending byte(s) of the first decoding error."""
    # A BOM is valid UTF-8, and the utf-8-sig decoder would shift the offsets of the first chunk by it.
    decoder = codecs.getincrementaldecoder("utf-8" if encoding == "utf-8-sig" else encoding)(errors="strict")
    offset, newlines, line_start = 0, 0, 0
    with path.open("rb") as f:
        while True:
            chunk = f.read(chunk_size)
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                data = exc.object
                base = offset - (len(data) - len(chunk))  # the decoder prepends bytes held back from the last chunk
                before = data[: exc.start]
                nl = before.rfind(b"\n")
                start = base + exc.start
                line = newlines + before.count(b"\n") - data[: len(data) - len(chunk)].count(b"\n") + 1
                column = start - (base + nl + 1 if nl >= 0 else line_start) + 1
                bad = " ".join(f"0x{b:02X}" for b in data[exc.start : exc.end])
                return start, line, column, bad
            if not chunk:
                return None
            offset += len(chunk)
            newlines += chunk.count(b"\n")
            last = chunk.rfind(b"\n")
            if last >= 0:
                line_start = offset - len(chunk) + last + 1


class _DuplicateKey(ValueError):
    pass


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        keys = [k for k, _ in pairs]
        raise _DuplicateKey(next(k for k in keys if keys.count(k) > 1))
    return obj


def _read_jsonl(path: Path, encoding: str) -> pd.DataFrame:
    """JSON Lines: one JSON object per line; blank lines are skipped."""
    records = []
    with path.open(encoding=encoding, errors="strict") as f:
        for line_number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line, object_pairs_hook=_object_without_duplicates)
            except _DuplicateKey as exc:
                raise DataError(
                    f"{path}: line {line_number} has the key '{exc}' more than once; every column needs a unique name"
                ) from None
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{path}: line {line_number} is not valid JSON ({exc.msg} at column {exc.colno}); "
                    "JSON Lines needs one JSON object per line"
                ) from None
            except RecursionError:
                obj = _TOO_DEEP
            except ValueError:  # an integer longer than Python converts
                raise DataError(
                    f"{path}: line {line_number} holds a whole number of more than "
                    f"{sys.get_int_max_str_digits():,} digits, too long to read as a number; write such a value as "
                    "a string, in double quotes"
                ) from None
            if obj is _TOO_DEEP or _deeper_than(obj, MAX_NESTING):
                raise DataError(
                    f"{path}: line {line_number} nests arrays or objects more than {MAX_NESTING} levels deep; "
                    "JSON Lines needs one object per line whose values are text, numbers, or lists and objects "
                    f"nested at most {MAX_NESTING} levels deep"
                )
            if not isinstance(obj, dict):
                raise DataError(
                    f"{path}: line {line_number} holds a JSON {type(obj).__name__}, not an object; "
                    'JSON Lines needs one object per line, like {"text": "...", "rating": 4}'
                )
            records.append(obj)
    if not records:
        raise DataError(f"{path} has no records (only blank lines); it needs at least one JSON object")
    return pd.DataFrame.from_records(records)


MAX_NESTING = 64
"""How deep a JSON Lines record may nest arrays and objects (a column's value is read as text from them)."""
_TOO_DEEP = object()


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists or dicts more than ``limit`` levels deep (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


def _read_parquet(path: Path) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        reject_duplicates(path, list(pf.schema_arrow.names), "Parquet schema")
        table = pf.read()
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, PermissionError):
            raise
        raise DataError(f"{path} is not a readable Parquet file ({exc}); is it corrupt or truncated?") from None
    return table.to_pandas()
