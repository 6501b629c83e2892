"""Figures and tables drawn from a sweep, built once per sweep and what they show (the grid value, the measures
and targets chosen) and then reused: a slider move back to a value seen before draws without rebuilding
anything, and `prepare_in_background` builds the other grid values' while the steward reads the first.

Everything kept here is derived from a sweep the process already holds, and goes when the sweep goes.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from engine.results import SweepResult

T = TypeVar("T")
Job = tuple[Hashable, Callable[[], Any]]
"""A key of a sweep's prepared things and what builds it (`prepared(sweep, *job)`)."""

_LOCK = threading.Lock()
# By the sweep's id (a SweepResult is a dataclass, so not hashable); an entry goes when its sweep is collected.
_BUILT: dict[int, dict[Hashable, Any]] = {}
_PENDING: dict[int, set[Hashable]] = {}


def _forget(sweep_id: int) -> None:
    with _LOCK:
        _BUILT.pop(sweep_id, None)
        _PENDING.pop(sweep_id, None)


def _built(sweep: SweepResult) -> dict[Hashable, Any]:
    """The entries of ``sweep`` (called under the lock)."""
    if id(sweep) not in _BUILT:
        _BUILT[id(sweep)] = {}
        weakref.finalize(sweep, _forget, id(sweep))
    return _BUILT[id(sweep)]


def prepared(sweep: SweepResult, key: Hashable, build: Callable[[], T]) -> T:
    """``build()`` for ``sweep`` and ``key``, built the first time and kept with the sweep."""
    with _LOCK:
        built = _built(sweep)
        if key in built:
            return built[key]
    value = build()  # outside the lock: a figure takes tens of milliseconds, other pages need not wait
    with _LOCK:
        return _built(sweep).setdefault(key, value)


def is_prepared(sweep: SweepResult, key: Hashable) -> bool:
    with _LOCK:
        return key in _BUILT.get(id(sweep), {})


def prepare_in_background(sweep: SweepResult, marker: Hashable, jobs: Callable[[], Iterable[Job]]) -> None:
    """Build the (key, build) pairs ``jobs()`` lists, those not built yet, in one daemon thread, so that the first
    move to each grid value finds them ready. ``jobs`` is called once per ``marker`` (the page's choices the
    jobs depend on): a page calls this on every rerun for the cost of a lookup. A job that fails is left for
    the page to build (and report) itself."""
    with _LOCK:
        built = _built(sweep)
        if ("prepare", marker) in built:
            return
        built[("prepare", marker)] = True
    listed = list(jobs())
    with _LOCK:
        built, pending = _built(sweep), _PENDING.setdefault(id(sweep), set())
        todo = [(k, b) for k, b in listed if k not in built and k not in pending]
        pending.update(k for k, _ in todo)
    if not todo:
        return

    def work() -> None:
        for key, build in todo:
            try:
                prepared(sweep, key, build)
            except Exception:  # noqa: BLE001 — the page builds it again in the open and shows the error there
                pass
            finally:
                with _LOCK:
                    _PENDING.get(id(sweep), set()).discard(key)

    threading.Thread(target=work, name="textsdc-prepare", daemon=True).start()
