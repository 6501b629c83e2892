"""Loading a dataset: a demo (by name) or a data file, validated against its schema (given, found beside the
file, or inferred), with the intruder's external records attached.

The parts live beside this module: `readers` (files and formats), `validate` (conforming a frame to a
Schema), `infer` (a schema guessed from the columns), `external` (the intruder's records) and `demos` (the
demo registry).
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.data.dataset import Dataset
from engine.data.demos import DEMOS_DIR, demo_names, is_demo
from engine.data.external import load_external_file, split_external
from engine.data.infer import infer_schema
from engine.data.readers import read_table
from engine.data.schema import Schema
from engine.data.validate import conformed
from engine.errors import DataError


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
    frame = conformed(raw, resolved, str(path), release=True)
    external = None
    if resolved.external is not None:
        if resolved.external.file:
            external = load_external_file(base_dir / resolved.external.file, resolved, frame, encoding)
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


def require_records(dataset: Dataset, n: int, what: str) -> None:
    """Raise a `DataError` unless ``dataset`` has at least ``n`` records; ``what`` names the method or measure."""
    m = dataset.n_records
    if m < n:
        noun = "record" if n == 1 else "records"
        raise DataError(f"{what} needs at least {n} {noun}, the dataset has {m}")
