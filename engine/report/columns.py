"""The report section every release has: each column of the released data, its role in the data and how it leaves
the bundle (the record's ``columns``), and how the CSV files were made safe to open in a spreadsheet (the record's
``csv_escaped``)."""

from __future__ import annotations

from collections.abc import Mapping

from engine.data.schema import Schema
from engine.protect.guard import NAME, GuardCounts, name_columns
from engine.report.context import ReleaseReport, escaped
from engine.report.sections import ReportSection

FORMULA_CHARACTERS = "=, +, -, @, a tab or a carriage return"
"""In words, the characters a spreadsheet starts a formula with (`engine.export.safe_csv.FORMULA_START`)."""
SPREADSHEETS = "Opening the CSV files in a spreadsheet."
ROLE_TEXT = {
    "key": "key: an intruder may know it",
    "sensitive": "sensitive: what an intruder must not learn",
    "other": "other",
}


def column_role(schema: Schema, column: str) -> str:
    """What ``column`` is in the data, in words: the text, the author, a field with its kind and role, …"""
    if column == schema.text:
        return "the text"
    if column == schema.author:
        return "the author"
    if column == schema.document:
        return "the document"
    if column in schema.direct_identifiers:
        return "direct identifiers: the people or organization of the record"
    if column in schema.other_text:
        return "free text besides the text column (other_text)"
    if column in schema.field_names:
        spec = schema.field(column)
        return f"{spec.kind} field ({ROLE_TEXT.get(spec.role, spec.role)})"
    return "not named in the schema"


def _listed(words: list[str], last: str = "and") -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


def spreadsheet_safety(csv_escaped: Mapping[str, int]) -> str:
    """What the bundle did so that no cell of its CSV files runs as a formula, with the count of each file (the
    report puts `SPREADSHEETS` before it); empty before the files are written."""
    if not csv_escaped:
        return ""
    counts = [f"{n:,} {'cell' if n == 1 else 'cells'} in {name}" for name, n in csv_escaped.items() if n]
    if not counts:
        return (
            f"No cell of {_listed(list(csv_escaped), 'or')} begins with {FORMULA_CHARACTERS}, the "
            "characters a spreadsheet starts a formula with, so every value is written as released (the manifest's "
            "csv_escaped counts 0 for each file)."
        )
    return (
        f"A spreadsheet runs a cell that begins with {FORMULA_CHARACTERS} as a formula, so a released "
        "text could open as a live formula or link. Such cells (values or column names) are written with an "
        f"apostrophe (') in front, which a spreadsheet shows as text: {_listed(counts)}. Numbers are written as "
        "they are. The Parquet file holds every value as released, without the apostrophe; the manifest counts the "
        "escaped cells of each file (csv_escaped)."
    )


def guarded_names(report: ReleaseReport) -> str:
    """Whose names the release guard looked for in every released text and string field (`name_columns`): the
    identifier columns and the columns named as holding people's names or handles whatever their role; empty
    where the guard did not look for names."""
    counts = report.release.detail(GuardCounts)
    if counts is None or NAME in counts.off:
        return ""
    columns = name_columns(report.dataset)
    if not columns:
        return ""
    schema = report.dataset.schema
    others = [c for c in columns if c not in schema.identifiers]
    said = (
        f"The release guard looked for the names held in {_listed(list(columns))} in every released text and "
        "string field, with their variants, and replaced each it found by [NAME]."
    )
    if others:
        one = len(others) == 1
        said += (
            f" Of these, {_listed(others)} {'is not an identifier column' if one else 'are not identifier columns'} "
            "in the schema but named as holding people's names or handles: the guard takes "
            f"{'its' if one else 'their'} names all the same, and a value of {'it' if one else 'them'} released as "
            "a field leaves as [NAME]."
        )
    return said


class ColumnsSection(ReportSection):
    """Every column of the released data and how it leaves: protected by the method, pseudonymized, dropped,
    withheld or released as is."""

    id = "columns"
    title = "Columns and their treatment"

    @classmethod
    def applies(cls, report: ReleaseReport) -> bool:
        return bool(report.record.columns)

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        record, schema = report.record, report.dataset.schema
        unchanged = set(record.unchanged_protected_columns)
        rows = []
        for column, treatment in record.columns.items():
            how = treatment + (
                ", but unchanged from the confidential data at this setting" if column in unchanged else ""
            )
            rows.append(
                f"<tr><td>{escaped(column)}</td><td>{escaped(column_role(schema, column))}</td>"
                f"<td>{escaped(how)}</td></tr>"
            )
        safety = spreadsheet_safety(record.csv_escaped)
        names = guarded_names(report)
        return [
            f"<h2>{escaped(cls.title)}</h2>",
            "<p>Each column of the released data, what it is in the data and how it leaves in this bundle. A "
            "dropped or withheld column is in none of the data files.</p>",
            f"<table><tr><th>Column</th><th>In the data</th><th>How it leaves</th></tr>{''.join(rows)}</table>",
            *([f"<p>{escaped(names)}</p>"] if names else []),
            *([f"<p><b>{escaped(SPREADSHEETS)}</b> {escaped(safety)}</p>"] if safety else []),
        ]
