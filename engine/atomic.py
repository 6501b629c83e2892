"""Atomic file writes: a file is either its old self or completely new, never half written.

Each write goes to a temporary file in the target's own folder (so the final rename stays on one file system),
is flushed to disk, and is then renamed onto the target with `os.replace`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path, private: bool = False) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path``, on error it is removed.

    For writers that insist on a file name (pyarrow, pandas). The folder of ``path`` must exist. A ``private``
    file is readable by its owner only from first byte to last, whatever the mode of the file it replaces.
    """
    target = Path(path)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        _fsync_file(tmp)
        if target.exists() and not private:
            # mkstemp creates 0600 files; keep the permissions the steward already gave the old file.
            shutil.copymode(target, tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def atomic_write_bytes(path: str | Path, data: bytes, private: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (``private``: readable by its owner only, as `atomic_path`)."""
    with atomic_path(path, private) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically, exactly as given (no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding))


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDWR)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    """Makes a rename into ``folder`` durable (fsync of the folder); a no-op where folders cannot be opened."""
    # Makes the rename itself durable on POSIX; Windows cannot open folders this way and does not need it.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
