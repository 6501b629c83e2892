"""Where the ledger is kept and how it grows: one JSON file per machine, in the cache folder
(``ledger.json``, or the file ``$TEXTSDC_LEDGER`` names), never in a bundle.

It is only ever appended to: an export reads it, and on writing its bundle adds one entry, under a lock, by an
atomic write of the whole file (the old file or the new one, never half of either), and only if nobody added an
entry since it was read. Each entry holds the SHA-256 of the one before it, so an entry edited or removed by hand
shows as a broken chain. A file that cannot be read as a ledger is a `DataError` saying so and what to do; it is
never written over."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from engine.atomic import atomic_write_bytes
from engine.errors import ConfigError, DataError, os_error_message
from engine.ledger.entry import Entry
from engine.paths import cache_dir

LEDGER_ENV = "TEXTSDC_LEDGER"
LEDGER_FILE = "ledger.json"
LEDGER_VERSION = 1


def default_ledger() -> Path:
    """The ledger file: ``$TEXTSDC_LEDGER``, else ``ledger.json`` in the cache folder."""
    named = os.environ.get(LEDGER_ENV)
    return Path(named).expanduser() if named else cache_dir() / LEDGER_FILE


def _broken(path: Path, why: str) -> DataError:
    return DataError(
        f"the release ledger {path} cannot be read ({why}); it was left as it is. Restore it from a backup, or move "
        f"it aside to start a new ledger (the releases it records are then no longer checked), or point "
        f"{LEDGER_ENV} at another ledger file"
    )


def _digest(entry: Entry) -> str:
    return hashlib.sha256(entry.canonical().encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Ledger:
    """The entries of one ledger file, in the order they were added, and the file they were read from."""

    path: Path
    entries: tuple[Entry, ...] = ()

    @property
    def head(self) -> str:
        """SHA-256 of the last entry (empty for an empty ledger): what the next entry's ``previous`` holds."""
        return _digest(self.entries[-1]) if self.entries else ""

    def of_records(self, digest: str) -> tuple[Entry, ...]:
        """The entries of releases of the records whose digest is ``digest`` (`records_digest`)."""
        return tuple(e for e in self.entries if e.records_digest == digest)

    def of_dataset(self, fingerprint: str) -> tuple[Entry, ...]:
        """The entries of releases of the dataset with this fingerprint."""
        return tuple(e for e in self.entries if e.fingerprint == fingerprint)


def read_ledger(path: str | Path | None = None) -> Ledger:
    """The ledger at ``path`` (default `default_ledger`); empty where there is no file yet. DataError for a file
    that is not a ledger, of a newer layout, or whose chain of entries is broken."""
    p = Path(path).expanduser() if path is not None else default_ledger()
    if not p.exists():
        return Ledger(p)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise DataError(f"the release ledger cannot be read: {os_error_message(exc, p)}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _broken(p, f"not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise _broken(p, "no list of entries")
    version = data.get("ledger_version")
    if not isinstance(version, int) or version > LEDGER_VERSION:
        raise _broken(p, f"layout version {version!r}; this textsdc reads up to {LEDGER_VERSION}")
    entries: list[Entry] = []
    previous = ""
    for i, item in enumerate(data["entries"]):
        if not isinstance(item, dict):
            raise _broken(p, f"entry {i + 1} is not an entry")
        try:
            entry = Entry.from_dict(item, f"entry {i + 1}")
        except DataError as exc:
            raise _broken(p, str(exc)) from None
        if entry.previous != previous or entry.number != i + 1:
            raise _broken(p, f"entry {i + 1} does not follow the one before it: an entry was edited or removed")
        previous = _digest(entry)
        entries.append(entry)
    return Ledger(p, tuple(entries))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock = path.parent / f".{path.name}.lock"
    with open(lock, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def append_entry(ledger: Ledger, entry: Entry) -> Entry:
    """Add ``entry`` after the entries of ``ledger`` (as read before the export was checked) and return it as
    stored (numbered and chained). ConfigError when another export added an entry since: the checks read a ledger
    that is no longer the current one, so the export must be checked again."""
    path = ledger.path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            current = read_ledger(path)
            if current.head != ledger.head or len(current.entries) != len(ledger.entries):
                raise ConfigError(
                    f"another export was recorded in the release ledger {path} while this one was checked; "
                    "export again so that it is checked against that one too"
                )
            stored = replace(entry, number=len(current.entries) + 1, previous=current.head)
            body = {
                "ledger_version": LEDGER_VERSION,
                "entries": [json.loads(e.canonical()) for e in (*current.entries, stored)],
            }
            text = json.dumps(body, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
            atomic_write_bytes(path, text.encode("utf-8"), private=True)
    except OSError as exc:
        raise ConfigError(f"the release ledger could not be updated: {os_error_message(exc, path.parent)}") from None
    return stored
