"""Loading a dataset: reading CSV / TSV / Parquet / JSON Lines, validating it against a Schema, inferring a
schema when none is given, the intruder's external records, and the demo datasets shipped in ``assets/demo``.

Every problem with the user's file is a `DataError` that names the file, the column, the row and what would be
accepted. Rows are numbered as a person counts the records of the file: the first record is row 1 and a header
line is not counted (so in a CSV, row N is usually on line N + 1). Nothing is dropped silently: a record is
either loaded or the load fails with a message.
"""

from __future__ import annotations

import codecs
import csv
import difflib
import json
import os
import tomllib
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError, DataError
from engine.paths import ASSETS_DIR
from engine.data.schema import ExternalSpec, FieldSpec, Schema

FORMATS: dict[str, str] = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}
ROW_CONVENTION = "rows are counted from 1 at the first record; a header line is not counted"
MISSING_CATEGORY = "(missing)"
DEMOS_DIR = ASSETS_DIR / "demo"

_DEFAULT_MAX_MB = 2048
_TEXT_NAMES = ("text", "review", "review_text", "description", "tweet", "content", "body")
_AUTHOR_NAMES = ("author", "user", "user_id", "name", "username", "screen_name", "reviewer_id", "reviewerid")
_DOCUMENT_NAMES = ("document", "doc_id", "call_id")
_MIN_PREFERRED_TEXT_LENGTH = 20
_MAX_CATEGORICAL_INTEGERS = 20


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


# ---------------------------------------------------------------------------------------------------------------
# Demo registry


@dataclass(frozen=True)
class DemoInfo:
    """One demo dataset in ``assets/demo/<name>/``."""

    name: str
    title: str
    description: str
    n_records: int
    n_external: int
    licence: str
    path: Path


def demo_names() -> list[str]:
    """Names of the demo datasets, sorted."""
    if not DEMOS_DIR.is_dir():
        return []
    return sorted(
        p.name for p in DEMOS_DIR.iterdir() if (p / "data.csv").is_file() and (p / "schema.toml").is_file()
    )


def is_demo(name: str) -> bool:
    return name in demo_names()


def list_demos() -> list[DemoInfo]:
    """Every demo with its title, description, licence and record counts (read from its files)."""
    infos = []
    for name in demo_names():
        folder = DEMOS_DIR / name
        meta = _demo_meta(folder)
        schema = Schema.from_toml(folder / "schema.toml")
        n_records = _count_csv_rows(folder / "data.csv")
        n_external = 0
        if schema.external is not None and schema.external.file:
            n_external = _count_csv_rows(folder / schema.external.file)
        elif schema.external is not None:
            ds = load_dataset(name)
            n_records, n_external = ds.n_records, len(ds.external)
        infos.append(DemoInfo(name, meta["title"], meta["description"], n_records, n_external, meta["licence"], folder))
    return infos


def _demo_meta(folder: Path) -> dict[str, str]:
    path = folder / "demo.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raw = {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    return {
        "title": str(raw.get("title", folder.name)),
        "description": str(raw.get("description", "")),
        "licence": str(raw.get("licence", "unknown")),
    }


def _count_csv_rows(path: Path) -> int:
    st = path.stat()
    return _count_csv_rows_cached(str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def _count_csv_rows_cached(path: str, _mtime_ns: int, _size: int) -> int:
    return len(pd.read_csv(path, usecols=[0], dtype=str, keep_default_na=False))


# ---------------------------------------------------------------------------------------------------------------
# Loading


def load_dataset(
    source: str | Path,
    schema: Schema | str | Path | None = None,
    *,
    encoding: str | None = None,
    name: str | None = None,
) -> Dataset:
    """Load a demo (by name) or a data file, validate it against its schema and attach the external records.

    Parameters
    ----------
    source
        A demo name (see `demo_names`) or a path to a .csv, .tsv, .parquet, .jsonl or .ndjson file.
    schema
        A `Schema`, or a path to a schema TOML file. When None: the demo's ``schema.toml``; for a file, a
        ``<stem>.schema.toml`` beside it; otherwise one inferred with `infer_schema`.
    encoding
        Text encoding of CSV / TSV / JSON Lines files; default strict UTF-8 (a byte-order mark is accepted).
    name
        Name of the dataset; default the demo name or the file's stem.

    Returns
    -------
    Dataset
        ``frame`` holds only the schema's columns, in schema order, with a fresh RangeIndex.
    """
    path, demo = _resolve_source(source)
    resolved, base_dir = _resolve_schema(schema, path, demo)
    raw = read_table(path, encoding=encoding)
    if resolved is None:
        resolved = infer_schema(raw)
    frame = _conformed(raw, resolved, str(path), release=True)
    external = None
    if resolved.external is not None:
        if resolved.external.file:
            external = _load_external_file(base_dir / resolved.external.file, resolved, frame, encoding)
        else:
            frame, external = split_external(frame, resolved)
    return Dataset(
        name=name or demo or path.stem,
        frame=frame,
        schema=resolved,
        external=external,
        source=demo or str(path.resolve()),
    )


def _resolve_source(source: str | Path) -> tuple[Path, str | None]:
    """The data file to read, and the demo name when ``source`` names a demo."""
    text = str(source)
    if is_demo(text):
        return DEMOS_DIR / text / "data.csv", text
    path = Path(source)
    looks_like_name = os.sep not in text and "/" not in text and not path.suffix
    if looks_like_name and not path.exists():
        names = ", ".join(demo_names()) or "none installed"
        raise DataError(f"'{text}' is neither a file nor a demo dataset; demo datasets are: {names}")
    return path, None


def _resolve_schema(schema: Schema | str | Path | None, path: Path, demo: str | None) -> tuple[Schema | None, Path]:
    """The schema to apply (None: infer one) and the folder that an ``[external] file`` is relative to."""
    if isinstance(schema, Schema):
        return schema, path.parent
    if schema is not None:
        schema_path = Path(schema)
        return Schema.from_toml(schema_path), schema_path.parent
    beside = DEMOS_DIR / demo / "schema.toml" if demo else path.with_name(f"{path.stem}.schema.toml")
    if beside.is_file():
        return Schema.from_toml(beside), beside.parent
    return None, path.parent


def read_table(path: str | Path, *, encoding: str | None = None) -> pd.DataFrame:
    """Read a data file as it is (every column, CSV / TSV values as strings), or raise a `DataError`.

    Checks that the file exists, is readable, not empty, not larger than `MAX_FILE_BYTES`, decodes in the
    given encoding (default strict UTF-8), parses, has no duplicated column names and at least one data row.
    """
    path = Path(path)
    fmt = _check_file(path)
    enc = _encoding(encoding)
    try:
        if fmt in ("csv", "tsv"):
            frame = _read_delimited(path, "," if fmt == "csv" else "\t", enc)
        elif fmt == "jsonl":
            frame = _read_jsonl(path, enc)
        else:
            frame = _read_parquet(path)
    except UnicodeDecodeError as exc:
        raise DataError(_decode_error_message(path, enc, exc)) from None
    except PermissionError:
        raise DataError(f"{path} cannot be read: permission denied") from None
    if frame.shape[1] == 0:
        raise DataError(f"{path} has no columns; a data file needs a header row and at least one record")
    if len(frame) == 0:
        raise DataError(f"{path} has a header but no data rows; it needs at least one record")
    return frame


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


def _megabytes(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def _encoding(encoding: str | None) -> str:
    """The codec to read with; UTF-8 becomes utf-8-sig so a byte-order mark is skipped rather than kept."""
    if not encoding:
        return "utf-8-sig"
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise ConfigError(f"unknown text encoding '{encoding}'; for example: utf-8, latin-1, cp1252") from None
    return "utf-8-sig" if name == "utf-8" else encoding


def _decode_error_message(path: Path, encoding: str, exc: UnicodeDecodeError) -> str:
    where = _locate_decode_error(path, encoding)
    label = "UTF-8" if encoding == "utf-8-sig" else encoding
    if where is None:
        detail = f"{exc.reason}"
    else:
        offset, line, column, bad = where
        detail = f"byte {bad} at line {line}, column {column} (byte offset {offset} from the start) cannot be decoded"
    return (
        f"{path} is not valid {label} text: {detail}. If it was saved by Excel or an older program, give its "
        "encoding: --encoding latin-1 (or cp1252); in Python, load_dataset(..., encoding='latin-1')"
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


def _read_delimited(path: Path, sep: str, encoding: str) -> pd.DataFrame:
    """CSV / TSV with every value as a string and only empty cells missing (so 'NA' or 'null' stay text)."""
    header = _raw_header(path, sep, encoding)
    _reject_duplicates(path, [h for h in header if h.strip()], "header")
    with warnings.catch_warnings():
        # With index_col=False pandas would silently drop surplus fields of the first row; make that an error.
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            return pd.read_csv(
                path, sep=sep, dtype=str, keep_default_na=False, na_values=[""], encoding=encoding,
                encoding_errors="strict", index_col=False,
            )
        except pd.errors.EmptyDataError:
            raise DataError(f"{path} has no header row and no data; it needs a header row and at least one record") from None
        except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
            raise DataError(_malformed_csv_message(path, sep, encoding, len(header), exc)) from None


def _raw_header(path: Path, sep: str, encoding: str) -> list[str]:
    """The header as written (pandas renames a duplicated 'a' to 'a.1', so duplicates are found here)."""
    with path.open(encoding=encoding, errors="strict", newline="") as f:
        return next(csv.reader(f, delimiter=sep), [])


def _malformed_csv_message(path: Path, sep: str, encoding: str, n_header: int, exc: Exception) -> str:
    kind = "CSV" if sep == "," else "TSV"
    with path.open(encoding=encoding, errors="strict", newline="") as f:
        reader = csv.reader(f, delimiter=sep)
        next(reader, None)
        for row_number, fields in enumerate(reader, start=1):
            if len(fields) > n_header:
                return (
                    f"{path} is not well-formed {kind}: row {row_number} (line {reader.line_num}) has {len(fields)} "
                    f"fields but the header has {n_header} ({ROW_CONVENTION}); every row needs at most as many "
                    "fields as the header — check for an unquoted separator inside a value"
                )
    return f"{path} is not well-formed {kind}: {str(exc).strip()}"


def _reject_duplicates(path: Path, names: list[str], where: str) -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise DataError(
                f"{path}: the column name '{n}' appears more than once in the {where}; every column needs a unique name"
            )
        seen.add(n)


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
            if not isinstance(obj, dict):
                raise DataError(
                    f"{path}: line {line_number} holds a JSON {type(obj).__name__}, not an object; "
                    'JSON Lines needs one object per line, like {"text": "...", "rating": 4}'
                )
            records.append(obj)
    if not records:
        raise DataError(f"{path} has no records (only blank lines); it needs at least one JSON object")
    return pd.DataFrame.from_records(records)


def _read_parquet(path: Path) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        _reject_duplicates(path, list(pf.schema_arrow.names), "Parquet schema")
        table = pf.read()
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, PermissionError):
            raise
        raise DataError(f"{path} is not a readable Parquet file ({exc}); is it corrupt or truncated?") from None
    return table.to_pandas()


# ---------------------------------------------------------------------------------------------------------------
# Validation and conversion


def validate(frame: pd.DataFrame, schema: Schema, source: str) -> None:
    """Raise a `DataError` if ``frame`` (as read from ``source``) cannot be used with ``schema``.

    Checks: unique column names; every schema column present; the text column holds text and is not all
    empty; author / document columns have no missing values; count fields hold whole numbers ≥ 0 and
    continuous fields finite numbers, with no missing values; no structured field is constant (when there is
    more than one record). Messages name ``source``, the column, the row (counted from 1 at the first record,
    header not counted) and what is accepted.
    """
    _conformed(frame, schema, source, release=True)


def _conformed(frame: pd.DataFrame, schema: Schema, source: str, *, release: bool) -> pd.DataFrame:
    """The schema's columns of ``frame``, validated and converted to their types, with a fresh RangeIndex.

    For external records (``release=False``) only the text and author columns are required; fields are kept
    if present, and a field may be constant.
    """
    _check_unique_columns(frame, source)
    required = schema.columns if release else [schema.text, schema.author]
    _check_columns_present(frame, schema, required, source)
    columns = [c for c in schema.columns if c in frame.columns and (release or c != schema.document)]
    data = frame[columns].reset_index(drop=True)
    out: dict[str, pd.Series] = {schema.text: _text_column(data[schema.text], schema.text, source)}
    for role, col in (("author", schema.author), ("document", schema.document)):
        if col is not None and col in data.columns:
            out[col] = _label_column(data[col], col, role, source)
    for spec in schema.fields:
        if spec.name in data.columns:
            out[spec.name] = _field_column(data[spec.name], spec, source)
            if release and len(data) > 1:
                _check_not_constant(out[spec.name], spec.name, source)
    return pd.DataFrame(out, columns=columns)


def _check_unique_columns(frame: pd.DataFrame, source: str) -> None:
    dup = frame.columns[frame.columns.duplicated()]
    if len(dup):
        raise DataError(f"{source}: the column name '{dup[0]}' appears more than once; every column needs a unique name")


def _check_columns_present(frame: pd.DataFrame, schema: Schema, required: list[str | None], source: str) -> None:
    roles = {schema.text: "text column", schema.author: "author column", schema.document: "document column"}
    have = [str(c) for c in frame.columns]
    for col in required:
        if col is None or col in frame.columns:
            continue
        role = roles.get(col, "structured field")
        hint = _close_matches(col, have)
        raise DataError(
            f"{source} has no column '{col}' (the schema's {role}){hint}; the file's columns are: {', '.join(have)}"
        )


def _close_matches(name: str, columns: list[str]) -> str:
    same_case = [c for c in columns if c.lower() == name.lower()]
    matches = same_case + [c for c in difflib.get_close_matches(name, columns, n=3, cutoff=0.6) if c not in same_case]
    return f"; did you mean {' or '.join(repr(m) for m in matches[:3])}?" if matches else ""


def _row(i: int) -> str:
    return f"row {i + 1}"


def _show(value: Any) -> str:
    """A value as quoted in a message, shortened."""
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 60 else text[:56] + "...'"


def _text_column(col: pd.Series, name: str, source: str) -> pd.Series:
    """Text as str; missing becomes ''. Rejects numbers, non-string values and an all-empty column."""
    present = col[col.notna()]
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
        _reject_text(name, "numbers" if not pd.api.types.is_bool_dtype(col) else "true/false values", present, source)
    is_str = _is_str(present)
    if len(present) and is_str.mean() < 0.5:
        _reject_text(name, "non-text values", present[~is_str], source)
    strings = present[is_str]
    numeric = pd.to_numeric(strings, errors="coerce").notna()
    if len(strings) and numeric.mean() > 0.5:
        _reject_text(name, "numbers", strings[numeric], source)
    text = col.fillna("").astype(str)
    if not text.str.strip().ne("").any():
        raise DataError(f"{source}: the text column '{name}' is empty in every row; choose a column of free text")
    return text


def _reject_text(name: str, what: str, values: pd.Series, source: str) -> None:
    first = _show(values.iloc[0]) if len(values) else "none"
    raise DataError(
        f"{source}: column '{name}' was chosen as the text column but holds {what} (first value {first}); "
        "choose a column of free text"
    )


def _is_str(col: pd.Series) -> pd.Series:
    """Which values are Python strings (missing values are not)."""
    if pd.api.types.is_string_dtype(col.dtype) and not pd.api.types.is_object_dtype(col.dtype):
        return col.notna()
    return col.map(lambda v: isinstance(v, str)).astype(bool)


def _n_distinct(col: pd.Series) -> int:
    """Distinct values, missing counted as one; unhashable values (JSON lists) are compared as text."""
    try:
        return int(col.nunique(dropna=False))
    except TypeError:
        return int(col.map(repr).nunique(dropna=False))


def _label_column(col: pd.Series, name: str, role: str, source: str) -> pd.Series:
    """Author / document ids as str; a missing id is an error (it would merge unrelated records)."""
    i = _first_bad(col.isna().to_numpy())
    if i is not None:
        raise DataError(
            f"{source}: column '{name}' (the {role} column) has no value in {_row(i)} ({ROW_CONVENTION}); "
            f"every record needs a {role} — fill it in, or load without a {role} column"
        )
    return _as_strings(col)


def _as_strings(col: pd.Series) -> pd.Series:
    """Values as str; whole floats (1.0, as pandas stores integers next to gaps) are written as integers."""
    if pd.api.types.is_string_dtype(col.dtype) and not pd.api.types.is_object_dtype(col.dtype):
        return col.astype(str)
    return col.map(_category_string).astype(str)


def _category_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _field_column(col: pd.Series, spec: FieldSpec, source: str) -> pd.Series:
    if spec.kind == "categorical":
        return _as_strings(col.where(col.notna(), MISSING_CATEGORY))
    if spec.kind == "count":
        return _count_column(col, spec.name, source)
    return _continuous_column(col, spec.name, source)


_COUNT_ACCEPTED = "accepted: a whole number ≥ 0"
_CONTINUOUS_ACCEPTED = "accepted: a finite number"


def _numbers(col: pd.Series) -> pd.Series:
    """A float view of ``col``: numbers as they are, numeric strings parsed, anything else NaN."""
    if pd.api.types.is_bool_dtype(col):
        return pd.Series(np.nan, index=col.index)
    if pd.api.types.is_numeric_dtype(col):
        return col.astype("float64")
    try:
        return pd.to_numeric(col, errors="coerce").astype("float64")
    except (TypeError, ValueError):
        return col.map(_float_or_nan).astype("float64")


def _float_or_nan(value: Any) -> float:
    if isinstance(value, bool):
        return np.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.nan


def _first_bad(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if len(hits) else None


def _field_problem(source: str, name: str, kind: str, i: int, problem: str, accepted: str) -> DataError:
    return DataError(f"{source}: column '{name}' (a {kind} field), {_row(i)}: {problem}; {accepted} ({ROW_CONVENTION})")


def _check_numbers(col: pd.Series, nums: pd.Series, name: str, kind: str, accepted: str, source: str) -> None:
    i = _first_bad(col.isna().to_numpy())
    if i is not None:
        raise _field_problem(source, name, kind, i, "the value is missing", accepted)
    i = _first_bad(nums.isna().to_numpy())
    if i is not None:
        raise _field_problem(source, name, kind, i, f"{_show(col.iloc[i])} is not a number", accepted)
    i = _first_bad(~np.isfinite(nums.to_numpy()))
    if i is not None:
        raise _field_problem(source, name, kind, i, f"{_show(col.iloc[i])} is not a finite number", accepted)


def _count_column(col: pd.Series, name: str, source: str) -> pd.Series:
    nums = _numbers(col)
    _check_numbers(col, nums, name, "count", _COUNT_ACCEPTED, source)
    values = nums.to_numpy()
    i = _first_bad(values != np.floor(values))
    if i is not None:
        raise _field_problem(source, name, "count", i, f"{_show(col.iloc[i])} is not a whole number", _COUNT_ACCEPTED)
    i = _first_bad(values < 0)
    if i is not None:
        raise _field_problem(source, name, "count", i, f"{_show(col.iloc[i])} is negative", _COUNT_ACCEPTED)
    if pd.api.types.is_integer_dtype(col):
        return col.astype("int64")
    exact = pd.to_numeric(col, errors="coerce") if not pd.api.types.is_numeric_dtype(col) else col
    return exact.astype("int64") if pd.api.types.is_integer_dtype(exact) else nums.astype("int64")


def _continuous_column(col: pd.Series, name: str, source: str) -> pd.Series:
    nums = _numbers(col)
    _check_numbers(col, nums, name, "continuous", _CONTINUOUS_ACCEPTED, source)
    return nums.astype("float64")


def _check_not_constant(col: pd.Series, name: str, source: str) -> None:
    if _n_distinct(col) <= 1:
        raise DataError(
            f"{source}: constant column '{name}' (every row holds {_show(col.iloc[0])}); a field with a single "
            "value carries no information — drop it or choose another field"
        )


def require_records(dataset: Dataset, n: int, what: str) -> None:
    """Raise a `DataError` unless ``dataset`` has at least ``n`` records; ``what`` names the method or measure."""
    m = dataset.n_records
    if m < n:
        noun = "record" if n == 1 else "records"
        raise DataError(f"{what} needs at least {n} {noun}, the dataset has {m}")


# ---------------------------------------------------------------------------------------------------------------
# External records


def _load_external_file(path: Path, schema: Schema, frame: pd.DataFrame, encoding: str | None) -> pd.DataFrame:
    """The intruder's records from a second file: text, author and any schema fields it holds."""
    if schema.author is None:
        raise ConfigError(
            f"the schema names an external file ({path}) but no author column; external records are matched to "
            "released records by author, so set 'author' in the schema"
        )
    external = _conformed(read_table(path, encoding=encoding), schema, str(path), release=False)
    released = set(frame[schema.author])
    if not external[schema.author].isin(released).any():
        sample = ", ".join(repr(a) for a in external[schema.author].unique()[:3])
        raise DataError(
            f"{path}: none of the external authors (for example {sample}) appears in the release file's author "
            f"column '{schema.author}'; the external file must hold other texts by some of the same authors"
        )
    return external


def split_external(
    frame: pd.DataFrame, schema: Schema, spec: ExternalSpec | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Move held-out records of some authors out of ``frame``: returns (release, external).

    Authors with at least ``min_records`` records are sorted; up to ``max_authors`` of them are chosen with
    ``numpy.random.default_rng(seed)``, and for each chosen author (in sorted order) ``holdout_per_author`` of
    their records are drawn with the same generator. The external frame keeps the text, the author and the
    key fields (what an intruder may know), never sensitive fields. Both frames get a fresh RangeIndex.
    ``spec`` defaults to ``schema.external``.
    """
    spec = spec or schema.external
    if spec is None or spec.file:
        raise ConfigError("split_external needs a hold-out rule ([external] without 'file') in the schema")
    if schema.author is None:
        raise ConfigError("the hold-out rule needs an author column (who wrote each record); set 'author' in the schema")
    authors = frame[schema.author].astype(str).to_numpy()
    counts = pd.Series(authors).value_counts()
    eligible = sorted(counts.index[counts >= spec.min_records])
    if not eligible:
        raise DataError(
            f"no author has at least {spec.min_records} records, so the hold-out rule moves nothing; "
            "lower external.min_records or give an external file"
        )
    rng = np.random.default_rng(spec.seed)
    chosen = rng.choice(len(eligible), size=min(spec.max_authors, len(eligible)), replace=False)
    held: list[int] = []
    for a in sorted(eligible[i] for i in chosen):
        rows = np.flatnonzero(authors == a)
        held.extend(int(r) for r in rng.choice(rows, size=spec.holdout_per_author, replace=False))
    mask = np.zeros(len(frame), dtype=bool)
    mask[held] = True
    keys = [f.name for f in schema.fields_with_role("key")]
    external = frame.loc[mask, [schema.text, schema.author, *keys]].reset_index(drop=True)
    return frame.loc[~mask].reset_index(drop=True), external


# ---------------------------------------------------------------------------------------------------------------
# Schema inference


def _normalized(name: Any) -> str:
    return str(name).strip().lower().replace(" ", "_").replace("-", "_")


def infer_schema(frame: pd.DataFrame) -> Schema:
    """A schema guessed from the columns: the text, author and document columns, and a kind for every field.

    Text: a column named text / review / review_text / description / tweet / content / body (any case, spaces
    as underscores) whose mean length is at least 20 characters, else the string column with the largest mean
    length. Author: a column named author / user / user_id / name / username / screen_name / reviewer_id /
    reviewerid whose values repeat. Document: a column named document / doc_id / call_id. Other columns become
    fields with role "other": categorical for strings, booleans and integers with at most 20 distinct values;
    count for other non-negative integers; continuous for other numbers. Left out: columns with a single
    distinct value, and numeric columns with gaps and more than 20 distinct values (a count or continuous
    field may not have missing values).
    """
    numeric = {c: _numeric_view(frame[c]) for c in frame.columns}
    text = _infer_text_column(frame, numeric)
    author = _named_column(frame, _AUTHOR_NAMES, exclude={text}, repeating=True)
    document = _named_column(frame, _DOCUMENT_NAMES, exclude={text, author}, repeating=False)
    fields = []
    for c in frame.columns:
        if c in (text, author, document) or _n_distinct(frame[c]) <= 1:
            continue
        kind = _infer_kind(frame[c], numeric[c])
        if kind is not None:
            fields.append(FieldSpec(str(c), kind, "other"))
    return Schema(text=str(text), author=author, document=document, fields=tuple(fields))


def _numeric_view(col: pd.Series) -> pd.Series | None:
    """Numbers of a numeric column, or of a string column whose every value parses as a number; else None."""
    if pd.api.types.is_bool_dtype(col):
        return None
    if pd.api.types.is_numeric_dtype(col):
        return col.astype("float64")
    present = col[col.notna()]
    if len(present) == 0 or not _is_str(present).all():
        if len(present) == 0 or not present.map(lambda v: isinstance(v, (str, int, float))).all():
            return None
    if _numbers(present.iloc[:100]).isna().any():  # cheap early exit for text columns
        return None
    nums = _numbers(col)
    return nums if nums.notna().sum() == len(present) else None


def _mean_length(col: pd.Series) -> float:
    """Mean length in characters, counting missing and non-string values as 0."""
    if len(col) == 0:
        return 0.0
    return float(col.where(_is_str(col), "").astype(str).str.len().mean())


def _infer_text_column(frame: pd.DataFrame, numeric: dict[Any, pd.Series | None]) -> Any:
    candidates = [
        c for c in frame.columns
        if numeric[c] is None and _is_str(frame[c]).mean() >= 0.5
    ]
    if not candidates:
        raise DataError(
            "no column holds free text (every column is numeric or empty); give a schema that names the text column"
        )
    lengths = {c: _mean_length(frame[c]) for c in candidates}
    for c in candidates:
        if _normalized(c) in _TEXT_NAMES and lengths[c] >= _MIN_PREFERRED_TEXT_LENGTH:
            return c
    return max(candidates, key=lambda c: lengths[c])  # max keeps the first of equal lengths


def _named_column(frame: pd.DataFrame, names: tuple[str, ...], exclude: set[Any], repeating: bool) -> str | None:
    for c in frame.columns:
        if c in exclude or _normalized(c) not in names:
            continue
        if frame[c].isna().any():
            continue  # a missing id would merge unrelated records; validation rejects it
        if not repeating or _n_distinct(frame[c]) < len(frame):
            return str(c)
    return None


def _infer_kind(col: pd.Series, nums: pd.Series | None) -> str | None:
    if nums is None:
        return "categorical"
    present = nums.dropna()
    integral = bool((present == np.floor(present)).all())
    if integral and present.nunique() <= _MAX_CATEGORICAL_INTEGERS:
        return "categorical"
    if nums.isna().any():
        return None
    if integral and present.min() >= 0:
        return "count"
    return "continuous"
