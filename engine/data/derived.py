"""Values derived from a dataset alone, kept by its fingerprint: a check or a measure that reads the same thing
from the data at every release (each knob value's view asks again) works it out once per dataset."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from engine.data.dataset import Dataset

T = TypeVar("T")

KEPT = 32
"""Values kept at most, the latest used (a few datasets' worth)."""

_KEPT: OrderedDict[tuple[str, Hashable], Any] = OrderedDict()
_LOCK = threading.Lock()


def derived(dataset: Dataset, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, a value that depends on ``dataset`` only, kept under ``key`` for that dataset (by its
    `Dataset.fingerprint`, so an equal dataset loaded again finds it). Two threads asking at once may both
    compute it; either result is kept."""
    name = (dataset.fingerprint, key)
    with _LOCK:
        if name in _KEPT:
            _KEPT.move_to_end(name)
            return _KEPT[name]
    value = compute()
    with _LOCK:
        _KEPT[name] = value
        while len(_KEPT) > KEPT:
            _KEPT.popitem(last=False)
    return value
