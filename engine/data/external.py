"""The intruder's external records: other texts by some of the released authors, from a second file or held out
of the data file by the schema's hold-out rule.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from engine.data.readers import read_file
from engine.data.schema import ExternalSpec, Schema
from engine.data.validate import conformed
from engine.errors import ConfigError, DataError


def load_external_file(
    path: Path,
    schema: Schema,
    frame: pd.DataFrame,
    encoding: str | None,
    delimiter: str | None = None,
    bad_rows: str = "error",
) -> tuple[pd.DataFrame, tuple[int, ...]]:
    """The intruder's records from a second file (text, author and any schema fields it holds), read as the data
    file is; and the rows left out for their number of fields (``bad_rows="drop"``)."""
    if schema.author is None:
        raise ConfigError(
            f"the schema names an external file ({path}) but no author column; external records are matched to "
            "released records by author, so set 'author' in the schema"
        )
    read = read_file(path, encoding=encoding, delimiter=delimiter, bad_rows=bad_rows)
    external = conformed(read.frame, schema, str(path), release=False)
    released = set(frame[schema.author])
    if not external[schema.author].isin(released).any():
        sample = ", ".join(repr(a) for a in external[schema.author].unique()[:3])
        raise DataError(
            f"{path}: none of the external authors (for example {sample}) appears in the release file's author "
            f"column '{schema.author}'; the external file must hold other texts by some of the same authors"
        )
    return external, read.dropped


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
        raise ConfigError(
            "the hold-out rule needs an author column (who wrote each record); set 'author' in the schema"
        )
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
