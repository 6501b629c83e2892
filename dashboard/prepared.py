"""What a page builds from a sweep (the views of every grid value, a suggestion, a recommendation), built once
per sweep and what it shows (the measures, targets and settings chosen) and then reused: a rerun of a page with
the same choices reads it instead of building it again.

Everything kept here is derived from a sweep the process already holds, and goes when the sweep goes. What is
asked for with ``persist=True`` is also kept on disk beside a sweep that is kept there (`persist_as`), so a
restarted dashboard reads the views of its last page instead of building them again.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

from engine.cache import code_digest, derived_cached
from engine.results import SweepResult

T = TypeVar("T")

_LOCK = threading.Lock()
# By the sweep's id (a SweepResult is a dataclass, so not hashable); an entry goes when its sweep is collected.
_BUILT: dict[int, dict[Hashable, Any]] = {}
_ON_DISK: dict[int, str] = {}  # the name the sweep is kept under on disk (`engine.cache.sweep_name`)


def _forget(sweep_id: int) -> None:
    with _LOCK:
        _BUILT.pop(sweep_id, None)
        _ON_DISK.pop(sweep_id, None)


def persist_as(sweep: SweepResult, name: str) -> None:
    """Say that ``sweep`` is kept on disk as ``name``: what is prepared from it with ``persist=True`` is too."""
    with _LOCK:
        _built(sweep)
        _ON_DISK[id(sweep)] = name


def _built(sweep: SweepResult) -> dict[Hashable, Any]:
    """The entries of ``sweep`` (called under the lock)."""
    if id(sweep) not in _BUILT:
        _BUILT[id(sweep)] = {}
        weakref.finalize(sweep, _forget, id(sweep))
    return _BUILT[id(sweep)]


def _code() -> str:
    """A digest of the code that draws views (the dashboard's; the engine's figures are in the sweep's name,
    `engine.cache.engine_digest`): views kept on disk by another version are not read back."""
    return code_digest(Path(__file__).resolve().parent, suffixes=(".py", ".html"))


def prepared(sweep: SweepResult, key: Hashable, build: Callable[[], T], persist: bool = False) -> T:
    """``build()`` for ``sweep`` and ``key``, built the first time and kept with the sweep (and on disk beside
    it, with ``persist``; ``key`` is then made of strings, numbers, None and tuples)."""
    with _LOCK:
        built = _built(sweep)
        if key in built:
            return built[key]
        name = _ON_DISK.get(id(sweep)) if persist else None
    # Outside the lock: building views takes seconds, other pages need not wait.
    value = build() if name is None else derived_cached(name, (_code(), key), build)
    with _LOCK:
        return _built(sweep).setdefault(key, value)
