"""The bundle's CSV files, safe to open in a spreadsheet (OWASP "CSV injection").

A spreadsheet reads a cell that begins with =, +, -, @, a tab or a carriage return as a formula: a released text
such as ``=HYPERLINK("http://evil.example","click")`` would open as a live link in a reviewer's sheet. Every such
text cell, column names included, is written with an apostrophe in front, which a spreadsheet shows as text. A
number is written as it is: a negative number in a number column, or a text that is only a number (``-3.5``), is
no formula. The Parquet file keeps every value as released; the manifest counts the cells escaped in each file
(`engine.record.manifest.ReleaseRecord.csv_escaped`) and the report says it.

A carriage return inside a text is a row break to a spreadsheet: the rest of the text would open as a row of its
own, its first cell free to be a formula. The CSV writer quotes a text that holds a line feed but not one that
holds a lone carriage return, so a file with such a text has every text cell quoted (numbers are not); other files
are plain CSV, with quotes only where a cell needs them.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""The characters a spreadsheet starts a formula with (OWASP's list)."""
ESCAPE = "'"
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class SafeCsv:
    """One CSV file as the bundle holds it: its bytes and how many cells were written with the apostrophe."""

    content: bytes
    escaped: int


def formula_like(value: object) -> bool:
    """Whether a spreadsheet would read ``value`` as a formula: a text that begins with a formula character and is
    not a plain number."""
    return isinstance(value, str) and value.startswith(FORMULA_START) and _NUMBER.fullmatch(value) is None


def escaped_cell(value: object) -> object:
    """``value`` with an apostrophe in front when a spreadsheet would read it as a formula, else as it is."""
    return ESCAPE + value if isinstance(value, str) and formula_like(value) else value


def _holds_text(column: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(column.dtype) or isinstance(column.dtype, pd.CategoricalDtype)


def _carriage_return(value: object) -> bool:
    return isinstance(value, str) and "\r" in value


def safe_csv(frame: pd.DataFrame) -> SafeCsv:
    """``frame`` as UTF-8 CSV (no index, ``\\n`` line ends) with every formula-like text cell and column name
    escaped (`escaped_cell`), and every text cell quoted when one holds a carriage return; ``frame`` itself is not
    changed."""
    out = frame.copy()
    names = [str(name) for name in frame.columns]
    escaped = sum(formula_like(name) for name in names)
    quote_texts = any(map(_carriage_return, names))
    for i in range(out.shape[1]):
        column = out.iloc[:, i]
        if not _holds_text(column):
            continue
        values = column.astype(object)
        quote_texts = quote_texts or bool(values.map(_carriage_return).any())
        hits = values.map(formula_like).to_numpy(dtype=bool)
        if hits.any():
            escaped += int(hits.sum())
            out.isetitem(i, values.map(escaped_cell))
    quoting = csv.QUOTE_NONNUMERIC if quote_texts else csv.QUOTE_MINIMAL
    header = [escaped_cell(name) for name in names]
    text = out.to_csv(index=False, header=header, lineterminator="\n", quoting=quoting)
    return SafeCsv(text.encode("utf-8"), escaped)
