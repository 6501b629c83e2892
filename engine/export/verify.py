"""Check an exported bundle: every file against its checksum in the manifest, then the release made again.

`verify_checksums` reads the bundle's record (`engine.record.manifest.read_record`) and names every file that is
missing, changed (its SHA-256 differs) or not listed. `verify_replay` makes the release the record's replay
command names again (`engine.export.chosen.release_again`) in a temporary folder, with its own audit log and the
recorded decision note, and names every listed file whose bytes the replay does not reproduce. The replay's
record names the bundle's folder and data as the bundle does, so the report is compared too (HTML and PDF
alike); a difference there means the measures moved.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from engine.export.bundle import file_sha256
from engine.export.chosen import Run, release_again
from engine.progress import Progress, no_progress
from engine.record.manifest import MANIFEST_JSON, read_record

REPLAY_PREFIX = "textsdc-verify-"
"""The name of the temporary folders replays are made in begins so."""


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


def verify_replay(folder: Path, data: str | None = None, progress: Progress = no_progress) -> list[str]:
    """One line per listed file the replay does not reproduce byte for byte (none: the release is made again
    exactly). ``data`` is where the confidential data is now, when not where the record's replay reads it."""
    record = read_record(Path(folder))
    spec = record.replay_spec
    with tempfile.TemporaryDirectory(prefix=REPLAY_PREFIX) as tmp:
        run = Run(progress=progress, audit_log=Path(tmp) / "audit.sqlite")
        made = release_again(spec, Path(tmp) / "bundle", data, record.decision, run=run).record.files
        out = []
        for name, digest in sorted(record.files.items()):
            if name not in made:
                out.append(f"{name}: the replay does not write it")
            elif made[name] != digest:
                out.append(
                    f"{name}: the replay gives other bytes (SHA-256 {made[name][:12]}…, the bundle {digest[:12]}…)"
                )
        out += [
            f"{name}: the replay writes it, the bundle does not have it"
            for name in sorted(set(made) - set(record.files))
        ]
    return out
