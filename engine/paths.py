"""Where textsdc finds its assets (the demo datasets), and where it writes on its own: one cache folder (fits,
audit log). Exports go where the user says.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import ConfigError

_PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = _PACKAGE_DIR.parent
"""The folder holding ``engine/``: the source checkout, or in an installed wheel the site-packages folder."""


def _assets_dir() -> Path:
    """``engine/assets/`` in an installed wheel, which carries the assets there (pyproject.toml maps the package
    ``engine.assets`` to ``assets/``); else ``assets/`` of the source checkout (a clone or an editable install)."""
    in_wheel = _PACKAGE_DIR / "assets"
    return in_wheel if in_wheel.is_dir() else PROJECT_ROOT / "assets"


ASSETS_DIR = _assets_dir()


def cache_dir() -> Path:
    """The cache folder: ``$TEXTSDC_CACHE_DIR`` or ``~/.cache/textsdc``; created on first use. A folder that
    cannot be created or written is a `ConfigError` that says how to choose another."""
    d = Path(os.environ.get("TEXTSDC_CACHE_DIR") or Path.home() / ".cache" / "textsdc")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"the cache folder {d} cannot be created ({exc.strerror or exc}); set the environment variable "
            "TEXTSDC_CACHE_DIR to a folder you can write to"
        ) from None
    if not os.access(d, os.W_OK | os.X_OK):
        raise ConfigError(
            f"the cache folder {d} cannot be written (permission denied); set the environment variable "
            "TEXTSDC_CACHE_DIR to a folder you can write to"
        )
    return d


def default_audit_log() -> Path:
    return cache_dir() / "audit.sqlite"
