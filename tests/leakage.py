"""A leakage scan of an exported bundle (issue 10): what the tests export is read back, file by file, and
searched for what must never leave, and each CSV file read as a spreadsheet would read it (issue 49: no cell may
run as a formula). Used by every test that exports a bundle (CLI and dashboard)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from engine.data.dataset import Dataset
from engine.protect.guard import TYPE_WORDS

# Originals of these labels are identifiers wherever they appear; places, dates and products can also be
# legitimate values of a released structured field, so only the released text is searched for those.
IDENTIFIER_LABELS = {"HANDLE", "URL", "EMAIL", "PHONE", "PERSON", "DI"}
GUARDED_FORMATS = ("URL", "EMAIL", "PHONE", "HANDLE", "CREDIT_CARD", "IBAN", "US_SSN", "IP_ADDRESS")
"""What the release guard replaces after every method: none of the data's own may be in a bundle, unless the
steward switched its type off (the manifest says so)."""
ALLOWED_EXTRA_FILES = {"report.html", "report.pdf", "manifest.json", "changes.csv", "release.csv", "release.parquet"}
GUARD_TYPE_CELLS = "<td>(?:" + "|".join(re.escape(words.capitalize()) for _, words in TYPE_WORDS.values()) + ")</td>"
"""The release guard's table in every report names each type it replaces ("Social security numbers"): the
product's own words, the same in every report, left out of what is searched (a name the tagger masks, "Mr.
Social", is no leak there)."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet starts a formula with (OWASP, "CSV injection"); written here, not taken from the engine."""
_PLAIN_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


def formula_cells(path: Path) -> list[str]:
    """The cells of the CSV file ``path`` (column names included) that a spreadsheet opening it would run as a
    formula: read with Python's `csv` module as a spreadsheet splits it, a cell that begins with a formula character
    and is not a plain number such as -3.5."""
    with path.open(encoding="utf-8", newline="") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    return [c for c in cells if c.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(c)]


def as_released(cell: str) -> str:
    """A CSV cell as the release holds it: without the apostrophe the bundle writes before a formula."""
    rest = cell[1:]
    return rest if cell.startswith("'") and rest.startswith(FORMULA_START) else cell


def bundle_texts(folder: Path, tables: tuple[str, ...] = ()) -> dict[str, str]:
    """Every file of the bundle as text: CSV and JSON as they are, Parquet as CSV, the PDF's pages' text, the
    report without the Plotly library it embeds (a third-party script that is the same in every report). ``tables`` are the
    release's own tables (`Release.tables`), allowed as ``<name>.csv``."""
    out = {}
    allowed = ALLOWED_EXTRA_FILES | {f"{name}.csv" for name in tables}
    for path in sorted(folder.iterdir()):
        assert path.is_file(), f"unexpected folder {path.name} in the bundle"
        assert path.name in allowed, f"unexpected file {path.name} in the bundle"
        if path.suffix == ".parquet":
            out[path.name] = pq.read_table(path).to_pandas().to_csv(index=False)
        elif path.suffix == ".pdf":
            out[path.name] = pdf_text(path)
        elif path.suffix == ".html":
            page = path.read_text(encoding="utf-8")
            page = re.sub(r'<script type="text/javascript" id="plotly-js">.*?</script>', "", page, flags=re.S)
            out[path.name] = re.sub(GUARD_TYPE_CELLS, "<td></td>", page)
        else:
            out[path.name] = path.read_text(encoding="utf-8")
    return out


def pdf_text(path: Path) -> str:
    """The text of every page of a PDF, as a reader would copy it out."""
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(path))
    return "\n".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))


def format_identifiers(dataset: Dataset) -> dict[str, set[str]]:
    """Per type of `GUARDED_FORMATS`, every identifier with a format the data's text and string fields hold (the
    identifier columns aside: they leave by their own treatment), as the validated recognizers confirm it."""
    from engine.text.recognizers import DEFAULT_THRESHOLDS, RECOGNIZERS

    out: dict[str, set[str]] = {kind: set() for kind in GUARDED_FORMATS}
    for column in dataset.frame.columns:
        values = dataset.frame[column]
        if column in dataset.schema.identifiers or not (
            pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)
        ):
            continue
        for text in values.dropna().astype(str).unique():
            for kind in GUARDED_FORMATS:
                out[kind] |= {text[s:e] for s, e, c in RECOGNIZERS[kind](text) if c >= DEFAULT_THRESHOLDS[kind]}
    return out


def _whole(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w@#]){re.escape(word)}(?!\w)")


def _found(word: str, text: str) -> bool:
    """``word`` in ``text`` as a whole word (a substring test first: thousands of words, megabytes of text)."""
    return word in text and _whole(word).search(text) is not None


def scan_bundle(
    folder: Path,
    dataset: Dataset,
    originals: pd.DataFrame | None = None,
    changes_ship: bool = True,
    withheld: tuple[str, ...] = (),
    tables: tuple[str, ...] = (),
) -> list[str]:
    """What leaks from the bundle in ``folder`` of a release of ``dataset``: a list of findings (empty = clean).

    ``originals`` are the replaced spans (a method's `Release.changes`, with ``original`` and ``label``): none
    may appear in the released text, and originals that are identifiers may appear in no file. Identifier
    columns (author, document) that the schema does not keep may not appear in clear: no value of theirs (of
    three or more characters) anywhere in the bundle. The manifest must list every released column. A release
    whose changes may not ship (``changes_ship`` False: a swap's would tell which chunks kept their entities)
    has no changes file, and its originals are searched for in their own record only (a swap moves an entity
    into another record, where it is no leak), unless the record's own replacements hold them (a swap that
    brought the same value back, a union that holds the true value by design), and those that are identifiers
    in every file; ``withheld`` columns are not released, and the manifest says so, nor are the other free-text
    columns the schema does not ask to protect (`Schema.dropped_other_text`). No cell of a CSV file may run
    as a formula when a spreadsheet opens it (`formula_cells`); the released values are read without the
    apostrophe that prevents it (`as_released`).
    """
    files = bundle_texts(Path(folder), tables)
    findings: list[str] = []
    if originals is not None and len(originals) and "replacement" in originals.columns:
        # a row whose replacement is its original is a span kept as written, not a replaced value
        originals = originals[originals["original"].astype(str) != originals["replacement"].astype(str)]
    schema = dataset.schema
    for name in files:
        if name.endswith(".csv"):
            formulas = formula_cells(Path(folder) / name)
            if formulas:
                findings.append(f"{name}: {len(formulas)} cells a spreadsheet runs as a formula, e.g. {formulas[:3]}")
    try:
        released = pd.read_csv(Path(folder) / "release.csv", keep_default_na=False, dtype=str)
    except pd.errors.EmptyDataError:  # every column withheld (the swap's passages leave in passages.csv)
        released = pd.DataFrame()
    released = released.rename(columns=as_released).map(as_released)
    manifest = json.loads(files["manifest.json"])
    listed = manifest.get("columns", {})
    for column in released.columns:
        if column not in listed:
            findings.append(f"manifest does not list released column {column!r}")
    if not changes_ship and "changes.csv" in files:
        findings.append("changes.csv shipped, but this release's changes may not leave")
    for column in schema.dropped_other_text:  # free text besides the text, which no method protects
        if column in released.columns:
            findings.append(f"other free-text column {column!r} released")
        if column in listed and not str(listed[column]).startswith("dropped"):
            findings.append(f"manifest does not say other free-text column {column!r} is dropped")
    for column in withheld:
        if column in released.columns:
            findings.append(f"withheld column {column!r} released")
        if "withheld" not in str(listed.get(column, "")):
            findings.append(f"manifest does not say column {column!r} is withheld")
    if originals is not None and len(originals) and not changes_ship:
        texts = released[schema.text].tolist() if schema.text in released.columns else []
        brought = originals.groupby("record")["replacement"].agg(lambda r: set(map(str, r))).to_dict()
        for record, original, label in originals[["record", "original", "label"]].itertuples(index=False):
            if any(_found(str(original), new) for new in brought.get(record, set())):  # put back by the release
                continue
            if len(str(original)) >= 3 and int(record) < len(texts) and _found(str(original), texts[int(record)]):
                findings.append(f"record {record}: replaced original {original!r} ({label}) still readable there")
        for original in sorted(
            {str(o) for o, lab in zip(originals["original"], originals["label"]) if lab in IDENTIFIER_LABELS}
        ):
            for name, content in files.items():
                if len(original) >= 3 and _found(original, content):
                    findings.append(f"{name}: replaced identifier {original!r}")
        originals = None
    # Every release of the product's paths passes the release guard (tests/test_guard.py checks that each method's
    # export records it); a bundle of a release a test made by hand, unguarded, records none and is not held to it.
    guard = manifest.get("guard")
    for kind, found in format_identifiers(dataset).items() if guard is not None else ():
        if kind in guard.get("off", ()):
            continue
        for name, content in files.items():
            hits = sorted(v for v in found if len(v) >= 4 and _found(v, content))
            if hits:
                findings.append(f"{name}: the data's {kind} in clear (the release guard was not off), e.g. {hits[:3]}")
    for column, treatment in schema.identifiers.items():
        if treatment == "keep":
            continue
        values = {str(v) for v in dataset.frame[column].dropna().unique() if len(str(v)) >= 3}
        for name, text in files.items():
            hits = sorted(v for v in values if _found(v, text))
            if hits:
                findings.append(f"{name}: identifier column {column!r} in clear, e.g. {hits[:3]}")
    if originals is not None and len(originals):
        field_values = {str(v) for f in schema.fields for v in dataset.frame[f.name].dropna().unique()}
        text = "\n".join(released[schema.text]) if schema.text in released.columns else ""
        pairs = set(zip(originals["original"].astype(str), originals["label"].astype(str)))
        for original, label in sorted(pairs):
            if len(original) < 3:
                continue
            if _found(original, text):
                findings.append(f"release text: replaced original {original!r} ({label}) still readable")
            if label in IDENTIFIER_LABELS and original not in field_values:
                for name, content in files.items():
                    if name not in ("release.csv", "release.parquet") and _found(original, content):
                        findings.append(f"{name}: replaced original {original!r} ({label})")
    return sorted(set(findings))


def ledger_leaks(folder: Path, ledger, tables: tuple[str, ...] = ()) -> list[str]:
    """What of the release ledger ``ledger`` (`engine.ledger.store.Ledger`) the bundle in ``folder`` holds: the
    ledger file's place, a records digest, where a bundle was written, an earlier bundle's manifest checksum
    (the manifest carries the ledger's figures only)."""
    secrets = {str(ledger.path): "the ledger's place"}
    for e in ledger.entries:
        secrets[e.records_digest] = f"the records digest of ledger entry {e.number}"
        if Path(e.location) != Path(folder).resolve():  # the replay command names the bundle's own folder
            secrets[e.location] = f"where ledger entry {e.number}'s bundle was written"
            secrets[e.manifest_sha256] = f"the manifest checksum of ledger entry {e.number}"
    found = []
    for name, text in bundle_texts(Path(folder), tables).items():
        for secret, what in secrets.items():  # whole: another bundle's folder may begin with this one's name
            if secret and re.search(re.escape(secret) + r"(?![\w.-])", text):
                found.append(f"{name} holds {what}")
    return found
