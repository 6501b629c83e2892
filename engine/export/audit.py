"""The export audit log: one SQLite row per export, saying who exported what, when, and with which manifest."""

from __future__ import annotations

import getpass
import os
import socket
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from engine.record.manifest import ReleaseRecord

AUDIT_COLUMNS: tuple[str, ...] = (
    "id",
    "exported_at_utc",
    "user",
    "host",
    "out_dir",
    "dataset",
    "fingerprint",
    "method",
    "knob",
    "seed",
    "replicate",
    "manifest_sha256",
)

_CREATE = """
CREATE TABLE IF NOT EXISTS exports (
    id INTEGER PRIMARY KEY,
    exported_at_utc TEXT NOT NULL,
    user TEXT,
    host TEXT,
    out_dir TEXT,
    dataset TEXT,
    fingerprint TEXT,
    method TEXT,
    knob REAL,
    seed INTEGER,
    replicate INTEGER,
    manifest_sha256 TEXT
)
"""


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers and services
        return os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"


def _host() -> str:
    try:
        return socket.gethostname()
    except OSError:
        return "unknown"


def append_audit(db_path: str | Path, out_dir: str | Path, record: ReleaseRecord, manifest_sha256: str) -> int:
    """Append the export of ``record`` into ``out_dir`` to the log at ``db_path`` (created with its table if
    missing), with the SHA-256 of the manifest written; return the row id."""
    db = Path(db_path)
    db.parent.mkdir(parents=True, exist_ok=True)
    row = (
        datetime.now(UTC).isoformat(timespec="seconds"),
        _user(),
        _host(),
        str(out_dir),
        record.dataset.name,
        record.dataset.fingerprint,
        record.method.name,
        float(record.method.knob),
        None if record.seed is None else int(record.seed),
        int(record.replicate),
        manifest_sha256,
    )
    with closing(sqlite3.connect(db)) as con, con:
        con.execute(_CREATE)
        cur = con.execute(
            "INSERT INTO exports (exported_at_utc, user, host, out_dir, dataset, fingerprint, method, knob, seed,"
            " replicate, manifest_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
        assert cur.lastrowid is not None  # an INSERT always sets it
        return int(cur.lastrowid)


def read_audit(db_path: str | Path) -> pd.DataFrame:
    """Every logged export, oldest first; an empty frame when there is no log yet."""
    db = Path(db_path)
    if not db.exists():
        return pd.DataFrame(columns=list(AUDIT_COLUMNS))
    with closing(sqlite3.connect(db)) as con:
        has_table = con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='exports'").fetchone()
        if not has_table:
            return pd.DataFrame(columns=list(AUDIT_COLUMNS))
        return pd.read_sql_query("SELECT * FROM exports ORDER BY id", con)
