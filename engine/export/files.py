"""The names of a bundle's files (`engine.export.bundle` writes them; the ledger reads an earlier bundle's
released data)."""

from __future__ import annotations

RELEASE_CSV = "release.csv"
RELEASE_PARQUET = "release.parquet"
CHANGES_CSV = "changes.csv"
REPORT_HTML = "report.html"
REPORT_PDF = "report.pdf"
KEYED_FILES = (RELEASE_CSV, RELEASE_PARQUET)
"""The files that hold the released data, and with it the pseudonyms of its identifier columns."""
