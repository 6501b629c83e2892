"""Check an exported bundle: every file against its checksum in the manifest, then the release made again (the
claims the manifest makes of the bundle's tables are checked by `engine.export.claims`).

`verify_checksums` reads the bundle's record (`engine.record.manifest.read_record`) and names every file that is
missing, changed (its SHA-256 differs) or not listed. `verify_replay` makes the release the record's replay
command names again (`engine.export.chosen.release_again`) in a temporary folder, with its own audit log and
release ledger, the recorded decision note and the ledger's recorded figures, and names every listed file whose bytes the replay does not reproduce. The replay's
record names the bundle's replay folder and data as the bundle does, so the report is compared too (HTML and
PDF alike); a difference there means the measures moved.

Pseudonyms need the bundle's key: the key file given (`textsdc verify --key`), or the one in the cache folder
when it is that key (its check value is the manifest's). Without it the replay runs with a key kept nowhere and
every file but those the manifest lists as depending on the key is compared; those are named as not replayed.
A replay never creates a key in the cache folder.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.cache import engine_digest
from engine.errors import ConfigError
from engine.export.bundle import file_sha256
from engine.export.chosen import Run, release_again
from engine.export.keys import cached_key, key_check, throwaway_key
from engine.export.ledgered import LedgerUse
from engine.progress import Progress, no_progress
from engine.record.manifest import MANIFEST_JSON, KeyNote, read_record

REPLAY_PREFIX = "textsdc-verify-"
"""The name of the temporary folders replays are made in begins so."""


@dataclass(frozen=True)
class ReplayCheck:
    """What a replay found: one line per listed file it does not reproduce, the files it compared, and those it
    could not replay (they depend on the pseudonym key, which is not at hand)."""

    differences: tuple[str, ...] = ()
    compared: tuple[str, ...] = ()
    not_replayed: tuple[str, ...] = ()


def verify_checksums(folder: Path) -> list[str]:
    """One line per difference between the bundle's files and its manifest's checksums (none: all match)."""
    folder = Path(folder)
    listed = read_record(folder).files
    out = []
    for name, digest in sorted(listed.items()):
        path = folder / name
        if not path.is_file():
            out.append(f"{name}: missing")
        elif file_sha256(path) != digest:
            out.append(f"{name}: changed (SHA-256 {file_sha256(path)[:12]}…, the manifest says {digest[:12]}…)")
    for path in sorted(folder.iterdir()):
        if path.name not in listed and path.name != MANIFEST_JSON:
            out.append(f"{path.name}: not listed in the manifest")
    return out


def replay_key(note: KeyNote | None, key: bytes | None = None) -> tuple[bytes, tuple[str, ...]]:
    """The key a replay of a bundle with key ``note`` runs with, and the files it cannot replay: ``key`` (a
    ConfigError when it is not the bundle's), else the cache folder's key when it is the bundle's, else a key kept
    nowhere, with the files that depend on the key (none when the bundle pseudonymizes nothing)."""
    if note is None:
        return throwaway_key(), ()
    if key is not None:
        if key_check(key) != note.check:
            raise ConfigError(
                f"the key given is not the one this bundle's pseudonyms were made with (its check value is "
                f"{key_check(key)}, the manifest's {note.check}); give the key file exported with this bundle"
            )
        return key, ()
    cached = cached_key()
    if cached is not None and key_check(cached) == note.check:
        return cached, ()
    return throwaway_key(), tuple(note.files)


def verify_replay(
    folder: Path, data: str | None = None, progress: Progress = no_progress, key: bytes | None = None
) -> ReplayCheck:
    """What the replay of the bundle in ``folder`` does not reproduce byte for byte, and the files it cannot replay
    without the pseudonym key (`replay_key`; ``key`` is the bundle's, from a key file). ``data`` is where the
    confidential data is now, when not where the record's replay reads it."""
    record = read_record(Path(folder))
    spec = record.replay_spec
    used, not_replayed = replay_key(record.pseudonym_key, key)
    with tempfile.TemporaryDirectory(prefix=REPLAY_PREFIX) as tmp:
        ledger = LedgerUse(Path(tmp) / "ledger.json", recorded=record.ledger, noted=record.ledger is not None)
        run = Run(
            progress=progress,
            audit_log=Path(tmp) / "audit.sqlite",
            key=used,
            annotated=record.annotated,
            ledger=ledger,
        )
        made = release_again(spec, Path(tmp) / "bundle", data, record.decision, run=run).record.files
    out = []
    for name, digest in sorted(record.files.items()):
        if name in not_replayed:
            continue
        if name not in made:
            out.append(f"{name}: the replay does not write it")
        elif made[name] != digest:
            out.append(f"{name}: the replay gives other bytes (SHA-256 {made[name][:12]}…, the bundle {digest[:12]}…)")
    out += [
        f"{name}: the replay writes it, the bundle does not have it" for name in sorted(set(made) - set(record.files))
    ]
    if out and record.engine_code and record.engine_code != engine_digest():
        out.append(
            f"the bundle was written by other engine code ({record.engine_code} against this textsdc's "
            f"{engine_digest()}): a difference may come from the code, not the data; replay with the textsdc that "
            "wrote it"
        )
    compared = tuple(n for n in sorted(record.files) if n not in not_replayed)
    return ReplayCheck(tuple(out), compared, tuple(n for n in sorted(record.files) if n in not_replayed))
