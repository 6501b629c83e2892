"""Where textsdc finds its assets (the demo datasets), and where it writes on its own: one cache folder (fits,
audit log). Exports go where the user says.
"""

from __future__ import annotations

import os
from pathlib import Path

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
    """The cache folder: ``$TEXTSDC_CACHE_DIR`` or ``~/.cache/textsdc``; created on first use."""
    d = Path(os.environ.get("TEXTSDC_CACHE_DIR") or Path.home() / ".cache" / "textsdc")
    d.mkdir(parents=True, exist_ok=True)
    return d


def default_audit_log() -> Path:
    return cache_dir() / "audit.sqlite"
