"""The secret key of pseudonyms (`engine.export.identifiers`): kept in the cache folder, exported on request as
a key file for the people allowed to replay a release, and read back from one.

The key is 32 random bytes, created on first use in the cache folder and readable by its owner only. A bundle
never holds it: the manifest names only its check value (`key_check`), which tells whether a key file is the
key the bundle's pseudonyms were made with and nothing of the key. `textsdc verify` reads a key file or a
key already in the cache folder, and never creates one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from engine.atomic import atomic_write_bytes
from engine.errors import ConfigError
from engine.paths import cache_dir

KEY_FILE = "pseudonym.key"
KEY_BYTES = 32
CHECK_DIGITS = 16
_CHECK_TEXT = b"textsdc pseudonym key check"


def _read(path: Path, what: str, fix: str) -> bytes | None:
    """The key in ``path``; None when there is no such file; ConfigError when it cannot be read or is no key."""
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(f"{what} {path} is a folder; give the key file itself") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(key) != KEY_BYTES:
        raise ConfigError(f"{what} {path} is not a whole key ({len(key)} bytes, a key has {KEY_BYTES}); {fix}")
    return key


def cached_key(folder: Path | None = None) -> bytes | None:
    """The key in the cache folder, or None when it holds none (never creates one)."""
    return _read((folder or cache_dir()) / KEY_FILE, "the pseudonym key", "restore it from a backup")


def pseudonym_key(folder: Path | None = None) -> bytes:
    """The key in the cache folder, created (random, readable by the owner only) on first use."""
    key = cached_key(folder)
    if key is not None:
        return key
    path = (folder or cache_dir()) / KEY_FILE
    key = secrets.token_bytes(KEY_BYTES)
    try:
        atomic_write_bytes(path, key, private=True)
    except OSError as exc:
        raise ConfigError(f"cannot write the pseudonym key {path}: {exc.strerror or exc}") from None
    return key


def throwaway_key() -> bytes:
    """A random key kept nowhere: for a replay where the bundle's key is not at hand."""
    return secrets.token_bytes(KEY_BYTES)


def key_check(key: bytes) -> str:
    """The key's check value: a keyed hash of a fixed text (16 hex digits). Equal check values mean the same key;
    the value tells nothing of the key, nor of any pseudonym."""
    return hmac.new(key, _CHECK_TEXT, hashlib.sha256).hexdigest()[:CHECK_DIGITS]


def read_key_file(path: str | Path) -> bytes:
    """The key in a key file `write_key_file` wrote; ConfigError when it is missing or no key."""
    path = Path(path).expanduser()
    key = _read(path, "the key file", "give the file `--key-out` wrote")
    if key is None:
        raise ConfigError(f"the key file {path} does not exist; give the file `--key-out` wrote")
    return key


def check_key_target(path: str | Path, bundle: str | Path, key: bytes | None = None) -> None:
    """Where a key file may be written for the bundle in ``bundle``: never inside it, nor inside any other
    bundle (what is in a bundle's folder leaves with it), nor over a folder or a file that holds anything but
    ``key`` (which someone may still need). ConfigError otherwise."""
    target = Path(path).expanduser().resolve()
    folder = Path(bundle).expanduser().resolve()
    if target == folder or folder in target.parents:
        raise ConfigError(
            f"the key file {path} would be inside the bundle folder {bundle}, which leaves the organization; "
            "write the key outside it, where only the people allowed to replay the release can read it"
        )
    holder = next((p for p in target.parents if (p / "manifest.json").is_file()), None)
    if holder is not None:
        raise ConfigError(f"the key file {path} would be inside the bundle in {holder}; write it outside any bundle")
    if target.is_dir():
        raise ConfigError(f"the key file {path} is a folder; give a file name, e.g. {Path(path) / KEY_FILE}")
    if key is not None and target.exists() and not _holds(target, key):
        raise ConfigError(
            f"{path} exists and holds something other than this release's pseudonym key; choose another file name"
        )


def _holds(path: Path, key: bytes) -> bool:
    try:
        return _read(path, "the key file", "") == key
    except ConfigError:
        return False


def write_key_file(path: Path, key: bytes) -> None:
    """Write ``key`` to ``path`` (checked by `check_key_target`) atomically, readable by its owner only; a file
    that already holds this key is left as it is."""
    if path.exists() and _holds(path, key):
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, key, private=True)
    except OSError as exc:
        raise ConfigError(f"cannot write the key file {path}: {exc.strerror or exc}") from None
