"""Check an exported bundle: every file against its checksum in the manifest, then the release made again.

`verify_checksums` reads ``manifest.json`` and names every file that is missing, changed (its SHA-256 differs)
or not listed. `verify_replay` runs the manifest's replay command (``textsdc release …``) into a temporary
folder, with its own audit log, and names every listed file whose bytes the replay does not reproduce. The
report is rebuilt from the same numbers, so it is compared too (the replay writes the bundle's recorded
``--out`` where the reports print their replay command, HTML and PDF alike, and the manifest's decision note is
given to the replay); a difference there means the measures moved.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import tempfile
from pathlib import Path
from typing import Any

from engine.errors import DataError
from engine.export.bundle import MANIFEST_JSON, file_sha256

REPLAY_PREFIX = "textsdc-verify-"
"""The name of the temporary folders replays are made in begins so."""


def read_manifest(folder: Path) -> dict[str, Any]:
    """The bundle's manifest; DataError when ``folder`` holds no readable one."""
    path = Path(folder) / MANIFEST_JSON
    if not path.is_file():
        raise DataError(f"{folder} holds no {MANIFEST_JSON}: give the folder `textsdc release` wrote")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path} is not a readable manifest ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise DataError(f"{path} lists no files with their checksums")
    return manifest


def verify_checksums(folder: Path) -> list[str]:
    """One line per difference between the bundle's files and its manifest's checksums (none: all match)."""
    folder = Path(folder)
    listed: dict[str, str] = read_manifest(folder)["files"]
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


def replay_arguments(manifest: dict[str, Any], out: Path, audit_log: Path, data: str | None = None) -> list[str]:
    """The manifest's replay command as arguments of `textsdc`, writing into ``out`` with ``audit_log``, and
    reading ``data`` instead of the recorded data when given. The files it writes name the recorded folder
    (``--recorded-out``), as the bundle's do."""
    words = shlex.split(str(manifest.get("replay") or ""))
    if words[:2] != ["textsdc", "release"]:
        raise DataError(f"the manifest's replay command is not a `textsdc release` command: {manifest.get('replay')!r}")
    args = words[1:]
    if "--out" in args:
        args += ["--recorded-out", args[args.index("--out") + 1]]
    for flag, value in (("--out", str(out)), ("--data", data)):
        if value is None:
            continue
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    return [*args, "--audit-log", str(audit_log)]


def verify_replay(folder: Path, data: str | None = None) -> list[str]:
    """One line per listed file the replay does not reproduce byte for byte (none: the release is made again
    exactly); the replay's own error, if it fails, is the one line."""
    from engine.cli import main

    folder = Path(folder)
    manifest = read_manifest(folder)
    with tempfile.TemporaryDirectory(prefix=REPLAY_PREFIX) as tmp:
        again = Path(tmp) / "bundle"
        args = replay_arguments(manifest, again, Path(tmp) / "audit.sqlite", data)
        if manifest.get("decision"):  # the steward's note, recorded, is written again with the release
            note = Path(tmp) / "decision.json"
            note.write_text(json.dumps(manifest["decision"]), encoding="utf-8")
            args += ["--decision", str(note)]
        with contextlib.redirect_stdout(io.StringIO()):  # the replay's "wrote …" lines are not verify's output
            code = main(args)
        if code != 0:
            return [f"the replay `textsdc {shlex.join(args)}` failed (exit status {code}); see its message above"]
        made = read_manifest(again)["files"]
        out = []
        for name, digest in sorted(manifest["files"].items()):
            if name not in made:
                out.append(f"{name}: the replay does not write it")
            elif made[name] != digest:
                out.append(
                    f"{name}: the replay gives other bytes (SHA-256 {made[name][:12]}…, the bundle {digest[:12]}…)"
                )
        out += [
            f"{name}: the replay writes it, the bundle does not have it"
            for name in sorted(set(made) - set(manifest["files"]))
        ]
    return out
