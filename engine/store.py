"""Values kept on disk in the cache folder across runs (`stored`), written atomically: the fits, sweeps and
views of `engine.cache`, and models trained on data the project ships (`model_cached`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import joblib

from engine.atomic import atomic_path
from engine.paths import cache_dir

T = TypeVar("T")


def model_cached(name: str, compute: Callable[[], T]) -> T:
    """``compute()`` — a model trained on data the project ships (the privacy-attribute tagger), named for what
    it was trained on — kept on disk across runs."""
    return stored("models", name, compute)


def is_stored(kind: str, name: str) -> bool:
    """Whether `stored` would read ``<cache>/<kind>/<name>.joblib`` rather than compute it."""
    return (cache_dir() / kind / f"{name}.joblib").exists()


def stored(kind: str, name: str, compute: Callable[[], T]) -> T:
    """The value stored as ``<cache>/<kind>/<name>.joblib``, or ``compute()`` stored there (atomically)."""
    folder = cache_dir() / kind
    folder.mkdir(parents=True, exist_ok=True)
    path: Path = folder / f"{name}.joblib"
    if path.exists():
        try:
            return joblib.load(path)
        except Exception:  # a cache file from another library version: recompute and overwrite
            path.unlink(missing_ok=True)
    value = compute()
    try:
        with atomic_path(path) as tmp:
            joblib.dump(value, tmp)
    except OSError:
        pass  # a full or read-only cache only costs the next run a recomputation; the value itself is good
    return value
