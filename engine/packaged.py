"""Data files shipped inside installed PyPI packages (a model, a word list), read as files and never imported,
each checked against its SHA-256 before use, so what the project reads is what it was measured with."""

from __future__ import annotations

import hashlib
import importlib.metadata
from pathlib import Path

from engine.errors import ConfigError


def package_file(package: str, inside: str, sha256: str, what: str) -> Path:
    """The installed file ``inside`` of the distribution ``package`` (``what`` names it in messages), checked
    against its SHA-256; a ConfigError says how to install it when it is missing or differs."""
    try:
        path = Path(str(importlib.metadata.distribution(package).locate_file(inside)))
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            f"the {what} is not installed (PyPI package '{package}'); run `make install` or `pip install {package}`"
        ) from None
    if not path.is_file():
        raise ConfigError(f"the {what} is missing from the installed package '{package}': {path}")
    if hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
        raise ConfigError(f"the {what} at {path} is not the expected file (SHA-256 differs)")
    return path
