"""Loading data on the Data page: demos, files and uploads (kept in a private folder in the cache and deleted
after), and the role mapping that becomes a Schema.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, cast

import pandas as pd
import streamlit as st

from dashboard.caching import demo_slot
from engine.atomic import atomic_path
from engine.data.dataset import Dataset
from engine.data.delimited import BAD_ROWS_ADVICE, DELIMITERS, delimiter_advice
from engine.data.demos import DEMOS_DIR, DemoInfo, is_demo, list_demos
from engine.data.infer import TEXT_COLUMN_ADVICE, infer_with_reasons, likely_text_column
from engine.data.load import load_dataset, schema_beside
from engine.data.readers import SUGGESTED_ENCODINGS, UTF16_ADVICE, TableRead, encoding_advice, read_file, read_table
from engine.data.schema import ExternalSpec, FieldKind, FieldRole, FieldSpec, Schema
from engine.errors import ConfigError, DataError, TextsdcError
from engine.paths import cache_dir

DROP = "drop"
"""The role in the Data page's field table that leaves a column out of the dataset."""
DIRECT = "direct identifier"
"""The role in the Data page's field table of a column naming each record's people or organization
(`Schema.direct_identifiers`)."""
OTHER_TEXT = "other free text"
"""The role in the Data page's field table of a free-text column besides the text (`Schema.other_text`)."""
OTHER_TEXT_NOTE = {
    "drop": "free text besides the text column: kept with the data, but left out of every release, since the methods "
    'protect the text column only ([release] other_text = "protect" in a schema releases it guarded)',
    "protect": "free text besides the text column: released after the release guard (formats and identifier "
    "names replaced), and redacted like the text where the method is redaction (the schema's [release] "
    'other_text = "protect")',
}
"""Why an other free-text column is treated as it is, by the schema's ``[release] other_text``."""


@st.cache_resource(show_spinner=False, ttl=600)
def demo_infos() -> list[DemoInfo]:
    """The demo datasets with titles, descriptions, licences and record counts."""
    return list_demos()


UPLOAD_TYPES = ("csv", "tsv", "parquet", "jsonl", "ndjson")
"""The file types the dashboard's uploaders accept (the readers of `engine.data.load`)."""


@dataclass(frozen=True)
class Origin:
    """Where the dataset in use came from, as needed to write the CLI command that replays an export."""

    kind: Literal["demo", "file", "upload"]
    data: str
    encoding: str | None = None
    custom_schema: bool = False
    delimiter: str | None = None
    bad_rows: str = "error"


def load_demo(name: str) -> Dataset:
    """A demo dataset with its own schema, loaded once per process."""
    return demo_slot(name).get(lambda: load_dataset(name))


def load_source(
    source: str, encoding: str | None = None, delimiter: str | None = None, bad_rows: str = "error"
) -> tuple[Dataset, Origin]:
    """The dataset named on the command line: a demo name or a file path (read with ``encoding``,
    ``delimiter`` and ``bad_rows``)."""
    if is_demo(source):
        return load_demo(source), Origin("demo", source)
    dataset = load_dataset(source, encoding=encoding, delimiter=delimiter, bad_rows=bad_rows)
    return dataset, Origin("file", str(source), encoding, delimiter=delimiter, bad_rows=bad_rows)


def file_table(path: str, encoding: str | None, delimiter: str | None = None, bad_rows: str = "error") -> TableRead:
    """Every column of the file given at start, as read (for the role mapping), with the columns whose lists or
    records were read as text and the rows left out; read again when the file changes."""
    stat = Path(path).stat()
    return _file_table(
        str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size, encoding or "", delimiter or "", bad_rows
    )


@st.cache_data(show_spinner=False, max_entries=2)
def _file_table(path: str, _mtime: int, _size: int, encoding: str, delimiter: str, bad_rows: str) -> TableRead:
    return read_file(path, encoding=encoding or None, delimiter=delimiter or None, bad_rows=bad_rows)


def file_schema(path: str) -> Schema | None:
    """The schema saved beside a data file (``<stem>.schema.toml``), which loading it uses; None if there is none."""
    beside = schema_beside(Path(path))
    return Schema.from_toml(beside) if beside.is_file() else None


def load_file_with_schema(
    path: str, schema: Schema, encoding: str | None, delimiter: str | None = None, bad_rows: str = "error"
) -> Dataset:
    """The file given at start under a schema chosen on the Data page."""
    return load_dataset(path, schema, encoding=encoding, delimiter=delimiter, bad_rows=bad_rows)


def demo_table(name: str) -> pd.DataFrame:
    """Every column of a demo's data file, as read (for the role mapping)."""
    return _demo_table(name)


@st.cache_data(show_spinner=False, max_entries=8)
def _demo_table(name: str) -> pd.DataFrame:
    return read_table(DEMOS_DIR / name / "data.csv")


def demo_schema(name: str) -> Schema:
    return Schema.from_toml(DEMOS_DIR / name / "schema.toml")


def _safe_name(filename: str) -> str:
    """The uploaded file's base name (the browser may send a path); its extension selects the reader."""
    name = Path(filename.replace("\\", "/")).name.strip() or "upload.csv"
    return name


def _write_uploads(folder: Path, files: list[tuple[str, bytes]]) -> list[Path]:
    paths = []
    for filename, data in files:
        path = folder / _safe_name(filename)
        path.write_bytes(data)
        paths.append(path)
    return paths


def _upload_folder() -> tempfile.TemporaryDirectory:
    """A private temporary folder inside the textsdc cache; uploads never go elsewhere and are deleted after."""
    base = cache_dir() / "uploads"
    base.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(dir=base)


def save_background(filename: str, data: bytes) -> Path:
    """An uploaded background corpus kept in the textsdc cache (``backgrounds/<checksum>/<name>``), where the
    attacks read it while the pages sweep and the replay command names it; the same bytes are kept once."""
    folder = cache_dir() / "backgrounds" / hashlib.sha256(data).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / _safe_name(filename)
    if not path.is_file():
        with atomic_path(path) as tmp:
            tmp.write_bytes(data)
    return path


def upload_table(
    filename: str, data: bytes, encoding: str | None, delimiter: str | None = None, bad_rows: str = "error"
) -> TableRead:
    """Every column of an uploaded file, as read (for the role mapping), with the columns whose lists or records
    were read as text, the delimiter and the rows left out; DataError if it cannot be read."""
    key = (hashlib.sha256(data).hexdigest(), _safe_name(filename), encoding or "", delimiter or "", bad_rows)
    return _upload_table(key, filename, data)


@st.cache_data(show_spinner=False, max_entries=4)
def _upload_table(key: tuple[str, str, str, str, str], filename: str, _data: bytes) -> TableRead:
    _, _, encoding, delimiter, bad_rows = key
    with _upload_folder() as tmp:
        (path,) = _write_uploads(Path(tmp), [(filename, _data)])
        with _as_uploaded({path: filename}):
            return read_file(path, encoding=encoding or None, delimiter=delimiter or None, bad_rows=bad_rows)


def upload_encoding_advice(name: str) -> str:
    """`engine.data.readers.encoding_advice` pointing to the page's box, not to the command line."""
    return (
        f"It reads as {name} (as Excel or an older program saves): type {name} in the Text encoding box, and "
        "the file is read again with it"
    )


UPLOAD_UTF16_ADVICE = (
    "Type its encoding in the Text encoding box: utf-16-le or utf-16-be (UTF-16 without a byte-order mark)"
)
DELIMITER_CHOICES: dict[str, str] = {"": "find it from the file", **DELIMITERS}
"""The Data page's Delimiter box: the delimiter (or "" to find it) and how the box names it."""
UPLOAD_BAD_ROWS_ADVICE = "choose “leave them out” under Rows of the wrong length to read the file without them"


def upload_delimiter_advice(delimiter: str) -> str:
    """`engine.data.delimited.delimiter_advice` pointing to the page's box, not to the command line."""
    return f"choose {DELIMITER_CHOICES.get(delimiter, repr(delimiter))} in the Delimiter box"


@contextmanager
def _as_uploaded(names: dict[Path, str]) -> Iterator[None]:
    """An error about uploaded files in the steward's terms: each file by the name it was uploaded under (not the
    private temporary copy the engine read) and the encoding advice pointing to the page's box, not to the
    command line."""
    try:
        yield
    except TextsdcError as exc:
        message = str(exc).replace(UTF16_ADVICE, UPLOAD_UTF16_ADVICE).replace(BAD_ROWS_ADVICE, UPLOAD_BAD_ROWS_ADVICE)
        for name in SUGGESTED_ENCODINGS:
            message = message.replace(encoding_advice(name), upload_encoding_advice(name))
        for d in DELIMITERS:
            message = message.replace(delimiter_advice(d), upload_delimiter_advice(d))
        for path, name in names.items():
            message = message.replace(str(path), f"'{name}'")
        raise type(exc)(message) from None


def load_upload(
    filename: str,
    data: bytes,
    schema: Schema,
    encoding: str | None,
    external: tuple[str, bytes] | None = None,
    delimiter: str | None = None,
    bad_rows: str = "error",
) -> Dataset:
    """Validate an uploaded file (and optional external file) against ``schema``; DataError / ConfigError if not.

    The files are written to a private temporary folder in the cache, loaded, and deleted.
    """
    with _upload_folder() as tmp:
        folder = Path(tmp)
        files = [(filename, data)] + ([external] if external else [])
        paths = _write_uploads(folder, files)
        if external and paths[0].name == paths[1].name:
            raise ConfigError("the external file has the same name as the data file; rename one of them")
        if external:
            schema = replace(schema, external=ExternalSpec(file=paths[1].name))
        with _as_uploaded(dict(zip(paths, [name for name, _ in files]))):
            dataset = load_dataset(
                paths[0],
                schema,
                encoding=encoding or None,
                delimiter=delimiter or None,
                bad_rows=bad_rows,
                name=paths[0].stem,
            )
    return replace(dataset, source=f"upload:{paths[0].name}")


def load_demo_with_schema(name: str, schema: Schema) -> Dataset:
    """A demo under a schema chosen on the Data page (the demo's own one is cached)."""
    if schema == demo_schema(name):
        return load_demo(name)
    return load_dataset(name, schema)


def default_schema_for(table: pd.DataFrame, demo: str | None) -> tuple[Schema, str | None]:
    """The role mapping to start from: the demo's schema, or one inferred from the columns; and, when no column
    surely is the text, why (the mapping then starts from the longest strings' column, for the steward to
    change)."""
    if demo:
        return demo_schema(demo), None
    try:
        return _inferred(table, None)[0], None
    except DataError as exc:
        why = str(exc).replace(TEXT_COLUMN_ADVICE, "choose the text column below")
    return _inferred(table, likely_text_column(table))[0], why


def schema_for_text(table: pd.DataFrame, schema: Schema, text: str, demo: str | None) -> Schema:
    """The schema whose fields the Data page's table starts from once the steward has chosen ``text``: the
    demo's, or the one the data came with while its text column is kept, else one inferred around ``text``
    (so that a column the first guess took for the text comes back as a field, not as dropped)."""
    if demo or text == schema.text:
        return schema
    try:
        return _inferred(table, text)[0]
    except TextsdcError:
        return schema


def field_table(table: pd.DataFrame, schema: Schema, exclude: set[str]) -> pd.DataFrame:
    """One row per column that is not the text, author or document column: its kind, its role (or drop) and,
    for a column dropped, why (the inference's reason, or that the data's schema leaves it out)."""
    fields, reasons = _inference(table, schema.text)
    inferred = {f.name: f.kind for f in fields}
    rows = []
    for col in map(str, table.columns):
        if col in exclude:
            continue
        spec = next((f for f in schema.fields if f.name == col), None)
        if col in schema.direct_identifiers:
            rows.append({"column": col, "kind": inferred.get(col, "categorical"), "role": DIRECT, "note": ""})
        elif col in schema.other_text:
            note = OTHER_TEXT_NOTE[schema.other_text_release]
            rows.append({"column": col, "kind": "categorical", "role": OTHER_TEXT, "note": note})
        elif spec is not None:
            rows.append({"column": col, "kind": spec.kind, "role": spec.role, "note": ""})
        else:
            why = reasons.get(col, "not a field of the schema the data came with")
            rows.append({"column": col, "kind": inferred.get(col, "categorical"), "role": DROP, "note": why})
    return pd.DataFrame(rows, columns=["column", "kind", "role", "note"])


def _inference(table: pd.DataFrame, text: str) -> tuple[tuple[FieldSpec, ...], dict[str, str]]:
    try:
        schema, reasons = _inferred(table, text if text in table.columns else None)
    except TextsdcError:
        return (), {}
    return schema.fields, reasons


@st.cache_data(show_spinner=False, max_entries=16)
def _inferred(table: pd.DataFrame, text: str | None) -> tuple[Schema, dict[str, str]]:
    """`infer_with_reasons`, once per table and text column: the Data page asks for it two or three times a
    rerun (the starting mapping, the fields around the chosen text, the reasons), and on a large upload it takes
    half a second. An error is not kept: it is raised again."""
    return infer_with_reasons(table, text=text)


def build_schema(
    text: str,
    author: str | None,
    document: str | None,
    fields: pd.DataFrame,
    external: ExternalSpec | None,
) -> Schema:
    """The Schema of the Data page's mapping; rows with role "drop" are left out, rows with role "direct
    identifier" name the direct-identifier columns and rows with role "other free text" the free-text columns
    besides the text. ConfigError if inconsistent."""
    rows = [r for r in fields.to_dict(orient="records") if str(r["column"]) not in (text, author, document)]
    specs = [
        FieldSpec(str(r["column"]), cast(FieldKind, str(r["kind"])), cast(FieldRole, str(r["role"])))
        for r in rows
        if r.get("role") not in (DROP, DIRECT, OTHER_TEXT)
    ]
    named = tuple(str(r["column"]) for r in rows if r.get("role") == DIRECT)
    other_text = tuple(str(r["column"]) for r in rows if r.get("role") == OTHER_TEXT)
    if author is not None and author == text:
        raise ConfigError(f"column '{text}' cannot be both the text and the author column")
    if document is not None and document in (text, author):
        raise ConfigError(f"column '{document}' cannot be the document column and another role column")
    return Schema(
        text=text,
        author=author,
        document=document,
        fields=tuple(specs),
        external=external,
        direct_identifiers=named,
        other_text=other_text,
    )


def dataset_counts(dataset: Dataset) -> dict[str, int | None]:
    """Records, authors (None without an author column) and the intruder's external records."""
    return {
        "records": dataset.n_records,
        "authors": None if dataset.authors is None else int(dataset.authors.nunique()),
        "external": 0 if dataset.external is None else len(dataset.external),
    }
