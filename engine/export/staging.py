"""A bundle is written whole or not at all.

`staged_folder(out)` checks the target, takes a lock beside it, hands out a fresh temporary folder in the same
parent and, when the block ends without error, puts it in place of ``out`` in one step: an atomic exchange
of the two folders (Linux ``renameat2(RENAME_EXCHANGE)``), or where that is unavailable two renames, with
`recover` putting the old bundle back if a crash fell between them. At every moment ``out`` is the old
complete bundle or the new complete one; a failed or killed export leaves the old one as it was. A folder that
holds a bundle already is replaced only when the caller says so (``replace``: `--replace`, or the Export page's
checkbox), so that a replay command run as printed never writes over the bundle under review.
A bundle is checked against its manifest by `engine.export.verify`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.atomic import fsync_dir
from engine.errors import ConfigError, TextsdcError, os_error_message

MANIFEST = "manifest.json"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders atomically (Linux renameat2 with RENAME_EXCHANGE); False where unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _siblings(out: Path, kind: str) -> list[Path]:
    return sorted(out.parent.glob(f".{out.name}.{kind}-*"))


def recover(out: Path) -> None:
    """Undo what a killed export left beside ``out``: put the old bundle back if the crash fell between the
    two renames of the fallback, and remove temporary folders. Call it holding the lock."""
    olds = _siblings(out, "old")
    if not out.exists() and olds:
        os.rename(olds[-1], out)
        olds = olds[:-1]
    for stale in olds + _siblings(out, "partial"):
        shutil.rmtree(stale, ignore_errors=True)


def check_target(out: Path, replace: bool = False) -> None:
    """ConfigError if ``out`` cannot take a bundle: a file, a folder of files that are not a bundle, or (unless
    ``replace``) a folder that holds a bundle already."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"export folder {out} is a file; choose a new folder or an empty one")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise ConfigError(
            f"export folder {out} holds files that are not a textsdc bundle; choose a new folder or an empty one"
        )
    if not replace and (out / MANIFEST).is_file():
        raise ConfigError(
            f"export folder {out} holds a bundle already; choose a new folder, or replace that bundle on purpose "
            '(--replace, or "Replace the bundle in this folder" on the Export page)'
        )


@contextmanager
def _lock(out: Path) -> Iterator[None]:
    path = out.parent / f".{out.name}.lock"
    with open(path, "a+b") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"another export is writing to {out}; wait for it to finish or choose another folder"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _swap_in(tmp: Path, out: Path) -> None:
    if not out.exists():
        os.rename(tmp, out)
    elif _exchange(tmp, out):
        shutil.rmtree(tmp)  # it now holds the old bundle
    else:
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rmdir(old)
        os.rename(out, old)
        os.rename(tmp, out)
        shutil.rmtree(old)
    fsync_dir(out.parent)


@contextmanager
def staged_folder(out: Path, replace: bool = False) -> Iterator[Path]:
    """A temporary folder to write a bundle into; on a clean exit it replaces ``out`` in one step. ConfigError
    (before any work) for a target that is a file, a folder of other files or (unless ``replace``) of a bundle, or
    that another export holds."""
    out = Path(out)
    check_target(out, replace)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the export folder: {os_error_message(exc, out.parent)}") from None
    try:
        with _lock(out):
            recover(out)
            check_target(out, replace)
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
            try:
                yield tmp
                fsync_dir(tmp)
                _swap_in(tmp, out)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    except TextsdcError:
        raise
    except OSError as exc:
        raise ConfigError(f"cannot write the export, nothing was replaced: {os_error_message(exc, out)}") from None
