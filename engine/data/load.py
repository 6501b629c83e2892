"""Loading a dataset: a demo (by name) or a data file, validated against its schema (given, found beside the
file, or inferred), with the intruder's external records attached.

The parts live beside this module: `readers` (files and formats), `validate` (conforming a frame to a
Schema), `infer` (a schema guessed from the columns), `external` (the intruder's records) and `demos` (the
demo registry).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pandas as pd

from engine.data.dataset import Dataset, DroppedRows, LeftOut
from engine.data.delimited import ROW_CONVENTION, SHOWN_ROWS
from engine.data.demos import DEMOS_DIR, demo_names, is_demo
from engine.data.external import load_external_file, split_external
from engine.data.infer import infer_with_reasons, kind_of
from engine.data.readers import read_file
from engine.data.schema import FieldSpec, Schema
from engine.data.validate import conformed
from engine.errors import DataError


def load_dataset(
    source: str | Path,
    schema: Schema | str | Path | None = None,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    bad_rows: str = "error",
    name: str | None = None,
) -> Dataset:
    """Load a demo (by name) or a data file, validate it against its schema and attach the external records.

    Parameters
    ----------
    source
        A demo name (see `demo_names`) or a path to a .csv, .tsv, .parquet, .jsonl or .ndjson file.
    schema
        A `Schema`, or a path to a schema TOML file. When None: the demo's ``schema.toml``; for a file, a
        ``<stem>.schema.toml`` beside it; otherwise one inferred with `infer_with_reasons`.
    encoding
        Text encoding of CSV / TSV / JSON Lines files; default strict UTF-8 (a byte-order mark is accepted).
    delimiter
        Of CSV / TSV files: one character, or comma, semicolon, tab, pipe; default the one the file's first
        records are written with.
    bad_rows
        "error" (the default): a CSV / TSV row whose number of fields is not the header's is an error naming
        the rows; "drop": such rows are left out, and `Dataset.dropped` names them.
    name
        Name of the dataset; default the demo name or the file's stem.

    Returns
    -------
    Dataset
        ``frame`` holds only the schema's columns, in schema order, with a fresh RangeIndex.
    """
    path, demo = _resolve_source(source)
    resolved, base_dir = _resolve_schema(schema, path, demo)
    read = read_file(path, encoding=encoding, delimiter=delimiter, bad_rows=bad_rows)
    raw = read.frame
    dropped = [DroppedRows(path.name, read.dropped)] if read.dropped else []
    if resolved is None:
        resolved, reasons = infer_with_reasons(raw)
    else:
        reasons = {str(c): NOT_IN_SCHEMA for c in raw.columns if c not in resolved.columns}
    frame = conformed(raw, resolved, str(path), release=True)
    external = None
    if resolved.external is not None:
        if resolved.external.file:
            external_path = base_dir / resolved.external.file
            external, left = load_external_file(external_path, resolved, frame, encoding, delimiter, bad_rows)
            dropped += [DroppedRows(external_path.name, left)] if left else []
        else:
            frame, external = split_external(frame, resolved)
    return Dataset(
        name=name or demo or path.stem,
        frame=frame,
        schema=resolved,
        external=external,
        source=demo or str(path.resolve()),
        left_out=_left_out(raw, reasons),
        dropped=tuple(dropped),
    )


def dropped_note(dataset: Dataset) -> str:
    """What was left out of the files for rows of the wrong length ("" for nothing): the rows of each file."""
    parts = []
    for d in dataset.dropped:
        shown = ", ".join(map(str, d.rows[:SHOWN_ROWS])) + (" …" if len(d.rows) > SHOWN_ROWS else "")
        noun = "row" if len(d.rows) == 1 else "rows"
        parts.append(f"{len(d.rows):,} {noun} of {d.file} ({noun} {shown})")
    if not parts:
        return ""
    return f"left out {' and '.join(parts)}: their number of fields is not the header's ({ROW_CONVENTION})"


NOT_IN_SCHEMA = "the schema does not name it"
"""Why a column is left out when the data came with a schema."""


def _left_out(raw: pd.DataFrame, reasons: dict[str, str]) -> tuple[LeftOut, ...]:
    by_name = {str(c): c for c in raw.columns}
    return tuple(LeftOut(name, why, kind_of(raw[by_name[name]])) for name, why in reasons.items())


def left_out_hint(dataset: Dataset | None, message: str) -> str:
    """For a message that names (in quotes) a column the dataset left out of the file, or one of its free-text
    columns besides the text, why it was left out and the schema that keeps it as a field, ready to save; "" when
    the message names none.

    A steward who names such a column on the command line (``--metadata ticker``) is otherwise told only that the
    dataset has no column of that name, while the file plainly has one."""
    if dataset is None:
        return ""
    schema = dataset.schema
    named = [
        c
        for c in (*dataset.left_out, *_other_text(dataset))
        if f"'{c.column}'" in message or f'"{c.column}"' in message
    ]
    if not named:
        return ""
    kept = replace(
        schema,
        fields=schema.fields + tuple(FieldSpec(c.column, c.kind, "sensitive") for c in named),
        other_text=tuple(c for c in schema.other_text if c not in {n.column for n in named}),
    )
    source = Path(dataset.source)
    # a schema the steward gave (beside the file or with --schema) is edited where it is; an inferred one saved
    given = any(c.why == NOT_IN_SCHEMA for c in named)
    where = f" as {schema_beside(source)} (read with the data) or" if source.is_file() and not given else " and"
    lines = [
        f"'{c.column}' is a column of the file that {dataset.name} "
        + ("leaves out of every release" if c.why == OTHER_TEXT else "leaves out")
        + f": {c.why}."
        for c in named
    ]
    lines.append(
        f"To keep it as a field, save this schema{where} give it with --schema: the schema in use, with "
        + ", ".join(f"'{c.column}'" for c in named)
        + " as sensitive (what a method protects; or key: what an intruder may know; or other):"
    )
    return "\n" + "\n".join(lines) + "\n\n" + kept.to_toml()


OTHER_TEXT = "free text besides the text column (the schema's other_text), which the methods do not protect"
"""Why a free-text column besides the text is no field."""


def _other_text(dataset: Dataset) -> list[LeftOut]:
    """The dataset's free-text columns besides the text, as columns left out of the fields."""
    return [LeftOut(c, OTHER_TEXT, "categorical") for c in dataset.schema.other_text]


def schema_beside(path: Path) -> Path:
    """The schema file read beside a data file: ``<stem>.schema.toml``."""
    return path.with_name(f"{path.stem}.schema.toml")


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
    beside = DEMOS_DIR / demo / "schema.toml" if demo else schema_beside(path)
    if beside.is_file():
        return Schema.from_toml(beside), beside.parent
    return None, path.parent


def require_records(dataset: Dataset, n: int, what: str) -> None:
    """Raise a `DataError` unless ``dataset`` has at least ``n`` records; ``what`` names the method or measure."""
    m = dataset.n_records
    if m < n:
        noun = "record" if n == 1 else "records"
        raise DataError(f"{what} needs at least {n} {noun}, the dataset has {m}")
