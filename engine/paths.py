"""Where textsdc writes on its own: one cache folder (fits, audit log). Exports go where the user says."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ASSETS_DIR = PROJECT_ROOT / "assets"


def cache_dir() -> Path:
    """The cache folder: ``$TEXTSDC_CACHE_DIR`` or ``~/.cache/textsdc``; created on first use."""
    d = Path(os.environ.get("TEXTSDC_CACHE_DIR") or Path.home() / ".cache" / "textsdc")
    d.mkdir(parents=True, exist_ok=True)
    return d


def default_audit_log() -> Path:
    return cache_dir() / "audit.sqlite"
